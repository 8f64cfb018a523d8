"""The comparison stage of an A/B analysis: each metric's arms (CUPED-adjusted, or a quantile's),
compared by the chosen test and wrapped by the sequential design, one row per metric x arm."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.ab_tests import (
    AB_TESTS,
    ABTest,
    NotComparable,
    Pair,
    TestSettings,
    difference_columns,
    unit_values,
)
from rankwise.experiments.events import Units
from rankwise.experiments.metrics import Metric, Quantile, ratio_covariance, ratio_of_means
from rankwise.experiments.moments import VariantMoments
from rankwise.stats.power import detectable_multiplier
from rankwise.stats.sequential import Design
from rankwise.stats.twosample import Arm

if TYPE_CHECKING:
    from rankwise.experiments.settings import Plan


def not_comparable(metric: Metric, m: VariantMoments, control: str, arm: str) -> str:
    """Why ``arm`` cannot be compared with ``control`` on ``metric`` ('' when it can): an arm
    with fewer than 2 units has no variance; a ratio whose denominators are all 0 no value."""
    for variant in (control, arm):
        n = int(m.count(variant))
        if n < 2:
            return f"{variant!r} has {n} unit(s); a comparison needs at least 2 in each arm"
    for variant in (control, arm):
        if isinstance(metric, Quantile):   # its value comes from the units' (or the events') values
            continue
        with np.errstate(all="ignore"):
            value = metric.value(m, variant)
        if not math.isfinite(value):
            return f"its value in {variant!r} is {value} (every denominator 0?)"
    return ""


def untested_row(name: str, metric: Metric, m: VariantMoments, control: str, arm: str, test: str,
                  units: Units | None = None) -> dict[str, Any]:
    """A comparison that was not made: counts and the values that exist, the rest NaN."""
    def value(variant: str) -> float:
        if int(m.count(variant)) == 0:
            return math.nan
        if isinstance(metric, Quantile):
            if units is None:
                return math.nan
            if metric.per_event:
                found = units.event_quantiles.get(metric.describe())
                return found[units.variants.index(variant)].quantile if found else math.nan
            values = metric.counted(unit_values(metric, units, variant)[0])
            return float(np.quantile(values, metric.q)) if len(values) else math.nan
        with np.errstate(all="ignore"):
            return float(metric.value(m, variant))

    nan = math.nan
    return {"metric": name, "kind": metric.kind, "definition": metric.describe(), "control": control,
            "variant": arm, "n_control": int(m.count(control)), "n": int(m.count(arm)),
            "control_value": value(control), "value": value(arm), "difference": nan, "ci_lower": nan,
            "ci_upper": nan, "relative": nan, "relative_lower": nan, "relative_upper": nan, "p_value": nan,
            "statistic": nan, "df": nan, "se": nan, "relative_se": nan, "test": test}


def cuped_arm(metric: Metric, m: VariantMoments, variant: str, theta: float, pooled_covariate: float) -> Arm:
    value = metric.value(m, variant)
    variance = metric.unit_variance(m, variant)
    cov_ratio = metric.covariate_ratio
    if cov_ratio is not None:
        x = ratio_of_means(m, variant, *cov_ratio)
        var_x = metric.covariate_variance(m, variant)
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
    var_x = metric.covariate_variance(pooled, "all")
    cov_yx = ratio_covariance(pooled, "all", (metric.numerator, metric.denominator), cov_ratio)
    theta = 0.0 if var_x == 0 else cov_yx / var_x
    return theta, ratio_of_means(pooled, "all", *cov_ratio)


def quantile_arm(name: str, metric: Quantile, units: Units | None, variant: str) -> Arm:
    """One arm of a quantile metric: the quantile of its units' values and gbstats' variance."""
    from rankwise.stats.quantiles import estimate_quantile

    if units is None:
        raise OptionError(f"metric {name!r} is a quantile: it needs one row per unit, not per-variant statistics")
    if metric.per_event:
        found = units.event_quantiles.get(metric.describe())
        if found is None:
            raise NotComparable("a per-event quantile is computed over the whole experiment's events, not per "
                                "look or slice")
        event = found[units.variants.index(variant)]
        return Arm(event.quantile, event.variance if event.estimable else math.nan, event.n)
    estimate = estimate_quantile(metric.counted(unit_values(metric, units, variant)[0]), metric.q)
    if not estimate.estimable:
        return Arm(estimate.quantile, math.nan, estimate.n)
    return Arm(estimate.quantile, estimate.variance, estimate.n)


@dataclass(frozen=True)
class Comparing:
    """How a comparison is made: the test with its parameters, the sequential design wrapping it
    at one look (an always-valid one; None otherwise) with its parameters, and the power of the
    minimum detectable effect."""

    test: ABTest
    test_params: Mapping[str, Any]
    sequential: Design | None = None
    sequential_params: Mapping[str, Any] = field(default_factory=dict)
    power: float = 0.8

    @classmethod
    def of(cls, plan: Plan, at_looks: bool = False) -> Comparing:
        """The plan's way of comparing; ``at_looks``: as each daily look is (a test that reads
        unit rows by its base test, only an always-valid design at one look)."""
        test, params = plan.test, plan.test_params
        if at_looks and test.unit_rows:
            test, params = AB_TESTS.parse(test.base)
        sequential = plan.sequential
        if at_looks and sequential is not None and not sequential.always_valid:
            sequential = None
        return cls(test, params, sequential, plan.sequential_params if sequential is not None else {},
                   plan.design.power)


def comparison_row(name: str, metric: Metric, m: VariantMoments, control: str, arm: str, units: Units | None,
                   settings: TestSettings, how: Comparing) -> dict[str, Any]:
    """One comparison's row: the arms (CUPED-adjusted, or a quantile's), the test's difference
    and its own columns, the minimum detectable effect, and the sequential design's columns."""
    test, design = how.test, how.sequential
    theta, pooled_x = cuped_theta(metric, m, [control, arm])
    if isinstance(metric, Quantile):
        c, t = quantile_arm(name, metric, units, control), quantile_arm(name, metric, units, arm)
    else:
        c = cuped_arm(metric, m, control, theta, pooled_x)
        t = cuped_arm(metric, m, arm, theta, pooled_x)
    pair = Pair(name, metric, control, arm, c, t, units, m)
    d, own = test.compare(pair, settings, how.test_params)
    row = {"metric": name, "kind": metric.kind, "definition": metric.describe(), "control": control,
           "variant": arm, "n_control": c.n, "n": t.n, "control_value": c.mean, "value": t.mean,
           **difference_columns(d), "test": test.name, "variance_control": c.variance, "variance": t.variance}
    mde = detectable_multiplier(settings.alpha, how.power) * d.se if math.isfinite(d.se) else math.nan
    row.update(mde=mde, mde_relative=mde / abs(c.mean) if c.mean else math.nan)
    if metric.covariate_ratio is not None:
        row["theta"] = theta
    row.update(own)
    if design is not None:
        row["relative_p_value"] = math.nan   # the t or z test of the relative lift is not a sequential p
        row.update(design.at_look(c, t, d, settings.alpha, how.sequential_params))
    return row


