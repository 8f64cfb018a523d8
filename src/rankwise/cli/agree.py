"""``rankwise agree``: how far two qrels (two judges) agree, on labels and on system rankings;
``rankwise offline-online``: how far an offline metric's changes predict the online ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, ReportFormat, with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import inputs as _inputs
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn
from rankwise.errors import RankwiseError


@app.command("agree")
@with_signature
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
    digits: Digits = 4,
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
    _warn(labels.warnings)
    _sign(labels)
    if systems is not None:
        _sign(systems)
    if plot is not None and systems is None:
        _fail("--plot draws the runs' scores: give runs after the two qrels")
        return
    from rankwise.report import agreement as render

    warned = [*labels.warnings, *(systems.warnings if systems is not None else [])]
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids(render.agreement_grids(labels, systems, digits), output, plain=output_format == ReportFormat.text,
                    warnings=warned)
    elif output_format == ReportFormat.markdown:
        _emit(render.agreement_markdown(labels, systems, digits), output, warned, output_format.value)
    else:
        _emit((render.agreement_json if output_format == ReportFormat.json else render.agreement_csv)(labels, systems),
              output, warned, output_format.value)
    if plot is not None:
        from rankwise.report.plots import system_agreement_scatter

        system_agreement_scatter(systems, plot)
        typer.echo(f"wrote {plot}", err=True)


@app.command("offline-online")
@with_signature
def offline_online_command(
    experiments: Annotated[str, typer.Argument(help="One row per experiment (CSV, TSV, Parquet, JSON lines) with "
                                                    "its offline and online change.")],
    offline: Annotated[str, typer.Option("--offline", help="Column of the offline change (e.g. the nDCG@10 "
                                                           "difference from rankwise compare).")] = "offline",
    online: Annotated[str, typer.Option("--online", help="Column of the online change (e.g. the CTR difference "
                                                         "from rankwise ab).")] = "online",
    experiment: Annotated[str, typer.Option("--experiment", help="Column naming the experiment ('' to number "
                                                                 "them).")] = "experiment",
    online_p: Annotated[str | None, typer.Option("--online-p", help="Column of the online test's p-value (adds "
                                                                    "the significant sign agreement).")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of the online tests and the "
                                                         "interval.")] = 0.05,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples over experiments.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    digits: Digits = 4,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format", help="Output format.")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write the scatter of offline against online changes "
                                                            "(PNG, SVG, PDF).")] = None,
) -> None:
    """Does the offline metric predict the online one? Kendall's tau (with a bootstrap interval
    over experiments), Spearman, Pearson and the share of experiments whose offline and online
    changes have the same sign; with --online-p, the sign agreement on the significant online
    changes and the precision of "offline win" as a launch filter."""
    from rankwise.agreement import offline_online

    try:
        result = offline_online(experiments, offline, online, experiment or None, online_p, alpha, resamples, seed)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _sign(result)
    _warn(result.warnings)
    from rankwise.report import agreement as render

    grids = [render.offline_online_grid(result, digits), render.experiments_grid(result, digits)]
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids(grids, output, plain=output_format == ReportFormat.text, warnings=result.warnings)
    elif output_format == ReportFormat.markdown:
        _emit("\n\n".join(g.markdown() for g in grids), output, result.warnings, output_format.value)
    elif output_format == ReportFormat.json:
        import json

        _emit(json.dumps(result.to_dict(), indent=2), output)
    else:
        from rankwise.report.annotate import csv_text

        _emit(csv_text(result.table, result.warnings), output)
    if plot is not None:
        from rankwise.report.plots import offline_online_scatter

        offline_online_scatter(result, plot)
        typer.echo(f"wrote {plot}", err=True)
