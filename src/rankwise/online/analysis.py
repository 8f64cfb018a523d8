"""A/B analysis: every metric in every treatment arm against the control, with intervals,
p-values corrected across arms x metrics, CUPED, sample ratio mismatch and sequential tests."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import InputError, OptionError
from rankwise.online.ab_tests import (
    AB_TESTS,
    ABTest,
    NotComparable,
    Pair,
    TestSettings,
    difference_columns,
    unit_values,
)
from rankwise.online.definitions import Definition
from rankwise.online.events import Mixed, Units, aggregate_units
from rankwise.online.metrics import (
    Mean,
    Metric,
    Proportion,
    Quantile,
    Ratio,
    indicator,
    ratio_covariance,
    ratio_of_means,
)
from rankwise.online.moments import VariantMoments
from rankwise.stats.corrections import CORRECTION_METHODS
from rankwise.stats.power import detectable_multiplier
from rankwise.stats.sequential import SEQUENTIAL_DESIGNS, Design, boundaries
from rankwise.stats.srm import SRM, srm_test
from rankwise.stats.twosample import RELATIVE, Alternative, Arm, Relative

if TYPE_CHECKING:
    from rankwise.online.warehouse import AggregationEngine

@dataclass
class ABResult:
    """The analysis: ``table`` (one row per metric x treatment arm), ``srm``, ``warnings``,
    the ``settings`` that produced it, and ``looks`` (one row per metric x arm x look) when
    the data had timestamps; ``statistics``: the per-variant sufficient statistics analysed
    (``rankwise.online.statistics_table`` writes them as a table)."""

    table: Any
    srm: SRM
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    looks: Any = None
    statistics: VariantMoments | None = None

    def units_needed(self, relative_effect: float, power: float = 0.8) -> Any:
        """Units per arm (control and treatment in the split observed) each comparison needs to
        detect a relative change of ``relative_effect`` with ``power`` at the analysis' alpha,
        from the per-unit variances the data show (delta method for ratios, CUPED-adjusted,
        quantiles' own): ``n_c = (z_{1-alpha/2} + z_power)^2 (v_c + v_t / r) / delta^2`` with
        ``delta = relative_effect * |control value|`` and ``r = n_t / n_c``.

        >>> data = {"u": list(range(8)), "v": ["A"] * 4 + ["B"] * 4, "x": [1, 2, 3, 4, 2, 3, 4, 5]}
        >>> r = analyze(data, "u", "v", ["x"])
        >>> int(r.units_needed(0.1).iloc[0]["units_control"])   # 2.8016^2 (5/3 + 5/3) / 0.25^2
        419
        """
        from rankwise.stats.power import detectable_multiplier

        if not relative_effect > 0:
            raise OptionError(f"the relative effect to detect must be positive (0.02 for 2%), got {relative_effect}")
        multiplier = detectable_multiplier(self.settings["alpha"], power)
        table = self.table
        delta = relative_effect * table["control_value"].abs()
        ratio = table["n"] / table["n_control"]
        control = np.ceil(multiplier ** 2 * (table["variance_control"] + table["variance"] / ratio) / delta ** 2)
        keep = [c for c in ("dimension", "slice") if c in table.columns] + ["metric", "variant"]
        out = table[keep].copy()
        out["units_control"] = control
        out["units"] = np.ceil(control * ratio)
        out["relative_effect"], out["power"] = relative_effect, power
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain Python (JSON-ready): rows, SRM, settings, warnings."""
        from rankwise.results import json_plain

        return {"rows": json_plain(self.table),
                "srm": {"observed": list(self.srm.observed), "expected": list(self.srm.expected),
                        "statistic": self.srm.statistic, "p_value": self.srm.p_value,
                        "mismatch": self.srm.mismatch},
                "settings": self.settings, "warnings": list(self.warnings)}


def parse_metric(spec: str) -> tuple[str, Metric]:
    """``NAME=COL`` (mean per unit), ``NAME=COL>0`` (proportion of units), ``NAME=NUM/DEN``
    (ratio of sums), ``NAME=p90(COL)`` (a quantile of the units' values); the name defaults to
    the expression.

    >>> parse_metric("ctr=clicks/views")
    ('ctr', Ratio(numerator='clicks', denominator='views', covariate=None))
    >>> parse_metric("bought>0")
    ('bought>0', Proportion(column='bought', covariate=None))
    >>> parse_metric("p90=p90(revenue)")
    ('p90', Quantile(column='revenue', covariate=None, q=0.9))
    """
    name, _, expression = spec.partition("=") if "=" in spec else (spec, "", spec)
    expression = expression.strip()
    name = name.strip()
    if not expression or not name:
        raise OptionError(f"metric {spec!r}: expected NAME=COLUMN, NAME=COLUMN>0, NAME=NUMERATOR/DENOMINATOR or "
                          "NAME=p90(COLUMN)")
    import re

    quantile = re.fullmatch(r"p(\d+(?:\.\d+)?)\((.+)\)", expression)
    if quantile:
        return name, Quantile(quantile.group(2).strip(), q=float(quantile.group(1)) / 100)
    if "/" in expression:
        num, _, den = expression.partition("/")
        return name, Ratio(num.strip(), den.strip())
    if expression.endswith(">0"):
        return name, Proportion(expression[:-2].strip())
    return name, Mean(expression)


def _with_covariate(metric: Metric, covariate: str) -> Metric:
    if isinstance(metric, Ratio):
        if "/" in covariate:
            num, _, den = covariate.partition("/")
            return replace(metric, covariate=(num.strip(), den.strip()))
        return replace(metric, covariate=covariate)
    return replace(metric, covariate=covariate)


def _metric_table(metrics: Mapping[str, Any] | Sequence[Any] | str) -> tuple[dict[str, Metric], list[Definition]]:
    """The metrics by name, and the event-log definitions among them (their metrics read the
    columns ``rankwise.online.event_rows`` derives)."""
    from rankwise.online.definitions import is_definition, parse_definition

    if isinstance(metrics, (str, Definition)):
        metrics = [metrics]
    items = list(metrics.items()) if isinstance(metrics, Mapping) else [(None, m) for m in metrics]
    out: dict[str, Metric] = {}
    definitions: list[Definition] = []
    for name, m in items:
        if isinstance(m, str) and is_definition(m if name is None else f"x={m}"):
            m = parse_definition(m, name=name)
        if isinstance(m, Definition):
            definition = m if name is None else Definition(str(name), m.numerator, m.denominator)
            if definition.name in out:
                raise OptionError(f"two metrics are named {definition.name!r}")
            definitions.append(definition)
            out[definition.name] = definition.metric()
        elif isinstance(m, str):
            key, metric = parse_metric(m if name is None else f"{name}={m}")
            out[key] = metric
        else:
            out[str(name) if name is not None else m.describe()] = m
    return out, definitions


def _columns(metrics: Mapping[str, Metric]) -> tuple[list[str], list[str], list[str]]:
    """(sums, counts, constants): columns summed per unit, those that must be >= 0, and
    per-unit covariates."""
    sums: list[str] = []
    counts: list[str] = []
    constants: list[str] = []
    for m in metrics.values():
        if isinstance(m, Ratio):
            counts += [m.numerator, m.denominator]
        elif isinstance(m, Proportion):
            counts.append(m.column)
        else:
            sums.append(m.column)
        constants += [c for c in (m.covariate_ratio or ()) if c]
    return list(dict.fromkeys(sums)), list(dict.fromkeys(counts)), list(dict.fromkeys(constants))


def _unit_matrix(units: Units, metrics: Mapping[str, Metric]) -> tuple[np.ndarray, list[str]]:
    columns: dict[str, np.ndarray] = {}
    for m in metrics.values():
        if isinstance(m, Proportion):
            values = units.values[m.column]
            columns[indicator(m.column)] = (values > 0).astype(values.dtype)
        for c in m.columns():
            if c in units.values:
                columns[c] = units.values[c]
    names = list(columns)
    matrix = np.column_stack([columns[c] for c in names]) if names else np.zeros((len(units), 0))
    return matrix, names


def analyze(data: Any, unit: str = "unit", variant: str = "variant",
            metrics: Mapping[str, Metric | Definition | str] | Sequence[Metric | Definition | str] | str = (),
            control: str | None = None,
            covariates: Mapping[str, str] | None = None, test: str = "welch", relative: Relative = "delta",
            alpha: float = 0.05, correction: str = "holm", alternative: Alternative = "two-sided",
            weights: Sequence[float] | None = None, variants: Sequence[str] | None = None,
            sequential: str | None = None, tuning: float | None = None, planned_units: int | None = None,
            timestamp: str | None = None, mixed: Mixed = "exclude", resamples: int = 2000,
            seed: int = 0, statistics: bool = False, mixture_effect: float | None = None,
            event: str = "event", exposures: Any = None, window: str | float | None = None,
            engine: AggregationEngine = "memory", caps: Mapping[str, str | float] | None = None,
            ignore_zeros: bool = False, slices: Sequence[str] = (), correction_scope: str = "slice",
            guardrails: Mapping[str, float] | None = None, lower_is_better: Sequence[str] = (),
            power: float = 0.8, cupac: Sequence[str] = (), cupac_model: Any = "linear",
            p_value: str = "absolute") -> ABResult:
    """Analyse an experiment.

    ``data``: event logs or per-unit rows (files, a directory, a DataFrame, an Arrow table, a
    dict of columns; values summed per unit), or per-variant sufficient statistics: a
    ``VariantMoments``, or with ``statistics=True`` tables of ``n``, ``sum(x)`` and
    ``sum(x*y)`` per variant (see ``rankwise.online.statistics_table``). ``metrics``:
    ``{name: Mean(col) | Proportion(col) | Ratio(num, den)}`` or strings ``NAME=COL``,
    ``NAME=COL>0``, ``NAME=NUM/DEN``. ``control``: the control variant
    (default: the first in ``variants`` or in sorted order). ``covariates``: ``{metric name:
    pre-experiment column (or NUM/DEN)}`` for CUPED (theta pooled over the two arms compared).
    ``test``: welch, student, z, z-pooled (proportions), mann-whitney (p-value of the rank
    test on unit values), bootstrap (percentile interval and p of ``resamples`` seeded
    resamples of units). ``relative``: delta or log (see ``rankwise.stats.twosample``).
    ``correction``: holm, bonferroni, bh or none, across arms x metrics. ``weights``: the
    design split for the sample-ratio-mismatch test (equal by default). ``sequential``:
    always-valid (confidence sequence, tuning sample size ``tuning``), msprt (normal-mixture
    SPRT, mixture sd ``mixture_effect`` per-unit standard deviations) or obrien-fleming /
    pocock (alpha spending over the daily looks of ``timestamp``, planned total
    ``planned_units``). ``mixed``: exclude or error for units seen in two variants.

    Metrics may be defined over an event log (one row per event, its type in the ``event``
    column): ``ctr=count(click)/count(impression)``, ``revenue=sum(value where event =
    purchase)``, ``buyers=any(purchase)`` (see ``rankwise.online.definitions``).
    ``exposures``: a table of (``unit``, ``variant``, ``timestamp``) exposures; each unit's
    variant is that of its first exposure and its events count from then, for ``window``
    (``7d``, ``36h``, seconds) if given (see ``rankwise.online.event_rows``). ``engine``:
    memory (Arrow in this process) or duckdb (per-unit sums computed by DuckDB, out of core;
    ``data`` may then be a ``rankwise.online.warehouse.DuckDBSource``; see that module).
    ``caps``: ``{metric name: cap}``, each unit's value (a ratio's numerator) capped at a
    number or at a percentile of every unit's value (``"p99"``; ``ignore_zeros`` leaves units
    at 0 out of that percentile), as GrowthBook caps metrics. ``slices``: columns of the data
    (of the exposures, if given) whose values split the units; each slice is analysed too, in
    rows with ``dimension`` and ``slice`` (``all`` for the whole experiment), and
    ``correction_scope`` (slice, metric or all) says which p-values are corrected together
    (see ``rankwise.online.slices``). ``guardrails``: ``{metric: margin}``, a non-inferiority
    test of each arm: is the metric no worse than ``margin`` (relative: 0.02 is 2%) below the
    control (above, for the metrics in ``lower_is_better``)? See ``guardrail_columns``.
    ``power``: the power of the minimum detectable effect in each row (``mde``, ``mde_relative``:
    the difference the data would detect at ``alpha`` with that power, from its own variance);
    ``ABResult.units_needed`` plans the units to detect a given change. ``cupac``:
    pre-experiment feature columns (one value per unit) from which ``cupac_model`` (``linear``
    or a scikit-learn-style estimator) predicts each metric's values, cross-fitted; the
    prediction is the metric's CUPED covariate (``rankwise.online.cupac``).

    >>> data = {"user": ["a", "b", "c", "d", "e", "f"], "arm": ["A", "A", "A", "B", "B", "B"],
    ...         "views": [1, 2, 3, 2, 3, 4]}
    >>> r = analyze(data, unit="user", variant="arm", metrics=["views"], test="student")
    >>> row = r.table.iloc[0]
    >>> float(row["difference"]), round(float(row["p_value"]), 4)   # t = 1 / sqrt(2/3), 4 df
    (1.0, 0.2879)
    """

    from rankwise.online.slices import CORRECTION_SCOPES, check_dimensions

    correction_scope = CORRECTION_SCOPES.canonical(correction_scope)
    slices = check_dimensions(slices, unit, variant)
    source_data = data
    chosen, test_params = AB_TESTS.parse(test)
    test = chosen.name
    if relative not in RELATIVE:
        raise OptionError(f"unknown relative interval {relative!r}; expected one of {', '.join(RELATIVE)}")
    design: Design | None = None
    design_params: dict[str, Any] = {}
    if sequential is not None:   # the old keywords tuning= and mixture_effect= join the design that declares them
        design, design_params = SEQUENTIAL_DESIGNS.parse_with_keywords(sequential, tuning=tuning,
                                                                       mixture_effect=mixture_effect)
        sequential = design.name
    spending = design is not None and not design.always_valid
    if p_value not in P_VALUES:
        raise OptionError(f"p_value={p_value!r}: expected {' or '.join(P_VALUES)} (the difference's test, or the "
                          "relative lift's)")
    if p_value == "relative" and (not chosen.relative_p or design is not None):
        raise OptionError(f"p_value='relative' is the t or z test of the relative lift; the {sequential or test} "
                          "p-value has no relative form")
    correction = CORRECTION_METHODS.canonical(correction)
    if not 0 < alpha < 1:
        raise OptionError(f"alpha must be between 0 and 1, got {alpha}")
    table, definitions = _metric_table(metrics)
    if not table:
        raise OptionError("give at least one metric (NAME=COL, NAME=COL>0, NAME=NUM/DEN or a definition over "
                          "events such as NAME=count(click)/count(impression))")
    for name, column in (covariates or {}).items():
        if name not in table:
            raise OptionError(f"covariate for unknown metric {name!r}; the metrics are {', '.join(table)}")
        table[name] = _with_covariate(table[name], column)
    cupac = list(dict.fromkeys(cupac))
    if cupac and covariates:
        raise OptionError("give CUPED covariates or CUPAC features, not both: CUPAC predicts each metric's covariate")
    if planned_units is not None and not planned_units >= 1:
        raise OptionError(f"planned_units={planned_units}: the planned number of units is a positive count "
                          "(--planned-units N)")
    if spending and timestamp is None:
        raise OptionError(f"sequential={sequential!r} analyses daily looks: give the timestamp column")
    warnings: list[str] = []
    units: Units | None = None
    for name in caps or {}:
        if name not in table:
            raise OptionError(f"cap for unknown metric {name!r}; the metrics are {', '.join(table)}")
    for kind, given in (("guardrail", guardrails or {}), ("lower_is_better", lower_is_better)):
        for name in given:
            if name not in table:
                raise OptionError(f"{kind} for unknown metric {name!r}; the metrics are {', '.join(table)}")
    for name, margin in (guardrails or {}).items():
        if not (0 <= float(margin) < 1):
            raise OptionError(f"guardrail {name!r}: the margin is a relative worsening in [0, 1) (0.02 for 2%), "
                              f"got {margin}")
    if statistics or isinstance(data, VariantMoments):
        if slices:
            raise OptionError("slices need one row per unit, not per-variant statistics")
        if caps:
            raise OptionError("capping needs one row per unit, not per-variant statistics")
        if chosen.unit_rows:
            raise OptionError(f"test={test!r} needs one row per unit, not per-variant statistics")
        if timestamp is not None:
            raise OptionError("looks over time need the event log, not per-variant statistics")
        columns, pairs = state_columns(table)
        if isinstance(data, VariantMoments):
            moments = data
            _check_state(moments, columns, pairs)
        else:
            from rankwise.online.statistics_table import read_statistics

            moments = read_statistics(data, columns, pairs, variant=variant, variants=variants)
    else:
        sums, counts, constants = _columns(table)
        from rankwise.online.warehouse import AGGREGATION_ENGINES, DuckDBSource

        if engine not in AGGREGATION_ENGINES:
            raise OptionError(f"unknown engine {engine!r}; expected one of {', '.join(AGGREGATION_ENGINES)}")
        from rankwise.online.ibis_source import is_ibis_table

        in_ibis = is_ibis_table(data)
        if in_ibis:
            units, warned = _ibis_units(data, table, definitions, unit, variant, event, variants, mixed, exposures,
                                        window, timestamp, cupac)
            warnings += warned
            pushed, mixed_units = None, units.mixed
            if timestamp is not None:
                data = _daily_rows(data, table, definitions, unit, variant, event, timestamp, exposures, window)
        elif engine == "duckdb" or isinstance(data, DuckDBSource):
            units, pushed, mixed_units, warned = _duckdb_units(data, table, definitions, unit, variant, event,
                                                               variants, mixed, exposures, window, timestamp,
                                                               chosen.unit_rows or bool(caps) or bool(slices), cupac)
            warnings += warned
            if timestamp is not None:
                data = _daily_rows(data, table, definitions, unit, variant, event, timestamp, exposures, window)
        elif definitions or exposures is not None:
            named = {d.name for d in definitions}
            plain = [c for group in _columns({n: m for n, m in table.items() if n not in named}) for c in group]
            data, left_out = _derived_rows(data, table, definitions, unit, variant, event, exposures, window,
                                           timestamp, list(dict.fromkeys(plain)), [*constants, *cupac])
            warnings += left_out
        if engine == "memory" and not isinstance(data, DuckDBSource) and not in_ibis:
            from rankwise.online.preload import preload

            preload("pandas", "scipy.special")   # for the results, imported while the data is read
            units = aggregate_units(data, unit, variant, sums=sums, counts=counts,
                                    constants=list(dict.fromkeys([*constants, *cupac])), variants=variants,
                                    mixed=mixed, ordered=chosen.resampled or bool(cupac))
            pushed, mixed_units = None, units.mixed
        if mixed_units:
            warnings.append(f"{mixed_units} unit(s) appeared in more than one variant and were left out")
        raw_table = dict(table)   # the looks cap each day's units themselves
        if pushed is not None:    # every statistic computed where the data lies
            moments = pushed
        else:
            assert units is not None
            if caps:
                units, table, cap_values = capped(units, table, caps, ignore_zeros)
            if cupac:
                units, table = _with_cupac(units, table, cupac, cupac_model, warnings)
            matrix, columns = _unit_matrix(units, table)
            moments = VariantMoments.from_codes(units.codes, matrix, units.variants, columns)
        from rankwise.online.event_names import missing_events, zero_event_targets

        missing_events(definitions, source_data, event, zero_event_targets(definitions, moments))
    names = list(variants) if variants is not None else moments.variants
    if len(names) < 2:
        raise OptionError(f"the data has one variant ({', '.join(map(repr, names))}): an A/B analysis compares at "
                          f"least two (is --variant the right column?)")
    control = control if control is not None else names[0]
    if control not in moments.variants:
        raise OptionError(f"control {control!r} is not a variant of the data ({', '.join(moments.variants)})")
    srm = srm_test([int(moments.n[moments.variants.index(v)]) for v in names], weights)
    if srm.mismatch:
        warnings.append(srm.message())

    def comparisons(moments: VariantMoments, units: Units | None, where: str = "") -> list[dict[str, Any]]:
        from rankwise.progress import tracked

        rows = []
        for name, metric in tracked(list(table.items()), f"analysing metrics{where}"):
            for arm in names:
                if arm == control:
                    continue
                problem = _not_comparable(metric, moments, control, arm)
                test_settings = TestSettings(relative, alpha, alternative, resamples, seed, name in lower_is_better)
                try:
                    row = None if problem else _row(name, metric, moments, control, arm, chosen, test_params,
                                                    test_settings, units, design, design_params, power)
                except NotComparable as reason:
                    row, problem = None, str(reason)
                if row is not None and not (math.isfinite(row["difference"]) and math.isfinite(row["se"])):
                    problem = "its difference or standard error is not a finite number"
                if problem:
                    warnings.append(f"{name}, {arm} against {control}{where}: not compared: {problem}")
                    row = _untested_row(name, metric, moments, control, arm, test, units)
                assert row is not None
                rows.append(row)
        return rows

    rows = comparisons(moments, units)
    slice_units: list[tuple[str, str, Any]] = []
    if slices:
        assert units is not None   # refused above for per-variant statistics
        rows = [{"dimension": "", "slice": "all", **row} for row in rows]
        labelled = exposures if exposures is not None else source_data
        if is_ibis_table(source_data) or engine == "duckdb" or isinstance(source_data, DuckDBSource):
            # a warehouse keeps no row order: a unit whose rows disagree takes its lowest value
            from rankwise.online.ibis_source import ibis_labels
            from rankwise.online.slices import labels_in_order
            from rankwise.online.warehouse import duckdb_labels

            warehouse_labels = ibis_labels if is_ibis_table(labelled) else duckdb_labels
            sliced_rows, slice_units = _sliced(
                comparisons, lambda dimension: labels_in_order(warehouse_labels(labelled, unit, dimension), units),
                slices, units, table, warnings, "its lowest value")
        else:
            from rankwise.online.slices import unit_labels

            sliced_rows, slice_units = _sliced(
                comparisons, lambda dimension: unit_labels(labelled, unit, dimension, units), slices, units, table,
                warnings, "its first row")
        rows += sliced_rows
    import pandas as pd

    frame = pd.DataFrame(rows)
    if p_value == "relative" and "relative_p_value" in frame:   # GrowthBook's display: the lift's p, corrected
        frame["absolute_p_value"] = frame["p_value"]
        frame["p_value"] = frame["relative_p_value"]

    def correct_frame() -> None:
        if slices:
            from rankwise.online.slices import correction_groups

            frame["p_corrected"] = np.nan
            for group in correction_groups(frame, correction_scope):
                frame.loc[frame.index[group], "p_corrected"] = _corrected(frame["p_value"].to_numpy()[group],
                                                                          correction, alpha)
        else:
            frame["p_corrected"] = _corrected(frame["p_value"].to_numpy(), correction, alpha)
        frame["significant"] = frame["p_corrected"] < alpha

    correct_frame()
    if guardrails:
        frame = guardrail_columns(frame, guardrails, lower_is_better, alpha)
    if chosen.posterior:   # a decision by the chance to win, as GrowthBook's threshold (1 - alpha)
        for column in ("chance_to_win", "risk_control", "risk_treatment"):
            if column not in frame:   # no row could be compared: every posterior column is missing
                frame[column] = math.nan
        frame["significant"] = (frame["chance_to_win"] >= 1 - alpha) | (frame["chance_to_win"] <= alpha)
    settings = {"unit": unit, "variant": variant, "test": test, "relative": relative, "alpha": alpha,
                "correction": correction, "alternative": alternative, "control": control, "sequential": sequential,
                "weights": list(weights) if weights is not None else None,
                "covariates": dict(covariates or {}), "mixed": mixed, "p_value": p_value}
    if definitions:
        settings.update(event=event, definitions={d.name: d.text().partition(" = ")[2] for d in definitions})
    if exposures is not None:
        settings.update(exposures=True, window=window)
    if chosen.resampled:
        settings.update(resamples=resamples, seed=seed)
    if chosen.posterior:
        settings["prior"] = dict(test_params)
    if slices:
        settings.update(slices=list(slices), correction_scope=correction_scope)
    if cupac:
        settings.update(cupac=list(cupac), cupac_model=cupac_model if isinstance(cupac_model, str)
                        else type(cupac_model).__name__)
    if guardrails:
        settings.update(guardrails={k: float(v) for k, v in guardrails.items()}, lower_is_better=list(lower_is_better))
    if caps:
        settings.update(caps=cap_values, cap_rules={name: str(spec) for name, spec in caps.items()},
                        ignore_zeros=ignore_zeros)
    settings.update(design_params)
    looks = None
    if timestamp is not None:
        def looks_of(only_units: Any = None, schedule: Any = None) -> Any:
            return cumulative_looks(data, unit, variant, timestamp, raw_table, control, names,
                                    chosen.spelled(test_params), relative, alpha, alternative, mixed,
                                    design.spelled(design_params) if design is not None else None, planned_units,
                                    caps, ignore_zeros,
                                    lower_is_better=lower_is_better, only_units=only_units, schedule=schedule)

        looks = looks_of()
        by = ["metric", "variant"]
        if slices:   # every slice's looks: the analysis of its units up to each day
            by = ["dimension", "slice", "metric", "variant"]
            parts = [looks.assign(dimension="", slice="all")]
            for dimension, value, ids in slice_units:
                parts.append(looks_of(ids, looks if spending else None).assign(
                    dimension=dimension, slice=value))
            looks = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) \
                else parts[0]
            looks = looks[["dimension", "slice", *[c for c in looks.columns if c not in ("dimension", "slice")]]]
        if design is not None and len(looks):
            keys = list(zip(*[frame[c] for c in by], strict=True))
            last = looks.groupby(by, sort=False).tail(1).set_index(by)
            at_last = last.reindex(keys)   # a comparison without looks (too few units) stays blank
            # every design: the looks, the boundary of the last look and the first look that crossed
            frame["looks"] = [int(n) for n in looks.groupby(by, sort=False).size().reindex(keys).fillna(0)]
            first = looks[looks["crossed"].eq(True)].groupby(by)["look"].min()
            frame["first_crossing"] = [str(first[k].date()) if k in first.index else "" for k in keys]
            frame["boundary"] = at_last["boundary"].to_numpy()
            if design.always_valid:   # the running values of the last look
                for column in ("ci_lower", "ci_upper", "relative_lower", "relative_upper", "p_value"):
                    frame[column] = np.where(at_last[column].notna(), at_last[column].to_numpy(),
                                             frame[column].to_numpy(float))
                correct_frame()
            else:
                frame["significant"] = at_last["crossed"].eq(True).to_numpy()
                # the repeated confidence interval (Jennison and Turnbull): valid at any look
                frame["rci_lower"] = frame["difference"] - frame["boundary"] * frame["se"]
                frame["rci_upper"] = frame["difference"] + frame["boundary"] * frame["se"]
                settings["planned_units"] = planned_units
    from rankwise.results import signed

    return ABResult(frame, srm, signed("ab", settings), warnings, looks, moments)


