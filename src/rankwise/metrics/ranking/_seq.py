"""Sequential per-query sums, so that float results match a row-by-row loop bit for bit.

Adding 0.0 never changes a float sum, so zero terms are dropped first: a metric whose terms
live on relevant rows only sums a few thousand values, not millions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.engine import segments


def _dense_seq_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    cum = segments.segment_cumsum(values.astype(np.float64), offsets)
    return segments.value_at(cum, offsets, np.diff(offsets))


@dataclass
class SparseTerms:
    """The non-zero terms of a per-row quantity, in rank order, with their ranks and offsets."""

    values: np.ndarray
    rank0: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, offsets: np.ndarray, rank0: np.ndarray | None = None) -> SparseTerms:
        nz = np.flatnonzero(values)
        seg = np.searchsorted(offsets, nz, side="right") - 1
        counts = np.bincount(seg, minlength=len(offsets) - 1)
        sub = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        ranks = (nz - offsets[seg]) if rank0 is None else rank0[nz]
        return cls(values[nz].astype(np.float64), ranks, sub)

    def _cum(self) -> np.ndarray:
        if not hasattr(self, "_cum_cache"):
            self._cum_cache = segments.segment_cumsum(self.values, self.offsets)
        return self._cum_cache

    def total(self) -> np.ndarray:
        """Sequential sum of every term of each segment."""
        return segments.value_at(self._cum(), self.offsets, np.diff(self.offsets))

    def upto(self, k: int) -> np.ndarray:
        """Sequential sum of the terms at ranks < k of each segment."""
        keep = self.rank0 < k
        seg = np.searchsorted(self.offsets, np.flatnonzero(keep), side="right") - 1
        count = np.bincount(seg, minlength=len(self.offsets) - 1)
        return segments.value_at(self._cum(), self.offsets, count)


def seq_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of each segment, adding rows in order (as trec_eval's C loops do).

    >>> seq_sum(np.array([0.1, 0.2, 0.3]), np.array([0, 3])).tolist()
    [0.6000000000000001]
    >>> seq_sum(np.array([0.0, 0.5, 0.0, 0.25]), np.array([0, 2, 4])).tolist()
    [0.5, 0.25]
    """
    if values.dtype.kind != "f":
        return segments.segment_sum(values, offsets)
    if np.count_nonzero(values) * 2 < len(values):
        return SparseTerms.of(values, offsets).total()
    return _dense_seq_sum(values, offsets)


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
