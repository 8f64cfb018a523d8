"""The ``rankwise`` console entry point, light to import: the drop-in tools (``trec-eval``,
``ndeval``) parse their own arguments, and ``evaluate`` reads the command lines it knows
(``rankwise.cli.quick``), without loading the Typer application; these three end without
tearing the interpreter down."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def main() -> None:
    """Run the ``rankwise`` command (``trec-eval`` and ``ndeval`` arguments bypass option
    parsing to keep their tools' syntax; ``evaluate`` starts without Typer when it can). Long
    work shows its progress on a terminal (``rankwise.cli.progress``). ``--version`` prints
    the version before anything else is imported."""
    if sys.argv[1:] == ["--version"]:
        from rankwise._version import __version__

        sys.stdout.write(f"rankwise {__version__}\n")
        return
    from rankwise.cli.progress import terminal_reporter
    from rankwise.progress import reporting

    try:
        with reporting(terminal_reporter()):
            _dispatch(sys.argv[1:])
    except KeyboardInterrupt:   # Ctrl-C: no traceback; any file being written is left as it was
        sys.stderr.write("rankwise: interrupted; no output file was left half-written\n")
        raise SystemExit(130) from None


def _dispatch(argv: list[str]) -> None:
    from rankwise.cli.process import numpy_for_short_commands, rare_cycle_collection, release_freed_pages

    quick = bool(argv) and argv[0] in ("trec-eval", "ndeval", "evaluate")
    if quick:
        numpy_for_short_commands()  # before NumPy is imported
        rare_cycle_collection()
    release_freed_pages()
    from rankwise.cli.output import command_inputs, fail, refuse_shared_outputs
    from rankwise.errors import RankwiseError
    from rankwise.protected import protected_inputs

    refuse_shared_outputs(argv)   # two outputs of one command never name one file
    try:   # no command writes over one of its inputs (rankwise.protected)
        with protected_inputs(command_inputs(argv)):
            _run_command(argv, quick)
    except RankwiseError as error:   # one door for every command: rankwise's own errors end without a traceback
        fail(str(error))


def _run_command(argv: list[str], quick: bool) -> None:
    if quick:
        from rankwise.cli.process import reuse_freed_heap
        from rankwise.cli.quick import exit_now, run_files, run_quick
        from rankwise.data.load import reading_ahead

        reuse_freed_heap()
        with reading_ahead(run_files(argv[0], argv[1:])):   # the run parses while the rest loads
            code = run_quick(argv[0], argv[1:])
        if code is not None:
            exit_now(code)
    only_invoked(application_for(argv), argv)(prog_name="rankwise")


COMMAND_MODULES = {
    "evaluate": "commands", "metrics": "commands", "compare": "commands", "plot": "commands",
    "report": "commands", "trec-eval": "commands", "ndeval": "commands", "ab": "ab", "assign": "ab",
    "clicks": "clicks", "interleave": "interleave", "ope": "ope", "rank-eval": "rank_eval",
    "index": "rank_eval", "fuse": "fuse", "agree": "agree", "offline-online": "agree",
    "list": "catalogue", "beyond": "recsys",
}
"""The module of ``rankwise.cli`` that registers each command (a test checks it against the
whole application)."""


def application_for(argv: list[str]) -> typer.Typer:
    """The Typer application with the module of the command ``argv`` names imported (the other
    commands' modules, and what they import, are not loaded); every command when ``argv`` names
    none (help, ``--version``, a typo: suggestions still see every command)."""
    import importlib

    module = COMMAND_MODULES.get(argv[0]) if argv else None
    if module is None:
        from rankwise.cli.main import app

        return app
    importlib.import_module(f"rankwise.cli.{module}")
    from rankwise.cli.app import app

    return app


def only_invoked(app: typer.Typer, argv: list[str]) -> typer.Typer:
    """``app`` with only the command that ``argv`` names (Typer builds the options of every
    registered command before it parses; one command starts faster). ``app`` itself when the first
    argument names no command (``--help``, ``--version``, a typo), so help and suggestions still
    list every command.

    >>> import typer
    >>> demo = typer.Typer()
    >>> @demo.command()
    ... def first() -> None: ...
    >>> @demo.command("second-one")
    ... def second() -> None: ...
    >>> [c.callback.__name__ for c in only_invoked(demo, ["second-one", "x"]).registered_commands]
    ['second']
    >>> only_invoked(demo, ["--help"]) is demo
    True
    """
    import copy

    from typer.main import get_command_name

    if not argv:
        return app
    name = argv[0]
    commands = [c for c in app.registered_commands
                if (c.name or (c.callback is not None and get_command_name(c.callback.__name__))) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    trimmed = copy.copy(app)
    trimmed.registered_commands = commands
    trimmed.registered_groups = groups
    return trimmed


if __name__ == "__main__":
    main()
