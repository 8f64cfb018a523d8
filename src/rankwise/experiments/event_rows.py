"""Event logs into the rows the per-unit sums read: each definition's aggregations become one
column per event (the row's contribution), and an exposure table, when given, decides each
unit's variant and the window of events that count.

Rows are read piece by piece (files, DataFrames, tables) and keep their file and line, so a
bad value names where it is. With ``exposures``: a unit's variant and start are those of its
first exposure; its events count from that time (or a ``delay`` after it) until ``window``
after that (every later event without a window; the end exclusive, or inclusive with
``window_end="inclusive"``, GrowthBook's conversion window); events of units never exposed,
before the exposure, in the delay or after the window are left out and counted in a warning; an
exposed unit without events counts with zeros.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from rankwise.data.tables import Batches, batches_of, location, number_column, tables_of
from rankwise.errors import InputError, OptionError
from rankwise.experiments.definitions import Aggregate, Clause, Definition, number_literal

WINDOW_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

WindowEnd = Literal["exclusive", "inclusive"]
"""Whether an event exactly at the end of a unit's window counts (inclusive) or not."""
WINDOW_ENDS: tuple[WindowEnd, ...] = get_args(WindowEnd)


@dataclass(frozen=True)
class ConversionWindow:
    """Which of an exposed unit's events count, in seconds from its first exposure ``start``:
    those at ``start + delay`` or later and before ``start + delay + length`` (at or before it
    with an inclusive ``end``; every later event when ``length`` is None). Each engine writes
    the same bounds: numpy here, SQL (``sql_exclusions``) and Ibis (``rankwise.experiments.ibis_source``).
    A negative ``delay`` opens the window before the exposure: the pre-exposure window of CUPED
    (``rankwise.experiments.pre_period``); users' delays are never negative.

    ``not_before`` and ``not_after`` (seconds since the epoch, as the events' times) bound the
    analysed period for every unit: GrowthBook's lookback window counts only the events of the
    period's last days (``lookback_window``), and no event after the analysis ends.

    >>> w = ConversionWindow(delay=3600.0, length=86400.0)
    >>> w.opens, w.closes, w.counted(np.array([0.0, 3600.0, 89999.0, 90000.0]), np.zeros(4)).tolist()
    (3600.0, 90000.0, [False, True, True, False])
    """

    delay: float = 0.0
    length: float | None = None
    end: WindowEnd = "exclusive"
    not_before: float | None = None
    not_after: float | None = None

    @property
    def opens(self) -> float:
        """Seconds after the exposure from which events count."""
        return self.delay

    @property
    def closes(self) -> float | None:
        """Seconds after the exposure at which the window ends (None: it never does)."""
        return None if self.length is None else self.delay + self.length

    @property
    def lead(self) -> float:
        """Seconds before the exposure from which events may count (0 unless the window opens
        before the exposure)."""
        return min(self.delay, 0.0)

    def before(self, times: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Events before the window could open (before the exposure, or before the lead)."""
        return times < start + self.lead

    def in_delay(self, times: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Events at or after the exposure but before the window opens."""
        return (times >= start) & (times < start + self.delay)

    def after(self, times: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Events after the window closed."""
        closes = self.closes
        if closes is None:
            return np.zeros(len(times), dtype=bool)
        return times > start + closes if self.end == "inclusive" else times >= start + closes

    def counted(self, times: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Events inside the window."""
        inside = (times >= start + self.delay) & ~self.after(times, start)
        if self.not_before is not None:
            inside &= times >= self.not_before
        if self.not_after is not None:
            inside &= times <= self.not_after
        return inside

    def exclusions(self, times: np.ndarray, start: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Each kind of event the window leaves out, in the order an event is counted under the
        first that holds (so each is counted once): before the exposure (or the window's lead),
        in the delay, before the lookback, after the analysis end, after the window.

        >>> w = ConversionWindow(length=10.0, not_before=5.0, not_after=30.0)
        >>> [(kind, m.tolist()) for kind, m in w.exclusions(np.array([-1.0, 2.0, 8.0, 31.0]), np.zeros(4))]
        [('before_exposure', [True, False, False, False]), ('before_lookback', [False, True, False, False]), \
('after_end', [False, False, False, True]), ('after_window', [False, False, False, False])]
        """
        kinds = [("before_exposure", self.before(times, start))]
        if self.delay > 0:
            kinds.append(("in_delay", self.in_delay(times, start)))
        if self.not_before is not None:
            kinds.append(("before_lookback", times < self.not_before))
        if self.not_after is not None:
            kinds.append(("after_end", times > self.not_after))
        kinds.append(("after_window", self.after(times, start)))
        out, taken = [], np.zeros(len(times), dtype=bool)
        for kind, mask in kinds:
            out.append((kind, mask & ~taken))
            taken |= mask
        return out

    def sql_exclusions(self, time: str, start: str) -> list[tuple[str, str]]:
        """``exclusions`` as SQL conditions over the columns ``time`` and ``start`` (seconds),
        each excluding the ones before it."""
        kinds = [("before_exposure", f"{time} < {start} + {self.lead!r}")]
        if self.delay > 0:
            kinds.append(("in_delay", f"({time} >= {start} AND {time} < {start} + {self.delay!r})"))
        if self.not_before is not None:
            kinds.append(("before_lookback", f"{time} < {self.not_before!r}"))
        if self.not_after is not None:
            kinds.append(("after_end", f"{time} > {self.not_after!r}"))
        closes = self.closes
        if closes is not None:
            kinds.append(("after_window", f"{time} {'>' if self.end == 'inclusive' else '>='} {start} + {closes!r}"))
        else:
            kinds.append(("after_window", "FALSE"))
        out: list[tuple[str, str]] = []
        earlier: list[str] = []
        for kind, condition in kinds:
            out.append((kind, " AND ".join([f"({condition})", *(f"NOT ({c})" for c in earlier)])))
            earlier.append(condition)
        return out

    def settings(self) -> dict[str, Any]:
        """What a result records of the window (beyond its length)."""
        return {**({"delay": self.delay} if self.delay else {}),
                **({"window_end": self.end} if self.end != "exclusive" else {}),
                **({"not_before": self.not_before} if self.not_before is not None else {}),
                **({"not_after": self.not_after} if self.not_after is not None else {})}


def conversion_window(window: str | float | None, delay: str | float | None = None,
                      end: str = "exclusive") -> ConversionWindow | None:
    """The window of ``window`` (a length), ``delay`` and ``end``, durations written as
    ``window_seconds`` reads them; None when none is given.

    >>> w = conversion_window("7d", "1h", "inclusive")
    >>> w.delay, w.length, w.end
    (3600.0, 604800.0, 'inclusive')
    >>> conversion_window(None) is None
    True
    """
    if end not in WINDOW_ENDS:
        raise OptionError(f"window end {end!r}: expected {' or '.join(WINDOW_ENDS)}")
    length, wait = window_seconds(window), window_seconds(delay, "delay", zero=True)
    if length is None and wait is None and end == "exclusive":
        return None
    return ConversionWindow(wait or 0.0, length, end)  # type: ignore[arg-type]


def window_seconds(window: str | float | None, what: str = "window", zero: bool = False) -> float | None:
    """A duration as seconds: a number of seconds, or a number and a unit (s, m, h, d, w);
    positive (or 0 too, with ``zero``: a delay may be none).

    >>> window_seconds("7d"), window_seconds("36h"), window_seconds(90), window_seconds(None)
    (604800.0, 129600.0, 90.0, None)
    """
    if window is None:
        return None
    if isinstance(window, (int, float)):
        seconds = float(window)
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([smhdw]?)\s*", str(window).lower())
        if match is None:
            raise OptionError(f"{what} {window!r}: expected a number and a unit, such as 7d, 36h, 30m or 45s")
        seconds = float(match.group(1)) * WINDOW_UNITS[match.group(2) or "s"]
    if not (seconds > 0 or (zero and seconds == 0)) or seconds == float("inf"):
        raise OptionError(f"{what} {window!r}: expected a {'non-negative' if zero else 'positive'} duration")
    return seconds


def clause_mask(table: Any, clause: Clause, source: str, decoded: dict[str, Any] | None = None) -> np.ndarray:
    """Which rows meet one condition (a missing value meets none). A dictionary-encoded
    column (Parquet's and pandas' categoricals) is compared once per distinct value; its
    codes are kept in ``decoded`` (by column) for the next condition on it."""
    import pyarrow as pa

    column = table.column(clause.column)
    if not pa.types.is_dictionary(column.type):
        return _compare(column, clause, source)
    if column.num_chunks == 0:
        return np.zeros(0, dtype=bool)
    if decoded is None or clause.column not in decoded:
        found = _dictionary_codes(column)
        if decoded is not None:
            decoded[clause.column] = found
    else:
        found = decoded[clause.column]
    dictionary, codes, valid = found
    hit = _compare(dictionary, clause, source)
    mask = hit[codes] if len(hit) else np.zeros(len(codes), dtype=bool)
    if valid is not None:
        mask &= valid
    return mask


def _dictionary_codes(column: Any) -> tuple[Any, np.ndarray, np.ndarray | None]:
    """A dictionary column as (its one dictionary, each row's code, which rows have a value
    (None: all))."""
    import pyarrow as pa

    column = column.unify_dictionaries()   # one dictionary for every chunk: compared once
    indices = pa.chunked_array([chunk.indices for chunk in column.chunks]).combine_chunks()
    codes = np.asarray((indices.fill_null(0) if indices.null_count else indices).to_numpy(zero_copy_only=False))
    valid = np.asarray(indices.is_valid().to_numpy(zero_copy_only=False), dtype=bool) if indices.null_count else None
    return column.chunks[0].dictionary, codes, valid


def _compare(column: Any, clause: Clause, source: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc

    numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
    if numeric:
        values: list[Any] = [number_literal(v, clause.column) for v in clause.values]
    elif pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_null(column.type):
        values = list(clause.values)
    else:
        raise InputError(f"a filter compares column {clause.column!r} of type {column.type}; filters compare "
                         "numbers and text", source=source, field=clause.column)
    kind = column.type if numeric else pa.string()
    if clause.op == "in":
        mask = pc.is_in(column, value_set=pa.array(values, type=kind))
    else:
        function = {"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
                    ">=": "greater_equal"}[clause.op]
        mask = pc.call_function(function, [column, pa.scalar(values[0], type=kind)])
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def contributions(table: Any, aggregate: Aggregate, event: str, name: str, first: int,
                  decoded: dict[str, Any] | None = None) -> np.ndarray:
    """Each row's contribution to one aggregation: whether it counts (``count``, ``any``: a
    boolean, summed per unit as 1 or 0), the value or 0 (``sum``; a matching row without a
    number is an error naming its line)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask: np.ndarray | None = None
    for clause in aggregate.clauses(event):
        this = clause_mask(table, clause, name, decoded)
        mask = this if mask is None else mask & this
    if not aggregate.sums:   # a count: which rows count (summed per unit as booleans)
        return np.ones(table.num_rows, dtype=bool) if mask is None else mask
    column = table.column(aggregate.target)
    if mask is None:
        return number_column(name, first, column.combine_chunks(), aggregate.target)
    if column.null_count:
        missing = mask & np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if missing.any():
            raise InputError("missing value; expected a number", field=aggregate.target,
                             **location(name, first, int(np.flatnonzero(missing)[0])))
    if pa.types.is_floating(column.type):
        # the value where the row counts, else 0, in one float64 array (a missing value reads as
        # NaN and is zeroed with the other rows that do not count)
        values = np.asarray(column.to_numpy(), dtype=np.float64)
        if not values.flags.writeable:   # Arrow's own buffer (one chunk, no nulls): not ours to change
            values = values.copy()
        np.copyto(values, 0.0, where=~mask)
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"expected a finite number, got {values[row]}", field=aggregate.target,
                             **location(name, first, row))
        return values
    if pa.types.is_integer(column.type):
        # the value where the row counts, else 0 (its own type: integer sums stay exact)
        values = np.asarray((pc.fill_null(column, 0) if column.null_count else column).to_numpy())
        return np.where(mask, values, values.dtype.type(0))
    column = column.combine_chunks()
    chosen = pa.array(mask)
    if pa.types.is_null(column.type):
        column = pa.array(np.zeros(len(column), dtype=np.int64))
    else:
        column = pc.if_else(chosen, column.cast(pa.string()), pa.scalar("0"))
    return number_column(name, first, column, aggregate.target)


@dataclass
class EventRows:
    """The derived rows, piece by piece as ``tables_of`` yields them, and what was left out."""

    pieces: Batches | list[tuple[str, int, Any]]
    """Derived from the source as they are read (one pass), or a list (joined to exposures)."""
    columns: list[str]
    """The derived columns (one per distinct aggregation), in order."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Events left out by the exposure join: ``never_exposed``, ``before_exposure``, ``after_window``
    (and ``in_delay`` with a conversion delay)."""

    def warnings(self) -> list[str]:
        return left_out_warnings(self.left_out)


def left_out_warnings(left_out: dict[str, int]) -> list[str]:
    """One warning per kind of event the exposure join left out (``EventRows.left_out``).

    >>> left_out_warnings({"never_exposed": 2, "before_exposure": 0, "after_window": 1})
    ['2 event(s) of units never exposed were left out', "1 event(s) after the unit's window were left out"]
    """
    words = {"never_exposed": "of units never exposed", "before_exposure": "before the unit's first exposure",
             "in_delay": "in the unit's conversion delay", "after_window": "after the unit's window",
             "before_lookback": "before the lookback window", "after_end": "after the analysis end"}
    return [f"{count} event(s) {words[kind]} were left out" for kind, count in left_out.items() if count]


def aggregates_of(definitions: Sequence[Definition]) -> list[Aggregate]:
    """The distinct aggregations of the definitions, in order (``any(x)`` reads ``count(x)``'s
    column, so one of them is enough)."""
    out: dict[str, Aggregate] = {}
    for d in definitions:
        for a in d.aggregates():
            out.setdefault(a.column, a)
    return list(out.values())


def source_columns(definitions: Sequence[Definition], event: str) -> list[str]:
    return list(dict.fromkeys(c for a in aggregates_of(definitions) for c in a.source_columns(event)))


def event_rows(data: Any, definitions: Sequence[Definition], unit: str, variant: str | None, event: str,
               keep: Sequence[str] = ()) -> EventRows:
    """Each piece of ``data`` as ``unit``, ``variant`` (if any), ``keep`` and one column per
    aggregation, derived as the pieces are used (one pass: a Parquet file is decoded piece by
    piece and each piece's rows are summed before the next is read).

    >>> from rankwise.experiments.definitions import parse_definition
    >>> d = [parse_definition("ctr = count(click) / count(view)")]
    >>> rows = event_rows({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"]},
    ...                   d, "u", "arm", "event")
    >>> (_, _, table), = rows.pieces   # read as they are used, once
    >>> table.column("count(click)").to_pylist(), table.column("count(view)").to_pylist()
    ([False, True, False], [True, False, True])
    """
    import pyarrow as pa

    aggregates = aggregates_of(definitions)
    own = [c for c in (unit, variant, *keep) if c is not None]
    reads = list(dict.fromkeys([*own, *source_columns(definitions, event)]))
    source = batches_of(data, reads, ids=[c for c in (unit, variant) if c is not None])

    def derived() -> Iterator[tuple[str, int, Any]]:
        for name, first, table in source:
            columns = {c: table.column(c) for c in own}
            decoded: dict[str, Any] = {}   # each dictionary column's codes, decoded once per piece
            for aggregate in aggregates:
                columns[aggregate.column] = pa.array(contributions(table, aggregate, event, name, first, decoded))
            yield name, first, pa.table(columns)

    return EventRows(Batches(derived(), source.rows, len(source)), [a.column for a in aggregates])


TICKS_PER_SECOND = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
"""The ticks of a second in each unit of Arrow's timestamps (pandas' are nanoseconds)."""


def _seconds(name: str, first: int, column: Any, field_name: str) -> np.ndarray:
    """Times as seconds since the epoch (float64): timestamps, dates, ISO 8601 text or numbers
    (already seconds)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError("missing time", field=field_name, **location(name, first, row))
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return number_column(name, first, column, field_name).astype(np.float64)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        try:
            column = pc.cast(column, pa.timestamp("us"))
        except pa.ArrowInvalid:
            for row, text in enumerate(column.to_pylist()):
                try:
                    pa.scalar(text).cast(pa.timestamp("us"))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    raise InputError(f"expected a time (ISO 8601, such as 2026-03-01 12:00:00), got {text!r}",
                                     field=field_name, **location(name, first, row)) from None
            raise
    if pa.types.is_date(column.type):
        column = column.cast(pa.timestamp("us"))
    if not pa.types.is_timestamp(column.type):
        raise InputError(f"expected times, found values of type {column.type}", field=field_name, source=name)
    ticks = np.asarray(column.cast(pa.int64()).to_numpy(), dtype=np.int64)   # since the epoch (UTC), in its unit
    return ticks / TICKS_PER_SECOND[column.type.unit]


def _exposure_table(pieces: list[Any], unit: str, variant: str, timestamp: str) -> tuple[Any, Any]:
    """Every exposure as one Arrow table (``unit``, ``variant``, ``start`` in seconds), blank
    variants refused; and the units' type (integers when every piece has them, else text)."""
    import pyarrow as pa

    from rankwise.data.tables import refuse_blank

    units, variants, starts = [], [], []
    for name, first, table in pieces:
        units.append(table.column(unit).combine_chunks())
        variants.append(table.column(variant).combine_chunks().cast(pa.string()))
        starts.append(_seconds(name, first, table.column(timestamp).combine_chunks(), timestamp))
    for (name, first, _), labels in zip(pieces, variants, strict=True):
        refuse_blank(name, first, labels, variant)
    unit_type = pa.int64() if all(pa.types.is_integer(u.type) for u in units) else pa.string()
    exposed = pa.table({"unit": pa.concat_arrays([u.cast(unit_type) for u in units]),
                        "variant": pa.concat_arrays(variants), "start": np.concatenate(starts)})
    return exposed, unit_type


def with_exposures(rows: EventRows, exposures: Any, unit: str, variant: str, timestamp: str,
                   window: ConversionWindow | float | None) -> EventRows:
    """The rows of exposed units, with the variant of each unit's first exposure, inside its
    window; one zero row per exposed unit so that units without events count.

    >>> from rankwise.experiments.definitions import parse_definition
    >>> d = [parse_definition("views = count(view)")]
    >>> events = {"u": [1, 1, 2, 3], "t": [5.0, 50.0, 1.0, 9.0], "event": ["view"] * 4}
    >>> exposed = {"u": [1, 2, 4], "arm": ["a", "b", "b"], "t": [0.0, 2.0, 3.0]}
    >>> rows = with_exposures(event_rows(events, d, "u", None, "event", keep=["t"]), exposed, "u", "arm", "t", 10)
    >>> rows.left_out   # unit 3 never exposed; unit 2's view came before its exposure; unit 1's second after 10 s
    {'never_exposed': 1, 'before_exposure': 1, 'after_window': 1}
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(window, (int, float)):   # a length alone
        window = ConversionWindow(length=float(window))
    exposure_pieces = tables_of(exposures, [unit, variant, timestamp], ids=[unit, variant])
    exposed, unit_type = _exposure_table(exposure_pieces, unit, variant, timestamp)
    # the first exposure of each unit gives its start; a unit exposed to two variants keeps both rows
    # (the per-unit sums then count it as mixed)
    first_start = exposed.group_by("unit", use_threads=False).aggregate([("start", "min")])
    if window is None:
        window = ConversionWindow()
    left_out = {"never_exposed": 0, **{kind: 0 for kind, _ in window.exclusions(np.zeros(0), np.zeros(0))}}
    out = []
    # once for every piece: the units' lookup (a hash table built once), first starts and variants
    import pandas as pd

    lookup = pd.Index(first_start.column("unit").to_pandas())
    first_starts = np.asarray(first_start.column("start_min").to_numpy(), dtype=np.float64)
    first_variants = _first_variant(exposed, first_start)
    for name, first, table in rows.pieces:
        ids = table.column(unit).combine_chunks().cast(unit_type)
        position = lookup.get_indexer(ids.to_pandas())
        known = position >= 0
        left_out["never_exposed"] += int((~known).sum())
        at = np.where(known, position, 0)
        times = _seconds(name, first, table.column(timestamp).combine_chunks(), timestamp)
        mask = known.copy()
        for kind, excluded in window.exclusions(times, first_starts[at]):
            left_out[kind] += int((excluded & known).sum())
            mask &= ~excluded
        kept = table.filter(pa.array(mask))
        variant_of = pc.take(first_variants, pa.array(at[mask]))
        columns = {unit: kept.column(unit).cast(unit_type), variant: variant_of, timestamp: _as_time(times[mask])}
        columns.update({c: kept.column(c) for c in rows.columns})
        out.append((name, first, pa.table(columns)))
    zeros = _zero_rows(exposed, rows.columns, out[0][2].schema if out else None, unit, variant, timestamp)
    out.append((exposure_pieces[0][0] if exposure_pieces else "<exposures>", 1, zeros))
    return EventRows(out, rows.columns, left_out)


def _zero_rows(exposed: Any, columns: list[str], schema: Any, unit: str, variant: str, timestamp: str) -> Any:
    """One row of zeros per exposure, so that an exposed unit without events counts; the zeros
    of the type the events have (``schema``: a float sum stays float, a count boolean)."""
    import pyarrow as pa

    zeros = {unit: exposed.column("unit"), variant: exposed.column("variant"),
             timestamp: _as_time(np.asarray(exposed.column("start").to_numpy(), dtype=np.float64))}
    for c in columns:
        kind = schema.field(c).type if schema is not None else pa.bool_()
        zeros[c] = pa.array(np.zeros(exposed.num_rows, dtype=np.int64)).cast(kind)
    return pa.table(zeros)


def _as_time(seconds: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.array(np.round(seconds * 1e6).astype(np.int64), type=pa.int64()).cast(pa.timestamp("us"))


def _first_variant(exposed: Any, first_start: Any) -> Any:
    """The variant of each unit's first exposure, in the order of ``first_start``'s units."""
    import pyarrow as pa
    import pyarrow.compute as pc

    position = pc.index_in(exposed.column("unit"), value_set=first_start.column("unit"))
    starts = np.asarray(first_start.column("start_min").to_numpy(), dtype=np.float64)
    is_first = np.asarray(exposed.column("start").to_numpy(), dtype=np.float64) == starts[position.to_numpy()]
    rows = np.flatnonzero(is_first)
    order = np.asarray(position.to_numpy())[rows]
    chosen = np.empty(first_start.num_rows, dtype=np.int64)
    chosen[order[::-1]] = rows[::-1]   # ties at the first time: the first row listed
    return pc.take(exposed.column("variant"), pa.array(chosen))


def moment_seconds(value: str | float, what: str = "until") -> float:
    """A moment as seconds since the epoch, as the events' times are read: a number as it is,
    text as an ISO 8601 time (without a zone: UTC).

    >>> moment_seconds("2026-03-01 12:00:00"), moment_seconds(5), moment_seconds("115")
    (1772366400.0, 5.0, 115.0)
    """
    import pyarrow as pa

    if isinstance(value, (int, float)):
        return float(value)
    if re.fullmatch(r"\s*-?\d+(\.\d*)?([eE][-+]?\d+)?\s*", str(value)):   # seconds, as numeric times are
        return float(value)
    try:
        micros = pa.scalar(str(value)).cast(pa.timestamp("us")).cast(pa.int64()).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise OptionError(f"{what}={value!r}: expected a time (ISO 8601, such as 2026-03-01 12:00:00) or seconds "
                          "since the epoch") from None
    return micros / 1e6


def latest_seconds(data: Any, timestamp: str) -> float:
    """The latest of the events' times, in seconds (every piece of ``data`` read for that column)."""
    latest = -math.inf
    for name, first, table in tables_of(data, [timestamp]):
        times = _seconds(name, first, table.column(timestamp).combine_chunks(), timestamp)
        if len(times):
            latest = max(latest, float(times.max()))
    return latest
