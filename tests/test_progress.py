"""Progress of long work (rankwise.progress) and its terminal display (rankwise.cli.progress):
steps driven by the work done, shown on a terminal only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rankwise
from rankwise import clicks
from rankwise.cli.progress import RichReporter, terminal_reporter
from rankwise.progress import reporting, step

DATA = Path(__file__).parent / "data"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def start(self, description, total):
        self.events.append(("start", description, total))
        return description

    def advance(self, task, amount):
        self.events.append(("advance", task, amount))

    def describe(self, task, description):
        self.events.append(("describe", task, description))

    def finish(self, task):
        self.events.append(("finish", task))


def test_evaluate_reports_each_run_read_and_scored() -> None:
    recorder = Recorder()
    qrels = {"q": {"a": 1, "b": 0}}
    with reporting(recorder):
        rankwise.evaluate(qrels, {"x": {"q": {"a": 1.0}}, "y": {"q": {"b": 1.0}}}, ["P@1"])
    starts = [e for e in recorder.events if e[0] == "start"]
    assert starts == [("start", "reading runs", 2), ("start", "scoring runs", 2)]
    advanced = [e[1] for e in recorder.events if e[0] == "advance"]
    assert advanced == ["reading runs"] * 2 + ["scoring runs"] * 2
    described = [e[2] for e in recorder.events if e[0] == "describe"]
    assert described == ["reading runs: x", "reading runs: y", "scoring runs: x", "scoring runs: y"]
    assert [e for e in recorder.events if e[0] == "finish"] == [("finish", "reading runs"), ("finish", "scoring runs")]


def test_a_fit_reports_one_unit_per_em_iteration() -> None:
    recorder = Recorder()
    log = clicks.read_yandex(DATA / "clicks" / "clara2_head.tsv")
    with reporting(recorder):
        model = clicks.PBM().fit(log, iterations=7, tolerance=0)
    assert recorder.events[0] == ("start", "fitting pbm", 7)
    assert sum(e[2] for e in recorder.events if e[0] == "advance") == len(model.history) == 7
    assert recorder.events[-1] == ("finish", "fitting pbm")


def test_nothing_is_shown_where_nobody_watches(monkeypatch) -> None:
    monkeypatch.delenv("RANKWISE_PROGRESS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert terminal_reporter() is None          # pytest's stderr is not a terminal
    monkeypatch.setenv("RANKWISE_PROGRESS", "1")
    assert isinstance(terminal_reporter(), RichReporter)
    monkeypatch.setenv("RANKWISE_PROGRESS", "0")
    assert terminal_reporter() is None
    with step("no reporter") as advance:         # steps cost nothing without one
        advance(5, "ignored")


@pytest.mark.parametrize("shown", [True, False])
def test_the_command_line_draws_bars_only_when_asked_or_on_a_terminal(tmp_path: Path, shown: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("RANKWISE_PROGRESS", "CI")}
    if shown:
        env["RANKWISE_PROGRESS"] = "1"     # as on a terminal
    out = subprocess.run([sys.executable, "-m", "rankwise", "clicks", "fit", str(DATA / "clicks" / "clara2_head.tsv"),
                          "--model", "pbm", "--iterations", "3", "-o", str(tmp_path / "m.json")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert ("fitting pbm" in out.stderr) is shown
    assert "iteration   3" in out.stderr          # the per-iteration lines stay in both


def test_fuse_ab_and_every_bootstrap_report_their_work() -> None:
    import numpy as np

    from rankwise.experiments import analyze
    from rankwise.fusion import fuse
    from rankwise.stats.resampling import bootstrap_statistic

    recorder = Recorder()
    with reporting(recorder):
        fuse({"x": {"q": {"a": 1.0}}, "y": {"q": {"b": 1.0}}}, "rrf")
        bootstrap_statistic(np.arange(10.0), lambda picks: picks.mean(axis=1), 250, np.random.default_rng(0),
                            budget=1000)   # 100 draws per chunk: 100 + 100 + 50
        analyze({"unit": [1, 2, 3, 4], "variant": ["a", "b", "a", "b"], "clicks": [1.0, 0.0, 2.0, 1.0]},
                metrics={"clicks": "clicks"})
    starts = [e[1:] for e in recorder.events if e[0] == "start"]
    assert ("reading runs", 2) in starts and ("resampling", 250) in starts
    assert ("reading events", 1) in starts and ("summing 4 events per unit", None) in starts
    assert ("analysing metrics", 1) in starts
    resampled = [e[2] for e in recorder.events if e[0] == "advance" and e[1] == "resampling"]
    assert resampled == [100, 100, 50]
