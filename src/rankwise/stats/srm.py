"""Sample ratio mismatch: do the units per variant match the design weights?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SRM_THRESHOLD = 0.001
"""p-values below this flag a sample ratio mismatch (GrowthBook's and most platforms' choice)."""


@dataclass(frozen=True)
class SRM:
    """Pearson's chi-square test of the observed units per variant against the design
    weights: ``statistic = sum (o - e)^2 / e`` with ``e = w / sum(w) * total`` over the
    variants with a positive weight, ``variants - 1`` degrees of freedom (as gbstats'
    ``check_srm``). ``mismatch`` when ``p_value < threshold``."""

    observed: tuple[int, ...]
    expected: tuple[float, ...]
    statistic: float
    p_value: float
    threshold: float = SRM_THRESHOLD

    @property
    def mismatch(self) -> bool:
        return bool(self.p_value < self.threshold)

    def message(self) -> str:
        """The warning every output shows when the split is off."""
        return (f"sample ratio mismatch: units per variant {list(self.observed)} against expected "
                f"{[round(e, 1) for e in self.expected]} (chi-square p = {self.p_value:.3g} < {self.threshold}); "
                "the assignment or the logging is broken, and the differences below are not trustworthy")


def srm_test(observed: Sequence[int], weights: Sequence[float] | None = None,
             threshold: float = SRM_THRESHOLD) -> SRM:
    """Chi-square test of ``observed`` units per variant against ``weights`` (equal when None).

    >>> r = srm_test([5100, 4900])          # (100^2 / 5000) * 2 = 4.0 on 1 df
    >>> round(r.statistic, 6), round(r.p_value, 4), r.mismatch
    (4.0, 0.0455, False)
    >>> srm_test([9000, 1000], [0.9, 0.1]).p_value
    1.0
    """
    from scipy.special import chdtrc

    o = np.asarray(observed, dtype=np.float64)
    w = np.full(len(o), 1.0 / len(o)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = o.sum()
    expected = w / w.sum() * total
    if total == 0:
        return SRM(tuple(int(x) for x in o), tuple(expected.tolist()), 0.0, 1.0, threshold)
    used = w > 0
    statistic = float(np.sum((o[used] - expected[used]) ** 2 / expected[used]))
    p = float(chdtrc(len(o) - 1, statistic))  # chi-square tail, as scipy.stats.chi2.sf
    return SRM(tuple(int(x) for x in o), tuple(expected.tolist()), statistic, p, threshold)
