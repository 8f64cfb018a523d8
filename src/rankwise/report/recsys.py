"""Beyond-accuracy results as a terminal or plain-text table (metrics as columns, one row per
run, an arrow saying which way is better), Markdown, CSV or JSON."""

from __future__ import annotations

import io
import json
from typing import Any

from rankwise.report.grid import Grid
from rankwise.report.grid import number_cell as _number


def beyond_grid(result: Any, digits: int = 4) -> Grid:
    """One row per run, one column per metric (``↑`` higher is better, ``↓`` lower is better).

    >>> from rankwise.recsys import beyond_accuracy
    >>> out = beyond_accuracy({"u1": ["a", "b"], "u2": ["b", "c"]}, ["coverage@2", "arp@2"],
    ...                       train={"u1": ["c"], "u2": ["a", "a"]})
    >>> print(beyond_grid(out, 2).text())
    beyond accuracy (2 users)
    run  coverage@2 ↑  arp@2 ↓
    ---  ------------  -------
    run          1.50     0.75
    """
    table = result.table
    metrics = list(dict.fromkeys(table["metric"]))
    arrows = {r["metric"]: {True: " ↑", False: " ↓"}.get(r["higher_is_better"], "")
              for r in table.to_dict("records")}
    rows = []
    for run, part in table.groupby("run", sort=False):
        values = dict(zip(part["metric"], part["value"], strict=True))
        rows.append([str(run)] + [_number(values.get(m, float("nan")), digits) for m in metrics])
    users = int(result.per_user.groupby("run").size().max()) if len(result.per_user) else 0
    notes = [f"warning: {w}" for w in result.warnings]
    return Grid(f"beyond accuracy ({users} users)", ["run"] + [m + arrows[m] for m in metrics], rows,
                [False] + [True] * len(metrics), note="\n".join(notes))


def beyond_json(result: Any) -> str:
    """Every number, JSON (NaN as null)."""
    return json.dumps(result.to_dict(), indent=2)


def beyond_csv(result: Any, per_user: bool = False) -> str:
    """The run x metric rows (or, with ``per_user``, one row per run x user) as CSV, every digit."""
    out = io.StringIO()
    (result.per_user if per_user else result.table).to_csv(out, index=False)
    return out.getvalue()
