"""A table of text cells that renders two ways: plain aligned text that keeps every character
(files, pipes, CI logs, notebooks) and a rich table for terminals whose columns wrap or shrink
instead of cutting numbers and names."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def markdown_cell(text: str) -> str:
    """Text safe in a Markdown table cell: ``|`` escaped, ``<``, ``>`` and ``&`` as HTML
    entities (a run named ``<script>`` stays text), line breaks as spaces.

    >>> print(markdown_cell("a|b <img src=x> & c" + chr(10) + "d"))
    a\\|b &lt;img src=x&gt; &amp; c d
    """
    import html

    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\r", " ").replace("\n", " ")


@dataclass
class Grid:
    """A titled table of strings; ``numeric[i]`` right-aligns column ``i`` and keeps it unbroken.

    >>> g = Grid("scores", ["run", "P@10"], [["SPLADE_PP_ENSEMBLE_DISTIL", "0.501234"]], [False, True])
    >>> print(g.text())
    scores
    run                            P@10
    -------------------------  --------
    SPLADE_PP_ENSEMBLE_DISTIL  0.501234
    """

    title: str
    columns: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    strong_rows: set[int] = field(default_factory=set)
    """Rows shown in bold on a terminal (summary rows under per-query rows)."""
    note: str = ""
    """A line printed under the table (what the marks mean)."""
    preface: str = ""
    """Lines printed between the title and the table (what must be read first)."""

    def text(self) -> str:
        """Plain text: columns padded to their widest cell, two spaces apart, nothing cut."""
        widths = [len(c) for c in self.columns]
        for row in self.rows:
            widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

        def line(cells: list[str]) -> str:
            parts = [c.rjust(w) if num else c.ljust(w)
                     for c, w, num in zip(cells, widths, self.numeric, strict=True)]
            return "  ".join(parts).rstrip()

        out = [self.title] if self.title else []
        out += self.preface.splitlines()
        out += [line(self.columns), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in self.rows]
        if self.note:
            out.append(self.note)
        return "\n".join(out)

    def markdown(self) -> str:
        """A Markdown table: the title in bold above, numeric columns right-aligned, each
        note line under it (``|`` in cells escaped).

        >>> Grid("t", ["run", "P@10"], [["a|b", "0.5"]], [False, True], note="n").markdown().splitlines()
        ['**t**', '', '| run | P@10 |', '|---|---:|', '| a\\\\|b | 0.5 |', '', 'n  ']
        """
        lines = [f"**{self.title}**", ""] if self.title else []
        lines += [f"{line}  " for line in self.preface.splitlines()] + ([""] if self.preface else [])
        lines += ["| " + " | ".join(self.columns) + " |",
                  "|" + "|".join("---:" if n else "---" for n in self.numeric) + "|"]
        lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in self.rows]
        if self.note:
            lines += [""] + [f"{line}  " for line in self.note.splitlines()]
        return "\n".join(lines)


def number_cell(value: float | None, digits: int) -> str:
    """A number with ``digits`` decimals; nan and infinities spelled out.

    >>> number_cell(0.12345, 3), number_cell(float("nan"), 3), number_cell(float("-inf"), 3)
    ('0.123', 'nan', '-inf')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}f}"


def p_cell(value: float | None) -> str:
    """A p-value: four decimals, or scientific below 1e-4.

    >>> p_cell(0.04321), p_cell(3.2e-7)
    ('0.0432', '3.2e-07')
    """
    if value is None or math.isnan(value):
        return "nan"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"
