"""The source stage of an A/B analysis: the data (files, frames, a DuckDB database, an Ibis table,
an event log with exposures) to one row per unit or to per-variant sums where the data lies;
the per-unit adjustments before the moments (caps, CUPAC)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.capping import capped
from rankwise.experiments.events import Units, aggregate_units
from rankwise.experiments.metric_table import check_state, matrix_columns, state_columns, unit_columns, unit_matrix
from rankwise.experiments.metrics import Metric, Proportion, Quantile, Ratio, indicator
from rankwise.experiments.moments import VariantMoments

if TYPE_CHECKING:
    from rankwise.experiments.event_rows import ConversionWindow
    from rankwise.experiments.settings import Plan


def with_cupac(units: Units, metrics: Mapping[str, Metric], features: Sequence[str],
                model: Any, warnings: list[str] | None = None) -> tuple[Units, dict[str, Metric]]:
    """Each metric with its CUPAC covariate: the cross-fitted prediction of its per-unit value
    (a ratio: of its numerator and denominator; a proportion: of the indicator) from the
    features, added to the units as ``cupac(COLUMN)``. A feature with one value for every
    unit carries nothing (its predictions would only be the folds' means, which move the
    estimate): it is left out with a warning, and with no feature left the metrics are not
    adjusted."""
    from rankwise.experiments.cupac import cross_fitted

    constant = [f for f in features if np.ptp(units.values[f].astype(np.float64)) == 0]
    if constant:
        if warnings is not None:
            rest = "; no feature is left: the metrics are not adjusted" if len(constant) == len(features) else ""
            warnings.append(f"CUPAC feature(s) {', '.join(map(repr, constant))} have one value for every unit and "
                            f"were left out{rest}")
        features = [f for f in features if f not in constant]
        if not features:
            return units, dict(metrics)
    x = np.column_stack([units.values[f].astype(np.float64) for f in features])
    values = dict(units.values)
    out = dict(metrics)

    def predicted(column: str, target: np.ndarray) -> str:
        name = f"cupac({column})"
        if name not in values:
            values[name] = cross_fitted(x, target, model)
        return name

    for name, metric in metrics.items():
        if isinstance(metric, Quantile):
            raise OptionError(f"metric {name!r} is a quantile: CUPAC adjusts means and ratios")
        if isinstance(metric, Ratio):
            out[name] = replace(metric, covariate=(predicted(metric.numerator, units.values[metric.numerator]),
                                                   predicted(metric.denominator, units.values[metric.denominator])))
        elif isinstance(metric, Proportion):
            indicator_values = (units.values[metric.column] > 0).astype(np.float64)
            out[name] = replace(metric, covariate=predicted(indicator(metric.column), indicator_values))
        else:
            out[name] = replace(metric, covariate=predicted(metric.column, units.values[metric.column]))
    return replace(units, values=values), out


def _warehouse_plan(plan: Plan,
                    features: Sequence[str]) -> tuple[list[str], list[str], list[str], ConversionWindow | None]:
    """What a warehouse engine sums per unit: the plain columns summed and those that are
    counts, the per-unit covariates (CUPED's, CUPAC's features), the window in seconds; the
    option combinations no engine takes refused."""
    table, exposures = plan.metrics, plan.source.exposures
    named = {d.name for d in plan.definitions}
    sums, counts, _ = unit_columns({n: m for n, m in table.items() if n not in named})
    constants = list(dict.fromkeys([*unit_columns(table)[2], *features]))
    if exposures is not None and (sums or counts):
        raise OptionError("with an exposure table every metric is a definition over events (count(...), "
                          "sum(...), any(...))")
    seconds = plan.window
    if seconds is not None and exposures is None:
        raise OptionError("a window counts events from each unit's first exposure: give the exposures table")
    return sums, counts, constants, seconds


def daily_rows(data: Any, plan: Plan) -> Any:
    """What the daily looks read from a warehouse: one row per unit x variant x day, summed by
    the Ibis backend or DuckDB holding ``data`` (already checked by the per-unit pass, so not
    scanned for bad rows again)."""
    from rankwise.experiments.ibis_source import ibis_daily, is_ibis_table
    from rankwise.experiments.warehouse import duckdb_daily

    sums, counts, constants, seconds = _warehouse_plan(plan, ())
    source = plan.source
    assert source.timestamp is not None   # the looks are asked for by their timestamp
    daily = ibis_daily if is_ibis_table(data) else duckdb_daily
    return daily(data, plan.definitions, [*sums, *counts], source.unit, source.variant, source.event, source.timestamp,
                 counts, constants=constants, exposures=source.exposures, window=seconds, check=False)


def through_duckdb(data: Any, plan: Plan,
                   unit_rows: bool) -> tuple[Units | None, VariantMoments | None, int, list[str]]:
    """The data through DuckDB (``rankwise.experiments.warehouse``): the per-variant statistics
    themselves when no test or metric needs the units' rows (one row per variant comes back),
    else one row per unit; the units left out as mixed, and the join's warnings."""
    from rankwise.experiments.event_rows import left_out_warnings
    from rankwise.experiments.warehouse import duckdb_moments, duckdb_units

    sums, counts, constants, seconds = _warehouse_plan(plan, plan.cupac)
    source, table, definitions = plan.source, plan.metrics, plan.definitions
    options = {"plain_counts": counts, "variants": source.variants, "mixed": source.mixed,
               "exposures": source.exposures, "window": seconds, "timestamp": source.timestamp}
    read = (data, definitions, [*sums, *counts], source.unit, source.variant, source.event)
    rows_needed = unit_rows or any(isinstance(m, Quantile) for m in table.values())
    if constants:   # CUPED reads each unit's covariate beside its sums
        units, left_out = duckdb_units(*read, **options, constants=constants)
        return units, None, units.mixed, left_out_warnings(left_out)
    if not rows_needed:
        moments, mixed_units, _, left_out = duckdb_moments(*read, matrix_columns(table), **options)
        return None, moments, mixed_units, left_out_warnings(left_out)
    units, left_out = duckdb_units(*read, **options)
    return units, None, units.mixed, left_out_warnings(left_out)


