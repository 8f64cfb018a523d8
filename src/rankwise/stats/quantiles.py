"""A quantile of unit values with its sampling variance, as GrowthBook estimates it for
quantile metrics (gbstats' ``QuantileStatistic``; the bounds as GrowthBook's SQL computes them).

For the ``nu`` quantile of ``n`` values the estimate is the sample quantile (linear
interpolation between order statistics: SQL's ``PERCENTILE_CONT``, NumPy's default). Its
standard error comes from the distribution-free confidence interval of a quantile: with
``n*`` the largest of GrowthBook's grid sizes (100, 200, 400, ... 52,428,800) below ``n`` (100
for 100 units or fewer), the bounds are the sample quantiles at levels
``nu -+ z sqrt(nu (1 - nu) / n*)`` (clipped to [1e-8, 1 - 1e-8]; ``z`` the normal 97.5%
quantile), and the per-unit variance is

    variance = (n* / n) (n - 1) ((upper - lower) / (2 z))^2

(at least 1e-5 from 100 units on), so that ``variance / n`` is the estimate's variance. A
quantile too close to 0 or 1 for ``n`` (``n <= z^2 nu / (1 - nu)`` or ``n <= z^2 (1 - nu) /
nu``) has no estimable variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankwise.errors import OptionError
from rankwise.stats.distributions import NORMAL

N_STAR = tuple(100 * 2 ** k for k in range(20))
"""GrowthBook's grid of sample sizes for the quantile bounds (100 ... 52,428,800)."""

Z = float(NORMAL.ppf(0.975))


@dataclass(frozen=True)
class QuantileEstimate:
    """The ``nu`` quantile of ``n`` values, its bounds and per-unit variance."""

    nu: float
    n: int
    n_star: int
    quantile: float
    lower: float
    upper: float

    @property
    def variance(self) -> float:
        """Per-unit variance (divide by ``n`` for the estimate's): gbstats' rule."""
        return quantile_variance(self.n, self.n_star, self.lower, self.upper)

    @property
    def estimable(self) -> bool:
        """Whether ``n`` values carry a variance for this quantile (gbstats' zero-variance rule)."""
        if self.n <= Z * Z * self.nu / (1 - self.nu) or self.n <= Z * Z * (1 - self.nu) / self.nu:
            return False
        return not (quantile_variance(self.n, self.n_star, self.lower, self.upper, floor=False) <= 0
                    and self.n < 1000)


def n_star(n: int) -> int:
    """The largest grid size below ``n`` (the smallest for ``n <= 100``).

    >>> n_star(50), n_star(101), n_star(11054)
    (100, 100, 6400)
    """
    below = [size for size in N_STAR if size < n]
    return below[-1] if below else N_STAR[0]


def bound_levels(nu: float, size: int) -> tuple[float, float]:
    """The levels of the bounds: ``nu -+ z sqrt(nu (1 - nu) / size)``, clipped.

    >>> [round(x, 6) for x in bound_levels(0.5, 100)]   # 0.5 -+ 1.959964 * 0.05
    [0.402002, 0.597998]
    """
    half = Z * math.sqrt(nu * (1 - nu) / size)
    return max(nu - half, 1e-8), min(nu + half, 1 - 1e-8)


def quantile_variance(n: int, size: int, lower: float, upper: float, floor: bool = True) -> float:
    """``(n* / n) (n - 1) ((upper - lower) / (2 z))^2``, at least 1e-5 from 100 units on
    (``floor``), 0 for one unit or none.

    >>> round(quantile_variance(11054, 11054, 7.098780136176828, 7.217194843758751), 6)   # gbstats' case
    10.086379
    """
    if n <= 1:
        return 0.0
    value = (size / n) * (n - 1) * ((upper - lower) / (2 * Z)) ** 2
    return max(value, 1e-5) if floor and n >= 100 else value


def estimate_quantile(values: np.ndarray, nu: float) -> QuantileEstimate:
    """The ``nu`` quantile of ``values`` with its bounds.

    >>> e = estimate_quantile(np.arange(1.0, 201.0), 0.5)   # n* = 100: levels 0.402002, 0.597998
    >>> e.quantile, round(e.lower, 4), round(e.upper, 4), e.n_star   # 1 + 199 * level
    (100.5, 80.9984, 120.0016, 100)
    """
    if not 0 < nu < 1:
        raise OptionError(f"a quantile level must be between 0 and 1, got {nu}")
    data = np.asarray(values, dtype=np.float64)
    n = len(data)
    if n == 0:
        return QuantileEstimate(nu, 0, N_STAR[0], math.nan, math.nan, math.nan)
    size = n_star(n)
    low, high = bound_levels(nu, size)
    quantile, lower, upper = np.quantile(data, [nu, low, high])
    return QuantileEstimate(nu, n, size, float(quantile), float(lower), float(upper))