def compare_all(metrics: Mapping[str, Metric], moments: VariantMoments, units: Units | None, plan: Plan,
                control: str, arms: Sequence[str], warnings: list[str], where: str = "") -> list[dict[str, Any]]:
    """Every metric in every arm but the control compared with the control: one row each. A
    comparison that cannot be made (too few units, no value, a non-finite difference) keeps its
    counts and values, the rest blank, and says why in ``warnings`` (``where``: the slice)."""
    from rankwise.progress import tracked

    how = Comparing.of(plan)
    rows = []
    for name, metric in tracked(list(metrics.items()), f"analysing metrics{where}"):
        for arm in arms:
            if arm == control:
                continue
            problem = not_comparable(metric, moments, control, arm)
            try:
                row = None if problem else comparison_row(name, metric, moments, control, arm, units,
                                                          plan.test_settings(name), how)
            except NotComparable as reason:
                row, problem = None, str(reason)
            if row is not None and not (math.isfinite(row["difference"]) and math.isfinite(row["se"])):
                problem = "its difference or standard error is not a finite number"
            if problem:
                warnings.append(f"{name}, {arm} against {control}{where}: not compared: {problem}")
                row = untested_row(name, metric, moments, control, arm, plan.test.name, units)
            assert row is not None
            rows.append(row)
    return rows
