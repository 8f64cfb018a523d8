"""An A/B analysis as a terminal or plain-text table, Markdown, CSV, JSON or one HTML page
with the cumulative lift over time."""

from __future__ import annotations

import html
import io
import json
import math
from typing import Any

from rankwise.report.grid import Grid, markdown_cell
from rankwise.report.grid import number_cell as _number
from rankwise.report.grid import p_cell as _p

HEADERS = ["metric", "variant", "n control", "n", "control", "value", "difference", "interval", "relative",
           "relative interval", "p", "p corrected"]
SPENDING_HEADERS = ["metric", "variant", "n control", "n", "control", "value", "difference", "repeated interval",
                    "relative", "looks", "|z|", "boundary", "crossed"]
"""With alpha spending: the interval valid at any look, the looks, the last z and boundary, and
the first look that crossed it."""


BAYESIAN_HEADERS = ["metric", "variant", "n control", "n", "control", "value", "difference", "credible interval",
                    "relative", "relative credible interval", "chance to win", "risk control", "risk treatment"]
"""With the Bayesian engine: posterior means, credible intervals, the chance to win and the
risk (expected loss) of choosing each arm."""


def _spending(result: Any) -> bool:
    return "rci_lower" in result.table.columns


LOOKS_HEADERS = ["metric", "variant", "looks", "first look", "last look", "|z|", "boundary", "first crossing"]
"""The looks summary every sequential design shares: how many looks, their span, the last
look's |z| and boundary, and the first look whose |z| reached its boundary."""


def looks_grid(result: Any, digits: int = 2) -> Grid | None:
    """The looks of a sequential analysis, one row per comparison, whatever the design (None
    without looks). An always-valid design's boundary is the |z| at which its p-value reaches
    alpha at that look; a spending design's is the look's critical value."""
    looks = result.looks
    if looks is None or not len(looks) or "boundary" not in looks.columns:
        return None
    by = ["dimension", "slice", "metric", "variant"] if "slice" in looks.columns else ["metric", "variant"]
    rows = []
    for key, part in looks.groupby(by, sort=False):
        part = part.sort_values("look")
        last = part.iloc[-1]
        crossed = part[part["crossed"].eq(True)]
        where = [] if len(by) == 2 else [key[1] if key[1] == "all" else f"{key[0]}={key[1]}"]
        rows.append([*where, str(last["metric"]), str(last["variant"]), str(len(part)),
                     str(part["look"].iloc[0].date()), str(last["look"].date()),
                     _number(abs(last["statistic"]), digits), _number(last["boundary"], digits),
                     str(crossed["look"].iloc[0].date()) if len(crossed) else "no"])
    headers = (["slice"] if len(by) == 4 else []) + LOOKS_HEADERS
    numeric = [False] * (len(headers) - 6) + [True, False, False, True, True, False]
    design = result.settings.get("sequential")
    return Grid(f"sequential looks ({design}): the boundary is the |z| a look must reach", headers, rows, numeric)


def _bayesian(result: Any) -> bool:
    return "chance_to_win" in result.table.columns


