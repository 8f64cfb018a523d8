"""Precision-at-relevant measures: AP and its cut-off, bpref, infAP, reciprocal rank,
interpolated precision at recall levels and the 11-point average.

Example used below (see ``_example``): relevant documents at ranks 1 and 4, R = 3.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rankwise.engine import libm, segments
from rankwise.engine.ranked import UNJUDGED, RankedLists
from rankwise.metrics.family import Cutoff, Family, Param, ProfileName, of_lists, per_cutoff
from rankwise.metrics.ranking import expected
from rankwise.metrics.ranking._seq import SparseTerms, safe_divide, seq_sum

INFAP_EPSILON = 0.00001
MIN_GEO_MEAN = 0.00001
DEFAULT_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _precision_terms(rl: RankedLists) -> SparseTerms:
    """Precision at each relevant row (the only rows where AP adds anything); with
    ties='expected', the expected term of every row."""
    if rl.tie_size is not None:
        terms, rank0 = expected.precision_terms(rl)
        sparse = SparseTerms.of(terms, rl.offsets)
        return sparse
    prec = rl.rel_cum / (rl.rel_rank0 + 1.0)
    return SparseTerms(prec, rl.rel_rank0, rl.rel_offsets)


def average_precision(rl: RankedLists) -> np.ndarray:
    """AP = (sum over relevant retrieved d of P@rank(d)) / R; 0 when R = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> average_precision(example()).tolist()   # (1/1 + 2/4) / 3
    [0.5]
    """
    return safe_divide(_precision_terms(rl).total(), rl.num_rel)


def average_precision_at(rl: RankedLists, ks: Sequence[int]) -> np.ndarray:
    """AP@k (trec_eval ``map_cut``): AP counting only the top k, still divided by R.

    Returns one column per cut-off.

    >>> from rankwise.metrics.ranking._example import example
    >>> average_precision_at(example(), [3, 5]).round(4).tolist()   # [1/3], [(1 + 0.5)/3]
    [[0.3333, 0.5]]
    """
    terms = _precision_terms(rl)
    cols = [safe_divide(terms.upto(k), rl.num_rel) for k in ks]
    return np.column_stack(cols) if cols else np.zeros((rl.n_queries, 0))


def geometric_mean(values: np.ndarray) -> float:
    """Geometric mean with trec_eval's floor: exp(mean(log(max(v, 0.00001)))), the logs added
    in query order and evaluated by the C library, as trec_eval does.

    >>> round(geometric_mean(np.array([0.5, 0.0])), 6)
    0.002236
    """
    if len(values) == 0:
        return 0.0
    logs = libm.log(np.maximum(np.asarray(values, dtype=np.float64), MIN_GEO_MEAN))
    return math.exp(float(np.cumsum(logs)[-1]) / len(values))


def reciprocal_rank(rl: RankedLists, k: int | None = None) -> np.ndarray:
    """RR = 1 / rank of the first relevant document (0 if none, or if beyond ``k``).

    >>> from rankwise.metrics.ranking._example import example
    >>> reciprocal_rank(example()).tolist()
    [1.0]
    """
    if rl.tie_size is not None:
        return expected.reciprocal_rank(rl, k)
    has = rl.num_rel_ret > 0
    first = np.full(rl.n_queries, -1, dtype=np.int64)
    first[has] = rl.rel_rank0[rl.rel_offsets[:-1][has]]
    ok = first >= 0
    if k is not None:
        ok &= first < k
    out = np.zeros(rl.n_queries, dtype=np.float64)
    out[ok] = 1.0 / (first[ok] + 1.0)
    return out


def bpref(rl: RankedLists) -> np.ndarray:
    """bpref = (1/R) sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)).

    n_r = judged non-relevant documents ranked above r, N = judged non-relevant documents
    of the query; a term is 1 when n_r = 0. Unjudged documents are ignored.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(bpref(example())[0]), 4)   # d1: 1; d3: 1 - 1/1 = 0 -> 1/3
    0.3333
    """
    nonrel_cum = segments.segment_cumsum(rl.is_judged_nonrel.astype(np.int64), rl.offsets)
    rel = rl.is_rel
    r = rl.num_rel[rl.qidx]
    n_before = nonrel_cum
    denom = np.minimum(rl.num_judged_nonrel[rl.qidx], r)
    terms = np.zeros(len(rl.label), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = 1.0 - np.minimum(n_before, r) / denom
    terms[rel] = np.where(n_before[rel] > 0, frac[rel], 1.0)
    return safe_divide(seq_sum(terms, rl.offsets), rl.num_rel)


def inferred_ap(rl: RankedLists) -> np.ndarray:
    """infAP (Yilmaz & Aslam, CIKM 2006), as trec_eval computes it.

    For a relevant document at 0-based rank j > 0 with r relevant, n judged non-relevant and
    u pooled-unjudged documents above it, the term is
    1/(j+1) + j/(j+1) * ((r + n + u)/j) * ((r + eps)/(r + n + 2 eps)); at j = 0 the term is 1.
    infAP = sum of terms / R.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(inferred_ap(example())[0]), 4)   # (1 + (1/4 + 3/4 * 2/3 * ~1/2)) / 3
    0.5
    """
    off = rl.offsets
    rel_b = rl.cum_rel - rl.is_rel
    nonrel_b = segments.segment_cumsum(rl.is_judged_nonrel.astype(np.int64), off) - rl.is_judged_nonrel
    unj = rl.label == UNJUDGED
    unj_b = segments.segment_cumsum(unj.astype(np.int64), off) - unj
    j = rl.rank0.astype(np.float64)
    rel = rl.is_rel
    terms = np.zeros(len(rl.label), dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        full = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_b + nonrel_b + unj_b) / j)
                * ((rel_b + INFAP_EPSILON) / ((rel_b + nonrel_b) + 2 * INFAP_EPSILON)))
    terms[rel] = np.where(rl.rank0[rel] == 0, 1.0, full[rel])
    return safe_divide(seq_sum(terms, off), rl.num_rel)


def _lround(x: np.ndarray) -> np.ndarray:
    """C ``lround`` of non-negative values: halves round up (``x + 0.5`` can round up wrongly).

    >>> _lround(np.array([0.5, 2.4999999999999996, 0.49999999999999994])).tolist()
    [1, 2, 0]
    """
    floor = np.floor(x)
    return (floor + (x - floor >= 0.5)).astype(np.int64)


def interpolated_precision_at_recall(rl: RankedLists, levels: Sequence[float] = DEFAULT_RECALL_LEVELS
                                     ) -> np.ndarray:
    """Interpolated precision at recall levels (trec_eval ``iprec_at_recall``).

    Int_P(level) = max precision at any rank at or after the rank where c = lround(level * R)
    relevant documents have been seen; 0 when fewer than c are retrieved. One column per level.
    As in trec_eval, a query left with no document under ``judged_only`` (every retrieved one
    unjudged, or the query absent from the run) has precision 0/0: NaN at the levels where c = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> interpolated_precision_at_recall(example(), [0.0, 0.5, 1.0]).tolist()
    [[1.0, 0.5, 0.0]]
    """
    n_q = rl.n_queries
    prec = rl.rel_cum / (rl.rel_rank0 + 1.0)
    best_after = segments.reverse_cummax(prec, rl.rel_qidx, n_q)
    rel_ret = rl.num_rel_ret
    rel_off = rl.rel_offsets
    end_prec = safe_divide(rel_ret, rl.num_ret)
    # trec_eval's 0.0 / 0.0; without -J it scores an absent query as one unjudged document
    undefined = (rl.num_ret == 0) & (rl.judged_only | (rl.in_run if rl.in_run is not None else True))
    end_prec[undefined] = np.nan
    overall = end_prec.copy()
    has = rel_ret > 0
    if len(best_after):
        overall[has] = np.maximum(end_prec[has], best_after[rel_off[:-1][has]])
    out = np.zeros((n_q, len(levels)), dtype=np.float64)
    for col, level in enumerate(levels):
        cut = _lround(level * rl.num_rel)
        zero = cut == 0
        out[zero, col] = overall[zero]
        ok = (cut >= 1) & (cut <= rel_ret)
        if ok.any():
            out[ok, col] = best_after[rel_off[:-1][ok] + cut[ok] - 1]
    return out


def eleven_point_average(rl: RankedLists, levels: Sequence[float] = DEFAULT_RECALL_LEVELS) -> np.ndarray:
    """Mean interpolated precision over recall levels (trec_eval ``11pt_avg``).

    >>> from rankwise.metrics.ranking._example import example
    >>> eleven_point_average(example(), [0.0, 0.5, 1.0]).tolist()   # (1 + 0.5 + 0) / 3
    [0.5]
    """
    iprec = interpolated_precision_at_recall(rl, levels)
    total = np.zeros(rl.n_queries, dtype=np.float64)
    for col in range(len(levels) - 1, -1, -1):  # trec_eval adds from the highest level down
        total = total + iprec[:, col]
    return total / float(len(levels))


_POSITIVE = (("retrieved", "positive"),)
STANDARD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
"""trec_eval's default cut-offs."""