def _corrected(p_values: np.ndarray, correction: str, alpha: float) -> np.ndarray:
    """The corrected p-values of the comparisons that were made (NaN for those that were not:
    they are no members of the family)."""
    from rankwise.stats.corrections import correct

    out = np.full(len(p_values), np.nan)
    made = np.isfinite(p_values)
    out[made] = correct(p_values[made], correction, alpha)
    return out


def _not_comparable(metric: Metric, m: VariantMoments, control: str, arm: str) -> str:
    """Why ``arm`` cannot be compared with ``control`` on ``metric`` ('' when it can): an arm
    with fewer than 2 units has no variance; a ratio whose denominators are all 0 no value."""
    for variant in (control, arm):
        n = int(m.count(variant))
        if n < 2:
            return f"{variant!r} has {n} unit(s); a comparison needs at least 2 in each arm"
    for variant in (control, arm):
        with np.errstate(all="ignore"):
            value = metric.value(m, variant)
        if not math.isfinite(value):
            return f"its value in {variant!r} is {value} (every denominator 0?)"
    return ""


def _untested_row(name: str, metric: Metric, m: VariantMoments, control: str, arm: str, test: str,
                  units: Units | None = None) -> dict[str, Any]:
    """A comparison that was not made: counts and the values that exist, the rest NaN."""
    def value(variant: str) -> float:
        if int(m.count(variant)) == 0:
            return math.nan
        if isinstance(metric, Quantile):
            if units is None:
                return math.nan
            values = unit_values(metric, units, variant)[0]
            return float(np.quantile(values, metric.q)) if len(values) else math.nan
        with np.errstate(all="ignore"):
            return float(metric.value(m, variant))

    nan = math.nan
    return {"metric": name, "kind": metric.kind, "definition": metric.describe(), "control": control,
            "variant": arm, "n_control": int(m.count(control)), "n": int(m.count(arm)),
            "control_value": value(control), "value": value(arm), "difference": nan, "ci_lower": nan,
            "ci_upper": nan, "relative": nan, "relative_lower": nan, "relative_upper": nan, "p_value": nan,
            "statistic": nan, "df": nan, "se": nan, "relative_se": nan, "test": test}


