"""Mergeable states on a Dask cluster: streaming metrics, A/B statistics and click-model
E-step statistics are computed partition by partition where the data lies and added up in a
tree (groups of ``split_every``, as ``dask.bag``'s reductions do), so only small states travel
and the client never holds the data.

- :func:`reduce_metric`: a streaming ``Metric`` / ``MultiMetric`` updated with every partition
  of a Dask DataFrame (columns mapped to the metric's inputs) or every batch of a Dask Bag.
- :func:`reduce_lists`: a list metric (``ItemExposure``) updated with long-format
  recommendations (one row per user x item), each user's rows brought to one partition first.
- :func:`reduce_moments`: ``VariantMoments`` (per-variant counts, means and co-moments, what
  every A/B test in ``rankwise.experiments`` reads) of a per-unit Dask DataFrame.
- :func:`fit_click_model`: a click model fitted on a cluster: the log's chunks stay on the
  workers, each EM pass ships the current parameters, computes each chunk's expected counts
  there and adds them up in a tree.

Merging is exact for counts; sums of floats are added in a fixed tree (the same for every
run), so results equal the one-process path to rounding (about 1e-15 relative).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.merging import merge_all

SPLIT_EVERY = 8
"""How many states each node of the reduction tree adds up."""


@contextmanager
def _connected(client: Any) -> Iterator[Any]:
    """The Dask client to use (``rankwise.scale.dask_engine.connect``); one this module
    started is closed afterwards."""
    from rankwise.scale.dask_engine import connect

    found, owned = connect(client)
    try:
        yield found
    finally:
        if owned:
            found.close()


def tree_reduce(client: Any, futures: Sequence[Any], combine: Callable[..., Any],
                split_every: int = SPLIT_EVERY) -> Any:
    """Add up ``futures`` (states on the cluster) with ``combine(*states)`` in a tree of
    ``split_every`` states per node; the result, brought to the client.

    >>> from distributed import Client
    >>> with Client(processes=False, dashboard_address=None) as c:
    ...     tree_reduce(c, c.map(lambda x: x, range(20)), lambda *xs: sum(xs), split_every=3)
    190
    """
    if split_every < 2:
        raise RankwiseError(f"split_every={split_every}: expected 2 or more")
    level = list(futures)
    if not level:
        raise RankwiseError("nothing to reduce: no partition")
    while len(level) > 1:
        level = [client.submit(combine, *level[i:i + split_every], pure=False)
                 for i in range(0, len(level), split_every)]
    return level[0].result()


def _merge_all(*states: Any) -> Any:
    """States merged in order into a new state (``rankwise.merging``: none of them changes)."""
    return merge_all(states)


def _inputs(part: Any, columns: Mapping[str, str] | None,
            to_inputs: Callable[[Any], Mapping[str, Any]] | None) -> dict[str, Any]:
    """One partition or batch as a metric's update inputs."""
    if to_inputs is not None:
        return dict(to_inputs(part))
    if columns is not None:
        return {name: part[column].to_numpy() for name, column in columns.items()}
    return dict(part)


def _updated(empty: Any, batches: Any, columns: Mapping[str, str] | None,
             to_inputs: Callable[[Any], Mapping[str, Any]] | None) -> Any:
    """A fresh state updated with each batch in order; empty batches add nothing."""
    state = empty.empty()
    for batch in batches:
        inputs = _inputs(batch, columns, to_inputs)
        if not inputs or any(len(np.atleast_1d(v)) for v in inputs.values()):
            state.update(**inputs)
    return state


def reduce_metric(metric: Any, data: Any, columns: Mapping[str, str] | None = None,
                  to_inputs: Callable[[Any], Mapping[str, Any]] | None = None, client: Any = None,
                  split_every: int = SPLIT_EVERY) -> Any:
    """Update ``metric`` (a streaming ``Metric`` or ``MultiMetric``) with all of ``data`` on a
    Dask cluster: each partition updates an empty copy where it lies, and the states are merged
    in a tree into ``metric``, which is returned.

    ``data`` is a Dask DataFrame, whose partitions become inputs through ``columns`` (input
    name -> column, e.g. ``{"predictions": "p", "targets": "y"}``) or ``to_inputs(partition)``,
    or a Dask Bag whose elements are batches of inputs (dicts, or anything ``to_inputs`` maps).

    >>> import dask.dataframe as dd, pandas as pd
    >>> from distributed import Client
    >>> from rankwise.streaming import Accuracy
    >>> frame = dd.from_pandas(pd.DataFrame({"p": [1, 0, 1, 1], "y": [1, 0, 0, 1]}), npartitions=2)
    >>> with Client(processes=False, dashboard_address=None) as client:   # 3 of 4 right
    ...     reduce_metric(Accuracy(), frame, {"predictions": "p", "targets": "y"}, client=client).compute()
    0.75
    """
    import dask

    bag = type(data).__name__ == "Bag"  # a Bag partition is a list of batches; a frame's is one batch
    empty = metric.empty()
    tasks = [dask.delayed(_updated)(empty, part if bag else [part], columns, to_inputs) for part in data.to_delayed()]
    with _connected(client) as dask_client:
        return metric.merge_state(tree_reduce(dask_client, dask_client.compute(tasks), _merge_all, split_every))


