"""Sequential per-query sums, so that float results match a row-by-row loop bit for bit."""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments


def seq_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of each segment, adding rows in order (as trec_eval's C loops do).

    >>> seq_sum(np.array([0.1, 0.2, 0.3]), np.array([0, 3])).tolist()
    [0.6000000000000001]
    """
    if values.dtype.kind != "f":
        return segments.segment_sum(values, offsets)
    cum = segments.segment_cumsum(values.astype(np.float64), offsets)
    return segments.value_at(cum, offsets, np.diff(offsets))


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0.

    >>> safe_divide(np.array([1.0, 2.0]), np.array([4, 0])).tolist()
    [0.25, 0.0]
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out
