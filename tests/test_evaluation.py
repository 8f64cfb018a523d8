"""The Python API: conventions, many runs, warnings, signatures, hand-computed values."""

from __future__ import annotations

import math

import pytest
from conftest import DATA

import rankwise
from rankwise.errors import InputError, RankwiseError, UnknownMetricError

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 1, "d9": -1}, "q2": {"a": 1}, "q3": {"z": 1}}
RUN = {"q1": {"d1": 5.0, "d5": 4.0, "d2": 3.0, "d3": 2.0, "d9": 1.0}, "q2": {"b": 2.0, "a": 1.0},
       "q4": {"x": 1.0}}


def test_hand_computed_values() -> None:
    res = rankwise.evaluate(QRELS, RUN, ["map", "P@2", "ndcg@5", "recip_rank", "bpref", "num_rel_ret"])
    pq = res.per_query.loc["run"]
    # q1: relevant at ranks 1 and 4, R = 3: AP = (1/1 + 2/4) / 3 = 0.5
    assert pq.loc["q1", "map"] == pytest.approx(0.5)
    # q2: relevant at rank 2, R = 1: AP = 1/2
    assert pq.loc["q2", "map"] == pytest.approx(0.5)
    assert pq.loc["q1", "P@2"] == 0.5 and pq.loc["q2", "P@2"] == 0.5
    # q1 DCG@5 = 2/log2(2) + 1/log2(5); ideal = 2 + 1/log2(3) + 1/log2(4)
    expected = (2 + 1 / math.log2(5)) / (2 + 1 / math.log2(3) + 0.5)
    assert pq.loc["q1", "ndcg@5"] == pytest.approx(expected, abs=1e-15)
    assert pq.loc["q2", "recip_rank"] == 0.5
    # q1 bpref: d1 has no judged non-relevant above (1), d3 has d2 above: 1 - 1/min(1, 3) = 0 -> 1/3
    assert pq.loc["q1", "bpref"] == pytest.approx(1 / 3)
    assert res.summary.loc["run", "num_rel_ret"] == 3
    assert res.summary.loc["run", "map"] == pytest.approx(0.5)


def test_warnings_count_what_was_left_out() -> None:
    res = rankwise.evaluate(QRELS, RUN, "map")
    assert any("1 query(ies) of the run have no judgments" in w and "'q4'" in w for w in res.warnings)
    assert any("1 judged query(ies) are absent from the run and were left out" in w for w in res.warnings)
    assert list(res.per_query.index.get_level_values("query")) == ["q1", "q2"]


def test_missing_zero_scores_absent_queries() -> None:
    res = rankwise.evaluate(QRELS, RUN, "map", missing="zero")
    pq = res.per_query.loc["run"]
    assert pq.loc["q3", "map"] == 0.0
    assert res.summary.loc["run", "map"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)


def test_signatures_name_every_convention() -> None:
    res = rankwise.evaluate(QRELS, RUN, ["ndcg@10", "P@5"], rel_level=2, depth=100)
    assert res.signatures["ndcg@10"] == (
        "nDCG@10|gain=linear|ties=trec|rel=2|judged=all|missing=skip|depth=100|scores=float64|"
        f"rankwise-{rankwise.__version__}")
    assert res.signatures["P@5"].startswith("P@5|ties=trec|rel=2|")


def test_many_runs_share_qrels_and_keep_names() -> None:
    res = rankwise.evaluate(DATA / "qrels.test", {"a": DATA / "results.test", "b": DATA / "results.trunc"},
                            ["map", "P.5,10"])
    assert list(res.summary.index) == ["a", "b"]
    assert list(res.summary.columns) == ["map", "P_5", "P_10"]
    assert res.summary.loc["a", "map"] == pytest.approx(0.1785, abs=5e-5)  # trec_eval: 0.1785