def state_columns(metrics: Mapping[str, Metric]) -> tuple[list[str], list[tuple[str, str]]]:
    """The per-unit columns the metrics read from a state, and the pairs whose co-moments they
    need (each metric combines its own columns).

    >>> state_columns({"ctr": Ratio("clicks", "views")})
    (['clicks', 'views'], [('clicks', 'clicks'), ('clicks', 'views'), ('views', 'views')])
    """
    columns: list[str] = []
    pairs: list[tuple[str, str]] = []
    for metric in metrics.values():
        own = list(dict.fromkeys(metric.columns()))
        columns += own
        pairs += [(a, b) for i, a in enumerate(own) for b in own[i:]]
    return list(dict.fromkeys(columns)), list(dict.fromkeys(pairs))


def _check_state(moments: VariantMoments, columns: Sequence[str], pairs: Sequence[tuple[str, str]]) -> None:
    missing = [c for c in columns if c not in moments.columns]
    if missing:
        raise OptionError(f"the statistics have no column {missing[0]!r} (they hold {', '.join(moments.columns)})")
    for a, b in pairs:
        i, j = moments.columns.index(a), moments.columns.index(b)
        if np.isnan(moments.comoments[:, i, j]).any():
            raise OptionError(f"the statistics have no sum({a}*{b}), which the metrics need")


