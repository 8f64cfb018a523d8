"""The reference distributions every test in rankwise reads its tails and quantiles from.

One home for the standard normal and Student's t: ``scipy.special``'s ``ndtr``/``ndtri`` and
``stdtr``/``stdtrit``, the functions ``scipy.stats.norm`` and ``scipy.stats.t`` call (so the
values are scipy's to the bit) without importing ``scipy.stats``. Every method takes a number
or an array and broadcasts.

>>> round(float(NORMAL.ppf(0.975)), 6), round(float(StudentT(10).ppf(0.975)), 6)
(1.959964, 2.228139)
>>> distribution(float("inf")) is NORMAL
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_SQRT_2PI = math.sqrt(2 * math.pi)


class Normal:
    """The standard normal: ``sf``, ``cdf``, ``ppf`` (quantile) and ``pdf``.

    >>> float(NORMAL.sf(0.0)), float(NORMAL.cdf(0.0))
    (0.5, 0.5)
    """

    def sf(self, x: Any) -> Any:
        """P(Z > x)."""
        import numpy as np
        from scipy.special import ndtr

        return ndtr(np.negative(x))

    def cdf(self, x: Any) -> Any:
        """P(Z <= x)."""
        from scipy.special import ndtr

        return ndtr(x)

    def ppf(self, q: Any) -> Any:
        """The quantile: the x with P(Z <= x) = q."""
        from scipy.special import ndtri

        return ndtri(q)

    def pdf(self, x: Any) -> Any:
        """The density exp(-x^2 / 2) / sqrt(2 pi)."""
        import numpy as np

        return np.exp(-np.square(x) / 2.0) / _SQRT_2PI


NORMAL = Normal()
"""The standard normal."""


@dataclass(frozen=True)
class StudentT:
    """Student's t with ``df`` degrees of freedom (``df`` may be an array).

    >>> round(float(StudentT(4).sf(2.776445)), 4)
    0.025
    """

    df: Any

    def sf(self, x: Any) -> Any:
        """P(T > x)."""
        import numpy as np
        from scipy.special import stdtr

        return stdtr(self.df, np.negative(x))

    def cdf(self, x: Any) -> Any:
        """P(T <= x)."""
        from scipy.special import stdtr

        return stdtr(self.df, x)

    def ppf(self, q: Any) -> Any:
        """The quantile: the x with P(T <= x) = q."""
        from scipy.special import stdtrit

        return stdtrit(self.df, q)


def distribution(df: float) -> Normal | StudentT:
    """The normal for infinite degrees of freedom, Student's t otherwise.

    >>> distribution(12.0)
    StudentT(df=12.0)
    """
    return NORMAL if math.isinf(df) else StudentT(df)


def sign_test_p(wins: Any, losses: Any) -> Any:
    """Two-sided sign test: ``min(1, 2 P(X <= min(wins, losses)))`` for X ~ Binomial(wins +
    losses, 1/2) (ties left out before the call); 1 where nothing was decided. Broadcasts
    over arrays; equals ``scipy.stats.binomtest(wins, wins + losses).pvalue`` to within
    2e-15 relative.

    >>> round(float(sign_test_p(8, 2)), 4)   # 2 (1 + 10 + 45) / 2^10
    0.1094
    >>> sign_test_p([0, 3], [0, 3]).tolist()
    [1.0, 1.0]
    """
    import numpy as np
    from scipy import stats

    wins = np.asarray(wins)
    losses = np.asarray(losses)
    decided = wins + losses
    low = np.minimum(wins, losses)
    p = np.where(decided > 0, np.minimum(1.0, 2 * stats.binom.cdf(low, np.maximum(decided, 1), 0.5)), 1.0)
    return p if p.ndim else float(p)
