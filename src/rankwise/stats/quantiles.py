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