def _cells(row: Any, digits: int, spending: bool = False, bayesian: bool = False) -> list[str]:
    def pct(v: float) -> str:
        return "nan" if math.isnan(v) else "inf" if math.isinf(v) else f"{100 * v:+.2f}%"

    def value(v: float) -> str:
        return "" if not math.isfinite(v) else _number(v, digits)

    width = len(SPENDING_HEADERS if spending else BAYESIAN_HEADERS if bayesian else HEADERS)
    if bayesian and math.isfinite(row["difference"]):
        percent = "" if row.get("risk_scale") == "absolute" else "%"

        def risk(v: float) -> str:
            return f"{100 * v:.2f}%" if percent else _number(v, digits)

        return [str(row["metric"]), str(row["variant"]), str(int(row["n_control"])), str(int(row["n"])),
                _number(row["control_value"], digits), _number(row["value"], digits),
                _number(row["difference"], digits),
                f"[{_number(row['ci_lower'], digits)}, {_number(row['ci_upper'], digits)}]",
                pct(row["relative"]), f"[{pct(row['relative_lower'])}, {pct(row['relative_upper'])}]",
                f"{100 * row['chance_to_win']:.1f}%" + (" *" if row["significant"] else ""),
                risk(row["risk_control"]), risk(row["risk_treatment"])]
    if not math.isfinite(row["p_value"]) and not math.isfinite(row["difference"]):   # not compared: blank
        return [str(row["metric"]), str(row["variant"]) + " \u2020", str(int(row["n_control"])), str(int(row["n"])),
                value(row["control_value"]), value(row["value"]), *[""] * (width - 6)]
    if spending:
        return [str(row["metric"]), str(row["variant"]), str(int(row["n_control"])), str(int(row["n"])),
                _number(row["control_value"], digits), _number(row["value"], digits),
                _number(row["difference"], digits),
                f"[{_number(row['rci_lower'], digits)}, {_number(row['rci_upper'], digits)}]",
                pct(row["relative"]), str(int(row["looks"])), _number(abs(row["statistic"]), 2),
                _number(row["boundary"], 2), (row["first_crossing"] + " *") if row["significant"] else "no"]
    return [str(row["metric"]), str(row["variant"]), str(int(row["n_control"])), str(int(row["n"])),
            _number(row["control_value"], digits), _number(row["value"], digits),
            _number(row["difference"], digits),
            f"[{_number(row['ci_lower'], digits)}, {_number(row['ci_upper'], digits)}]",
            pct(row["relative"]), f"[{pct(row['relative_lower'])}, {pct(row['relative_upper'])}]",
            _p(row["p_value"]), _p(row["p_corrected"]) + (" *" if row["significant"] else "")]


def _moment(seconds: float) -> str:
    """Seconds since the epoch as a UTC time (2026-03-12 09:30:00).

    >>> _moment(1772366400.0)
    '2026-03-01 12:00:00'
    """
    import datetime

    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def ab_title(result: Any) -> str:
    """What was done, in one line: the test and its settings, and every adjustment applied
    (CUPED and its covariates, the sequential design, exposures and their window).

    >>> from types import SimpleNamespace
    >>> settings = {"test": "welch", "relative": "delta", "alpha": 0.05, "correction": "holm", "control": "A",
    ...             "covariates": {"ctr": "pre_clicks/pre_views"}, "exposures": True, "window": "7d"}
    >>> ab_title(SimpleNamespace(settings=settings)).split("; ")
    ['A/B analysis against A (test=welch, relative=delta, alpha=0.05, correction=holm', \
'CUPED: ctr on pre_clicks/pre_views', 'exposures, window 7d)']
    """
    s = result.settings
    parts = [f"test={s['test']}", f"relative={s['relative']}", f"alpha={s['alpha']}", f"correction={s['correction']}"]
    if s.get("sequential"):
        parts.append(f"sequential={s['sequential']}")
    if s.get("p_value") == "relative":
        parts.append("p of the relative lift")
    if s.get("prior"):
        prior = s["prior"]
        parts[0] = (f"test={s['test']}, prior N({prior['prior_mean']:g}, {prior['prior_variance']:g}) on the "
                    f"{prior['prior_type']} effect" if prior["proper"] else f"test={s['test']}, flat prior")
        parts = [p for p in parts if not p.startswith("correction=")]
    if s.get("slices"):
        from rankwise.experiments.slices import CORRECTION_SCOPES

        scope = CORRECTION_SCOPES.get(s["correction_scope"]).phrase
        parts = [f"{p} {scope}" if p.startswith("correction=") else p for p in parts]
    applied = []
    if s.get("covariates"):
        applied.append("CUPED: " + ", ".join(f"{m} on {c}" for m, c in s["covariates"].items()))
    if s.get("pre_period") is not None:
        applied.append(f"CUPED: each metric on its own {s['pre_period']} before exposure")
    if s.get("cupac"):
        applied.append(f"CUPAC: {s['cupac_model']} model on {', '.join(s['cupac'])}, cross-fitted")
    if s.get("caps"):
        # a percentile cap shows the value it came to; a number is its own value
        applied.append("capped: " + ", ".join(f"{m} at {s['cap_rules'][m]}"
                                               + (f" ({_number(v, 4)})" if s["cap_rules"][m].lower().startswith("p")
                                                  else "")
                                               for m, v in s["caps"].items())
                       + (" of non-zero units" if s.get("ignore_zeros") else "")
                       + (f" ({s['cap_convention']} convention)" if s.get("cap_convention", "value") != "value"
                          else ""))
    if s.get("exposures"):
        applied.append("exposures" + (f", delay {s['delay']:g} s" if s.get("delay") else "")
                       + (f", window {s['window']}" if s.get("window") is not None else "")
                       + (f" ({s['window_end']} end)" if s.get("window_end") else "")
                       + (f", lookback {s['lookback']}" if s.get("lookback") is not None else "")
                       + (f", until {_moment(s['not_after'])}" if s.get("not_after") is not None else ""))
    return f"A/B analysis against {s['control']} ({', '.join(parts)}{''.join('; ' + a for a in applied)})"


