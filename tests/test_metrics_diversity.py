"""Novelty and diversity measures: ``rankwise ndeval`` prints ndeval 4.5's CSV byte for byte
(the binary built from pyndeval's source), ``rankwise.evaluate`` equals pyndeval for both tie
orders, and ir_measures' names mean what they mean there."""

from __future__ import annotations

import io
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

import rankwise
from rankwise.cli.ndeval import run_ndeval
from rankwise.data.prefs import Prefs
from rankwise.errors import InputError

NAMES = {"ERR_IA@5": "ERR-IA@5", "ERR_IA@20": "ERR-IA@20", "nERR_IA@10": "nERR-IA@10",
         "alpha_DCG@5": "alpha-DCG@5", "alpha_nDCG@20": "alpha-nDCG@20", "NRBP": "NRBP", "nNRBP": "nNRBP",
         "AP_IA": "MAP-IA", "P_IA@10": "P-IA@10", "StRecall@5": "strec@5"}
"""ir_measures / rankwise names -> pyndeval's."""


def _generate(seed: int) -> tuple[list[tuple[str, str, str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels, run = [], {}
    for q in range(int(rng.integers(2, 7))):
        docs = [f"doc-{i:03d}" for i in range(30)]
        for d in rng.choice(docs, int(rng.integers(3, 20)), replace=False):
            for st in rng.choice(5, int(rng.integers(1, 4)), replace=False):
                qrels.append((str(q + 1), str(st + 1), str(d), int(rng.integers(0, 3))))
        picked = rng.choice(30, int(rng.integers(1, 28)), replace=False)
        run[str(q + 1)] = {f"doc-{int(i):03d}": float(rng.integers(0, 6)) for i in picked}  # many ties
    return qrels, run


def _judgments(qrels: list[tuple[str, str, str, int]]) -> Prefs:
    return Prefs.from_rows([(q, st, "", d, v) for q, st, d, v in qrels], "subtopics")


def test_by_hand() -> None:
    # subtopics 1 and 2; run: a (subtopic 1), b (1 and 2); judged c is relevant to nothing
    j = _judgments([("q", "1", "a", 1), ("q", "1", "b", 1), ("q", "2", "b", 1), ("q", "1", "c", 0)])
    run = {"q": {"a": 2.0, "b": 1.0}}
    got = rankwise.evaluate(j, run, ["P_IA@2", "StRecall@1", "StRecall@2", "AP_IA", "NRBP"]).summary.iloc[0]
    # P-IA@2: 3 (document, subtopic) pairs / (2 x 2); strec@1 = 1/2; strec@2 = 2/2
    # AP-IA: subtopic 1 (1/1 + 2/2) / 2 = 1, subtopic 2 (1/2) / 1 -> 0.75
    # NRBP: gains 1, 0.5 + 1; decay 1, 0.5 -> (1 + 0.75) (1 - 0.5 * 0.5) / 2
    assert got.tolist() == [0.75, 0.5, 1.0, 0.75, pytest.approx(1.75 * 0.75 / 2)]


@pytest.mark.parametrize("seed", range(15))
def test_equal_to_pyndeval_for_both_tie_orders(seed: int) -> None:
    pyndeval = pytest.importorskip("pyndeval")
    qrels, run = _generate(seed)
    evaluator = pyndeval.RelevanceEvaluator(qrels, list(NAMES.values()))
    # pyndeval ranks by score, ties by doc id ascending
    theirs = evaluator.evaluate([(q, d, s) for q, docs in run.items() for d, s in docs.items()])
    ours = rankwise.evaluate(_judgments(qrels), run, list(NAMES), ties="docid_asc").per_query.loc["run"]
    # trec_eval's (and ndeval -traditional's) order: ties by doc id descending; pyndeval gets
    # that order as distinct scores
    trec_order = {q: sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d])) for q, docs in run.items()}
    theirs_trec = evaluator.evaluate([(q, d, -float(i)) for q, docs in trec_order.items() for i, d in enumerate(docs)])
    ours_trec = rankwise.evaluate(_judgments(qrels), run, list(NAMES), ties="trec").per_query.loc["run"]
    for expected, got in ((theirs, ours), (theirs_trec, ours_trec)):
        assert set(expected) == set(got.index)
        for q, values in expected.items():
            for ours_name, their_name in NAMES.items():
                a, b = got.loc[q, ours_name], values[their_name]
                assert (math.isnan(a) and math.isnan(b)) or a == b, (seed, q, ours_name, a, b)


