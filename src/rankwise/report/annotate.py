"""Warnings inside every output format, so a file saved with ``-o`` says what a terminal would
have said (``annotated``: a note after a table, Markdown or LaTeX, a section of an HTML page).

CSV that keeps its warnings: every CSV rankwise writes (results, per-variant statistics,
per-user rows) starts with one ``# warning: ...`` line per warning, so a file saved with
``-f csv -o`` says what a terminal would have said. Readers skip them: rankwise's own (``ab
--statistics`` reads its ``-f statistics`` back), pandas with ``comment="#"``, R's
``read.csv(comment.char = "#")``.

>>> import pandas as pd
>>> print(csv_text(pd.DataFrame({"metric": ["ctr"], "p": [0.04]}), ["sample ratio mismatch (p = 1e-97)"]), end="")
# warning: sample ratio mismatch (p = 1e-97)
metric,p
ctr,0.04
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

COMMENT = "# "
"""What starts a line of a CSV file that is not data."""


def warning_lines(warnings: Iterable[Any]) -> str:
    """One ``# warning: ...`` line per warning (a warning's own line breaks kept as comment lines)."""
    out = []
    for warning in warnings:
        text = str(warning).replace("\r\n", "\n").replace("\n", "\n" + COMMENT + "  ")
        out.append(f"{COMMENT}warning: {text}\n")
    return "".join(out)


def csv_text(frame: Any, warnings: Iterable[Any] = (), sep: str = ",") -> str:
    """``frame`` as CSV (every digit), after its warnings as comment lines."""
    out = io.StringIO()
    out.write(warning_lines(warnings))
    frame.to_csv(out, index=False, sep=sep)
    return out.getvalue()


STYLE_OF_FORMAT: dict[str, str | None] = {
    "table": "text", "text": "text", "markdown": "markdown", "latex": "latex", "html": "html", "csv": "csv",
    "statistics": "csv", "json": None, "trec": None,
}
"""How each output format carries warnings: ``None`` where the format holds them itself (JSON's
``warnings`` list) or must stay byte for byte another tool's (``trec``: trec_eval's output;
its warnings go to standard error only)."""


def annotated(text: str, warnings: Iterable[Any], style: str | None) -> str:
    """``text`` with its warnings in the format's own comment or note syntax.

    >>> print(annotated("| run | map |", ["1 query left out"], "markdown"), end="")
    | run | map |
    <BLANKLINE>
    > **warning**: 1 query left out
    """
    shown = [str(w) for w in warnings if str(w) not in text]   # a format that shows them already keeps its own
    if not shown or style is None:
        return text
    if style == "csv":
        return warning_lines(shown) + text
    import html

    body = text.rstrip("\n")
    if style == "html":
        items = "".join(f"<li>{html.escape(w)}</li>" for w in shown)
        block = f'<section class="warnings"><h2>Warnings</h2><ul>{items}</ul></section>'
        return body.replace("</body>", block + "</body>", 1) if "</body>" in body else body + "\n" + block + "\n"
    prefix = {"text": "warning: ", "markdown": "> **warning**: ", "latex": "% warning: "}[style]
    return body + "\n\n" + "\n".join(prefix + w.replace("\n", " ") for w in shown) + "\n"


__all__ = ["COMMENT", "STYLE_OF_FORMAT", "annotated", "csv_text", "warning_lines"]
