"""The options every evaluating command shares, defined once: the conventions (the same names
as ``rankwise.evaluate``'s keywords, ``rel_level`` -> ``--rel-level``), the default metrics,
and the statistics options of the commands that compare."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any

import typer

from rankwise.cli.vocabulary import DEFAULT_METRICS, as_flags, conventions_from, decimals  # noqa: F401  (re-exported)


class ReportFormat(str, Enum):
    """Output formats of the commands whose results are tables (``ope``, ``interleave``)."""

    table = "table"
    text = "text"
    json = "json"
    csv = "csv"
    markdown = "markdown"


_CONVENTION_OPTIONS: list[inspect.Parameter] = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    for name, default, annotation in [
        ("rel_level", 1, Annotated[int, typer.Option("-l", "--rel-level", help="A label >= N is relevant.",
                                                      rich_help_panel="Conventions")]),
        ("depth", None, Annotated[int | None, typer.Option("-M", "--depth", help="Evaluate the top N only.",
                                                            rich_help_panel="Conventions")]),
        ("judged_only", False, Annotated[bool, typer.Option("-J", "--judged-only",
                                                            help="Drop unjudged documents before ranking.",
                                                            rich_help_panel="Conventions")]),
        ("missing", "skip", Annotated[str, typer.Option(
            "--missing", help="Judged queries absent from a run: skip | zero.", rich_help_panel="Conventions")]),
        ("complete", False, Annotated[bool, typer.Option(
            "-c", "--complete", help="Same as --missing zero (trec_eval's -c).", rich_help_panel="Conventions")]),
        ("ties", None, Annotated[str | None, typer.Option(
            help="trec | input | docid_asc | expected (default trec, or the profile's).",
            rich_help_panel="Conventions")]),
        ("duplicates", None, Annotated[str | None, typer.Option(
            help="A document twice in one ranking: error | first | best.", rich_help_panel="Conventions")]),
        ("score_precision", None, Annotated[str | None, typer.Option(
            "--score-precision", help="float64 (trec_eval 10) | float32 (pytrec_eval).",
            rich_help_panel="Conventions")]),
        ("gains", None, Annotated[str | None, typer.Option(
            help="labels | above_level | binary.", rich_help_panel="Conventions")]),
        ("zero_division", None, Annotated[str | None, typer.Option(
            "--zero-division", help="Value where a measure is undefined: 0 | 1 | nan.",
            rich_help_panel="Conventions")]),
        ("profile", None, Annotated[str | None, typer.Option(
            help="trec_eval | trec_eval9 | pytrec_eval | ranx | recbole | elasticsearch | torchmetrics.",
            rich_help_panel="Conventions")]),
    ]
]


Command = Callable[..., Any]


def _with_options(options: list[inspect.Parameter], key: str,
                  pack: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Command], Command]:
    """A decorator adding ``options`` to a command's signature (Typer reads it); the command
    receives them as one dict under ``key``, built by ``pack``."""
    def decorate(command: Command) -> Command:
        signature = inspect.signature(command)
        hints = typing.get_type_hints(command, include_extras=True)  # the command's string annotations, resolved
        own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
               if p.name != key]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            return command(**{key: pack({p.name: kwargs.pop(p.name) for p in options})}, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=own + options)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in own + options}
        return wrapper

    return decorate


with_conventions = _with_options(_CONVENTION_OPTIONS, "conventions", conventions_from)
"""Add the convention options to a command; it receives them as one ``conventions`` dict
(``rankwise.evaluate``'s keyword arguments, ``profile`` included)."""


def _statistics_option(name: str, default: Any, annotation: Any, *flags: str, help: str) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[
        annotation, typer.Option(*flags, help=help, rich_help_panel="Statistics")])


