"""The ``rankwise`` console entry point, light to import: the drop-in tools (``trec-eval``,
``ndeval``) parse their own arguments and start without loading the Typer application."""

from __future__ import annotations

import sys


def main() -> None:
    """Run the ``rankwise`` command (``trec-eval`` and ``ndeval`` arguments bypass option
    parsing to keep their tools' syntax)."""
    from rankwise.cli.process import release_freed_pages

    release_freed_pages()
    argv = sys.argv[1:]
    if argv and argv[0] == "trec-eval":
        from rankwise.cli.trec_eval import run_trec_eval

        sys.exit(run_trec_eval(argv[1:]))
    if argv and argv[0] == "ndeval":
        from rankwise.cli.ndeval import run_ndeval

        sys.exit(run_ndeval(argv[1:]))
    from rankwise.cli.main import app

    app(prog_name="rankwise")


if __name__ == "__main__":
    main()
