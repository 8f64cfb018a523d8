"""The whole ``rankwise`` command line: every command registered on one Typer ``app``.

Each module below registers its commands when imported; ``rankwise.cli.entry`` imports only
the module of the command a user runs (``COMMAND_MODULES``).
"""

from __future__ import annotations

from rankwise.cli import ab, agree, catalogue, clicks, commands, fuse, interleave, ope, rank_eval, recsys  # noqa: F401,E501  (each registers its commands)
from rankwise.cli.app import app

__all__ = ["app"]
