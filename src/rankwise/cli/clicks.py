"""``rankwise clicks``: fit click models to logs, score their predictions, rank documents by
fitted relevance, simulate clicks on rankings, store logs for streaming fits."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, with_signature
from rankwise.cli.output import deprecated_flag
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn
from rankwise.errors import RankwiseError

clicks_app = typer.Typer(help="Click models: fit, evaluate, rank, simulate, convert, split.", no_args_is_help=True)
app.add_typer(clicks_app, name="clicks")

Features = Annotated[str | None, typer.Option(
    "--features", help="A (query, doc, numeric features...) table: attractiveness becomes a logistic function of "
                       "the features, so pairs the log never showed are scored from them; 'placement': where the "
                       "engine placed each pair in the command's log (its mean log rank, no clicks read).")]
LogFormat = Annotated[str, typer.Option(
    "--log-format", help="auto | stored | yandex | long (session, query, rank, doc, click columns)")]
ChunkSize = Annotated[int, typer.Option(
    "--chunk-size", min=1, help="Sessions per chunk: memory follows the chunk, not the log.")]


class ClicksFormat(str, Enum):
    table = "table"
    text = "text"
    json = "json"
    csv = "csv"


ColumnMap = Annotated[list[str] | None, typer.Option(
    "--columns", help="ROLE=NAME: the column of a long-row log that holds a role (session, query, rank, doc, click) "
                      "when its name is none of the common spellings; repeat for more.")]


def _read(path: str, log_format: str, columns: list[str] | None = None) -> Any:
    from rankwise import clicks
    from rankwise.data.columns import column_map

    named: dict[str, Any] = column_map(columns or [], clicks.LONG_ROLES, "--columns")
    log = clicks.read_log(path, log_format, **named)
    _warn(log.notes)
    return log


def _model_option(model: Any, model_short: Any) -> Any:
    """``--model`` (required), or its deprecated short spelling ``-m``."""
    model = deprecated_flag(model, model_short, "--model", "-m", "--metric")
    if model is None:
        _fail("missing option --model")
    return model


def _progress(entry: dict[str, float]) -> None:
    held = entry.get("validation_log_likelihood")
    typer.echo(f"iteration {int(entry['iteration']):>3}  log-likelihood {entry['log_likelihood']:.6f}  "
               + (f"validation {held:.6f}  " if held is not None else "") + f"{entry['seconds']:.1f} s", err=True)


@clicks_app.command("fit")
def fit(
    log: Annotated[str, typer.Argument(help="A click log: Yandex format, long rows, or a stored log directory.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The fitted model (JSON).")],
    model: Annotated[str | None, typer.Option("--model", help="A click model, with hyperparameters as in "
                                                              "'dbn(prior=1,2, iterations=20)'; 'rankwise list "
                                                              "click-models' lists them. Required.")] = None,
    model_short: Annotated[str | None, typer.Option("-m", hidden=True)] = None,
    iterations: Annotated[int | None, typer.Option(help="EM: at most this many iterations, a guard that warns when "
                                                        "reached (default 1000).")] = None,
    tolerance: Annotated[float | None, typer.Option(
        help="EM: stop when the log-likelihood per session gains less (default 1e-6).")] = None,
    parameter_tolerance: Annotated[float | None, typer.Option(
        "--parameter-tolerance", help="EM: and when no probability moves by more in one pass (default 1e-4; inf: "
                                      "the log-likelihood alone decides).")] = None,
    prior: Annotated[str | None, typer.Option(
        help="Beta prior of the per-pair parameters: 'empirical' (default; fitted to the log) or fixed "
             "pseudo-counts CLICKS,IMPRESSIONS such as 1,2.")] = None,
    prior_structure: Annotated[str | None, typer.Option(
        "--prior-structure", help="What the empirical prior's mean follows: placement | flat. placement (the "
                                  "default): rare pairs shrink to the attractiveness of the rank the engine gives "
                                  "them; flat: one Beta for all; 'rankwise list prior-structures'.")] = None,
    acceleration: Annotated[str | None, typer.Option(
        "--acceleration", help="EM: squarem | none. squarem (the default): the same limit in fewer passes; none: "
                               "plain EM; 'rankwise list accelerations'.")] = None,
    floor: Annotated[float | None, typer.Option(
        help="Cascade: click probability after the first click (default 1e-6).")] = None,
    chunk_size: ChunkSize = 250_000,
    log_format: LogFormat = "auto",
    columns: ColumnMap = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Chunks fitted at once in threads (default: one per core, "
                                                     "at most 4).")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    quiet_short: Annotated[bool, typer.Option("-q", hidden=True)] = False,
    validation: Annotated[str | None, typer.Option(
        "--validation", help="A held-out log (e.g. from 'rankwise clicks split'): EM stops when its log-likelihood "
                             "has not improved for --patience iterations and keeps the best iteration.")] = None,
    patience: Annotated[int, typer.Option("--patience", min=1, help="EM iterations without a better validation "
                                                                    "log-likelihood before stopping.")] = 3,
    features: Features = None,
    l2: Annotated[float, typer.Option("--l2", min=0.0, help="With --features or --hash-ids: L2 penalty on the "
                                                            "feature weights.")] = 1.0,
    hash_ids: Annotated[str | None, typer.Option(
        "--hash-ids", help="Hash these ids into features (doc, query or doc,query), with or without --features: a "
                           "document's attractiveness carries to queries where it was never shown.")] = None,
    buckets: Annotated[int, typer.Option("--buckets", min=1, max=2**24,
                                         help="With --hash-ids: buckets per hashed id.")] = 4096,
) -> None:
    """Fit a click model (counting, or EM with a progress line per iteration) and save it."""
    from rankwise import clicks
    from rankwise.clicks.registry import MODELS, fittable

    model = _model_option(model, model_short)
    quiet = deprecated_flag(quiet, quiet_short, "--quiet", "-q", "--per-query")
    if quiet:
        from rankwise.progress import silence

        silence()
    try:
        kind, values = MODELS.parse(model, prior=prior, floor=floor, iterations=iterations, tolerance=tolerance,
                                    parameter_tolerance=parameter_tolerance, prior_structure=prior_structure,
                                    acceleration=acceleration)
        if not kind.fittable:
            raise RankwiseError(f"--model: {kind.name} is not fitted to a log; expected one of {', '.join(fittable())}")
    except RankwiseError as exc:
        _fail(str(exc))
        return
    try:
        data = _read(log, log_format, columns)
        held_out = None if validation is None else _read(validation, log_format, columns)
        built = kind.build(values)
        if features is not None or hash_ids:
            hashed = tuple(h.strip() for h in (hash_ids or "").split(",") if h.strip())
            built.use_features(_feature_table(features, data), l2, hashed=hashed, buckets=buckets)
        fitted = built.fit(data, chunk_size=chunk_size, workers=workers,
                                        progress=None if quiet else _progress, validation=held_out,
                                        patience=patience, **kind.fit_options(values))
        clicks.save_model(fitted, output)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    _warn(getattr(fitted, "warnings", []))
    best = f" (best on the validation log: {fitted.best_iteration})" if fitted.best_iteration else ""
    typer.echo(f"{kind.name}: {data.sessions} sessions, {data.n_pairs} (query, document) pairs"
               + (f", {len(fitted.history)} iterations{best}" if fitted.history else "") + f" -> {output}", err=True)


def _feature_table(features: str | None, log: Any) -> Any:
    """The ``--features`` value: a table's path, or the placement features of ``log``."""
    from rankwise.clicks.features import PLACEMENT, placement_features

    if features != PLACEMENT:
        return None if features is None else Path(features)
    if log is None:
        raise RankwiseError("--features placement reads where the engine placed each pair: give the click log too")
    return placement_features(log)