def _arm(metric: Metric, m: VariantMoments, variant: str, theta: float, pooled_covariate: float) -> Arm:
    value = metric.value(m, variant)
    variance = metric.unit_variance(m, variant)
    cov_ratio = metric.covariate_ratio
    if cov_ratio is not None:
        x = ratio_of_means(m, variant, *cov_ratio)
        var_x = ratio_covariance(m, variant, cov_ratio, cov_ratio)
        cov_yx = ratio_covariance(m, variant, (metric.numerator, metric.denominator), cov_ratio)
        value = value - theta * (x - pooled_covariate)
        variance = variance + theta * theta * var_x - 2 * theta * cov_yx
    return Arm(value, variance, m.count(variant))


def cuped_theta(metric: Metric, m: VariantMoments, arms: Sequence[str]) -> tuple[float, float]:
    """CUPED's ``theta = cov(Y, X) / var(X)`` over the units of ``arms`` pooled (Y the metric's
    and X the covariate's ratio linearisation), and the pooled covariate mean."""
    cov_ratio = metric.covariate_ratio
    if cov_ratio is None:
        return 0.0, 0.0
    pooled = m.pooled(arms)
    var_x = ratio_covariance(pooled, "all", cov_ratio, cov_ratio)
    cov_yx = ratio_covariance(pooled, "all", (metric.numerator, metric.denominator), cov_ratio)
    theta = 0.0 if var_x == 0 else cov_yx / var_x
    return theta, ratio_of_means(pooled, "all", *cov_ratio)


