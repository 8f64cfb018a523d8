"""What an experiment measures per unit: means, proportions and ratios of sums.

Every metric is a ratio of means over units, ``numerator / denominator`` (the denominator is
1 for a mean), as tea-tasting models them. Its variance over units comes from the delta
method:

    var(R) = (S_nn - 2 R S_nd + R^2 S_dd) / mean(d)^2,   R = mean(n) / mean(d)

with ``S`` the sample (co)variances over units. A proportion's variance is ``p (1 - p)``
(the two-proportion z-test's; gbstats and statsmodels use it). A covariate (CUPED) is another
such ratio measured before the experiment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypeGuard

import numpy as np

from rankwise.experiments.moments import VariantMoments


@dataclass(frozen=True)
class Mean:
    """Mean per unit of ``column`` (page views, time on site), optionally CUPED-adjusted by
    the pre-experiment ``covariate`` column.

    >>> m = VariantMoments.from_units(["a", "a"], {"views": [1.0, 3.0]})
    >>> Mean("views").value(m, "a"), Mean("views").unit_variance(m, "a")
    (2.0, 2.0)
    """

    column: str
    covariate: str | None = None

    kind = "mean"

    @property
    def numerator(self) -> str:
        return self.column

    @property
    def denominator(self) -> str | None:
        return None

    @property
    def covariate_ratio(self) -> tuple[str, str | None] | None:
        return (self.covariate, None) if self.covariate else None

    def columns(self) -> list[str]:
        """The per-unit columns the metric reads."""
        return [c for c in (self.numerator, self.denominator, *(self.covariate_ratio or ())) if c]

    def describe(self) -> str:
        return self.column

    def covariate_variance(self, m: VariantMoments, variant: str) -> float:
        """Variance per unit of the covariate's linearisation (CUPED's ``var(X)``)."""
        covariate = self.covariate_ratio
        return math.nan if covariate is None else ratio_covariance(m, variant, covariate, covariate)

    def value(self, m: VariantMoments, variant: str) -> float:
        """The metric in ``variant``."""
        return ratio_of_means(m, variant, self.numerator, self.denominator)

    def unit_variance(self, m: VariantMoments, variant: str) -> float:
        """Variance per unit of the metric's linearisation (divide by n for the estimate's)."""
        return ratio_variance(m, variant, self.numerator, self.denominator)


@dataclass(frozen=True)
class Proportion(Mean):
    """Share of units whose ``column`` is positive (converted users): an event log's column
    summed per unit, then ``> 0``; variance ``p (1 - p)``.

    >>> m = VariantMoments.from_units(["a"] * 4, {"bought>0": [1.0, 0.0, 0.0, 1.0]})
    >>> Proportion("bought").value(m, "a"), Proportion("bought").unit_variance(m, "a")
    (0.5, 0.25)
    """

    binary_covariate: bool = field(default=False, repr=False)
    """Whether the covariate is itself a proportion (0 or 1 per unit: the same event before the
    exposure); its variance is then ``p (1 - p)`` as the metric's, as gbstats computes it."""

    kind = "proportion"

    @property
    def numerator(self) -> str:
        return indicator(self.column)

    def covariate_variance(self, m: VariantMoments, variant: str) -> float:
        if self.binary_covariate and self.covariate is not None:
            p = m.mean(variant, self.covariate)
            return p * (1 - p)
        return super().covariate_variance(m, variant)

    def describe(self) -> str:
        return f"{self.column} > 0"

    def unit_variance(self, m: VariantMoments, variant: str) -> float:
        p = self.value(m, variant)
        return p * (1 - p)


@dataclass(frozen=True, init=False)
class Quantile(Mean):
    """The ``q`` quantile of the units' ``column`` (summed per unit): p50 or p90 of revenue or
    time per user, as GrowthBook's unit quantile metrics. Its value and variance come from the
    unit values (``rankwise.stats.quantiles``), not from the per-variant moments.

    With ``ignore_zeros`` the quantile is over the units whose value is not 0 (GrowthBook's
    "ignore zeros": p50 of spend among the units that spent), and its ``n`` counts them.

    With ``per_event`` it is the quantile of every event's value instead (p99 of page-load
    latency over page loads, GrowthBook's event quantiles), with the variance clustered by unit
    (``rankwise.experiments.event_quantiles``).

    >>> Quantile("revenue", 0.9).describe(), Quantile("revenue", 0.5, ignore_zeros=True).describe()
    ('p90(revenue)', 'p50(revenue, ignore_zeros)')
    >>> Quantile("latency", 0.99, per_event=True).describe()
    'p99(latency, per_event)'
    """

    q: float = 0.5
    ignore_zeros: bool = False
    per_event: bool = False

    kind = "quantile"

    def __init__(self, column: str, q: float = 0.5, covariate: str | None = None, ignore_zeros: bool = False,
                 per_event: bool = False) -> None:
        """``Quantile(column, q)``: the level second, as one writes it (p90 is ``q=0.9``)."""
        if not 0 < float(q) < 1:
            from rankwise.errors import OptionError

            raise OptionError(f"a quantile level must be between 0 and 1 (p1 ... p99), got {q}")
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "q", float(q))
        object.__setattr__(self, "covariate", covariate)
        object.__setattr__(self, "ignore_zeros", bool(ignore_zeros))
        object.__setattr__(self, "per_event", bool(per_event))

    def describe(self) -> str:
        flags = "".join(f", {flag}" for flag, on in (("ignore_zeros", self.ignore_zeros), ("per_event", self.per_event))
                        if on)
        return f"p{100 * self.q:g}({self.column}{flags})"

    def counted(self, values: np.ndarray) -> np.ndarray:
        """The unit values the quantile is taken over: every one, or those not 0.

        >>> Quantile("x", ignore_zeros=True).counted(np.array([0.0, 2.0, 0.0, 5.0])).tolist()
        [2.0, 5.0]
        """
        return values[values != 0] if self.ignore_zeros else values


