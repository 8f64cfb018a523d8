"""``fuse``: several runs into one, by a named method, normalisation and tie rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow
from rankwise.data.containers import Run
from rankwise.data.load import load_run
from rankwise.errors import InputError, RankwiseError
from rankwise.fusion.methods import FUSION_METHODS
from rankwise.fusion.normalize import resolve_norm
from rankwise.fusion.order import ranked_order
from rankwise.fusion.table import PairTable, attach_labels, pair_table

PROFILES: dict[str, dict[str, Any]] = {
    "ranx": {"ties": "trec", "ranks": "score", "constant": None},
    "pyserini": {"ties": "docid_asc", "ranks": "file", "constant": 1.0},
}
"""Conventions of other tools, applied where not given: ``pyserini`` reads each run's ranks from
its file's rank column, writes fused ties by document id ascending and normalises a constant
list to 1 (its ``normalize``)."""


def fuse(runs: Any, method: str = "rrf", norm: str | None = "auto", ties: str | None = None,
         depth: int | None = None, name: str | None = None, *, ranks: str | None = None,
         input_depth: int | None = None, constant: float | None = None, profile: str | None = None,
         train_qrels: Any = None, **params: Any) -> Run:
    """Fuse ``runs`` (paths, Runs, ``{qid: {doc: score}}`` dicts or DataFrames; a list, or a
    ``{name: run}`` dict) into one Run.

    Each run's scores are normalised per query (``norm``: ``min-max``, ``max``, ``sum``,
    ``zmuv``, ``rank``, ``borda`` or ``None``; ``auto``: ``min-max`` for methods that read
    scores, none for methods that read ranks only), each run's ranks follow ``ties`` (``trec``:
    score descending, then document id descending; ``docid_asc``; ``input``), then ``method``
    (see ``rankwise.fusion.methods``) gives every (query, document) any run returned one score.
    The fused run ranks each query's documents by that score, ties by document id (descending
    under ``trec``, else ascending), keeps the first ``depth``, and names in its ``source`` the
    signature of what was done, e.g. ``fusion=rrf|k=60|norm=none|ties=trec|depth=all``.
    ``ranks='file'`` takes each run's ranks from its TREC file's rank column instead of its
    scores; ``input_depth`` keeps each run's first ranks only; ``constant`` is what a list of
    equal scores normalises to under ``min-max``; ``profile`` (``ranx``, ``pyserini``) sets
    those conventions as that tool has them.

    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 9.0, "d1": 8.0}}
    >>> fused = fuse([a, b], "rrf", k=60)
    >>> fused.doc.to_pylist(), fused.score.round(6).tolist()   # d1: 1/61 + 1/62; d3: 1/63 + 1/61
    (['d1', 'd3', 'd2'], [0.032522, 0.032266, 0.016129])
    >>> fused.source
    'fusion=rrf|k=60|norm=none|ties=trec|depth=all'
    """
    chosen, values = FUSION_METHODS.parse(method, **params)
    if profile is not None and profile not in PROFILES:
        raise RankwiseError(f"unknown fusion profile {profile!r}: expected one of {', '.join(PROFILES)}")
    defaults = PROFILES[profile or "ranx"]
    ties = ties or defaults["ties"]
    ranks = ranks or defaults["ranks"]
    constant = defaults["constant"] if constant is None else constant
    if ranks not in ("score", "file"):
        raise RankwiseError(f"ranks={ranks!r}: expected score (from each run's scores) or file (its rank column)")
    if input_depth is not None and int(input_depth) < 1:
        raise RankwiseError(f"input_depth must be at least 1, got {input_depth}")
    if norm == "auto":
        norm = None if chosen.ranks else "min-max"
    normaliser, norm_params = resolve_norm(norm, constant)
    norm = None if normaliser.name == "none" else normaliser.name
    if depth is not None and int(depth) < 1:
        raise RankwiseError(f"depth must be at least 1, got {depth}")
    table = aligned(runs, ties, ranks, input_depth)
    if chosen.trained:
        if train_qrels is None:
            raise RankwiseError(f"{chosen.name} learns from judgments: give train_qrels= (qrels of training queries)")
        attach_labels(table, train_qrels)
    if values.get("weights") is None and "weights" in values:
        values["weights"] = [1.0] * len(table.names)
    scores = normaliser.target(table, **norm_params)
    fused = chosen.fuse(scores, table.rank, table, **values)
    extra = [f"ranks={ranks}"] if ranks != "score" else []
    extra += [f"input_depth={input_depth}"] if input_depth is not None else []
    extra += [f"{k}={_text(float(v))}" for k, v in norm_params.items() if v is not None]
    signature = "|".join([f"fusion={chosen.name}", *(f"{k}={_text(v)}" for k, v in values.items()),
                          f"norm={norm or 'none'}", *extra, f"ties={ties}", f"depth={depth or 'all'}"])
    out = ranked_run(table, fused, ties, depth, name or chosen.name, signature)
    out.notes = [note for run in table.runs for note in run.notes]   # what reading the inputs skipped or changed
    return out


def aligned(runs: Any, ties: str = "trec", ranks: str = "score", input_depth: int | None = None) -> PairTable:
    """The runs (anything ``fuse`` takes) read and aligned on their (query, document) pairs.

    >>> aligned({"a": {"q": {"x": 1.0}}, "b": {"q": {"y": 2.0}}}).names
    ['a', 'b']
    """
    from rankwise.evaluation import _as_runs
    from rankwise.progress import tracked

    inputs = _as_runs(runs)
    loaded = [r if isinstance(r, Run) else load_run(r, name=n) for r, n in tracked(inputs, "reading runs")]
    given: list[np.ndarray | None] | None = None
    if ranks == "file":
        given = [file_ranks(r, run) for (r, _), run in zip(inputs, loaded, strict=True)]
    return pair_table(loaded, ties, given, input_depth)


def file_ranks(source: Any, run: Run) -> np.ndarray:
    """The rank column (4th field) of the TREC file a run was read from, row by row.

    >>> import tempfile
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False)
    >>> _ = f.write("q1 Q0 a 1 2.0 t\\nq1 Q0 b 3 1.0 t\\n"); f.close()
    >>> file_ranks(f.name, load_run(f.name)).tolist()
    [1.0, 3.0]
    """
    import os

    if not isinstance(source, (str, os.PathLike)):
        raise RankwiseError("ranks='file' reads the rank column of TREC files; give the runs as paths")
    from rankwise.data.trec_io import read_text

    values, lines = [], []
    for number, line in enumerate(read_text(source).splitlines(), 1):   # .gz and the input limits, as load_run
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            values.append(fields[3] if len(fields) > 3 else "")
            lines.append(number)
    if len(values) != len(run):
        raise RankwiseError(f"{source}: {len(values)} lines with a rank, {len(run)} rows read")
    out = np.empty(len(values))
    for i, (text, number) in enumerate(zip(values, lines, strict=True)):
        if not text.isdigit() or int(text) < 1:
            raise InputError(f"expected a rank (a whole number from 1), got {text!r}", source=str(source),
                             line=number, field="rank")
        out[i] = int(text)
    return out


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(_text(v) for v in value)
    return repr(value) if isinstance(value, str) else f"{value:g}" if isinstance(value, float) else str(value)


def ranked_run(table: PairTable, fused: np.ndarray, ties: str, depth: int | None, name: str, source: str) -> Run:
    """The fused pairs as a Run: by query, fused score descending, document id (descending under
    ``trec``, else ascending), the first ``depth`` of each query.

    >>> t = aligned([{"q": {"x": 1.0, "y": 2.0}}, {"q": {"x": 1.0}}])
    >>> ranked_run(t, np.array([1.0, 1.0]), "trec", None, "f", "<sig>").doc.to_pylist()   # a tie: y before x
    ['y', 'x']
    """
    if np.isnan(fused).any():
        raise RankwiseError(f"{source}: the method gave NaN for {int(np.isnan(fused).sum())} document(s)")
    tie_key = -table.doc if ties == "trec" else table.doc
    order = ranked_order(table.query, fused, tie_key)
    query = table.query[order]
    rank = np.arange(len(order)) - np.searchsorted(query, query, side="left") + 1
    if depth is not None:
        order, query = order[rank <= depth], query[rank <= depth]
    query_ids = pa.array(table.query_ids.tolist(), pa.string())
    return Run(arrow.take_rows(query_ids, query), arrow.take_rows(table.doc_ids, table.doc[order]), fused[order],
               name, source)
