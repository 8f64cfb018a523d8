"""Progress of long work, reported by the code doing it and shown by whoever listens.

Library code marks its steps with ``step(description, total)``: reading a file, scoring a
run, an EM fit's iterations, a simulation's levels. Nothing is shown unless a reporter is
installed: the command line installs one (``rankwise.cli.progress``) that draws a rich bar on
standard error when it is a terminal, and stays silent in pipes, CI logs and with
``--quiet``. Progress is driven by the work done (``advance`` after each unit), never by a
guessed duration; a step without a known total shows its description and elapsed time.

>>> events = []
>>> class Recorder:
...     def start(self, description, total): events.append(("start", description, total)); return len(events)
...     def advance(self, task, amount): events.append(("advance", amount))
...     def describe(self, task, description): events.append(("describe", description))
...     def finish(self, task): events.append(("finish",))
>>> with reporting(Recorder()):
...     with step("fitting pbm", total=2) as advance:
...         advance()
...         advance(1, "iteration 2")
>>> events
[('start', 'fitting pbm', 2), ('advance', 1), ('advance', 1), ('describe', 'iteration 2'), ('finish',)]
>>> with step("nobody listens") as advance:     # without a reporter: nothing happens
...     advance()
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class Reporter(Protocol):
    """What shows progress: ``start`` a task (a description, a total or None), ``advance`` it,
    change its ``describe``-tion, ``finish`` it."""

    def start(self, description: str, total: float | None) -> Any: ...

    def advance(self, task: Any, amount: float) -> None: ...

    def describe(self, task: Any, description: str) -> None: ...

    def finish(self, task: Any) -> None: ...


_REPORTER: ContextVar[Reporter | None] = ContextVar("rankwise_progress_reporter", default=None)

Advance = Callable[..., None]
"""``advance(amount=1, description=None)``: one more unit of work done (and, optionally, a new
description, e.g. the latest log-likelihood)."""


def _nothing(amount: float = 1, description: str | None = None) -> None:
    return None


@contextmanager
def step(description: str, total: float | None = None) -> Iterator[Advance]:
    """A unit of long work: yields ``advance``. Without a reporter, nothing is shown and
    ``advance`` does nothing (the cost is one context-variable lookup)."""
    reporter = _REPORTER.get()
    if reporter is None:
        yield _nothing
        return
    task = reporter.start(description, total)

    def advance(amount: float = 1, description: str | None = None) -> None:
        reporter.advance(task, amount)
        if description is not None:
            reporter.describe(task, description)

    try:
        yield advance
    finally:
        reporter.finish(task)


def tracked(items: Any, description: str, total: float | None = None) -> Iterator[Any]:
    """``items`` one by one, one step of ``description`` advanced after each (``total``:
    ``len(items)`` when it has one).

    >>> list(tracked([1, 2], "counting"))
    [1, 2]
    """
    if total is None and hasattr(items, "__len__"):
        total = len(items)
    with step(description, total) as advance:
        for item in items:
            yield item
            advance()


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Steps inside the block report to ``reporter`` (None: to nobody)."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)


def silence() -> None:
    """No progress for the rest of this context (a command's ``--quiet``)."""
    _REPORTER.set(None)


__all__ = ["Advance", "Reporter", "reporting", "silence", "step", "tracked"]
