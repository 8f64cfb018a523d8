"""A fast start for ``rankwise evaluate``: its command line read without loading Typer.

Typer and the application it builds take about as long to load as evaluating a small run. The
options of ``evaluate`` are therefore also written down here, as data (``EVALUATE_OPTIONS``),
and a test checks that they are exactly what the Typer command declares (``options_of``). A
command line this reader does not fully understand (``--help``, an unknown or combined option,
a value it cannot convert, a cluster engine) is left to Typer, which parses and reports as usual;
so the fast start only ever runs command lines whose meaning it knows.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NamedTuple


class QuickOption(NamedTuple):
    """One option as Typer declares it: its parameter name, flags, kind (``flag``, ``int``,
    ``str``, ``path`` or ``choice``), default, choices and whether it repeats."""

    name: str
    flags: tuple[str, ...]
    kind: str
    default: Any = None
    choices: tuple[str, ...] = ()
    multiple: bool = False


EVALUATE_OPTIONS: tuple[QuickOption, ...] = (
    QuickOption("metric", ("-m", "--metric"), "str", None, (), True),
    QuickOption("per_query", ("-q", "--per-query"), "flag", False),
    QuickOption("continuous", ("--continuous",), "flag", False),
    QuickOption("fmt", ("--format", "-f"), "choice", "table",
                ("table", "text", "json", "csv", "trec", "markdown", "latex")),
    QuickOption("digits", ("--digits",), "int", 4),
    QuickOption("output", ("-o", "--output"), "path"),
    QuickOption("engine", ("--engine",), "choice", "memory", ("memory", "chunks", "dask", "spark")),
    QuickOption("chunk_rows", ("--chunk-rows",), "int"),
    QuickOption("scheduler", ("--scheduler",), "str"),
    QuickOption("signature", ("--signature",), "flag", False),
    QuickOption("rel_level", ("-l", "--rel-level"), "int", 1),
    QuickOption("depth", ("-M", "--depth"), "int"),
    QuickOption("judged_only", ("-J", "--judged-only"), "flag", False),
    QuickOption("missing", ("--missing",), "str", "skip"),
    QuickOption("complete", ("-c", "--complete"), "flag", False),
    QuickOption("ties", ("--ties",), "str"),
    QuickOption("duplicates", ("--duplicates",), "str"),
    QuickOption("score_precision", ("--score-precision",), "str"),
    QuickOption("gains", ("--gains",), "str"),
    QuickOption("zero_division", ("--zero-division",), "str"),
    QuickOption("profile", ("--profile",), "str"),
    QuickOption("columns", ("--columns",), "str", None, (), True),
)
"""The options of ``rankwise evaluate``, as ``options_of`` reads them from the Typer command."""

EVALUATE_ARGUMENTS = ("qrels", "runs")
"""Its arguments: one qrels, then one or more runs."""


_KINDS = {"StringParamType": "str", "IntParamType": "int", "Choice": "choice", "TyperChoice": "choice",
          "Path": "path", "TyperPath": "path"}
"""Click's parameter types (by class name) that this reader converts as Click does."""


def options_of(command: Any) -> tuple[QuickOption, ...]:
    """The options of a Click command (``typer.main.get_command(app).commands[name]``) in the
    form of ``EVALUATE_OPTIONS``; a kind this reader does not handle is named ``unsupported``."""
    out = []
    for p in command.params:
        if p.param_type_name != "option":
            continue
        if p.is_flag and not p.secondary_opts and not p.count:
            kind = "flag"
        else:
            kind = _KINDS.get(type(p.type).__name__, "unsupported")
        default = getattr(p.default, "value", p.default)
        choices = tuple(p.type.choices) if kind == "choice" else ()
        out.append(QuickOption(p.name, tuple(p.opts), kind, default, choices, bool(p.multiple)))
    return tuple(out)


