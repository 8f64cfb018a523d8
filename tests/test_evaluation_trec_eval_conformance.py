"""`rankwise trec-eval` reproduces trec_eval 10.0's own test outputs and the golden files byte for byte."""

from __future__ import annotations

import io

import pytest
from conftest import DATA, GOLDEN

from rankwise.cli.trec_eval import run_trec_eval

# the commands of trec_eval 10.0's `make quicktest` whose measures rankwise implements
CASES = [
    ("out.test", ["qrels.test", "results.test"]),
    ("out.test.a", ["-m", "all_trec", "qrels.test", "results.test"]),
    ("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"]),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"]),
    ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"]),
    ("out.test.meas_params", ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m",
                              "recall.20,2000", "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m",
                              "11pt_avg..25,.5,.75", "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4",
                              "-msuccess.2,5,20", "qrels.test", "results.test"]),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"]),
]


def _run(args: list[str]) -> str:
    out = io.StringIO()
    assert run_trec_eval(args, out=out) == 0
    return out.getvalue()


@pytest.mark.parametrize("expected,args", CASES, ids=[c[0] for c in CASES])
def test_trec_eval_test_suite(expected: str, args: list[str]) -> None:
    resolved = [str(DATA / a) if (DATA / a).is_file() else a for a in args]
    assert _run(resolved) == (DATA / expected).read_text()


GOLDEN_CASES = [(system, year, level) for system in ("BM25", "SPLADE_P_P_ENSEMBLE_DISTIL")
                for year in ("19", "20") for level in ("1", "2")]


@pytest.mark.parametrize("system,year,level", GOLDEN_CASES)
def test_golden_dl_runs(system: str, year: str, level: str) -> None:
    expected = GOLDEN / f"{system}.dl{year}.all_trec.c.q.l{level}.txt"
    args = ["-c", "-q", "-m", "all_trec", "-l", level, str(GOLDEN / f"qrels.dl{year}-passage.txt"),
            str(GOLDEN / f"{system}.dl{year}.trec")]
    assert _run(args) == expected.read_text()


def test_published_bm25_figures() -> None:
    """The published Pyserini BM25 nDCG@10: 0.5058 on DL19, 0.4796 on DL20."""
    for year, value in (("19", "0.5058"), ("20", "0.4796")):
        text = _run(["-m", "ndcg_cut.10", str(GOLDEN / f"qrels.dl{year}-passage.txt"),
                     str(GOLDEN / f"BM25.dl{year}.trec")])
        assert text == f"ndcg_cut_10           \tall\t{value}\n"


def test_unknown_measure_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_trec_eval(["-m", "nope", str(DATA / "qrels.test"), str(DATA / "results.test")]) == 2
    assert "illegal measure 'nope'" in capsys.readouterr().err


def test_bad_zscores_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "z.txt"
    bad.write_text("301 map 0.2\n")
    assert run_trec_eval(["-Z", str(bad), str(DATA / "qrels.test"), str(DATA / "results.test")]) == 2
    assert "z.txt:1: expected 4 fields (qid measure mean stddev), found 3" in capsys.readouterr().err
