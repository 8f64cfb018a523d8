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
    assert out["metrics"]["ndcg@10"]["signature"].startswith("ndcg_cut_10|gain=linear|ties=trec")


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
    res = runner.invoke(app, ["metrics"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for name in ("ndcg_cut", "bpref", "infAP", "rbp_resid", "Rndcg"):
        assert name in res.stdout


def test_trec_eval_console_script_matches_trec_eval() -> None:
    proc = subprocess.run([sys.executable, "-m", "rankwise.cli.main", "trec-eval", "-q", "-m", "all_trec", Q, R],
                          capture_output=True, text=True, check=True)
    assert proc.stdout == (DATA / "out.test.aq").read_text()
