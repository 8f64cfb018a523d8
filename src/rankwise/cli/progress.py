"""The command line's progress display: a rich bar per step of long work (``rankwise.progress``)
on standard error when it is a terminal; nothing in pipes, CI logs (``CI`` set), with
``RANKWISE_PROGRESS=0`` or a command's ``--quiet``. ``RANKWISE_PROGRESS=1`` shows it anywhere.

>>> import os
>>> os.environ["RANKWISE_PROGRESS"] = "0"
>>> terminal_reporter() is None
True
>>> del os.environ["RANKWISE_PROGRESS"]
"""

from __future__ import annotations

import os
import sys
from typing import Any


def terminal_reporter() -> RichReporter | None:
    """A reporter drawing on standard error, or None where nobody watches a terminal."""
    setting = os.environ.get("RANKWISE_PROGRESS", "").strip()
    if setting == "0":
        return None
    if setting != "1" and (os.environ.get("CI") or not _is_terminal(sys.stderr)):
        return None
    return RichReporter(force=setting == "1")


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class RichReporter:
    """Rich bars (a spinner, the description, the bar and count when the total is known, the
    elapsed time) that vanish when their step ends; rich is imported at the first step."""

    def __init__(self, force: bool = False) -> None:
        self._force = force
        self._progress: Any = None
        self._open = 0

    def _bars(self) -> Any:
        if self._progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            console = Console(stderr=True, force_terminal=True if self._force else None)
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
        if not self._open:
            self._progress.start()
        return self._progress

    def start(self, description: str, total: float | None) -> Any:
        bars = self._bars()
        self._open += 1
        return bars.add_task(description, total=total)

    def advance(self, task: Any, amount: float) -> None:
        self._progress.advance(task, amount)

    def describe(self, task: Any, description: str) -> None:
        self._progress.update(task, description=description)

    def finish(self, task: Any) -> None:
        self._progress.remove_task(task)
        self._open -= 1
        if not self._open:
            self._progress.stop()


__all__ = ["RichReporter", "terminal_reporter"]