def cap_value(values: np.ndarray, spec: str | float, ignore_zeros: bool = False) -> float:
    """The cap a rule gives over every unit's values: a number as it is, ``"p99"`` the 99th
    percentile (linear interpolation, SQL's PERCENTILE_CONT, as GrowthBook computes it), of
    the non-zero values with ``ignore_zeros``.

    >>> cap_value(np.arange(101.0), "p99"), cap_value(np.array([0.0, 0.0, 4.0, 8.0]), "p50", True), cap_value([], 5)
    (99.0, 6.0, 5.0)
    """
    import re

    if isinstance(spec, (int, float)) or re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?", str(spec).strip()):
        value = float(spec)
        if not math.isfinite(value):
            raise OptionError(f"a cap must be a finite number or a percentile such as p99, got {spec!r}")
        return value
    match = re.fullmatch(r"p(\d+(?:\.\d+)?)", str(spec).strip().lower())
    if match is None or not 0 < float(match.group(1)) < 100:
        raise OptionError(f"a cap must be a number or a percentile such as p99 (p0 < p < p100), got {spec!r}")
    data = np.asarray(values, dtype=np.float64)
    if ignore_zeros:
        data = data[data != 0]
    return float(np.quantile(data, float(match.group(1)) / 100)) if len(data) else math.nan


def _capped_column(metric: Metric) -> str:
    """The per-unit column a cap applies to: the value, or a ratio's numerator."""
    return metric.numerator if isinstance(metric, Ratio) else metric.column


