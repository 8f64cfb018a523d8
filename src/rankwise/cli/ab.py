"""``rankwise ab``: analyse an online experiment from event logs or per-unit tables."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.errors import RankwiseError


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
    out = {}
    for spec in specs:
        name, sep, column = spec.partition("=")
        if not sep or not name or not column:
            _fail(f"--covariate: expected METRIC=COLUMN (or METRIC=NUM/DEN for a ratio), got {spec!r}")
        out[name.strip()] = column.strip()
    return out


@app.command("ab")
def ab(
    logs: Annotated[list[str], typer.Argument(
        help="Event logs or per-unit tables: Parquet, CSV, TSV, JSONL (optionally .gz), or directories of them; "
             "with --statistics, per-variant sufficient statistics.")],
    metric: Annotated[list[str], typer.Option(
        "-m", "--metric", help="NAME=COL (mean per unit), NAME=COL>0 (share of units), NAME=NUM/DEN (ratio of sums, "
                               "delta method). Repeat for more.")],
    unit: Annotated[str, typer.Option("--unit", help="Column with the unit id (user, session).")] = "unit",
    variant: Annotated[str, typer.Option("--variant", help="Column with the variant name.")] = "variant",
    control: Annotated[str | None, typer.Option(
        "--control", help="The control variant (default: the first of --variants, else the first sorted).")] = None,
    variants: Annotated[str | None, typer.Option(
        "--variants", help="The design's variants, comma-separated; any other value is an error.")] = None,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Design split for the sample-ratio check, e.g. 0.95,0.05 (default equal).")] = None,
    covariate: Annotated[list[str], typer.Option(
        "--covariate", help="CUPED: METRIC=COL (a pre-experiment per-unit column) or METRIC=NUM/DEN.")] = [],  # noqa: B006
    test: Annotated[str, typer.Option(
        "--test", help="The test of each arm against the control; 'rankwise list ab-tests' lists them.")] = "welch",
    relative: Annotated[str, typer.Option("--relative", help="Relative interval: delta | log")] = "delta",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level (intervals at 1 - alpha).")] = 0.05,
    correction: Annotated[str, typer.Option(
        "--correction", help="Across arms x metrics; 'rankwise list corrections' lists them.")] = "holm",
    correction_short: Annotated[str | None, typer.Option("-c", hidden=True)] = None,
    alternative: Annotated[str, typer.Option("--alternative", help="two-sided | greater | less")] = "two-sided",
    sequential: Annotated[str | None, typer.Option(
        "--sequential", help="A sequential design ('rankwise list sequential'); alpha spending needs "
                             "--timestamp for its daily looks.")] = None,
    tuning: Annotated[float, typer.Option(
        "--tuning", help="always-valid: the sample size the confidence sequence is tightest at.")] = 5000,
    mixture_effect: Annotated[float, typer.Option(
        "--mixture-effect", help="msprt: mixture sd of the effect, in per-unit standard deviations.")] = 0.1,
    statistics: Annotated[bool, typer.Option(
        "--statistics", help="The inputs are per-variant statistics (variant, n, sum(x), sum(x*y)), added up "
                             "by variant; -f statistics writes them.")] = False,
    timestamp: Annotated[str | None, typer.Option(
        "--timestamp", help="Column with event times: adds cumulative daily looks (and the lift plot).")] = None,
    planned_units: Annotated[int | None, typer.Option(
        "--planned-units", help="Planned units in total, for alpha spending.")] = None,
    mixed: Annotated[str, typer.Option(
        "--mixed", help="Units seen in two variants: exclude (counted in a warning) | error")] = "exclude",
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    output_format: Annotated[ABFormat, typer.Option("-f", "--format", help="Output format.")] = ABFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Annotated[int, typer.Option(help="Decimals shown in tables (JSON and CSV keep every digit).")] = 4,
) -> None:
    """Analyse an A/B experiment: every metric in every arm against the control, with intervals,
    corrected p-values, CUPED, the sample-ratio check and peeking-safe tests."""
    from rankwise import online
    from rankwise.cli.output import deprecated_flag
    from rankwise.report import ab as render

    correction = deprecated_flag(correction, correction_short, "--correction", "-c", "--complete")
    try:
        result = online.analyze(logs, unit=unit, variant=variant, metrics=metric, control=control,
                                covariates=_covariates(covariate), test=test, relative=relative, alpha=alpha,
                                correction=correction, alternative=alternative, weights=_weights(weights),
                                variants=variants.split(",") if variants else None, sequential=sequential,
                                planned_units=planned_units, timestamp=timestamp, mixed=mixed, resamples=resamples,
                                seed=seed, statistics=statistics, tuning=tuning, mixture_effect=mixture_effect)
    except RankwiseError as exc:
        from rankwise.cli.output import column_hint

        _fail(column_hint(str(exc), {unit: "--unit", variant: "--variant", **({timestamp: "--timestamp"}
                                                                               if timestamp else {})}))
        return
    if output_format in (ABFormat.table, ABFormat.text):
        _show_grids([render.ab_grid(result, digits)], output, plain=output_format == ABFormat.text)
    else:
        text = {ABFormat.json: render.ab_json, ABFormat.csv: render.ab_csv,
                ABFormat.statistics: render.ab_statistics}.get(output_format)
        if text is not None:
            _emit(text(result), output)
        elif output_format == ABFormat.markdown:
            _emit(render.ab_markdown(result, digits), output)
        else:
            _emit(render.ab_html(result, digits), output)
    if result.srm.mismatch and output is not None:
        typer.secho(f"warning: {result.srm.message()}", err=True, fg=typer.colors.YELLOW)
