"""Elasticsearch rank_eval metrics: hand-computed from Elasticsearch's documented formulas."""

from __future__ import annotations

import math

import pytest

import rankwise
from rankwise.data.containers import Qrels, Run
from rankwise.metrics.names import MetricParameterError

# Elasticsearch's own DCG test case: ratings 3, 2, 3, 0, 1, 2 at ranks 1..6
RATINGS = [3, 2, 3, 0, 1, 2]
QRELS = Qrels.from_sets({"q": set(range(6))}, relevance={"q": dict(enumerate(RATINGS))})
RUN = Run.from_ranked_lists({"q": list(range(6))})


def _value(metric, qrels=QRELS, run=RUN) -> float:
    return float(rankwise.evaluate(qrels, run, metric).summary.iloc[0, 0])


def test_dcg_and_normalised_dcg() -> None:
    # 7/1 + 3/log2(3) + 7/2 + 0 + 1/log2(6) + 3/log2(7) = 13.84826...
    dcg = 7 + 3 / math.log2(3) + 7 / 2 + 1 / math.log2(6) + 3 / math.log2(7)
    assert _value({"dcg": {"k": 10}}) == pytest.approx(13.84826362927298, abs=1e-12)
    assert _value({"dcg": {"k": 10}}) == pytest.approx(dcg)
    # ideal: ratings sorted 3, 3, 2, 2, 1, 0
    idcg = 7 + 7 / math.log2(3) + 3 / 2 + 3 / math.log2(5) + 1 / math.log2(6)
    assert _value({"dcg": {"k": 10, "normalize": True}}) == pytest.approx(dcg / idcg, abs=1e-12)


def test_unrated_hits_and_unknown_doc_rating() -> None:
    # two hits without ratings (d7, d8) interleaved: they keep their ranks, add no gain ...
    run = Run.from_ranked_lists({"q": [0, "u1", 1, "u2"]})
    assert _value({"dcg": {"k": 4}}, run=run) == pytest.approx(7 + 3 / 2)
    # ... or the gain of unknown_doc_rating; the ideal keeps min(hits = 4, ratings = 6) ratings
    assert _value({"dcg": {"k": 4, "unknown_doc_rating": 1}}, run=run) == pytest.approx(
        7 + 1 / math.log2(3) + 3 / 2 + 1 / math.log2(5))
    idcg4 = 7 + 7 / math.log2(3) + 3 / 2 + 3 / math.log2(5)
    assert _value({"dcg": {"k": 4, "normalize": True}}, run=run) == pytest.approx((7 + 1.5) / idcg4)
    # precision: 2 relevant of 4 hits, or of 2 rated hits when unlabeled ones are ignored
    assert _value({"precision": {"k": 4}}, run=run) == 0.5
    assert _value({"precision": {"k": 4, "ignore_unlabeled": True}}, run=run) == 1.0


def test_precision_recall_mrr_thresholds() -> None:
    # relevant at threshold 3: ranks 1 and 3 (5 of the 6 ratings are >= 1, 2 are >= 3)
    assert _value({"precision": {"k": 5, "relevant_rating_threshold": 3}}) == pytest.approx(2 / 5)
    assert _value({"recall": {"k": 2, "relevant_rating_threshold": 3}}) == pytest.approx(1 / 2)
    assert _value({"recall": {"k": 10}}) == pytest.approx(5 / 5)
    run = Run.from_ranked_lists({"q": [3, 4, 0]})  # ratings 0, 1, 3
    assert _value({"mean_reciprocal_rank": {"k": 10, "relevant_rating_threshold": 2}}, run=run) == pytest.approx(1 / 3)
    assert _value({"mean_reciprocal_rank": {"k": 2, "relevant_rating_threshold": 2}}, run=run) == 0.0


def test_expected_reciprocal_rank() -> None:
    # R = (2^r - 1) / 2^3 for ratings 3, 2, 3: 7/8, 3/8, 7/8
    r = [7 / 8, 3 / 8, 7 / 8]
    err = r[0] + (1 - r[0]) * r[1] / 2 + (1 - r[0]) * (1 - r[1]) * r[2] / 3
    assert _value({"expected_reciprocal_rank": {"k": 3, "maximum_relevance": 3}}) == pytest.approx(err)


def test_bad_elasticsearch_metrics() -> None:
    with pytest.raises(MetricParameterError, match="unknown Elasticsearch metric 'ndcg'"):
        rankwise.evaluate(QRELS, RUN, {"ndcg": {"k": 10}})
    with pytest.raises(MetricParameterError, match="unknown parameter"):
        rankwise.evaluate(QRELS, RUN, {"dcg": {"k": 10, "gain": "exp"}})


def test_definitions_are_re_serialised_with_their_defaults() -> None:
    """Elasticsearch writes a metric back with every default filled in; so does the column label,
    and two spellings of one metric are one column. maximum_relevance defaults to 3."""
    res = rankwise.evaluate(QRELS, RUN, ['{"expected_reciprocal_rank": {"k": 3}}', {"precision": {}}])
    assert list(res.summary.columns) == ['{"expected_reciprocal_rank": {"k": 3, "maximum_relevance": 3}}',
                                         '{"precision": {"ignore_unlabeled": false, "k": 10, '
                                         '"relevant_rating_threshold": 1}}']
    r = [7 / 8, 3 / 8, 7 / 8]
    err = r[0] + (1 - r[0]) * r[1] / 2 + (1 - r[0]) * (1 - r[1]) * r[2] / 3
    assert res.summary.iloc[0, 0] == pytest.approx(err)


def test_per_query_details() -> None:
    run = Run.from_ranked_lists({"q": [0, "u1", 1, "u2"]})
    metric = '{"dcg": {"k": 4, "normalize": true}}'
    res = rankwise.evaluate(QRELS, run, [metric, {"precision": {"k": 4}}, {"mean_reciprocal_rank": {"k": 4}}])
    dcg = res.details(metric).loc[("run", "q")]
    assert dcg["dcg"] == pytest.approx(7 + 3 / 2) and dcg["unrated_docs"] == 2
    assert dcg["normalized_dcg"] == pytest.approx(res.summary.iloc[0][metric])
    prec = res.details('{"precision": {"k": 4}}').loc[("run", "q")]
    assert (prec["relevant_docs_retrieved"], prec["docs_retrieved"]) == (2, 4)
    assert res.details('{"mean_reciprocal_rank": {"k": 4}}').loc[("run", "q"), "first_relevant"] == 1
    with pytest.raises(rankwise.errors.RankwiseError, match="no per-query details"):
        rankwise.evaluate(QRELS, RUN, "map").details("map")
