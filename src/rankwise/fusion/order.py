"""Sorting for fusion: row orders by query, score and a tie key, ranks within queries, and
distinct integer keys. NumPy sorts integers with SIMD but not their indices (``np.argsort`` of
10M int64 takes seconds where ``np.sort`` takes a third of one), so an integer key that leaves
room packs its row number in its low bits and is sorted instead; scores are sorted one query
at a time, which keeps each sort in cache.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rankwise.data.distinct import distinct

SMALL_QUERY_ROWS = 16
"""Below this many rows per query on average, one global sort beats a sort per query."""


def int_order(key: np.ndarray) -> np.ndarray:
    """The stable row order of an integer key (``np.argsort(key, kind="stable")``), by a radix
    sort when the key spans 16 bits or less, else by sorting the key with the row number packed
    in its low bits when both fit in 63 bits.

    >>> int_order(np.array([7, 3, 7, 1])).tolist()
    [3, 1, 0, 2]
    """
    n = len(key)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = int(key.min()), int(key.max())
    if high - low < 2**16:
        return np.argsort((key - low).astype(np.uint16), kind="stable")
    index_bits = max((n - 1).bit_length(), 1)
    if (high - low).bit_length() + index_bits > 63:
        return np.argsort(key, kind="stable")
    packed = key.astype(np.int64)  # a copy: shifted and packed in place
    packed -= np.int64(low)
    packed <<= np.int64(index_bits)
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    packed &= np.int64((1 << index_bits) - 1)
    return packed


def unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct integer keys, sorted, and each key's position among them
    (``np.unique(keys, return_inverse=True)``, by ``int_order``).

    >>> distinct, at = unique_inverse(np.array([30, 10, 30, 20]))
    >>> distinct.tolist(), at.tolist()
    ([10, 20, 30], [2, 0, 2, 1])
    """
    order = int_order(keys)
    ordered = keys[order]
    first = np.ones(len(ordered), dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(first, dtype=np.int64) - 1
    return ordered[first], inverse


def _query_blocks(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row order that puts each query's rows together (stable), and each block's start."""
    order = np.arange(len(q)) if bool((q[1:] >= q[:-1]).all()) else int_order(q)
    sq = q[order]
    starts = np.flatnonzero(np.concatenate([[True], sq[1:] != sq[:-1]]))
    return order, starts


def _by_score_within_blocks(score: np.ndarray, order: np.ndarray, starts: np.ndarray, stable: bool) -> np.ndarray:
    """``order`` (rows grouped by query, blocks from ``starts``) with each block sorted by
    score descending; equal scores keep their order when ``stable``."""
    n = len(order)
    kind: Literal["stable"] | None = "stable" if stable else None
    if n < SMALL_QUERY_ROWS * len(starts):  # many small queries: one global sort, then by block
        block = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
        by_score = np.argsort(-score[order], kind=kind)
        return order[by_score[int_order(block[by_score])]]
    negated = -score[order]
    out = np.empty(n, dtype=np.int64)
    ends = np.append(starts[1:], n)
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        out[a:b] = order[a:b][np.argsort(negated[a:b], kind=kind)]
    return out


def ranked_order(q: np.ndarray, score: np.ndarray, tie_key: np.ndarray, input_order: bool = False) -> np.ndarray:
    """Row order by query, score descending, then ``tie_key`` (or input order); the tie key is
    sorted only within the groups of rows of one query with one score.

    >>> ranked_order(np.array([0, 0, 0]), np.array([1.0, 2.0, 1.0]), np.array([5, 0, 3])).tolist()
    [1, 2, 0]
    """
    if len(q) == 0:
        return np.zeros(0, dtype=np.int64)
    order, starts = _query_blocks(q)
    order = _by_score_within_blocks(score, order, starts, stable=input_order)
    if input_order:
        return order
    sq, ss = q[order], score[order]
    tied = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])  # row i + 1 ties row i
    if not bool(tied.any()):
        return order
    starts_group = np.concatenate([[True], ~tied])
    in_tie = ~starts_group
    in_tie[:-1] |= tied  # the first row of each tied group too
    rows = np.flatnonzero(in_tie)
    group = np.cumsum(starts_group[rows], dtype=np.int64)  # tied groups numbered in order
    key = tie_key[order[rows]].astype(np.int64)
    low, span = int(key.min()), int(key.max()) - int(key.min()) + 1
    if int(group[-1]) < np.iinfo(np.int64).max // span:  # one integer key: group, then tie key
        within = int_order(group * np.int64(span) + (key - np.int64(low)))
    else:  # pragma: no cover - tie keys wider than 64 bits allow
        within = np.lexsort((key, group))
    order[rows] = order[rows][within]
    return order


def ranks_within_query(q: np.ndarray, score: np.ndarray, tie_key: np.ndarray, input_order: bool = False
                       ) -> np.ndarray:
    """Each row's rank (from 1) within its query, by score descending, then ``tie_key`` (or
    input order). A run as systems write it (each query's rows together, scores not increasing,
    no ties unless ``input_order``) is ranked in one pass without sorting.

    >>> ranks_within_query(np.array([1, 1, 0, 0]), np.array([3.0, 1.0, 2.0, 5.0]), np.arange(4)).tolist()
    [1.0, 2.0, 2.0, 1.0]
    """
    n = len(q)
    if n == 0:
        return np.zeros(0)
    new_query = np.concatenate([[True], q[1:] != q[:-1]])
    starts = np.flatnonzero(new_query)
    steps = np.diff(score)[~new_query[1:]]
    grouped = len(distinct(q[starts])) == len(starts)
    if not (grouped and bool((steps < 0).all() if not input_order else (steps <= 0).all())):
        order = ranked_order(q, score, tie_key, input_order)
        sorted_q = q[order]
        rank = np.empty(n)
        rank[order] = np.arange(n) - np.searchsorted(sorted_q, sorted_q, side="left") + 1
        return rank
    return (np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n))) + 1).astype(np.float64)
