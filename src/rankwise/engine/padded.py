"""RankedLists from padded batches: ``[batch, list]`` scores and labels with a ``where`` mask,
as training loops hold them. Each row is one query; only its valid items exist (the judged
universe is the list itself)."""

from __future__ import annotations

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.engine.align import _tie_groups
from rankwise.engine.ranked import RankedLists
from rankwise.errors import RankwiseError


def ranked_from_padded(scores: np.ndarray, labels: np.ndarray, where: np.ndarray | None = None,
                       ties: str = "input", rel_level: int = 1, continuous: bool = False
                       ) -> tuple[RankedLists, np.ndarray]:
    """Sort every row by score (descending; tied items keep their column order, or
    ``ties='expected'`` averages over their orders) and return the lists and the indices of the
    rows kept (rows without a valid item are padding and left out). ``continuous``: the labels
    are continuous relevance values, encoded as level codes with their values in
    ``level_gains`` (each batch its own codes: per-query values do not depend on them).

    >>> rl, kept = ranked_from_padded(np.array([[0.2, 0.9, 0.5], [0.1, 0.3, 0.0]]),
    ...                               np.array([[1, 0, 2], [0, 1, 0]]), np.array([[1, 1, 1], [1, 1, 0]], bool))
    >>> rl.label.tolist(), rl.offsets.tolist(), kept.tolist()
    ([0, 2, 1, 1, 0], [0, 3, 5], [0, 1])
    """
    if scores.ndim != 2 or scores.shape != labels.shape:
        raise RankwiseError(f"expected [batch, list] scores and labels of one shape, got {scores.shape} and "
                            f"{labels.shape}")
    if ties not in ("input", "expected"):
        raise RankwiseError(f"ties={ties!r}: padded batches support 'input' (column order) and 'expected'")
    valid = np.ones(scores.shape, dtype=bool) if where is None else where
    if np.isnan(scores[valid]).any():
        raise RankwiseError("NaN scores among the valid items")
    table = None
    if continuous:
        from rankwise.data.containers import relevance_values

        values = np.where(valid, np.asarray(labels, dtype=np.float64), 0.0)
        codes, table = relevance_values(values.ravel(), "batch")
        labels = codes.reshape(values.shape)
    int_labels = labels.astype(np.int64)
    if (int_labels[valid] != labels[valid]).any() or (int_labels[valid] < 0).any():
        raise RankwiseError("labels of valid items must be non-negative integers (graded relevance)")
    counts = valid.sum(axis=1)
    kept = np.flatnonzero(counts > 0)
    key = np.where(valid, -scores.astype(np.float64), np.inf)[kept]
    order = np.argsort(key, axis=1, kind="stable")
    sorted_valid = np.take_along_axis(valid[kept], order, axis=1)
    label = np.take_along_axis(int_labels[kept], order, axis=1)[sorted_valid]
    ranked_scores = np.take_along_axis(scores[kept].astype(np.float64), order, axis=1)[sorted_valid]
    offsets = np.concatenate(([0], np.cumsum(counts[kept]))).astype(np.int64)
    level_values = distinct(label)
    level_counts = np.zeros((len(kept), len(level_values)), dtype=np.int64)
    if len(label):
        rows = np.repeat(np.arange(len(kept)), counts[kept])
        np.add.at(level_counts, (rows, np.searchsorted(level_values, label)), 1)
    lists = RankedLists(query_ids=kept.astype(str).astype(object), offsets=offsets, label=label,
                        level_values=level_values, level_counts=level_counts, rel_level=rel_level,
                        run_name="batch", in_run=np.ones(len(kept), dtype=bool), level_gains=table)
    if ties == "expected":
        lists.tie_start, lists.tie_size = _tie_groups(ranked_scores, offsets)
    else:
        lists.tie_spans = np.zeros((0, 3), dtype=np.int64)
    return lists, kept


def padded_groups(indexes: np.ndarray, scores: np.ndarray, labels: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flat rows (query index, score, label) as padded lists, one per query in ascending index
    order, rows of a query in their input order: ``(scores, labels, where)`` of shape
    [queries, longest list].

    >>> s, l, w = padded_groups(np.array([7, 3, 7]), np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.0, 0.0]))
    >>> s.tolist(), l.tolist(), w.tolist()
    ([[0.2, 0.0], [0.1, 0.3]], [[0.0, 0.0], [1.0, 0.0]], [[True, False], [True, True]])
    """
    order = np.argsort(indexes, kind="stable")
    sorted_ids = indexes[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    sizes = np.diff(np.r_[starts, len(sorted_ids)])
    rows = np.repeat(np.arange(len(starts)), sizes)
    columns = np.arange(len(sorted_ids)) - np.repeat(starts, sizes)
    width = int(sizes.max()) if len(sizes) else 0
    out_scores, out_labels = np.zeros((len(starts), width)), np.zeros((len(starts), width))
    where = np.zeros((len(starts), width), dtype=bool)
    out_scores[rows, columns], out_labels[rows, columns], where[rows, columns] = scores[order], labels[order], True
    return out_scores, out_labels, where
