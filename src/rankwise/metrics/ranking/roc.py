"""ROC curves of rankings: the documents of a query ranked by the run, then every judged
document the run did not retrieve (tied at the bottom). Positives are the relevant judged
documents (label >= relevance level); negatives every other retrieved document plus the judged
non-relevant documents not retrieved."""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Family, of_lists


def roc_curves(rl: RankedLists, grid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertically averaged ROC: (fpr grid, mean tpr, per-query AUC).

    Per query the curve steps through the ranking; unretrieved judged documents close it with a
    straight segment to (1, 1) (their order is unknown). AUC is the area under that curve.

    >>> from rankwise.metrics.ranking._example import example
    >>> fpr, tpr, auc = roc_curves(example(), np.array([0.0, 0.5, 1.0]))
    >>> [round(float(x), 4) for x in auc]   # steps (0,1/3) (1/3,1/3) (2/3,2/3) (1,2/3) (1,1): 1/9+1/9+2/9
    [0.4444]
    """
    grid = np.linspace(0.0, 1.0, 101) if grid is None else grid
    tprs = np.zeros((rl.n_queries, len(grid)))
    aucs = np.zeros(rl.n_queries)
    pos_total = rl.num_rel.astype(np.float64)
    neg_judged = rl.num_judged_nonrel
    for q in range(rl.n_queries):  # plotting only: one small curve per query
        lab = rl.label[rl.offsets[q]: rl.offsets[q + 1]]
        rel = lab >= rl.rel_level
        retrieved_neg = (~rel).sum()
        judged_neg_ret = ((lab >= 0) & ~rel).sum()
        neg_total = retrieved_neg + (neg_judged[q] - judged_neg_ret)
        if pos_total[q] == 0 or neg_total == 0:
            tprs[q] = np.nan
            aucs[q] = np.nan
            continue
        tp = np.concatenate(([0], np.cumsum(rel), [pos_total[q]]))
        fp = np.concatenate(([0], np.cumsum(~rel), [neg_total]))
        tpr, fpr = tp / pos_total[q], fp / neg_total
        aucs[q] = np.trapezoid(tpr, fpr)
        # right-continuous step: for equal fpr keep the highest tpr reached
        tprs[q] = np.interp(grid, fpr, tpr)
    with np.errstate(invalid="ignore"):
        defined = ~np.isnan(tprs[:, 0])
        mean_tpr = tprs[defined].mean(axis=0) if defined.any() else np.full(len(grid), np.nan)
    return grid, mean_tpr, aucs


def auc(rl: RankedLists) -> np.ndarray:
    """Per-query ROC AUC (NaN for a query with one class only).

    >>> from rankwise.metrics.ranking._example import example
    >>> auc(example()).round(4).tolist()   # 3 positives x 3 negatives: 3 + 1 + 0 pairs ordered -> 4/9
    [0.4444]
    """
    return roc_curves(rl, np.array([0.0, 1.0]))[2]


AUC = Family("AUC", of_lists(auc),
             "Per-query ROC AUC (unretrieved judged docs tied at the bottom; undefined with one class).",
             summary="nanmean", canonical="AUC", aliases=("auc", "roc_auc"), reference="scikit-learn roc_auc_score")
