"""``rankwise rank-eval`` (rated requests against a search backend) and ``rankwise index build``
(an embedded Tantivy index from JSONL/CSV documents)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from rankwise.cli.app import app
from rankwise.cli.options import with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn

index_app = typer.Typer(no_args_is_help=True, help="Build a search index for rank-eval.")
app.add_typer(index_app, name="index")


class BackendKind(str, Enum):
    tantivy = "tantivy"
    elasticsearch = "elasticsearch"
    opensearch = "opensearch"
    callable = "callable"


class RankEvalFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


@index_app.command("build")
def index_build(
    corpus: Annotated[Path, typer.Argument(help="Documents: JSONL (one object per line) or CSV/TSV with a header.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Index directory to create.")],
    id_field: Annotated[str, typer.Option("--id-field", help="Field holding the document id.")] = "id",
    fields: Annotated[str, typer.Option("--fields", help="Text fields to index, comma-separated.")] = "title,body",
    analyzer: Annotated[str, typer.Option(help="default | en_stem (English stemming)")] = "default",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing index.")] = False,
) -> None:
    """Index CORPUS with Tantivy (BM25) for `rankwise rank-eval --backend tantivy`."""
    import time

    from rankwise.errors import RankwiseError
    from rankwise.rankeval.tantivy_index import build_index

    start = time.perf_counter()
    try:
        meta = build_index(corpus, output, id_field, [f.strip() for f in fields.split(",") if f.strip()],
                           analyzer=analyzer, overwrite=overwrite)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    for name, count in meta["empty_fields"].items():
        _warn([f"{count} document(s) have an empty or missing {name!r}"])
    typer.echo(f"indexed {meta['documents']} documents ({', '.join(meta['fields'])}) into {output} "
               f"in {time.perf_counter() - start:.2f} s")


def _load_callable(target: str) -> Callable[..., Any]:
    import importlib

    module, _, attr = target.partition(":")
    if not module or not attr:
        raise typer.BadParameter("expected module:function", param_hint="--callable")
    import os

    if os.getcwd() not in sys.path and "" not in sys.path:  # a module of the working directory, as `python -m`
        sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise typer.BadParameter(f"cannot load {target}: {exc}", param_hint="--callable") from None


def _progress(enabled: bool) -> Any:
    """A rich progress bar over requests (on standard error)."""
    if not enabled:
        return None

    def start(total: int) -> Callable[[], None]:
        from rich.console import Console
        from rich.progress import Progress

        bar = Progress(console=Console(stderr=True), transient=True)
        bar.start()
        task = bar.add_task("searching", total=total)
        done = {"n": 0}

        def advance() -> None:
            bar.advance(task)
            done["n"] += 1
            if done["n"] >= total:
                bar.stop()

        return advance

    return start


@app.command("rank-eval")
@with_signature
def rank_eval(
    spec: Annotated[Path, typer.Argument(help="Spec: Elasticsearch _rank_eval body (JSON or YAML), "
                                             "optionally with \"metrics\" and \"systems\".")],
    backend: Annotated[BackendKind, typer.Option(help="tantivy | elasticsearch | opensearch | callable")]
    = BackendKind.tantivy,
    index: Annotated[str | None, typer.Option(help="Tantivy index directory, or the server's index name.")] = None,
    system_index: Annotated[list[str] | None, typer.Option(
        "--system-index", help="SYSTEM=INDEX: this system searches another index (e.g. another analyzer); "
                               "repeatable.")] = None,
    url: Annotated[str | None, typer.Option(help="Elasticsearch / OpenSearch URL.")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="RANKWISE_ES_API_KEY", help="API key.")] = None,
    user: Annotated[str | None, typer.Option(help="Basic-auth user name.")] = None,
    password: Annotated[str | None, typer.Option(envvar="RANKWISE_ES_PASSWORD", help="Basic-auth password.")] = None,
    function: Annotated[str | None, typer.Option("--callable", help="module:function for --backend callable.")]
    = None,
    concurrency: Annotated[int | None, typer.Option(help="Searches in flight (default: the spec's "
                                                         "max_concurrent_searches).")] = None,
    size: Annotated[int | None, typer.Option(help="Hits per search (default: the deepest metric cut-off).")] = None,
    ratings: Annotated[Path | None, typer.Option(help="More ratings (CSV request_id,_id,rating or TREC qrels), "
                                                      "merged over the spec's.")] = None,
    unrated_out: Annotated[Path | None, typer.Option(help="Write the unrated documents of the top k to this CSV.")]
    = None,
    match_index: Annotated[bool, typer.Option(
        "--match-index", help="Match ratings to hits on _index and _id, as Elasticsearch does (default: _id "
                              "alone, so a spec runs against any index).")] = False,
    search_type: Annotated[str | None, typer.Option(
        help="Elasticsearch's search_type: query_then_fetch | dfs_query_then_fetch (term statistics of the whole "
             "index; one shard scores both the same).")] = None,
    test: Annotated[str, typer.Option(help="Significance test between systems.")] = "t",
    correction: Annotated[str, typer.Option(help="'rankwise list corrections' lists them.")] = "holm",
    cross_check: Annotated[bool, typer.Option(help="Also ask the server's _rank_eval and compare.")] = False,
    fmt: Annotated[RankEvalFormat, typer.Option("--format", "-f", help="Output on the terminal.")]
    = RankEvalFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the JSON response here (streamed: "
                                                                      "memory bounded by one request).")] = None,
    details: Annotated[str, typer.Option(help="Per-request details in the JSON response: all (hits, unrated_docs, "
                                              "metric_details) | rated (rated hits only) | none (scores only).")]
    = "all",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Run the rated requests of SPEC against a search backend and evaluate them."""
    from rankwise.errors import RankwiseError
    from rankwise.rankeval import judging
    from rankwise.rankeval.evaluation import check_details
    from rankwise.rankeval.evaluation import rank_eval as run_rank_eval
    from rankwise.rankeval.spec import load_spec

    try:
        parsed = load_spec(spec)
        search_type = _search_type(search_type, backend)
        engine = _backend(backend, index, url, api_key, user, password, function, search_type)
        if system_index:
            engines = {s.name: engine for s in parsed.systems}
            for item in system_index:
                name, sep, where = item.partition("=")
                if not sep or name not in engines:
                    raise RankwiseError(f"--system-index {item!r}: expected SYSTEM=INDEX with SYSTEM one of "
                                        f"{', '.join(engines)}")
                engines[name] = _backend(backend, where, url, api_key, user, password, function, search_type)
            engine = engines
        extra = None
        if ratings is not None:
            extra, skipped = judging.read_ratings(ratings, match_index)
            if skipped:
                _warn([f"{ratings}: {skipped} row(s) without a rating were skipped"])
        level = check_details(details)  # before searching, not after
        result = run_rank_eval(parsed, engine, size=size, concurrency=concurrency, ratings=extra, test=test,
                               correction=correction, match_index=match_index, progress=_progress(not quiet))
        checks = None
        if cross_check:
            from rankwise.rankeval.elastic import ElasticsearchBackend
            from rankwise.rankeval.elastic import cross_check as run_cross_check

            if not isinstance(engine, ElasticsearchBackend):
                raise RankwiseError("--cross-check needs --backend elasticsearch or opensearch")
            checks = run_cross_check(result, engine)
    except (RankwiseError, OSError) as exc:
        _fail(str(exc))
        return
    _warn(result.warnings)
    _sign(result)
    if unrated_out is not None:
        count = judging.write_unrated(result.unrated(), unrated_out)
        typer.echo(f"wrote {count} unrated document(s) to judge to {unrated_out}", err=True)
    extra_keys = {"cross_check": checks} if checks is not None else None
    if output is not None:
        from rankwise.data.atomic import atomic_open

        try:
            with atomic_open(output, "w", encoding="utf-8") as f:
                result.write_json(f, level, progress=_writing_progress(not quiet, output), extra=extra_keys)
        except RankwiseError as exc:
            _fail(str(exc))
    if fmt is RankEvalFormat.json:
        result.write_json(sys.stdout, level, extra=extra_keys)
    elif fmt is RankEvalFormat.markdown:
        _emit(_markdown(result), None)
    else:
        _show_grids(_grids(result), None)
    if checks is not None:
        for name, check in checks.items():
            typer.echo(f"cross-check {name}: server {check['server_metric_score']}, rankwise "
                       f"{check['rankwise_metric_score']}, max difference {check['max_abs_difference']:.3g}")


