"""Profiles reproduce other tools: ranx exactly (differential, when ranx is installed), RecBole's
and Elasticsearch's definitions by hand."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GOLDEN

import rankwise
from rankwise.data import load_qrels, load_run
from rankwise.data.containers import Qrels, Run
from rankwise.errors import RankwiseError

RANX = ["ndcg@10", "ndcg", "map@100", "map", "mrr@10", "recall@100", "precision@10", "hit_rate@10",
        "ndcg_burges@10", "f1@10", "r-precision", "hits@10"]
OURS = ["ndcg@10", "ndcg", "map@100", "map", "mrr@10", "recall@100", "P@10", "hit_rate@10",
        "ndcg_burges@10", "f1@10", "Rprec", "hits@10"]


@pytest.mark.parametrize("metric", range(len(RANX)), ids=RANX)
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("system", ["BM25", "SPLADE_P_P_ENSEMBLE_DISTIL"])
def test_ranx_profile_matches_ranx(system: str, level: int, metric: int, ranx_reference) -> None:
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    run = load_run(GOLDEN / f"{system}.dl19.trec").to_dict()
    theirs = RANX[metric] + (f"-l{level}" if level > 1 else "")
    expected = ranx_reference(f"{system}-{theirs}", lambda ranx: dict(zip(
        ranx.Run(run).keys(), ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [theirs], return_mean=False),
        strict=True)))
    mine = OURS[metric]
    ours = rankwise.evaluate(qrels, run, [mine], profile="ranx", rel_level=level).per_query.loc["run"]
    assert len(expected) == 43  # every judged query of DL19
    assert ours.loc[list(expected), mine].to_numpy() == pytest.approx(list(expected.values()), abs=1e-12), theirs


def test_ranx_profile_scores_unanswered_queries_zero(ranx_reference) -> None:
    """ranx (make_comparable=True) gives 0 in every metric to a judged query the run did not
    answer, and its precision, recall and F1 without a cut-off are over everything retrieved."""
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    run = load_run(GOLDEN / "BM25.dl19.trec").to_dict()
    for qid in list(run)[::5]:
        del run[qid]  # a fifth of the judged queries unanswered
    names = ["precision", "recall", "f1", "precision@10", "recall@10", "f1@10", "ndcg@10", "map", "mrr"]
    expected = ranx_reference("BM25-fifth-unanswered", lambda ranx: {
        name: list(values) for name, values in ranx.evaluate(
            ranx.Qrels(qrels), ranx.Run(run), names, return_mean=False, make_comparable=True).items()})
    ours = rankwise.evaluate(qrels, run, names, profile="ranx").per_query.loc["run"]
    order = sorted(qrels)
    assert len(ours) == len(order)
    for name in names:
        assert ours.loc[order, name].to_numpy() == pytest.approx(np.asarray(expected[name]), abs=1e-12), name


def test_recbole_profile() -> None:
    qrels = Qrels.from_sets({"u": {"a", "c", "f"}}, relevance={"u": {"a": 3, "c": 1, "f": 2}})
    run = Run.from_ranked_lists({"u": ["a", "b", "c"]})
    res = rankwise.evaluate(qrels, run, ["map@2", "ndcg@3"], profile="recbole").summary.iloc[0]
    assert res["map@2"] == pytest.approx(1 / 2)  # precision 1 at rank 1, / min(R = 3, k = 2)
    # binary gains: DCG = 1 + 1/log2(4); ideal = 1 + 1/log2(3) + 1/log2(4)
    assert res["ndcg@3"] == pytest.approx((1 + 0.5) / (1 + 1 / np.log2(3) + 0.5))


def test_elasticsearch_profile_uses_rank_eval_definitions() -> None:
    qrels = Qrels.from_sets({"q": {0, 1, 2}}, relevance={"q": {0: 3, 1: 0, 2: 1}})
    run = Run.from_ranked_lists({"q": [0, "unrated", 2]})
    res = rankwise.evaluate(qrels, run, ["precision@3", "ndcg@3"], profile="elasticsearch").summary.iloc[0]
    assert res["precision@3"] == pytest.approx(2 / 3)
    dcg = 7 + 1 / np.log2(4)  # gain 2^r - 1
    ideal = 7 + 1 / np.log2(3)  # ratings 3, 1, 0, cut at min(3 hits, 3 ratings)
    assert res["ndcg@3"] == pytest.approx(dcg / ideal)


def test_unknown_profile() -> None:
    with pytest.raises(RankwiseError, match="unknown profile 'pyterrier'"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "map", profile="pyterrier")
