"""``rankwise beyond``: beyond-accuracy metrics of recommendation lists (coverage, novelty,
popularity bias, diversity, personalisation, calibration, serendipity)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, ReportFormat, with_columns, with_paired_tests, with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn
from rankwise.data.columns import RECSYS_ROLES
from rankwise.errors import RankwiseError


@app.command("beyond")
@with_columns(RECSYS_ROLES, "a recommendation or interaction table")
@with_paired_tests
@with_signature
def beyond(
    runs: Annotated[list[str], typer.Argument(
        help="Recommendation lists: CSV, TSV or Parquet with user, item and score or rank columns (several files "
             "compare runs; NAME=FILE names one).")],
    metric: Annotated[list[str], typer.Option(
        "-m", "--metric", help="A metric, e.g. coverage@10, novelty@10, 'ild(similarity=cosine)@10' (repeat); "
                               "'rankwise list beyond-accuracy' lists them.")],
    train: Annotated[str | None, typer.Option(
        "--train", help="Training interactions (user, item): popularity, novelty, history.")] = None,
    held_out: Annotated[str | None, typer.Option(
        "--held-out", help="Held-out interactions (user, item[, rating]): relevance for accuracy metrics "
                           "(ndcg@10, recall@20 ...), serendipity, PopREO and expected exposure.")] = None,
    user_groups: Annotated[str | None, typer.Option(
        "--user-groups", help="A user column and a group column: every per-user metric also per user group.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Draw the runs' trade-off, --plot-x against --plot-y (.png, .svg or .pdf).")] = None,
    plot_x: Annotated[str | None, typer.Option(
        "--plot-x", help="The plot's x metric (default: the first metric).")] = None,
    plot_y: Annotated[str | None, typer.Option(
        "--plot-y", help="The plot's y metric (default: the second metric).")] = None,
    features: Annotated[str | None, typer.Option(
        "--features", help="Item features: an item column and numeric columns (or a vector column).")] = None,
    groups: Annotated[str | None, typer.Option(
        "--groups", help="Item groups or genres: an item column and a group column ('A|B' for several).")] = None,
    catalogue: Annotated[str | None, typer.Option(
        "--catalogue", help="The items coverage is a share of: one item id per line (a first line such as "
        "'item_id' is a header), or a CSV, TSV or Parquet table with an item column.")] = None,
    rating_threshold: Annotated[float | None, typer.Option(
        "--rating-threshold", help="Held-out ratings at or above it are relevant.")] = None,
    per_user: Annotated[bool, typer.Option(
        "--per-user", help="CSV: one row per run x user instead of one per run x metric.")] = False,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format", help="Output format.")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Digits = 4,
    statistics: dict | None = None,
) -> None:
    """Coverage, novelty, popularity bias, diversity, personalisation, calibration and
    serendipity of recommendation lists, beside each other for one or several runs (with
    several, each per-user metric is tested against --baseline with compare's options)."""
    from rankwise.recsys import beyond_accuracy
    from rankwise.report import recsys as render

    statistics = dict(statistics or {})
    if Path(statistics.get("test", "t")).is_file():   # the held-out file, as --test named it before --held-out
        _warn([f"--test FILE is deprecated here: write --held-out {statistics['test']} (--test is the significance "
               "test, as in compare)"])
        held_out, statistics["test"] = held_out or statistics["test"], "t"
    named: dict[str, str] = {}
    for run in runs:
        name, _, path = run.partition("=") if "=" in run and not Path(run).exists() else (Path(run).stem, "", run)
        named[name] = path
    try:
        result = beyond_accuracy(named, metric, train=train, test=held_out, catalogue=catalogue, features=features,
                                 groups=groups, rating_threshold=rating_threshold, user_groups=user_groups,
                                 test_name=statistics.get("test", "t"), baseline=statistics.get("baseline"),
                                 correction=statistics.get("correction", "holm"), alpha=statistics.get("alpha", 0.05),
                                 permutations=statistics.get("permutations", 10_000), seed=statistics.get("seed", 0))
        if plot is not None:
            from rankwise.report.plots import tradeoff

            labels = list(dict.fromkeys(result.table["metric"]))
            if len(labels) < 2 and (plot_x is None or plot_y is None):
                raise RankwiseError("--plot needs two metrics (or --plot-x and --plot-y)")
            tradeoff(result, plot_x or labels[0], plot_y or labels[1], plot)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _sign(result)
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids([render.beyond_grid(result, digits)], output, plain=output_format == ReportFormat.text,
                    warnings=result.warnings)
    elif output_format == ReportFormat.markdown:
        _emit(render.beyond_grid(result, digits).markdown(), output, result.warnings, output_format.value)
    else:
        _emit(render.beyond_json(result) if output_format == ReportFormat.json
              else render.beyond_csv(result, per_user), output, result.warnings, output_format.value)
    if output is not None:
        _warn(result.warnings)
