"""Recall at a fixed precision: the largest recall@j, j <= k, whose precision@j reaches
``min_precision`` (0 when none does), per query.

Precision only rises at a relevant document and recall only changes there, so the best j is
always the rank of a relevant document: the value is c / R for the largest number c of
relevant documents found at a rank r <= k with c / r >= min_precision.

torchmetrics' ``RetrievalRecallAtFixedPrecision`` applies the rule once, to the precision and
recall curves averaged over queries; rankwise applies it per query and averages the results.
The averaged curves are ``P.1,...,k`` and ``recall.1,...,k``.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Cutoff, Family, Param


def recall_at_precision(rl: RankedLists, k: int, min_precision: float) -> np.ndarray:
    """Recall at precision >= ``min_precision`` within the top ``k``.

    >>> from rankwise.metrics.ranking._example import example
    >>> recall_at_precision(example(), 5, 0.5).tolist()   # rank 4: 2 relevant, P = 2/4 -> recall 2/3
    [0.6666666666666666]
    >>> recall_at_precision(example(), 5, 0.75).tolist()  # rank 1: P = 1 -> recall 1/3
    [0.3333333333333333]
    """
    ok = (rl.rel_rank0 < k) & (rl.rel_cum >= min_precision * (rl.rel_rank0 + 1.0))
    best = np.zeros(rl.n_queries)
    np.maximum.at(best, rl.rel_qidx[ok], rl.rel_cum[ok].astype(np.float64))
    return np.divide(best, rl.num_rel, out=np.zeros(rl.n_queries), where=rl.num_rel > 0)


RECALL_AT_PRECISION = Family(
    "recall_at_precision",
    lambda rl, conv, ks, a: np.column_stack([recall_at_precision(rl, k, a["min_precision"]) for k in ks]),
    "Largest recall@j (j <= k) whose precision@j is at least min_precision.",
    cutoff=Cutoff(int, (10,)), params=(Param("min_precision", float, 0.5, "precision to reach", low=0.0, high=1.0,
                                             in_name=True),),
    syntax="pairs", canonical="RecallAtPrecision", cutoff_aliases=("recall_at_precision", "r_at_p"),
    reference="torchmetrics RetrievalRecallAtFixedPrecision (per query)")