def through_ibis(data: Any, plan: Plan) -> tuple[Units, list[str]]:
    """The data as an Ibis table expression: the per-unit sums computed by its backend
    (``rankwise.experiments.ibis_source``), and the warnings of the exposure join."""
    from rankwise.experiments.event_rows import left_out_warnings
    from rankwise.experiments.ibis_source import ibis_units

    sums, counts, constants, seconds = _warehouse_plan(plan, plan.cupac)
    source = plan.source
    if source.exposures is not None and constants:
        raise OptionError("covariates (CUPED, CUPAC) with an exposure table: not yet; give the events without "
                          "--exposures, or the per-unit table")
    units, left_out = ibis_units(data, plan.definitions, [*sums, *counts], source.unit, source.variant, source.event,
                                 counts, source.variants, source.mixed, constants, exposures=source.exposures,
                                 window=seconds, timestamp=source.timestamp)
    return units, left_out_warnings(left_out)


def derived_rows(data: Any, plan: Plan, plain: Sequence[str], constants: Sequence[str] = ()) -> tuple[Any, list[str]]:
    """The event log as the rows the per-unit sums read (one column per aggregation), joined
    to the exposures if given, with the per-unit covariates ``constants`` kept beside; and the
    warnings for the events left out."""
    from rankwise.data.tables import ReadPieces
    from rankwise.experiments.event_rows import event_rows, with_exposures

    source, table, definitions = plan.source, plan.metrics, plan.definitions
    unit, variant, event, timestamp, exposures = (source.unit, source.variant, source.event, source.timestamp,
                                                  source.exposures)
    seconds = plan.window
    if exposures is None:
        if seconds is not None:
            raise OptionError("a window counts events from each unit's first exposure: give the exposures table")
        looked = plan.daily_looks
        keep = list(dict.fromkeys([*plain, *constants, *([timestamp] if looked and timestamp else [])]))
        rows = event_rows(data, definitions, unit, variant, event, keep=keep)
        if not looked:   # read once, piece by piece, by the per-unit sums
            return rows.pieces, []
        return ReadPieces(rows.pieces), []   # the looks read the rows again
    if constants:
        raise OptionError("covariates (CUPED, CUPAC) with an exposure table: not yet; give the events without "
                          "--exposures, or the per-unit table")
    if plain:
        direct = [n for n, m in table.items() if n not in {d.name for d in definitions}]
        raise OptionError("with an exposure table every metric is a definition over events (count(...), "
                          f"sum(...), any(...)); {', '.join(direct)} read columns directly")
    if timestamp is None:
        raise OptionError("exposures are joined to events by time: give the timestamp column (--timestamp)")
    rows = with_exposures(event_rows(data, definitions, unit, None, event, keep=[timestamp]), exposures, unit,
                          variant, timestamp, seconds)
    return ReadPieces(list(rows.pieces)), rows.warnings()


