"""Two-sample inference from summary statistics (the tests of every A/B analysis, the
simulated A/B tests and the power calculations read their distributions from here): the difference of a metric between a
treatment arm and the control, absolute and relative, its interval and p-value.

Tests (``test=``):

- ``welch``: t with Welch-Satterthwaite degrees of freedom (unequal variances; the default).
- ``student``: t with the pooled variance, ``n_t + n_c - 2`` degrees of freedom.
- ``z``: normal, unpooled standard error (the unpooled two-proportion z for proportions).
- ``z-pooled``: the pooled two-proportion z-test (statsmodels' ``proportions_ztest``); the
  p-value uses the pooled proportion under the null, the interval the unpooled error.

Relative difference ``m_t / m_c - 1`` (``relative=``):

- ``delta``: delta method on the ratio, ``se^2 = v_t / (n_t m_c^2) + m_t^2 v_c / (n_c m_c^4)``
  (gbstats), interval ``rel +/- q se`` with the absolute test's distribution.
- ``log``: delta method on ``log(m_t / m_c)`` (tea-tasting): interval
  ``(m_t / m_c) exp(+/- q se_log) - 1``, ``se_log^2 = v_t / (n_t m_t^2) + v_c / (n_c m_c^2)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from rankwise.errors import OptionError
from rankwise.params import Declared, Registry
from rankwise.stats.distributions import NORMAL, Normal, StudentT
from rankwise.stats.distributions import distribution as _distribution

Relative = Literal["delta", "log"]
"""How a relative difference's interval is formed: the delta method or on the log scale."""
RELATIVE: tuple[Relative, ...] = get_args(Relative)
Alternative = Literal["two-sided", "greater", "less"]
"""The alternative hypothesis: the treatment differs from, is above, or is below the control."""
ALTERNATIVES: tuple[Alternative, ...] = get_args(Alternative)


@dataclass(frozen=True)
class Arm:
    """One arm's estimate of a metric: value ``mean``, per-unit variance ``variance`` of the
    metric's linearisation, ``n`` units."""

    mean: float
    variance: float
    n: int


@dataclass(frozen=True)
class Difference:
    """Treatment minus control: absolute and relative difference with intervals, p-value,
    test statistic and degrees of freedom (inf for normal tests)."""

    difference: float
    ci_lower: float
    ci_upper: float
    relative: float
    relative_lower: float
    relative_upper: float
    p_value: float
    statistic: float
    df: float
    se: float
    relative_se: float = math.nan
    """Delta-method standard error of the relative difference."""
    relative_p_value: float = math.nan
    """The p-value of the relative difference: its estimate over its delta-method standard
    error, against the same distribution and alternative as ``p_value`` (GrowthBook's default
    display; equal to gbstats' ``TwoSidedTTest`` with ``difference_type="relative"``)."""


def welch_df(control: Arm, treatment: Arm) -> float:
    """Welch-Satterthwaite degrees of freedom.

    >>> round(welch_df(Arm(0, 1.0, 10), Arm(0, 4.0, 10)), 4)   # (0.1 + 0.4)^2 / (0.01 / 9 + 0.16 / 9)
    13.2353
    """
    a = control.variance / control.n
    b = treatment.variance / treatment.n
    denominator = (a * a / (control.n - 1) if control.n > 1 else math.inf) \
        + (b * b / (treatment.n - 1) if treatment.n > 1 else math.inf)
    if denominator == 0 and (a > 0 or b > 0):   # variances near 1e-308 square to 0: the same ratio, rescaled
        scale = max(a, b)
        a, b = a / scale, b / scale
        denominator = (a * a / (control.n - 1) if control.n > 1 else math.inf) \
            + (b * b / (treatment.n - 1) if treatment.n > 1 else math.inf)
    if denominator == 0 or math.isnan(denominator):  # no variance in either arm
        return math.nan
    return (a + b) ** 2 / denominator


def compare_arms(control: Arm, treatment: Arm, test: str = "welch", relative: Relative = "delta",
                 alpha: float = 0.05, alternative: Alternative = "two-sided") -> Difference:
    """Difference of ``treatment`` against ``control`` under ``test``.

    >>> d = compare_arms(Arm(10.0, 4.0, 100), Arm(11.0, 4.0, 100), test="z")
    >>> round(d.difference, 6), round(d.statistic, 4), round(d.ci_lower, 4)   # se = sqrt(0.04 + 0.04)
    (1.0, 3.5355, 0.4456)
    >>> round(d.relative / d.relative_se, 4), round(d.relative_p_value, 6)   # 0.1 / sqrt(0.0004 + 0.000484)
    (3.3634, 0.00077)
    """
    if relative not in RELATIVE:
        raise OptionError(f"unknown relative interval {relative!r}; expected one of {', '.join(RELATIVE)}")
    if alternative not in ALTERNATIVES:
        raise OptionError(f"alternative must be two-sided, greater or less, got {alternative!r}")
    diff = treatment.mean - control.mean
    scale = TWO_SAMPLE_TESTS.get(test).target(control, treatment)
    se, df, null_se = scale.se, scale.df, scale.null_se
    dist = _distribution(df)
    statistic = diff / null_se if null_se > 0 else math.copysign(math.inf, diff) if diff else math.nan
    p_value = _p_value(dist, statistic, alternative)
    lower, upper = _interval(dist, diff, se, alpha, alternative)
    rel, rel_lower, rel_upper = relative_interval(control, treatment, dist, relative, alpha, alternative)
    rel_se = relative_se(control, treatment)
    rel_statistic = rel / rel_se if rel_se > 0 else math.copysign(math.inf, rel) if rel else math.nan
    return Difference(diff, lower, upper, rel, rel_lower, rel_upper, p_value, statistic, df, se, rel_se,
                      _p_value(dist, rel_statistic, alternative) if math.isfinite(rel) else math.nan)