def reduce_lists(metric: Any, frame: Any, user: str = "user", item: str = "item", rank: str | None = None,
                 client: Any = None, split_every: int = SPLIT_EVERY) -> Any:
    """Update a list metric (``rankwise.streaming.ItemExposure``) with the recommendations of a
    Dask DataFrame in long format (one row per ``user`` x ``item``, ordered by ``rank`` if
    given): the rows are shuffled so that each user's list lies in one partition, each
    partition's lists update a state where they lie (``rankwise.streaming.coverage.ranked_lists``),
    and the states are merged in a tree into ``metric``, which is returned. Equal to one
    update with every list (exposure counts exactly; sums to rounding).

    >>> import dask.dataframe as dd, pandas as pd
    >>> from distributed import Client
    >>> from rankwise.streaming import ItemExposure
    >>> rows = pd.DataFrame({"user": [1, 2, 1, 2], "item": [0, 1, 1, 2]})   # lists [0, 1] and [1, 2]
    >>> with Client(processes=False, dashboard_address=None) as client:
    ...     out = reduce_lists(ItemExposure(num_items=4, k=2), dd.from_pandas(rows, npartitions=2),
    ...                        client=client).compute()
    >>> out["catalogue_coverage"]   # items 0, 1, 2 of 4
    0.75
    """
    from rankwise.streaming.coverage import ranked_lists

    missing = [c for c in (user, item, rank) if c is not None and c not in frame.columns]
    if missing:
        raise RankwiseError(f"missing column(s) {', '.join(map(repr, missing))}; the frame has "
                            f"{', '.join(map(str, frame.columns))}")

    def to_inputs(part: Any) -> dict[str, Any]:
        return {"predictions": ranked_lists(part[user].to_numpy(), part[item].to_numpy(),
                                            None if rank is None else part[rank].to_numpy())}

    return reduce_metric(metric, frame.shuffle(on=user), to_inputs=to_inputs, client=client,
                         split_every=split_every)


def reduce_moments(frame: Any, variant: str, columns: Sequence[str], variants: Sequence[str] | None = None,
                   client: Any = None, split_every: int = SPLIT_EVERY) -> Any:
    """``VariantMoments`` of a per-unit Dask DataFrame (one row per unit: its ``variant`` and
    its values in ``columns``), computed per partition and merged in a tree; the A/B tests of
    ``rankwise.experiments`` read it. Variants default to every variant seen, sorted.

    >>> import dask.dataframe as dd, pandas as pd
    >>> from distributed import Client
    >>> units = dd.from_pandas(pd.DataFrame({"v": ["a", "b", "a"], "x": [1.0, 2.0, 3.0]}), npartitions=2)
    >>> with Client(processes=False, dashboard_address=None) as client:   # a's mean: (1 + 3) / 2
    ...     reduce_moments(units, "v", ["x"], client=client).mean("a", "x")
    2.0
    """
    import dask

    with _connected(client) as dask_client:
        if variants is None:
            variants = sorted(str(v) for v in frame[variant].unique().compute().tolist())
        tasks = [dask.delayed(_moments_of_partition)(part, variant, list(columns), list(variants))
                 for part in frame.to_delayed()]
        return tree_reduce(dask_client, dask_client.compute(tasks), _merge_all, split_every)


def _moments_of_partition(part: Any, variant: str, columns: list[str], variants: list[str]) -> Any:
    from rankwise.experiments.moments import VariantMoments

    return VariantMoments.from_units(part[variant].to_numpy(), {c: part[c].to_numpy() for c in columns}, variants)


def fit_click_model(model: Any, log: Any, client: Any = None, chunk_size: int | None = None,
                    iterations: int | None = None, tolerance: float = 1e-6,
                    progress: Callable[[dict[str, float]], None] | None = None,
                    split_every: int = SPLIT_EVERY, parameter_tolerance: float | None = None,
                    acceleration: str = "squarem") -> Any:
    """Fit ``model`` (a ``rankwise.clicks`` model) to ``log`` on a Dask cluster: the log's
    chunks are sent to the workers once; each pass sends the current parameters, computes every
    chunk's statistics (counts, or EM's expected counts) where it lies and adds them up in a
    tree; the client sets the parameters from the totals. The same passes, stopping rule
    (``iterations``, ``tolerance``, ``parameter_tolerance``; the model's own defaults), EM
    ``acceleration`` and ``history`` as ``model.fit``.

    >>> from rankwise.clicks import DBN                                          # doctest: +SKIP
    >>> fit_click_model(DBN(), log, client).parameters()                         # doctest: +SKIP
    """
    from rankwise.clicks.log import lean_piece
    from rankwise.clicks.models import CHUNK, ITERATION_CAP, add_statistics

    with _connected(client) as dask_client:
        # hash=False: a key of its own per fit; content-hashed keys are shared with an earlier fit
        # of the same log, whose release can race this scatter and lose the chunk on the cluster
        chunks = [dask_client.scatter(lean_piece(chunk), hash=False) for chunk in log.chunks(chunk_size or CHUNK)]

        def cluster_totals() -> tuple[dict[str, np.ndarray], float]:
            lean = copy.copy(model)  # the parameters, not the vocabularies
            lean.query_ids = lean.doc_ids = lean.pair_query = lean.pair_doc = None
            shipped = dask_client.scatter(lean, hash=False)
            futures = [dask_client.submit(_chunk_statistics, shipped, chunk, pure=False) for chunk in chunks]
            return tree_reduce(dask_client, futures, add_statistics, split_every)

        return model.fit_passes(log, cluster_totals, iterations or ITERATION_CAP, tolerance, progress,
                                parameter_tolerance=parameter_tolerance, acceleration=acceleration)


def _chunk_statistics(model: Any, chunk: Any) -> tuple[dict[str, np.ndarray], float]:
    statistics, ll = model._statistics(chunk)
    return {**statistics, **model.structure_statistics(chunk)}, ll