@dataclass
class Measured:
    """The source stage's answer: the per-variant statistics, the units' rows (None when the
    statistics were computed where the data lies), the metrics as the comparisons read them
    (capped, CUPAC-adjusted), each capped metric's cap, what the daily looks read, and the
    warnings of reading."""

    moments: VariantMoments
    units: Units | None
    metrics: dict[str, Metric]
    caps: dict[str, float] = field(default_factory=dict)
    looks_data: Any = None
    warnings: list[str] = field(default_factory=list)
    plan: Plan | None = None
    """The plan as the data resolved it (the analysed period in its window)."""


def measure(data: Any, plan: Plan) -> Measured:
    """The data to per-variant statistics (see the module), through the engine the data or the
    plan name: per-variant sums given as they are, an Ibis table by its backend, DuckDB, or the
    event log and its definitions in this process."""
    source = plan.source
    if source.statistics or isinstance(data, VariantMoments):
        return Measured(_given_statistics(data, plan), None, dict(plan.metrics))
    warnings: list[str] = []
    plan = with_period(data, plan)
    units, pushed, looks_data = _through_engine(data, plan, warnings)
    table = dict(plan.metrics)
    if units is not None:
        from rankwise.experiments.event_quantiles import event_quantiles

        found = event_quantiles(data, plan, units)
        if found.estimates:
            units = replace(units, event_quantiles=found.estimates)
            warnings += found.warnings()
    pre_pass = plan.pre_period_pass()
    if pre_pass is not None and units is not None:
        from rankwise.experiments.pre_period import covariate_warnings, with_pre_period

        pre_warnings: list[str] = []
        before, _, _ = _through_engine(data, pre_pass, pre_warnings, unit_rows=True)
        assert before is not None and plan.adjustments.pre_period is not None
        units, table = with_pre_period(units, before, table, plan.definitions)
        warnings += covariate_warnings(pre_warnings, plan.adjustments.pre_period)
    if pushed is not None:    # every statistic computed where the data lies
        measured = Measured(pushed, None, table, looks_data=looks_data, warnings=warnings)
    else:
        assert units is not None
        measured = _adjusted(units, plan, table, looks_data, warnings)
    from rankwise.experiments.event_names import missing_events, unmet_conditions

    missing_events(data, source.event, unmet_conditions(plan.definitions, measured.moments, source.event))
    measured.plan = plan
    return measured


def with_period(data: Any, plan: Plan) -> Plan:
    """The plan with the analysed period in its window: the lookback's start and the end
    (``until``, or the latest event's time, found by the engine that reads the data)."""
    from rankwise.experiments.event_rows import ConversionWindow, latest_seconds, moment_seconds, window_seconds
    from rankwise.experiments.ibis_source import aggregated_where, ibis_latest_seconds
    from rankwise.experiments.warehouse import duckdb_latest_seconds

    source = plan.source
    if source.lookback is None and source.until is None:
        return plan
    assert source.timestamp is not None   # the exposure join needs it
    if source.until is not None:
        end = moment_seconds(source.until)
    else:
        latest = {"ibis": ibis_latest_seconds, "duckdb": duckdb_latest_seconds, "memory": latest_seconds}
        end = latest[aggregated_where(data, source.engine)](data, source.timestamp)
    lookback = window_seconds(source.lookback, "lookback")
    window = replace(plan.window or ConversionWindow(), not_before=end - lookback if lookback is not None else None,
                     not_after=end)
    return replace(plan, window_override=window)


