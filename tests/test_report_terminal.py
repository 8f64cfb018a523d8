"""Terminal tables fit 80, 100 and 120 columns without cutting a number, a name or a unit.

Three walks:

* any grid (hypothesis) rendered by rich at each width: no line wider than the terminal, every
  number whole, every name either whole or folded into pieces of at least ``MIN_TEXT``;
* every table-printing command (``evaluate``, ``compare``, ``ab``, ``beyond``, ``clicks
  evaluate``, ``interleave``, ``ope``, ``agree``) through the console entry as a terminal of each
  width (rich reads ``TTY_COMPATIBLE`` and ``COLUMNS``): each word of the plain-text output (the
  same tables, every character) is found whole in the terminal's, long names by their first
  ``MIN_TEXT`` characters;
* the same commands in a real terminal (tmux, 80 columns), the captured pane compared with the
  expected text in ``tests/data/terminal`` (``RANKWISE_TERMINAL_RECORD=1`` rewrites it).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.report.grid import Grid
from rankwise.report.terminal import MIN_TEXT, fitted, layouts

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXPECTED = DATA / "terminal"
WIDTHS = (80, 100, 120)
BOX = set("┏┳┓┃┡╇┩│└┴┘━─╭╮╰╯┼├┤")


def _render(grid: Grid, width: int) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    for table in fitted(grid, width):
        console.print(table)
    return console.file.getvalue()  # type: ignore[attr-defined]


def _words(text: str) -> list[str]:
    return [w for w in text.split() if not set(w) <= BOX | {"-"}]   # rules of the plain table


def _assert_kept(plain: str, shown: str, width: int) -> None:
    too_wide = [line for line in shown.splitlines() if len(line) > width]
    assert not too_wide, too_wide[:3]
    flat = " ".join(shown.split())
    for word in _words(plain):
        if re.fullmatch(r"[-+]?[\d.,:/%e()\[\]*^a-z-]*\d[\d.,:/%e()\[\]*^a-z-]*", word) or len(word) <= MIN_TEXT:
            assert word in flat or word.strip(",()[]") in flat, f"{word!r} cut at {width} columns"
        else:
            assert word[:MIN_TEXT] in flat, f"{word!r} lost at {width} columns"


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.-0123456789", min_size=1, max_size=40)
NUMBER = st.one_of(st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: f"{v:.4f}"),
                   st.floats(1e-12, 1e-4).map(lambda v: f"{v:.2e}"),
                   st.tuples(st.floats(0, 1), st.floats(0, 1)).map(lambda t: f"[{t[0]:.4f}, {t[1]:.4f}]"))


@st.composite
def grids(draw) -> Grid:
    keys = draw(st.integers(1, 3))
    values = draw(st.integers(1, 14))
    n_rows = draw(st.integers(0, 6))
    columns = [draw(NAME) for _ in range(keys)] + [draw(st.sampled_from(["p", "95% CI (t)", "diff (b-a)", "mean",
                                                                          "ndcg@10", "P(better)"]))
                                                   for _ in range(values)]
    rows = [[draw(NAME) for _ in range(keys)] + [draw(NUMBER) for _ in range(values)] for _ in range(n_rows)]
    note = draw(st.sampled_from(["", "*: best"]))
    return Grid(draw(NAME), columns, rows, [False] * keys + [True] * values, note=note)


@settings(max_examples=60, deadline=None)
@given(grids(), st.sampled_from(WIDTHS))
def test_any_grid_fits_the_terminal_whole(grid: Grid, width: int) -> None:
    shown = _render(grid, width)
    assert max(len(line) for line in shown.splitlines()) <= width
    flat = " ".join(shown.split())
    for row in [grid.columns, *grid.rows]:
        for cell, numeric in zip(row, grid.numeric, strict=True):
            for word in cell.split():
                assert (word if numeric or len(word) <= MIN_TEXT else word[:MIN_TEXT]) in flat, (word, width)


def test_the_layouts_go_wide_then_wrapped_then_stacked_then_long() -> None:
    numbers = [f"0.{i}{i}{i}{i}" for i in range(1, 10)]
    grid = Grid("t", ["run", *[f"metric{i}" for i in range(9)]], [["SPLADE_P_P_ENSEMBLE_DISTIL.dl19", *numbers]],
                [False] + [True] * 9)
    # natural: 31 + 9 * 7 = 94 characters of cells, 3 * 10 + 1 = 31 of borders: 125
    assert [x.kind for x in layouts(grid, 125)] == ["wide"]
    # least: the name folds to 10, numbers stay 7 wide: 10 + 63 + 31 = 104
    assert [x.kind for x in layouts(grid, 104)] == ["wrapped"]
    stacked = layouts(grid, 80)
    assert [x.kind for x in stacked] == ["stacked", "stacked"]
    assert [x.columns[0] for x in stacked] == ["run", "run"]           # the key in every block
    assert sum(len(x.columns) - 1 for x in stacked) == 9                # every value once
    # a 20-column terminal cannot hold a 10 + 7 block (10 + 7 + 7 = 24): one row per cell
    long = layouts(grid, 20)
    assert [x.kind for x in long] == ["long"] and long[0].columns == ["run", "column", "value"]
    assert [cells[1:] for cells, _ in long[0].rows][:2] == [["metric0", "0.1111"], ["metric1", "0.2222"]]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder with the inputs of every table-printing command, named as the commands below
    name them (relative paths, so the terminal's text does not depend on where tests run)."""
    folder = tmp_path_factory.mktemp("terminal")
    for source in (ROOT / "examples" / "dl19" / "qrels.dl19-passage.txt", ROOT / "examples" / "dl19" / "BM25.dl19.trec",
                   ROOT / "examples" / "dl19" / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec",
                   DATA / "online" / "events.csv", DATA / "recsys" / "reco.csv", DATA / "recsys" / "random.csv",
                   DATA / "recsys" / "train.csv", DATA / "clicks" / "clara2_head.tsv",
                   DATA / "online" / "open_bandit_men_propensities.csv.gz"):
        shutil.copy(source, folder / source.name)
    lines = (folder / "qrels.dl19-passage.txt").read_text().splitlines()
    # every seventh label moved up one grade (capped at 3): a second assessor who disagrees
    noisy = [" ".join(p[:3] + [str(min(3, int(p[3]) + 1)) if i % 7 == 0 else p[3]])
             for i, p in enumerate(line.split() for line in lines)]
    (folder / "second.qrels").write_text("\n".join(noisy) + "\n")
    # the judgments of DL19's first 12 queries: the simulation's tables have the same rows and
    # columns as over all 43 (each query's list laws cost about 0.3 s, and the command runs 5 times)
    first = sorted({line.split()[0] for line in lines})[:12]
    (folder / "qrels.dl19-12.txt").write_text("\n".join(line for line in lines if line.split()[0] in first) + "\n")
    env = {**os.environ, "RANKWISE_PROGRESS": "0"}
    for model in ("pbm", "dbn"):
        subprocess.run([sys.executable, "-m", "rankwise", "clicks", "fit", "clara2_head.tsv", "--model", model, "-q",
                        "-o", f"{model}.json"], cwd=folder, check=True, env=env, capture_output=True)
    return folder


