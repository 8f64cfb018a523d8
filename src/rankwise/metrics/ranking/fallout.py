"""Fall-out (torchmetrics' ``RetrievalFallOut``): the share of the judged non-relevant
documents that the top k retrieved.

    fall-out@k = (judged non-relevant documents in the top k) / (judged non-relevant documents)

A query without a judged non-relevant document has no fall-out: the ``zero_division``
convention says what it gets: ``0`` (the default), ``nan`` (left out of the mean) or ``1``
(torchmetrics' default, ``empty_target_action="pos"``, which the torchmetrics profile sets).
Lower is better.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Cutoff, Family, ProfileName


def fallout_at(rl: RankedLists, k: int, zero_division: str = "0") -> np.ndarray:
    """Fall-out@k per query.

    >>> from rankwise.metrics.ranking._example import example
    >>> fallout_at(example(), 3).tolist()   # the one judged non-relevant document (rank 3) is in the top 3
    [1.0]
    >>> fallout_at(example(), 2).tolist()
    [0.0]
    """
    cum = segments.segment_cumsum(rl.is_judged_nonrel.astype(np.int64), rl.offsets)
    inside = segments.value_at(cum, rl.offsets, k).astype(np.float64)
    total = rl.num_judged_nonrel.astype(np.float64)
    out = np.full(rl.n_queries, float(zero_division))
    return np.divide(inside, total, out=out, where=total > 0)


FALLOUT = Family(
    "fallout", lambda rl, conv, ks, a: np.column_stack([fallout_at(rl, k) for k in ks]),
    "Fall-out@k: judged non-relevant documents in the top k / judged non-relevant documents.",
    cutoff=Cutoff(int, (10,)), higher_is_better=False, undefined="no_nonrelevant",
    canonical="FallOut", cutoff_aliases=("fallout", "fall_out"), reference="torchmetrics RetrievalFallOut(top_k)",
    profiles=(ProfileName("torchmetrics", ("fallout", "fall_out"), "only", conventions=(("zero_division", "1"),)),))
