"""``engine="dask"``: runs as Dask DataFrames, scored partition by partition on a Dask cluster.

A run may be a Dask DataFrame, a pandas DataFrame, a Parquet file or dataset directory, or
TREC text files (a path or glob; read with Dask's CSV reader, so the file must be regular:
one space or tab between fields). The engine first reads each partition's distinct query
ids (hashes): if no query spans two partitions the run is scored where it lies, with no
shuffle; otherwise it is shuffled by query, each row carrying its place in the input so that
ties in input order and ``duplicates='first'`` see the input's order. Where every measure reads
only the top k of each ranking, partitions instead keep their rows that can be in the top k
and the client scores those (``rankwise.scale.topk``), with no shuffle. The encoded qrels are
one task of the graph, fetched once by each worker that needs them (not scattered: scattered
data dies with the worker holding it, a task is recomputed); each partition is scored by the
in-memory code, and the
per-query values come back to the client, where they are put in the in-memory order.
A partition that fails stops the evaluation with that partition's error; no partial result
is returned.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import RankwiseError
from rankwise.evaluation import EvaluationPlan, Result, _as_runs
from rankwise.metrics.compute import RunScores
from rankwise.scale.frames import ORDER_COLUMN, run_columns, score_frame
from rankwise.scale.gather import gather_scores, named_result
from rankwise.scale.topk import keep_top_rows, score_kept, top_k_needed


def _dask() -> Any:
    try:
        import dask.dataframe as dd
        import distributed
    except ImportError:
        raise RankwiseError("engine='dask' needs Dask: pip install 'rankwise[dask]'") from None
    return dd, distributed


def connect(client: Any = None) -> tuple[Any, bool]:
    """The Dask client to use: the one given, one connected to an address, the current one, or
    a new local cluster (closed after the evaluation: the second value says so)."""
    _, distributed = _dask()
    if client is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            return distributed.Client(processes=True, n_workers=min(os.cpu_count() or 1, 4), threads_per_worker=1,
                                      dashboard_address=None), True
    if isinstance(client, str):
        return distributed.Client(client), True
    return client, False


def read_frame(obj: Any, chunk_rows: int | None) -> tuple[Any, str, str | None]:
    """A run as a Dask DataFrame, its source and the name it carries (the path's, if any)."""
    dd, _ = _dask()
    import pandas as pd

    if isinstance(obj, dd.DataFrame):
        return obj, "<dask DataFrame>", None
    if isinstance(obj, pd.DataFrame):
        return dd.from_pandas(obj, chunksize=chunk_rows or 1_000_000, sort=False), "<DataFrame>", None
    if not isinstance(obj, (str, os.PathLike)):
        raise RankwiseError(f"engine='dask' reads Dask or pandas DataFrames and paths, not a {type(obj).__name__}")
    path = os.fspath(obj)
    from pathlib import Path

    name = Path(path.rstrip("/\\")).name.split(".")[0]
    if os.path.isdir(path) or path.endswith(".parquet"):
        from rankwise.data.pieces import parquet_row_counts

        parquet_row_counts(path)   # every footer read here: a corrupt file is named before the workers start
        return dd.read_parquet(path, split_row_groups="adaptive"), path, name
    from rankwise.data.trec_io import fast_delimiter
    from rankwise.data.trec_lines import RUN_FIELDS

    if os.path.exists(path):   # a truncated or corrupt .gz is named here, not inside a worker
        from rankwise.data.limits import check_whole_gzip

        check_whole_gzip(path)
    delimiter = fast_delimiter(path) if os.path.exists(path) else " "
    if delimiter is None:
        raise RankwiseError(f"{path}: engine='dask' reads regular TREC files (one space or tab between fields); "
                            "this one is not: use engine='chunks', or write it as Parquet")
    frame = dd.read_csv(path, sep=delimiter, header=None, names=list(RUN_FIELDS), blocksize="64MB",
                        dtype={"query": str, "q0": str, "doc": str, "rank": str, "score": "float64", "tag": str},
                        keep_default_na=False, na_filter=False)
    return frame, path, None


def evaluate_with_engine(plan: EvaluationPlan, runs: Any, chunk_rows: int | None = None, client: Any = None
                         ) -> Result:
    """Evaluate each run on a Dask cluster (``rankwise.evaluate(..., engine="dask", client=...)``).

    ``chunk_rows`` repartitions a run to about that many rows per partition before scoring.
    """
    dask_client, owned = connect(client)
    try:
        scored: list[tuple[RunScores, str]] = []
        import uuid

        import dask

        # a task of the graph, not scattered data: a worker lost mid-run takes scattered data
        # with it for good, while the scheduler recomputes a task elsewhere
        shared = dask.delayed(plan, name=f"evaluation-plan-{uuid.uuid4().hex}", traverse=False)
        dd, _ = _dask()
        for obj, given in [(runs, None)] if isinstance(runs, dd.DataFrame) else _as_runs(runs):
            whole, source, default = read_frame(obj, chunk_rows)
            split = split_dask_runs(whole, given, source) if isinstance(obj, dd.DataFrame) else [(whole, given)]
            for frame, name in split:
                scores = score_dask_frame(dask_client, shared, plan, frame, source, name or default, chunk_rows)
                scored.append((scores, source))
        return named_result(plan, scored)
    finally:
        if owned:
            dask_client.close()


def split_dask_runs(frame: Any, name: str | None, source: str) -> list[tuple[Any, str | None]]:
    """A Dask DataFrame holding several runs (a ``run`` / ``tag`` / ``system`` ... column with
    more than one value) as one (frame, name) per run, in order of first appearance, as
    ``rankwise.data.load.split_runs`` splits a pandas one; a frame named by the caller, or with
    one run, is one run (named by its tag, if any). Each run is then read and scored on its own.
    """
    import pandas as pd

    tag = run_columns(list(frame.columns), source)[3]
    if name is not None or tag is None:
        return [(frame, name)]
    per_partition = frame[tag].map_partitions(lambda s: s.drop_duplicates(), meta=frame[tag]._meta).compute()
    tags = list(pd.unique(per_partition))
    if len(tags) <= 1:
        return [(frame, str(tags[0]) if tags else None)]
    return [(frame[frame[tag] == t] if not pd.isna(t) else frame[frame[tag].isna()], str(t)) for t in tags]


def _partition_hashes(frame: Any, column: str) -> np.ndarray:
    """The distinct query hashes of one partition."""
    from rankwise.data.containers import as_string_array
    from rankwise.scale.frames import arrow_table
    from rankwise.scale.hashing import query_hashes

    if len(frame) == 0:
        return np.empty(0, dtype=np.uint64)
    ids = as_string_array(arrow_table(frame[[column]]).column(0).combine_chunks(), keep_dictionary=True)
    return distinct(query_hashes(ids))


def score_dask_frame(client: Any, shared: Any, plan: EvaluationPlan, frame: Any, source: str,
                     name: str | None, chunk_rows: int | None = None) -> RunScores:
    """Score one run held as a Dask DataFrame."""
    import dask

    columns = run_columns(list(frame.columns), source)
    query, doc, score, tag = columns
    if name is None:
        name = str(frame[tag].head(1).iloc[0]) if tag is not None else "run"
    frame = frame[[query, doc, score]]
    if chunk_rows is not None:
        frame = frame.repartition(npartitions=max(1, -(-len(frame) // chunk_rows)))
    if frame.npartitions > 1:
        per_part = client.compute([dask.delayed(_partition_hashes)(part, query) for part in frame.to_delayed()],
                                  sync=True)
        every = np.concatenate(per_part) if per_part else np.empty(0, dtype=np.uint64)
        if len(every) != len(distinct(every)):  # a query spans partitions
            frame = frame.map_partitions(_with_order, meta=_order_meta(frame))
            k = top_k_needed(plan)
            if k is not None:  # every measure reads the top k only: combine, no shuffle
                return _combine_top_k(client, plan, frame, (query, doc, score), k, source, name)
            frame = frame.shuffle(on=query, npartitions=frame.npartitions)
    tasks = [dask.delayed(score_frame)(shared, part, (query, doc, score), source) for part in frame.to_delayed()]
    return gather_scores(plan, _compute(client, tasks, source), name, source)


def _compute(client: Any, tasks: list, source: str) -> list:
    """Run one task per partition; a partition that fails stops everything with its own message."""
    try:
        return client.compute(tasks, sync=True)
    except RankwiseError:
        raise
    except Exception as exc:  # a worker's failure, with the partition's own message
        raise RankwiseError(f"{source}: a partition failed on the Dask cluster: {exc}") from exc


def _combine_top_k(client: Any, plan: EvaluationPlan, frame: Any, columns: tuple[str, str, str], k: int,
                   source: str, name: str) -> RunScores:
    """Each partition keeps the rows that can be in their query's top ``k``; the driver scores
    what they kept (see ``rankwise.scale.topk``)."""
    import dask

    kept = [dask.delayed(keep_top_rows)(part, columns, k, plan.conventions.score_precision)
            for part in frame.to_delayed()]
    return score_kept(plan, _compute(client, kept, source), columns, name, source)


def _order_meta(frame: Any) -> Any:
    meta = frame._meta.copy()
    meta[ORDER_COLUMN] = np.empty(0, dtype=np.int64)
    return meta


def _with_order(part: Any, partition_info: dict | None = None) -> Any:
    """The partition with each row's place in the input: (partition number, row) as one key."""
    number = partition_info["number"] if partition_info else 0
    part = part.copy()
    part[ORDER_COLUMN] = (np.int64(number) << np.int64(40)) + np.arange(len(part), dtype=np.int64)
    return part
