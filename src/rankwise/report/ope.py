"""An off-policy evaluation as a terminal or plain-text table, Markdown, CSV or JSON."""

from __future__ import annotations

import json
from typing import Any

from rankwise.report.grid import Grid
from rankwise.report.grid import number_cell as _number

HEADERS = ["estimator", "value", "interval", "se", "rounds", "effective n", "max weight", "clipped"]


def ope_grid(result: Any, digits: int = 4) -> Grid:
    """One row per estimator; the log's own mean reward and the warnings under it.

    >>> import pandas as pd
    >>> from rankwise.counterfactual.bandit_log import OPEResult
    >>> table = pd.DataFrame([{"estimator": "ips", "value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "se": 0.05, "n": 10,
    ...                        "effective_n": 8.0, "max_weight": 2.0, "clipped": 0}])
    >>> print(ope_grid(OPEResult(table, 0.45, 10, [], {"policy": "uniform", "alpha": 0.05}), 2).text())
    off-policy value of uniform (95% bootstrap intervals)
    estimator  value      interval    se  rounds  effective n  max weight  clipped
    ---------  -----  ------------  ----  ------  -----------  ----------  -------
    ips         0.50  [0.40, 0.60]  0.05      10          8.0        2.00        0
    the logging policy's own mean reward: 0.45 over 10 rounds
    """
    rows = [[str(r["estimator"]), _number(r["value"], digits),
             f"[{_number(r['ci_low'], digits)}, {_number(r['ci_high'], digits)}]", _number(r["se"], digits),
             str(int(r["n"])), f"{r['effective_n']:.1f}", f"{r['max_weight']:.2f}", str(int(r["clipped"]))]
            for r in result.table.to_dict("records")]
    level = round(100 * (1 - result.settings["alpha"]))
    notes = [f"the logging policy's own mean reward: {_number(result.on_policy, digits)} over {result.rounds} rounds"]
    notes += [f"warning: {w}" for w in result.warnings]
    return Grid(f"off-policy value of {result.settings['policy']} ({level}% bootstrap intervals)", list(HEADERS), rows,
                [False] + [True] * (len(HEADERS) - 1), note="\n".join(notes))


def ope_markdown(result: Any, digits: int = 4) -> str:
    """A Markdown table with the title above and the notes under it."""
    return ope_grid(result, digits).markdown()


def ope_json(result: Any) -> str:
    """Every number, JSON."""
    return json.dumps(result.to_dict(), indent=2, default=str)


def ope_csv(result: Any) -> str:
    """The estimator rows as CSV (every digit)."""
    from rankwise.report.annotate import csv_text

    return csv_text(result.table, result.warnings)
