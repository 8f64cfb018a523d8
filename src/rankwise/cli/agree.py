"""``rankwise agree``: how far two qrels (two judges) agree, on labels and on system rankings."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.options import ReportFormat
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import inputs as _inputs
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import warn as _warn
from rankwise.errors import RankwiseError


@app.command("agree")
def agree_command(
    qrels_a: Annotated[str, typer.Argument(help="The reference judgments (TREC qrels, Parquet, JSON ...).")],
    qrels_b: Annotated[str, typer.Argument(help="The other judgments.")],
    runs: Annotated[list[str] | None, typer.Argument(
        help="Runs to rank under both qrels (NAME=PATH names a run); without runs, labels only.")] = None,
    metric: Annotated[str, typer.Option("-m", "--metric", help="The measure systems are ranked by.")] = "ndcg@10",
    level: Annotated[list[int] | None, typer.Option(
        "--level", help="Binarisation level (repeat; default every positive label).")] = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples over queries.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    top_k: Annotated[int, typer.Option("--top-k", help="Systems compared by top-k overlap.")] = 3,
    rel_level: Annotated[int, typer.Option("-l", "--rel-level", help="Relevance level of the metric.")] = 1,
    digits: Annotated[int, typer.Option(help="Decimals shown in tables (JSON and CSV keep every digit).")] = 4,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format", help="Output format.")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    plot: Annotated[str | None, typer.Option(
        "--plot", help="With runs: write the scatter of each run's score under the two qrels (PNG, SVG, PDF).")] = None,
) -> None:
    """Label agreement (Cohen's kappa, Krippendorff's alpha, binary agreement per level, with
    bootstrap intervals) on the pairs both qrels judged; given runs, the agreement of the
    system rankings (Kendall's tau, tau_AP, Spearman, top-k overlap) and each run's scores."""
    from rankwise.agreement import label_agreement, system_agreement

    try:
        labels = label_agreement(qrels_a, qrels_b, level or None, resamples=resamples, seed=seed)
        systems = None
        if runs:
            with _inputs(None, runs) as (_, inputs):
                systems = system_agreement(qrels_a, qrels_b, inputs, metric, top_k, rel_level=rel_level)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _warn(labels.notes)
    if plot is not None and systems is None:
        _fail("--plot draws the runs' scores: give runs after the two qrels")
        return
    from rankwise.report import agreement as render

    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids(render.agreement_grids(labels, systems, digits), output, plain=output_format == ReportFormat.text)
    elif output_format == ReportFormat.markdown:
        _emit(render.agreement_markdown(labels, systems, digits), output)
    else:
        _emit((render.agreement_json if output_format == ReportFormat.json else render.agreement_csv)(labels, systems),
              output)
    if plot is not None:
        from rankwise.report.plots import system_agreement_scatter

        system_agreement_scatter(systems, plot)
        typer.echo(f"wrote {plot}", err=True)