def _through_engine(data: Any, plan: Plan, warnings: list[str],
                    unit_rows: bool = False) -> tuple[Units | None, VariantMoments | None, Any]:
    """The units' rows (or, when nothing needs them, the per-variant statistics computed where
    the data lies) through the engine the data or the plan name (``unit_rows``: the rows in any
    case), and what the daily looks read; the warnings of reading added to ``warnings``."""
    from rankwise.experiments.ibis_source import aggregated_where
    from rankwise.experiments.warehouse import AGGREGATION_ENGINES

    source = plan.source
    if source.engine not in AGGREGATION_ENGINES:
        raise OptionError(f"unknown engine {source.engine!r}; expected one of {', '.join(AGGREGATION_ENGINES)}")
    units: Units | None = None
    pushed: VariantMoments | None = None
    looks_data = data
    where = aggregated_where(data, source.engine)
    if where != "memory":
        if where == "ibis":
            units, warned = through_ibis(data, plan)
            mixed = units.mixed
        else:
            unit_rows = (unit_rows or plan.test.unit_rows or bool(plan.adjustments.caps) or bool(plan.slices)
                         or plan.adjustments.pre_period is not None)
            units, pushed, mixed, warned = through_duckdb(data, plan, unit_rows)
        warnings += warned
        if plan.daily_looks:
            looks_data = daily_rows(data, plan)
    else:
        units, looks_data = _in_memory(data, plan, warnings)
        mixed = units.mixed
    if mixed:
        warnings.append(f"{mixed} unit(s) appeared in more than one variant and were left out")
    return units, pushed, looks_data


def _given_statistics(data: Any, plan: Plan) -> VariantMoments:
    """Per-variant statistics given as the data (a ``VariantMoments`` or a table of sums),
    checked to hold what the metrics read; what needs unit rows refused."""
    adjust = plan.adjustments
    for wanted, what in ((plan.slices, "slices need one row per unit"), (adjust.caps, "capping needs one row per unit"),
                         (plan.test.unit_rows, f"test={plan.test.name!r} needs one row per unit"),
                         (plan.daily_looks, "looks over time need the event log")):
        if wanted:
            raise OptionError(f"{what}, not per-variant statistics")
    columns, pairs = state_columns(plan.metrics)
    if isinstance(data, VariantMoments):
        check_state(data, columns, pairs)
        return data
    from rankwise.experiments.statistics_table import read_statistics

    return read_statistics(data, columns, pairs, variant=plan.source.variant, variants=plan.source.variants)


def _in_memory(data: Any, plan: Plan, warnings: list[str]) -> tuple[Units, Any]:
    """The units' rows computed in this process (Arrow), from the event log's derived rows
    when the metrics are definitions over events or the events are joined to exposures; and
    what the daily looks read."""
    from rankwise.experiments.preload import preload

    source, table, cupac = plan.source, plan.metrics, plan.cupac
    sums, counts, constants = unit_columns(table)
    if plan.definitions or source.exposures is not None:
        named = {d.name for d in plan.definitions}
        plain = [c for group in unit_columns({n: m for n, m in table.items() if n not in named}) for c in group]
        data, left_out = derived_rows(data, plan, list(dict.fromkeys(plain)), [*constants, *cupac])
        warnings += left_out
    preload("pandas", "scipy.special")   # for the results, imported while the data is read
    units = aggregate_units(data, source.unit, source.variant, sums=sums, counts=counts,
                            constants=list(dict.fromkeys([*constants, *cupac])), variants=source.variants,
                            mixed=source.mixed, ordered=plan.test.resampled or bool(cupac))
    return units, data


def _adjusted(units: Units, plan: Plan, table: dict[str, Metric], looks_data: Any, warnings: list[str]) -> Measured:
    """The units' caps and CUPAC covariates applied, and their per-variant statistics."""
    adjust = plan.adjustments
    caps: dict[str, float] = {}
    if adjust.caps:
        units, table, caps = capped(units, table, adjust.caps, adjust.ignore_zeros, adjust.cap_convention)
    if plan.cupac:
        units, table = with_cupac(units, table, plan.cupac, adjust.cupac_model, warnings)
    matrix, columns = unit_matrix(units, table)
    moments = VariantMoments.from_codes(units.codes, matrix, units.variants, columns)
    return Measured(moments, units, table, caps, looks_data, warnings)
