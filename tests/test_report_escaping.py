"""Run and metric names are text in every output: Markdown cells escape ``|`` and HTML, LaTeX
escapes every special character, and plots draw ``$`` literally."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA

import rankwise
from rankwise.report.formats import _tex, summary_latex, summary_markdown
from rankwise.report.grid import markdown_cell

Q, R = str(DATA / "qrels.test"), str(DATA / "results.test")


def test_markdown_cells_cannot_break_the_table_or_carry_html() -> None:
    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    result = rankwise.evaluate(Q, {"<b>x</b>|y": R}, ["P@5"])
    table = summary_markdown(result).splitlines()
    assert table[2].startswith("| a | &lt;b&gt;x&lt;/b&gt;\\|y | ")
    rows = [line for line in table[2:] if line.startswith("|")]
    assert rows and all(line.count(" | ") == 2 for line in rows)   # three cells: no extra column from the |
    assert table[-1] == "**bold**: the best value of the metric."       # the legend under the table


def test_latex_escapes_every_special_character_once() -> None:
    assert _tex("x^2~y") == "x\\textasciicircum{}2\\textasciitilde{}y"
    assert _tex("a\\b") == "a\\textbackslash{}b"      # its braces are not escaped again
    result = rankwise.evaluate(Q, {"run_1^~": R}, ["P@5"])
    assert "run\\_1\\textasciicircum{}\\textasciitilde{}" in summary_latex(result)


def test_dollar_signs_in_run_names_do_not_break_plots(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    out = tmp_path / "p.png"
    result = CliRunner().invoke(app, ["plot", "difference", Q, f"a$^$b={R}", f"c$={R}", "-o", str(out)])
    assert result.exit_code == 0, result.output      # a mathtext parse error before
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_a_narrow_table_keeps_its_title_on_one_line() -> None:
    # a short run name and one metric made a table narrower than its title, which rich folded
    from rich.console import Console

    from rankwise.report.grid import Grid
    from rankwise.report.terminal import fitted

    grid = Grid("pairwise comparisons at a glance", ["run", "P@5"], [["a", "0.5000"]], [False, True])
    console = Console(width=100, record=True)
    for table in fitted(grid, 100):
        console.print(table)
    lines = [line for line in console.export_text().splitlines() if line.strip()]
    assert lines[0].strip() == "pairwise comparisons at a glance"
    assert "comparisons" not in lines[1]


def test_literal_text_leaves_matplotlibs_own_tick_labels_as_math() -> None:
    # a log axis writes its ticks as $\mathdefault{10^{2}}$: drawn literally they showed the
    # markup (the interleaving plot's x axis); a run name with $ must still be literal
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rankwise.report.plots import literal_text

    figure, axis = plt.subplots()
    axis.plot([100, 1000, 10000], [0.1, 0.05, 0.01])
    axis.set_xscale("log")
    axis.set_title("run a$^$b")
    literal_text(figure)
    figure.canvas.draw()
    ticks = [label for label in axis.get_xticklabels() if label.get_text()]
    assert ticks and all(label.get_parse_math() for label in ticks)
    assert "mathdefault" in ticks[0].get_text() and not axis.title.get_parse_math()
    plt.close(figure)
