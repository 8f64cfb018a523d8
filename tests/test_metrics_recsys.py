"""Recommender metrics and ranked lists of arbitrary items, with hand-computed values."""

from __future__ import annotations

import math

import pytest

import rankwise
from rankwise.data.containers import Qrels, Run

# user u1: recommended [A, B, C, D, E]; correct {A, C, F}; user u2: [X, Y]; correct {Y}
LISTS = {"u1": ["A", "B", "C", "D", "E"], "u2": ["X", "Y"]}
TRUTH = {"u1": {"A", "C", "F"}, "u2": {"Y"}}


def _eval(metrics, **kw):
    return rankwise.evaluate(Qrels.from_sets(TRUTH), Run.from_ranked_lists(LISTS), metrics, **kw).per_query


def test_recommender_metrics_by_hand() -> None:
    pq = _eval(["f1@5", "ap_min@2", "mar@5", "arhr@5", "hit_rate@1", "hits@5", "cg@5", "lag", "map@5"])
    u1, u2 = pq.loc[("run", "u1")], pq.loc[("run", "u2")]
    # u1: hits at ranks 1 and 3; P@5 = 2/5, R@5 = 2/3 -> F1 = 2*(0.4)(2/3)/(0.4+2/3) = 0.5
    assert u1["f1@5"] == pytest.approx(0.5)
    # AP@2 / min(R=3, 2): precision at rank 1 only = 1 -> 1/2
    assert u1["ap_min@2"] == pytest.approx(0.5)
    # trec_eval's map_cut@5 divides by R = 3: (1/1 + 2/3) / 3
    assert u1["map@5"] == pytest.approx((1 + 2 / 3) / 3)
    # AR@5: recall at the hits 1/3 and 2/3, divided by R = 3
    assert u1["mar@5"] == pytest.approx((1 / 3 + 2 / 3) / 3)
    assert u1["arhr@5"] == pytest.approx(1 + 1 / 3) and u2["arhr@5"] == pytest.approx(1 / 2)
    assert (u1["hit_rate@1"], u2["hit_rate@1"]) == (1.0, 0.0)
    assert (u1["hits@5"], u1["cg@5"]) == (2.0, 2.0)
    # LAG: A has 0 non-relevant above, C has B above -> 0.5; u2: Y has X above -> 1
    assert (u1["lag"], u2["lag"]) == (0.5, 1.0)


def test_graded_truth_and_exp_gain() -> None:
    grades = {"u1": {"A": 3, "C": 1, "F": 2}, "u2": {"Y": 1}}
    q = Qrels.from_sets(TRUTH, relevance=grades)
    pq = rankwise.evaluate(q, Run.from_ranked_lists(LISTS), ["ndcg_burges@5", "ndcg@5", "err@5", "fcp"]).per_query
    u1 = pq.loc[("run", "u1")]
    # exponential gains 7 (A, rank 1), 1 (C, rank 3); ideal 7, 3 (F), 1
    dcg = 7 + 1 / math.log2(4)
    idcg = 7 + 3 / math.log2(3) + 1 / math.log2(4)
    assert u1["ndcg_burges@5"] == pytest.approx(dcg / idcg)
    assert u1["ndcg@5"] == pytest.approx((3 + 1 / 2) / (3 + 2 / math.log2(3) + 1 / 2))
    # ERR with max grade 3: R_A = 7/8, R_C = 1/8 -> 7/8 + (1/8)(1/8)/3
    assert u1["err@5"] == pytest.approx(7 / 8 + (1 / 8) * (1 / 8) / 3)
    # FCP over retrieved judged items A(3), C(1): one concordant pair
    assert u1["fcp"] == 1.0


def test_the_nDCG_article_example() -> None:
    """Relevances 0, 5, 1, 4, 2 at ranks 1-5: DCG = 5/log2(3) + 1/2 + 4/log2(5) + 2/log2(6) = 6.151,
    ideal order 5, 4, 2, 1, 0: IDCG = 5 + 4/log2(3) + 2/2 + 1/log2(5) = 8.954, nDCG = 0.687."""
    grades = [0, 5, 1, 4, 2]
    q = Qrels.from_sets({"q": set(range(5))}, relevance={"q": dict(enumerate(grades))})
    r = Run.from_ranked_lists({"q": list(range(5))})
    got = rankwise.evaluate(q, r, ["dcg@5", "ndcg@5"]).per_query.loc[("run", "q")]
    assert round(got["dcg@5"], 3) == 6.151
    assert round(got["ndcg@5"], 3) == 0.687


def test_ranked_lists_of_objects_with_a_key() -> None:
    movies = {"ann": [("Alien", 1979), ("Heat", 1995)], "bob": [("Heat", 1995)]}
    liked = {"ann": [("Heat", 1995)], "bob": [("Heat", 1995), ("Up", 2009)]}
    res = rankwise.evaluate(Qrels.from_sets(liked, key=repr), Run.from_ranked_lists(movies, key=repr),
                            ["recip_rank", "recall@10"])
    pq = res.per_query
    assert pq.loc[("run", "ann"), "recip_rank"] == 0.5
    assert pq.loc[("run", "bob"), "recall@10"] == 0.5
    # lists keep their order exactly: equal items never tie
    assert Run.from_ranked_lists([["b", "a"]]).score.tolist() == [2.0, 1.0]


