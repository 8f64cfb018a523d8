"""Mergeable states on Spark: a list metric (``rankwise.streaming.ItemExposure``) updated with
long-format recommendations held in a Spark DataFrame. The rows are repartitioned by user, so
each user's list lies in one partition; each partition's lists update an empty state there
(``mapInArrow``), and only the pickled states come back to the driver to be merged, as on
Dask (``rankwise.scale.states.reduce_lists``)."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

from rankwise.errors import RankwiseError
from rankwise.merging import merge_all


def spark_reduce_lists(metric: Any, frame: Any, user: str = "user", item: str = "item",
                       rank: str | None = None) -> Any:
    """Update ``metric`` with the recommendations of the Spark DataFrame ``frame`` (one row
    per ``user`` x ``item``, ordered by ``rank`` if given) where they lie, and return it with
    every partition's state merged in: equal to one update with every list (exposure counts
    exactly, sums to rounding).

    >>> from rankwise.streaming import ItemExposure                                 # doctest: +SKIP
    >>> rows = spark.createDataFrame([(1, 0), (2, 1), (1, 1), (2, 2)], ["user", "item"])  # doctest: +SKIP
    >>> spark_reduce_lists(ItemExposure(num_items=4, k=2), rows).compute()["catalogue_coverage"]  # doctest: +SKIP
    0.75
    """
    columns = [c for c in (user, item, rank) if c is not None]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise RankwiseError(f"missing column(s) {', '.join(map(repr, missing))}; the frame has "
                            f"{', '.join(frame.columns)}")
    empty = pickle.dumps(metric.empty())
    per_partition = _updater(empty, user, item, rank)
    rows = frame.select(*columns).repartition(user).mapInArrow(per_partition, "state BINARY").collect()
    states = [pickle.loads(bytes(row["state"])) for row in rows]
    return metric.merge_state(merge_all(states))


def _updater(empty: bytes, user: str, item: str, rank: str | None) -> Any:
    """The function each partition runs: its lists into one pickled state."""
    def update(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from rankwise.streaming.coverage import ranked_lists

        state = pickle.loads(empty)
        tables = [pa.Table.from_batches([batch]) for batch in batches if batch.num_rows]
        if tables:
            table = pa.concat_tables(tables)
            state.update(predictions=ranked_lists(table.column(user).to_numpy(), table.column(item).to_numpy(),
                                                  None if rank is None else table.column(rank).to_numpy()))
        yield pa.RecordBatch.from_pydict({"state": [pickle.dumps(state)]})

    return update


__all__ = ["spark_reduce_lists"]
