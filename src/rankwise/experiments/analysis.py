"""A/B analysis: every metric in every treatment arm against the control, with intervals,
p-values corrected across arms x metrics, CUPED, sample ratio mismatch and sequential tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.capping import capped
from rankwise.experiments.compare import compare_all
from rankwise.experiments.corrections import correct, decided, guardrail_columns, sliced_rows
from rankwise.experiments.definitions import Definition
from rankwise.experiments.events import Mixed, Units
from rankwise.experiments.looks import cumulative_looks, sequential_columns
from rankwise.experiments.metrics import Metric, is_event_quantile
from rankwise.experiments.moments import VariantMoments
from rankwise.experiments.settings import P_VALUES, ABSettings, Adjustments, DataSource, ExperimentDesign, Plan, plan
from rankwise.experiments.source import Measured, measure
from rankwise.stats.power import detectable_multiplier
from rankwise.stats.srm import SRM, srm_test
from rankwise.stats.twosample import Alternative, Relative

if TYPE_CHECKING:
    import pandas as pd

    from rankwise.experiments.warehouse import AggregationEngine

__all__ = ["P_VALUES", "ABResult", "analyze", "capped", "cumulative_looks", "guardrail_columns", "run"]


@dataclass
class ABResult:
    """The analysis: ``table`` (one row per metric x treatment arm), ``srm``, ``warnings``,
    the ``settings`` that produced it, and ``looks`` (one row per metric x arm x look) when
    the data had timestamps; ``statistics``: the per-variant sufficient statistics analysed
    (``rankwise.experiments.statistics_table`` writes them as a table)."""

    table: Any
    srm: SRM
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    looks: Any = None
    statistics: VariantMoments | None = None
    slice_srm: Any = None
    """One row per slice (``dimension``, ``slice``): its units per variant, the units the design
    weights expect, the chi-square statistic and p-value, and whether it flags a mismatch."""

    def units_needed(self, relative_effect: float, power: float = 0.8) -> pd.DataFrame:
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
                "settings": self.settings, "warnings": list(self.warnings),
                **({"slice_srm": json_plain(self.slice_srm)} if self.slice_srm is not None else {})}


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
            p_value: str = "absolute", cap_convention: str = "value", lookback: str | float | None = None,
            until: str | float | None = None, settings: ABSettings | None = None) -> ABResult:
    """Analyse an experiment.

    ``data``: event logs or per-unit rows (files, a directory, a DataFrame, an Arrow table, a
    dict of columns; values summed per unit), or per-variant sufficient statistics: a
    ``VariantMoments``, or with ``statistics=True`` tables of ``n``, ``sum(x)`` and
    ``sum(x*y)`` per variant (see ``rankwise.experiments.statistics_table``). ``metrics``:
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
    purchase)``, ``buyers=any(purchase)`` (see ``rankwise.experiments.definitions``).
    ``exposures``: a table of (``unit``, ``variant``, ``timestamp``) exposures; each unit's
    variant is that of its first exposure and its events count from then, for ``window``
    (``7d``, ``36h``, seconds) if given (see ``rankwise.experiments.event_rows``). ``engine``:
    memory (Arrow in this process) or duckdb (per-unit sums computed by DuckDB, out of core;
    ``data`` may then be a ``rankwise.experiments.warehouse.DuckDBSource``; see that module).
    ``caps``: ``{metric name: cap}``, each unit's value (a ratio's numerator) capped at a
    number or at a percentile of every unit's value (``"p99"``; ``ignore_zeros`` leaves units
    at 0 out of that percentile), as GrowthBook caps metrics; ``cap_convention`` (value or
    growthbook) says whether the cap also reaches CUPED covariates and ratio denominators
    (``rankwise.experiments.capping``). ``slices``: columns of the data
    (of the exposures, if given) whose values split the units; each slice is analysed too, in
    rows with ``dimension`` and ``slice`` (``all`` for the whole experiment), and
    ``correction_scope`` (slice, metric or all) says which p-values are corrected together
    (see ``rankwise.experiments.slices``). ``guardrails``: ``{metric: margin}``, a non-inferiority
    test of each arm: is the metric no worse than ``margin`` (relative: 0.02 is 2%) below the
    control (above, for the metrics in ``lower_is_better``)? See ``guardrail_columns``.
    ``power``: the power of the minimum detectable effect in each row (``mde``, ``mde_relative``:
    the difference the data would detect at ``alpha`` with that power, from its own variance);
    ``ABResult.units_needed`` plans the units to detect a given change. ``cupac``:
    pre-experiment feature columns (one value per unit) from which ``cupac_model`` (``linear``
    or a scikit-learn-style estimator) predicts each metric's values, cross-fitted; the
    prediction is the metric's CUPED covariate (``rankwise.experiments.cupac``). ``lookback``
    and ``until``: with exposures, only the events of the analysis' last days count, the analysis
    ending ``until`` (default the latest event). ``settings``: the whole request as an
    ``ABSettings`` (``DataSource``, ``ExperimentDesign``, ``Adjustments``), read instead of the
    keywords: ``analyze(data, metrics=[...], settings=ABSettings(...))``.

    >>> data = {"user": ["a", "b", "c", "d", "e", "f"], "arm": ["A", "A", "A", "B", "B", "B"],
    ...         "views": [1, 2, 3, 2, 3, 4]}
    >>> r = analyze(data, unit="user", variant="arm", metrics=["views"], test="student")
    >>> row = r.table.iloc[0]
    >>> float(row["difference"]), round(float(row["p_value"]), 4)   # t = 1 / sqrt(2/3), 4 df
    (1.0, 0.2879)
    """

    if settings is not None:   # the whole request as settings objects: the keywords are not read
        return run(data, plan(metrics, settings))
    settings = ABSettings(
        DataSource(unit, variant, variants, event, exposures, window, timestamp, engine, statistics, mixed,
                   lookback=lookback, until=until),
        ExperimentDesign(control, test, sequential, planned_units, alpha, alternative, relative, p_value, correction,
                         correction_scope, weights, resamples, seed, power),
        Adjustments(dict(covariates or {}), tuple(cupac), cupac_model, dict(caps or {}), ignore_zeros, tuple(slices),
                    dict(guardrails or {}), tuple(lower_is_better), cap_convention=cap_convention))
    return run(data, plan(metrics, settings, tuning=tuning, mixture_effect=mixture_effect))


def run(data: Any, plan: Plan) -> ABResult:
    """The analysis of ``data`` as ``plan`` says (``analyze`` builds the plan from its keywords,
    ``rankwise ab`` from its options), stage by stage: the source to per-variant statistics
    (``ab_source.measure``), the sample-ratio check, the comparisons (``ab_compare``), the slices,
    the corrections and guardrails (``ab_corrections``), the daily looks (``ab_looks``).

    >>> from rankwise.experiments.settings import ABSettings, ExperimentDesign, plan
    >>> data = {"unit": list(range(8)), "variant": ["A"] * 4 + ["B"] * 4, "x": [1, 2, 3, 4, 2, 3, 4, 5]}
    >>> r = run(data, plan(["x"], ABSettings(design=ExperimentDesign(test="z"))))
    >>> float(r.table.iloc[0]["difference"]), r.settings["test"]
    (1.0, 'z')
    """
    measured = measure(data, plan)
    warnings, moments = measured.warnings, measured.moments
    arms = list(plan.source.variants) if plan.source.variants is not None else moments.variants
    if len(arms) < 2:
        raise OptionError(f"the data has one variant ({', '.join(map(repr, arms))}): an A/B analysis compares at "
                          f"least two (is --variant the right column?)")
    control = plan.design.control if plan.design.control is not None else arms[0]
    if control not in moments.variants:
        raise OptionError(f"control {control!r} is not a variant of the data ({', '.join(moments.variants)})")
    srm = srm_test([int(moments.n[moments.variants.index(v)]) for v in arms], plan.design.weights)
    if srm.mismatch:
        warnings.append(srm.message())

    slice_srm: list[dict[str, Any]] = []

    def comparisons(moments: VariantMoments, units: Units | None,
                    where: tuple[str, str] | None = None) -> list[dict[str, Any]]:
        if where is None:
            return compare_all(measured.metrics, moments, units, plan, control, arms, warnings)
        slice_srm.append(_slice_srm(moments, arms, plan, where, warnings))
        return compare_all(measured.metrics, moments, units, plan, control, arms, warnings,
                           f" in {where[0]}={where[1]}")

    rows = comparisons(moments, measured.units)
    slice_units: list[tuple[str, str, Any]] = []
    if plan.slices:
        slice_rows, slice_units = _slices(data, plan, measured, comparisons)
        rows = [{"dimension": "", "slice": "all", **row} for row in rows] + slice_rows
    frame = decided(rows, plan)
    settings = result_settings(measured.plan or plan, control, measured.caps)
    looks = None
    if plan.daily_looks:
        looks = _looks(measured.looks_data, plan, control, arms, slice_units)
        whole_only = [name for name, m in plan.metrics.items() if is_event_quantile(m)]
        if whole_only:
            warnings.append(f"{', '.join(whole_only)}: a per-event quantile is computed over the whole experiment, "
                            "not per daily look")
        if plan.sequential is not None and len(looks):
            by = ["dimension", "slice", "metric", "variant"] if plan.slices else ["metric", "variant"]
            if sequential_columns(frame, looks, plan, by):
                correct(frame, plan)
            if plan.spending:
                settings["planned_units"] = plan.design.planned_units
    from rankwise.results import signed

    return ABResult(frame, srm, signed("ab", settings), warnings, looks, moments, _srm_table(slice_srm))


def _slice_srm(moments: VariantMoments, arms: list[str], plan: Plan, where: tuple[str, str],
               warnings: list[str]) -> dict[str, Any]:
    """One slice's sample-ratio check against the design weights (GrowthBook's balance check
    per dimension value); a mismatch is a warning naming the slice."""
    check = srm_test([int(moments.count(v)) if v in moments.variants else 0 for v in arms], plan.design.weights)
    if check.mismatch:
        warnings.append(f"in {where[0]}={where[1]}: {check.message()}")
    return {"dimension": where[0], "slice": where[1], "units": list(check.observed), "expected": list(check.expected),
            "statistic": check.statistic, "p_value": check.p_value, "mismatch": check.mismatch}


def _srm_table(rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    """The slices' sample-ratio checks as a table (None without slices)."""
    if not rows:
        return None
    import pandas as pd

    return pd.DataFrame(rows)