def test_auc_per_query() -> None:
    pq = _eval(["auc"])
    # u1: positives A, C, F (F unretrieved); negatives B, D, E. Ranking A+ B- C+ D- E- then F+:
    # points (0,1/3) (1/3,1/3) (1/3,2/3) (2/3,2/3) (1,2/3) (1,1): area 1/9 + 2/9 + 2/9
    assert pq.loc[("run", "u1"), "auc"] == pytest.approx(1 / 3 * 1 / 3 + 1 / 3 * 2 / 3 + 1 / 3 * 2 / 3)


def test_ir_measures_arguments() -> None:
    from conftest import GOLDEN

    qrels, run = GOLDEN / "qrels.dl19-passage.txt", GOLDEN / "BM25.dl19.trec"
    both = rankwise.evaluate(qrels, run, ["P(rel=2)@10", "P@10", "AP(rel=2)"])
    level2 = rankwise.evaluate(qrels, run, ["P@10", "map"], rel_level=2)
    assert list(both.summary.columns) == ["P(rel=2)@10", "P@10", "AP(rel=2)"]
    assert both.summary.iloc[0]["P(rel=2)@10"] == level2.summary.iloc[0]["P@10"]
    assert both.summary.iloc[0]["AP(rel=2)"] == level2.summary.iloc[0]["map"]
    assert both.summary.iloc[0]["P@10"] != level2.summary.iloc[0]["P@10"]
    assert "|rel=2|" in both.signatures["P(rel=2)@10"] and "|rel=1|" in both.signatures["P@10"]
    exp = rankwise.evaluate(qrels, run, ["nDCG(dcg='exp-log2')@10", "ndcg_burges@10"]).summary.iloc[0]
    assert exp.iloc[0] == exp.iloc[1]
    with pytest.raises(ValueError, match="unknown argument"):
        rankwise.evaluate(qrels, run, "P(foo=1)@5")


def test_docs_metrics_page_is_generated_from_the_registry() -> None:
    from pathlib import Path

    from rankwise.metrics.catalogue import markdown

    page = Path(__file__).parent.parent / "docs" / "metrics.md"
    assert page.read_text() == markdown(), "regenerate: python -m rankwise.metrics.catalogue > docs/metrics.md"


def test_ncg_is_cumulative_gain_over_the_ideal_one() -> None:
    # labels a 2, b 1, c 3; the run ranks a, x (unjudged), b
    # NCG@2 = (2 + 0) / (3 + 2) = 0.4; NCG@3 = (2 + 0 + 1) / (3 + 2 + 1) = 0.5
    # a query without a positive label scores 0, as nDCG's (the `undefined` convention decides)
    qrels = {"q": {"a": 2, "b": 1, "c": 3}, "none": {"a": 0}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}, "none": {"a": 1.0}}
    res = rankwise.evaluate(qrels, run, ["NCG@2", "ncg@3", "ndcg_cut_2"])
    per_query = res.per_query.loc["run"]
    assert per_query.loc["q", ["NCG@2", "ncg@3"]].tolist() == pytest.approx([0.4, 0.5])
    assert per_query.loc["none"].tolist() == [0.0, 0.0, 0.0]
    assert res.summary.iloc[0, :2].tolist() == pytest.approx([0.2, 0.25])


def test_implicit_feedback_and_rank_only_lists_go_in(tmp_path) -> None:
    # held-out interactions without a label, a top-k list with a rank and no score: the normal
    # recommender case, refused before (`no relevance label column`, `no score column`)
    import pandas as pd

    held_out = pd.DataFrame({"user_id": ["u", "u", "u", "v"], "item_id": ["a", "b", "a", "c"]})
    top_k = pd.DataFrame({"user_id": ["u", "u", "v", "v"], "item_id": ["b", "x", "c", "y"], "rank": [1, 2, 2, 1]})
    # u: b relevant at rank 1; v: y (not relevant) at 1, c at 2
    # P@1 = (1 + 0) / 2 = 0.5; recall@2 = (1/2 + 1/1) / 2 = 0.75
    res = rankwise.evaluate(held_out, top_k, ["P@1", "recall@2"])
    assert res.summary.iloc[0].tolist() == pytest.approx([0.5, 0.75])
    assert res.warnings == ["<DataFrame>: no label column: every row is an interaction, a relevant item (label 1); "
                            "1 repeated (user, item) interaction(s) counted once"]
    # the same from CSV files
    held_out.to_csv(tmp_path / "held_out.csv", index=False)
    top_k.to_csv(tmp_path / "top_k.csv", index=False)
    from_files = rankwise.evaluate(str(tmp_path / "held_out.csv"), str(tmp_path / "top_k.csv"), ["P@1", "recall@2"])
    assert from_files.summary.iloc[0].tolist() == pytest.approx([0.5, 0.75])
    assert any("1 repeated (user, item) interaction(s) counted once" in w for w in from_files.warnings)
    # neither a score nor a rank: refused, naming both
    top_k.drop(columns="rank").to_csv(tmp_path / "bare.csv", index=False)
    with pytest.raises(rankwise.errors.InputError, match="no score or rank column"):
        rankwise.evaluate(str(tmp_path / "held_out.csv"), str(tmp_path / "bare.csv"), ["P@1"])