MAP = Family("map", of_lists(average_precision),
             "Mean average precision: sum of precision at each relevant retrieved doc / R.",
             tie_aware=True, trec_eval=True, nicknames=("official",), canonical="AP", aliases=("map", "ap"),
             undefined="no_relevant")
GM_MAP = Family("gm_map", of_lists(average_precision), "Geometric mean of AP over queries (AP floored at 0.00001).",
                summary="gmean", tie_aware=True, trec_eval=True, nicknames=("official",), canonical="GMAP",
                aliases=("gm_map", "gmap"), undefined="no_relevant")
BPREF = Family("bpref", of_lists(bpref),
               "Binary preference: fraction of judged non-relevant docs ranked below each relevant doc.",
               trec_eval=True, nicknames=("official",), canonical="Bpref", aliases=("bpref",), undefined="no_relevant")
RECIP_RANK = Family("recip_rank", of_lists(reciprocal_rank), "Reciprocal rank of the first relevant document.",
                    tie_aware=True, trec_eval=True, nicknames=("official",), canonical="RR",
                    aliases=("mrr", "rr", "recip_rank"),
                    profiles=(ProfileName("torchmetrics", ("mrr", "rr"), "none", conventions=_POSITIVE),),
                    undefined="no_relevant")
IPREC_AT_RECALL = Family(
    "iprec_at_recall", lambda rl, conv, levels, params: interpolated_precision_at_recall(rl, levels),
    "Interpolated precision at recall levels: max precision at or after reaching the level.",
    cutoff=Cutoff(float, DEFAULT_RECALL_LEVELS, "recall level"), trec_eval=True, nicknames=("official",),
    canonical="IPrec", cutoff_aliases=("iprec_at_recall", "iprec"), cutoff_sensitive=False, undefined="no_relevant")
