"""Primitives over segmented (CSR-style) arrays: one contiguous array, per-segment offsets.

``offsets`` has one more entry than there are segments; segment ``i`` is
``values[offsets[i]:offsets[i + 1]]``. Every function is vectorised: no Python loop over
segments.
"""

from __future__ import annotations

import numpy as np

from rankwise.data.distinct import distinct


def segment_ids(offsets: np.ndarray) -> np.ndarray:
    """Segment index of every element.

    >>> segment_ids(np.array([0, 2, 2, 3])).tolist()
    [0, 0, 2]
    """
    lengths = np.diff(offsets)
    return np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)


def positions(offsets: np.ndarray) -> np.ndarray:
    """0-based position of every element inside its segment.

    >>> positions(np.array([0, 2, 5])).tolist()
    [0, 1, 0, 1, 2]
    """
    n = int(offsets[-1])
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))


def segment_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of each segment (0 for empty segments).

    >>> segment_sum(np.array([1.0, 2.0, 4.0]), np.array([0, 2, 2, 3])).tolist()
    [3.0, 0.0, 4.0]
    >>> segment_sum(np.array([1, 2, 4]), np.array([0, 3, 3])).tolist()   # a trailing empty segment
    [7, 0]
    """
    n_seg = len(offsets) - 1
    out_dtype = np.float64 if values.dtype.kind == "f" else np.int64
    if n_seg == 0:
        return np.zeros(0, dtype=out_dtype)
    if len(values) == 0:
        return np.zeros(n_seg, dtype=out_dtype)
    # one zero past the end makes every start (even of trailing empty segments) a valid index
    padded = np.zeros(len(values) + 1, dtype=out_dtype)
    padded[:-1] = values
    sums = np.add.reduceat(padded, offsets[:-1])
    sums[np.diff(offsets) == 0] = 0
    return sums


def segment_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Inclusive running sum inside each segment.

    Integers use one global cumulative sum (exact). Floats are summed row by row inside each
    segment, in order, as a sequential loop would, through padded 2-D views (segments of
    similar length together), so that per-segment results never carry rounding from earlier
    segments.

    >>> segment_cumsum(np.array([1, 2, 3, 4]), np.array([0, 2, 4])).tolist()
    [1, 3, 3, 7]
    >>> segment_cumsum(np.array([0.1, 0.2, 0.3]), np.array([0, 1, 1, 3])).tolist()
    [0.1, 0.2, 0.5]
    """
    n = len(values)
    if n == 0:
        return values.copy()
    lengths = np.diff(offsets)
    if values.dtype.kind in "iub":
        total = np.cumsum(values, dtype=np.int64)
        before = np.concatenate(([0], total))[offsets[:-1]]
        return total - np.repeat(before, lengths)
    max_len = int(lengths.max())
    n_seg = len(lengths)
    pos = positions(offsets)
    seg = segment_ids(offsets)
    if max_len * n_seg <= 4 * n + 1024:
        return _padded_cumsum(values, seg, pos, n_seg, max_len)
    # segments of very different lengths: pad each class of similar length separately, so the
    # padding stays below the data, and every sum stays sequential
    out = np.empty(n, dtype=np.float64)
    local = np.empty(n_seg, dtype=np.int64)
    for _, members in length_classes(lengths):
        local[:] = -1
        local[members] = np.arange(len(members))
        rows = np.flatnonzero(local[seg] >= 0)
        out[rows] = _padded_cumsum(values[rows], local[seg[rows]], pos[rows], len(members),
                                   int(lengths[members].max()))
    return out


def length_classes(lengths: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Items grouped by length rounded up to a power of two: ``(width, indices)`` per class
    present, ``width`` the power of two. Padding each class to its own width costs less than
    twice its data, however long the longest item is (empty items go with length 1).

    >>> [(w, m.tolist()) for w, m in length_classes(np.array([1, 9, 2, 0, 1000]))]
    [(1, [0, 3]), (2, [2]), (16, [1]), (1024, [4])]
    """
    cls = np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64)
    return [(int(2 ** c), np.flatnonzero(cls == c)) for c in distinct(cls)]


def _padded_cumsum(values: np.ndarray, seg: np.ndarray, pos: np.ndarray, n_rows: int, width: int) -> np.ndarray:
    """Row-wise running sums of values scattered into an (n_rows, width) zero-padded matrix."""
    padded = np.zeros((n_rows, width), dtype=np.float64)
    padded[seg, pos] = values
    np.cumsum(padded, axis=1, out=padded)
    return padded[seg, pos]


def value_at(cumulative: np.ndarray, offsets: np.ndarray, k: np.ndarray | int) -> np.ndarray:
    """Value of an inclusive per-segment cumulative array after the first ``k`` elements.

    ``k`` is clipped to the segment length; ``k == 0`` (or an empty segment) gives 0.

    >>> value_at(np.array([1, 3, 3, 7]), np.array([0, 2, 4]), 1).tolist()
    [1, 3]
    """
    lengths = np.diff(offsets)
    take = np.minimum(np.broadcast_to(np.asarray(k, dtype=np.int64), lengths.shape), lengths)
    idx = offsets[:-1] + take - 1
    safe = np.clip(idx, 0, max(len(cumulative) - 1, 0))
    if len(cumulative) == 0:
        return np.zeros(len(lengths), dtype=cumulative.dtype)
    out = cumulative[safe].copy()
    out[take <= 0] = 0
    return out


def reverse_cummax(values: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Maximum of each element and every later element of the same segment (exact).

    ``seg`` must be non-decreasing. Works on exact ordinal codes, so no rounding is added.

    >>> reverse_cummax(np.array([0.5, 0.2, 0.3, 0.1]), np.array([0, 0, 0, 1]), 2).tolist()
    [0.5, 0.3, 0.3, 0.1]
    """
    if len(values) == 0:
        return values.copy()
    uniq, codes = np.unique(values, return_inverse=True)
    n_codes = len(uniq)
    key = (n_seg - 1 - seg).astype(np.int64) * n_codes + codes.reshape(-1)
    rev = np.maximum.accumulate(key[::-1])[::-1]
    return uniq[rev - (n_seg - 1 - seg).astype(np.int64) * n_codes]
