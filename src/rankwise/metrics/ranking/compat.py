"""Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021): rank-biased overlap between the run
and an ideal ranking of the relevant documents.

The ideal ranking holds the relevant judged documents (label >= the relevance level), best
grade first; within a grade the run's order, then the documents the run did not retrieve.
With depth D = max(retrieved, relevant) and w_d = p^(d-1)::

    RBO(run, ideal) = sum_{d=1..D} w_d |run[:d] & ideal[:d]| / d  /  sum_{d=1..D} w_d

and Compat = RBO(run, ideal) / RBO(ideal, ideal) (``normalize``), 0 without relevant documents.
A relevant retrieved document at run rank b and ideal rank a is in both prefixes from depth
max(a, b) on, so the overlap sum is sum_x (H(D) - H(max(a_x, b_x) - 1)) with H(n) the partial
sums of w_d / d: no loop over depths or queries.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Family, Param


def _partial_sums(p: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(H, G): H[k] = sum_{d<=k} p^(d-1) / d and G[k] = sum_{d<=k} p^(d-1), with H[0] = G[0] = 0."""
    d = np.arange(1, n + 1, dtype=np.float64)
    w = np.cumprod(np.concatenate(([1.0], np.full(max(n - 1, 0), p))))[:n]
    return np.concatenate(([0.0], np.cumsum(w / d))), np.concatenate(([0.0], np.cumsum(w)))


def _ideal_rank(rl: RankedLists) -> np.ndarray:
    """1-based rank in the ideal ranking of every relevant retrieved row."""
    rows, q = rl.rel_rows, rl.rel_qidx
    label = rl.label[rows]
    levels = rl.level_values
    counts = rl.level_counts
    # relevant judged documents of a better grade, retrieved or not
    better = np.zeros(len(rows), dtype=np.int64)
    for i, level in enumerate(levels.tolist()):
        if level >= rl.rel_level:
            better += np.where(label < level, counts[q, i], 0)
    # rows of the same grade ranked above, in the run (rows are in rank order within a query)
    order = np.lexsort((np.arange(len(rows)), label, q))
    key_q, key_l = q[order], label[order]
    start = np.ones(len(rows), dtype=bool)
    start[1:] = (key_q[1:] != key_q[:-1]) | (key_l[1:] != key_l[:-1])
    group_start = np.maximum.accumulate(np.where(start, np.arange(len(rows)), 0))
    same_above = np.empty(len(rows), dtype=np.int64)
    same_above[order] = np.arange(len(rows)) - group_start
    return better + same_above + 1


def compatibility(rl: RankedLists, p: float = 0.95, normalize: bool = True) -> np.ndarray:
    """Compat per query (see the module docstring).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(compatibility(example(), p=0.5, normalize=False)[0]), 6)
    0.733333

    Arithmetic: run ranks of the relevant d1 (label 2) and d3 (label 1) are 1 and 4; ideal ranks
    1 and 2 (d3 is the retrieved label-1 document); D = 5 and w = 1, .5, .25, .125, .0625.
    Overlap by depth: 1, 1, 1, 2, 2 -> sum w_d overlap_d / d = 1 + .25 + .0833 + .0625 + .025
    = 1.4208; sum w = 1.9375; 1.4208 / 1.9375 = 0.7333.
    """
    num_rel = rl.num_rel
    depth = np.maximum(rl.num_ret, num_rel)
    h, g = _partial_sums(p, int(depth.max(initial=0)))
    q = rl.rel_qidx
    meet = np.maximum(_ideal_rank(rl), rl.rel_rank0 + 1)
    overlap = np.bincount(q, weights=h[depth[q]] - h[meet - 1], minlength=rl.n_queries)
    norm = g[depth]
    if normalize:
        best = g[num_rel] + num_rel * (h[depth] - h[num_rel])
        return np.divide(overlap, best, out=np.zeros(rl.n_queries), where=best > 0)
    return np.divide(overlap, norm, out=np.zeros(rl.n_queries), where=norm > 0)


COMPAT = Family(
    "compat", lambda rl, conv, cutoffs, a: compatibility(rl, a["p"], a["normalize"]),
    "Compatibility: rank-biased overlap with the ideal ranking, normalised by the ideal's own.",
    params=(Param("p", float, 0.95, "persistence of the rank-biased overlap", low=0.0, high=1.0, in_name=True),
            Param("normalize", bool, True, "divide by the ideal ranking's own overlap")),
    syntax="pairs", canonical="Compat", aliases=("compat",), reference="ir_measures Compat (Clarke et al.)")
