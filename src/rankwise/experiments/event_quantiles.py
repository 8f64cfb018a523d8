"""Quantiles of events, not of units: ``p99(latency, per_event)`` is the 99th percentile of
every event's latency in an arm (GrowthBook's event quantile metrics), where ``p99(latency)``
is the 99th percentile of the units' summed latency.

Events of one unit are not independent, so the variance is gbstats' clustered one
(``rankwise.stats.quantiles.ClusteredQuantileEstimate``): per arm, the quantile of its events'
values and two counts per unit, ``S_i`` of its events at or below that quantile and ``N_i`` of
all its events. Rows without a value (other kinds of events) are no events of the metric and
are counted in a warning; with ``ignore_zeros`` the events whose value is 0 are left out too.
The units are those of the analysis (a unit seen in two variants is left out as it is there).

Each engine computes the same numbers where the data lies: NumPy over Arrow pieces
(``memory_event_quantiles``), DuckDB SQL (``quantile_cont``, linear as NumPy's) and an Ibis
backend; ``event_quantiles`` chooses by the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import InputError, OptionError
from rankwise.experiments.events import Units
from rankwise.experiments.metrics import Metric, Quantile, is_event_quantile
from rankwise.stats.quantiles import (
    ClusteredQuantileEstimate,
    ClusterSums,
    QuantileEstimate,
    bound_levels,
    clustered,
    event_quantile,
    n_star,
)

if TYPE_CHECKING:
    from rankwise.experiments.settings import Plan

Estimates = dict[str, list[ClusteredQuantileEstimate]]
"""Each per-event quantile metric (by its spelling) to its estimate in each variant."""


@dataclass(frozen=True)
class EventQuantiles:
    """The per-event quantiles of an analysis: the estimates, and the rows without a value of
    each column (left out, warned about)."""

    estimates: Estimates
    without_value: dict[str, int]

    def warnings(self) -> list[str]:
        return [f"{count} row(s) without a value of {column!r} are no events of its per-event quantiles"
                for column, count in self.without_value.items() if count]


def per_event_metrics(metrics: dict[str, Metric]) -> list[Quantile]:
    """The per-event quantile metrics, each once."""
    found = {m.describe(): m for m in metrics.values() if is_event_quantile(m)}
    return list(found.values())


def event_quantiles(data: Any, plan: Plan, units: Units) -> EventQuantiles:
    """The per-event quantiles of ``plan``'s metrics over ``data``, through the engine that
    computed ``units`` (see the module)."""
    from rankwise.experiments.ibis_source import aggregated_where

    wanted = per_event_metrics(plan.metrics)
    if not wanted:
        return EventQuantiles({}, {})
    assert plan.source.exposures is None   # refused by the plan
    if units.unit_ids is None:
        raise OptionError("per-event quantiles need the units' ids; this source keeps none")
    engine = {"ibis": _ibis, "duckdb": _duckdb, "memory": memory_event_quantiles}
    return engine[aggregated_where(data, plan.source.engine)](data, plan.source.unit, wanted, units)


def memory_event_quantiles(data: Any, unit: str, metrics: Sequence[Quantile], units: Units) -> EventQuantiles:
    """The per-event quantiles computed in this process: every piece of ``data`` read for its
    unit and value columns, each event placed at its unit's row of ``units``.

    >>> from rankwise.experiments.events import aggregate_units
    >>> log = {"u": [1, 1, 2, 3, 3, 4], "arm": ["a", "a", "a", "b", "b", "b"],
    ...        "ms": [10.0, 30.0, 20.0, None, 50.0, 40.0]}
    >>> units = aggregate_units(log, "u", "arm")
    >>> got = memory_event_quantiles(log, "u", [Quantile("ms", 0.5, per_event=True)], units)
    >>> [e.quantile for e in got.estimates["p50(ms, per_event)"]], got.without_value
    ([20.0, 45.0], {'ms': 1})
    """
    import pandas as pd
    import pyarrow as pa

    from rankwise.data.tables import number_column, tables_of

    columns = list(dict.fromkeys(m.column for m in metrics))
    lookup = pd.Index(units.unit_ids.to_pandas())
    kind = units.unit_ids.type
    rows: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    values: dict[str, list[np.ndarray]] = {c: [] for c in columns}
    missing = dict.fromkeys(columns, 0)
    for name, first, table in tables_of(data, [unit, *columns], ids=[unit]):
        ids = table.column(unit).combine_chunks()
        position = lookup.get_indexer((ids if ids.type == kind else ids.cast(kind)).to_pandas())
        for c in columns:
            column = table.column(c).combine_chunks()
            present = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            missing[c] += int((~present).sum())
            number = number_column(name, first, column.filter(pa.array(present)), c).astype(np.float64)
            at = position[present]
            kept = at >= 0   # the units the analysis keeps
            rows[c].append(at[kept])
            values[c].append(number[kept])
    out: Estimates = {}
    for metric in metrics:
        at, x = np.concatenate(rows[metric.column]), np.concatenate(values[metric.column])
        if metric.ignore_zeros:
            at, x = at[x != 0], x[x != 0]
        out[metric.describe()] = _per_variant(x, at, units, metric.q)
    return EventQuantiles(out, missing)


def _per_variant(values: np.ndarray, unit_row: np.ndarray, units: Units, nu: float) -> list[ClusteredQuantileEstimate]:
    """Each variant's estimate from its events (``unit_row``: each event's row in ``units``)."""
    out = []
    code_of_event = units.codes[unit_row]
    for code in range(len(units.variants)):
        members = np.flatnonzero(units.codes == code)
        local = np.full(len(units), -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        chosen = code_of_event == code
        out.append(event_quantile(values[chosen], local[unit_row[chosen]], len(members), nu))
    return out


def _levels(nu: float, events: int) -> tuple[int, list[float]]:
    size = n_star(events)
    low, high = bound_levels(nu, size)
    return size, [nu, low, high]


def _estimate(nu: float, events: int, sizes_levels: tuple[int, list[float]], bounds: Sequence[float],
              sums: ClusterSums) -> ClusteredQuantileEstimate:
    size, _ = sizes_levels
    if events == 0:
        return clustered(QuantileEstimate(nu, 0, size, math.nan, math.nan, math.nan), sums)
    return clustered(QuantileEstimate(nu, events, size, *(float(b) for b in bounds)), sums)


def _duckdb(data: Any, unit: str, metrics: Sequence[Quantile], units: Units) -> EventQuantiles:
    """The per-event quantiles in DuckDB: the analysed units joined to the events, the quantiles
    by ``quantile_cont``, the per-unit counts by a join to each variant's quantile."""
    import pyarrow as pa

    from rankwise.experiments.definitions import quote_identifier
    from rankwise.experiments.warehouse import _check, _is_numeric, _relation, _run, _types

    columns = list(dict.fromkeys(m.column for m in metrics))

    def prepare(connection: Any) -> str:
        source = _relation(connection, data, "rankwise_events", ids=[unit])
        types = _types(connection, "rankwise_events", source, [unit, *columns])
        for c in columns:
            if not _is_numeric(types[c]):
                raise InputError(f"the column holds {types[c]}, not numbers", source=source, field=c)
            _check(connection, "rankwise_events", source,
                   {f"a value of {c} that is not finite": f"NOT isfinite(CAST({quote_identifier(c)} AS DOUBLE))"})
        return source

    def finish(connection: Any, source: str) -> EventQuantiles:
        cast = "BIGINT" if pa.types.is_integer(units.unit_ids.type) else "VARCHAR"
        connection.register("rankwise_units", pa.table({"u": units.unit_ids, "code": pa.array(units.codes)}))
        missing = {c: int(connection.execute(f"SELECT count(*) FROM rankwise_events WHERE {quote_identifier(c)} "
                                             "IS NULL").fetchall()[0][0]) for c in columns}
        out: Estimates = {}
        for metric in metrics:
            value = f"CAST(e.{quote_identifier(metric.column)} AS DOUBLE)"
            zero = " AND x <> 0" if metric.ignore_zeros else ""
            events = (f"SELECT k.code AS code, k.u AS u, {value} AS x FROM rankwise_events e JOIN rankwise_units k "
                      f"ON CAST(e.{quote_identifier(unit)} AS {cast}) = k.u")
            events = f"SELECT * FROM ({events}) WHERE x IS NOT NULL{zero}"
            counted = dict(connection.execute(f"SELECT code, count(*) FROM ({events}) GROUP BY code").fetchall())
            estimates = []
            for code in range(len(units.variants)):
                n = int(counted.get(code, 0))
                levels = _levels(metric.q, n)
                bounds = connection.execute(f"SELECT quantile_cont(x, {levels[1]!r}) FROM ({events}) WHERE code = "
                                            f"{code}").fetchall()[0][0] if n else [math.nan] * 3
                threshold = float(bounds[0])
                per_unit = connection.execute(
                    f"SELECT count(*) FILTER (WHERE x <= {threshold!r}) AS s, count(*) AS n FROM ({events}) "
                    f"WHERE code = {code} GROUP BY u").fetchnumpy() if n else {"s": np.zeros(0), "n": np.zeros(0)}
                estimates.append(_estimate(metric.q, n, levels, bounds,
                                           _sums(per_unit["s"], per_unit["n"], int((units.codes == code).sum()))))
            out[metric.describe()] = estimates
        return EventQuantiles(out, missing)

    return _run(None, prepare, finish)