def ab_preface(result: Any) -> list[str]:
    """Lines above the table: the sample-ratio check first (a mismatch makes every row below
    untrustworthy)."""
    srm = result.srm
    lines = [f"sample ratio: units {list(srm.observed)}, chi-square p = {_p(srm.p_value)}"
             + (" (MISMATCH)" if srm.mismatch else "")]
    if srm.mismatch:
        lines.append(f"warning: {srm.message()}")
    return lines


def ab_notes(result: Any) -> list[str]:
    """Lines under the table: the marks it uses (only those that appear) and the warnings
    (the sample-ratio one is above the table)."""
    table = result.table
    lines = []
    spending = _spending(result)
    bayesian = _bayesian(result)
    if len(table) and bool(table["significant"].any()):
        alpha = result.settings["alpha"]
        lines.append("* crossed the boundary at that look" if spending else
                     f"* chance to win at least {100 * (1 - alpha):g}% or at most {100 * alpha:g}%" if bayesian else
                     "* significant after correction")
    if bayesian:
        lines.append("risk: the expected loss (relative to the control's value) of choosing that arm")
    if spending:
        lines.append("repeated interval: difference \u00b1 boundary \u00d7 se, valid whenever one stops "
                     "(Jennison and Turnbull)")
    if len(table) and bool((~table["p_value"].apply(math.isfinite) & ~table["difference"].apply(math.isfinite)).any()):
        lines.append("\u2020 not compared (blank): the warning below says why")
    if "guardrail" in table.columns:
        direction = set(result.settings.get("lower_is_better") or [])
        for row in table[table["guardrail"] != ""].to_dict("records"):
            where = f" in {row['dimension']}={row['slice']}" if row.get("slice", "all") != "all" else ""
            lines.append(f"guardrail {row['metric']}, {row['variant']}{where} (no more than {100 * row['margin']:g}% "
                         f"{'above' if row['metric'] in direction else 'below'} the control): {row['guardrail']}, "
                         f"non-inferiority p = {_p(row['guardrail_p'])}")
    mismatch = result.srm.message() if result.srm.mismatch else None
    lines += [f"warning: {w}" for w in result.warnings if w != mismatch]
    return lines


