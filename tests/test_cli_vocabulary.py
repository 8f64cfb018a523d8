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


def test_one_idea_one_long_option_and_one_value_set() -> None:
    """The vocabulary table (``rankwise.cli.vocabulary.IDEAS``): each idea's option exists, its
    old spellings are hidden deprecated aliases wherever they do not name another idea, a
    parameter is spelled by one long option in every command, and every ``--format`` takes a
    subset of the one format set."""
    from rankwise.cli.vocabulary import FORMATS, IDEAS

    visible: dict[str, set[str]] = {}
    hidden: dict[str, set[str]] = {}
    flags_of_name: dict[str, set[tuple[str, ...]]] = {}
    for path, option in _options():
        longs = tuple(sorted(o for o in option.opts + option.secondary_opts if o.startswith("--")))
        for flag in longs:
            (hidden if option.hidden else visible).setdefault(flag, set()).add(path)
        if not option.hidden:
            flags_of_name.setdefault(option.name, set()).add(longs)
        if "--format" in longs:
            choices = set(getattr(option.type, "choices", ()))
            assert choices and choices <= set(FORMATS), f"{path} --format: {sorted(choices - set(FORMATS))}"
    canonical = {flag for flag, _ in IDEAS.values()}
    for idea, (flag, old) in IDEAS.items():
        assert flag in visible, f"{idea}: no command has {flag}"
        for alias in old:
            assert alias in hidden, f"{idea}: the old spelling {alias} is not kept as a deprecated alias"
            if alias not in canonical:
                assert alias not in visible, f"{idea}: {alias} is still shown in {sorted(visible[alias])}"
    # --depth is the evaluation depth (a ranking cut at N) wherever it is shown; the list size of
    # a simulation is --list-size, its old --depth hidden
    assert visible["--depth"] == {"evaluate", "compare", "plot", "report", "fuse"}
    assert hidden["--depth"] == visible["--list-size"] == {"interleave simulate", "clicks simulate"}
    spelled_twice = {name: flags for name, flags in flags_of_name.items() if len(flags) > 1}
    assert not spelled_twice, f"one parameter, several options: {spelled_twice}"


def test_deprecated_long_spellings_still_work_with_a_warning(tmp_path: Path) -> None:
    qrels, run = DATA / "qrels.test", DATA / "results.test"
    out = CliRunner().invoke(app, ["compare", str(qrels), str(run), str(run), "-m", "map", "--test",
                                   "randomization", "--permutations", "50", "-f", "csv"])
    assert out.exit_code == 0, out.output
    assert "--permutations is deprecated: write --resamples" in out.output


def test_the_docs_teach_no_deprecated_spelling() -> None:
    """The pages and the generated catalogue write each option as it is spelled now: no
    ``rankwise ab ... -c`` (``--correction``), no ``--permutations`` (``--resamples``), no
    ``rankwise metrics`` (``rankwise list metrics``)."""
    import re

    from rankwise.cli.catalogue import plugins_page

    root = DATA.parent.parent

    pages = {p.name: p.read_text() for p in [root / "README.md", *(root / "docs").glob("*.md")]}
    pages["generated catalogue"] = plugins_page()
    for name, text in pages.items():
        assert not re.search(r"rankwise ab [^`\n]*\s-c\s", text), f"{name} teaches ab's -c"
        assert "--permutations" not in text, f"{name} teaches --permutations"
        assert not re.search(r"rankwise metrics\b", text), f"{name} teaches 'rankwise metrics'"
