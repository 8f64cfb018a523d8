"""The work of ``rankwise evaluate``, apart from its option parsing: the Typer command and the
fast start (``rankwise.cli.quick``) both call ``evaluate_files``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankwise.cli.output import emit, fail, inputs, show_grids, sign, warn
from rankwise.cli.vocabulary import DEFAULT_METRICS

if TYPE_CHECKING:
    from pathlib import Path

    from rankwise.evaluation import EvaluationEngine


def evaluate_files(qrels: str, runs: list[str], metrics: list[str] | None = None, *, per_query: bool = False,
                   fmt: str = "table", digits: int = 4, output: Path | None = None, engine: EvaluationEngine = "memory",
                   chunk_rows: int | None = None, scheduler: str | None = None,
                   conventions: dict[str, Any] | None = None, continuous: bool = False) -> None:
    """Evaluate the runs (paths, ``NAME=PATH``, ``-``) against the qrels and print runs x
    metrics in ``fmt`` (table, text, json, csv, trec, markdown, latex), or write it to ``output``.
    ``continuous``: the qrels' labels are continuous relevance values.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "qrels").write_text("q1 0 d1 1\\n")
    >>> _ = (folder / "run").write_text("q1 Q0 d1 1 2.0 bm25\\n")
    >>> evaluate_files(str(folder / "qrels"), [str(folder / "run")], ["P@1"], fmt="csv")
    run,query,P@1
    bm25,all,1.0
    """
    from rankwise.cli.vocabulary import decimals
    from rankwise.errors import RankwiseError
    from rankwise.evaluation import evaluate as run_evaluate
    from rankwise.report import tables

    decimals(digits)   # the quick path reads --digits without Typer's callback
    with inputs(qrels, runs) as (qrels_in, runs_in):
        try:
            if continuous:
                from rankwise.data.load import load_qrels

                qrels_in = load_qrels(qrels_in, continuous=True)
            result = run_evaluate(qrels_in, runs_in, metrics or list(DEFAULT_METRICS), engine=engine,
                                  chunk_rows=chunk_rows, client=scheduler, **(conventions or {}))
        except RankwiseError as exc:
            fail(str(exc))
    warn(result.warnings)
    sign(result)
    if fmt in ("table", "text"):
        show_grids([tables.evaluation_grid(result, per_query, digits)], output, plain=fmt == "text",
                   warnings=result.warnings)
        return
    from rankwise.report import formats

    render = {"json": tables.render_json, "csv": tables.render_csv, "trec": tables.render_trec,
              "markdown": lambda r, q: formats.summary_markdown(r, digits=digits),
              "latex": lambda r, q: formats.summary_latex(r, digits=digits)}[fmt]
    emit(render(result, per_query), output, result.warnings, fmt)