def plan_lines(result: Any, relative_effect: float, power: float) -> list[str]:
    """One line per comparison: the units it needs to detect ``relative_effect``."""
    plan = result.units_needed(relative_effect, power)
    lines = []
    for row, have in zip(plan.to_dict("records"), result.table.to_dict("records"), strict=True):
        where = f" in {row['dimension']}={row['slice']}" if row.get("slice", "all") != "all" else ""
        if not (math.isfinite(row["units_control"]) and math.isfinite(row["units"])):
            lines.append(f"to detect {100 * relative_effect:g}%: {row['metric']}, {row['variant']}{where}: no estimate")
            continue
        lines.append(f"to detect {100 * relative_effect:g}% with {100 * power:g}% power: {row['metric']}, "
                     f"{row['variant']}{where} needs {int(row['units_control']):,} + {int(row['units']):,} units "
                     f"(has {int(have['n_control']):,} + {int(have['n']):,})")
    return lines


def ab_grid(result: Any, digits: int = 4) -> Grid:
    """The result as a Grid: the sample-ratio check above the table, marks and warnings under."""
    spending, bayesian = _spending(result), _bayesian(result)
    headers = SPENDING_HEADERS if spending else BAYESIAN_HEADERS if bayesian else HEADERS
    rows = [_cells(r, digits, spending, bayesian) for r in result.table.to_dict("records")]
    numeric = [False, False] + [True] * (len(headers) - 2)
    if "slice" in result.table.columns:   # sliced: which units each row is about
        where = [r["slice"] if r["slice"] == "all" else f"{r['dimension']}={r['slice']}"
                 for r in result.table.to_dict("records")]
        headers, numeric = ["slice", *headers], [False, *numeric]
        rows = [[w, *row] for w, row in zip(where, rows, strict=True)]
    return Grid(ab_title(result), list(headers), rows, numeric, note="\n".join(ab_notes(result)),
                preface="\n".join(ab_preface(result)))


def ab_markdown(result: Any, digits: int = 4) -> str:
    """A Markdown table with the title above and the SRM line under it."""
    grid = ab_grid(result, digits)
    lines = [f"**{grid.title}**", "", "| " + " | ".join(grid.columns) + " |",
             "|" + "|".join("---:" if n else "---" for n in grid.numeric) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in grid.rows]
    lines += [""] + [f"{line.replace('*', chr(92) + '*', 1) if line.startswith('*') else line}  "
                     for line in ab_notes(result)]
    looks = looks_grid(result)
    if looks is not None:
        lines += ["", looks.markdown()]
    return "\n".join(lines[:2] + [f"{line}  " for line in ab_preface(result)] + [""] + lines[2:])


def ab_json(result: Any) -> str:
    """Every number of the analysis, JSON."""
    data = result.to_dict()
    if result.looks is not None:
        looks = result.looks.copy()
        looks["look"] = looks["look"].astype(str)
        data["looks"] = json.loads(looks.to_json(orient="records"))
    return json.dumps(data, indent=2, default=str)


def ab_csv(result: Any) -> str:
    """The rows of the analysis as CSV (every digit)."""
    from rankwise.report.annotate import csv_text

    return csv_text(result.table, result.warnings)


def ab_statistics(result: Any) -> str:
    """The per-variant sufficient statistics the analysis used, as CSV (``variant``, ``n``,
    ``sum(x)``, ``sum(x*y)``): what ``rankwise ab --statistics`` reads back, and what shards
    of a log add up to."""
    from rankwise.experiments.statistics_table import statistics_table
    from rankwise.report.annotate import csv_text

    return csv_text(statistics_table(result.statistics, result.settings.get("variant", "variant")), result.warnings)


def lift_figure(result: Any) -> Any:
    """Cumulative relative lift with its interval after each daily look, one panel per
    metric (per metric and slice, when sliced), one line per treatment arm (matplotlib Figure);
    None without looks."""
    looks = result.looks
    if looks is None or not len(looks):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by = ["dimension", "slice", "metric"] if "slice" in looks.columns else ["metric"]
    panels = list(looks.groupby(by, sort=False))
    # drawn 1,320 px wide at the page's 110 dpi: the width of the page, shown at 100% (no upscaling)
    fig, axes = plt.subplots(len(panels), 1, figsize=(12.0, 3.2 * len(panels)), squeeze=False,
                             layout="constrained")
    for ax, (key, part) in zip(axes[:, 0], panels, strict=True):
        *where, metric = key if isinstance(key, tuple) else (key,)
        if where and where[1] != "all":
            metric = f"{metric} in {where[0]}={where[1]}"
        for arm, group in part.groupby("variant", sort=False):
            ax.plot(group["look"], 100 * group["relative"], marker="o", label=f"{arm} vs {result.settings['control']}")
            ax.fill_between(group["look"], 100 * group["relative_lower"], 100 * group["relative_upper"], alpha=0.2)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("lift, %")
        ax.set_title(f"{metric}: cumulative lift and its interval")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        for label in ax.get_xticklabels():
            label.set_rotation(30)
    return fig


