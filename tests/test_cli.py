"""The command line: evaluate (all formats), metrics, trec-eval, errors."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import DATA
from typer.testing import CliRunner

from rankwise.cli.main import app

runner = CliRunner()
Q, R = str(DATA / "qrels.test"), str(DATA / "results.test")


def test_evaluate_table() -> None:
    res = runner.invoke(app, ["evaluate", Q, R, "-m", "ndcg@10", "-m", "map"])
    assert res.exit_code == 0
    assert "STANDARD" in res.stdout and "0.3016" in res.stdout and "0.1785" in res.stdout


def test_evaluate_json_per_query() -> None:
    res = runner.invoke(app, ["evaluate", Q, R, "-m", "ndcg@10", "-q", "--format", "json"])
    out = json.loads(res.stdout)
    assert out["runs"]["STANDARD"]["summary"]["ndcg@10"] == __import__("pytest").approx(0.3016, abs=5e-5)
    assert round(out["runs"]["STANDARD"]["per_query"]["301"]["ndcg@10"], 4) == 0.1518
    assert out["metrics"]["ndcg@10"]["signature"].startswith("nDCG@10|gain=linear|ties=trec")


def test_evaluate_csv_and_trec() -> None:
    csv = runner.invoke(app, ["evaluate", Q, R, "-m", "P@5", "--format", "csv"]).stdout.splitlines()
    assert csv[0] == "run,query,P@5"
    assert csv[1].startswith("STANDARD,all,0.2666")
    trec = runner.invoke(app, ["evaluate", Q, R, "-m", "P@5", "--format", "trec"]).stdout
    assert "P@5                   \tall\t0.2667\n" in trec


def test_evaluate_unknown_metric_exits_2() -> None:
    res = runner.invoke(app, ["evaluate", Q, R, "-m", "ndgc@10"])
    assert res.exit_code == 2
    assert "did you mean 'ndcg@10'" in res.output


def test_metrics_lists_catalogue() -> None:
    res = runner.invoke(app, ["list", "metrics"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for name in ("ndcg_cut", "bpref", "infAP", "rbp_resid", "Rndcg"):
        assert name in res.stdout


def test_trec_eval_console_script_matches_trec_eval() -> None:
    proc = subprocess.run([sys.executable, "-m", "rankwise", "trec-eval", "-q", "-m", "all_trec", Q, R],
                          capture_output=True, text=True, check=True)
    assert proc.stdout == (DATA / "out.test.aq").read_text()


G = DATA / "golden"
DL19 = [str(G / "qrels.dl19-passage.txt"), str(G / "BM25.dl19.trec"), str(G / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")]


def test_compare_formats(tmp_path) -> None:
    res = runner.invoke(app, ["compare", *DL19, "-m", "ndcg@10", "-l", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    pair = out["pairs"][0]
    assert (pair["a"], pair["b"], pair["n"]) == ("BM25.dl19", "SPLADE_P_P_ENSEMBLE_DISTIL.dl19", 43)
    assert pair["significant"] is True and out["comparison"]["correction"] == "holm"
    tex = runner.invoke(app, ["compare", *DL19, "-m", "map", "--test", "randomization", "--format", "latex"])
    assert "\\begin{tabular}" in tex.stdout and "randomization test" in tex.stdout
    md = runner.invoke(app, ["compare", *DL19, "-m", "map", "--format", "markdown", "-o", str(tmp_path / "c.md")])
    assert md.exit_code == 0 and "| metric | a | b |" in (tmp_path / "c.md").read_text()
    bad = runner.invoke(app, ["compare", *DL19, "--test", "magic"])
    assert bad.exit_code == 2 and "unknown test 'magic'" in bad.output


def test_plot_and_report_commands(tmp_path) -> None:
    for kind in ("curve", "difference", "box", "violin", "pr", "roc"):
        out = tmp_path / f"{kind}.svg"
        res = runner.invoke(app, ["plot", kind, *DL19, "-o", str(out), "-m", "ndcg@10" if kind != "curve" else "ndcg"])
        assert res.exit_code == 0, res.output
        assert out.read_text().startswith("<?xml")
    page = tmp_path / "r.html"
    res = runner.invoke(app, ["report", *DL19, "-o", str(page), "-m", "map"])
    assert res.exit_code == 0 and "<table id='summary'>" in page.read_text()


def test_evaluate_markdown_and_latex() -> None:
    md = runner.invoke(app, ["evaluate", Q, R, "-m", "P@5", "--format", "markdown"]).stdout
    assert md.splitlines()[0] == "| | run | P@5 |" and "**0.2667**" in md
    tex = runner.invoke(app, ["evaluate", Q, R, "-m", "P@5", "--format", "latex"]).stdout
    assert "\\toprule" in tex and "$\\mathbf{0.2667}$" in tex


def test_evaluate_profile_option() -> None:
    res = runner.invoke(app, ["evaluate", *DL19, "-m", "precision@10", "--profile", "elasticsearch", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["metrics"]["precision@10"]["signature"].startswith("es_precision_k=10|ties=input")


def test_metrics_filter_and_pipe_width() -> None:
    """``rankwise list metrics FILTER`` searches names, spellings and definitions; in a pipe every
    line fits 80 columns (it printed 370-450 character lines before). ``rankwise metrics`` is
    its deprecated spelling."""
    res = runner.invoke(app, ["list", "metrics", "reciprocal"])
    assert res.exit_code == 0
    names = [line for line in res.stdout.splitlines() if line and not line.startswith(" ")]
    assert names[:3] == ["recip_rank  (also RR)", "RR_cut  (also RR@k)", "ARHR  (also ARHR@k)"]
    whole = runner.invoke(app, ["list", "metrics"])
    assert whole.exit_code == 0 and max(len(line) for line in whole.stdout.splitlines()) <= 80
    assert "bpref" in whole.stdout and "rbp_resid" in whole.stdout
    none = runner.invoke(app, ["list", "metrics", "no-such-thing"])
    assert none.exit_code == 2 and "no metric matches 'no-such-thing'" in none.output
    old = runner.invoke(app, ["metrics", "reciprocal"])
    assert old.exit_code == 0 and "'rankwise metrics' is deprecated: write 'rankwise list metrics'" in old.output
    assert "recip_rank  (also RR)" in old.stdout


def test_list_every_registered_family() -> None:
    res = runner.invoke(app, ["list"])
    counts = dict(line.split()[:2] for line in res.stdout.splitlines())
    assert counts == {"metrics": "106", "click-models": "12", "simulated-users": "4", "estimators": "6",
                      "slate-estimators": "3",
                      "interleaving": "4", "fusion": "25", "normalisations": "7", "ab-tests": "7", "sequential": "4",
                      "event-aggregations": "3", "correction-scopes": "3", "cap-conventions": "2",
                      "prior-structures": "2", "click-rankings": "3", "accelerations": "2",
                      "comparison-tests": "7", "corrections": "4", "beyond-accuracy": "20"}
    rrf = runner.invoke(app, ["list", "fusion", "reciprocal"])
    assert rrf.stdout.splitlines() == ["rrf", "    Reciprocal rank fusion: sum 1/(k + R).",
                                       "    parameter: k=60 (0..inf): the rank constant",
                                       "    reference: Cormack et al. 2009; ranx rrf"]
    typo = runner.invoke(app, ["list", "clik-models"])
    assert typo.exit_code == 2 and "did you mean 'click-models'?" in typo.output


def test_missing_columns_name_the_options_to_type(tmp_path) -> None:
    """'missing column(s) 'unit'' did not say --unit before (issue #41)."""
    log = tmp_path / "ab.csv"
    log.write_text("member,cohort,clicks\n1,a,1\n2,b,0\n")
    res = runner.invoke(app, ["ab", str(log), "-m", "clicks"])
    assert res.exit_code == 2 and "(name the columns with --unit NAME, --variant NAME)" in res.output
    bandit = tmp_path / "log.csv"
    bandit.write_text("item,click,p\na,1,0.5\n")
    res = runner.invoke(app, ["ope", str(bandit), "--policy", "uniform", "--no-position"])
    assert res.exit_code == 2 and "with --action NAME, --reward NAME, --pscore NAME)" in res.output
