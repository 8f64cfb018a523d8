"""``rankwise agree``: how far two qrels (two judges) agree, on labels and on system rankings."""

from __future__ import annotations

from typing import Annotated

import typer

from rankwise.cli.app import _fail, _inputs, app
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
    digits: Annotated[int, typer.Option(help="Decimals shown.")] = 4,
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
    typer.echo(f"pairs judged by both: {labels.shared_pairs} ({labels.queries} queries); only in A: "
               f"{labels.only_a}; only in B: {labels.only_b}")
    typer.echo(labels.table().to_string(index=False, float_format=lambda v: f"{v:.{digits}f}"))
    if systems is not None:
        typer.echo(f"\nsystems ranked by {metric}:")
        typer.echo(systems.table().to_string(index=False, float_format=lambda v: f"{v:.{digits}f}"))
        typer.echo("  ".join(f"{k} {v:.{digits}f}" for k, v in systems.statistics.items()))
        if plot is not None:
            from rankwise.report.plots import system_agreement_scatter

            system_agreement_scatter(systems, plot)
            typer.echo(f"wrote {plot}")
    elif plot is not None:
        _fail("--plot draws the runs' scores: give runs after the two qrels")