def test_ties_conventions() -> None:
    qrels = {"q": {"b": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    # trec: doc id descending -> c, b, a: relevant at rank 2
    assert rankwise.evaluate(qrels, run, "recip_rank").summary.iloc[0, 0] == 0.5
    assert rankwise.evaluate(qrels, run, "recip_rank", ties="docid_asc").summary.iloc[0, 0] == 0.5
    run2 = {"q": {"b": 1.0, "a": 1.0, "c": 1.0}}
    assert rankwise.evaluate(qrels, run2, "recip_rank", ties="input").summary.iloc[0, 0] == 1.0
    # trec_eval 10.0 compares doubles: a (1.00000001) ranks above b (1.0), so b is at rank 2;
    # as C floats (trec_eval 9, pytrec_eval) they are equal and tie: b > a by doc id, rank 1
    run3 = {"q": {"a": 1.00000001, "b": 1.0}}
    assert rankwise.evaluate(qrels, run3, "recip_rank").summary.iloc[0, 0] == 0.5
    assert rankwise.evaluate(qrels, run3, "recip_rank", score_precision="float32").summary.iloc[0, 0] == 1.0


def test_duplicate_policies(tmp_path) -> None:
    path = tmp_path / "dup.trec"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 2.0 t\nq Q0 a 3 3.0 t\n")
    qrels = {"q": {"a": 1}}
    with pytest.raises(InputError, match=r"dup.trec:3: field 'doc': document 'a' is listed twice .*first at line 1"):
        rankwise.evaluate(qrels, path, "recip_rank")
    first = rankwise.evaluate(qrels, path, "recip_rank", duplicates="first")
    assert first.summary.iloc[0, 0] == 0.5  # a keeps score 1.0, ranked after b
    best = rankwise.evaluate(qrels, path, "recip_rank", duplicates="best")
    assert best.summary.iloc[0, 0] == 1.0  # a keeps score 3.0
    assert any("1 duplicate (query, document) row(s) dropped" in w for w in best.warnings)


def test_qrels_judged_twice_is_an_error(tmp_path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q 0 a 1\nq 0 a 0\n")
    with pytest.raises(InputError, match=r"q.txt:2: field 'doc': document 'a' is judged twice"):
        rankwise.evaluate(path, {"q": {"a": 1.0}}, "map")
    # of several repeated pairs the one on the earliest line is named, with its first line
    # (query q2 sorts after q1, and its repeat comes first in the file)
    path.write_text("q2 0 d1 1\nq1 0 d1 1\nq2 0 d1 0\nq1 0 d1 0\n")
    with pytest.raises(InputError, match=r"q.txt:3: field 'doc': document 'd1' is judged twice for query 'q2' "
                                         r"\(first at line 1\)"):
        rankwise.evaluate(path, {"q1": {"d1": 1.0}}, "map")


def test_unknown_metric_and_convention() -> None:
    with pytest.raises(UnknownMetricError, match="did you mean 'ndcg@10'"):
        rankwise.evaluate(QRELS, RUN, "ndgc@10")
    with pytest.raises(RankwiseError, match="unknown convention"):
        rankwise.evaluate(QRELS, RUN, "map", relevance=2)
    with pytest.raises(RankwiseError, match="convention ties='random'"):
        rankwise.evaluate(QRELS, RUN, "map", ties="random")


def test_judged_only_and_depth() -> None:
    # q1 judged-only ranking: d1(2), d2(0), d3(1), d9(-1 is judged unjudgeable: dropped too)
    res = rankwise.evaluate(QRELS, RUN, ["P@3", "num_ret"], judged_only=True)
    assert res.per_query.loc[("run", "q1"), "num_ret"] == 3
    assert res.per_query.loc[("run", "q1"), "P@3"] == pytest.approx(2 / 3)
    res = rankwise.evaluate(QRELS, RUN, ["num_ret", "map"], depth=1)
    assert res.per_query.loc[("run", "q1"), "num_ret"] == 1
    assert res.per_query.loc[("run", "q1"), "map"] == pytest.approx(1 / 3)


def test_json_shape() -> None:
    out = rankwise.evaluate(QRELS, RUN, ["map"]).to_dict(per_query=True)
    assert set(out) == {"rankwise", "metrics", "runs", "warnings", "notices"}
    assert out["runs"]["run"]["per_query"]["q1"] == {"map": 0.5}
    assert out["metrics"]["map"]["signature"].startswith("AP|")


def test_loaded_objects_cache_their_alignment() -> None:
    from rankwise.data import load_qrels, load_run

    qrels, run = load_qrels(DATA / "qrels.test"), load_run(DATA / "results.test")
    first = rankwise.evaluate(qrels, run, ["map", "ndcg@10"])
    again = rankwise.evaluate(qrels, run, ["map", "ndcg@10"])
    assert first.summary.equals(again.summary)
    assert len(run.__dict__["_rankwise_aligned"]) == 1
    deeper = rankwise.evaluate(qrels, run, ["map"], depth=10)  # other conventions: a new alignment
    assert len(run.__dict__["_rankwise_aligned"]) == 2
    assert deeper.summary.loc["STANDARD", "map"] < first.summary.loc["STANDARD", "map"]
    other = load_qrels(DATA / "qrels.rel_level")  # other qrels: never served from the cache
    assert rankwise.evaluate(other, run, ["map"]).summary.loc["STANDARD", "map"] != pytest.approx(
        first.summary.loc["STANDARD", "map"])


def test_duplicates_found_across_chunks_and_lengths() -> None:
    """A duplicate in another Arrow chunk, beside ids longer than 8 bytes, is still found."""
    import pyarrow as pa

    from rankwise.data.containers import Run

    query = pa.chunked_array([["q", "q"], ["q", "q"]])
    doc = pa.chunked_array([["a", "b"], ["a-very-long-document-id", "a"]])
    run = Run(query, doc, [4.0, 3.0, 2.0, 1.0], source="chunks")
    with pytest.raises(InputError, match="document 'a' is listed twice"):
        rankwise.evaluate({"q": {"a": 1}}, run, "map")


def test_threaded_alignment_equals_sequential(monkeypatch) -> None:
    """Large runs check duplicates on a second thread; the result must not change."""
    import importlib

    from rankwise.data import load_qrels, load_run

    align_module = importlib.import_module("rankwise.engine.align")
    qrels, metrics = DATA / "qrels.test", ["map", "ndcg", "P@10", "bpref", "relstring"]
    monkeypatch.setattr(align_module, "PARALLEL_MIN_ROWS", 10**12)
    sequential = rankwise.evaluate(load_qrels(qrels), load_run(DATA / "results.test"), metrics).per_query
    monkeypatch.setattr(align_module, "PARALLEL_MIN_ROWS", 0)
    threaded = rankwise.evaluate(load_qrels(qrels), load_run(DATA / "results.test"), metrics).per_query
    assert threaded.equals(sequential)
    rows = [line.split() for line in (DATA / "results.test").read_text().splitlines()]
    rows.append(rows[0])  # the first document once more, at the end of the file
    from rankwise.data.containers import Run

    duplicated = Run([r[0] for r in rows], [r[2] for r in rows], [float(r[4]) for r in rows], source="dup")
    with pytest.raises(InputError, match=r"dup:1501: field 'doc': document '.*' is listed twice"):
        rankwise.evaluate(qrels, duplicated, "map")


def test_a_metric_can_carry_its_own_conventions() -> None:
    # d1 (rel) and d2 (non-rel) tie: trec order puts d2 first (doc id descending), input order d1;
    # ties=expected averages: RR = (1/1 + 1/2) / 2
    qrels = {"q": {"d1": 1, "d2": 0}}
    run = {"q": {"d1": 1.0, "d2": 1.0}}
    res = rankwise.evaluate(qrels, run, ["RR", "RR(ties=input)", "RR(ties=expected)"])
    assert res.summary.iloc[0].tolist() == [0.5, 1.0, 0.75]
    assert res.signatures["RR(ties=expected)"].startswith("RR(ties=expected)|ties=expected|rel=1|")
    assert res.signatures["RR"].startswith("RR|ties=trec|")


def test_universe_and_retrieved_conventions() -> None:
    # judged relevant: d1, d3, d9; the run scores d1 (0.5), d2 (0.4, non-rel), d3 (-1)
    qrels = {"q": {"d1": 1, "d2": 0, "d3": 1, "d9": 1}}
    run = {"q": {"d1": 0.5, "d2": 0.4, "d3": -1.0}}
    res = rankwise.evaluate(qrels, run, ["R@3", "R(universe=run)@3", "R(universe=run,retrieved=positive)@3"])
    assert res.summary.iloc[0].tolist() == pytest.approx([2 / 3, 2 / 2, 1 / 2])


def test_conflicting_metric_conventions_are_refused() -> None:
    with pytest.raises(RankwiseError, match=r"P\(ties=expected,depth=5\)@5: .*ties='expected' cannot"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P(ties=expected,depth=5)@5"])
    with pytest.raises(RankwiseError, match="unknown argument"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P(tie=input)@5"])


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_equal_scores_across_a_query_boundary_are_not_one_tie(precision: str) -> None:
    # a run in rank order whose last row of q1 ties the first row of q2 (both 1.0): the tie
    # rule orders rows within a query only. Correct: q1 = a(2.0), b(1.0): b relevant at rank 2,
    # AP = 1/2; q2 = c(1.0), a(0.5): a relevant at rank 2, AP = 1/2. Treating (q1 b, q2 c) as one
    # tie and ordering it by document id (descending) would swap their labels: AP 0 and 1
    qrels = {"q1": {"b": 1}, "q2": {"a": 1}}
    run = rankwise.Run(["q1", "q1", "q2", "q2"], ["a", "b", "c", "a"], [2.0, 1.0, 1.0, 0.5], "r")
    res = rankwise.evaluate(qrels, run, ["map"], score_precision=precision)
    assert res.per_query["map"].tolist() == [0.5, 0.5]


def test_a_family_is_known_by_its_own_name() -> None:
    """``es_dcg`` is a family's own name: it parses with the family's defaults (k = 10, no
    normalisation), instead of 'unknown metric ... did you mean es_dcg'."""
    qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"a": 1.0, "b": 2.0}}
    got = rankwise.evaluate(qrels, run, ["es_dcg"]).summary["es_dcg"].iloc[0]
    assert got == pytest.approx(1 / math.log2(2) + 3 / math.log2(3))  # b (gain 2^1-1) first, a (2^2-1) second
    # maximum_relevance defaults to 3, as in Elasticsearch: R = (2^r - 1) / 8 -> b 1/8, then a 3/8
    got = rankwise.evaluate(qrels, run, ["es_expected_reciprocal_rank"]).summary.iloc[0, 0]
    assert got == pytest.approx(1 / 8 + (7 / 8) * (3 / 8) / 2)


@pytest.mark.parametrize(("typo", "suggested"), [("recal@100", "recall@100"), ("precison@5", "precision@5"),
                                                 ("ndgc@100", "ndcg@100")])
def test_typo_suggestions_keep_the_cut_off(typo: str, suggested: str) -> None:
    """'recal@100' suggested 'recall@10' before: the suggestion changed the cut-off."""
    with pytest.raises(UnknownMetricError) as caught:
        rankwise.evaluate(str(DATA / "qrels.test"), str(DATA / "results.test"), [typo])
    assert caught.value.suggestions[0] == suggested


def test_evaluating_no_runs_is_refused_not_an_empty_result() -> None:
    # rankwise.evaluate(qrels, {}) gave a raw pandas error, then an empty table without a word
    for empty in ({}, []):
        with pytest.raises(rankwise.errors.RankwiseError, match="no runs given"):
            rankwise.evaluate({"q": {"d": 1}}, empty, ["map"])


def test_ranked_lists_carry_the_systems_scores() -> None:
    from rankwise.data.containers import Run

    run = Run.from_ranked_lists({"u1": ["a", "b", "c"], "u2": ["d"]}, scores={"u1": [0.9, 0.4, 0.4], "u2": [2.5]})
    assert run.to_dict() == {"u1": {"a": 0.9, "b": 0.4, "c": 0.4}, "u2": {"d": 2.5}}
    # the same ranking as the positions when no score ties: P@1 and MRR equal
    by_position = Run.from_ranked_lists({"u1": ["a", "b", "c"], "u2": ["d"]})
    qrels = {"u1": {"a": 0, "b": 1}, "u2": {"d": 1}}
    assert rankwise.evaluate(qrels, run, ["P@1"]).summary.iloc[0, 0] == \
        rankwise.evaluate(qrels, by_position, ["P@1"]).summary.iloc[0, 0] == 0.5
    with pytest.raises(InputError, match="u1: the score at position 2 .0.5. is above the one before it .0.4."):
        Run.from_ranked_lists({"u1": ["a", "b"]}, scores={"u1": [0.4, 0.5]})
    with pytest.raises(InputError, match="u1: 2 items but 1 scores"):
        Run.from_ranked_lists({"u1": ["a", "b"]}, scores={"u1": [0.4]})
    with pytest.raises(InputError, match="same queries"):
        Run.from_ranked_lists({"u1": ["a"]}, scores={"u2": [1.0]})
