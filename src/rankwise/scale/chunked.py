"""``engine="chunks"``: a run larger than memory, scored in query-complete chunks.

A run grouped by query (each query's rows together, the usual output of a search system) is
read once, a chunk at a time. A run that is not grouped is found out on the way; it is then
written once into temporary Parquet files by query hash (in the system's temporary directory,
``TMPDIR``) and each file is scored on its own. Memory is bounded by a chunk (or a
partition file), not by the run. Per-query values and means are those of the in-memory path,
bit for bit.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from rankwise.data.containers import Run
from rankwise.data.load import load_run
from rankwise.data.pieces import ParquetRunPieces, RunPiece, TrecRunPieces, run_pieces
from rankwise.errors import Notice, RankwiseError
from rankwise.evaluation import EvaluationPlan, Result, _as_runs
from rankwise.metrics.compute import RunScores
from rankwise.scale.chunking import DEFAULT_CHUNK_ROWS, NotGrouped, QueryChunks, chunk_run
from rankwise.scale.gather import gather_scores, named_result
from rankwise.scale.partition import estimated_rows, partition_by_query, partition_count, partition_runs


def evaluate_with_engine(plan: EvaluationPlan, runs: Any, chunk_rows: int | None = None, client: Any = None
                         ) -> Result:
    """Evaluate each run chunk by chunk (``rankwise.evaluate(..., engine="chunks")``).

    Runs given as paths (TREC text or gz, a Parquet file, a directory of Parquet files) are
    read piece by piece; runs already in memory (a Run, a DataFrame, a dict) are scored whole.

    >>> plan = EvaluationPlan.build({"q1": {"d1": 1}, "q2": {"d1": 1}}, ["P@1"], None, {})
    >>> run = {"q1": {"d1": 0.9, "d2": 0.5}, "q2": {"d2": 0.9, "d1": 0.5}}
    >>> evaluate_with_engine(plan, run, chunk_rows=2).summary["P@1"].item()
    0.5
    """
    if client is not None:
        raise RankwiseError("engine='chunks' runs in this process; a client (--scheduler) is for engine='dask' "
                            "or 'spark'")
    chunk_rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    if chunk_rows < 1:
        raise RankwiseError(f"chunk_rows must be at least 1, got {chunk_rows}")
    scored: list[tuple[RunScores, str]] = []
    for obj, name in _as_runs(runs):
        if isinstance(obj, (str, os.PathLike)):
            pieces = run_pieces(obj, name)
            scores, notes = score_pieces(plan, pieces, chunk_rows)
        else:
            run = load_run(obj, name=name)
            scores = gather_scores(plan, [plan.score(run, "skip")], run.name, run.source)
            notes = list(run.notes)
        scores.warnings = notes + scores.warnings
        scored.append((scores, _source_of(obj)))
    return named_result(plan, scored)


def _source_of(obj: Any) -> str:
    return os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else getattr(obj, "source", "<run>")


def score_pieces(plan: EvaluationPlan, pieces: TrecRunPieces | ParquetRunPieces, chunk_rows: int
                 ) -> tuple[RunScores, list[str]]:
    """Score a run read piece by piece, in query-complete chunks; a run not grouped by query is
    partitioned by query hash first. Returns its scores and the reader's warnings."""
    notes: list[str] = []
    try:
        parts = [plan.score(run, "skip") for run in chunk_runs(pieces, chunk_rows, pieces.source)]
    except NotGrouped:
        with tempfile.TemporaryDirectory(prefix="rankwise-") as directory:
            rows = pieces.count_rows() if isinstance(pieces, ParquetRunPieces) else estimated_rows(pieces.path)
            files = partition_by_query(pieces, pieces.source, partition_count(rows, chunk_rows), directory)
            parts = [plan.score(run, "skip") for run in partition_runs(files, "run", pieces.source)]
        notes.append(Notice(f"{pieces.source}: the run is not grouped by query; it was partitioned by query hash "
                            f"into {len(files)} temporary Parquet file(s) and scored file by file",
                            "partitioned", count=len(files)))
    name = pieces.name
    return gather_scores(plan, parts, name, pieces.source), pieces.notes + notes


def chunk_runs(pieces: Iterable[RunPiece], chunk_rows: int, source: str) -> Iterator[Run]:
    """Query-complete Runs of about ``chunk_rows`` rows from pieces (the name is set later).

    >>> import numpy as np, pyarrow as pa
    >>> piece = RunPiece(pa.array(["a", "a", "b"]), pa.array(["x", "y", "x"]), np.arange(3.0), np.arange(1, 4))
    >>> [len(run) for run in chunk_runs([piece], 1, "<run>")]
    [2, 1]
    """
    for rows in QueryChunks(pieces, chunk_rows, source):
        yield chunk_run(rows, "run", source)