def _slices(data: Any, plan: Plan, measured: Measured,
            comparisons: Any) -> tuple[list[dict[str, Any]], list[tuple[str, str, Any]]]:
    """Every slice's rows, and each slice's units; a unit's label is its first row's (in a
    warehouse, which keeps no row order: its lowest value)."""
    from rankwise.experiments.ibis_source import aggregated_where, is_ibis_table

    units, source = measured.units, plan.source
    assert units is not None   # refused for per-variant statistics
    labelled = source.exposures if source.exposures is not None else data
    if aggregated_where(data, source.engine) != "memory":
        from rankwise.experiments.ibis_source import ibis_labels
        from rankwise.experiments.slices import labels_in_order
        from rankwise.experiments.warehouse import duckdb_labels

        warehouse_labels = ibis_labels if is_ibis_table(labelled) else duckdb_labels
        return sliced_rows(comparisons,
                           lambda dimension: labels_in_order(warehouse_labels(labelled, source.unit, dimension), units),
                           plan.slices, units, measured.metrics, measured.warnings, "its lowest value")
    from rankwise.experiments.slices import unit_labels

    return sliced_rows(comparisons, lambda dimension: unit_labels(labelled, source.unit, dimension, units),
                       plan.slices, units, measured.metrics, measured.warnings, "its first row")


