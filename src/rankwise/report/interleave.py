"""Interleaving results as tables: preferences over impressions and the simulation's error
rates, checks and impressions ratios; and the error-against-impressions figure."""

from __future__ import annotations

import math
from typing import Any

from rankwise.report.grid import Grid
from rankwise.report.grid import number_cell as _n
from rankwise.report.grid import p_cell as _p


def preference_grid(table: Any, digits: int = 4) -> Grid:
    """Wins, ties, losses, delta with its interval, sign-test and Holm p-values per pair."""
    rows = [[str(r["a"]), str(r["b"]), str(int(r["n"])), str(int(r["wins"])), str(int(r["ties"])),
             str(int(r["losses"])), _n(r["delta"], digits), f"[{_n(r['ci_low'], digits)}, {_n(r['ci_high'], digits)}]",
             _p(r["p_value"]), _p(r["p_holm"])] for r in table.to_dict("records")]
    return Grid("interleaving preferences (delta > 0: the first ranker is preferred)",
                ["a", "b", "impressions", "wins", "ties", "losses", "delta", "interval", "p", "p holm"], rows,
                [False, False] + [True] * 8)


def simulation_grids(result: Any, digits: int = 3) -> list[Grid]:
    """Three tables: wrong-winner rate by impressions and method, the A/A and coverage checks,
    and the impressions each method needs for the target error with the A/B ratio."""
    error = result.error
    methods = list(dict.fromkeys(error["method"]))
    levels = sorted(set(error["impressions"]))
    rows = []
    for n in levels:
        part = error[error["impressions"] == n].set_index("method")
        rows.append([f"{n:,}"] + [_n(part.loc[m, "wrong_winner"], digits) for m in methods])
    s = result.settings
    title = (f"probability of the wrong winner ({s.get('comparisons')} comparisons, {s.get('repetitions')} "
             f"repetitions, users: {s.get('click_model')})")
    grids = [Grid(title, ["impressions", *methods], rows, [True] * (len(methods) + 1))]
    checks = result.checks.merge(result.agreement, on="method")

    def checked(value: float) -> str:
        return "†" if math.isnan(value) else _n(value, digits)

    unchecked = checks[["false_positive_rate", "coverage"]].isna().to_numpy().any()
    grids.append(Grid(f"checks at {int(checks['impressions'].iloc[0]):,} impressions (alpha {s.get('alpha')})",
                      ["method", "A/A false positives", "coverage", "right in the limit"],
                      [[r["method"], checked(r["false_positive_rate"]), checked(r["coverage"]),
                        _n(r["right_in_the_limit"], digits)] for r in checks.to_dict("records")],
                      [False, True, True, True],
                      note="† not simulated for this method: the A/A check needs a significance test of its own "
                           "(A/B's Welch test, team-draft's sign test), coverage an interval" if unchecked else ""))
    grids.append(Grid(f"impressions for a wrong-winner rate of {s.get('target_error')}",
                      ["method", "impressions", "A/B / method"],
                      [[r["method"], "never" if math.isinf(r["impressions"]) else f"{r['impressions']:,.0f}",
                        _n(r["ab_over_method"], 2)] for r in result.ratios.to_dict("records")],
                      [False, True, True]))
    return grids


def simulation_markdown(result: Any, digits: int = 3) -> str:
    """The three tables in Markdown."""
    return "\n\n".join(grid.markdown() for grid in simulation_grids(result, digits)) + "\n"


def error_figure(result: Any) -> Any:
    """Wrong-winner rate against impressions (log scale), one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    for method, part in result.error.groupby("method", sort=False):
        axis.plot(part["impressions"], part["wrong_winner"], marker="o", label=method)
    axis.set_xscale("log")
    axis.set_xlabel("impressions")
    axis.set_ylabel("probability of the wrong winner")
    s = result.settings
    runs = f"{s['run_a']} vs {s['run_b']}\non {s['qrels']}\n" if "run_a" in s else ""
    axis.set_title(f"{runs}users {s.get('click_model')}, {s.get('comparisons')} comparisons", fontsize=8)
    axis.grid(True, alpha=0.3)
    axis.legend()
    from rankwise.report.plots import literal_text

    literal_text(figure).tight_layout()
    return figure
