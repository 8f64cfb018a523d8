"""The tests an A/B analysis compares each treatment arm with the control by: one declared
object each, its facts as attributes, chosen in one place (``AB_TESTS``).

Every test starts from the difference of a two-sample test on the arms' summary statistics
(``base``: welch, student, z or z-pooled, ``rankwise.stats.twosample``) and may replace some
of its columns: the Bayesian test adds the posterior (gbstats' engine), Mann-Whitney the rank
test's p-value, the bootstrap a percentile interval and p-value of resampled units. A test's
``target`` receives the comparison (``Pair``), the base difference, the analysis' settings
(``TestSettings``) and its own declared parameters by name (``bayesian(prior_mean=0.01)``),
and returns the columns it sets.

Adding a test is one function and one ``ABTest`` entry in ``AB_TESTS`` (docs/architecture.md,
"How to add an A/B test"); ``analyze`` reads only the attributes, never a test's name.

>>> from rankwise.stats.twosample import Arm
>>> test, params = AB_TESTS.parse("bayesian(prior_mean=0.01, proper=true)")
>>> test.base, test.posterior, params["prior_mean"]
('z', True, 0.01)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError, RankwiseError
from rankwise.experiments.metrics import Metric, Proportion, Quantile, Ratio
from rankwise.params import Declared, Param, Registry
from rankwise.stats.twosample import TWO_SAMPLE_TESTS, Alternative, Arm, Difference, Relative, compare_arms

if TYPE_CHECKING:
    from rankwise.experiments.events import Units
    from rankwise.experiments.moments import VariantMoments


class NotComparable(Exception):
    """A comparison that cannot be made (its row is left out with a warning, not the analysis)."""


@dataclass(frozen=True)
class TestSettings:
    """What every test of one analysis reads: the relative interval (delta or log), alpha, the
    alternative, the resamples and seed of resampling tests, and whether lower is better for
    the metric compared (a posterior's chance to win is then ``P(effect < 0)``)."""

    relative: Relative = "delta"
    alpha: float = 0.05
    alternative: Alternative = "two-sided"
    resamples: int = 2000
    seed: int = 0
    lower_is_better: bool = False


@dataclass(frozen=True)
class Pair:
    """One metric, one treatment arm against the control: the arms' estimates (CUPED-adjusted,
    or a quantile's), and the per-unit rows (``units``; None when only per-variant statistics
    were computed) for the tests that read them."""

    name: str
    metric: Metric
    control: str
    arm: str
    control_arm: Arm
    treatment_arm: Arm
    units: Units | None = None
    moments: VariantMoments | None = None


Compare = Callable[..., Mapping[str, Any]]
"""A test's target: ``(pair, difference, settings, **params) -> the columns it sets``."""


@dataclass(frozen=True)
class ABTest(Declared[Compare]):
    """An A/B test. ``base``: the two-sample test of its difference; ``unit_rows``: it reads one
    row per unit (not per-variant statistics); ``resampled``: it resamples the units (seeded, in
    their order of appearance; the analysis' ``resamples`` and ``seed``); ``proportions_only``;
    ``quantiles``: it compares quantile metrics;
    ``cuped``: it combines with CUPED covariates; ``relative_p``: its p-value has a relative-lift
    form; ``posterior``: it decides by the chance to win, not a p-value."""

    base: str = "welch"
    unit_rows: bool = False
    resampled: bool = False
    proportions_only: bool = False
    quantiles: bool = True
    cuped: bool = True
    relative_p: bool = True
    posterior: bool = False

    def check(self, name: str, metric: Metric) -> None:
        """Refuse a metric this test cannot compare, saying which tests can."""
        if self.proportions_only and not isinstance(metric, Proportion):
            raise OptionError(f"test={self.name!r} is the two-proportion test; metric {name!r} is a {metric.kind}")
        if isinstance(metric, Quantile) and not self.quantiles:
            able = _either([t.name for t in AB_TESTS.values() if t.quantiles])
            raise OptionError(f"metric {name!r} is a quantile: compare it with test {able}, not {self.name!r}")
        if metric.covariate_ratio is not None and not self.cuped:
            able = _either([t.name for t in AB_TESTS.values() if t.cuped])
            raise OptionError(f"test={self.name!r} does not combine with CUPED; metric {name!r} has a covariate "
                              f"(use {able})")

    def compare(self, pair: Pair, settings: TestSettings,
                params: Mapping[str, Any]) -> tuple[Difference, dict[str, Any]]:
        """The base test's difference of the pair, and the columns this test sets over it."""
        self.check(pair.name, pair.metric)
        d = compare_arms(pair.control_arm, pair.treatment_arm, self.base, settings.relative, settings.alpha,
                         settings.alternative)
        return d, dict(self.target(pair, d, settings, **params))


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def difference_columns(d: Difference) -> dict[str, Any]:
    """A difference as the columns of a comparison's row."""
    return {"difference": d.difference, "ci_lower": d.ci_lower, "ci_upper": d.ci_upper, "relative": d.relative,
            "relative_lower": d.relative_lower, "relative_upper": d.relative_upper, "p_value": d.p_value,
            "relative_p_value": d.relative_p_value, "statistic": d.statistic, "df": d.df, "se": d.se,
            "relative_se": d.relative_se}


def unit_values(metric: Metric, units: Units | None, variant: str) -> tuple[np.ndarray, np.ndarray | None]:
    """One arm's per-unit values of ``metric`` (a ratio's numerators and denominators; a
    proportion's 0/1 indicators)."""
    if units is None:  # the per-variant sums path keeps no unit rows
        raise RankwiseError("this test needs one row per unit, and only per-variant sums were computed")
    rows = units.codes == units.variants.index(variant)
    if isinstance(metric, Ratio):
        return units.values[metric.numerator][rows], units.values[metric.denominator][rows]
    if isinstance(metric, Proportion):
        return (units.values[metric.column][rows] > 0).astype(np.float64), None
    return units.values[metric.column][rows], None


def _difference(pair: Pair, d: Difference, settings: TestSettings) -> dict[str, Any]:
    """The base test's difference as it is."""
    return {}


def _bayesian(pair: Pair, d: Difference, settings: TestSettings, prior_mean: float, prior_variance: float,
              proper: bool, prior_type: str, inverse: bool) -> dict[str, Any]:
    """The posterior columns of one comparison (``rankwise.stats.bayes``, gbstats 0.8's
    engine): the prior is on the relative effect (``prior_type``) and rescaled by the control's
    mean for the other scale; the chance to win and the risks are the relative posterior's
    (the absolute one's when the control's mean is 0)."""
    from rankwise.stats.bayes import NormalPrior, normal_posterior

    inverse = inverse or settings.lower_is_better
    prior = NormalPrior(prior_mean, prior_variance, proper)
    scale = abs(pair.control_arm.mean)
    if proper and prior_type == "relative" and not scale:
        raise NotComparable("the control's mean is 0: a prior on the relative effect has no absolute scale "
                            "(gbstats leaves such a comparison out too)")
    if prior_type == "relative":
        relative_prior, absolute_prior = prior, prior.rescaled(scale)
    else:
        absolute_prior = prior
        relative_prior = prior.rescaled(1 / scale) if scale else prior
    absolute = normal_posterior(d.difference, d.se ** 2, absolute_prior, settings.alpha, inverse)
    relative = normal_posterior(d.relative, d.relative_se ** 2, relative_prior, settings.alpha, inverse) \
        if scale else None
    decision = relative if relative is not None and math.isfinite(relative.mean) else absolute
    out = {"difference": absolute.mean, "ci_lower": absolute.lower, "ci_upper": absolute.upper,
           "p_value": math.nan, "chance_to_win": decision.chance_to_win, "risk_control": decision.risk_control,
           "risk_treatment": decision.risk_treatment, "risk_scale": "relative" if decision is relative else "absolute"}
    if relative is not None:
        out.update(relative=relative.mean, relative_lower=relative.lower, relative_upper=relative.upper)
    return out


def _mann_whitney(pair: Pair, d: Difference, settings: TestSettings) -> dict[str, Any]:
    """The p-value of the Mann-Whitney U test on the arms' unit values."""
    from rankwise.stats.twosample import mann_whitney_p

    if isinstance(pair.metric, Ratio):
        raise OptionError(f"test='mann-whitney' ranks one value per unit; metric {pair.name!r} is a ratio "
                          "(use welch, z or bootstrap)")
    control, _ = unit_values(pair.metric, pair.units, pair.control)
    treatment, _ = unit_values(pair.metric, pair.units, pair.arm)
    return {"p_value": mann_whitney_p(control, treatment, settings.alternative), "relative_p_value": math.nan}


def _bootstrap(pair: Pair, d: Difference, settings: TestSettings) -> dict[str, Any]:
    """Percentile interval and p-value of the difference over ``resamples`` seeded resamples of
    units within each arm (``rankwise.stats.resampling.bootstrap_difference``)."""
    from rankwise.stats.resampling import bootstrap_difference

    lower, upper, p = bootstrap_difference(unit_values(pair.metric, pair.units, pair.control),
                                           unit_values(pair.metric, pair.units, pair.arm), settings.alpha,
                                           settings.resamples, settings.seed)
    return {"ci_lower": lower, "ci_upper": upper, "p_value": p, "relative_p_value": math.nan}


_TWO_SAMPLE_FACTS: dict[str, dict[str, Any]] = {"student": {"quantiles": False},
                                                "z-pooled": {"proportions_only": True, "quantiles": False}}

AB_TESTS: Registry[ABTest] = Registry("test", (
    *(ABTest(t.name, _difference, t.description, aliases=t.aliases, reference=t.reference, base=t.name,
             **_TWO_SAMPLE_FACTS.get(t.name, {})) for t in TWO_SAMPLE_TESTS.values()),
    ABTest("bayesian", _bayesian, "Normal posterior of the effect: credible intervals, chance to win and the risk "
           "(expected loss) of each decision; flat prior by default.", (
               Param("prior_mean", float, 0.0, "prior mean of the effect"),
               Param("prior_variance", float, 1.0, "prior variance of the effect", low=1e-300),
               Param("proper", bool, False, "use the prior (false: flat, improper prior)"),
               Param("prior_type", str, "relative", "the scale the prior is on", choices=("relative", "absolute")),
               Param("inverse", bool, False, "lower is better for every metric: the chance to win is "
                     "P(effect < 0) (lower_is_better / --lower-is-better sets it per metric)"),
           ), aliases=("bayes",), reference="gbstats 0.8 EffectBayesianABTest", base="z", relative_p=False,
           posterior=True),
    ABTest("mann-whitney", _mann_whitney, "Mann-Whitney U test on the unit values (p-value only).",
           aliases=("mannwhitney", "wilcoxon-rank-sum"), reference="scipy.stats.mannwhitneyu", unit_rows=True,
           quantiles=False, cuped=False, relative_p=False),
    ABTest("bootstrap", _bootstrap, "Percentile bootstrap of units: interval and p-value.",
           reference="Efron & Tibshirani 1993", unit_rows=True, resampled=True, quantiles=False, cuped=False,
           relative_p=False),
), option="--test")
"""The tests an A/B analysis compares each arm with the control by."""