def capped(units: Units, metrics: Mapping[str, Metric], caps: Mapping[str, str | float],
           ignore_zeros: bool) -> tuple[Units, dict[str, Metric], dict[str, float]]:
    """The units with each capped metric's column capped (a new column per metric and cap, so
    metrics sharing a column keep their own), the metrics reading those columns, and each
    metric's cap."""
    values = dict(units.values)
    out = dict(metrics)
    applied: dict[str, float] = {}
    for name, spec in caps.items():
        metric = metrics[name]
        column = _capped_column(metric)
        cap = cap_value(units.values[column], spec, ignore_zeros)
        applied[name] = cap
        new = f"{column} capped at {spec}"
        values[new] = np.minimum(units.values[column], cap) if math.isfinite(cap) else units.values[column]
        out[name] = replace(metric, numerator=new) if isinstance(metric, Ratio) else replace(metric, column=new)
    return replace(units, values=values), out, applied


def _quantile_arm(name: str, metric: Quantile, units: Units | None, variant: str) -> Arm:
    """One arm of a quantile metric: the quantile of its units' values and gbstats' variance."""
    from rankwise.stats.quantiles import estimate_quantile

    if units is None:
        raise OptionError(f"metric {name!r} is a quantile: it needs one row per unit, not per-variant statistics")
    estimate = estimate_quantile(unit_values(metric, units, variant)[0], metric.q)
    if not estimate.estimable:
        return Arm(estimate.quantile, math.nan, estimate.n)
    return Arm(estimate.quantile, estimate.variance, estimate.n)


def _row(name: str, metric: Metric, m: VariantMoments, control: str, arm: str, test: ABTest,
         test_params: Mapping[str, Any], settings: TestSettings, units: Units | None, design: Design | None,
         design_params: Mapping[str, Any], power_target: float = 0.8) -> dict[str, Any]:
    """One comparison's row: the arms (CUPED-adjusted, or a quantile's), the test's difference
    and its own columns, the minimum detectable effect, and the sequential design's columns."""
    theta, pooled_x = cuped_theta(metric, m, [control, arm])
    test.check(name, metric)
    if isinstance(metric, Quantile):
        c, t = _quantile_arm(name, metric, units, control), _quantile_arm(name, metric, units, arm)
    else:
        c = _arm(metric, m, control, theta, pooled_x)
        t = _arm(metric, m, arm, theta, pooled_x)
    pair = Pair(name, metric, control, arm, c, t, units, m)
    d, own = test.compare(pair, settings, test_params)
    row = {"metric": name, "kind": metric.kind, "definition": metric.describe(), "control": control,
           "variant": arm, "n_control": c.n, "n": t.n, "control_value": c.mean, "value": t.mean,
           **difference_columns(d), "test": test.name, "variance_control": c.variance, "variance": t.variance}
    mde = detectable_multiplier(settings.alpha, power_target) * d.se if math.isfinite(d.se) else math.nan
    row.update(mde=mde, mde_relative=mde / abs(c.mean) if c.mean else math.nan)
    if metric.covariate_ratio is not None:
        row["theta"] = theta
    row.update(own)
    if design is not None:
        row["relative_p_value"] = math.nan   # the t or z test of the relative lift is not a sequential p
        row.update(design.at_look(c, t, d, settings.alpha, design_params))
    return row


def guardrail_columns(frame: Any, guardrails: Mapping[str, float], lower_is_better: Sequence[str],
                      alpha: float) -> Any:
    """Each guardrail row's non-inferiority test on the relative difference ``r`` with its
    standard error ``s`` (delta method) and margin ``m``: ``p = 1 - Phi((r + m) / s)`` (``r``'s
    sign flipped where lower is better), one-sided, not corrected (each guardrail is a
    decision of its own). ``guardrail`` is ``passed`` when ``p < alpha`` (no worse than the
    margin), ``failed`` when the metric is significantly worse than the control (one-sided,
    ``1 - Phi(-r / s) < alpha``), else ``inconclusive``.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"metric": ["x"], "relative": [0.01], "relative_se": [0.01]})
    >>> row = guardrail_columns(frame, {"x": 0.02}, [], 0.05).iloc[0]
    >>> round(float(row["guardrail_p"]), 6), row["guardrail"]   # 1 - Phi((0.01 + 0.02) / 0.01) = 1 - Phi(3)
    (0.00135, 'passed')
    """
    from rankwise.stats.noninferiority import non_inferiority

    frame = frame.copy()
    sign = np.where(frame["metric"].isin(list(lower_is_better)), -1.0, 1.0)
    margin = frame["metric"].map({k: float(v) for k, v in guardrails.items()})
    guarded = margin.notna().to_numpy()
    p, decision = non_inferiority((sign * frame["relative"]).to_numpy(float), frame["relative_se"].to_numpy(float),
                                  margin.to_numpy(float), alpha)
    frame["margin"] = margin
    frame["guardrail_p"] = np.where(guarded, p, np.nan)
    frame["guardrail"] = np.where(guarded, decision, "")
    return frame


def _with_cupac(units: Units, metrics: Mapping[str, Metric], features: Sequence[str],
                model: Any, warnings: list[str] | None = None) -> tuple[Units, dict[str, Metric]]:
    """Each metric with its CUPAC covariate: the cross-fitted prediction of its per-unit value
    (a ratio: of its numerator and denominator; a proportion: of the indicator) from the
    features, added to the units as ``cupac(COLUMN)``. A feature with one value for every
    unit carries nothing (its predictions would only be the folds' means, which move the
    estimate): it is left out with a warning, and with no feature left the metrics are not
    adjusted."""
    from rankwise.online.cupac import cross_fitted

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


def _sliced(comparisons: Any, labels_of: Any, dimensions: Sequence[str], units: Units,
            table: Mapping[str, Metric], warnings: list[str],
            rule: str) -> tuple[list[dict[str, Any]], list[tuple[str, str, Any]]]:
    """The rows of every slice of every dimension (``rankwise.online.slices``), and each
    slice's ``(dimension, value, unit ids)``. ``labels_of(dimension)``: each unit's label and
    how many units had several, taken by ``rule`` (said in the warning)."""
    from rankwise.online.slices import slice_values, subset

    rows = []
    members = []
    for dimension in dimensions:
        labels, conflicting = labels_of(dimension)
        blank = np.array([isinstance(v, str) and not v.strip() for v in labels], dtype=bool)
        if blank.any():   # an empty value is a missing one: no slice named ''
            from rankwise.online.slices import MISSING

            labels = np.where(blank, MISSING, labels)
            warnings.append(f"{int(blank.sum())} unit(s) have an empty {dimension!r}: they are in the slice "
                            f"{MISSING!r}")
        if conflicting:
            warnings.append(f"{conflicting} unit(s) had more than one {dimension!r}; each is in the slice of {rule}")
        for value in slice_values(labels):
            part = subset(units, labels == value)
            members.append((dimension, value, part.unit_ids))
            matrix, columns = _unit_matrix(part, table)
            moments = VariantMoments.from_codes(part.codes, matrix, part.variants, columns)
            rows += [{"dimension": dimension, "slice": value, **row}
                     for row in comparisons(moments, part, f" in {dimension}={value}")]
    return rows, members


