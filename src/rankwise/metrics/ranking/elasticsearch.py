"""Elasticsearch ``_rank_eval`` metrics with their documented semantics.

A "hit" is one of the top ``k`` retrieved documents; a hit is *rated* when it has a judgment
(label >= 0). Example used below (see ``_example``): labels by rank 2, unrated, 0, 1, unrated;
ratings of the query: 2, 0, 1, 1.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import libm
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.ranking._seq import SparseTerms, safe_divide
from rankwise.metrics.ranking.recsys import cascade


def _top(rl: RankedLists, k: int, mask: np.ndarray) -> np.ndarray:
    """How many rows of ``mask`` are among the first k of each query."""
    rows = np.flatnonzero(mask)
    q = rl.query_of(rows)
    inside = (rows - rl.offsets[q]) < k
    return np.bincount(q[inside], minlength=rl.n_queries)


def unrated_docs(rl: RankedLists, k: int) -> np.ndarray:
    """Hits in the top k without a rating (Elasticsearch's ``unrated_docs``).

    >>> from rankwise.metrics.ranking._example import example
    >>> unrated_docs(example(), 10).tolist()
    [2]
    """
    return _top(rl, k, rl.label < 0)


def precision(rl: RankedLists, k: int = 10, threshold: int = 1, ignore_unlabeled: bool = False) -> np.ndarray:
    """precision = relevant hits / hits, hits = the top k retrieved (only rated ones with
    ``ignore_unlabeled``); relevant = rating >= ``threshold``.

    >>> from rankwise.metrics.ranking._example import example
    >>> precision(example(), 10).tolist(), precision(example(), 10, ignore_unlabeled=True).tolist()
    ([0.4], [0.6666666666666666])
    """
    relevant = _top(rl, k, rl.label >= threshold)
    hits = np.minimum(rl.num_ret, k) - (unrated_docs(rl, k) if ignore_unlabeled else 0)
    return safe_divide(relevant, hits)


def recall(rl: RankedLists, k: int = 10, threshold: int = 1) -> np.ndarray:
    """recall = relevant hits in the top k / rated documents with rating >= ``threshold``.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(recall(example(), 10)[0]), 4)   # 2 of the 3 ratings >= 1
    0.6667
    """
    relevant_rated = rl.level_counts[:, rl.level_values >= threshold].sum(axis=1)
    return safe_divide(_top(rl, k, rl.label >= threshold), relevant_rated)


def mean_reciprocal_rank(rl: RankedLists, k: int = 10, threshold: int = 1) -> np.ndarray:
    """1 / rank of the first hit with rating >= ``threshold`` in the top k, else 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> mean_reciprocal_rank(example(), 10, threshold=2).tolist()
    [1.0]
    """
    return 1.0 / np.where((first := first_relevant(rl, k, threshold)) > 0, first, np.inf)


def first_relevant(rl: RankedLists, k: int = 10, threshold: int = 1) -> np.ndarray:
    """Rank (1-based) of the first relevant hit in the top k, 0 if none (MRR's detail).

    >>> from rankwise.metrics.ranking._example import example
    >>> first_relevant(example(), 10, threshold=1).tolist()
    [1]
    """
    rows = np.flatnonzero(rl.label >= threshold)
    q = rl.query_of(rows)
    rank = rows - rl.offsets[q]
    out = np.zeros(rl.n_queries, dtype=np.int64)
    first_of = np.ones(len(rows), dtype=bool)
    first_of[1:] = q[1:] != q[:-1]
    ok = first_of & (rank < k)
    out[q[ok]] = rank[ok] + 1
    return out


def _rated_gain(rl: RankedLists, unknown_doc_rating: int | None) -> np.ndarray:
    label = rl.label.astype(np.float64)
    if unknown_doc_rating is not None:
        label = np.where(rl.label < 0, float(unknown_doc_rating), label)
    return np.where(label > 0, 2.0 ** np.maximum(label, 0) - 1.0, 0.0)


def dcg(rl: RankedLists, k: int = 10, normalize: bool = False, unknown_doc_rating: int | None = None
        ) -> tuple[np.ndarray, np.ndarray]:
    """(dcg, ideal_dcg): DCG@k = sum over the top k of (2^rating - 1) / log2(rank + 1) (unrated
    hits add nothing, or count as ``unknown_doc_rating``); the ideal DCG sorts all ratings of the
    query and keeps the first min(hits, ratings). With ``normalize`` the first value is DCG / IDCG.

    >>> from rankwise.metrics.ranking._example import example
    >>> d, i = dcg(example(), 10)
    >>> round(float(d[0]), 4), round(float(i[0]), 4)   # 3 + 1/log2 5; ideal 3, 1, 1, 0 (4 ratings <= 5 hits)
    (3.4307, 4.1309)
    """
    gain = _rated_gain(rl, unknown_doc_rating)
    terms = np.where(rl.rank0 < k, gain / libm.log2_of_count(rl.rank0 + 2), 0.0)
    value = SparseTerms.of(terms, rl.offsets).total()
    # ideal: every rating of the query (levels, by count), best first, cut at min(hits, ratings)
    n_ratings = rl.level_counts.sum(axis=1)
    keep = np.minimum(np.minimum(rl.num_ret, k), n_ratings)
    ideal = np.zeros(rl.n_queries)
    order = np.argsort(-rl.level_values)
    pos = np.zeros(rl.n_queries, dtype=np.int64)
    for level in rl.level_values[order]:  # few grades: a loop over grades, not queries
        count = rl.level_counts[:, rl.level_values == level][:, 0]
        take = np.clip(keep - pos, 0, count)
        g = 2.0 ** level - 1.0 if level > 0 else 0.0
        if g:
            # sum over positions pos .. pos+take-1 of g / log2(p + 2)
            ideal += g * (_harmonic_log(pos + take) - _harmonic_log(pos))
        pos += take
    if normalize:
        return safe_divide(value, ideal), ideal
    return value, ideal


def _harmonic_log(n: np.ndarray) -> np.ndarray:
    """sum_{p < n} 1 / log2(p + 2) for each n."""
    top = int(n.max(initial=0))
    table = np.concatenate(([0.0], np.cumsum(1.0 / libm.log2_of_count(np.arange(top) + 2))))
    return table[n]


def expected_reciprocal_rank(rl: RankedLists, k: int = 10, maximum_relevance: int = 3,
                             unknown_doc_rating: int | None = None) -> np.ndarray:
    """ERR@k = sum_r (1/r) R_r prod_{i<r} (1 - R_i), R = (2^rating - 1) / 2^maximum_relevance;
    unrated hits are skipped unless ``unknown_doc_rating`` is set.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(expected_reciprocal_rank(example(), 10, maximum_relevance=2)[0]), 6)   # 3/4 + (1/4)(1/4)/4
    0.765625
    """
    return cascade(rl, _rated_gain(rl, unknown_doc_rating) / 2.0 ** maximum_relevance, k)


def details(rl: RankedLists, family: str, params: dict[str, int]) -> dict[str, np.ndarray]:
    """Elasticsearch's per-query ``metric_details`` of one rank_eval metric.

    >>> from rankwise.metrics.ranking._example import example
    >>> {k: v.tolist() for k, v in details(example(), "es_precision", {"k": 10}).items()}
    {'relevant_docs_retrieved': [2], 'docs_retrieved': [5], 'unrated_docs': [2]}
    """
    k = params.get("k", 10)
    threshold = params.get("relevant_rating_threshold", 1)
    out: dict[str, np.ndarray] = {}
    if family == "es_precision":
        out["relevant_docs_retrieved"] = _top(rl, k, rl.label >= threshold)
        retrieved = np.minimum(rl.num_ret, k)
        if params.get("ignore_unlabeled"):
            retrieved = retrieved - unrated_docs(rl, k)
        out["docs_retrieved"] = retrieved
    elif family == "es_recall":
        out["relevant_docs_retrieved"] = _top(rl, k, rl.label >= threshold)
        out["relevant_docs"] = rl.level_counts[:, rl.level_values >= threshold].sum(axis=1)
    elif family == "es_mean_reciprocal_rank":
        out["first_relevant"] = first_relevant(rl, k, threshold)
    elif family == "es_dcg":
        unknown = params.get("unknown_doc_rating")
        value, ideal = dcg(rl, k, False, unknown)
        out["dcg"], out["ideal_dcg"] = value, ideal
        out["normalized_dcg"] = safe_divide(value, ideal)
    elif family == "es_expected_reciprocal_rank":
        pass
    else:
        raise ValueError(f"{family} is not an Elasticsearch metric")
    out["unrated_docs"] = unrated_docs(rl, k)
    return out