RUNS = ["BM25.dl19.trec", "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec"]
COMMANDS: dict[str, list[str]] = {
    "evaluate": ["evaluate", "qrels.dl19-passage.txt", *RUNS, "-m", "ndcg@10", "-m", "map", "-m", "P@10",
                 "-m", "recall@1000", "-m", "recip_rank", "-m", "ndcg_cut_100"],
    "compare": ["compare", "qrels.dl19-passage.txt", *RUNS, "-m", "ndcg@10", "-m", "map", "-m", "recip_rank"],
    "ab": ["ab", "events.csv", "--unit", "user_id", "-m", "clicks=count(click)",
           "-m", "ctr=count(click)/count(impression)"],
    "beyond": ["beyond", "recommender_with_a_long_name=reco.csv", "random=random.csv", "--train", "train.csv",
               "-m", "coverage@10", "-m", "novelty@10", "-m", "gini@10", "-m", "personalization@10",
               "-m", "arp@10"],
    "clicks evaluate": ["clicks", "evaluate", "clara2_head.tsv", "--model", "pbm.json", "--model", "dbn.json"],
    "interleave": ["interleave", "simulate", "qrels.dl19-12.txt", *RUNS, "--impressions", "100",
                   "--repetitions", "20", "--seed", "1"],
    "ope": ["ope", "open_bandit_men_propensities.csv.gz", "--policy", "uniform", "--action", "item_id",
            "--reward", "click", "--pscore", "propensity_score", "--resamples", "100"],
    "agree": ["agree", "qrels.dl19-passage.txt", "second.qrels", *RUNS, "--resamples", "50"],
}