def _model(path: Path, features: str | None = None, log: Any = None) -> Any:
    from rankwise import clicks

    model = clicks.load_model(path)
    return model if features is None else model.use_features(_feature_table(features, log))


@clicks_app.command("evaluate")
@with_signature
def evaluate(
    log: Annotated[str, typer.Argument(help="A click log to score the models' predictions on (held-out).")],
    model: Annotated[list[Path] | None, typer.Option(
        "--model", help="A fitted model (JSON from rankwise clicks fit); repeat to compare several. Required.")] = None,
    model_short: Annotated[list[Path] | None, typer.Option("-m", hidden=True)] = None,
    fmt: Annotated[ClicksFormat, typer.Option("--format", "-f", help="Output format.")] = ClicksFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Digits = 4,
    plot: Annotated[Path | None, typer.Option("--plot", help="Also draw conditional perplexity per rank, one line "
                                                              "per model (.png, .svg or .pdf).")] = None,
    chunk_size: ChunkSize = 250_000,
    log_format: LogFormat = "auto",
    columns: ColumnMap = None,
    features: Features = None,
) -> None:
    """Log-likelihood, perplexity and conditional perplexity per rank and overall, of one
    model or of several side by side."""
    paths = _model_option(model or None, model_short or None)
    from rankwise import clicks
    from rankwise.report.grid import Grid

    try:
        data = _read(log, log_format, columns)
        fitted = [_model(path, features, data) for path in paths]
        names = _model_names(paths, fitted)
        evaluated = {name: clicks.evaluate_model(m, data, chunk_size=chunk_size)
                     for name, m in zip(names, fitted, strict=True)}
        tables = {name: result.table for name, result in evaluated.items()}
    except RankwiseError as exc:
        _fail(str(exc))
        return
    for result in evaluated.values():
        _sign(result)
    if plot is not None:
        from rankwise.report.plots import click_perplexity_per_rank

        click_perplexity_per_rank(tables, Path(log).name, plot)
    warned = list(getattr(data, "notes", []))   # what reading the log left out: in every format's file too
    if fmt is ClicksFormat.json:
        body: Any = ({"model": fitted[0].name, "ranks": tables[names[0]].to_dict(orient="records")} if len(paths) == 1
                     else {"models": [{"model": name, "ranks": table.to_dict(orient="records")}
                                      for name, table in tables.items()]})
        _emit(json.dumps({**body, "warnings": warned}, indent=2), output)
        return
    if fmt is ClicksFormat.csv:
        import pandas as pd

        from rankwise.report.annotate import csv_text

        frame = tables[names[0]] if len(paths) == 1 else pd.concat(
            [table.assign(model=name)[["model", *table.columns]] for name, table in tables.items()], ignore_index=True)
        _emit(csv_text(frame, warned), output)
        return
    measures = ("log_likelihood", "perplexity", "conditional_perplexity")
    if len(paths) == 1:
        table = tables[names[0]]
        rows = [[str(r["rank"]), str(r["impressions"]), str(r["clicks"])] + [f"{r[c]:.{digits}f}" for c in measures]
                for r in table.to_dict(orient="records")]
        grids = [Grid(f"{fitted[0].name} on {log}", ["rank", "impressions", "clicks", "log-likelihood", "perplexity",
                                                     "cond. perplexity"], rows, [False] + [True] * 5,
                      strong_rows={len(rows) - 1})]
    else:
        first = tables[names[0]]
        per_rank = [[str(rank)] + [f"{tables[n].loc[i, 'conditional_perplexity']:.{digits}f}" for n in names]
                    for i, rank in enumerate(first["rank"])]
        overall = [[name] + [f"{tables[name].iloc[-1][c]:.{digits}f}" for c in measures] for name in names]
        grids = [Grid(f"models on {log}", ["model", "log-likelihood", "perplexity", "cond. perplexity"], overall,
                      [False, True, True, True]),
                 Grid("conditional perplexity per rank (1 is perfect)", ["rank", *names], per_rank,
                      [False] + [True] * len(names), strong_rows={len(per_rank) - 1})]
    _show_grids(grids, output, plain=fmt is ClicksFormat.text, warnings=warned)


