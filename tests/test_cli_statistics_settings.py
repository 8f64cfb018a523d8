"""Every command that takes a significance level, a number of resamples or a number of decimals
refuses one that is out of range (``--alpha 2`` marked every difference significant;
``--resamples -5`` was taken; ``--digits -3`` was a traceback) with rankwise's error and exit
status 2, writing nothing: the statistics are checked in one place (``rankwise.stats.checks``),
which the library functions call, and ``--digits`` is declared once (``cli.options.Digits``).
The commands are found from the application, so a new command with one of these options is
walked too."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from test_cli_outputs import WRITERS, _argv, _suffix, files  # noqa: F401  (files: the inputs fixture)

BAD = {"--alpha": ["2", "nan"], "--resamples": ["-5"], "--digits": ["-3"]}
"""Per option, the values every command must refuse (the bounds themselves are tested once, on
``rankwise.stats.checks`` and ``cli.vocabulary.decimals``)."""


def _commands() -> dict[str, Any]:
    import typer.main

    from rankwise.cli.entry import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"rankwise.cli.{module}")
    from rankwise.cli.app import app

    found: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        if path:
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


def _taking(flag: str) -> list[str]:
    return sorted(path for path, command in _commands().items()
                  if any(flag in p.opts for p in command.params if type(p).__name__.endswith("Option")))


def _case(command: str) -> str:
    return next(case for case in WRITERS if case == command or case.startswith(command + " ") and case.split()[
        len(command.split())].startswith("-"))


CASES = [(flag, command, value) for flag in BAD for command in _taking(flag) for value in BAD[flag]]


def test_the_walked_commands_are_every_command_with_these_options() -> None:
    assert {c for _, c, _ in CASES} >= {"compare", "ab", "ope", "interleave compare", "agree", "offline-online"}
    for _, command, _ in CASES:
        assert _case(command) in WRITERS, f"{command}: give it a command line in test_cli_outputs.WRITERS"


@pytest.mark.parametrize(("flag", "command", "value"), CASES)
def test_a_setting_out_of_range_is_refused(flag, command, value, files, tmp_path, rankwise_cli,  # noqa: F811
                                          capsys) -> None:
    case = _case(command)
    argv, option, _, _ = _argv(rankwise_cli, files, tmp_path, case)
    out = tmp_path / f"out{_suffix(case, option)}"
    capsys.readouterr()
    code = rankwise_cli([*argv, option, str(out), f"{flag}={value}"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists(), (command, flag, value, err)
    name = flag.lstrip("-")
    assert f"{name} must be" in err and "Traceback" not in err, err