def ab_html(result: Any, digits: int = 4) -> str:
    """One self-contained page: the table, the SRM check, warnings and the lift plot."""
    import base64

    grid = ab_grid(result, digits)
    head, body = _html_parts(grid)

    def paragraphs(lines: list[str]) -> str:
        return "".join(f"<p class='{'warn' if 'warning' in line or 'MISMATCH' in line else 'note'}'>"
                       f"{html.escape(line)}</p>" for line in lines)

    preface, notes = paragraphs(ab_preface(result)), paragraphs(ab_notes(result))
    figure = lift_figure(result)
    image = ""
    if figure is not None:
        buffer = io.BytesIO()
        from rankwise.report.plots import literal_text

        literal_text(figure).savefig(buffer, format="png", dpi=110)
        image = (f"<h2>Cumulative lift</h2><img class='lift' alt='cumulative lift' src='data:image/png;base64,"
                 f"{base64.b64encode(buffer.getvalue()).decode()}'>")
    style = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse}"
             "td,th{padding:.3em .6em;border-bottom:1px solid #ddd}td.num{text-align:right;font-variant-numeric:"
             "tabular-nums;white-space:nowrap}th{text-align:left}.warn{color:#a40000;font-weight:bold}"
             "img{max-width:100%}img.lift{display:block;width:100%;height:auto}")
    heading, settings = _title_parts(grid.title)
    rows = "".join(f"<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>" for name, value in settings)
    table = f"<table class='settings'><tbody>{rows}</tbody></table>" if rows else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(heading)}</title>"
            f"<style>{style}</style></head><body><h1>{html.escape(heading)}</h1>{table}{preface}"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"{notes}{_html_table(looks_grid(result))}{image}</body></html>")


def _html_parts(grid: Grid) -> tuple[str, str]:
    """A Grid's header cells and body rows as HTML (numbers in right-aligned cells)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in grid.columns)
    body = "".join("<tr>" + "".join(f"<td class='{'num' if n else 'text'}'>{html.escape(c)}</td>"
                                    for c, n in zip(row, grid.numeric, strict=True)) + "</tr>" for row in grid.rows)
    return head, body


def _html_table(grid: Grid | None) -> str:
    """A Grid as an HTML table under an h2 of its title ('' for None)."""
    if grid is None:
        return ""
    head, body = _html_parts(grid)
    return f"<h2>{html.escape(grid.title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _title_parts(title: str) -> tuple[str, list[tuple[str, str]]]:
    """A short heading and the settings of ``ab_title``'s one line, as (name, value) rows.

    >>> _title_parts("A/B analysis against A (test=welch, alpha=0.05; CUPED: ctr on pre)")
    ('A/B analysis against A', [('test', 'welch'), ('alpha', '0.05'), ('CUPED', 'ctr on pre')])
    """
    heading, paren, rest = title.partition(" (")
    if not paren:
        return title, []
    rows: list[tuple[str, str]] = []
    for group in rest.rstrip(")").split("; "):
        if "=" not in group and ":" in group:
            name, _, value = group.partition(":")
            rows.append((name.strip(), value.strip()))
            continue
        for item in group.split(", "):
            name, equals, value = item.partition("=")
            rows.append((name.strip(), value.strip()) if equals else ("", item.strip()))
    return heading, rows
