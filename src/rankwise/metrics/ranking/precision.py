"""Set and cut-off measures: precision, recall, R-precision, success, F, utility, unjudged.

Example used below (see ``_example``): labels by rank 2, unjudged-not-pooled, 0, 1,
pooled-unjudged; relevant = label >= 1; R = 3 relevant documents judged.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import ALL, Cutoff, Family, Param, ProfileName, of_lists, per_cutoff
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


_CUTS = Cutoff(int, (5, 10, 15, 20, 30, 100, 200, 500, 1000))
_POSITIVE = (("retrieved", "positive"),)

RPREC = Family("Rprec", of_lists(r_precision), "Precision after R documents, R = number of relevant documents.",
               tie_aware=True, trec_eval=True, nicknames=("official",), canonical="Rprec",
               aliases=("rprec", "r_precision", "r-prec", "r-precision"), undefined="no_relevant")
P = Family("P", per_cutoff(precision_at), "Precision at cut-off k: relevant in the top k / k.", cutoff=_CUTS,
           tie_aware=True, trec_eval=True, nicknames=("official",), canonical="P", cutoff_aliases=("p", "precision"),
           profiles=(ProfileName("torchmetrics", ("p", "precision"), "required", conventions=_POSITIVE),))
RECALL = Family("recall", per_cutoff(recall_at), "Recall at cut-off k: relevant in the top k / R.", cutoff=_CUTS,
                tie_aware=True, trec_eval=True, canonical="R", cutoff_aliases=("r", "recall"),
                profiles=(ProfileName("torchmetrics", ("r", "recall"), "required", conventions=_POSITIVE),),
                undefined="no_relevant")
RPREC_MULT = Family("Rprec_mult", per_cutoff(r_precision_mult), "Precision at cut-off int(x * R + 0.9).",
                    cutoff=Cutoff(float, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), "multiple of R"),
                    tie_aware=True, trec_eval=True, aliases=("rprec_mult",), cutoff_sensitive=False,
                    undefined="no_relevant")
UTILITY = Family(
    "utility",
    lambda rl, conv, cutoffs, params: utility(rl, params["coefficients"], conv.num_docs_in_coll),
    "Set utility c1*relret + c2*nonrelret + c3*relnotret + c4*nonrelnotret.",
    params=(Param("coefficients", tuple, (1.0, -1.0, 0.0, 0.0), "c1, c2, c3, c4"),), syntax="positional",
    tie_aware=True, trec_eval=True, nicknames=("set",), aliases=("utility",))
RELATIVE_P = Family("relative_P", per_cutoff(relative_precision_at), "Relevant in the top k / min(k, R).",
                    cutoff=_CUTS, tie_aware=True, trec_eval=True, cutoff_aliases=("relative_p",),
                    undefined="no_relevant")
SUCCESS = Family("success", per_cutoff(success_at), "1 if a relevant document is in the top k, else 0.",
                 cutoff=Cutoff(int, (1, 5, 10)), trec_eval=True, canonical="Success",
                 cutoff_aliases=("success", "hit_rate", "hitrate"))
SET_P = Family("set_P", of_lists(set_precision), "Precision of the retrieved set.", tie_aware=True, trec_eval=True,
               nicknames=("set",), canonical="SetP", aliases=("set_p", "setp"),
               profiles=(ProfileName("ranx", ("precision",), "none"),), undefined="no_retrieved")
SET_RELATIVE_P = Family("set_relative_P", of_lists(set_relative_precision), "Relevant retrieved / min(retrieved, R).",
                        tie_aware=True, trec_eval=True, nicknames=("set",), canonical="SetRelP",
                        aliases=("set_relative_p", "setrelp"), undefined="no_relevant")
SET_RECALL = Family("set_recall", of_lists(set_recall), "Recall of the retrieved set.", tie_aware=True,
                    trec_eval=True, nicknames=("set",), canonical="SetR", aliases=("set_recall", "setr"),
                    profiles=(ProfileName("ranx", ("recall",), "none"),), undefined="no_relevant")
SET_MAP = Family("set_map", of_lists(set_map), "set_P * set_recall.", tie_aware=True, trec_eval=True,
                 nicknames=("set",), canonical="SetAP", aliases=("set_map", "setap"), undefined="no_relevant")
SET_F = Family("set_F", lambda rl, conv, cutoffs, params: set_f(rl, params["beta"]),
               "F measure of the retrieved set: (b+1) P R / (b P + R).",
               params=(Param("beta", float, 1.0, "weight of recall against precision", low=0.0),),
               syntax="positional", tie_aware=True, trec_eval=True, nicknames=("set",), canonical="SetF",
               aliases=("set_f", "setf"), profiles=(ProfileName("ranx", ("f1",), "none"),))
UNJ = Family("unj", per_cutoff(unjudged_at), "Fraction of unjudged documents in the top k.",
             cutoff=Cutoff(int, (5, 10, 20)), trec_eval=True, canonical="Unj", cutoff_aliases=("unj",),
             higher_is_better=False, cutoff_sensitive=False)
HITS = Family("hits", per_cutoff(hits_at), "Number of relevant documents in the top k.", cutoff=Cutoff(int, (10,)),
              tie_aware=True, canonical="Hits", cutoff_aliases=("hits",), reference="ranx hits@k")
JUDGED = Family("judged", per_cutoff(judged_at), "Fraction of the top k that is judged.", cutoff=Cutoff(int, (10,)),
                canonical="Judged", cutoff_aliases=("judged",), reference="ir_measures Judged@k",
                undefined="no_retrieved")
SET_JUDGED = Family("set_judged", of_lists(lambda rl: judged_at(rl, ALL)),
                    "Fraction of the retrieved documents that is judged.", canonical="Judged",
                    aliases=("set_judged", "judged"), reference="ir_measures Judged", undefined="no_retrieved")
