"""Set and cut-off measures: precision, recall, R-precision, success, F, utility, unjudged.

Example used below (see ``_example``): labels by rank 2, unjudged-not-pooled, 0, 1,
pooled-unjudged; relevant = label >= 1; R = 3 relevant documents judged.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.ranking._seq import safe_divide


def precision_at(rl: RankedLists, k: int) -> np.ndarray:
    """P@k = (relevant documents in the top k) / k; missing ranks count as non-relevant.

    >>> from rankwise.metrics.ranking._example import example
    >>> precision_at(example(), 2).tolist()   # 1 relevant in top 2 -> 1/2
    [0.5]
    """
    return rl.rel_in_top(k) / float(k)


def recall_at(rl: RankedLists, k: int) -> np.ndarray:
    """recall@k = (relevant in the top k) / R, 0 when R = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(recall_at(example(), 5)[0]), 4)   # 2 / 3
    0.6667
    """
    return safe_divide(rl.rel_in_top(k), rl.num_rel)


def relative_precision_at(rl: RankedLists, k: int) -> np.ndarray:
    """relative_P@k = (relevant in the top k) / min(k, R), 0 when R = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> relative_precision_at(example(), 2).tolist()   # 1 / min(2, 3)
    [0.5]
    """
    return safe_divide(rl.rel_in_top(k), np.minimum(k, rl.num_rel))


def success_at(rl: RankedLists, k: int) -> np.ndarray:
    """success@k = 1 if any relevant document is in the top k, else 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> success_at(example(), 1).tolist()
    [1.0]
    """
    return (rl.rel_in_top(k) > 0).astype(np.float64)


def hits_at(rl: RankedLists, k: int) -> np.ndarray:
    """hits@k = number of relevant documents in the top k.

    >>> from rankwise.metrics.ranking._example import example
    >>> hits_at(example(), 5).tolist()
    [2.0]
    """
    return rl.rel_in_top(k).astype(np.float64)


def r_precision(rl: RankedLists) -> np.ndarray:
    """R-precision = (relevant in the top R) / R, with R the number of relevant judged docs.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(r_precision(example())[0]), 4)   # top 3 holds d1 only -> 1/3
    0.3333
    """
    return safe_divide(rl.rel_in_top(rl.num_rel), rl.num_rel)


def r_precision_mult(rl: RankedLists, multiple: float) -> np.ndarray:
    """Precision at cut-off c = int(multiple * R + 0.9) (trec_eval ``Rprec_mult``), 0 if c = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> r_precision_mult(example(), 2.0).tolist()   # c = int(6.9) = 6 -> 2 relevant / 6
    [0.3333333333333333]
    """
    cut = (multiple * rl.num_rel + 0.9).astype(np.int64)
    return safe_divide(rl.rel_in_top(cut), cut)


def set_precision(rl: RankedLists) -> np.ndarray:
    """set_P = relevant retrieved / retrieved.

    >>> from rankwise.metrics.ranking._example import example
    >>> set_precision(example()).tolist()   # 2 / 5
    [0.4]
    """
    return safe_divide(rl.num_rel_ret, rl.num_ret)


def set_recall(rl: RankedLists) -> np.ndarray:
    """set_recall = relevant retrieved / R.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(set_recall(example())[0]), 4)
    0.6667
    """
    return safe_divide(rl.num_rel_ret, rl.num_rel)


def set_relative_precision(rl: RankedLists) -> np.ndarray:
    """set_relative_P = relevant retrieved / min(retrieved, R).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(set_relative_precision(example())[0]), 4)   # 2 / min(5, 3)
    0.6667
    """
    return safe_divide(rl.num_rel_ret, np.minimum(rl.num_ret, rl.num_rel))


def set_map(rl: RankedLists) -> np.ndarray:
    """set_map = set_P * set_recall (precision of the set times its recall).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(set_map(example())[0]), 4)   # 0.4 * 2/3
    0.2667
    """
    # trec_eval's order of operations: (rel_ret * rel_ret) / (ret * rel)
    rr = rl.num_rel_ret.astype(np.float64)
    return safe_divide(rr * rr, rl.num_ret.astype(np.float64) * rl.num_rel)


def set_f(rl: RankedLists, beta: float = 1.0) -> np.ndarray:
    """set_F = (beta + 1) P R / (beta P + R) on the retrieved set, 0 if nothing relevant retrieved.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(set_f(example())[0]), 4)   # 2 * 0.4 * (2/3) / (0.4 + 2/3)
    0.5
    """
    p = set_precision(rl)
    r = set_recall(rl)
    num = (beta + 1.0) * p * r
    return np.where(rl.num_rel_ret > 0, safe_divide(num, beta * p + r), 0.0)


def utility(rl: RankedLists, coefficients: tuple[float, ...] = (1.0, -1.0, 0.0, 0.0),
            num_docs_in_coll: int = 0) -> np.ndarray:
    """utility = c1 a + c2 b + c3 c + c4 d over the contingency table of the retrieved set.

    a = relevant retrieved, b = non-relevant retrieved, c = relevant not retrieved,
    d = non-relevant not retrieved (needs the collection size N).

    >>> from rankwise.metrics.ranking._example import example
    >>> utility(example()).tolist()   # 1*2 - 1*3
    [-1.0]
    """
    c1, c2, c3, c4 = coefficients
    a = rl.num_rel_ret.astype(np.float64)
    ret = rl.num_ret.astype(np.float64)
    rel = rl.num_rel.astype(np.float64)
    return c1 * a + c2 * (ret - a) + c3 * (rel - a) + c4 * (num_docs_in_coll + a - ret - rel)


def unjudged_at(rl: RankedLists, k: int) -> np.ndarray:
    """unj@k = (retrieved documents without a judgment in the top k) / k.

    >>> from rankwise.metrics.ranking._example import example
    >>> unjudged_at(example(), 5).tolist()   # d5 and d9 -> 2 / 5
    [0.4]
    """
    cum = segments.segment_cumsum((rl.label < 0).astype(np.int64), rl.offsets)
    return segments.value_at(cum, rl.offsets, k) / float(k)


def judged_at(rl: RankedLists, k: int) -> np.ndarray:
    """Judged@k = (judged documents in the top min(k, retrieved)) / min(k, retrieved).

    >>> from rankwise.metrics.ranking._example import example
    >>> judged_at(example(), 5).tolist()   # d1, d2, d3 -> 3 / 5
    [0.6]
    """
    cum = segments.segment_cumsum(rl.is_judged.astype(np.int64), rl.offsets)
    return safe_divide(segments.value_at(cum, rl.offsets, k), np.minimum(k, rl.num_ret))
