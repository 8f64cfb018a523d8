"""Pairwise accuracy (ir_measures' ``Accuracy``): among the retrieved (relevant, non-relevant)
pairs, the fraction ranked relevant first.

Over the top k (all retrieved without a cut-off), with n+ relevant and n- other documents and
a_i the non-relevant documents above the i-th relevant one::

    Accuracy = 1 - sum_i a_i / (n+ * n-)

Undefined (NaN, left out of the mean) without a relevant or without a non-relevant document
in the top k: there is no pair. ir_measures leaves out the first and fails on the second.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import ALL, Cutoff, Family, of_lists, per_cutoff


def pairwise_accuracy(rl: RankedLists, k: int = ALL) -> np.ndarray:
    """Accuracy over the top ``k`` of each query.

    >>> from rankwise.metrics.ranking._example import example
    >>> float(pairwise_accuracy(example())[0])   # relevant at ranks 1, 4: 0 and 2 of 3 others above
    0.6666666666666666
    """
    inside = rl.rel_rank0 < k
    q = rl.rel_qidx[inside]
    above = (rl.rel_rank0 + 1 - rl.rel_cum)[inside]
    n_pos = np.bincount(q, minlength=rl.n_queries).astype(np.float64)
    n_neg = np.minimum(rl.num_ret, k) - n_pos
    wrong = np.bincount(q, weights=above, minlength=rl.n_queries)
    pairs = n_pos * n_neg
    return np.divide(pairs - wrong, pairs, out=np.full(rl.n_queries, np.nan), where=pairs > 0)


ACCURACY = Family("accuracy", of_lists(pairwise_accuracy),
                  "Fraction of retrieved (relevant, non-relevant) pairs ranked relevant first.",
                  summary="nanmean", canonical="Accuracy", aliases=("accuracy",), reference="ir_measures Accuracy")
ACCURACY_CUT = Family("accuracy_cut", per_cutoff(pairwise_accuracy),
                      "Pairwise accuracy over the top k.", cutoff=Cutoff(int, (10,)), summary="nanmean",
                      canonical="Accuracy", cutoff_aliases=("accuracy",), reference="ir_measures Accuracy@k")