def _sums(below: Any, events: Any, clusters: int) -> ClusterSums:
    """The cluster sums of the units with events, over every unit of the arm (those without
    events add zeros)."""
    got = ClusterSums.of(np.asarray(below, dtype=np.float64), np.asarray(events, dtype=np.float64))
    return ClusterSums(got.below, got.below_squares, got.events, got.events_squares, got.product, clusters)


def _ibis(table: Any, unit: str, metrics: Sequence[Quantile], units: Units) -> EventQuantiles:
    """The per-event quantiles in the Ibis backend holding ``table`` (the same steps as DuckDB's)."""
    import ibis
    import pyarrow as pa

    analysed = ibis.memtable(pa.table({"rankwise_u": units.unit_ids, "rankwise_code": pa.array(units.codes)}))
    columns = list(dict.fromkeys(m.column for m in metrics))
    missing = {c: int(table.filter(table[c].isnull()).count().to_pyarrow().as_py()) for c in columns}
    unit_ids = table[unit] if pa.types.is_integer(units.unit_ids.type) else table[unit].cast("string")
    out: Estimates = {}
    for metric in metrics:
        rows = table.select(rankwise_u=unit_ids, x=table[metric.column].cast("float64"))
        rows = rows.filter(rows.x.notnull())
        if metric.ignore_zeros:
            rows = rows.filter(rows.x != 0)
        joined = rows.join(analysed, "rankwise_u")
        estimates = []
        for code in range(len(units.variants)):
            arm = joined.filter(joined.rankwise_code == code)
            n = int(arm.count().to_pyarrow().as_py())
            levels = _levels(metric.q, n)
            bounds = [math.nan] * 3
            if n:
                found = arm.aggregate(**{f"b{i}": arm.x.quantile(level) for i, level in enumerate(levels[1])})
                bounds = list(found.to_pyarrow().to_pylist()[0].values())
            threshold = float(bounds[0])
            per_unit = arm.group_by("rankwise_u").aggregate(s=(arm.x <= threshold).cast("int64").sum(),
                                                            n=arm.count()).to_pyarrow()
            estimates.append(_estimate(metric.q, n, levels, bounds,
                                       _sums(per_unit.column("s").to_numpy(), per_unit.column("n").to_numpy(),
                                             int((units.codes == code).sum()))))
        out[metric.describe()] = estimates
    return EventQuantiles(out, missing)