def _search_type(value: str | None, kind: BackendKind) -> str | None:
    """``--search-type`` checked; on a one-shard backend it changes nothing (said once)."""
    from rankwise.errors import RankwiseError
    from rankwise.rankeval.backends import SEARCH_TYPES

    if value is None:
        return None
    if value not in SEARCH_TYPES:
        raise RankwiseError(f"--search-type {value!r}: expected one of {', '.join(SEARCH_TYPES)}")
    if kind in (BackendKind.tantivy, BackendKind.callable):
        _warn([f"--search-type {value}: the {kind.value} backend searches one shard, where both search types "
               "score the same"])
        return None
    return value


def _backend(kind: BackendKind, index: str | None, url: str | None, api_key: str | None, user: str | None,
             password: str | None, function: str | None, search_type: str | None = None) -> Any:
    from rankwise.errors import RankwiseError

    if kind is BackendKind.tantivy:
        if not index:
            raise RankwiseError("--backend tantivy needs --index DIR (build one with `rankwise index build`)")
        from rankwise.rankeval.tantivy_index import TantivyBackend

        return TantivyBackend(index)
    if kind is BackendKind.callable:
        if not function:
            raise RankwiseError("--backend callable needs --callable module:function")
        from rankwise.rankeval.backends import CallableBackend

        return CallableBackend(_load_callable(function), name=function)
    if not url or not index:
        raise RankwiseError(f"--backend {kind.value} needs --url URL and --index NAME")
    from rankwise.rankeval.elastic import ElasticsearchBackend

    return ElasticsearchBackend(url, index, flavor=kind.value, api_key=api_key, username=user, password=password,
                                search_type=search_type)