INFAP = Family("infAP", of_lists(inferred_ap),
               "Inferred AP (Yilmaz & Aslam): AP estimated from a sampled judgment pool.",
               trec_eval=True, canonical="infAP", aliases=("infap",), undefined="no_relevant")
GM_BPREF = Family("gm_bpref", of_lists(bpref), "Geometric mean of bpref over queries.", summary="gmean",
                  trec_eval=True, aliases=("gm_bpref",))
ELEVEN_PT_AVG = Family(
    "11pt_avg", lambda rl, conv, cutoffs, params: eleven_point_average(rl, params["levels"]),
    "Mean interpolated precision at the 11 recall levels 0.0, 0.1 ... 1.0.",
    params=(Param("levels", tuple, DEFAULT_RECALL_LEVELS, "recall levels averaged over"),),
    syntax="positional", trec_eval=True, aliases=("11pt_avg",), undefined="no_relevant")
MAP_CUT = Family("map_cut", lambda rl, conv, ks, params: average_precision_at(rl, ks),
                 "AP counting only the top k (still divided by R).", cutoff=Cutoff(int, STANDARD_CUTS),
                 tie_aware=True, trec_eval=True, canonical="AP", cutoff_aliases=("map", "ap", "map_cut"),
                 undefined="no_relevant")
RR_CUT = Family("RR_cut", per_cutoff(lambda rl, k: reciprocal_rank(rl, k)),
                "Reciprocal rank of the first relevant document within the top k (0 beyond k).",
                cutoff=Cutoff(int, (10,)), tie_aware=True, canonical="RR",
                cutoff_aliases=("mrr", "rr", "recip_rank"), reference="ir_measures RR@k, ranx mrr@k",
                profiles=(ProfileName("torchmetrics", ("mrr", "rr"), "only", conventions=_POSITIVE),),
                undefined="no_relevant")
