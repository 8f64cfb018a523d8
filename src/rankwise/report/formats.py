"""Markdown and LaTeX renderings of evaluations and comparisons (best value bold, significance
marked with the letters of the systems a value beats, as in TREC papers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rankwise.comparison import Comparison
from rankwise.evaluation import Result
from rankwise.report.grid import Grid, markdown_cell

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _letters(names: list[str]) -> dict[str, str]:
    return {n: LETTERS[i % 26] * (1 + i // 26) for i, n in enumerate(names)}


def _beats(comparison: Comparison | None, metric: str, letters: dict[str, str]) -> dict[str, str]:
    marks: dict[str, list[str]] = {}
    if comparison is not None:
        for winner, loser in sorted(comparison.significant_pairs(metric)):
            marks.setdefault(winner, []).append(letters[loser])
    return {k: "".join(sorted(v)) for k, v in marks.items()}


def _fmt(v: Any, digits: int) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def summary_markdown(result: Result, comparison: Comparison | None = None, digits: int = 4) -> str:
    """Runs x metrics as a Markdown table; the best value of each metric in bold and, with a
    comparison, the letters of the runs each value beats significantly as superscripts.

    >>> import rankwise
    >>> res = rankwise.evaluate({"q": {"a": 1}}, {"x": {"q": {"a": 1.0}}, "y": {"q": {"a": 0.5, "b": 1.0}}}, "P@1")
    >>> print(summary_markdown(res))
    | | run | P@1 |
    |---|---|---|
    | a | x | **1.0000** |
    | b | y | 0.0000 |
    <BLANKLINE>
    **bold**: the best value of the metric.
    """
    cols = list(result.summary.columns)
    lines = ["| | run | " + " | ".join(markdown_cell(c) for c in cols) + " |", "|---|---|" + "---|" * len(cols)]
    for letter, name, cells in marked_cells(result, comparison, digits, lambda t: f"**{t}**",
                                            lambda t, m: f"{t}<sup>{m}</sup>"):
        lines.append(f"| {letter} | {markdown_cell(name)} | " + " | ".join(cells) + " |")
    legend = "**bold**: the best value of the metric."
    if comparison is not None:
        legend += (" <sup>x</sup>: significantly better than run x "
                   f"({settings_text(comparison)}).")
    return "\n".join([*lines, "", legend])


def marked_cells(result: Result, comparison: Comparison | None, digits: int, bold: Callable[[str], str],
                 mark: Callable[[str, str], str]) -> list[tuple[str, str, list[str]]]:
    """(letter, run, cells) per run: values formatted, the best of each metric passed through
    ``bold``, and the letters of the runs it beats significantly added by ``mark``."""
    summary = result.summary
    names = list(summary.index)
    letters = _letters(names)
    cols = list(summary.columns)
    best = {c: summary[c].max() for c in cols}
    marks = {c: _beats(comparison, c, letters) for c in cols}
    rows = []
    for name in names:
        cells = []
        for c in cols:
            v = summary.loc[name, c]
            text = _fmt(float(v), digits)
            if v == best[c]:
                text = bold(text)
            if marks[c].get(name):
                text = mark(text, marks[c][name])
            cells.append(text)
        rows.append((letters[name], str(name), cells))
    return rows


TEX_SPECIALS = {"\\": "\\textbackslash{}", "_": "\\_", "%": "\\%", "&": "\\&", "#": "\\#", "$": "\\$",
                "{": "\\{", "}": "\\}", "^": "\\textasciicircum{}", "~": "\\textasciitilde{}"}


def _tex(s: str) -> str:
    """Text safe in LaTeX: every special character replaced in one pass (so the braces of
    ``\\textbackslash{}`` are not escaped again).

    >>> print(_tex("a_b^2~c\\d{e}"))
    a\\_b\\textasciicircum{}2\\textasciitilde{}c\\textbackslash{}d\\{e\\}
    """
    import re

    return re.sub(r"[\\_%&#$\{\}^~]", lambda m: TEX_SPECIALS[m.group(0)], str(s))


def summary_latex(result: Result, comparison: Comparison | None = None, digits: int = 4,
                  caption: str | None = None) -> str:
    """A booktabs LaTeX table of runs x metrics: best value bold, superscript letters of the
    runs a value beats significantly (after correction), test and correction in the caption."""
    cols = list(result.summary.columns)
    out = ["\\begin{table}[t]", "\\centering", "\\begin{tabular}{ll" + "r" * len(cols) + "}", "\\toprule",
           " & Run & " + " & ".join(_tex(c) for c in cols) + " \\\\", "\\midrule"]
    for letter, name, cells in marked_cells(result, comparison, digits, lambda t: f"\\mathbf{{{t}}}",
                                            lambda t, m: f"{t}^{{{m}}}"):
        out.append(f"{letter} & {_tex(name)} & " + " & ".join(f"${c}$" for c in cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    if caption is None and comparison is not None:
        caption = (f"Superscripts: significantly better than the run of that letter "
                   f"({comparison.test} test, {comparison.correction} correction, "
                   f"$\\alpha={comparison.alpha}$, {next(iter(comparison.n_queries.values()))} queries).")
    if caption:
        out.append(f"\\caption{{{caption}}}")
    out.append("\\end{table}")
    return "\n".join(out)


def comparison_columns(comparison: Comparison) -> list[str]:
    """The column heads of the pairwise table: every statistic the comparison computed."""
    conf = int(round(comparison.confidence * 100))
    head = ["metric", "a", "b", "n", "mean a", "mean b", "diff (b-a)", f"{conf}% CI (t)"]
    if comparison.bootstrap_ci:
        head.append(f"{conf}% CI ({_boot_name(comparison)})")
    return head + ["d", "W/T/L", "p", f"p ({comparison.correction})", "sig."]


def _boot_name(comparison: Comparison) -> str:
    return "BCa" if str(comparison.bootstrap_ci).lower() == "bca" else "percentile"


def comparison_rows(comparison: Comparison, digits: int = 4) -> list[list[str]]:
    """One row of text cells per compared pair, under ``comparison_columns``: difference,
    t interval, bootstrap interval (when computed), effect size (Cohen's d), wins/ties/losses,
    p and corrected p."""
    rows = []
    for r in comparison.table.to_dict("records"):
        cells = [r["metric"], r["a"], r["b"], str(r["n"]), _fmt(r["mean_a"], digits), _fmt(r["mean_b"], digits),
                 _fmt(r["diff"], digits), f"[{_fmt(r['ci_low'], digits)}, {_fmt(r['ci_high'], digits)}]"]
        if comparison.bootstrap_ci:
            cells.append(f"[{_fmt(r['boot_low'], digits)}, {_fmt(r['boot_high'], digits)}]")
        cells += [_fmt(r["effect"], 2), f"{r['wins']}/{r['ties']}/{r['losses']}", f"{r['p_value']:.3g}",
                  f"{r['p_corrected']:.3g}", "*" if r["significant"] else ""]
        rows.append(cells)
    return rows


def comparison_markdown(comparison: Comparison, digits: int = 4) -> str:
    """One row per compared pair: difference, intervals, effect size, wins/ties/losses, p-values."""
    head = comparison_columns(comparison)
    lines = ["| " + " | ".join(markdown_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(markdown_cell(c) for c in cells) + " |"
              for cells in comparison_rows(comparison, digits)]
    return "\n".join(lines)


def comparison_latex(comparison: Comparison, digits: int = 4) -> str:
    """The pairwise table as a booktabs LaTeX table (every statistic of ``comparison_markdown``)."""
    head = comparison_columns(comparison)
    out = ["\\begin{table}[t]", "\\centering", "\\begin{tabular}{lll" + "r" * (len(head) - 3) + "}",
           "\\toprule", " & ".join(_tex(h) for h in head) + " \\\\", "\\midrule"]
    out += [" & ".join(_tex(c) for c in cells) + " \\\\" for cells in comparison_rows(comparison, digits)]
    out += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{_tex(settings_text(comparison))}}}", "\\end{table}"]
    return "\n".join(out)


def comparison_html(comparison: Comparison, digits: int = 4) -> str:
    """The summary and pairwise tables as HTML fragments (the report's tables)."""
    import html

    cols = list(comparison.evaluation.summary.columns)
    rows = ["<table id='summary'><tr><th></th><th>run</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
            + "</tr>"]
    for letter, name, cells in marked_cells(comparison.evaluation, comparison, digits, lambda t: f"<b>{t}</b>",
                                            lambda t, m: f"{t}<sup class='sig'>{m}</sup>"):
        rows.append(f"<tr><td>{letter}</td><td>{html.escape(name)}</td>"
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    rows.append("</table>")
    head = comparison_columns(comparison)
    rows.append("<h2>Comparisons</h2>")
    rows.append("<table id='pairs'><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>")
    for cells in comparison_rows(comparison, digits):
        sig = cells[-1] == "*"
        rows.append("<tr>" + "".join(f"<td{' class=sig' if sig and i >= len(cells) - 2 else ''}>"
                                     f"{html.escape(c)}</td>" for i, c in enumerate(cells)) + "</tr>")
    rows.append("</table>")
    return "\n".join(rows)


def settings_text(comparison: Comparison) -> str:
    """The statistics settings in words, for captions and headers.

    e.g. ``paired t test, holm correction, alpha 0.05, 95% intervals, 43 queries``
    """
    parts = [f"{comparison.test} test", f"{comparison.correction} correction", f"alpha {comparison.alpha:g}",
             f"{int(round(comparison.confidence * 100))}% intervals"]
    from rankwise.comparison import COMPARISON_TESTS

    if COMPARISON_TESTS.parse(comparison.test)[0].resampled or comparison.bootstrap_ci:
        parts.append(f"{comparison.permutations:,} resamples, seed {comparison.seed}")
    if comparison.bootstrap_ci:
        parts.append(f"{_boot_name(comparison)} bootstrap interval")
    counts = sorted(set(comparison.n_queries.values()))
    parts.append(f"{counts[0] if len(counts) == 1 else ', '.join(map(str, counts))} queries")
    return ", ".join(parts)


def summary_grid(comparison: Comparison, digits: int = 4) -> Grid:
    """Runs x metrics with the best value marked ``*`` and superscript letters as ``^ab``."""
    cols = list(comparison.evaluation.summary.columns)
    rows = [[letter, name, *cells] for letter, name, cells in
            marked_cells(comparison.evaluation, comparison, digits, lambda t: f"{t}*", lambda t, m: f"{t}^{m}")]
    note = (f"*: best value; ^x: significantly better than run x ({settings_text(comparison)})")
    return Grid("rankwise comparison", ["", "run", *cols], rows, [False, False] + [True] * len(cols), note=note)


def comparison_grid(comparison: Comparison, digits: int = 4) -> Grid:
    """The pairwise table as a Grid (the same cells as ``comparison_markdown``)."""
    head = comparison_columns(comparison)
    numeric = [h not in ("metric", "a", "b", "sig.") for h in head]
    return Grid("pairwise comparisons", head, comparison_rows(comparison, digits), numeric)
