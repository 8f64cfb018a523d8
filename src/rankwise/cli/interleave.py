"""``rankwise interleave``: compare rankers from interleaved impressions, and simulate how many
impressions A/B tests, interleaving and counterfactual estimates need."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, ReportFormat, with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.errors import RankwiseError

interleave_app = typer.Typer(help="Interleaving: compare rankers from credits; simulate against A/B.",
                             no_args_is_help=True)
app.add_typer(interleave_app, name="interleave")


@interleave_app.command("compare")
@with_signature
def compare(
    credits: Annotated[str, typer.Argument(help="Per-impression credits: CSV/TSV/Parquet, one column per ranker.")],
    ranker: Annotated[list[str], typer.Option(
        "-r", "--ranker", help="The rankers' credit columns (repeat; default every numeric column).")] = [],  # noqa: B006
    clicked_only: Annotated[bool, typer.Option(
        "--clicked-only", help="Leave out impressions without credit (counted).")] = False,
    alpha: Annotated[float, typer.Option("--alpha", help="Intervals at 1 - alpha.")] = 0.05,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Digits = 4,
) -> None:
    """Wins, ties and losses per pair of rankers, delta with a bootstrap interval, sign test and Holm."""
    from rankwise.interleaving.interleave import preferences, read_credits
    from rankwise.report import interleave as render

    try:
        matrix, names = read_credits(credits, ranker)
        compared = preferences(matrix, names, alpha, resamples, seed, clicked_only)
        table = compared.table
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _sign(compared)
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids([render.preference_grid(table, digits)], output, plain=output_format == ReportFormat.text)
    elif output_format == ReportFormat.json:
        _emit(table.to_json(orient="records", indent=2), output)
    elif output_format == ReportFormat.csv:
        _emit(table.to_csv(index=False), output)
    else:
        _emit(render.preference_grid(table, digits).markdown(), output)


@interleave_app.command("simulate")
@with_signature
def simulate(
    qrels: Annotated[str, typer.Argument(help="Judgments: the true winner per query is the higher nDCG@10.")],
    run_a: Annotated[str, typer.Argument(help="Run A.")],
    run_b: Annotated[str, typer.Argument(help="Run B.")],
    click_model: Annotated[str, typer.Option(
        "--click-model", help="pbm | cascade | ubm | dbn ('dbn(continuation=0.8)'; 'rankwise list "
                              "simulated-users'), or an ULTRA parameter file (.json).")] = "pbm",
    impressions: Annotated[str, typer.Option(
        "--impressions", help="Impression counts, comma-separated.")] = "100,1000,10000,100000,1000000",
    repetitions: Annotated[int, typer.Option("--repetitions", help="Simulated experiments per count.")] = 100,
    queries_per_comparison: Annotated[int, typer.Option(
        "--queries-per-comparison", help="1: each query is a comparison; K: random sets of K queries.")] = 1,
    comparisons: Annotated[int, typer.Option(
        "--comparisons", help="With --queries-per-comparison K > 1: how many sets.")] = 100,
    min_difference: Annotated[float, typer.Option(
        "--min-difference", help="Leave out queries whose nDCG@10 differ by less.")] = 0.0,
    list_size: Annotated[int, typer.Option("--list-size", help="Documents shown to each simulated user.")] = 10,
    depth_old: Annotated[int | None, typer.Option("--depth", hidden=True, help="Deprecated: --list-size.")] = None,
    target_error: Annotated[float, typer.Option(
        "--target-error", help="The wrong-winner rate the impressions ratio is read at.")] = 0.05,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the error-against-impressions figure (PNG/SVG).")]
    = None,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
) -> None:
    """Simulated users from a click model over real qrels and runs: the probability of the
    wrong winner against impressions for A/B, each interleaving method and position-based IPS,
    the A/A false-positive rate and interval coverage."""
    from rankwise.interleaving.simulation import simulate_comparison
    from rankwise.report import interleave as render

    try:
        counts = [int(float(v)) for v in impressions.split(",")]
    except ValueError:
        _fail(f"--impressions: expected numbers separated by commas, got {impressions!r}")
        return
    try:
        from rankwise.cli.output import deprecated_flag

        depth = deprecated_flag(list_size, depth_old, "--list-size", "--depth", "evaluation depth")
        result = simulate_comparison(qrels, run_a, run_b, click_model, depth, counts, repetitions, min_difference,
                                     target_error=target_error, seed=seed,
                                     queries_per_comparison=queries_per_comparison, comparisons_count=comparisons)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _sign(result)
    if plot is not None:
        from rankwise.report.plots import save_figure

        save_figure(render.error_figure(result), plot, dpi=120)
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids(render.simulation_grids(result), output, plain=output_format == ReportFormat.text)
    elif output_format == ReportFormat.json:
        _emit(json.dumps(result.to_dict(), indent=2, default=str), output)
    elif output_format == ReportFormat.csv:
        from rankwise.report.annotate import csv_text

        _emit(csv_text(result.error, getattr(result, "warnings", [])), output)
    else:
        _emit(render.simulation_markdown(result), output)
