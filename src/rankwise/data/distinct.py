"""The sorted distinct values of an array, by one sort.

``np.unique(values)`` (without ``return_index``, ``return_inverse`` or ``return_counts``) hashes
since NumPy 2.3; on a million distinct 64-bit keys that took 2-3 s where a sort takes 0.1 s
(NumPy 2.4, this machine), and its first call imports ``numpy.ma`` (25 ms). Every key rankwise
builds (user x item, session x document, query hashes) can have millions of distinct values, so
``distinct`` is the one way src/ takes them (``tests/test_data_distinct.py`` walks src/ for a
plain ``np.unique``).
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of an array (``np.unique(values)``, flattened; NaNs, sorted
    last, count as one value, as there).

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    >>> distinct(np.array([2.0, np.nan, 1.0, np.nan])).tolist()
    [1.0, 2.0, nan]
    """
    s = np.sort(np.asarray(values).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    if s.dtype.kind in "fc":
        nan = np.isnan(s)
        if nan.any():
            keep &= ~nan
            keep[int(np.argmax(nan))] = True
    return s[keep]


def member(values: np.ndarray, known: np.ndarray, *, known_sorted: bool = False) -> np.ndarray:
    """Whether each of ``values`` is one of ``known`` (``np.isin``), by one sort of ``known``
    (none when ``known_sorted``: already sorted) and a binary search, never a hash table.

    >>> member(np.array([4, 1, 7]), np.array([5, 1, 4, 4])).tolist()
    [True, True, False]
    >>> member(np.array([4, 1, 7]), np.array([1, 4, 5]), known_sorted=True).tolist()
    [True, True, False]
    """
    values = np.asarray(values)
    table = np.asarray(known) if known_sorted else distinct(np.asarray(known))
    if len(table) == 0 or len(values) == 0:
        return np.zeros(values.shape, dtype=bool)
    return np.asarray(table[np.minimum(np.searchsorted(table, values), len(table) - 1)] == values)


def union(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The sorted distinct values of both (``np.union1d``).

    >>> union(np.array([3, 1]), np.array([2, 3])).tolist()
    [1, 2, 3]
    """
    return distinct(np.concatenate([np.asarray(first).ravel(), np.asarray(second).ravel()]))


def difference(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``first`` that are not in ``second`` (``np.setdiff1d``).

    >>> difference(np.array([5, 1, 3, 1]), np.array([3])).tolist()
    [1, 5]
    """
    values = distinct(first)
    return values[~member(values, second)]
