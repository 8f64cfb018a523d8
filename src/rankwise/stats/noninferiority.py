"""Non-inferiority: is the treatment no worse than the control by more than a margin?

With ``r`` the relative change (its sign flipped where lower is better, so that positive is
better), ``s`` its standard error and ``m`` the margin (a relative worsening, 0.02 for 2%), the
one-sided p-value of "worse by at least the margin" is ``1 - Phi((r + m) / s)``. The decision:
``passed`` when that p is below alpha (no worse than the margin), ``failed`` when the change is
significantly worse than none (``1 - Phi(-r / s) < alpha``, one-sided), else ``inconclusive``;
``not compared`` when the p-value is not a number.
"""

from __future__ import annotations

import numpy as np

from rankwise.stats.distributions import NORMAL


def non_inferiority(better: np.ndarray, se: np.ndarray, margin: np.ndarray,
                    alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The p-values and decisions of the non-inferiority tests of changes ``better`` (positive
    is better) with standard errors ``se`` against margins ``margin`` (see the module).

    >>> p, decision = non_inferiority(np.array([0.01, -0.05]), np.array([0.01, 0.01]), np.array([0.02, 0.02]))
    >>> p.round(6).tolist(), decision.tolist()   # 1 - Phi(3); 1 - Phi(-3)
    ([0.00135, 0.99865], ['passed', 'failed'])
    """
    better, se, margin = (np.asarray(x, dtype=np.float64) for x in (better, se, margin))
    with np.errstate(all="ignore"):
        p = NORMAL.sf((better + margin) / se)
        harm = NORMAL.sf(-better / se)
    decision = np.where(p < alpha, "passed", np.where(harm < alpha, "failed", "inconclusive"))
    return p, np.where(np.isfinite(p), decision, "not compared")
