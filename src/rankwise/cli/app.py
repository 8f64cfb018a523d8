"""The ``rankwise`` Typer application (the output helpers every command shares live in
``rankwise.cli.output``, which does not load Typer)."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="rankwise: exact, fast, reproducible evaluation of rankings.")


def _version(value: bool) -> None:
    if value:
        from rankwise._version import __version__

        typer.echo(f"rankwise {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                          help="Print the version and exit.")) -> None:
    """rankwise: exact, fast, reproducible evaluation of rankings."""