@pytest.mark.filterwarnings("ignore")
def test_ir_measures_names() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    qrels, run = _generate(3)
    theirs_qrels = [ir_measures.GenericQrel(q, d, v, st) for q, st, d, v in qrels]
    for name in ["alpha_nDCG(alpha=0.5)@20", "alpha_nDCG(alpha=0.7)@10", "ERR_IA@20", "nERR_IA@5", "NRBP(beta=0.8)",
                 "AP_IA", "P_IA@5", "StRecall@10", "alpha_DCG@5", "nNRBP"]:
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)],
                                                                     theirs_qrels, run)}
        ours = rankwise.evaluate(_judgments(qrels), run, [name], ties="docid_asc").per_query.loc["run"][name]
        for q, value in theirs.items():
            assert ours[q] == pytest.approx(value, abs=1e-12), (name, q)


def _write(folder: Path, qrels: list, run: dict) -> tuple[Path, Path]:
    rng = np.random.default_rng(len(qrels))
    (folder / "q").write_text("".join(f"{q} {st} {d} {v}\n" for q, st, d, v in qrels))
    lines = []
    for q, docs in run.items():
        ranks = rng.permutation(len(docs)) + 1  # the rank field disagrees with the scores
        lines += [f"wt09-{q} Q0 {d} {r} {s} myrun\n" for (d, s), r in zip(docs.items(), ranks, strict=True)]
    (folder / "r").write_text("".join(lines))
    return folder / "q", folder / "r"


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("flags", [[], ["-traditional"], ["-c"], ["-M", "6"], ["-alpha", "0.3", "-beta", "0.9"]])
def test_ndeval_csv_byte_for_byte(ndeval: Path, tmp_path: Path, seed: int, flags: list[str]) -> None:
    qrels, run = _generate(seed)
    run["99"] = {"doc-001": 1.0}  # a topic without judgments: printed with zeros, left out of the mean
    q, r = _write(tmp_path, qrels, run)
    theirs = subprocess.run([str(ndeval), *flags, str(q), str(r)], capture_output=True, text=True, check=True).stdout
    out = io.StringIO()
    assert run_ndeval([*flags, str(q), str(r)], out=out) == 0
    assert out.getvalue() == theirs


def test_bad_input_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("1 1 d1 1\n1 x d2 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 run\n")
    with pytest.raises(InputError, match=r"q:2: expected 'topic subtopic docno judgment'"):
        from rankwise.cli.ndeval import ndeval_csv

        ndeval_csv(str(tmp_path / "q"), str(tmp_path / "r"))
    (tmp_path / "q").write_text("1 1 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 run\n1 Q0 d2 1 0.5 run\n")
    assert run_ndeval([str(tmp_path / "q"), str(tmp_path / "r")], out=io.StringIO()) == 2  # rank 1 twice


def test_streaming_equals_evaluate() -> None:
    """DiversityMetrics on padded batches = evaluate on the same lists (items named by position,
    so both break the ideal ranking's ties the same way); two halves merged = one pass."""
    from rankwise.streaming import DiversityMetrics

    rng = np.random.default_rng(7)
    batch, width, subtopics = 6, 9, 3
    scores = rng.integers(0, 5, (batch, width)).astype(float)
    labels = (rng.random((batch, width, subtopics)) < 0.3).astype(int)
    where = rng.random((batch, width)) < 0.85
    names = ["alpha_nDCG@5", "ERR_IA@3", "NRBP", "nNRBP", "AP_IA", "P_IA@4", "StRecall@2"]
    rows, run = [], {}
    for b in range(batch):
        keep = np.flatnonzero(where[b])
        for i, col in enumerate(keep):
            for st in range(subtopics):
                rows.append((f"q{b}", str(st), "", f"{i:09d}", int(labels[b, col, st])))
        run[f"q{b}"] = {f"{i:09d}": float(scores[b, col]) for i, col in enumerate(keep)}
    expected = rankwise.evaluate(Prefs.from_rows(rows, "subtopics"), run, names, ties="input").summary.loc["run"]
    metric = DiversityMetrics(names)
    whole = metric.empty().update(predictions=scores, targets=labels, where=where).compute()
    halves = metric.empty().update(predictions=scores[:3], targets=labels[:3], where=where[:3]).merge(
        metric.empty().update(predictions=scores[3:], targets=labels[3:], where=where[3:])).compute()
    for name in names:
        assert whole[name] == pytest.approx(expected[name], abs=1e-12, nan_ok=True), name
        assert halves[name] == pytest.approx(whole[name], abs=1e-12, nan_ok=True), name
