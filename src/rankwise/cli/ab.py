"""``rankwise ab``: analyse an online experiment from event logs or per-unit tables."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.errors import RankwiseError

if TYPE_CHECKING:
    from rankwise.experiments.definitions import Definition
    from rankwise.experiments.events import Mixed
    from rankwise.experiments.warehouse import AggregationEngine
    from rankwise.stats.twosample import Alternative, Relative


class ABFormat(str, Enum):
    table = "table"
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    html = "html"
    statistics = "statistics"


def _weights(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(w) for w in text.split(",")]
    except ValueError:
        _fail(f"--weights: expected numbers separated by commas (0.5,0.5), got {text!r}")
        return None


def _covariates(specs: list[str]) -> dict[str, str]:
    return _pairs(specs, "--covariate", "METRIC=COLUMN (or METRIC=NUM/DEN for a ratio)")


def _margin(metric: str, text: str) -> float:
    """A relative change: a fraction (0.02) or a percentage (2%)."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        where = metric if metric.startswith("--") else f"--guardrail {metric}="
        _fail(f"{where}{text}: expected a number (0.02) or a percentage (2%)")
        return 0.0


def _pairs(specs: list[str], option: str, expected: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict (a malformed one stops with what was expected)."""
    out = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        if not sep or not name.strip() or not value.strip():
            _fail(f"{option}: expected {expected}, got {spec!r}")
        out[name.strip()] = value.strip()
    return out


def _event_roles(data: object, unit: str | None, variant: str | None) -> tuple[str, str]:
    """The unit and variant columns: as given, else the first common spelling the files' header
    has (``user_id``, ``arm`` ...), else ``unit`` and ``variant``.

    >>> _event_roles({"visitor_id": [1], "arm": ["a"]}, None, None)
    ('visitor_id', 'arm')
    """
    from rankwise.data.columns import UNIT_COLUMNS, VARIANT_COLUMNS
    from rankwise.data.tables import column_names_of

    if unit is not None and variant is not None:
        return unit, variant
    try:
        names = column_names_of(data)
    except RankwiseError:
        names = []   # the reader names what is wrong with the file when it reads it
    lowered = {str(n).lower(): str(n) for n in names}
    found = {role: next((lowered[s] for s in spellings if s in lowered), role)
             for role, spellings in (("unit", UNIT_COLUMNS), ("variant", VARIANT_COLUMNS))}
    return unit or found["unit"], variant or found["variant"]


def _inputs(logs: list[str] | None, metrics: list[str], metrics_file: Path | None, database: Path | None,
            table: str | None, query: str | None, ibis_url: str | None = None) -> tuple[object, list[str | Definition]]:
    """The data (files, a DuckDB source or an Ibis table) and every metric (-m and --metrics-file)."""
    from rankwise.errors import OptionError

    chosen: list[str | Definition] = list(metrics)
    if metrics_file is not None:
        from rankwise.experiments.definitions import read_definitions

        chosen += read_definitions(str(metrics_file))
    if not chosen:
        raise OptionError("give at least one metric: -m NAME=COL, -m NAME=count(click)/count(impression) ..., "
                          "or --metrics-file FILE")
    if ibis_url is not None:
        if logs or database is not None:
            raise OptionError("give either event files, --database or --ibis, not two of them")
        from rankwise.experiments.ibis_source import connect_table

        return connect_table(ibis_url, table, query), chosen
    if database is not None:
        if logs:
            raise OptionError("give either event files or --database, not both")
        from rankwise.experiments.warehouse import DuckDBSource

        return DuckDBSource(str(database), table=table, query=query), chosen
    if table is not None or query is not None:
        raise OptionError("--table and --query read from a DuckDB database: give --database FILE")
    if not logs:
        raise OptionError("give the event logs (files or directories), or --database FILE with --table or --query")
    return logs, chosen


@app.command("ab")
@with_signature
def ab(
    logs: Annotated[list[str] | None, typer.Argument(
        help="Event logs or per-unit tables: Parquet, CSV, TSV, JSONL (optionally .gz), or directories of them; "
             "with --statistics, per-variant sufficient statistics. Not with --database.")] = None,
    metric: Annotated[list[str], typer.Option(
        "-m", "--metric", help="NAME=COL (mean per unit), NAME=COL>0 (share of units), NAME=NUM/DEN (ratio of sums, "
                               "delta method), NAME=p90(COL) (a quantile of unit values; p90(COL, ignore_zeros): of "
                               "those not 0), "
                               "or over events: NAME=count(click)/count(impression), "
                               "NAME=sum(value where event = purchase), NAME=any(purchase). Repeat for more.")] = [],  # noqa: B006
    metrics_file: Annotated[Path | None, typer.Option(
        "--metrics-file", help="A YAML file of metric definitions (name: definition), reusable across "
                               "experiments; adds to -m.")] = None,
    event: Annotated[str, typer.Option(
        "--event", help="Column with the event type, read by count(...), any(...) and filters.")] = "event",
    exposures: Annotated[list[str] | None, typer.Option(
        "--exposures", help="Exposure table(s) (unit, variant, timestamp): each unit's variant and start come from "
                            "its first exposure; events before it are left out. Repeat for more files.")] = None,
    window: Annotated[str | None, typer.Option(
        "--window", help="With --exposures: count each unit's events for this long after its first exposure "
                         "(7d, 36h, 30m, or seconds).")] = None,
    delay: Annotated[str | None, typer.Option(
        "--delay", help="With --exposures: events count from this long after the first exposure (1h, 2d; "
                        "GrowthBook's conversion delay); the window starts then.")] = None,
    window_end: Annotated[str, typer.Option(
        "--window-end", help="exclusive | inclusive: whether an event exactly at the window's end counts.")
    ] = "exclusive",
    lookback: Annotated[str | None, typer.Option(
        "--lookback", help="With --exposures: count only the events of the analysis' last span (7d; GrowthBook's "
                           "lookback window).")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", help="With --exposures: the analysis ends at this time (ISO 8601, or seconds); later events are "
                        "left out. Default: the latest event.")] = None,
    engine: Annotated[str, typer.Option(
        "--engine", help="Where per-unit sums are computed: memory | duckdb (out of core; pip install "
                         "'rankwise\\[duckdb]').")] = "memory",
    database: Annotated[Path | None, typer.Option(
        "--database", help="A DuckDB database file to read the events from (with --table or --query; implies "
                           "--engine duckdb).")] = None,
    ibis_url: Annotated[str | None, typer.Option(
        "--ibis", help="An Ibis connection URL to read the events from, with --table or --query (postgres://..., "
                       "bigquery://..., duckdb://FILE; pip install 'rankwise\\[ibis]' and the backend's extra): the "
                       "per-unit sums run in that database.")] = None,
    table: Annotated[str | None, typer.Option(
        "--table", help="With --database or --ibis: the table or view of events.")] = None,
    query: Annotated[str | None, typer.Option(
        "--query", help="With --database or --ibis: a SQL query giving the events.")] = None,
    unit: Annotated[str | None, typer.Option("--unit", help="Column with the unit id (default: the first of "
                                              "unit, unit_id, user_id, user, visitor_id, anonymous_id, customer_id, "
                                              "device_id, session_id).")] = None,
    variant: Annotated[str | None, typer.Option("--variant", help="Column with the variant name (default: the "
                                                 "first of variant, variation, variation_id, variant_id, arm, "
                                                 "bucket, treatment, experiment_group).")] = None,
    control: Annotated[str | None, typer.Option(
        "--control", help="The control variant (default: the first of --variants, else the first sorted).")] = None,
    variants: Annotated[str | None, typer.Option(
        "--variants", help="The design's variants, comma-separated; any other value is an error.")] = None,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Design split for the sample-ratio check, e.g. 0.95,0.05 (default equal).")] = None,
    cap: Annotated[list[str], typer.Option(
        "--cap", help="Cap each unit's value of a metric (a ratio's numerator): METRIC=NUMBER or METRIC=p99 (a "
                      "percentile of all units' values), as GrowthBook caps. Repeat for more.")] = [],  # noqa: B006
    cap_ignore_zeros: Annotated[bool, typer.Option(
        "--cap-ignore-zeros", help="Leave units at 0 out of the percentile a cap is taken at.")] = False,
    cap_convention: Annotated[str, typer.Option(
        "--cap-convention", help="What a cap reaches besides the value: value | growthbook (also the CUPED "
                                 "covariate, at the value's cap, and a ratio's denominator, by the same rule).")
    ] = "value",
    slice_by: Annotated[list[str], typer.Option(
        "--slice", help="A column of the units (country, device) to break the results down by; each of its values "
                        "is analysed too. Repeat for more.")] = [],  # noqa: B006
    correction_scope: Annotated[str, typer.Option(
        "--correction-scope", help="With --slice: which p-values are corrected together: slice | metric | all.")
    ] = "slice",
    guardrail: Annotated[list[str], typer.Option(
        "--guardrail", help="A metric that must not get worse: METRIC=MARGIN, the relative worsening allowed "
                            "(0.02 for 2%); a non-inferiority test per arm. Repeat for more.")] = [],  # noqa: B006
    lower_is_better: Annotated[list[str], typer.Option(
        "--lower-is-better", help="A metric where lower is better (latency, errors): guardrails and the Bayesian "
                                  "chance to win read it the other way. Repeat for more.")] = [],  # noqa: B006
    power: Annotated[float, typer.Option(
        "--power", help="Power of the minimum detectable effect each row reports (mde, mde_relative).")] = 0.8,
    detect: Annotated[str | None, typer.Option(
        "--detect", help="Plan: the units per arm each comparison needs to detect this relative change (2% or "
                         "0.02) with --power, from the variances the data show.")] = None,
    cupac: Annotated[list[str], typer.Option(
        "--cupac", help="CUPAC: a pre-experiment feature column (one value per unit); a linear model of the "
                        "features, cross-fitted, predicts each metric's CUPED covariate. Repeat for more.")
    ] = [],  # noqa: B006
    covariate: Annotated[list[str], typer.Option(
        "--covariate", help="CUPED: METRIC=COL (a pre-experiment per-unit column) or METRIC=NUM/DEN.")] = [],  # noqa: B006
    pre_period: Annotated[str | None, typer.Option(
        "--pre-period", help="With --exposures: CUPED from each metric's own events in this span before the unit's "
                             "first exposure (14d, as GrowthBook's regression adjustment).")] = None,
    test: Annotated[str, typer.Option(
        "--test", help="The test of each arm against the control; 'rankwise list ab-tests' lists them.")] = "welch",
    relative: Annotated[str, typer.Option("--relative", help="Relative interval: delta | log")] = "delta",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level (intervals at 1 - alpha).")] = 0.05,
    correction: Annotated[str, typer.Option(
        "--correction", help="Across arms x metrics; 'rankwise list corrections' lists them.")] = "holm",
    correction_short: Annotated[str | None, typer.Option("-c", hidden=True)] = None,
    alternative: Annotated[str, typer.Option("--alternative", help="two-sided | greater | less")] = "two-sided",
    sequential: Annotated[str | None, typer.Option(
        "--sequential", help="A sequential design ('rankwise list sequential'), with its parameters: "
                             "'msprt(mixture_effect=0.2)', 'always-valid(tuning=5000)'; alpha spending needs "
                             "--timestamp for its daily looks.")] = None,
    tuning: Annotated[float | None, typer.Option(
        "--tuning", hidden=True, help="Deprecated: --sequential 'always-valid(tuning=N)'.")] = None,
    mixture_effect: Annotated[float | None, typer.Option(
        "--mixture-effect", hidden=True, help="Deprecated: --sequential 'msprt(mixture_effect=X)'.")] = None,
    statistics: Annotated[bool, typer.Option(
        "--statistics", help="The inputs are per-variant statistics (variant, n, sum(x), sum(x*y)), added up "
                             "by variant; -f statistics writes them.")] = False,
    timestamp: Annotated[str | None, typer.Option(
        "--timestamp", help="Column with event times: adds cumulative daily looks (and the lift plot); with "
                            "--exposures, also the time of each exposure.")] = None,
    looks: Annotated[bool, typer.Option(
        "--looks/--no-looks", help="With --timestamp: analyse the cumulative daily looks (--no-looks: the times "
                                   "only join events to exposures and their --window).")] = True,
    planned_units: Annotated[int | None, typer.Option(
        "--planned-units", help="Planned units in total, for alpha spending.")] = None,
    mixed: Annotated[str, typer.Option(
        "--mixed", help="Units seen in two variants: exclude (counted in a warning) | error")] = "exclude",
    p_value: Annotated[str, typer.Option(
        "--p-value", help="absolute | relative: the p-value (and its correction) of the difference, or of the "
                          "relative lift (GrowthBook's default display).")] = "absolute",
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    output_format: Annotated[ABFormat, typer.Option("-f", "--format", help="Output format.")] = ABFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Digits = 4,
) -> None:
    """Analyse an A/B experiment: every metric in every arm against the control, with intervals,
    corrected p-values, CUPED, the sample-ratio check and peeking-safe tests."""
    from rankwise.cli.output import deprecated_flag
    from rankwise.report import ab as render

    correction = deprecated_flag(correction, correction_short, "--correction", "-c", "--complete")
    from rankwise.cli.output import warn

    for flag, value, design, key in (("--tuning", tuning, "always-valid", "tuning"),
                                     ("--mixture-effect", mixture_effect, "msprt", "mixture_effect")):
        if value is not None:   # one spelling for a design's parameter: the design's own
            warn([f"{flag} is deprecated: write --sequential '{design}({key}={value:g})'"])
    try:
        data, chosen = _inputs(logs, metric, metrics_file, database, table, query, ibis_url)
        unit, variant = _event_roles(data, unit, variant)
        from rankwise.experiments.analysis import run
        from rankwise.experiments.settings import ABSettings, Adjustments, DataSource, ExperimentDesign, plan

        settings = ABSettings(
            DataSource(unit, variant, variants.split(",") if variants else None, event, exposures, window, timestamp,
                       "duckdb" if database is not None else cast("AggregationEngine", engine), statistics,
                       cast("Mixed", mixed), looks, delay, window_end, lookback, until),
            ExperimentDesign(control, test, sequential, planned_units, alpha, cast("Alternative", alternative),
                             cast("Relative", relative), p_value, correction, correction_scope, _weights(weights),
                             resamples, seed, power),
            Adjustments(_covariates(covariate), tuple(cupac), "linear",
                        _pairs(cap, "--cap", "METRIC=p99 or METRIC=NUMBER"), cap_ignore_zeros, tuple(slice_by),
                        {k: _margin(k, v) for k, v in _pairs(guardrail, "--guardrail", "METRIC=MARGIN").items()},
                        tuple(lower_is_better), pre_period, cap_convention))
        result = run(data, plan(chosen, settings, tuning=tuning, mixture_effect=mixture_effect))
    except RankwiseError as exc:
        from rankwise.cli.output import column_hint

        _fail(column_hint(str(exc), {unit or "unit": "--unit", variant or "variant": "--variant", event: "--event",
                                     **({timestamp: "--timestamp"} if timestamp else {})}))
        return
    _sign(result)
    if output_format in (ABFormat.table, ABFormat.text):
        grid = render.ab_grid(result, digits)
        if detect is not None:
            grid.note = "\n".join(line for line in (grid.note, *render.plan_lines(result, _margin("--detect", detect),
                                                                                     power)) if line)
        looks_grid = render.looks_grid(result)
        _show_grids([grid] + ([looks_grid] if looks_grid is not None else []), output,
                    plain=output_format == ABFormat.text,
                    warnings=result.warnings)
    else:
        text = {ABFormat.json: render.ab_json, ABFormat.csv: render.ab_csv,
                ABFormat.statistics: render.ab_statistics}.get(output_format)
        if text is not None:
            _emit(text(result), output, result.warnings, output_format.value)
        elif output_format == ABFormat.markdown:
            _emit(render.ab_markdown(result, digits), output, result.warnings, output_format.value)
        else:
            _emit(render.ab_html(result, digits), output, result.warnings, output_format.value)
    if result.srm.mismatch and output is not None:
        typer.secho(f"warning: {result.srm.message()}", err=True, fg=typer.colors.YELLOW)


@app.command("assign")
def assign(
    units: Annotated[list[str], typer.Argument(
        help="Files with the unit ids (CSV, TSV, Parquet, JSONL, or a text file with one id per line).")],
    experiment: Annotated[str, typer.Option("--experiment", help="The experiment key (GrowthBook's key).")],
    unit: Annotated[str, typer.Option("--unit", help="Column with the unit id (tables).")] = "unit",
    variants: Annotated[str | None, typer.Option(
        "--variants", help="Variant names, comma-separated (default: 0, 1, ... as the SDK numbers them).")] = None,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Variant weights, e.g. 0.5,0.5 (default equal).")] = None,
    coverage: Annotated[float, typer.Option("--coverage", help="Share of units in the experiment.")] = 1.0,
    hash_version: Annotated[int, typer.Option(
        "--hash-version", help="GrowthBook's hash: 2 (rankwise's default, GrowthBook's recommendation) or 1 (the "
                               "SDKs' Experiment() default): match the SDK that assigns live traffic.")] = 2,
    seed: Annotated[str | None, typer.Option("--seed", help="Hash seed (default: the experiment key).")] = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
) -> None:
    """Assign units to variants as GrowthBook's SDKs do, bit for bit: CSV of unit and variant
    (empty: not in the experiment)."""
    import numpy as np

    from rankwise.errors import OptionError

    try:
        ids = _unit_ids(units, unit)
        chosen = _weights(weights)
        names = variants.split(",") if variants else None
        count = len(names) if names else len(chosen) if chosen else 2
        if names and chosen and len(names) != len(chosen):
            raise OptionError(f"--variants names {len(names)} variants and --weights gives {len(chosen)} weights")
        from rankwise.experiments.hashing import assign as assign_units

        codes = assign_units(ids, experiment, chosen, coverage, hash_version, variants=count, seed=seed)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    labels = np.asarray(names if names else [str(i) for i in range(count)], dtype=object)
    import io

    import pandas as pd

    frame = pd.DataFrame({unit: ids, "variant": np.where(codes >= 0, labels[np.maximum(codes, 0)], "")})
    out = io.StringIO()
    frame.to_csv(out, index=False)
    _emit(out.getvalue(), output)
    left = int((codes < 0).sum())
    if left:
        typer.secho(f"warning: {left} unit(s) are not in the experiment (coverage, or ids GrowthBook does not "
                    "hash: empty, 0); their variant is empty", err=True, fg=typer.colors.YELLOW)


def _unit_ids(paths: list[str], column: str) -> list[str]:
    """Unit ids from tables (the ``column``) or from text files with one id per line (a first
    line naming the column is a header; what was skipped or changed is said in warnings)."""
    from rankwise.data.tables import tables_of

    ids: list[str] = []
    for path in paths:
        if path.lower().removesuffix(".gz").endswith((".txt", ".ids")):
            from rankwise.cli.output import warn
            from rankwise.data.id_lines import read_id_lines

            listed, notes = read_id_lines(path, [column], "unit")
            ids += listed
            warn(notes)
            continue
        for _, _, table in tables_of(path, [column], ids=[column]):
            ids += [str(v) if v is not None else "" for v in table.column(column).to_pylist()]
    return ids
