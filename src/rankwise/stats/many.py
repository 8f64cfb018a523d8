"""Tests over many systems at once: Tukey HSD and Friedman with Nemenyi post-hoc comparisons."""

from __future__ import annotations

import numpy as np

from rankwise.errors import OptionError


def tukey_hsd(values: np.ndarray) -> np.ndarray:
    """Pairwise Tukey HSD p-values between systems (columns of ``values``, queries in rows),
    scipy.stats.tukey_hsd on the per-query scores. Returns a systems x systems matrix.

    >>> m = tukey_hsd(np.array([[0.1, 0.5, 0.11], [0.2, 0.6, 0.19], [0.15, 0.55, 0.16]]))
    >>> bool(m[0, 1] < 0.01), bool(m[0, 2] > 0.9)
    (True, True)
    """
    from scipy import stats

    return np.asarray(stats.tukey_hsd(*[values[:, j] for j in range(values.shape[1])]).pvalue)


def friedman(values: np.ndarray) -> float:
    """Friedman test over systems (columns), queries as blocks (scipy)."""
    from scipy import stats

    if values.shape[1] < 3:
        raise OptionError("the Friedman test needs at least three systems")
    return float(stats.friedmanchisquare(*[values[:, j] for j in range(values.shape[1])]).pvalue)


def nemenyi(values: np.ndarray) -> np.ndarray:
    """Nemenyi post-hoc p-values after Friedman: q = |R_i - R_j| / sqrt(k (k + 1) / (6 n)) * sqrt(2)
    against the studentized range distribution with k groups and infinite degrees of freedom
    (R = mean rank of a system over the n queries, ties get mean ranks).

    >>> m = nemenyi(np.array([[0.1, 0.5, 0.3]] * 12))
    >>> round(float(m[0, 1]), 4)
    0.0
    """
    from scipy import stats

    n, k = values.shape
    ranks = np.apply_along_axis(stats.rankdata, 1, values)
    mean_rank = ranks.mean(axis=0)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    q = np.abs(mean_rank[:, None] - mean_rank[None, :]) / se * np.sqrt(2.0)
    return np.asarray(stats.studentized_range.sf(q, k, np.inf))
