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
         "NumRelRet", "IPrec@0.5", "SetP", "SetR", "SetF", "SetAP"]
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