def _warehouse_plan(table: Mapping[str, Metric], definitions: list[Definition], exposures: Any,
                    window: str | float | None,
                    features: Sequence[str]) -> tuple[list[str], list[str], list[str], float | None]:
    """What a warehouse engine sums per unit: the plain columns summed and those that are
    counts, the per-unit covariates (CUPED's, CUPAC's features), the window in seconds; the
    option combinations no engine takes refused."""
    from rankwise.online.event_rows import window_seconds

    named = {d.name for d in definitions}
    sums, counts, _ = _columns({n: m for n, m in table.items() if n not in named})
    constants = list(dict.fromkeys([*_columns(table)[2], *features]))
    if exposures is not None and (sums or counts):
        raise OptionError("with an exposure table every metric is a definition over events (count(...), "
                          "sum(...), any(...))")
    seconds = window_seconds(window)
    if seconds is not None and exposures is None:
        raise OptionError("a window counts events from each unit's first exposure: give the exposures table")
    return sums, counts, constants, seconds


def _daily_rows(data: Any, table: Mapping[str, Metric], definitions: list[Definition], unit: str, variant: str,
                event: str, timestamp: str, exposures: Any, window: str | float | None) -> Any:
    """What the daily looks read from a warehouse: one row per unit x variant x day, summed by
    the Ibis backend or DuckDB holding ``data`` (already checked by the per-unit pass, so not
    scanned for bad rows again)."""
    from rankwise.online.ibis_source import ibis_daily, is_ibis_table
    from rankwise.online.warehouse import duckdb_daily

    sums, counts, constants, seconds = _warehouse_plan(table, definitions, exposures, window, ())
    daily = ibis_daily if is_ibis_table(data) else duckdb_daily
    return daily(data, definitions, [*sums, *counts], unit, variant, event, timestamp, counts, constants=constants,
                 exposures=exposures, window=seconds, check=False)


def _duckdb_units(data: Any, table: Mapping[str, Metric], definitions: list[Definition], unit: str, variant: str,
                  event: str, variants: Sequence[str] | None, mixed: Mixed, exposures: Any,
                  window: str | float | None, timestamp: str | None, unit_rows: bool,
                  features: Sequence[str] = ()) -> tuple[Units | None, VariantMoments | None, int, list[str]]:
    """The data through DuckDB (``rankwise.online.warehouse``): the per-variant statistics
    themselves when no test or metric needs the units' rows (one row per variant comes back),
    else one row per unit; the units left out as mixed, and the join's warnings."""
    from rankwise.online.event_rows import left_out_warnings
    from rankwise.online.warehouse import duckdb_moments, duckdb_units

    sums, counts, constants, seconds = _warehouse_plan(table, definitions, exposures, window, features)
    options = {"plain_counts": counts, "variants": variants, "mixed": mixed, "exposures": exposures,
               "window": seconds, "timestamp": timestamp}
    rows_needed = unit_rows or any(isinstance(m, Quantile) for m in table.values())
    if constants:   # CUPED reads each unit's covariate beside its sums
        units, left_out = duckdb_units(data, definitions, [*sums, *counts], unit, variant, event, **options,
                                       constants=constants)
        return units, None, units.mixed, left_out_warnings(left_out)
    if not rows_needed:
        moments, mixed_units, _, left_out = duckdb_moments(data, definitions, [*sums, *counts], unit, variant, event,
                                                           _matrix_columns(table), **options)
        return None, moments, mixed_units, left_out_warnings(left_out)
    units, left_out = duckdb_units(data, definitions, [*sums, *counts], unit, variant, event, **options)
    return units, None, units.mixed, left_out_warnings(left_out)


def _ibis_units(data: Any, table: Mapping[str, Metric], definitions: list[Definition], unit: str, variant: str,
                event: str, variants: Sequence[str] | None, mixed: Mixed, exposures: Any, window: str | float | None,
                timestamp: str | None, cupac: Sequence[str]) -> tuple[Units, list[str]]:
    """The data as an Ibis table expression: the per-unit sums computed by its backend
    (``rankwise.online.ibis_source``), and the warnings of the exposure join."""
    from rankwise.online.event_rows import left_out_warnings
    from rankwise.online.ibis_source import ibis_units

    sums, counts, constants, seconds = _warehouse_plan(table, definitions, exposures, window, cupac)
    if exposures is not None and constants:
        raise OptionError("covariates (CUPED, CUPAC) with an exposure table: not yet; give the events without "
                          "--exposures, or the per-unit table")
    units, left_out = ibis_units(data, definitions, [*sums, *counts], unit, variant, event, counts, variants, mixed,
                                 constants,
                                 exposures=exposures, window=seconds, timestamp=timestamp)
    return units, left_out_warnings(left_out)


def _matrix_columns(metrics: Mapping[str, Metric]) -> list[tuple[str, str, bool]]:
    """The moment columns ``_unit_matrix`` makes, as ``(name, summed column, indicator)``."""
    out: dict[str, tuple[str, str, bool]] = {}
    for m in metrics.values():
        if isinstance(m, Proportion):
            out.setdefault(indicator(m.column), (indicator(m.column), m.column, True))
        for c in m.columns():
            if not (isinstance(m, Proportion) and c == m.numerator):
                out.setdefault(c, (c, c, False))
    return list(out.values())


def _derived_rows(data: Any, table: Mapping[str, Metric], definitions: list[Definition], unit: str, variant: str,
                  event: str, exposures: Any, window: str | float | None, timestamp: str | None,
                  plain: Sequence[str], constants: Sequence[str] = ()) -> tuple[Any, list[str]]:
    """The event log as the rows the per-unit sums read (one column per aggregation), joined
    to the exposures if given, with the per-unit covariates ``constants`` kept beside; and the
    warnings for the events left out."""
    from rankwise.data.tables import ReadPieces
    from rankwise.online.event_rows import event_rows, window_seconds, with_exposures

    seconds = window_seconds(window)
    if exposures is None:
        if seconds is not None:
            raise OptionError("a window counts events from each unit's first exposure: give the exposures table")
        keep = list(dict.fromkeys([*plain, *constants, *([timestamp] if timestamp else [])]))
        rows = event_rows(data, definitions, unit, variant, event, keep=keep)
        if timestamp is None:   # read once, piece by piece, by the per-unit sums
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


