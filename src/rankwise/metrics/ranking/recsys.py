"""Recommender-system and literature metrics on RankedLists.

Example used below (see ``_example``): labels by rank 2, -, 0, 1, -; relevant = label >= 1,
R = 3 (one relevant document, label 1, is not retrieved).
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import ALL, Cutoff, Family, Param, ProfileName, of_lists, per_cutoff
from rankwise.metrics.ranking._seq import SparseTerms, safe_divide


def f1_at(rl: RankedLists, k: int) -> np.ndarray:
    """F1@k = 2 P@k R@k / (P@k + R@k), 0 when nothing relevant is in the top k.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(f1_at(example(), 5)[0]), 4)   # P = 2/5, R = 2/3: 2 * 0.4 * 0.6667 / 1.0667
    0.5
    """
    hits = rl.rel_in_top(k).astype(np.float64)
    p = hits / k
    r = safe_divide(hits, rl.num_rel)
    return safe_divide(2 * p * r, p + r)


def _hit_terms(rl: RankedLists, values: np.ndarray) -> SparseTerms:
    return SparseTerms(values, rl.rel_rank0, rl.rel_offsets)


def average_precision_min_at(rl: RankedLists, k: int) -> np.ndarray:
    """AP@k normalised by min(R, k) (RecBole's MAP@k): sum of P@rank over hits in the top k
    / min(R, k).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(average_precision_min_at(example(), 2)[0]), 4)   # (1/1) / min(3, 2)
    0.5
    """
    prec = _hit_terms(rl, rl.rel_cum / (rl.rel_rank0 + 1.0))
    return safe_divide(prec.upto(k), np.minimum(rl.num_rel, k))


def average_precision_retrieved_at(rl: RankedLists, k: int) -> np.ndarray:
    """AP@k normalised by the relevant documents retrieved in the top k (torchmetrics'
    RetrievalMAP): sum of P@rank over hits in the top k / number of hits in the top k; 0
    without a hit.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(average_precision_retrieved_at(example(), 5)[0]), 4)   # (1/1 + 2/4) / 2
    0.75
    """
    prec = _hit_terms(rl, rl.rel_cum / (rl.rel_rank0 + 1.0))
    return safe_divide(prec.upto(k), rl.rel_in_top(k))


def average_recall_at(rl: RankedLists, k: int) -> np.ndarray:
    """AR@k (mean over queries: MAR@k) = (1/R) sum over hits in the top k of recall at the hit.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(average_recall_at(example(), 5)[0]), 4)   # (1/3 + 2/3) / 3
    0.3333
    """
    rec = _hit_terms(rl, safe_divide(rl.rel_cum, rl.num_rel[rl.rel_qidx]))
    return safe_divide(rec.upto(k), rl.num_rel)


def arhr_at(rl: RankedLists, k: int) -> np.ndarray:
    """ARHR@k (average reciprocal hit rank): sum of 1/rank over every hit in the top k.

    >>> from rankwise.metrics.ranking._example import example
    >>> float(arhr_at(example(), 5)[0])   # 1/1 + 1/4
    1.25
    """
    return _hit_terms(rl, 1.0 / (rl.rel_rank0 + 1.0)).upto(k)


def cumulative_gain_at(rl: RankedLists, k: int) -> np.ndarray:
    """CG@k = sum of the labels (> 0) of the top k.

    >>> from rankwise.metrics.ranking._example import example
    >>> float(cumulative_gain_at(example(), 5)[0])   # 2 + 1
    3.0
    """
    labels = label_values(rl)
    gains = np.where(labels > 0, labels, 0.0)
    return SparseTerms.of(gains, rl.offsets).upto(k)


def label_values(rl: RankedLists) -> np.ndarray:
    """Each row's label as a number: the grade, or on continuous relevance the value its level
    code stands for (watch time, CTR; negative values stay negative).

    >>> from rankwise.metrics.ranking._example import example
    >>> label_values(example()).tolist()[:3]   # -1: unjudged (trec_eval's reading of a missing label)
    [2.0, -1.0, 0.0]
    """
    if rl.level_gains is None:
        return rl.label.astype(np.float64)
    table = np.array([rl.level_gains[c] for c in range(len(rl.level_gains))], dtype=np.float64)
    return table[rl.label]


def normalised_cumulative_gain_at(rl: RankedLists, k: int) -> np.ndarray:
    """NCG@k (TREC Deep Learning's normalised cumulative gain) = CG@k / the ideal CG@k, the
    sum of the k largest labels judged for the query; NaN without a positive label (the
    ``undefined`` rule decides).

    >>> from rankwise.metrics.ranking._example import example
    >>> normalised_cumulative_gain_at(example(), 2).round(4).tolist()   # top 2: (2 + 0) / (2 + 1)
    [0.6667]
    """
    from rankwise.metrics.ranking.gain import ideal

    ide = ideal(rl)
    rank = segments.positions(ide.offsets)
    top = rank < k
    query = np.repeat(np.arange(rl.n_queries), np.diff(ide.offsets))
    best = np.bincount(query[top], weights=ide.gains[top], minlength=rl.n_queries)
    return safe_divide(cumulative_gain_at(rl, k), best)


def err_at(rl: RankedLists, k: int, max_grade: int | None = None) -> np.ndarray:
    """ERR@k (Chapelle et al. 2009) = sum_r (1/r) R_r prod_{i<r} (1 - R_i), with
    R = (2^label - 1) / 2^max_grade (max_grade defaults to the largest judged label).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(err_at(example(), 5)[0]), 4)   # R1 = 3/4; rank 4: R = 1/4 -> 3/4 + (1/4)(1/4)(1/4)
    0.7656
    """
    top = max_grade if max_grade is not None else int(rl.level_values.max(initial=0))
    r = np.where(rl.label > 0, (2.0 ** np.maximum(rl.label, 0) - 1.0) / 2.0**top, 0.0)
    return cascade(rl, np.minimum(r, 1.0), k)


def cascade(rl: RankedLists, r: np.ndarray, k: int) -> np.ndarray:
    """The cascade model's expected reciprocal stopping rank over the top k:
    sum_r R_r / r * prod_{i<r} (1 - R_i), with ``r`` the stopping probability of each row.

    >>> from rankwise.metrics.ranking._example import example
    >>> float(cascade(example(), np.array([0.5, 0.0, 0.0, 0.5, 0.0]), 5)[0])   # 1/2 + (1/2)(1/2)/4
    0.5625
    """
    inside = rl.rank0 < k
    keep = np.where(inside, 1.0 - r, 1.0)
    # probability the user is still looking at each row: product of (1 - R) above it
    log_keep = np.log(np.maximum(keep, 1e-300))
    before = segments.segment_cumsum(log_keep, rl.offsets) - log_keep
    stop = np.where(inside, r * np.exp(before) / (rl.rank0 + 1.0), 0.0)
    return SparseTerms.of(stop, rl.offsets).total()


def lag(rl: RankedLists) -> np.ndarray:
    """LAG: mean number of non-relevant retrieved items ranked above each relevant retrieved item.

    >>> from rankwise.metrics.ranking._example import example
    >>> float(lag(example())[0])   # d1: 0 above; d3: d5 and d2 above -> (0 + 2) / 2
    1.0
    """
    above = (rl.rel_rank0 + 1) - rl.rel_cum
    return safe_divide(np.bincount(rl.rel_qidx, weights=above, minlength=rl.n_queries), rl.num_rel_ret)


def fcp(rl: RankedLists) -> np.ndarray:
    """FCP: fraction of concordant pairs among retrieved judged documents with different labels
    (the higher label ranked above the lower one).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(fcp(example())[0]), 4)   # pairs (2,0) (2,1) concordant, (0,1) discordant
    0.6667
    """
    judged = np.flatnonzero(rl.label >= 0)
    q = rl.query_of(judged)
    lab = label_values(rl)[judged]   # continuous relevance: the order of the values, not of the codes
    levels = segments.distinct(lab)
    concordant = np.zeros(rl.n_queries)
    discordant = np.zeros(rl.n_queries)
    sub_off = np.concatenate(([0], np.cumsum(np.bincount(q, minlength=rl.n_queries))))
    for level in levels:
        is_level = (lab == level).astype(np.int64)
        seen = segments.segment_cumsum(is_level, sub_off) - is_level  # rows of this level above
        higher_below = lab < level  # a lower label below a row of this level: concordant
        concordant += np.bincount(q[higher_below], weights=seen[higher_below], minlength=rl.n_queries)
        lower_rows = lab > level  # a higher label below this level: discordant
        discordant += np.bincount(q[lower_rows], weights=seen[lower_rows], minlength=rl.n_queries)
    return safe_divide(concordant, concordant + discordant)


_K = Cutoff(int, (10,))

F1 = Family("F1", per_cutoff(f1_at), "F1@k: harmonic mean of P@k and recall@k.", cutoff=_K, canonical="F1",
            cutoff_aliases=("f1",), reference="ranx f1@k", undefined="no_relevant")
AP_MIN = Family("AP_min", per_cutoff(average_precision_min_at), "AP@k normalised by min(R, k) (RecBole's MAP@k).",
                cutoff=_K, canonical="AP_min", cutoff_aliases=("ap_min", "map_min"), reference="RecBole MAP@k",
                profiles=(ProfileName("recbole", ("map", "ap"), "only"),), undefined="no_relevant")
AP_RET = Family("AP_ret", per_cutoff(average_precision_retrieved_at),
                "AP@k normalised by the relevant documents retrieved in the top k (torchmetrics' RetrievalMAP).",
                cutoff=_K, canonical="AP_ret", cutoff_aliases=("ap_ret", "map_ret"),
                reference="torchmetrics RetrievalMAP(top_k)",
                profiles=(ProfileName("torchmetrics", ("map", "ap"), conventions=(("retrieved", "positive"),),
                                      without_cutoff=ALL),))
AR = Family("AR", per_cutoff(average_recall_at),
            "Average recall@k: mean recall at each hit in the top k (MAR@k over queries).",
            cutoff=_K, canonical="AR", cutoff_aliases=("mar", "ar"), undefined="no_relevant")
ARHR = Family("ARHR", per_cutoff(arhr_at), "Average reciprocal hit rank: sum of 1/rank over the hits in the top k.",
              cutoff=_K, canonical="ARHR", cutoff_aliases=("arhr",))
CG = Family("CG", per_cutoff(cumulative_gain_at), "Cumulative gain: sum of the labels in the top k.", cutoff=_K,
            canonical="CG", cutoff_aliases=("cg",), continuous=True)
NCG = Family("NCG", per_cutoff(normalised_cumulative_gain_at),
             "Normalised cumulative gain: CG@k over the ideal CG@k (the k largest judged labels).", cutoff=_K,
             canonical="NCG", cutoff_aliases=("ncg",), reference="TREC Deep Learning NCG@k (Craswell et al. 2020)",
             undefined="no_relevant")
ERR = Family("ERR", lambda rl, conv, ks, params: np.column_stack([err_at(rl, k, params["max_label"]) for k in ks]),
             "Expected reciprocal rank: sum_r R_r/r prod_{i<r}(1-R_i), R = (2^label-1)/2^max.", cutoff=_K,
             params=(Param("max_label", int, None, "largest grade (2^max normalises R); default: the largest "
                           "judged label", low=1),),
             canonical="ERR", cutoff_aliases=("err",), reference="gdeval ERR@k with max_label=4")
LAG = Family("LAG", of_lists(lag), "Mean number of non-relevant items ranked above each relevant retrieved item.",
             canonical="LAG", aliases=("lag",), higher_is_better=False)
FCP = Family("FCP", of_lists(fcp), "Fraction of concordant pairs among retrieved judged items with different labels.",
             canonical="FCP", aliases=("fcp",), continuous=True)
