"""Human and machine renderings of a Result: rich table, JSON, CSV and trec_eval-style text."""

from __future__ import annotations

import io
import math
from typing import Any

from rankwise.evaluation import Result, plain_value
from rankwise.report.grid import Grid


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def evaluation_grid(result: Result, per_query: bool = False, digits: int = 4) -> Grid:
    """Runs x metrics (and per-query rows above each run's summary row) as a Grid; reads the
    per-query arrays directly, without building DataFrames.

    >>> import rankwise
    >>> res = rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["P@2", "recip_rank"])
    >>> print(evaluation_grid(res).text())
    rankwise evaluation
    run     P@2  recip_rank
    ---  ------  ----------
    run  0.5000      1.0000
    """
    colmap = result._column_map()
    columns = ["run"] + (["query"] if per_query else []) + list(colmap)
    rows: list[list[str]] = []
    strong: set[int] = set()
    for rs in result.runs:
        if per_query:
            cols = [rs.values[c] for c in colmap.values()]
            for i, q in enumerate(rs.query_ids):
                rows.append([rs.name, str(q)] + [_fmt(plain_value(v[i]), digits) for v in cols])
            strong.add(len(rows))
        rows.append([rs.name] + (["all"] if per_query else []) + [_fmt(rs.summary(c), digits) for c in colmap.values()])
    numeric = [False] * (2 if per_query else 1) + [True] * len(colmap)
    return Grid("rankwise evaluation", columns, rows, numeric, strong)


def render_json(result: Result, per_query: bool = False) -> str:
    """The stable JSON interface (see ``Result.to_dict``)."""
    import json

    return json.dumps(result.to_dict(per_query=per_query), indent=2, sort_keys=False)


def render_csv(result: Result, per_query: bool = False) -> str:
    """CSV with a header ``run,query,<metrics>``; summary rows carry query ``all``."""
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    colmap = result._column_map()
    writer.writerow(["run", "query", *colmap])
    for rs in result.runs:
        if per_query:
            cols = [rs.values[c] for c in colmap.values()]
            for i, q in enumerate(rs.query_ids):
                writer.writerow([rs.name, str(q), *(plain_value(v[i]) for v in cols)])
        writer.writerow([rs.name, "all", *(rs.summary(c) for c in colmap.values())])
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
