"""Elasticsearch ``_rank_eval`` metrics with their documented semantics.

A "hit" is one of the top ``k`` retrieved documents; a hit is *rated* when it has a judgment
(label >= 0). Example used below (see ``_example``): labels by rank 2, unrated, 0, 1, unrated;
ratings of the query: 2, 0, 1, 1.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import libm
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Family, Param, ProfileName
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


def precision_details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
    """Elasticsearch's ``metric_details`` of precision.

    >>> from rankwise.metrics.ranking._example import example
    >>> {k: v.tolist() for k, v in precision_details(example(), ES_PRECISION.defaults()).items()}
    {'relevant_docs_retrieved': [2], 'docs_retrieved': [5], 'unrated_docs': [2]}
    """
    k = params["k"]
    retrieved = np.minimum(rl.num_ret, k)
    if params["ignore_unlabeled"]:
        retrieved = retrieved - unrated_docs(rl, k)
    return {"relevant_docs_retrieved": _top(rl, k, rl.label >= params["relevant_rating_threshold"]),
            "docs_retrieved": retrieved, "unrated_docs": unrated_docs(rl, k)}


def recall_details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
    """Elasticsearch's ``metric_details`` of recall."""
    k, threshold = params["k"], params["relevant_rating_threshold"]
    return {"relevant_docs_retrieved": _top(rl, k, rl.label >= threshold),
            "relevant_docs": rl.level_counts[:, rl.level_values >= threshold].sum(axis=1),
            "unrated_docs": unrated_docs(rl, k)}


def reciprocal_rank_details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
    """Elasticsearch's ``metric_details`` of mean_reciprocal_rank."""
    k = params["k"]
    return {"first_relevant": first_relevant(rl, k, params["relevant_rating_threshold"]),
            "unrated_docs": unrated_docs(rl, k)}


def dcg_details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
    """Elasticsearch's ``metric_details`` of dcg."""
    k = params["k"]
    value, ideal = dcg(rl, k, False, params["unknown_doc_rating"])
    return {"dcg": value, "ideal_dcg": ideal, "normalized_dcg": safe_divide(value, ideal),
            "unrated_docs": unrated_docs(rl, k)}


def err_details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
    """Elasticsearch's ``metric_details`` of expected_reciprocal_rank."""
    return {"unrated_docs": unrated_docs(rl, params["k"])}


_K = Param("k", int, 10, "hits evaluated", low=1)
_THRESHOLD = Param("relevant_rating_threshold", int, 1, "lowest relevant rating")
_UNKNOWN = Param("unknown_doc_rating", int, None, "rating given to unrated hits (default: none, they add nothing)")


def _es_profile(*names: str, **arguments: object) -> tuple[ProfileName, ...]:
    return (ProfileName("elasticsearch", names, "only", arguments=tuple(arguments.items()), cutoff_param="k"),)


ES_PRECISION = Family(
    "es_precision",
    lambda rl, conv, cutoffs, a: precision(rl, a["k"], a["relevant_rating_threshold"], a["ignore_unlabeled"]),
    "Elasticsearch precision: relevant hits / hits in the top k.",
    params=(_K, _THRESHOLD, Param("ignore_unlabeled", bool, False, "count only rated hits")), syntax="pairs",
    elasticsearch="precision", short_name="P", details=precision_details, reference="Elasticsearch",
    profiles=_es_profile("precision", "p"))
ES_RECALL = Family(
    "es_recall", lambda rl, conv, cutoffs, a: recall(rl, a["k"], a["relevant_rating_threshold"]),
    "Elasticsearch recall: relevant hits in the top k / relevant rated docs.", params=(_K, _THRESHOLD),
    syntax="pairs", elasticsearch="recall", short_name="R", details=recall_details, reference="Elasticsearch",
    profiles=_es_profile("recall", "r"))
ES_MEAN_RECIPROCAL_RANK = Family(
    "es_mean_reciprocal_rank",
    lambda rl, conv, cutoffs, a: mean_reciprocal_rank(rl, a["k"], a["relevant_rating_threshold"]),
    "Elasticsearch MRR: 1 / rank of the first relevant hit in the top k.", params=(_K, _THRESHOLD),
    syntax="pairs", elasticsearch="mean_reciprocal_rank", short_name="MRR", details=reciprocal_rank_details,
    reference="Elasticsearch", profiles=_es_profile("mrr", "rr"))
ES_DCG = Family(
    "es_dcg", lambda rl, conv, cutoffs, a: dcg(rl, a["k"], a["normalize"], a["unknown_doc_rating"])[0],
    "Elasticsearch DCG@k (gain 2^r - 1), normalised by the ideal DCG if asked.",
    params=(_K, Param("normalize", bool, False, "divide by the ideal DCG"), _UNKNOWN), syntax="pairs",
    elasticsearch="dcg", short_name="DCG", details=dcg_details, reference="Elasticsearch",
    profiles=_es_profile("ndcg", normalize=True) + _es_profile("dcg"))
ES_EXPECTED_RECIPROCAL_RANK = Family(
    "es_expected_reciprocal_rank",
    lambda rl, conv, cutoffs, a: expected_reciprocal_rank(rl, a["k"], a["maximum_relevance"], a["unknown_doc_rating"]),
    "Elasticsearch ERR@k, R = (2^r - 1) / 2^maximum_relevance.",
    params=(_K, Param("maximum_relevance", int, 3, "largest rating (Elasticsearch's default 3)", low=1), _UNKNOWN),
    syntax="pairs", elasticsearch="expected_reciprocal_rank", short_name="ERR", details=err_details,
    reference="Elasticsearch (and gdeval's ERR, max 4)",
    profiles=(ProfileName("elasticsearch", ("err",), "only", cutoff_param="k", max_label="maximum_relevance"),))
