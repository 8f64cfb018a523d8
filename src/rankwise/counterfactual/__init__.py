"""Counterfactual (off-policy) estimation: IPS, SNIPS, doubly robust, switch and their
relatives over a logged bandit feedback table, and the position-based estimators of a ranking
policy's value (PBM-IPS, slate pseudo-inverse). Intervals come from ``rankwise.stats``.

>>> import numpy as np
>>> from rankwise import counterfactual
>>> est = counterfactual.estimate(np.array([1.0, 0.0]), np.array([0.5, 0.5]), np.array([1.0, 0.0]), "ips",
...                               resamples=0)
>>> est["value"]   # weights 2 and 0: (1 * 2 + 0 * 0) / 2
1.0
"""

from __future__ import annotations

from rankwise.counterfactual.estimators import estimate, estimate_all
from rankwise.counterfactual.ranking import pbm_ips, position_propensities, slate_estimate

__all__ = ["estimate", "estimate_all", "pbm_ips", "position_propensities", "slate_estimate"]
