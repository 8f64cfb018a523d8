"""Beyond-accuracy results as a terminal or plain-text table (metrics as columns, one row per
run, an arrow saying which way is better), Markdown, CSV or JSON."""

from __future__ import annotations

import json
from typing import Any

from rankwise.report.grid import Grid
from rankwise.report.grid import number_cell as _number


def beyond_grid(result: Any, digits: int = 4) -> Grid:
    """One row per run (and per run x user group), one column per metric (``↑`` higher is
    better, ``↓`` lower is better); with several runs, ``*`` marks a value that differs from
    the baseline run's (the paired test, corrected over the table).

    >>> from rankwise.recsys import beyond_accuracy
    >>> out = beyond_accuracy({"u1": ["a", "b"], "u2": ["b", "c"]}, ["coverage@2", "arp@2"],
    ...                       train={"u1": ["c"], "u2": ["a", "a"]})
    >>> print(beyond_grid(out, 2).text())   # doctest: +ELLIPSIS
    beyond accuracy (2 users)
    run  coverage@2 ↑  arp@2 ↓
    ---  ------------  -------
    run          1.00     0.75
    warning: run: 1 recommended item(s) are not in the catalogue (the training items), e.g. 'b': ...
    """
    table = result.table
    metrics = list(dict.fromkeys(table["metric"]))
    arrows = {r["metric"]: {True: " ↑", False: " ↓"}.get(r["higher_is_better"], "")
              for r in table.to_dict("records")}
    grouped = "user_group" in table.columns
    marked = "significant" in table.columns
    rows = []
    parts = [("all", table[table["user_group"] == "all"])] if grouped else [("all", table)]
    if grouped:
        parts += [(str(g), part) for g, part in table[table["user_group"] != "all"].groupby("user_group", sort=True)]
    for group, selection in parts:
        for run, part in selection.groupby("run", sort=False):
            cells = {}
            for record in part.to_dict("records"):
                star = "*" if marked and bool(record.get("significant")) else ""
                cells[record["metric"]] = _number(record["value"], digits) + star
            label = str(run) if group == "all" else f"{run} · {group}"
            rows.append([label] + [cells.get(m, "") for m in metrics])
    users = int(result.per_user.groupby("run").size().max()) if len(result.per_user) else 0
    notes = []
    if marked and bool(table["significant"].any()):
        settings = result.settings
        baseline = table["baseline"].dropna().iloc[0]
        notes.append(f"* differs from {baseline}: paired {settings.get('test')} test on the users both runs have, "
                     f"{settings.get('correction')}-corrected over the table, p < {settings.get('alpha')}")
    notes += [f"warning: {w}" for w in result.warnings]
    title = f"beyond accuracy ({users} user{'' if users == 1 else 's'})"
    return Grid(title, ["run"] + [m + arrows[m] for m in metrics], rows,
                [False] + [True] * len(metrics), note="\n".join(notes))


def beyond_json(result: Any) -> str:
    """Every number, JSON (NaN as null)."""
    return json.dumps(result.to_dict(), indent=2)


def beyond_csv(result: Any, per_user: bool = False) -> str:
    """The run x metric rows (or, with ``per_user``, one row per run x user) as CSV, every digit."""
    from rankwise.report.annotate import csv_text

    return csv_text(result.per_user if per_user else result.table, result.warnings)
