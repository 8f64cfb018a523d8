"""Multiple-comparison corrections across a family of p-values (statsmodels)."""

from __future__ import annotations

import numpy as np

from rankwise.errors import OptionError

CORRECTIONS = {"none": None, "bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh",
               "benjamini-hochberg": "fdr_bh", "fdr_bh": "fdr_bh"}


def correct(p_values: np.ndarray, method: str = "holm", alpha: float = 0.05) -> np.ndarray:
    """Adjusted p-values (Bonferroni, Holm or Benjamini-Hochberg); ``none`` returns them as is.

    >>> correct(np.array([0.01, 0.04, 0.03]), "bonferroni").round(2).tolist()
    [0.03, 0.12, 0.09]
    """
    if method not in CORRECTIONS:
        raise OptionError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=np.float64)
    if CORRECTIONS[method] is None or len(p) == 0:
        return p.copy()
    if method == "holm":
        return holm(p)
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, alpha=alpha, method=CORRECTIONS[method])[1]


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: sort ascending, multiply the i-th smallest (0-based) by
    m - i, take the running maximum, cap at 1. (Equal to statsmodels' ``holm``, which the tests
    check; computed here because statsmodels runs a full ``gc.collect()`` on every Holm call,
    about 0.1 s each in a large process.)

    >>> holm(np.array([0.01, 0.04, 0.03])).round(2).tolist()   # 0.01*3, max(0.03*2, 0.03), 0.04*1 -> 0.06
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * np.arange(len(p), 0, -1)
    adjusted = np.minimum(np.maximum.accumulate(scaled), 1.0)
    out = np.empty_like(p)
    out[order] = adjusted
    return out
