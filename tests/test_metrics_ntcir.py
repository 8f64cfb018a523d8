"""Q-measure, nERR@k and graded AP: against pyNTCIREVAL (a port of Sakai's NTCIREVAL), hand-computed
examples and the invariants that tie them to AP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise

pyntcireval = pytest.importorskip("pyNTCIREVAL")
from pyNTCIREVAL import Labeler  # noqa: E402
from pyNTCIREVAL.metrics import AP, QMeasure, nERR  # noqa: E402


def _random_topics(seed: int, n_queries: int = 30, max_label: int = 3):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.choice(docs, size=25, replace=False)
        labels = rng.choice(np.arange(max_label + 1), size=25, p=[0.55, 0.2, 0.15, 0.1][: max_label + 1]
                            / np.sum([0.55, 0.2, 0.15, 0.1][: max_label + 1]))
        if labels.max() == 0:
            labels[0] = 1
        qrels[f"q{q}"] = {d: int(label) for d, label in zip(judged, labels, strict=True)}
        ranked = rng.permutation(docs)[: rng.integers(5, 30)]
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return qrels, run


def _peer(qrels: dict, run: dict, metric: str, k: int | None, max_label: int) -> dict[str, float]:
    """pyNTCIREVAL's value per query, gains 1:2:...:max_label."""
    grades = list(range(1, max_label + 1))
    out = {}
    for q, judged in qrels.items():
        xrelnum = [sum(1 for v in judged.values() if v == level) for level in range(max_label + 1)]
        ranked = sorted(run[q], key=lambda d: -run[q][d])
        labelled = Labeler(judged).label(ranked)
        if metric == "Q":
            m = QMeasure(xrelnum, grades, 1.0, cutoff=k)
        elif metric == "nERR":
            m = nERR(xrelnum, grades, cutoff=k)
        else:
            m = AP(xrelnum, grades, cutoff=k)
        out[q] = m.compute(labelled)
    return out


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("peer", "name", "k"), [("Q", "Q", None), ("Q", "Q@10", 10), ("Q", "Q@5", 5),
                                                  ("nERR", "nERR@10", 10), ("nERR", "nERR@20", 20)])
def test_equal_to_pyntcireval(seed: int, peer: str, name: str, k: int | None) -> None:
    qrels, run = _random_topics(seed)
    got = rankwise.evaluate(qrels, run, [name]).per_query[name].droplevel("run")
    expected = _peer(qrels, run, peer, k, 3)
    assert got.to_dict() == pytest.approx(expected, abs=1e-12)


def test_beta_zero_is_ap_and_binary_gap_is_ap() -> None:
    qrels, run = _random_topics(3)
    res = rankwise.evaluate(qrels, run, ["Q(beta=0)", "map"]).per_query
    assert res["Q(beta=0)"].tolist() == pytest.approx(res["map"].tolist(), abs=1e-12)
    binary = {q: {d: int(v > 0) for d, v in judged.items()} for q, judged in qrels.items()}
    res = rankwise.evaluate(binary, run, ["GAP", "map", "Q"]).per_query
    assert res["GAP"].tolist() == pytest.approx(res["map"].tolist(), abs=1e-12)


def test_hand_computed_example() -> None:
    # labels by rank: 2, 0, 1 (d4 with label 1 not retrieved); judged levels 0 x1, 1 x2, 2 x1, R = 3
    qrels = {"q": {"a": 2, "b": 0, "c": 1, "d": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    res = rankwise.evaluate(qrels, run, ["Q", "Q@2", "nERR@3", "GAP"]).per_query.iloc[0]
    # Q: r=1 (1 + 2)/(1 + 2) = 1; r=3 (2 + 3)/(3 + 4) = 5/7 -> (1 + 5/7) / 3
    assert res["Q"] == pytest.approx((1 + 5 / 7) / 3)
    # Q@2: only r=1 -> 1 / min(3, 2)
    assert res["Q@2"] == pytest.approx(0.5)
    # nERR@3, stop = label / 3: run 2/3 + (1/3)(1/3)/3; ideal 2/3 + (1/3)(1/3)/2 + (1/3)(2/3)(1/3)/3
    run_err = 2 / 3 + (1 / 3) * (1 / 3) / 3
    ideal_err = 2 / 3 + (1 / 3) * (1 / 3) / 2 + (1 / 3) * (2 / 3) * (1 / 3) / 3
    assert res["nERR@3"] == pytest.approx(run_err / ideal_err)
    # GAP: rank 1 min(2,2)/1 = 2; rank 3 (min(2,1) + min(1,1))/3 = 2/3 -> (2 + 2/3) / (2 + 1 + 1)
    assert res["GAP"] == pytest.approx((2 + 2 / 3) / 4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.integers(0, 3))
def test_the_ideal_ranking_scores_one(labels: list[int], extra: int) -> None:
    if max(labels) == 0:
        labels = [*labels, 1]
    qrels = {"q": {f"d{i}": v for i, v in enumerate(labels)}}
    order = sorted(range(len(labels)), key=lambda i: -labels[i])
    run = {"q": {f"d{i}": float(len(labels) - r) for r, i in enumerate(order)}}
    res = rankwise.evaluate(qrels, run, ["Q", "nERR@10", "GAP", f"Q(beta={extra})"]).per_query.iloc[0]
    assert res.tolist() == pytest.approx([1.0, 1.0, 1.0, 1.0])
