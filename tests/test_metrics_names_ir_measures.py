"""ir_measures names mean in rankwise what they mean in ir_measures: each name is computed by
ir_measures' own providers (pytrec_eval, gdeval, judged) and by rankwise on real DL19 runs."""

from __future__ import annotations

import pytest
from conftest import GOLDEN

import rankwise
from rankwise.data import load_qrels, load_run

ir_measures = pytest.importorskip("ir_measures")

EXACT = ["nDCG@10", "nDCG", "P@5", "P(rel=2)@5", "AP", "AP(rel=2)", "AP@100", "RR", "RR@10", "RR(rel=2)@10",
         "R@100", "R(rel=2)@1000", "Rprec", "Bpref", "infAP", "Judged@10", "Success@10", "NumRet", "NumRel",
         "NumRelRet", "IPrec@0.5", "SetP", "SetR", "SetF", "SetAP", "NumRet(rel=2)", "NumQ", "SetP(rel=2)",
         "Success(rel=2)@5"]
"""Names whose provider is pytrec_eval or ir_measures' judged provider: equal to 1e-12."""

ROUNDED = {"nDCG(dcg='exp-log2')@10": "nDCG(dcg='exp-log2')@10",
           "ERR@10": {"expected_reciprocal_rank": {"k": 10, "maximum_relevance": 4}}}
"""Names computed by gdeval.pl, which prints 5 decimals. gdeval's ERR fixes the largest grade at 4
(R = (2^label - 1) / 16); rankwise's ``ERR@k`` divides by 2^(largest judged label), so gdeval's
ERR is Elasticsearch's ERR with maximum_relevance 4."""


@pytest.fixture(scope="module", params=["BM25", "SPLADE_P_P_ENSEMBLE_DISTIL"])
def dl19(request: pytest.FixtureRequest) -> tuple[dict, dict]:
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    return qrels, load_run(GOLDEN / f"{request.param}.dl19.trec").to_dict()


def _theirs(name: str, qrels: dict, run: dict) -> dict[str, float]:
    measure = ir_measures.parse_measure(name)
    return {r.query_id: r.value for r in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", EXACT)
def test_exact_names_match_ir_measures(name: str, dl19: tuple[dict, dict]) -> None:
    qrels, run = dl19
    theirs = _theirs(name, qrels, run)
    ours = rankwise.evaluate(qrels, run, [name]).per_query.loc["run"][name]
    assert len(theirs) == len(ours) == 43
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=1e-12), (name, q)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(ROUNDED))
def test_gdeval_names_match_to_its_printed_precision(name: str, dl19: tuple[dict, dict]) -> None:
    if __import__("shutil").which("perl") is None:
        pytest.skip("gdeval needs perl")
    qrels, run = dl19
    theirs = _theirs(name, qrels, run)
    res = rankwise.evaluate(qrels, run, [ROUNDED[name]])
    ours = res.per_query.loc["run"].iloc[:, 0]
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=5.1e-6), (name, q)


def test_arguments_on_every_measure() -> None:
    """NumRet(rel=2) counts the retrieved documents with label >= 2 (ir_measures' NumRelRet is
    NumRet(rel=1)); NumQ counts queries; IPrec takes rel= like every measure. On this example:
    q1 retrieves a (2), b (1), c (0), d (unjudged): NumRet(rel=2) = 1, NumRet = 4, and at rel 2
    R = 1, so IPrec@0.1 is the precision where a is found: 1; q2 retrieves nothing relevant: 0."""
    qrels = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"a": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}, "q2": {"z": 1.0}}
    names = ["NumRet(rel=2)", "NumRet", "NumQ", "IPrec(rel=2)@0.1"]
    ours = rankwise.evaluate(qrels, run, names).per_query.loc["run"]
    assert ours.loc["q1"].tolist() == [1, 4, 1, 1.0] and ours.loc["q2"].tolist() == [0, 1, 1, 0.0]
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    summary = rankwise.evaluate(qrels, run, names).summary.loc["run"]
    assert [summary[n] for n in names] == [1, 5, 2, 0.5]
    assert [theirs[ir_measures.parse_measure(n)] for n in names] == [1.0, 5.0, 2.0, 0.5]
