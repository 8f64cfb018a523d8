"""Confidence intervals and effect sizes for a paired mean difference d = b - a."""

from __future__ import annotations

import numpy as np


def t_interval(d: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """mean(d) +- t_{n-1, (1+c)/2} * sd(d) / sqrt(n).

    >>> [round(x, 4) for x in t_interval(np.array([0.1, 0.2, 0.3, 0.2]))]
    [0.0701, 0.3299]
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n < 2:
        return (float("nan"), float("nan"))
    sem = d.std(ddof=1) / np.sqrt(n)
    if sem == 0:
        return (float(d.mean()), float(d.mean()))
    low, high = stats.t.interval(confidence, n - 1, loc=d.mean(), scale=sem)
    return float(low), float(high)


def bootstrap_interval(d: np.ndarray, confidence: float = 0.95, method: str = "percentile",
                       resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Bootstrap CI of mean(d) by resampling queries (scipy.stats.bootstrap; ``percentile``
    or ``BCa``).

    >>> low, high = bootstrap_interval(np.linspace(0, 0.2, 30), resamples=2000)
    >>> bool(low < 0.1 < high)
    True
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2 or np.all(d == d[0]):
        return (float(d.mean()) if len(d) else float("nan"),) * 2
    res = stats.bootstrap((d,), np.mean, confidence_level=confidence, n_resamples=resamples,
                          method=method, random_state=np.random.default_rng(seed), vectorized=True)
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def cohens_d(d: np.ndarray) -> float:
    """Cohen's d for paired data (d_z): mean(d) / sd(d), sd with n - 1.

    >>> round(cohens_d(np.array([0.1, 0.2, 0.3, 0.2])), 4)
    2.4495
    """
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2:
        return float("nan")
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0 if d.mean() == 0 else float("inf") * np.sign(d.mean())
    return float(d.mean() / sd)


def wins_ties_losses(d: np.ndarray) -> tuple[int, int, int]:
    """Queries where b beats a, equals it, loses to it.

    >>> wins_ties_losses(np.array([0.1, 0.0, -0.2, 0.3]))
    (2, 1, 1)
    """
    d = np.asarray(d)
    return int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