def cumulative_looks(data: Any, unit: str, variant: str, timestamp: str, metrics: Mapping[str, Metric],
                     control: str, names: Sequence[str], test: str, relative: Relative, alpha: float,
                     alternative: Alternative, mixed: Mixed, sequential: str | None,
                     planned_units: int | None, caps: Mapping[str, str | float] | None = None,
                     ignore_zeros: bool = False, lower_is_better: Sequence[str] = (), only_units: Any = None,
                     schedule: Any = None) -> Any:
    """One row per day x metric x arm: the analysis of every event up to the end of that day
    (the cumulative lift and its interval over time; with alpha spending, the boundary of
    each look, whether the z statistic crossed it and the look's repeated confidence interval
    ``rci_lower``/``rci_upper``; with an always-valid method, the running minimum p-value and each
    look's own always-valid interval, never intersected across looks: a look estimates the
    quantity of its own days, which grows when per-unit sums accumulate). ``only_units``: the ids
    (an Arrow array) of the units to analyse, a slice's; default every unit. ``schedule``: the
    looks of the whole experiment, whose information fractions a slice's alpha spending
    follows (a slice is looked at when the experiment is, at the experiment's fraction of its
    planned units). ``test`` and ``sequential`` are spelled as ``analyze`` takes them
    (``bayesian(prior_mean=0.01)``, ``msprt(mixture_effect=0.2)``); a test that reads unit rows
    is looked at by its base test."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankwise.data.tables import tables_of

    look_test, test_params = AB_TESTS.parse(test)
    if look_test.unit_rows:
        look_test, test_params = AB_TESTS.parse(look_test.base)
    design, design_params = SEQUENTIAL_DESIGNS.parse(sequential) if sequential is not None else (None, {})
    sums, counts, constants = _columns(metrics)
    columns = list(dict.fromkeys([unit, variant, timestamp, *sums, *counts, *constants]))
    pieces = tables_of(data, columns)
    for name, first, piece in pieces:   # an event without a time would belong to no look
        times = piece.column(timestamp)
        if times.null_count:
            from rankwise.data.tables import location

            at = int(np.flatnonzero(np.asarray(times.is_null().to_numpy(zero_copy_only=False)))[0])
            raise InputError("missing time; the daily looks need every event's time", field=timestamp,
                             **location(name, first, at))
    tables = [t for _, _, t in pieces]
    table = pa.concat_tables([t.cast(tables[0].schema) for t in tables]) if len(tables) > 1 else tables[0]
    if only_units is not None:
        ids = table.column(unit)
        if pa.types.is_dictionary(ids.type):
            ids = ids.dictionary_decode()
        table = table.filter(pc.is_in(ids.cast(only_units.type), value_set=only_units))
    times = table.column(timestamp)
    if pa.types.is_integer(times.type) or pa.types.is_floating(times.type):   # seconds since the epoch
        days = pd.to_datetime(times.to_pandas(), unit="s").dt.floor("D").to_numpy()
    else:
        local = pd.to_datetime(times.to_pandas())
        if local.dt.tz is not None:   # the days of the times' own zone, as wall-clock dates
            local = local.dt.tz_localize(None)
        days = local.dt.floor("D").to_numpy()
    days = days.astype("datetime64[us]")   # one resolution whichever engine or reader gave the times
    looks = np.unique(days)
    rows = []
    for day in looks:
        upto = table.filter(pa.array(days <= day))
        units = aggregate_units(upto, unit, variant, sums=sums, counts=counts, constants=constants,
                                variants=list(names), mixed=mixed)
        day_metrics = dict(metrics)
        if caps:   # the cap of each look is taken over that look's units
            units, day_metrics, _ = capped(units, metrics, caps, ignore_zeros)
        matrix, cols = _unit_matrix(units, day_metrics)
        m = VariantMoments.from_codes(units.codes, matrix, units.variants, cols)
        for name, metric in day_metrics.items():
            settings = TestSettings(relative, alpha, alternative, 0, 0, name in lower_is_better)
            for arm in names:
                if arm == control or m.count(arm) < 2 or m.count(control) < 2:
                    continue
                row = _row(name, metric, m, control, arm, look_test, test_params, settings, units,
                           design if design is not None and design.always_valid else None, design_params)
                row["look"] = pd.Timestamp(day)
                rows.append(row)
    frame = pd.DataFrame(rows)
    if design is not None and design.always_valid and len(frame):
        # the running minimum p-value is valid under the null of no difference at every look; the
        # intervals are not intersected: each look estimates its own quantity (a per-unit sum
        # grows day by day), and each look's always-valid interval covers it on its own
        frame["p_value"] = frame.groupby(["metric", "variant"], sort=False)["p_value"].transform("cummin")
        # crossed once the look's |z| reached its boundary (the running p-value below alpha)
        reached = (frame["statistic"].abs() >= frame["boundary"]).astype(int)
        frame["crossed"] = reached.groupby([frame["metric"], frame["variant"]], sort=False).cummax().astype(bool)
    if design is not None and not design.always_valid and len(frame):
        if planned_units is None:
            raise OptionError(f"sequential={design.name!r} needs the planned number of units (planned_units, "
                              "--planned-units) to know the information fraction of each look")
        out = []
        for _, group in frame.groupby(["metric", "variant"], sort=False):
            group = group.sort_values("look").copy()
            fractions = ((group["n"] + group["n_control"]) / planned_units).to_numpy()
            if schedule is not None:
                whole = schedule.set_index(["metric", "variant", "look"])["fraction"]
                at = whole.reindex(list(zip(group["metric"], group["variant"], group["look"], strict=True)))
                fractions = np.where(at.notna(), at.to_numpy(float), fractions)
            fractions = np.maximum.accumulate(fractions)
            keep = np.concatenate(([True], np.diff(fractions) > 0))
            bounds = np.full(len(group), np.nan)
            bounds[keep] = boundaries(fractions[keep], alpha, design.name)
            group["fraction"] = fractions
            group["boundary"] = pd.Series(bounds, index=group.index).ffill().to_numpy()
            group["crossed"] = np.maximum.accumulate(np.abs(group["statistic"].to_numpy()) >= group["boundary"])
            # the repeated confidence interval of each look: its own estimate, the look's boundary
            # (on the test's own scale: a t test's boundary is the t quantile of the same tail)
            from scipy.special import ndtr, stdtrit

            tail = ndtr(group["boundary"].to_numpy(float))
            df = group["df"].to_numpy(float) if "df" in group else np.full(len(group), np.inf)
            critical = np.where(np.isfinite(df), stdtrit(np.where(np.isfinite(df), df, 1.0), tail),
                                group["boundary"].to_numpy(float))
            group["rci_lower"] = group["difference"] - critical * group["se"]
            group["rci_upper"] = group["difference"] + critical * group["se"]
            out.append(group)
        frame = pd.concat(out)
    return frame

P_VALUES = ("absolute", "relative")
"""What ``p_value`` (and its correction) tests: the absolute difference, or the relative lift
(GrowthBook's default display, equal to gbstats' relative ``TwoSidedTTest``)."""
