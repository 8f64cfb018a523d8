"""Markdown and LaTeX renderings of evaluations and comparisons (best value bold, significance
marked with the letters of the systems a value beats, as in TREC papers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rankwise.comparison import Comparison
from rankwise.evaluation import Result

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
    """
    cols = list(result.summary.columns)
    lines = ["| | run | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for letter, name, cells in marked_cells(result, comparison, digits, lambda t: f"**{t}**",
                                            lambda t, m: f"{t}<sup>{m}</sup>"):
        lines.append(f"| {letter} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def _tex(s: str) -> str:
    for a, b in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("%", "\\%"), ("&", "\\&"), ("#", "\\#"),
                 ("$", "\\$"), ("{", "\\{"), ("}", "\\}")):
        s = s.replace(a, b)
    return s


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


def comparison_markdown(comparison: Comparison, digits: int = 4) -> str:
    """One row per compared pair: difference, interval, effect size, wins/ties/losses, p-values."""
    t = comparison.table
    conf = int(round(comparison.confidence * 100))
    head = ["metric", "a", "b", "n", "mean a", "mean b", "diff (b-a)", f"{conf}% CI", "d", "W/T/L", "p",
            f"p ({comparison.correction})", "sig."]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in t.to_dict("records"):
        ci = f"[{_fmt(r['ci_low'], digits)}, {_fmt(r['ci_high'], digits)}]"
        lines.append("| " + " | ".join([
            r["metric"], r["a"], r["b"], str(r["n"]), _fmt(r["mean_a"], digits), _fmt(r["mean_b"], digits),
            _fmt(r["diff"], digits), ci, _fmt(r["effect"], 2), f"{r['wins']}/{r['ties']}/{r['losses']}",
            f"{r['p_value']:.3g}", f"{r['p_corrected']:.3g}", "*" if r["significant"] else ""]) + " |")
    return "\n".join(lines)
