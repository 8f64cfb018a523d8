"""A misspelt event name is an error, never a column of zeros: when an aggregation counted or
summed nothing in every variant, each value its conditions name (the event type of
``count(clicks)``, ``any(purchase)``; the values of ``sum(value where event = purchse)`` and
``count(view where country = DEE)``) is looked up in the data (only then: the common path pays
nothing), and a value that no row holds is refused, with the values present. Numeric values
(``amount = 5``) compare as numbers and are not looked up.

>>> missing_events({"event": ["click", "view", "click"]}, "event", [("event", "clicks", "count(clicks)")])
Traceback (most recent call last):
...
rankwise.errors.InputError: <input>: field 'event': count(clicks) names event 'clicks', ...; its events are 'click', ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.errors import InputError
from rankwise.experiments.definitions import Definition
from rankwise.experiments.metrics import indicator
from rankwise.experiments.moments import VariantMoments

_SHOWN = 30
"""Event types listed in the error at most."""


def unmet_conditions(definitions: Sequence[Definition], moments: VariantMoments,
                     event: str = "event") -> list[tuple[str, str, str]]:
    """``(column, value, aggregation as written)`` for each value an ``=`` or ``in`` condition
    names (a count's event type included) in an aggregation whose per-unit column is zero in
    every variant; numeric values are left out."""
    zero: list[tuple[str, str, str]] = []
    for definition in definitions:
        for aggregate in definition.aggregates():
            if aggregate.target == "*" and not aggregate.where:
                continue
            found = [moments.columns.index(c) for c in (aggregate.column, indicator(aggregate.column))
                     if c in moments.columns]
            if not found or any(np.any(moments.means[:, i]) for i in found):
                continue
            for clause in aggregate.clauses(event):
                if clause.op in ("=", "in"):
                    zero += [(clause.column, value, aggregate.text()) for value in clause.values
                             if not _number(value)]
    return list(dict.fromkeys(zero))


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def event_types(data: Any, event: str) -> list[str]:
    """The distinct values of column ``event`` in ``data`` (files, a DataFrame, an Arrow table, a
    mapping, a DuckDB source or an Ibis table), as text."""
    from rankwise.experiments.ibis_source import is_ibis_table
    from rankwise.experiments.warehouse import DuckDBSource

    if is_ibis_table(data):
        values = data.select(data[event].cast("string").name("e")).distinct().limit(10_000).execute()["e"]
        return sorted(str(v) for v in values.tolist() if v is not None)
    if isinstance(data, DuckDBSource):
        from rankwise.data import gateway
        from rankwise.experiments.definitions import quote_identifier
        from rankwise.experiments.warehouse import _relation

        connection = gateway.duckdb_connection()
        try:
            _relation(connection, data, "rankwise_event_names", ids=[event])
            rows = connection.execute(f"SELECT DISTINCT CAST({quote_identifier(event)} AS VARCHAR) "
                                      "FROM rankwise_event_names LIMIT 10000").fetchall()
        finally:
            connection.close()
        return sorted(str(r[0]) for r in rows if r[0] is not None)
    import pyarrow.compute as pc

    from rankwise.data.tables import tables_of

    found: set[str] = set()
    pieces = tables_of([data] if isinstance(data, (str, os.PathLike)) else data, [event], ids=[event])
    for _, _, table in pieces:
        column = table.column(event)
        found.update(str(v) for v in pc.unique(column.cast("string") if column.type != "string" else column)
                     .to_pylist() if v is not None)
    return sorted(found)


def missing_events(data: Any, event: str, zero: Sequence[tuple[str, str, str]]) -> None:
    """An ``InputError`` for the first of ``zero`` (``unmet_conditions``: values named by
    aggregations that counted nothing) that no row of the data holds, naming the values present."""
    present: dict[str, list[str]] = {}
    for column, value, spelled in zero:
        if column not in present:
            try:
                present[column] = event_types(data, column)
            except Exception:   # the data cannot be read a second time (a stream): the zeros stand
                return
        if value not in present[column]:
            values = present[column]
            listed = ", ".join(repr(p) for p in values[:_SHOWN]) + (" ..." if len(values) > _SHOWN else "")
            what, its = ("event", "its events are") if column == event else (column, f"its values of {column} are")
            raise InputError(f"{spelled} names {what} {value!r}, which the data does not hold; {its} "
                             f"{listed or 'none'}", source=_described(data), field=column)


def _described(data: Any) -> str:
    if isinstance(data, (str, os.PathLike)):
        return str(data)
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, (str, os.PathLike)) for d in data):
        return ", ".join(str(d) for d in data[:3])
    describe = getattr(data, "describe", None)
    if callable(describe) and type(data).__name__ == "DuckDBSource":
        return str(describe())
    return "<input>"


__all__ = ["event_types", "missing_events", "unmet_conditions"]