def _model_names(paths: list[Path], fitted: list[Any]) -> list[str]:
    """Each model's name in tables: its kind, or its file's stem when two share a kind."""
    kinds = [m.name for m in fitted]
    names = [kind if kinds.count(kind) == 1 else path.stem for kind, path in zip(kinds, paths, strict=True)]
    if len(set(names)) != len(names):
        names = [str(path) for path in paths]
    return names


@clicks_app.command("rank")
def rank(
    output: Annotated[Path, typer.Option("-o", "--output", help="The run (TREC format).")],
    model: Annotated[Path | None, typer.Option("--model", help="A fitted model (JSON). Required.")] = None,
    model_short: Annotated[Path | None, typer.Option("-m", hidden=True)] = None,
    log: Annotated[str | None, typer.Argument(
        help="Rank the (query, document) pairs of this log (default: the model's own pairs).")] = None,
    name: Annotated[str | None, typer.Option(help="The run's name (default: the model's).")] = None,
    log_format: LogFormat = "auto",
    columns: ColumnMap = None,
    bound: Annotated[str, typer.Option("--bound", help="mean: each pair's estimate; lower: its parameters' lower "
                                                       "credible bounds (rare pairs rank below well-observed "
                                                       "ones).")] = "mean",
    level: Annotated[float, typer.Option("--level", min=0.0, max=1.0,
                                         help="Credible level of --bound lower (strictly between 0 and 1).")]
    = 0.95,
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="Editorial labels to score the ranking against (CLARA 2 'query url relevance' table, "
                         "Yandex 'query region url label' lines, or TREC qrels); queries numbered differently "
                         "from the log are matched by the documents they label.")] = None,
    labels_format: Annotated[str, typer.Option("--labels-format", help="auto | table | yandex | qrels")] = "auto",
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", help="Metrics against --labels (default ndcg_cut_5 and ndcg_cut_10).")] = None,
    features: Features = None,
    by: Annotated[str, typer.Option("--by", help="The ranking rule: relevance | attractiveness | satisfaction. "
                                                 "relevance (the default) is the model's authors' definition: "
                                                 "attractiveness x satisfaction for DBN and SDBN; 'rankwise list "
                                                 "click-rankings'.")] = "relevance",
) -> None:
    """Rank documents per query by fitted relevance (attractiveness; x satisfaction for DBN
    and SDBN; --by another rule) as a TREC run; with --labels, also score it against editorial
    labels next to an all-tied ranking (and, given LOG, the order the log showed)."""
    model = _model_option(model, model_short)
    from rankwise.data.trec_io import write_trec_run

    try:
        data = None if log is None else _read(log, log_format, columns)
        fitted = _model(model, features, data)
        if bound not in ("mean", "lower"):
            raise RankwiseError(f"--bound must be mean or lower, got {bound!r}")
        if not 0 < level < 1:
            raise RankwiseError(f"--level {level:g}: a credible level lies strictly between 0 and 1")
        run = fitted.relevance(name, data, bound=bound, level=level, by=by)
        scored = None if labels is None else _score_against_labels(run, fitted, data, labels, labels_format,
                                                                    metric or ["ndcg_cut_5", "ndcg_cut_10"])
        write_trec_run(run, output)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    typer.echo(f"{len(run)} (query, document) scores -> {output}", err=True)
    if scored is not None:
        _show_grids([scored], None, plain=False)


