"""Modules a piece of work will need, imported on another thread while it reads its data.

A fresh process (``rankwise ab`` on the command line) spends a third of a second importing
pandas and scipy before it can write its table: started together with the reading, which
decodes files without holding the interpreter, that time is mostly hidden. In a process
that has them already, nothing happens.
"""

from __future__ import annotations

import importlib
import sys
import threading


def preload(*modules: str) -> None:
    """Import ``modules`` on a background thread (those not imported yet); an import that
    fails is left for the work itself to meet and report where it happens.

    >>> preload("json")
    >>> "json" in sys.modules
    True
    """
    missing = [m for m in modules if m not in sys.modules]
    if missing:
        threading.Thread(target=_import_all, args=(missing,), name="rankwise-preload", daemon=True).start()


def _import_all(modules: list[str]) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:   # noqa: BLE001 - the work imports it again and reports the error there
            return