@dataclass(frozen=True)
class Ratio:
    """Ratio of sums over units, ``sum(numerator) / sum(denominator)`` (CTR = clicks /
    impressions), analysed per unit with the delta method; ``covariate`` is a pre-experiment
    ``(numerator, denominator)`` pair or a single column.

    >>> m = VariantMoments.from_units(["a", "a"], {"clicks": [1.0, 1.0], "views": [2.0, 6.0]})
    >>> Ratio("clicks", "views").value(m, "a")   # 2 / 8
    0.25
    """

    numerator: str
    denominator: str
    covariate: tuple[str, str] | str | None = None

    kind = "ratio"

    @property
    def covariate_ratio(self) -> tuple[str, str | None] | None:
        if self.covariate is None:
            return None
        if isinstance(self.covariate, str):
            return self.covariate, None
        numerator, denominator = self.covariate
        return numerator, denominator

    def columns(self) -> list[str]:
        return [c for c in (self.numerator, self.denominator, *(self.covariate_ratio or ())) if c]

    def describe(self) -> str:
        return f"{self.numerator} / {self.denominator}"

    def value(self, m: VariantMoments, variant: str) -> float:
        return ratio_of_means(m, variant, self.numerator, self.denominator)

    def unit_variance(self, m: VariantMoments, variant: str) -> float:
        return ratio_variance(m, variant, self.numerator, self.denominator)

    def covariate_variance(self, m: VariantMoments, variant: str) -> float:
        """Variance per unit of the covariate's linearisation (CUPED's ``var(X)``)."""
        covariate = self.covariate_ratio
        return math.nan if covariate is None else ratio_covariance(m, variant, covariate, covariate)


Metric = Mean | Proportion | Quantile | Ratio


def is_event_quantile(metric: Metric) -> TypeGuard[Quantile]:
    """Whether ``metric`` is a quantile of events (read from the events, not from unit sums).

    >>> is_event_quantile(Quantile("ms", 0.9, per_event=True)), is_event_quantile(Quantile("ms", 0.9))
    (True, False)
    """
    return isinstance(metric, Quantile) and metric.per_event


def indicator(column: str) -> str:
    """The per-unit column ``column > 0`` that a proportion reads."""
    return f"{column}>0"


def ratio_of_means(m: VariantMoments, variant: str, numerator: str, denominator: str | None) -> float:
    """``mean(numerator) / mean(denominator)`` in ``variant`` (the denominator 1 when None)."""
    num = m.mean(variant, numerator)
    return num if denominator is None else _divide(num, m.mean(variant, denominator))


def ratio_covariance(m: VariantMoments, variant: str, a: tuple[str, str | None], b: tuple[str, str | None]) -> float:
    """Delta-method covariance per unit of two ratios of means ``a = (n1, d1)``, ``b = (n2, d2)``:
    ``(S_n1n2 - S_n1d2 Rb - S_d1n2 Ra + S_d1d2 Ra Rb) / (mean(d1) mean(d2))``."""
    ra = ratio_of_means(m, variant, *a)
    rb = ratio_of_means(m, variant, *b)

    def cov(x: str | None, y: str | None) -> float:
        return 0.0 if x is None or y is None else m.covariance(variant, x, y)

    def mean(x: str | None) -> float:
        return 1.0 if x is None else m.mean(variant, x)

    value = cov(a[0], b[0]) - cov(a[0], b[1]) * rb - cov(a[1], b[0]) * ra + cov(a[1], b[1]) * ra * rb
    return _divide(_divide(value, mean(a[1])), mean(b[1]))


def ratio_variance(m: VariantMoments, variant: str, numerator: str, denominator: str | None) -> float:
    """Delta-method variance per unit of ``mean(numerator) / mean(denominator)``."""
    return ratio_covariance(m, variant, (numerator, denominator), (numerator, denominator))


def _divide(a: float, b: float) -> float:
    if b == 0:
        return float("inf") if a > 0 else float("-inf") if a < 0 else float("nan")
    return a / b
