"""The words the evaluating commands share, without the Typer application: the default metrics,
the convention keywords (``rankwise.evaluate``'s, ``rel_level`` -> ``--rel-level``) and how
options given on the command line become those keywords."""

from __future__ import annotations

import re
from typing import Any

DEFAULT_METRICS = ("ndcg@10", "map", "recip_rank", "P@10", "recall@100")
"""The metrics of ``evaluate``, ``compare`` and ``report`` when none is named (Python and CLI)."""

CONVENTION_KEYWORDS = ("rel_level", "depth", "judged_only", "missing", "complete", "ties", "duplicates",
                       "score_precision", "gains", "zero_division", "profile")
"""The convention options of every evaluating command (a test checks them against the options
``rankwise.cli.options`` declares)."""


ARGUMENT_OPTIONS = {"test": "--held-out FILE", "train": "--train FILE", "features": "--features FILE",
                    "groups": "--groups FILE", "catalogue": "--catalogue FILE"}
"""Python arguments that name an input (``give test=``) and the options that give it on the
command line."""


def as_flags(message: str) -> str:
    """A message written for Python callers, with the convention keywords it suggests spelled as
    the command-line options that set them, and the input arguments it asks for as the options
    that give them (one vocabulary, two spellings).

    >>> as_flags("Pass duplicates='first' or 'best' to keep one (missing='zero' scores them 0)")
    "Pass --duplicates first (or 'best') to keep one (--missing zero scores them 0)"
    >>> as_flags("<input>: field 'test': accuracy metrics need held-out interactions: give test=")
    '--held-out: accuracy metrics need held-out interactions: give --held-out FILE'
    """
    names = "|".join(CONVENTION_KEYWORDS)

    def flag(m: re.Match[str]) -> str:
        alternative = f" (or {m.group(3)})" if m.group(3) else ""
        return f"--{m.group(1).replace('_', '-')} {m.group(2)}{alternative}"

    message = re.sub(rf"\b({names})='([^']*)'(?: or ('[^']*'))?", flag, message)
    inputs = "|".join(ARGUMENT_OPTIONS)
    message = re.sub(rf"(?:<input>: )?field '({inputs})': ", lambda m: f"{ARGUMENT_OPTIONS[m.group(1)].split()[0]}: ",
                     message)
    return re.sub(rf"\b({inputs})=(?=[\s),;]|$)", lambda m: ARGUMENT_OPTIONS[m.group(1)], message)


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


MAX_DIGITS = 17
"""The most decimals a table shows (a double holds about 17 significant digits)."""


def decimals(digits: int) -> int:
    """``--digits`` checked: a whole number of decimals from 0 to ``MAX_DIGITS``.

    >>> decimals(4)
    4
    >>> decimals(-3)
    Traceback (most recent call last):
    ...
    rankwise.errors.OptionError: --digits must be between 0 and 17, got -3
    >>> decimals(0), decimals(17)
    (0, 17)
    >>> decimals(18)
    Traceback (most recent call last):
    ...
    rankwise.errors.OptionError: --digits must be between 0 and 17, got 18
    """
    from rankwise.errors import OptionError

    if not 0 <= digits <= MAX_DIGITS:
        raise OptionError(f"--digits must be between 0 and {MAX_DIGITS}, got {digits}")
    return digits


FORMATS = {"table": "a rich table on a terminal, plain text elsewhere", "text": "plain aligned text",
           "json": "every number, JSON", "csv": "every number, CSV", "markdown": "a Markdown table",
           "html": "one self-contained page", "latex": "a LaTeX table", "trec": "trec_eval's text",
           "statistics": "the per-variant sufficient statistics (CSV)"}
"""The one set of output formats: every command's ``--format`` takes a subset of these names,
each meaning the same thing everywhere."""

IDEAS = {
    "resamples": ("--resamples", ("--permutations",)),
    "evaluation depth": ("--depth", ()),
    "list size": ("--list-size", ("--depth",)),
    "output format": ("--format", ()),
    "seed": ("--seed", ()),
    "significance level": ("--alpha", ()),
    "output file": ("--output", ()),
    "columns": ("--columns", ()),
}
"""One idea, one long option: the option every command spells it with, and its old spellings,
which stay only as hidden, deprecated aliases (``tests/test_cli_vocabulary.py``)."""
