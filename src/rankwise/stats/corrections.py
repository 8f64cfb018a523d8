"""Multiple-comparison corrections across a family of p-values (statsmodels)."""

from __future__ import annotations

import numpy as np

CORRECTIONS = {"none": None, "bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh",
               "benjamini-hochberg": "fdr_bh", "fdr_bh": "fdr_bh"}


def correct(p_values: np.ndarray, method: str = "holm", alpha: float = 0.05) -> np.ndarray:
    """Adjusted p-values (Bonferroni, Holm or Benjamini-Hochberg); ``none`` returns them as is.

    >>> correct(np.array([0.01, 0.04, 0.03]), "bonferroni").round(2).tolist()
    [0.03, 0.12, 0.09]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; expected one of {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=np.float64)
    if CORRECTIONS[method] is None or len(p) == 0:
        return p.copy()
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, alpha=alpha, method=CORRECTIONS[method])[1]
