"""Human and machine renderings of a Result: rich table, JSON, CSV and trec_eval-style text."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from rankwise.evaluation import Result


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def render_table(result: Result, per_query: bool = False) -> Any:
    """A rich Table of runs x metrics (and per-query rows when asked)."""
    from rich.table import Table

    summary = result.summary
    table = Table(title="rankwise evaluation", show_lines=False)
    table.add_column("run", style="bold")
    if per_query:
        table.add_column("query")
    for col in summary.columns:
        table.add_column(str(col), justify="right")
    if per_query:
        pq = result.per_query
        for (run, query), row in pq.iterrows():
            table.add_row(str(run), str(query), *[_fmt(v) for v in row.tolist()])
    for run, row in summary.iterrows():
        cells = [str(run)] + (["all"] if per_query else []) + [_fmt(v) for v in row.tolist()]
        table.add_row(*cells, style="bold" if per_query else None)
    return table


def render_json(result: Result, per_query: bool = False) -> str:
    """The stable JSON interface (see ``Result.to_dict``)."""
    return json.dumps(result.to_dict(per_query=per_query), indent=2, sort_keys=False)


def render_csv(result: Result, per_query: bool = False) -> str:
    """CSV with a header ``run,query,<metrics>``; summary rows carry query ``all``."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    summary = result.summary
    writer.writerow(["run", "query", *map(str, summary.columns)])
    if per_query:
        for (run, query), row in result.per_query.iterrows():
            writer.writerow([run, query, *row.tolist()])
    for run, row in summary.iterrows():
        writer.writerow([run, "all", *row.tolist()])
    return buf.getvalue()


def render_trec(result: Result, per_query: bool = False) -> str:
    """trec_eval-style lines ``name<TAB>query<TAB>value`` for every run, metric names as written."""
    from rankwise.report.trec_format import format_trec

    parts = []
    colmap = result._column_map()
    for rs in result.runs:
        renamed = type(rs)(rs.name, rs.query_ids, {k: rs.values[v] for k, v in colmap.items()},
                           {k: rs.kinds[v] for k, v in colmap.items()},
                           {k: rs.summary_rule[v] for k, v in colmap.items()})
        parts.append(format_trec(renamed, list(colmap), per_query=per_query, with_runid=True,
                                 with_num_q=True))
    return "".join(parts)
