"""Catalogues as text that reads at 80 columns: one block per member (name, definition,
parameters, reference), for ``rankwise list`` in a pipe or a file."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any


def blocks(rows: Sequence[Mapping[str, Any]], width: int = 80) -> str:
    """Each row as a block: its name (and aliases) on the first line, then its description,
    parameters (one per line) and reference, indented and wrapped to ``width`` columns.

    >>> print(blocks([{"name": "rrf", "aliases": "", "description": "Reciprocal rank fusion: sum 1/(k + R).",
    ...                "parameters": ["k=60 (0..inf): the rank constant"], "reference": "Cormack et al. 2009"}]))
    rrf
        Reciprocal rank fusion: sum 1/(k + R).
        parameter: k=60 (0..inf): the rank constant
        reference: Cormack et al. 2009
    """
    out = []
    for row in rows:
        head = row["name"] + (f"  (also {row['aliases']})" if row.get("aliases") else "")
        lines = [head]
        fill = textwrap.TextWrapper(width=width, initial_indent="    ", subsequent_indent="      ")
        if row.get("description"):
            lines += fill.wrap(row["description"])
        for part in row.get("parameters", []):
            lines += fill.wrap("parameter: " + part)
        if row.get("reference"):
            lines += fill.wrap("reference: " + row["reference"])
        out.append("\n".join(lines))
    return "\n".join(out)


__all__ = ["blocks"]