def _run(rankwise_cli, capsys, monkeypatch, argv: list[str], width: int | None) -> str:
    monkeypatch.setenv("RANKWISE_PROGRESS", "0")
    monkeypatch.setenv("NO_COLOR", "1")
    if width is None:
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
        monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert rankwise_cli(argv) == 0, capsys.readouterr().err
    return re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)   # bold and italic are kept by NO_COLOR


PLAIN: dict[str, str] = {}
"""Each command's plain-text output (a pipe's), run once per test session."""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_table_command_fits_80_100_and_120_columns(command, width, workspace, rankwise_cli, capsys,
                                                          monkeypatch) -> None:
    monkeypatch.chdir(workspace)
    if command not in PLAIN:
        PLAIN[command] = _run(rankwise_cli, capsys, monkeypatch, COMMANDS[command], None)
    assert "┃" not in PLAIN[command]                         # a pipe gets the plain text
    shown = _run(rankwise_cli, capsys, monkeypatch, COMMANDS[command], width)
    assert "┃" in shown or "│" in shown                       # a terminal gets the rich table
    _assert_kept(PLAIN[command], shown, width)


def _pane(workspace: Path, argv: list[str], width: int) -> str:
    session = f"rankwise-test-{os.getpid()}-{time.monotonic_ns()}"
    command = " ".join(f"'{a}'" for a in [sys.executable, "-m", "rankwise", *argv])
    env = {**os.environ, "RANKWISE_PROGRESS": "0", "NO_COLOR": "1"}
    env.pop("TTY_COMPATIBLE", None)
    env.pop("COLUMNS", None)
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(width), "-y", "400", "-c", str(workspace),
                    f"{command}; echo __done__; sleep 60"], check=True, env=env)
    try:
        for _ in range(600):
            time.sleep(0.1)
            pane = subprocess.run(["tmux", "capture-pane", "-p", "-J", "-t", session, "-S", "-"],
                                  capture_output=True, text=True, check=True).stdout
            if "__done__" in pane:
                return pane[: pane.index("__done__")].rstrip() + "\n"
        raise AssertionError(f"{argv[0]} did not finish in a minute")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")
def test_a_real_80_column_terminal_shows_the_expected_text(workspace) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        panes = dict(zip(COMMANDS, pool.map(lambda argv: _pane(workspace, argv, 80), COMMANDS.values()),
                         strict=True))
    record = os.environ.get("RANKWISE_TERMINAL_RECORD") == "1"
    for command, pane in panes.items():
        expected = EXPECTED / f"{command.replace(' ', '_')}.txt"
        # -J joined what the terminal wrapped: a table line longer than 80 would show here
        assert max(len(line) for line in pane.splitlines() if set(line) & BOX) <= 80, command
        if record:
            expected.parent.mkdir(exist_ok=True)
            expected.write_text(pane)
        assert pane == expected.read_text(), f"{command}: the 80-column terminal shows other text"
