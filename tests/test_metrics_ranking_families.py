"""Measures added as one module each: Compat, pairwise Accuracy, Judged without a cut-off,
fall-out@k, recall at a fixed precision and exponential-gain DCG, by hand and against their
reference implementations (ir_measures' providers, torchmetrics, ranx)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import GOLDEN

import rankwise
from rankwise.data import load_qrels, load_run

QRELS = {"q1": {"a": 2, "b": 0, "c": 1, "d": 0, "e": 1}}
RUN = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6, "d": 0.5}}
"""Ranking a(2) x(unjudged) b(0) c(1) d(0); e(1) is relevant and not retrieved."""


def _value(name: str, qrels: dict = QRELS, run: dict = RUN, **conventions: object) -> float:
    return float(rankwise.evaluate(qrels, run, [name], **conventions).per_query.iloc[0, 0])


def test_by_hand() -> None:
    # Accuracy: relevant a (0 others above) and c (x, b above); 3 others retrieved: 1 - 2 / (2 * 3)
    assert _value("Accuracy") == pytest.approx(1 - 2 / 6)
    # Accuracy@2: one relevant, one other, none above it -> 1
    assert _value("Accuracy@2") == 1.0
    # Accuracy@1: no non-relevant document in the top 1: no pair, undefined
    assert math.isnan(_value("Accuracy@1"))
    # Judged: 4 of the 5 retrieved are judged; Judged@2: 1 of 2
    assert _value("Judged") == pytest.approx(4 / 5) and _value("Judged@2") == 0.5
    # fall-out@3: judged non-relevant b, d; b in the top 3 -> 1/2; lower is better
    assert _value("fallout@3") == 0.5 and _value("fallout@5") == 1.0
    # recall at precision 0.5 within the top 4: a at rank 1 (P 1), c at rank 4 (P 2/4) -> 2 of R = 3
    assert _value("RecallAtPrecision(min_precision=0.5)@4") == pytest.approx(2 / 3)
    assert _value("RecallAtPrecision(min_precision=0.6)@4") == pytest.approx(1 / 3)
    # dcg_burges@4: (2^2 - 1) / log2 2 + (2^1 - 1) / log2 5
    assert _value("dcg_burges@4") == pytest.approx(3 + 1 / math.log2(5))
    assert _value("DCG(dcg='exp-log2')@4") == _value("dcg_burges@4")


def test_compat_by_hand() -> None:
    # run a x b c d; ideal a (2), then c (retrieved label 1), then e: ideal ranks of a, c = 1, 2;
    # run ranks 1, 4. D = 5; overlap by depth 1, 1, 1, 2, 2. With p = 0.5, w = 1, .5, .25, .125, .0625:
    # sum w o / d = 1 + .25 + .25/3 + .0625 + .025; the ideal's own: overlap min(d, 3) ->
    # 1 + .5 + .25 + .125 * 3/4 + .0625 * 3/5
    ours = 1 + 0.25 + 0.25 / 3 + 0.0625 + 0.025
    ideal = 1 + 0.5 + 0.25 + 0.125 * 3 / 4 + 0.0625 * 3 / 5
    assert _value("Compat(p=0.5)") == pytest.approx(ours / ideal)
    assert _value("Compat(p=0.5,normalize=false)") == pytest.approx(ours / (1 + .5 + .25 + .125 + .0625))


def test_undefined_fallout_follows_zero_division() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0, "c": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 0.5, "c": 0.9}}
    res = rankwise.evaluate(qrels, run, ["FallOut(zero_division=nan)@1", "FallOut(zero_division=1)@1", "fallout@1"])
    assert math.isnan(res.per_query.loc[("run", "q1"), "FallOut(zero_division=nan)@1"])
    assert res.summary.loc["run"].tolist() == [0.0, 0.5, 0.0]  # q2: b is second -> 0; q1 left out / 1 / 0


ir_measures = pytest.importorskip("ir_measures")


@pytest.fixture(scope="module", params=["BM25", "SPLADE_P_P_ENSEMBLE_DISTIL"])
def dl19(request: pytest.FixtureRequest) -> tuple[dict, dict]:
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    return qrels, load_run(GOLDEN / f"{request.param}.dl19.trec").to_dict()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["Compat", "Compat(p=0.8)", "Compat(p=0.9,normalize=False)", "Judged", "Judged@10"])
def test_equal_to_ir_measures(name: str, dl19: tuple[dict, dict]) -> None:
    qrels, run = dl19
    theirs = {r.query_id: r.value for r in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
    ours = rankwise.evaluate(qrels, run, [name]).per_query.loc["run"][name]
    assert len(theirs) == len(ours) == 43
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=1e-12), (name, q)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["Accuracy", "Accuracy@10", "Accuracy(rel=2)@20"])
def test_accuracy_equal_to_ir_measures(name: str, dl19: tuple[dict, dict]) -> None:
    """ir_measures leaves out queries without a relevant document in the top k and fails with
    ZeroDivisionError on those without a non-relevant one; both are NaN in rankwise."""
    qrels, run = dl19
    measure = ir_measures.parse_measure(name)
    ours = rankwise.evaluate(qrels, run, [name], ties="input").per_query.loc["run"][name]  # a stable sort by score
    compared = 0
    for q in ours.index:
        try:
            theirs = list(ir_measures.iter_calc([measure], {q: qrels[q]}, {q: run[q]}))
        except ZeroDivisionError:
            theirs = []
        if not theirs:
            assert math.isnan(ours[q]), q
            continue
        assert ours[q] == pytest.approx(theirs[0].value, abs=1e-12), q
        compared += 1
    assert compared >= 20  # the rest have no pair in the top k (SPLADE@10: all relevant)


torch = pytest.importorskip("torch")
tm = pytest.importorskip("torchmetrics.functional.retrieval")


def _generated(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(30):
        n = int(rng.integers(2, 25))
        labels = rng.integers(0, 3, n) * (rng.random(n) < 0.6)
        scores = rng.permutation(n) + rng.random()  # no ties: torch's order of ties is unspecified
        qrels[f"q{q}"] = {f"d{i}": int(labels[i]) for i in range(n)}
        run[f"q{q}"] = {f"d{i}": float(scores[i]) for i in range(n)}
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_fallout_and_recall_at_precision_equal_to_torchmetrics(seed: int) -> None:
    from torchmetrics.retrieval import RetrievalFallOut, RetrievalRecallAtFixedPrecision

    qrels, run = _generated(seed)
    k = 5
    res = rankwise.evaluate(qrels, run, [f"fallout@{k}", f"RecallAtPrecision(min_precision=0.35)@{k}"],
                            profile="torchmetrics")
    fallout = res.per_query.loc["run"][f"fallout@{k}"]
    preds, target, index = [], [], []
    for i, (q, docs) in enumerate(run.items()):
        scores = torch.tensor(list(docs.values()), dtype=torch.float64)
        truth = torch.tensor([qrels[q][d] >= 1 for d in docs])
        theirs = tm.retrieval_fall_out(scores, truth, top_k=k) if (~truth).any() else torch.tensor(1.0)
        assert fallout[q] == pytest.approx(float(theirs), abs=1e-7), q  # torchmetrics divides in float32
        preds.append(scores), target.append(truth), index.append(torch.full((len(docs),), i))
    preds, target, index = torch.cat(preds), torch.cat(target), torch.cat(index)
    mean = RetrievalFallOut(top_k=k)(preds, target, indexes=index)
    assert res.summary.loc["run", f"fallout@{k}"] == pytest.approx(float(mean), abs=1e-7)
    # torchmetrics applies the precision rule to the curves averaged over queries: reproduce it
    # from rankwise's averaged P@j and recall@j columns
    curves = rankwise.evaluate(qrels, run, [f"P.{','.join(map(str, range(1, k + 1)))}",
                                            f"recall.{','.join(map(str, range(1, k + 1)))}"], ties="input")
    p = curves.summary.loc["run"][[f"P_{j}" for j in range(1, k + 1)]].to_numpy()
    r = curves.summary.loc["run"][[f"recall_{j}" for j in range(1, k + 1)]].to_numpy()
    best = max((r[j] for j in range(k) if p[j] >= 0.35), default=0.0)
    theirs_best, _ = RetrievalRecallAtFixedPrecision(min_precision=0.35, max_k=k)(preds, target.long(), indexes=index)
    assert best == pytest.approx(float(theirs_best), abs=1e-6)


@pytest.mark.filterwarnings("ignore")
def test_dcg_burges_equal_to_ranx(ranx_reference) -> None:
    qrels = load_qrels(GOLDEN / "qrels.dl19-passage.txt").to_dict()
    run = load_run(GOLDEN / "BM25.dl19.trec").to_dict()
    theirs = ranx_reference("BM25-dcg_burges@10", lambda ranx: dict(zip(ranx.Run(run).keys(), ranx.evaluate(
        ranx.Qrels(qrels), ranx.Run(run), "dcg_burges@10", return_mean=False, make_comparable=True), strict=True)))
    ours = rankwise.evaluate(qrels, run, ["dcg_burges@10"], profile="ranx").per_query.loc["run"]["dcg_burges@10"]
    assert len(theirs) == 43
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=1e-12), q


def test_new_families_stream() -> None:
    """Every family defined per list runs in RankingMetrics, through the same definition."""
    from rankwise.streaming import RankingMetrics

    m = RankingMetrics(["Compat(p=0.5)", "Accuracy", "fallout@2", "RecallAtPrecision(min_precision=0.5)@3"])
    half = m.empty().update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]])
    other = m.empty().update(predictions=[[0.3, 0.2, 0.1]], targets=[[1, 0, 0]])
    got = half.merge(other).compute()
    # list 1 = labels 0 1 1, list 2 = 1 0 0 (by rank)
    # Accuracy: list 1: both relevant below the one other -> 1 - 2/2 = 0; list 2: 1 - 0/2 = 1
    # fall-out@2: list 1: 1 of 1 non-relevant in the top 2; list 2: 1 of 2
    # RecallAtPrecision@3: list 1: rank 3 has P 2/3 >= .5 -> recall 1; list 2: rank 1 -> 1
    # Compat p=.5: H = 1, 1.25, 1.3333; list 1: meets at depths 2, 3: (H3-H1 + H3-H2) / (G2 + 2 (H3-H2))
    #   = .41667 / 1.66667 = .25; list 2: meets at 1: (H3 - H0) / (G1 + 1 (H3 - H1)) = 1
    assert got["Accuracy"] == 0.5 and got["fallout@2"] == 0.75
    assert got["RecallAtPrecision(min_precision=0.5)@3"] == 1.0
    assert got["Compat(p=0.5)"] == pytest.approx(0.625)
