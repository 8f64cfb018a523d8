"""The ``torchmetrics`` profile reproduces torchmetrics' retrieval metrics (differential, when
torch and torchmetrics are installed), on a real run and on generated runs with ties, graded
labels and scores <= 0."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import GOLDEN
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.data import load_qrels, load_run

torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.functional.retrieval")

K = 5
OURS = [f"P@{K}", f"recall@{K}", "map", f"map@{K}", "mrr", f"mrr@{K}", f"ndcg@{K}", "ndcg",
        f"hit_rate@{K}", "r-precision"]


def torchmetrics_per_query(qrels: dict, run: dict, rel_level: int = 1) -> dict[str, dict[str, float]]:
    """Each metric of ``OURS`` per query, computed by torchmetrics' functional retrieval API on
    the documents the run scored (target 0 for unjudged documents)."""
    out: dict[str, dict[str, float]] = {name: {} for name in OURS}
    for q, docs in run.items():
        if q not in qrels:
            continue
        preds = torch.tensor([float(s) for s in docs.values()], dtype=torch.float64)
        labels = torch.tensor([max(qrels[q].get(d, 0), 0) for d in docs], dtype=torch.long)
        binary = labels >= rel_level
        values = {
            f"P@{K}": tm.retrieval_precision(preds, binary, top_k=K),
            f"recall@{K}": tm.retrieval_recall(preds, binary, top_k=K),
            "map": tm.retrieval_average_precision(preds, binary),
            f"map@{K}": tm.retrieval_average_precision(preds, binary, top_k=K),
            "mrr": tm.retrieval_reciprocal_rank(preds, binary),
            f"mrr@{K}": tm.retrieval_reciprocal_rank(preds, binary, top_k=K),
            f"ndcg@{K}": tm.retrieval_normalized_dcg(preds, labels, top_k=K),
            "ndcg": tm.retrieval_normalized_dcg(preds, labels),
            f"hit_rate@{K}": tm.retrieval_hit_rate(preds, binary, top_k=K),
            "r-precision": tm.retrieval_r_precision(preds, binary),
        }
        # the module API scores a query without a relevant document 0 (empty_target_action='neg')
        for name, value in values.items():  # nDCG's module checks its graded target
            empty = not bool((labels if name.startswith("ndcg") else binary).sum())
            out[name][q] = 0.0 if empty else float(value)
    return out


TIE_AVERAGED = [f"ndcg@{K}", "ndcg"]
"""torchmetrics averages nDCG over tied scores; its other metrics take tied documents in the order
torch.topk / torch.argsort leave them, which torch does not specify (it changes with the list's
length), so they are compared on runs without ties."""


def assert_profile_matches(qrels: dict, run: dict, rel_level: int = 1, names: list[str] = OURS) -> None:
    expected = torchmetrics_per_query(qrels, run, rel_level)
    ours = rankwise.evaluate(qrels, run, OURS, profile="torchmetrics", rel_level=rel_level).per_query.loc["run"]
    for name in names:
        queries = list(expected[name])
        theirs = np.array([expected[name][q] for q in queries])
        # torchmetrics computes AP, nDCG and the ratios in float32: agreement to float32's precision
        assert ours.loc[queries, name].to_numpy() == pytest.approx(theirs, abs=2e-6), name


def test_hand_example() -> None:
    # q: d2 (non-rel, 0.6), d1 (rel, 0.5), d4 unjudged 0.2, d3 (rel) scored -1: not retrieved for
    # P/R/AP/RR (but it counts in R = 2); d9 is relevant but unscored, so it does not exist.
    qrels = {"q": {"d1": 1, "d2": 0, "d3": 1, "d9": 1}}
    run = {"q": {"d2": 0.6, "d1": 0.5, "d4": 0.2, "d3": -1.0}}
    res = rankwise.evaluate(qrels, run, OURS, profile="torchmetrics").summary.iloc[0]
    assert res["P@5"] == pytest.approx(1 / 5)  # d1 only: d3 is not retrieved
    assert res["recall@5"] == pytest.approx(1 / 2)  # R = 2 (d1, d3; d9 was never scored)
    assert res["map"] == pytest.approx(1 / 2)  # precision 1/2 at d1, / 1 relevant retrieved
    assert res["mrr"] == pytest.approx(1 / 2)
    assert res["hit_rate@5"] == 1.0
    assert res["ndcg"] == pytest.approx((1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3)))
    assert res["r-precision"] == pytest.approx(1 / 2)  # top 2 = d2, d1
    assert_profile_matches(qrels, run)


def test_tied_scores_average_ndcg_gains() -> None:
    # d1 (rel) and d2 (non-rel) tie at 0.5: each rank 1-2 gets gain 0.5; d3 (rel) at rank 3
    qrels = {"q": {"d1": 1, "d2": 0, "d3": 1}}
    run = {"q": {"d1": 0.5, "d2": 0.5, "d3": 0.1}}
    res = rankwise.evaluate(qrels, run, ["ndcg"], profile="torchmetrics").summary.iloc[0]
    dcg = 0.5 * (1 + 1 / np.log2(3)) + 1 / np.log2(4)
    assert res["ndcg"] == pytest.approx(dcg / (1 + 1 / np.log2(3)))
    assert_profile_matches(qrels, run, names=TIE_AVERAGED)


@pytest.mark.parametrize("level", [1, 2])
def test_matches_torchmetrics_on_dl19_bm25(level: int) -> None:
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    run = load_run(GOLDEN / "BM25.dl19.trec").to_dict()
    assert_profile_matches(qrels, run, level)


@st.composite
def qrels_and_run(draw: st.DrawFn, ties: bool) -> tuple[dict, dict]:
    n_q = draw(st.integers(1, 4))
    qrels: dict = {}
    run: dict = {}
    for qi in range(n_q):
        n = draw(st.integers(1, 12))
        docs = [f"d{i}" for i in range(n)]
        values = st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.0, 2.0]) if ties else st.integers(-3, 20).map(float)
        scores = draw(st.lists(values, min_size=n, max_size=n, unique=not ties))
        labels = draw(st.lists(st.sampled_from([0, 0, 1, 2, 3]), min_size=n + 2, max_size=n + 2))
        run[f"q{qi}"] = dict(zip(docs, scores, strict=True))
        judged = {f"d{i}": lab for i, lab in enumerate(labels) if draw(st.booleans()) or i >= n}
        qrels[f"q{qi}"] = judged or {"d0": 0}
    return qrels, run


@settings(max_examples=150, deadline=None)
@given(qrels_and_run(ties=False))
def test_matches_torchmetrics_on_generated_runs(data: tuple[dict, dict]) -> None:
    qrels, run = data
    assert_profile_matches(qrels, run)


@settings(max_examples=150, deadline=None)
@given(qrels_and_run(ties=True))
def test_matches_torchmetrics_ndcg_on_generated_runs_with_ties(data: tuple[dict, dict]) -> None:
    qrels, run = data
    assert_profile_matches(qrels, run, names=TIE_AVERAGED)
