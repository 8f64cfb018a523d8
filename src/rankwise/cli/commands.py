"""The core ``rankwise`` commands: evaluate, metrics, compare, plot, report, trec-eval, ndeval
(registered on ``rankwise.cli.app.app``; ``rankwise.cli.main`` assembles every command)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from rankwise.cli.app import app
from rankwise.cli.options import (
    DEFAULT_METRICS,
    Digits,
    Metrics,
    with_columns,
    with_conventions,
    with_signature,
    with_statistics,
)
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import inputs as _inputs
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn
from rankwise.data.columns import RUN_ROLES


class OutputFormat(str, Enum):
    table = "table"
    text = "text"
    json = "json"
    csv = "csv"
    trec = "trec"
    markdown = "markdown"
    latex = "latex"


class EngineOption(str, Enum):
    """``evaluate --engine``: the values of ``rankwise.evaluation.EvaluationEngine`` (an enum
    for Typer; tied to the literal by ``tests/test_cli_choice_texts.py``)."""

    memory = "memory"
    chunks = "chunks"
    dask = "dask"
    spark = "spark"


Qrels = Annotated[str, typer.Argument(help="Relevance judgments (TREC qrels, Parquet, JSON, JSONL; - for stdin).")]
Runs = Annotated[list[str], typer.Argument(
    help="Runs (TREC, Parquet, JSON, JSONL; - for stdin); NAME=PATH names a run.")]
Output = Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")]


@app.command()
@with_columns(RUN_ROLES, "a run or qrels table")
@with_conventions
@with_signature
def evaluate(
    qrels: Qrels,
    runs: Runs,
    metric: Metrics = None,
    per_query: Annotated[bool, typer.Option("-q", "--per-query", help="Add per-query rows.")] = False,
    continuous: Annotated[bool, typer.Option("--continuous", help="The qrels' labels are continuous relevance "
                                             "(watch time, percentages, signed values): the gain-based measures "
                                             "(nDCG, DCG, MDCG, nDCG_signed) use them as gains.")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format (table: rich on a terminal, "
                                              "plain text otherwise; text: always plain).")] = OutputFormat.table,
    digits: Digits = 4,
    output: Output = None,
    engine: Annotated[EngineOption, typer.Option(help="Where rows are scored: memory (the whole run), chunks (query-"
                                           "complete chunks of a file or Parquet dataset larger than memory), "
                                           "dask or spark (a cluster). Same values from every engine.")
                      ] = EngineOption.memory,
    chunk_rows: Annotated[int | None, typer.Option(help="Rows per chunk (engine chunks; default 4,000,000) or "
                                                   "per partition (dask, spark).")] = None,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address (tcp://host:8786) or Spark "
                                                  "master URL (local[2], spark://host:7077); default: a local "
                                                  "cluster.")] = None,
    conventions: dict | None = None,
) -> None:
    """Evaluate RUNS against QRELS and print runs x metrics."""
    from rankwise.cli.evaluating import evaluate_files

    evaluate_files(qrels, runs, metric, per_query=per_query, fmt=fmt.value, digits=digits, output=output,
                   engine=engine.value, chunk_rows=chunk_rows, scheduler=scheduler, conventions=conventions,
                   continuous=continuous)


@app.command(hidden=True)
def metrics(
    text: Annotated[str, typer.Argument(help="Show only metrics whose name, spelling or definition contains this "
                                             "(e.g. ndcg, reciprocal).")] = "",
) -> None:
    """Deprecated: ``rankwise list metrics [FILTER]`` (the one listing command)."""
    from rankwise.cli.catalogue import metric_rows, show

    _warn(["'rankwise metrics' is deprecated: write 'rankwise list metrics' (one listing for every kind)"])
    show("rankwise metrics (trec_eval names; ranx/ir_measures spellings such as ndcg@10 also work)",
         metric_rows(text), "metric", text)


class CompareFormat(str, Enum):
    table = "table"
    text = "text"
    markdown = "markdown"
    latex = "latex"
    html = "html"
    csv = "csv"
    json = "json"


@app.command()
@with_columns(RUN_ROLES, "a run or qrels table")
@with_conventions
@with_statistics
@with_signature
def compare(
    qrels: Qrels,
    runs: Runs,
    metric: Metrics = None,
    fmt: Annotated[CompareFormat, typer.Option("--format", "-f", help="Output format.")] = CompareFormat.table,
    digits: Digits = 4,
    output: Output = None,
    conventions: dict | None = None,
    statistics: dict | None = None,
) -> None:
    """Compare runs pairwise with significance tests, intervals and corrections."""
    import json

    from rankwise.comparison import compare as run_compare
    from rankwise.errors import RankwiseError
    from rankwise.report import formats

    with _inputs(qrels, runs) as (qrels_in, runs_in):
        try:
            comp = run_compare(qrels_in, runs_in, metric or list(DEFAULT_METRICS), progress=sys.stderr.isatty(),
                               **(statistics or {}), **(conventions or {}))
        except RankwiseError as exc:
            _fail(str(exc))
            return
    _warn(comp.warnings)
    _sign(comp)
    if fmt in (CompareFormat.table, CompareFormat.text):
        _show_grids([formats.summary_grid(comp, digits), formats.comparison_grid(comp, digits)], output,
                    warnings=comp.warnings,
                    plain=fmt is CompareFormat.text)
        return
    from rankwise.report.annotate import csv_text

    text = {CompareFormat.markdown: lambda: formats.summary_markdown(comp.evaluation, comp, digits) + "\n\n"
            + formats.comparison_markdown(comp, digits),
            CompareFormat.latex: lambda: formats.summary_latex(comp.evaluation, comp, digits) + "\n\n"
            + formats.comparison_latex(comp, digits),
            CompareFormat.html: lambda: formats.comparison_html(comp, digits),
            CompareFormat.csv: lambda: csv_text(comp.table, comp.warnings),
            CompareFormat.json: lambda: json.dumps(comp.to_dict(), indent=2)}[fmt]()
    _emit(text, output, comp.warnings, fmt.value)


class PlotKind(str, Enum):
    curve = "curve"
    difference = "difference"
    box = "box"
    violin = "violin"
    pr = "pr"
    roc = "roc"


@app.command()
@with_columns(RUN_ROLES, "a run or qrels table")
@with_conventions
def plot(
    kind: Annotated[PlotKind, typer.Argument(help="curve | difference | box | violin | pr | roc (curve: a metric "
                                                  "over its cut-offs k)")],
    qrels: Qrels,
    runs: Runs,
    output: Annotated[Path, typer.Option("-o", "--output", help="Image file (.png, .svg or .pdf).")],
    metric: Annotated[str, typer.Option("-m", "--metric", help="Metric (curve: ndcg, P, recall, ...).")] = "ndcg@10",
    k: Annotated[int, typer.Option("-k", "--k", help="Largest cut-off of a curve.")] = 100,
    max_k: Annotated[int | None, typer.Option("--max-k", hidden=True, help="Deprecated: use --k.")] = None,
    conventions: dict | None = None,
) -> None:
    """Write a plot of RUNS against QRELS."""
    from rankwise.errors import RankwiseError
    from rankwise.evaluation import evaluate as run_evaluate
    from rankwise.report import plots

    if max_k is not None:
        _warn(["--max-k is deprecated; use --k"])
        k = max_k
    conv = conventions or {}
    with _inputs(qrels, runs) as (qrels_in, runs_in):
        try:
            if kind is PlotKind.curve:
                figure = plots.metric_at_k(qrels_in, runs_in, metric.split("@")[0], k, path=output, **conv)
            elif kind is PlotKind.pr:
                figure = plots.precision_recall(qrels_in, runs_in, path=output, **conv)
            elif kind is PlotKind.roc:
                figure = plots.roc(qrels_in, runs_in, path=output, **conv)
            else:
                res = run_evaluate(qrels_in, runs_in, [metric], **conv)
                if kind is PlotKind.difference:
                    names = [rs.name for rs in res.runs]
                    if len(names) != 2:
                        _fail("a difference plot needs exactly two runs")
                    figure = plots.per_query_difference(res, metric, names[0], names[1], path=output)
                else:
                    figure = plots.distribution(res, metric, kind.value, path=output)
        except RankwiseError as exc:
            _fail(str(exc))
    _warn(figure.rankwise_warnings)
    typer.echo(f"wrote {output}")


@app.command()
@with_columns(RUN_ROLES, "a run or qrels table")
@with_conventions
@with_statistics
def report(
    qrels: Qrels,
    runs: Runs,
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write.")],
    metric: Metrics = None,
    conventions: dict | None = None,
    statistics: dict | None = None,
) -> None:
    """Write one self-contained HTML page: tables, comparisons, plots, signatures."""
    from rankwise.errors import RankwiseError
    from rankwise.report.html import write_report

    with _inputs(qrels, runs) as (qrels_in, runs_in):
        try:
            comp = write_report(qrels_in, runs_in, metric or list(DEFAULT_METRICS), output, **(statistics or {}),
                                **(conventions or {}))
        except RankwiseError as exc:
            _fail(str(exc))
    _warn(comp.warnings)
    typer.echo(f"wrote {output}")


@app.command("trec-eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def trec_eval(ctx: typer.Context) -> None:
    """Drop-in for trec_eval: same flags (-q -c -l -M -J -N -n -m), same output, byte for byte."""
    from rankwise.cli.trec_eval import run_trec_eval

    raise typer.Exit(code=run_trec_eval(ctx.args))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def ndeval(ctx: typer.Context) -> None:
    """Drop-in for ndeval 4.5 (TREC Web diversity): -alpha, -beta, -traditional, -M, -c; the same CSV."""
    from rankwise.cli.ndeval import run_ndeval

    raise typer.Exit(code=run_ndeval(ctx.args))