def mann_whitney_p(control: Any, treatment: Any, alternative: Alternative = "two-sided") -> float:
    """The p-value of the Mann-Whitney U test of ``treatment`` against ``control`` values
    (``greater``: the treatment's values tend to be larger), scipy's with its tie correction.

    >>> round(mann_whitney_p([1, 2, 3, 4], [5, 6, 7, 8]), 6)   # the exact two-sided p of U = 16 of 16
    0.028571
    """
    from scipy import stats

    return float(stats.mannwhitneyu(treatment, control, alternative=alternative).pvalue)


def relative_se(control: Arm, treatment: Arm) -> float:
    """Delta-method standard error of ``m_t / m_c - 1``:
    ``sqrt(v_t / (n_t m_c^2) + m_t^2 v_c / (n_c m_c^4))``.

    >>> round(relative_se(Arm(10.0, 4.0, 100), Arm(11.0, 4.0, 100)), 6)   # sqrt(0.0004 + 0.000484)
    0.029732
    """
    if control.mean == 0:
        return math.nan
    try:
        return math.sqrt(treatment.variance / (treatment.n * control.mean ** 2)
                         + treatment.mean ** 2 * control.variance / (control.n * control.mean ** 4))
    except (OverflowError, ZeroDivisionError):
        pass
    try:   # the same as (v_t / n_t + r^2 v_c / n_c) / m_c^2, r = m_t / m_c: no m_c^4 to underflow or overflow
        ratio = treatment.mean / control.mean
        return math.sqrt(treatment.variance / treatment.n + ratio * ratio * control.variance / control.n) \
            / abs(control.mean)
    except (OverflowError, ZeroDivisionError):   # values near 1e308 or 1e-308: not compared, not a crash
        return math.inf


def _p_value(dist: Normal | StudentT, statistic: float, alternative: Alternative) -> float:
    if math.isnan(statistic):
        return math.nan
    if alternative == "greater":
        return float(dist.sf(statistic))
    if alternative == "less":
        return float(dist.cdf(statistic))
    tail = float(dist.sf(abs(statistic)))
    return math.nan if math.isnan(tail) else min(1.0, 2 * tail)   # min(1, nan) would say 1


def _interval(dist: Normal | StudentT, estimate: float, se: float, alpha: float,
              alternative: Alternative) -> tuple[float, float]:
    if alternative == "greater":
        return estimate - float(dist.ppf(1 - alpha)) * se, math.inf
    if alternative == "less":
        return -math.inf, estimate + float(dist.ppf(1 - alpha)) * se
    half = float(dist.ppf(1 - alpha / 2)) * se
    return estimate - half, estimate + half


def relative_interval(control: Arm, treatment: Arm, dist: Normal | StudentT, method: str = "delta", alpha: float = 0.05,
                      alternative: Alternative = "two-sided") -> tuple[float, float, float]:
    """``m_t / m_c - 1`` and its interval (``delta`` or ``log``, see the module)."""
    if control.mean == 0:
        return math.nan, math.nan, math.nan
    ratio = treatment.mean / control.mean
    if method == "delta":
        lower, upper = _interval(dist, ratio - 1, relative_se(control, treatment), alpha, alternative)
        return ratio - 1, lower, upper
    if treatment.mean == 0:
        return ratio - 1, math.nan, math.nan
    try:
        log_control = Arm(1.0, control.variance / control.mean ** 2, control.n)
        log_treatment = Arm(1.0, treatment.variance / treatment.mean ** 2, treatment.n)
        se_log = math.sqrt(log_control.variance / control.n + log_treatment.variance / treatment.n)
    except (OverflowError, ZeroDivisionError):   # means near 1e-308: not compared, not a crash
        return ratio - 1, math.nan, math.nan
    log_dist = _distribution(welch_df(log_control, log_treatment)) if not _is_normal(dist) else dist
    lower, upper = _interval(log_dist, 0.0, se_log, alpha, alternative)
    return ratio - 1, ratio * math.exp(lower) - 1, ratio * math.exp(upper) - 1