def _grids(result: Any) -> list[Any]:
    from rankwise.rankeval.evaluation import display_label, metric_label
    from rankwise.report.grid import Grid

    summary = result.summary
    cols = [str(c) for c in summary.columns]
    rows = [[str(name), *[_cell(row[c], c) for c in summary.columns]] for name, row in summary.iterrows()]
    failed = result.failure_notes()
    out = [Grid(f"rank evaluation ({len(result.spec.requests)} requests, {result.size} hits each)",
                ["system", *cols], rows, [False] + [True] * len(cols),
                note="\n".join(["- not scored (see below)"] + failed) if failed else "")]
    if result.comparison is not None:
        short = {metric_label(m): display_label(m) for m in result.spec.metrics}
        rows = [[short.get(rec["metric"], rec["metric"]), rec["a"], rec["b"], f"{rec['diff']:+.4f}",
                 f"{rec['p_corrected']:.4g}", "yes" if rec["significant"] else "no"]
                for rec in result.comparison.table.to_dict("records")]
        out.append(Grid(f"paired comparison ({result.comparison.test}, {result.comparison.correction})",
                        ["metric", "a", "b", "diff", "p_corrected", "significant"], rows,
                        [False, False, False, True, True, False]))
    return out


def _writing_progress(enabled: bool, path: Path) -> Any:
    """A progress bar (standard error) over the (system, metric) blocks of the response."""
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(console=Console(stderr=True), transient=True)
    task = bar.add_task(f"writing {path.name}", total=None)
    bar.start()

    def advance(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)
        if done >= total:
            bar.stop()

    return advance


def _cell(value: Any, column: str = "") -> str:
    if column == "failed":
        return str(int(value))
    if column == "q/s":
        return f"{value:.0f}" if value == value else "-"
    if isinstance(value, float):
        return f"{value:.4f}" if value == value else "-"
    return str(value)


def _markdown(result: Any) -> str:
    summary = result.summary
    cols = list(summary.columns)
    lines = ["| system | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in summary.iterrows():
        lines.append(f"| {name} | " + " | ".join(_cell(row[c], c) for c in cols) + " |")
    if result.comparison is not None:
        from rankwise.rankeval.evaluation import display_label, metric_label
        from rankwise.report import formats

        text = formats.comparison_markdown(result.comparison)
        for m in result.spec.metrics:
            text = text.replace(f"| {metric_label(m)} |", f"| {display_label(m)} |")
        lines += ["", text]
    return "\n".join(lines)