def _score_against_labels(run: Any, fitted: Any, data: Any, labels: Path, labels_format: str,
                          metrics: list[str]) -> Any:
    """A grid of ``metrics`` for the relevance run, an all-tied ranking and (with a log) the
    log's shown order, against the labels matched to the log's query numbering."""
    import numpy as np
    import pyarrow as pa

    from rankwise.clicks.labels import match_queries, read_labels
    from rankwise.data.containers import Run
    from rankwise.evaluation import evaluate as evaluate_runs
    from rankwise.report.grid import Grid

    source = data if data is not None else fitted
    judged, note = match_queries(read_labels(labels, labels_format), source)
    _warn([note])
    runs = [run, Run(run.query, run.doc, np.zeros(len(run)), name="all tied", source="<ties>")]
    if data is not None and hasattr(data, "query"):
        first = np.zeros(data.sessions, dtype=bool)      # each query's first page in the log
        first[np.unique(data.query, return_index=True)[1]] = True
        docs = np.where(data.mask[first], data.docs[first], -1)
        keep = docs >= 0
        queries = np.repeat(np.asarray(data.query_ids, dtype=object)[data.query[first]], data.ranks)[keep.ravel()]
        shown_docs = np.asarray(data.doc_ids, dtype=object)[docs[keep]]
        ranks = np.tile(np.arange(1.0, data.ranks + 1), int(first.sum()))[keep.ravel()]
        runs.append(Run(pa.array(queries.astype(str), pa.string()), pa.array(shown_docs.astype(str), pa.string()),
                        -ranks, name="shown order", source="<log>"))
    result = evaluate_runs(judged, runs, metrics, duplicates="first")
    rows = [[r.name] + [f"{result.summary[m][r.name]:.4f}" for m in result.summary.columns] for r in runs]
    return Grid(f"relevance ranking against {labels.name} ({len(judged):,} labels)", ["ranking",
                *result.summary.columns], rows, [False] + [True] * len(result.summary.columns))


