"""Transcendental functions evaluated by the C library, as trec_eval's C code evaluates them.

NumPy's vectorised ``log2`` and ``log`` (SIMD implementations on AVX-512 machines)
can differ from the C library's by one unit in the last place, which is enough to change a
printed digit. These helpers evaluate each *distinct* argument once with Python's ``math``
module (a thin wrapper of the platform's libm) and scatter the results, so they stay fast on
millions of rows whose arguments repeat (ranks, label gains).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

_LOG2_TABLE = np.zeros(0, dtype=np.float64)


def _by_value(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    uniq, inverse = np.unique(x, return_inverse=True)
    values = np.fromiter((fn(v) for v in uniq.tolist()), dtype=np.float64, count=len(uniq))
    return values[inverse].reshape(x.shape)


def log2_of_count(n: np.ndarray) -> np.ndarray:
    """C ``log2((double) n)`` for non-negative integers ``n`` (ranks), from a cached table.

    >>> log2_of_count(np.array([1, 2, 8])).tolist()
    [0.0, 1.0, 3.0]
    """
    global _LOG2_TABLE
    n = np.asarray(n)
    if n.size == 0:
        return np.zeros(n.shape, dtype=np.float64)
    top = int(n.max()) + 1
    if top > len(_LOG2_TABLE):
        size = max(top, 2 * len(_LOG2_TABLE), 1024)
        _LOG2_TABLE = np.array([-math.inf] + [math.log2(i) for i in range(1, size)], dtype=np.float64)
    return _LOG2_TABLE[n.astype(np.int64)]


def log2(x: np.ndarray) -> np.ndarray:
    """C ``log2`` of each value.

    >>> log2(np.array([3.0, 3.0, 0.5])).tolist()
    [1.584962500721156, 1.584962500721156, -1.0]
    """
    return _by_value(math.log2, x)


def log(x: np.ndarray) -> np.ndarray:
    """C ``log`` of each positive value.

    >>> log(np.array([1.0, math.e])).tolist()
    [0.0, 1.0]
    """
    return _by_value(math.log, x)