_STATISTICS_OPTIONS: list[inspect.Parameter] = [
    _statistics_option("baseline", None, str | None, help="Compare every run with this one only."),
    _statistics_option("test", "t", str, help="The significance test; 'rankwise list comparison-tests' lists them."),
    _statistics_option("correction", "holm", str, help="Across the pairs of runs; 'rankwise list corrections' "
                                                      "lists them."),
    _statistics_option("alpha", 0.05, float, help="Significance level."),
    _statistics_option("permutations", 10_000, int, "--resamples", help="Randomisation / bootstrap resamples."),
    inspect.Parameter("permutations_old", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        int | None, typer.Option("--permutations", hidden=True, help="Deprecated: --resamples.")]),
    _statistics_option("seed", 0, int, help="Seed of the resampling tests and intervals."),
    _statistics_option("bootstrap_ci", None, str | None, "--bootstrap-ci",
                       help="Add a bootstrap interval: percentile | BCa"),
]

def _statistics_from(options: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``rankwise.compare``; the deprecated ``--permutations`` still gives
    ``permutations`` (the resamples), with a warning."""
    from rankwise.cli.output import deprecated_flag

    old = options.pop("permutations_old", None)
    options["permutations"] = deprecated_flag(options["permutations"], old, "--resamples", "--permutations", None)
    return options


with_statistics = _with_options(_STATISTICS_OPTIONS, "statistics", _statistics_from)
with_paired_tests = _with_options([p for p in _STATISTICS_OPTIONS if p.name != "bootstrap_ci"], "statistics",
                                  _statistics_from)
"""The statistics options of ``compare`` a command with per-user paired tests takes (no
bootstrap interval): ``rankwise beyond``'s runs against a baseline."""
"""Add the statistics options of ``compare`` and ``report`` (the keywords of
``rankwise.compare``); the command receives them as one ``statistics`` dict."""

Digits = Annotated[int, typer.Option("--digits", callback=decimals,
                                     help="Decimals shown in tables, 0 to 17 (JSON and CSV keep every digit).")]
"""The one ``--digits`` option of every command that prints a table."""

Metrics = Annotated[list[str] | None, typer.Option("-m", "--metric", help="Metric name; repeatable (default: "
                                                   + ", ".join(DEFAULT_METRICS) + ").")]


def _around(option: inspect.Parameter,
            run: Callable[[Any, Callable[[], Any]], Any]) -> Callable[[Command], Command]:
    """A decorator adding ``option`` to a command's signature; the command is called through
    ``run(value, call)``, which sets up what the option's value asks for around ``call()``."""
    def decorate(command: Command) -> Command:
        signature = inspect.signature(command)
        hints = typing.get_type_hints(command, include_extras=True)
        own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            value = kwargs.pop(option.name)
            return run(value, lambda: command(**kwargs))

        wrapper.__signature__ = signature.replace(parameters=[*own, option])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, option]}
        return wrapper

    return decorate


def with_columns(roles: dict[str, str], what: str) -> Callable[[Command], Command]:
    """Add ``--columns ROLE=NAME`` (repeatable) to a command: while it runs, every table it reads
    that has column NAME reads ``ROLE`` from it (``rankwise.data.columns.named_columns``)."""
    option = inspect.Parameter("columns", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
        list[str] | None, typer.Option("--columns", help=f"ROLE=NAME: the column of {what} that holds a role ("
                                       + ", ".join(roles) + ") when its name is none of the common spellings; "
                                       "repeat for more.")])

    def run(value: list[str] | None, call: Callable[[], Any]) -> Any:
        from rankwise.cli.output import fail
        from rankwise.data.columns import column_map, named_columns
        from rankwise.errors import RankwiseError

        try:
            mapping = column_map(value or [], roles, "--columns")
        except RankwiseError as error:
            fail(str(error))
        with named_columns(mapping):
            return call()

    return _around(option, run)


def _signed(value: bool, call: Callable[[], Any]) -> Any:
    from rankwise.cli.output import signing

    with signing(value):
        return call()


with_signature = _around(inspect.Parameter(
    "signature", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
        bool, typer.Option("--signature", help="Print the result's signature on standard error: the analysis, its "
                           "settings and conventions, and the rankwise version that produced the numbers (JSON "
                           "output holds it in its settings).")]), _signed)
"""Add ``--signature`` to a command that prints a result: given, the command prints the
result's signature(s) on standard error (``rankwise.cli.output.sign``)."""
