"""What every beyond-accuracy metric shares: its return shape and the per-user mean."""

from __future__ import annotations

import math

import numpy as np

Value = tuple[float, np.ndarray | None]
"""The run's value and the per-user values (None for metrics of the whole run)."""


def _per_user(values: np.ndarray, owner: np.ndarray, n: int, width: int | None = None) -> np.ndarray:
    """The mean of ``values`` per list (NaN for an empty list); ``width``: every list has that
    many values, list by list (``RecsysData.top_width``), so the mean is one per table row.

    >>> _per_user(np.array([1.0, 3.0, 5.0]), np.array([0, 0, 2]), 3).tolist()
    [2.0, nan, 5.0]
    >>> _per_user(np.array([1.0, 3.0, 5.0, 7.0]), np.array([0, 0, 1, 1]), 2, width=2).tolist()
    [2.0, 6.0]
    """
    if width and width * n == len(values):
        return values.reshape(n, width).sum(axis=1) / width   # integers summed exactly, then divided
    total = np.bincount(owner, weights=values, minlength=n)
    count = np.bincount(owner, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _mean(per_user: np.ndarray) -> float:
    """The mean over the users for whom a value is defined (NaN when none is).

    >>> _mean(np.array([1.0, np.nan, 3.0]))
    2.0
    """
    kept = per_user[~np.isnan(per_user)]
    return float(kept.mean()) if len(kept) else math.nan