def parse(argv: Sequence[str], options: tuple[QuickOption, ...] = EVALUATE_OPTIONS) -> dict[str, Any] | None:
    """The parameters a command line sets (``qrels``, ``runs`` and every option, defaults filled
    in), or None when it holds anything this reader leaves to Typer.

    >>> parse(["qrels.txt", "bm25.trec", "-m", "map", "--metric=P@10", "-l", "2"])["metric"]
    ['map', 'P@10']
    >>> parse(["qrels.txt", "bm25.trec", "-l", "2"])["rel_level"]
    2
    >>> parse(["qrels.txt", "bm25.trec", "--help"]) is None
    True
    >>> parse(["qrels.txt", "bm25.trec", "-f", "yaml"]) is None  # Typer names the choices
    True
    """
    by_flag = {flag: option for option in options for flag in option.flags}
    values: dict[str, Any] = {o.name: [] if o.multiple else o.default for o in options}
    positional: list[str] = []
    args = list(argv)
    only_positional = False
    while args:
        arg = args.pop(0)
        if only_positional or arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        if arg == "--":
            only_positional = True
            continue
        flag, equals, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        option = by_flag.get(flag)
        if option is None or option.kind == "unsupported":
            return None
        if option.kind == "flag":
            if equals:
                return None
            values[option.name] = True
            continue
        if equals:
            text = attached
        elif args and not args[0].startswith("-"):
            text = args.pop(0)
        else:
            return None
        value = _convert(option, text)
        if value is None:
            return None
        if option.multiple:
            values[option.name].append(value)
        else:
            values[option.name] = value
    if len(positional) < len(EVALUATE_ARGUMENTS):
        return None
    for option in options:
        if option.multiple and not values[option.name]:
            values[option.name] = None
    return {"qrels": positional[0], "runs": positional[1:], **values}


def _convert(option: QuickOption, text: str) -> Any:
    """``text`` as the option's type, or None where Typer would refuse it (and explain why)."""
    if option.kind == "int":
        try:
            return int(text)
        except ValueError:
            return None
    if option.kind == "choice":
        return text if text in option.choices else None
    if option.kind == "path":
        from pathlib import Path

        return Path(text)
    return text


def quick_evaluate(argv: Sequence[str]) -> int | None:
    """Run ``rankwise evaluate`` with the arguments after the command name and return its exit
    status, or None (nothing done) when the command line is Typer's to read. Runs on a cluster
    engine are left to Typer too: their clients clean up when the process ends normally."""
    from rankwise.cli.vocabulary import CONVENTION_KEYWORDS, conventions_from

    given = parse(argv)
    if given is None or given["engine"] not in ("memory", "chunks"):
        return None
    from rankwise.cli.evaluating import evaluate_files
    from rankwise.cli.output import fail, signing
    from rankwise.data.columns import RUN_ROLES, column_map, named_columns
    from rankwise.errors import RankwiseError

    conventions = conventions_from({name: given[name] for name in CONVENTION_KEYWORDS})
    try:
        try:
            named = column_map(given["columns"] or [], RUN_ROLES, "--columns")
        except RankwiseError as error:
            fail(str(error))
        with named_columns(named), signing(given["signature"]):
            evaluate_files(given["qrels"], given["runs"], given["metric"], per_query=given["per_query"],
                           fmt=given["fmt"], digits=given["digits"], output=given["output"], engine=given["engine"],
                           chunk_rows=given["chunk_rows"], scheduler=given["scheduler"], conventions=conventions,
                           continuous=given["continuous"])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def run_quick(command: str, argv: Sequence[str]) -> int | None:
    """Run ``trec-eval``, ``ndeval`` or ``evaluate`` without Typer and return the exit status
    (None: ``evaluate`` leaves this command line to Typer). Output cut short by its reader
    (``| head``) ends the command with status 1 and no traceback, as Click does."""
    try:
        if command == "trec-eval":
            from rankwise.cli.trec_eval import run_trec_eval

            return run_trec_eval(argv)
        if command == "ndeval":
            from rankwise.cli.ndeval import run_ndeval

            return run_ndeval(argv)
        return quick_evaluate(argv)
    except BrokenPipeError:
        return 1


def run_files(command: str, argv: Sequence[str]) -> list[str]:
    """The run files a short command line will read whole, to be read ahead while the command
    gets ready (``rankwise.data.load.reading_ahead``): the runs of ``evaluate`` in memory (not
    standard input, not with another engine), the last argument of ``trec-eval`` (its run, as
    in trec_eval's syntax). A command line this reader does not understand names none.

    >>> run_files("evaluate", ["qrels", "bm25.trec", "SPLADE=splade.trec", "-", "-m", "map"])
    ['bm25.trec', 'splade.trec']
    >>> run_files("evaluate", ["qrels", "bm25.trec", "--engine", "chunks"]), run_files("trec-eval", ["q", "r"])
    ([], ['r'])
    """
    if command == "trec-eval":
        return [argv[-1]] if len(argv) >= 2 and not argv[-1].startswith("-") else []
    given = parse(argv) if command == "evaluate" else None
    if given is None or given["engine"] != "memory":
        return []
    from rankwise.cli.output import named_runs

    paths = [r[1] if isinstance(r, tuple) else r for r in named_runs(given["runs"])]
    return [p for p in paths if p != "-"]


def exit_now(code: int) -> None:
    """End the process with ``code`` once standard output and error are flushed, without tearing
    the interpreter down (freeing every module and array takes longer than a small evaluation;
    every file the command wrote is closed by then)."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            code = code or 1
    os._exit(code)
