"""C/W/L measures equal cwl-eval (through ir_measures' cwl_eval provider, and cwl's own classes
for TBG): the expected utility and the ETU / EC / ETC / EI columns per query."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from conftest import GOLDEN

import rankwise
from rankwise.data import load_qrels, load_run

COLUMNS = ("expected_total_utility", "expected_cost", "expected_total_cost", "expected_items")


def test_by_hand() -> None:
    # one relevant document (label 1) at rank 2 of 3; NERR10(p=0.5): C = .5 (1 - g) = .5, 0, .5 ...
    # W = (1, .5, 0, ...) / 1.5 -> EU = .5 / 1.5; EI = 1.5
    qrels = {"q": {"a": 0, "b": 1, "c": 0}}
    run = {"q": {"a": 0.9, "b": 0.5, "c": 0.1}}
    res = rankwise.evaluate(qrels, run, ["NERR10(p=0.5)"])
    assert res.summary.iloc[0, 0] == pytest.approx(1 / 3)
    assert res.details("NERR10(p=0.5)").loc[("run", "q"), "expected_items"] == pytest.approx(1.5)
    # BPM(T=1)@2: stop once 1 gain is had or 2 documents seen: C = (1, 0, ...) -> W = (.5, .5) -> EU = .5
    assert rankwise.evaluate(qrels, run, ["BPM(T=1)@2"]).summary.iloc[0, 0] == pytest.approx(0.5)


ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("cwl")


@pytest.fixture(scope="module", params=["BM25", "SPLADE_P_P_ENSEMBLE_DISTIL"])
def dl19(request: pytest.FixtureRequest) -> tuple[dict, dict]:
    logging.getLogger("ir_measures.cwl_eval").disabled = True
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    return qrels, load_run(GOLDEN / f"{request.param}.dl19.trec").to_dict()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["INST(T=2.0,max_rel=3)", "INST(T=1.0,min_rel=1,max_rel=2)", "INSQ(T=1.0,max_rel=3)",
                                  "BPM(T=1.0,max_rel=3)@20", "BPM(T=2.0,max_rel=1)@10", "SDCG(max_rel=3)@10",
                                  "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5", "NERR10(p=0.8,max_rel=3)",
                                  "NERR11(T=2.0,max_rel=3)"])
def test_equal_to_cwl_eval(name: str, dl19: tuple[dict, dict]) -> None:
    qrels, run = dl19
    theirs = {m.query_id: m for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
    res = rankwise.evaluate(qrels, run, [name], ties="input")  # ir_measures sorts by score, stably
    ours, details = res.per_query.loc["run"][name], res.details(name).loc["run"]
    assert len(theirs) == 43
    for q, m in theirs.items():
        assert ours[q] == pytest.approx(m.value, abs=1e-12)
        for column in COLUMNS:
            assert details.loc[q, column] == pytest.approx(getattr(m, column), abs=1e-12), (q, column)


@pytest.mark.filterwarnings("ignore")
def test_tbg_equal_to_cwl(dl19: tuple[dict, dict]) -> None:
    from cwl.ruler.measures.cwl_tbg import TBGCWLMetric
    from cwl.ruler.ranking import Ranking

    qrels, run = dl19
    res = rankwise.evaluate(qrels, run, ["TBG(H=20,max_rel=3)"], ties="input")
    ours, details = res.per_query.loc["run"].iloc[:, 0], res.details("TBG(H=20,max_rel=3)").loc["run"]
    for q, docs in run.items():
        ranked = sorted(docs, key=lambda d: -docs[d])
        gains = np.array([min(max(qrels[q].get(d, 0), 0), 3) / 3 for d in ranked], dtype=float)
        metric = TBGCWLMetric(20)
        value = metric.measure(Ranking(q, gains, np.ones(len(gains))))
        assert ours[q] == pytest.approx(value, abs=1e-12)
        assert details.loc[q, "expected_items"] == pytest.approx(metric.expected_items, abs=1e-9)


def test_streams() -> None:
    from rankwise.streaming import RankingMetrics

    m = RankingMetrics(["INST(T=1)", "NERR10(p=0.5)"])
    m.update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 0]])
    assert m.compute()["NERR10(p=0.5)"] == pytest.approx(1 / 3)  # as test_by_hand


@pytest.mark.filterwarnings("ignore")
def test_rbp_equals_cwl_on_binary_judgments(dl19: tuple[dict, dict]) -> None:
    """cwl-eval's RBP normalises its weights over 1,000 ranks, trec_eval's does not: with
    p = 0.8 they differ by 0.8^1000 (nothing); on binary judgments the gains agree."""
    qrels, run = dl19
    binary = {q: {d: int(v >= 2) for d, v in docs.items()} for q, docs in qrels.items()}
    measure = ir_measures.parse_measure("RBP(p=0.8,rel=2)")
    provider = ir_measures.providers.registry["cwl_eval"]
    theirs = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
    ours = rankwise.evaluate(binary, run, ["RBP(p=0.8)"], ties="input").per_query.loc["run"]["RBP(p=0.8)"]
    assert len(theirs) == 43
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=1e-12), q
