"""trec_eval's output format, byte for byte: ``"%-22s\\t%s\\t%6.4f\\n"`` per value."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rankwise.metrics.compute import RunScores


def _line(name: str, qid: str, value: Any, kind: str, z: bool = False, float_format: str = "%6.4f") -> str:
    if kind == "int":
        text = "%ld" % int(value)  # noqa: UP031 - mirrors trec_eval's printf
    elif kind == "string":
        text = f"'{value}'"
    elif kind == "raw":
        text = str(value)
    else:
        number = float(value)
        text = float_format % number
        if math.isnan(number):  # C's printf writes the sign of 0.0 / 0.0: "  -nan"
            text = "-nan".rjust(len(text))
    prefix = "Z" if z and kind not in ("string", "raw") else ""  # trec_eval -Z: "Z%-22s"
    return "%s%-22s\t%s\t%s\n" % (prefix, name, qid, text)  # noqa: UP031


def format_trec(
    scores: RunScores,
    columns: Sequence[str],
    *,
    per_query: bool = False,
    summary: bool = True,
    with_runid: bool = True,
    with_num_q: bool = True,
    summary_override: dict[str, object] | None = None,
    zscores: bool = False,
    float_format: str = "%6.4f",
) -> str:
    """Render one run's scores as trec_eval prints them (per query first, then ``all``).

    ``float_format`` is trec_eval's ``%6.4f``; ``%.17g`` prints every double exactly (the
    differential tests compare against a trec_eval build that prints the same way)."""
    out: list[str] = []
    if per_query:
        per_query_cols = [c for c in columns if scores.summary_rule.get(c) != "gmean"]
        for i, qid in enumerate(scores.query_ids):
            for col in per_query_cols:
                out.append(_line(col, str(qid), scores.values[col][i], scores.kinds[col], zscores, float_format))
    if summary:
        if with_runid:
            out.append(_line("runid", "all", scores.name, "raw"))
        if with_num_q:
            out.append(_line("num_q", "all", len(scores.query_ids), "float" if zscores else "int", zscores,
                             float_format))
        for col in columns:
            if scores.kinds[col] == "string":
                continue
            value = (summary_override or {}).get(col, scores.summary(col))
            out.append(_line(col, "all", value, scores.kinds[col], zscores, float_format))
    return "".join(out)
