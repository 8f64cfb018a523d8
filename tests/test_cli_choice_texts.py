"""Every choice list written by hand in a command's help (``pbm | cascade | ubm | dbn``) names
exactly the members of the registry, the literal type or the enum that decides what the command
takes; a new hand-written list fails here until it is tied to its source."""

from __future__ import annotations

import re
from typing import Any, get_args

from typer.main import get_command

from rankwise.cli.main import app

CHOICES = re.compile(r"(?:[\w.@-]+ \| )+[\w.@-]+")


def _sources() -> dict[str, tuple[str, ...]]:
    """Each option (or argument) with a hand-written list, and the values its source declares."""
    from rankwise.cli.commands import PlotKind
    from rankwise.cli.rank_eval import BackendKind
    from rankwise.clicks.acceleration import ACCELERATIONS
    from rankwise.clicks.read import FORMATS as LOG_FORMATS
    from rankwise.clicks.structure import PRIOR_STRUCTURES, RANKINGS
    from rankwise.engine.conventions import Duplicates, Gains, Missing, Ties, ZeroDivision
    from rankwise.experiments.analysis import P_VALUES
    from rankwise.experiments.capping import CAP_CONVENTIONS
    from rankwise.experiments.event_rows import WINDOW_ENDS
    from rankwise.experiments.slices import CORRECTION_SCOPES
    from rankwise.experiments.warehouse import AggregationEngine
    from rankwise.interleaving.simulated_users import SIMULATED_USERS
    from rankwise.metrics.profiles import PROFILES
    from rankwise.rankeval.backends import SEARCH_TYPES
    from rankwise.rankeval.tantivy_index import ANALYZERS
    from rankwise.stats.twosample import Alternative, Relative

    return {
        "--click-model": tuple(SIMULATED_USERS.names()), "--correction-scope": tuple(CORRECTION_SCOPES.names()),
        "--profile": tuple(PROFILES), "--ties": get_args(Ties), "--missing": get_args(Missing),
        "--duplicates": get_args(Duplicates), "--gains": get_args(Gains), "--zero-division": get_args(ZeroDivision),
        "--relative": get_args(Relative), "--alternative": get_args(Alternative),
        "--engine": get_args(AggregationEngine),
        "--log-format": LOG_FORMATS, "--backend": tuple(k.value for k in BackendKind),
        "--search-type": SEARCH_TYPES, "--analyzer": ANALYZERS, "kind": tuple(k.value for k in PlotKind),
        "--bootstrap-ci": ("percentile", "BCa"), "--p-value": P_VALUES,
        "--labels-format": ("auto", "table", "yandex", "qrels"), "--window-end": WINDOW_ENDS,
        "--cap-convention": tuple(CAP_CONVENTIONS.names()),
        "--prior-structure": tuple(PRIOR_STRUCTURES.names()), "--acceleration": tuple(ACCELERATIONS.names()),
        "--by": tuple(RANKINGS.names()),
    }


def _params() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())
        out.extend((path, p) for p in command.params)

    walk(get_command(app), "")
    return out


def test_every_hand_written_choice_list_matches_its_source() -> None:
    sources = _sources()
    seen = set()
    for path, param in _params():
        found = CHOICES.search(getattr(param, "help", None) or "")
        if found is None:
            continue
        key = next((o for o in param.opts if o.startswith("--")), param.name)
        assert key in sources, f"{path} {key}: a hand-written list ({found.group(0)}) without a source here"
        written = tuple(v.rstrip(".") for v in found.group(0).split(" | "))
        assert written == tuple(sources[key]), f"{path} {key}: help says {written}, the source {sources[key]}"
        seen.add(key)
    assert seen == set(sources), f"sources of lists no longer written: {sorted(set(sources) - seen)}"


def test_every_enum_of_choices_matches_its_literal_type() -> None:
    """A Typer option needs an enum; the enum holds the values of the literal type the library
    checks, in its order (the command line takes what the function takes)."""
    from rankwise.cli.commands import EngineOption
    from rankwise.evaluation import EvaluationEngine

    assert tuple(e.value for e in EngineOption) == get_args(EvaluationEngine)