def _is_normal(dist: Normal | StudentT) -> bool:
    return dist is NORMAL


def welch_arrays(mean_a: Any, var_a: Any, n_a: Any, mean_b: Any, var_b: Any, n_b: Any,
                 alpha: float = 0.05) -> tuple[Any, Any]:
    """Welch's test over arrays of summary statistics (one comparison per element): the
    two-sided p-value and the half-width of the ``1 - alpha`` interval of ``mean_b - mean_a``,
    degrees of freedom floored at 1; p = 1 where neither arm varies.

    >>> p, half = welch_arrays(np.array([10.0]), np.array([4.0]), 100, np.array([11.0]), np.array([4.0]), 100)
    >>> round(float(p[0]), 4), round(float(half[0]), 4)   # t = 1 / sqrt(0.08) on 198 df
    (0.0005, 0.5578)
    """
    se2 = var_a / n_a + var_b / n_b
    with np.errstate(invalid="ignore", divide="ignore"):
        dof = se2 ** 2 / ((var_a / n_a) ** 2 / (n_a - 1) + (var_b / n_b) ** 2 / (n_b - 1))
        t = (mean_b - mean_a) / np.sqrt(se2)
    dist = StudentT(np.maximum(dof, 1))
    p = np.where(se2 > 0, 2 * dist.sf(np.abs(t)), 1.0)
    half = dist.ppf(1 - alpha / 2) * np.sqrt(se2)
    return p, half


@dataclass(frozen=True)
class Scale:
    """What a two-sample test reads the difference on: its standard error ``se`` (of the
    interval), degrees of freedom ``df`` (inf: normal) and the standard error under the null
    ``null_se`` (of the statistic and the p-value)."""

    se: float
    df: float
    null_se: float


def _unpooled_se(control: Arm, treatment: Arm) -> float:
    return math.sqrt(control.variance / control.n + treatment.variance / treatment.n)


def welch_scale(control: Arm, treatment: Arm) -> Scale:
    """Unpooled standard error, Welch-Satterthwaite degrees of freedom.

    >>> welch_scale(Arm(0, 1.0, 10), Arm(0, 4.0, 10)).se   # sqrt(1/10 + 4/10)
    0.7071067811865476
    """
    se = _unpooled_se(control, treatment)
    return Scale(se, welch_df(control, treatment), se)


def student_scale(control: Arm, treatment: Arm) -> Scale:
    """The pooled variance's standard error, ``n_c + n_t - 2`` degrees of freedom.

    >>> student_scale(Arm(0, 1.0, 10), Arm(0, 4.0, 10)).df
    18.0
    """
    df = float(control.n + treatment.n - 2)
    pooled = ((control.n - 1) * control.variance + (treatment.n - 1) * treatment.variance) / df
    se = math.sqrt(pooled / control.n + pooled / treatment.n)
    return Scale(se, df, se)


def z_scale(control: Arm, treatment: Arm) -> Scale:
    """Unpooled standard error on the normal distribution.

    >>> z_scale(Arm(0, 1.0, 10), Arm(0, 4.0, 10)).df
    inf
    """
    se = _unpooled_se(control, treatment)
    return Scale(se, math.inf, se)


def pooled_proportion_scale(control: Arm, treatment: Arm) -> Scale:
    """The two-proportion z-test: the statistic's error from the pooled proportion ``p``,
    ``sqrt(p (1 - p) (1/n_c + 1/n_t))``, the interval's unpooled.

    >>> round(pooled_proportion_scale(Arm(0.2, 0.16, 100), Arm(0.3, 0.21, 100)).null_se, 6)   # p = 0.25
    0.061237
    """
    p = (control.mean * control.n + treatment.mean * treatment.n) / (control.n + treatment.n)
    return Scale(_unpooled_se(control, treatment), math.inf, math.sqrt(p * (1 - p) * (1 / control.n + 1 / treatment.n)))


TWO_SAMPLE_TESTS: Registry[Declared[Callable[[Arm, Arm], Scale]]] = Registry("test", (
    Declared("welch", welch_scale, "Welch's t-test: unequal variances, Welch-Satterthwaite degrees of freedom.",
             reference="scipy.stats.ttest_ind(equal_var=False); gbstats; tea-tasting"),
    Declared("student", student_scale, "Student's t-test with a pooled variance.",
             reference="scipy.stats.ttest_ind"),
    Declared("z", z_scale, "Two-sample z-test on the means (normal approximation).",
             reference="statsmodels ztest; GrowthBook frequentist engine"),
    Declared("z-pooled", pooled_proportion_scale,
             "Two-proportion z-test with the pooled proportion (proportions only).",
             reference="statsmodels proportions_ztest"),
), option="--test")
"""The two-sample tests on summary statistics (``compare_arms``)."""