def _looks(looks_data: Any, plan: Plan, control: str, arms: list[str],
           slice_units: list[tuple[str, str, Any]]) -> pd.DataFrame:
    """The daily looks of the whole experiment and of every slice (a slice's alpha spending
    follows the experiment's information fractions)."""
    import pandas as pd

    looks = cumulative_looks(looks_data, plan, control, arms)
    if not plan.slices:
        return looks
    parts = [looks.assign(dimension="", slice="all")]
    for dimension, value, ids in slice_units:
        parts.append(cumulative_looks(looks_data, plan, control, arms, ids, looks if plan.spending else None).assign(
            dimension=dimension, slice=value))
    looks = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else parts[0]
    return looks[["dimension", "slice", *[c for c in looks.columns if c not in ("dimension", "slice")]]]


def result_settings(plan: Plan, control: str, caps: Mapping[str, float]) -> dict[str, Any]:
    """The settings a result records (and signs): every choice that changes a number."""
    source, design, adjust = plan.source, plan.design, plan.adjustments
    settings: dict[str, Any] = {
        "unit": source.unit, "variant": source.variant, "test": plan.test.name, "relative": design.relative,
        "alpha": design.alpha, "correction": plan.correction, "alternative": design.alternative, "control": control,
        "sequential": plan.sequential.name if plan.sequential is not None else None,
        "weights": list(design.weights) if design.weights is not None else None,
        "covariates": dict(adjust.covariates), "mixed": source.mixed, "p_value": design.p_value}
    if plan.definitions:
        settings.update(event=source.event,
                        definitions={d.name: d.text().partition(" = ")[2] for d in plan.definitions})
    if source.exposures is not None:
        settings.update(exposures=True, window=source.window)
        if plan.window is not None:
            settings.update(plan.window.settings())
        if adjust.pre_period is not None:
            settings["pre_period"] = adjust.pre_period
        if source.lookback is not None or source.until is not None:
            settings.update(lookback=source.lookback, until=source.until)
    if plan.test.resampled:
        settings.update(resamples=design.resamples, seed=design.seed)
    if plan.test.posterior:
        settings["prior"] = dict(plan.test_params)
    if plan.slices:
        settings.update(slices=list(plan.slices), correction_scope=plan.correction_scope)
    if plan.cupac:
        model = adjust.cupac_model
        settings.update(cupac=list(plan.cupac), cupac_model=model if isinstance(model, str) else type(model).__name__)
    if adjust.guardrails:
        settings.update(guardrails={k: float(v) for k, v in adjust.guardrails.items()},
                        lower_is_better=list(adjust.lower_is_better))
    if adjust.caps:
        settings.update(caps=dict(caps), cap_rules={name: str(spec) for name, spec in adjust.caps.items()},
                        ignore_zeros=adjust.ignore_zeros, cap_convention=adjust.cap_convention)
    settings.update(plan.sequential_params)
    return settings
