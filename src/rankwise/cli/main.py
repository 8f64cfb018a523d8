"""The ``rankwise`` command line: evaluate, metrics, trec-eval."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="rankwise: exact, fast, reproducible evaluation of rankings.")


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    trec = "trec"


def _fail(message: str) -> None:
    typer.echo(f"rankwise: error: {message}", err=True)
    raise typer.Exit(code=2)


@app.command()
def evaluate(
    qrels: Annotated[Path, typer.Argument(help="Relevance judgments (TREC qrels, Parquet, JSON, JSONL).")],
    runs: Annotated[list[Path], typer.Argument(help="One or more runs (TREC, Parquet, JSON, JSONL).")],
    metric: Annotated[list[str] | None, typer.Option("-m", "--metric", help="Metric name; repeatable.")] = None,
    per_query: Annotated[bool, typer.Option("-q", "--per-query", help="Add per-query rows.")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")] = OutputFormat.table,
    rel_level: Annotated[int, typer.Option("-l", "--rel-level", help="Label >= N is relevant.")] = 1,
    depth: Annotated[int | None, typer.Option("-M", "--depth", help="Evaluate the top N only.")] = None,
    judged_only: Annotated[bool, typer.Option("-J", "--judged-only", help="Drop unjudged docs.")] = False,
    complete: Annotated[bool, typer.Option("-c", "--complete",
                                           help="Score judged queries missing from a run as 0.")] = False,
    ties: Annotated[str, typer.Option(help="trec | input | docid_asc")] = "trec",
    duplicates: Annotated[str, typer.Option(help="error | first | best")] = "error",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
) -> None:
    """Evaluate RUNS against QRELS and print runs x metrics."""
    from rankwise.errors import RankwiseError
    from rankwise.evaluation import evaluate as run_evaluate
    from rankwise.report import tables

    metrics = metric or ["ndcg@10", "map", "recip_rank", "P@10", "recall@100"]
    try:
        result = run_evaluate(str(qrels), [str(r) for r in runs], metrics, rel_level=rel_level, depth=depth,
                              judged_only=judged_only, missing="zero" if complete else "skip", ties=ties,
                              duplicates=duplicates)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    for w in result.warnings:
        typer.secho(f"warning: {w}", err=True, fg=typer.colors.YELLOW)
    if fmt is OutputFormat.table:
        from rich.console import Console

        console = Console(file=open(output, "w", encoding="utf-8") if output else None)
        console.print(tables.render_table(result, per_query))
        return
    render = {OutputFormat.json: tables.render_json, OutputFormat.csv: tables.render_csv,
              OutputFormat.trec: tables.render_trec}[fmt]
    text = render(result, per_query)
    if output:
        output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    else:
        typer.echo(text, nl=not text.endswith("\n"))


@app.command()
def metrics() -> None:
    """List every metric with its parameters and a one-line definition."""
    from rich.console import Console
    from rich.table import Table

    from rankwise.metrics.registry import FAMILIES

    table = Table(title="rankwise metrics (trec_eval names; ranx/ir_measures spellings such as ndcg@10 also work)")
    table.add_column("name", style="bold")
    table.add_column("parameters")
    table.add_column("summary")
    table.add_column("definition")
    for fam in FAMILIES:
        if fam.params == "none":
            params = "-"
        elif fam.params.startswith("cut"):
            params = "cut-offs, default " + ",".join(f"{v:g}" for v in fam.default)
        elif fam.params == "pairs":
            params = "level=gain pairs" + (", p=persistence" if fam.name.startswith("rbp") else "")
        else:
            params = "values, default " + ",".join(f"{v:g}" for v in fam.default)
        table.add_row(fam.name, params, fam.summary, fam.description)
    Console().print(table)


@app.command("trec-eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def trec_eval(ctx: typer.Context) -> None:
    """Drop-in for trec_eval: same flags (-q -c -l -M -J -N -n -m), same output, byte for byte."""
    from rankwise.cli.trec_eval import run_trec_eval

    raise typer.Exit(code=run_trec_eval(ctx.args))


def main() -> None:
    """Console entry point (``trec-eval`` arguments bypass option parsing to keep trec_eval's syntax)."""
    argv = sys.argv[1:]
    if argv and argv[0] == "trec-eval":
        from rankwise.cli.trec_eval import run_trec_eval

        sys.exit(run_trec_eval(argv[1:]))
    app(prog_name="rankwise")


if __name__ == "__main__":
    main()
