"""The Bayesian engine of an A/B comparison: a normal posterior of the effect, as GrowthBook's
stats engine (gbstats 0.8, ``EffectBayesianABTest``) computes it.

The data give the effect's estimate ``d`` (treatment minus control, absolute or relative to
the control) with variance ``v`` (delta method for the relative effect). With a Gaussian prior
``N(m0, v0)`` on the effect the posterior is normal with precision ``1/v + 1/v0`` and mean
``(d/v + m0/v0) / (1/v + 1/v0)``; the default prior is improper (flat), and the posterior is
then ``N(d, v)``. From it:

- the credible interval: the posterior's ``alpha/2`` and ``1 - alpha/2`` quantiles;
- the chance to win: ``P(effect > 0)`` (``P(effect < 0)`` for a metric where lower is better);
- the risk (expected loss) of each decision: choosing the control loses ``E[max(effect, 0)]``,
  choosing the treatment ``E[max(-effect, 0)]``; for ``X ~ N(mu, s^2)``,
  ``E[max(X, 0)] = mu Phi(mu/s) + s phi(mu/s)``.

gbstats puts the prior on the relative effect by default and rescales it by the control's mean
for the absolute one (``prior_type``); ``normal_posterior`` takes the prior on the scale it is
given and ``rescaled`` moves it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rankwise.errors import OptionError
from rankwise.stats.distributions import NORMAL


@dataclass(frozen=True)
class NormalPrior:
    """A Gaussian prior on the effect; ``proper=False`` (the default) is the flat prior."""

    mean: float = 0.0
    variance: float = 1.0
    proper: bool = False

    def __post_init__(self) -> None:
        if self.proper and not (self.variance > 0 and math.isfinite(self.variance)):
            raise OptionError(f"a proper prior needs a positive, finite variance, got {self.variance}")
        if not math.isfinite(self.mean):
            raise OptionError(f"the prior mean must be a finite number, got {self.mean}")

    def rescaled(self, factor: float) -> NormalPrior:
        """The prior of ``factor`` times the effect (relative to absolute: the control's mean).

        >>> NormalPrior(0.1, 0.01, True).rescaled(20.0)
        NormalPrior(mean=2.0, variance=4.0, proper=True)
        """
        return NormalPrior(self.mean * factor, self.variance * factor * factor, self.proper)


@dataclass(frozen=True)
class Posterior:
    """The effect's posterior: mean, standard deviation, credible interval, chance to win and
    the risk of choosing the control or the treatment."""

    mean: float
    sd: float
    lower: float
    upper: float
    chance_to_win: float
    risk_control: float
    risk_treatment: float


def expected_loss(mean: float, sd: float) -> tuple[float, float]:
    """``(E[max(X, 0)], E[max(-X, 0)])`` for ``X ~ N(mean, sd^2)``: what choosing the control,
    or the treatment, loses in expectation.

    >>> [round(v, 6) for v in expected_loss(0.0, 1.0)]   # both 1/sqrt(2 pi)
    [0.398942, 0.398942]
    """
    if sd == 0:
        return max(mean, 0.0), max(-mean, 0.0)
    z = mean / sd
    density = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    above = mean * NORMAL.cdf(z) + sd * density
    below = -mean * NORMAL.cdf(-z) + sd * density
    return float(above), float(below)


def normal_posterior(estimate: float, variance: float, prior: NormalPrior = NormalPrior(), alpha: float = 0.05,
                     lower_is_better: bool = False) -> Posterior:
    """The posterior of an effect estimated as ``estimate`` with variance ``variance``.

    gbstats' own case (its ``test_bayesian_gaussian_ab_test``): control 10 units, sum 100, sum
    of squares 1002.25; treatment sum 105, 1111.5; relative effect 0.05 with the delta-method
    variance, flat prior:

    >>> var_c, var_t = (1002.25 - 100**2 / 10) / 9, (1111.5 - 105**2 / 10) / 9
    >>> v = var_t / (10**2 * 10) + var_c * 10.5**2 / (10**4 * 10)
    >>> p = normal_posterior(0.05, v)
    >>> round(p.sd, 5), [round(x, 5) for x in (p.lower, p.upper)], round(p.chance_to_win, 5)
    (0.03572, [-0.02, 0.12], 0.91923)
    >>> round(p.risk_control, 5), round(p.risk_treatment, 5)
    (0.05131, 0.00131)
    """
    if not (variance > 0 and math.isfinite(variance)) or not math.isfinite(estimate):
        return Posterior(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    precision = 1 / variance + (1 / prior.variance if prior.proper else 0.0)
    mean = (estimate / variance + prior.mean / prior.variance) / precision if prior.proper else estimate
    sd = math.sqrt(1 / precision)
    z = float(NORMAL.ppf(1 - alpha / 2))
    win = NORMAL.sf(-mean / sd)   # P(effect > 0)
    above, below = expected_loss(mean, sd)
    if lower_is_better:
        win, above, below = 1 - win, below, above
    return Posterior(mean, sd, mean - z * sd, mean + z * sd, float(win), above, below)
