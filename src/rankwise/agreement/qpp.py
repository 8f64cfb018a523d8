"""Evaluation of query performance prediction: how well per-query predicted scores follow the
per-query values of a measure (what a predictor should anticipate).

- Pearson's r, Spearman's rho and Kendall's tau (tau-b) between predicted and actual values,
  as ``scipy.stats``;
- **sMARE** (Faggioli et al., ICTIR 2021): the mean over queries of |rank of the prediction -
  rank of the actual value| / n, ranks 1..n with ties sharing their average rank; 0 is a perfect
  ordering, lower is better.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.errors import RankwiseError


def smare(predicted: np.ndarray, actual: np.ndarray) -> float:
    """Scaled mean absolute rank error.

    >>> smare(np.array([0.9, 0.1, 0.5]), np.array([0.8, 0.3, 0.2]))   # ranks 3,1,2 vs 3,2,1: (0 + 1 + 1) / 3 / 3
    0.2222222222222222
    """
    from scipy.stats import rankdata

    p, a = np.asarray(predicted, dtype=np.float64), np.asarray(actual, dtype=np.float64)
    if len(p) != len(a) or len(p) == 0:
        raise RankwiseError("sMARE needs as many predicted as actual values, at least one")
    return float(np.mean(np.abs(rankdata(p) - rankdata(a)) / len(p)))


def qpp_correlations(predicted: Any, actual: Any) -> dict[str, float]:
    """Pearson, Spearman, Kendall and sMARE between ``predicted`` and ``actual`` per-query values
    (``{query: value}`` dicts or pandas Series indexed by query; the queries of ``actual`` must
    all be predicted; extra predictions are ignored).

    >>> out = qpp_correlations({"q1": 0.9, "q2": 0.1, "q3": 0.5}, {"q1": 0.8, "q2": 0.3, "q3": 0.2})
    >>> round(out["spearman"], 4), round(out["smare"], 4)
    (0.5, 0.2222)
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr

    pred, act = dict(predicted.items()), dict(actual.items())
    missing = sorted(set(act) - set(pred), key=str)
    if missing:
        raise RankwiseError(f"{len(missing)} query(ies) have an actual value but no prediction, e.g. {missing[0]!r}")
    if len(act) < 3:
        raise RankwiseError(f"correlations need at least 3 queries, got {len(act)}")
    queries = sorted(act, key=str)
    p = np.array([float(pred[q]) for q in queries])
    a = np.array([float(act[q]) for q in queries])
    return {"pearson": float(pearsonr(p, a).statistic), "spearman": float(spearmanr(p, a).statistic),
            "kendall": float(kendalltau(p, a).statistic), "smare": smare(p, a), "queries": float(len(queries))}
