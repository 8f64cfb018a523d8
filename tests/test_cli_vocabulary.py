"""One vocabulary across the command line: a short flag means one thing in every command, and
the old spellings that meant something else still work with a deprecation warning (issue #36)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import DATA
from typer.main import get_command
from typer.testing import CliRunner

from rankwise.cli.main import app


def _options() -> list[tuple[str, Any]]:
    """(command path, option) for every option of every command, hidden ones included (Typer
    may bring its own copy of Click: options are recognised by their class name)."""
    out: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())
        out.extend((path, p) for p in command.params if type(p).__name__.endswith("Option"))

    walk(get_command(app), "")
    return out


def test_a_short_flag_means_one_thing_everywhere() -> None:
    meaning: dict[str, dict[tuple[str, ...], list[str]]] = {}
    for path, option in _options():
        if option.hidden:
            continue
        longs = tuple(sorted(o for o in option.opts + option.secondary_opts if o.startswith("--")))
        for short in (o for o in option.opts + option.secondary_opts if not o.startswith("--")):
            meaning.setdefault(short, {}).setdefault(longs, []).append(path)
    clashes = {short: uses for short, uses in meaning.items() if len(uses) > 1}
    assert not clashes, f"one short flag, several meanings: {clashes}"
    assert set(meaning["-m"]) == {("--metric",)} and set(meaning["-q"]) == {("--per-query",)}
    assert len(_options()) > 150   # every command was walked


def test_the_old_spellings_warn(tmp_path: Path) -> None:
    log = DATA / "clicks" / "clara2_head.tsv"
    out = CliRunner().invoke(app, ["clicks", "fit", str(log), "-m", "pbm", "-q", "-o", str(tmp_path / "m.json")])
    assert out.exit_code == 0, out.output
    assert "-m is deprecated here: write --model" in out.output and "-q is deprecated here: write --quiet" \
        in out.output
    missing = CliRunner().invoke(app, ["clicks", "rank", "-o", str(tmp_path / "r.trec")])
    assert missing.exit_code == 2 and "missing option --model" in missing.output