@dataclass(frozen=True)
class ClusterSums:
    """One arm's events counted per cluster (unit ``i``): ``S_i`` of its events at or below the
    quantile, ``N_i`` of all its events; the sums gbstats' ``QuantileClusteredStatistic`` reads
    (``clusters``: every unit of the arm, those without events too)."""

    below: float
    below_squares: float
    events: float
    events_squares: float
    product: float
    clusters: int

    @classmethod
    def of(cls, below: np.ndarray, events: np.ndarray) -> ClusterSums:
        """The sums of per-cluster counts ``S_i`` (``below``) and ``N_i`` (``events``).

        >>> ClusterSums.of(np.array([1, 0, 2]), np.array([2, 1, 2]))
        ClusterSums(below=3.0, below_squares=5.0, events=5.0, events_squares=9.0, product=6.0, clusters=3)
        """
        s, n = np.asarray(below, dtype=np.float64), np.asarray(events, dtype=np.float64)
        return cls(float(s.sum()), float((s * s).sum()), float(n.sum()), float((n * n).sum()), float((s * n).sum()),
                   len(s))

    def share_variance(self) -> float:
        """Delta-method variance of ``sum S_i / sum N_i`` over the clusters (the share of events
        at or below the quantile, clustered by unit):
        ``(var S - 2 (mean S / mean N) cov(S, N) + (mean S / mean N)^2 var N) / (K mean N^2)``,
        variances with ``K - 1``.

        >>> # mean S 1, mean N 5/3; var S 1, var N 1/3, cov 1/2: (1 - 2 (3/5) / 2 + (9/25) / 3) / (3 x 25/9)
        >>> round(ClusterSums.of(np.array([1, 0, 2]), np.array([2, 1, 2])).share_variance(), 6)
        0.0624
        """
        k = self.clusters
        mu_s, mu_n = self.below / k, self.events / k
        var_s = (self.below_squares / k - mu_s * mu_s) * k / (k - 1)
        var_n = (self.events_squares / k - mu_n * mu_n) * k / (k - 1)
        cov = (self.product / k - mu_s * mu_n) * k / (k - 1)
        return (var_s - 2 * mu_s * cov / mu_n + mu_s ** 2 * var_n / mu_n ** 2) / (k * mu_n ** 2)


@dataclass(frozen=True)
class ClusteredQuantileEstimate(QuantileEstimate):
    """The ``nu`` quantile of ``n`` events grouped in units, as gbstats' event quantiles: the
    variance of the independent case scaled by the clustered variance of the share of events at
    or below the quantile over its independent value ``nu (1 - nu) / n``:
    ``variance = v_iid x share_variance / (nu (1 - nu) / n)``; 0 for one event, one unit or none
    (at least 1e-5 from 100 events on)."""

    sums: ClusterSums | None = None

    def _unfloored(self) -> float:
        sums = self.sums
        if self.n <= 1 or sums is None or sums.clusters <= 1 or sums.events <= 0:
            return 0.0
        independent = quantile_variance(self.n, self.n_star, self.lower, self.upper, floor=False)
        return independent * sums.share_variance() / (self.nu * (1 - self.nu) / self.n)

    @property
    def variance(self) -> float:
        value = self._unfloored()
        return max(value, 1e-5) if self.n >= 100 else value

    @property
    def estimable(self) -> bool:
        if self.n <= Z * Z * self.nu / (1 - self.nu) or self.n <= Z * Z * (1 - self.nu) / self.nu:
            return False
        return not (self._unfloored() <= 0 and self.n < 1000)


def event_quantile(values: np.ndarray, cluster_of: np.ndarray, clusters: int, nu: float) -> ClusteredQuantileEstimate:
    """The ``nu`` quantile of events ``values`` with the clustered variance, ``cluster_of`` the
    index (below ``clusters``) of each event's unit.

    >>> e = event_quantile(np.arange(1.0, 201.0), np.repeat(np.arange(100), 2), 100, 0.5)
    >>> e.quantile, e.sums.below, e.sums.clusters   # units 0 ... 49 hold the 100 events at or below 100.5
    (100.5, 100.0, 100)
    """
    estimate = estimate_quantile(values, nu)
    cluster_of = np.asarray(cluster_of, dtype=np.int64)
    data = np.asarray(values, dtype=np.float64)
    below = np.bincount(cluster_of[data <= estimate.quantile], minlength=clusters)
    return clustered(estimate, ClusterSums.of(below, np.bincount(cluster_of, minlength=clusters)))


def clustered(estimate: QuantileEstimate, sums: ClusterSums) -> ClusteredQuantileEstimate:
    """An estimate's order statistics with its clusters' sums (an engine that computes both
    where the data lies builds its estimate so)."""
    return ClusteredQuantileEstimate(estimate.nu, estimate.n, estimate.n_star, estimate.quantile, estimate.lower,
                                     estimate.upper, sums)
