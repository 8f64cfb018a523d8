"""The options every evaluating command shares, defined once: the conventions (the same names
as ``rankwise.evaluate``'s keywords, ``rel_level`` -> ``--rel-level``), the default metrics,
and the resampling options of the commands that compare."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import typer

DEFAULT_METRICS = ("ndcg@10", "map", "recip_rank", "P@10", "recall@100")
"""The metrics of ``evaluate``, ``compare`` and ``report`` when none is named (Python and CLI)."""

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
            help="trec_eval | ranx | recbole | elasticsearch | torchmetrics.", rich_help_panel="Conventions")]),
    ]
]


def conventions_from(options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``rankwise.evaluate`` for the convention options given on the
    command line (options left at their default are not passed, so a profile's own apply).

    >>> conventions_from({"rel_level": 2, "depth": None, "judged_only": False, "missing": "skip",
    ...                   "complete": True, "ties": None, "duplicates": None, "score_precision": None,
    ...                   "gains": None, "zero_division": None, "profile": None})
    {'rel_level': 2, 'missing': 'zero'}
    """
    out: dict[str, Any] = {}
    if options["profile"] is not None:
        out["profile"] = options["profile"]
    if options["rel_level"] != 1:
        out["rel_level"] = options["rel_level"]
    if options["depth"] is not None:
        out["depth"] = options["depth"]
    if options["judged_only"]:
        out["judged_only"] = True
    if options["complete"] or options["missing"] != "skip":
        out["missing"] = "zero" if options["complete"] else options["missing"]
    for name in ("ties", "duplicates", "score_precision", "gains", "zero_division"):
        if options[name] is not None:
            out[name] = options[name]
    return out


def with_conventions(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the convention options to a command; it receives them as one ``conventions`` dict
    (``rankwise.evaluate``'s keyword arguments, ``profile`` included)."""
    signature = inspect.signature(command)
    hints = typing.get_type_hints(command, include_extras=True)  # the command's string annotations, resolved
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
              if p.name != "conventions"]

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        options = {p.name: kwargs.pop(p.name) for p in _CONVENTION_OPTIONS}
        return command(conventions=conventions_from(options), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params + _CONVENTION_OPTIONS)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params + _CONVENTION_OPTIONS}
    return wrapper


# the options of ``compare`` and ``report`` that set the statistics (the names of ``rankwise.compare``)
Test = Annotated[str, typer.Option(help="t | wilcoxon | sign | randomization | bootstrap | tukey | nemenyi",
                                   rich_help_panel="Statistics")]
Correction = Annotated[str, typer.Option(help="holm | bonferroni | bh | none", rich_help_panel="Statistics")]
Alpha = Annotated[float, typer.Option(help="Significance level.", rich_help_panel="Statistics")]
Permutations = Annotated[int, typer.Option(help="Randomisation / bootstrap resamples.", rich_help_panel="Statistics")]
Seed = Annotated[int, typer.Option(help="Seed of the resampling tests and intervals.", rich_help_panel="Statistics")]
BootstrapCI = Annotated[str | None, typer.Option("--bootstrap-ci", help="Add a bootstrap interval: percentile | BCa",
                                                 rich_help_panel="Statistics")]
Baseline = Annotated[str | None, typer.Option(help="Compare every run with this one only.",
                                              rich_help_panel="Statistics")]
Metrics = Annotated[list[str] | None, typer.Option("-m", "--metric", help="Metric name; repeatable (default: "
                                                   + ", ".join(DEFAULT_METRICS) + ").")]