@clicks_app.command("simulate")
def simulate(
    run: Annotated[str, typer.Argument(help="Rankings: a run file (TREC, CSV, Parquet ...).")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Long rows (.parquet, .csv, .tsv) or, without "
                                                                "one of those suffixes, a stored log directory.")],
    model: Annotated[Path | None, typer.Option("--model", help="A fitted model (JSON), or an ULTRA parameter file "
                                                              "with --qrels. Required.")] = None,
    model_short: Annotated[Path | None, typer.Option("-m", hidden=True)] = None,
    qrels: Annotated[str | None, typer.Option(help="Relevance labels for an ULTRA parameter file.")] = None,
    sessions: Annotated[int, typer.Option("--sessions", min=1, help="Sessions per query.")] = 100,
    list_size: Annotated[int, typer.Option("--list-size", min=1,
                                           help="Documents shown per session (the run's top).")] = 10,
    depth_old: Annotated[int | None, typer.Option("--depth", hidden=True, min=1, help="Deprecated: --list-size.")
                         ] = None,
    seed: Annotated[int, typer.Option(help="Random seed (any integer).")] = 0,
) -> None:
    """Simulate clicks on a run's rankings from a fitted model or an ULTRA parameter file."""
    model = _model_option(model, model_short)
    depth = deprecated_flag(list_size, depth_old, "--list-size", "--depth", "evaluation depth")
    from rankwise import clicks
    from rankwise.clicks.persist import model_from_document

    try:
        from rankwise.clicks.persist import read_json

        if not model.exists():
            _fail(f"{model}: no such file")
        spec = read_json(model)   # read once: a fitted model or an ULTRA file
        ultra = isinstance(spec, dict) and "click_prob" in spec
        if ultra and qrels is None:
            _fail(f"{model} is an ULTRA parameter file: give the relevance labels with --qrels")
        shown = clicks.sessions_from_run(run, depth=depth, repeat=sessions)
        _warn(shown.notes)
        if ultra:
            clicked = clicks.simulate(clicks.from_ultra(model, qrels, shown), shown, seed=seed)
        else:
            clicked = clicks.simulate(model_from_document(spec, str(model)), shown, seed=seed)
        _write_log(clicked, output)
    except (RankwiseError, json.JSONDecodeError) as exc:
        _fail(f"{model}: not JSON ({exc})" if isinstance(exc, json.JSONDecodeError) else str(exc))
        return
    typer.echo(f"{clicked.sessions} sessions, {int(clicked.clicks.sum())} clicks -> {output}", err=True)


def _write_log(log: Any, output: Path) -> None:
    from rankwise import clicks
    from rankwise.data.atomic import atomic_path

    suffix = output.suffix.lower()
    if suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        with atomic_path(output) as temporary:
            pq.write_table(log.to_long(), temporary)
    elif suffix in (".csv", ".tsv"):
        with atomic_path(output) as temporary:
            log.to_long().to_pandas().to_csv(temporary, sep="\t" if suffix == ".tsv" else ",", index=False)
    else:
        clicks.save_log(log, output)


@clicks_app.command("convert")
def convert(
    log: Annotated[str, typer.Argument(help="A click log: Yandex format or long rows.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="Long rows (.parquet, .csv, .tsv) or a stored log "
                                                                "directory (fits stream it chunk by chunk).")],
    log_format: LogFormat = "auto",
    columns: ColumnMap = None,
) -> None:
    """Convert a click log: to a stored log for streaming fits, or to long rows."""
    try:
        data = _read(log, log_format, columns)
        _write_log(data.load() if hasattr(data, "directory") else data, output)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    typer.echo(f"{data.sessions} sessions -> {output}", err=True)


class SplitBy(str, Enum):
    session = "session"
    query = "query"
    time = "time"


@clicks_app.command("split")
def split(
    log: Annotated[str, typer.Argument(help="A click log: Yandex format, long rows, or a stored log directory.")],
    train: Annotated[Path, typer.Option("--train", help="Where the training part goes: long rows (.parquet, .csv, "
                                                        ".tsv) or a stored log directory.")],
    held_out: Annotated[Path, typer.Option("--held-out", help="Where the held-out part goes (same formats).")],
    by: Annotated[SplitBy, typer.Option("--by", help="session: pages held out at random; query: whole queries held "
                                                     "out (their pairs unseen); time: the last pages in log order.")]
    = SplitBy.session,
    test_share: Annotated[float, typer.Option("--test-share", min=0.0, max=1.0,
                                              help="Share of sessions (or queries) held out.")] = 0.25,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random split.")] = 0,
    log_format: LogFormat = "auto",
    columns: ColumnMap = None,
) -> None:
    """Split a click log into a training and a held-out part, seeded and reproducible."""
    try:
        data = _read(log, log_format, columns)
        whole = data.load() if hasattr(data, "directory") else data
        fit_part, kept_out = whole.split(test_share=test_share, seed=seed, by=by.value)
        _write_log(fit_part, train)
        _write_log(kept_out, held_out)
    except RankwiseError as exc:
        _fail(str(exc))
        return
    typer.echo(f"{whole.sessions} sessions by {by.value}: {fit_part.sessions} -> {train}, {kept_out.sessions} -> "
               f"{held_out}", err=True)
