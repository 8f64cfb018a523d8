"""Continuous relevance (watch time, percentages, signed values) and signed-gain nDCG."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.errors import InputError, RankwiseError
from rankwise.streaming.ranking import NDCG, RankingMetrics

QRELS = {"q1": {"a": 30.5, "b": 0.0, "c": 2.25, "d": -3.0}}
RUN = {"q1": {"a": 1.0, "c": 3.0, "d": 2.0, "b": 0.5}}   # ranking c, d, a, b


def _continuous(qrels: dict) -> rankwise.Qrels:
    return rankwise.load_qrels(qrels, continuous=True)


def test_hand_example_plain_signed_and_min_max() -> None:
    got = rankwise.evaluate(_continuous(QRELS), RUN, ["ndcg@3", "ndcg_signed@3", "ndcg_signed(normalise=min_max)@3",
                                                      "dcg@2", "MDCG@2"]).summary.iloc[0]
    ideal = 30.5 + 2.25 / math.log2(3)                       # 30.5 first, then 2.25 (the -3 and 0 add nothing)
    # plain nDCG zeroes the -3: c 2.25 at rank 1, d 0 at rank 2, a 30.5 at rank 3
    assert got["ndcg@3"] == pytest.approx((2.25 + 30.5 / 2) / ideal, abs=1e-12)
    signed = 2.25 - 3 / math.log2(3) + 30.5 / 2               # the -3 at rank 2 counts
    assert got["ndcg_signed@3"] == pytest.approx(signed / ideal, abs=1e-12)
    worst = -3.0                                              # the worst ranking puts d first
    assert got["ndcg_signed(normalise=min_max)@3"] == pytest.approx((signed - worst) / (ideal - worst), abs=1e-12)
    assert got["dcg@2"] == pytest.approx(2.25, abs=1e-12)
    assert got["MDCG@2"] == pytest.approx((2.25 + 2.25) / 2, abs=1e-12)   # DCG@1 = DCG@2 = 2.25


def test_signed_ndcg_is_negative_when_harm_comes_first() -> None:
    run = {"q1": {"d": 3.0, "b": 2.0, "c": 1.0}}             # -3 at rank 1, 0 at 2, 2.25 at 3
    got = rankwise.evaluate(_continuous(QRELS), run, ["ndcg_signed@3"]).summary.iloc[0, 0]
    dcg = -3.0 + 2.25 / 2
    assert dcg < 0 and got == pytest.approx(dcg / 3.0, abs=1e-12)   # divided by |worst DCG@3| = 3


def test_signed_gains_on_integer_grades() -> None:
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}}
    run = {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}}
    got = rankwise.evaluate(qrels, run, ["ndcg_signed(0=-1)@3"]).summary.iloc[0, 0]
    dcg = -1 + 2 / math.log2(3) + 1 / 2                       # b costs 1 at rank 1
    assert got == pytest.approx(dcg / (2 + 1 / math.log2(3)), abs=1e-12)


def test_ndcg_on_continuous_relevance_equals_scikit_learn() -> None:
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(7)
    truth = rng.exponential(size=(40, 12)) * (rng.random((40, 12)) < 0.6)   # watch time, many zeros
    scores = rng.normal(size=(40, 12))
    qrels = {f"q{i}": {f"d{j}": float(truth[i, j]) for j in range(12)} for i in range(40)}
    run = {f"q{i}": {f"d{j}": float(scores[i, j]) for j in range(12)} for i in range(40)}
    keep = truth.sum(axis=1) > 0
    for k in (3, 10):
        per_query = rankwise.evaluate(_continuous(qrels), run, [f"ndcg@{k}"]).per_query[f"ndcg@{k}"]
        got = per_query.droplevel("run").reindex([f"q{i}" for i in range(40)]).to_numpy()
        expected = [ndcg_score(truth[i:i + 1], scores[i:i + 1], k=k) for i in range(40)]
        np.testing.assert_allclose(got[keep], np.asarray(expected)[keep], atol=1e-12)
        batches = NDCG(k=k, continuous=True).update(predictions=scores[:25], targets=truth[:25])
        batches = batches.merge(NDCG(k=k, continuous=True).update(predictions=scores[25:], targets=truth[25:]))
        assert batches.compute() == pytest.approx(ndcg_score(truth, scores, k=k), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=9), st.randoms(use_true_random=False))
def test_integer_grades_read_as_continuous_give_the_same_ndcg(labels: list[int], rnd) -> None:
    qrels = {"q": {f"d{i}": label for i, label in enumerate(labels)}}
    run = {"q": {f"d{i}": rnd.random() for i in range(len(labels))}}
    names = ["ndcg@5", "ndcg", "dcg@3"]
    a = rankwise.evaluate(qrels, run, names).summary.iloc[0].to_numpy()
    b = rankwise.evaluate(_continuous(qrels), run, names).summary.iloc[0].to_numpy()
    np.testing.assert_allclose(a, b, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=9), st.randoms(use_true_random=False))
def test_signed_ndcg_bounds_and_extremes(values: list[float], rnd) -> None:
    qrels = {"q": {f"d{i}": v for i, v in enumerate(values)}}
    run = {"q": {f"d{i}": rnd.random() for i in range(len(values))}}
    names = ["ndcg_signed@5", "ndcg_signed(normalise=min_max)@5"]
    signed, min_max = rankwise.evaluate(_continuous(qrels), run, names).summary.iloc[0].to_numpy()
    assert -1 - 1e-12 <= signed <= 1 + 1e-12 and -1e-12 <= min_max <= 1 + 1e-12
    # the ideal ranking: the positive documents only, best first; the worst: the negative ones, worst first
    best = {"q": {f"d{i}": v for i, v in enumerate(values) if v > 0}}
    if best["q"]:
        top = rankwise.evaluate(_continuous(qrels), best, names).summary.iloc[0].to_numpy()
        np.testing.assert_allclose(top, [1.0, 1.0], atol=1e-9)
    worst = {"q": {f"d{i}": -v for i, v in enumerate(values) if v < 0}}
    if worst["q"]:
        bottom = rankwise.evaluate(_continuous(qrels), worst, names).summary.iloc[0].to_numpy()
        np.testing.assert_allclose(bottom, [-1.0, 0.0], atol=1e-9)


def test_measures_of_integer_grades_are_refused() -> None:
    with pytest.raises(RankwiseError, match="P@10 needs integer relevance grades; continuous relevance feeds nDCG"):
        rankwise.evaluate(_continuous(QRELS), RUN, ["ndcg@10", "P@10"])
    with pytest.raises(RankwiseError, match="per-grade gains do not apply"):
        rankwise.evaluate(_continuous(QRELS), RUN, ["ndcg(1=3)"])
    with pytest.raises(RankwiseError, match="needs integer relevance grades"):
        RankingMetrics(["map"], continuous=True)
    with pytest.raises(InputError, match=r"got 0\.5; for continuous relevance .* continuous=True"):
        rankwise.evaluate({"q1": {"a": 0.5}}, RUN, ["ndcg@3"])
    with pytest.raises(InputError, match="expected a finite number"):
        rankwise.load_qrels({"q1": {"a": float("nan")}}, continuous=True)


def test_files_and_command_line(tmp_path, capsys) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app
    from rankwise.cli.quick import quick_evaluate

    trec = tmp_path / "watch.qrels"
    trec.write_text("q1 0 a 30.5\nq1 0 b 0\nq1 0 c 2.25\nq1 0 d -3\n")
    csv = tmp_path / "watch.csv"
    csv.write_text("query_id,doc_id,relevance\nq1,a,30.5\nq1,b,0\nq1,c,2.25\nq1,d,-3\n")
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 a 1.5\nq1 0 b lots\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 c 1 3 r\nq1 Q0 d 2 2 r\nq1 Q0 a 3 1 r\nq1 Q0 b 4 0.5 r\n")
    for path in (trec, csv):
        assert rankwise.load_qrels(path, continuous=True).to_dict() == QRELS
    with pytest.raises(InputError, match=r"bad.qrels:2: field 'label': expected a number .* got 'lots'"):
        rankwise.load_qrels(bad, continuous=True)
    expected = float(rankwise.evaluate(_continuous(QRELS), RUN, ["ndcg_signed@3"]).summary.iloc[0, 0])
    assert quick_evaluate([str(trec), str(run), "--continuous", "-m", "ndcg_signed@3", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"r,all,{expected!r}"
    typed = CliRunner().invoke(app, ["evaluate", str(csv), str(run), "--continuous", "-m", "ndcg_signed@3",
                                     "-f", "csv"])
    assert typed.exit_code == 0 and typed.stdout.splitlines()[1] == f"r,all,{expected!r}"
    assert quick_evaluate([str(trec), str(run), "-m", "ndcg@3", "-f", "csv"]) == 0
    assert "rankwise evaluate --continuous" in capsys.readouterr().err   # read as trec_eval does, with a hint
