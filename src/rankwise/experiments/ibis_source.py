"""Event logs in any warehouse Ibis reaches (DuckDB, Postgres, BigQuery, Snowflake, Spark,
ClickHouse ...): the per-unit aggregation written as one Ibis expression and run where the
data lies; one row per unit comes back and the same analysis code reads it.

``analyze(table, ...)`` with an Ibis table expression (``con.table("events")``, a filtered or
joined expression) takes this path by itself. Each metric definition becomes a sum per unit of
``ifelse(conditions, value, 0)`` (``count(click)``: 1 on a click row; ``sum(value where event =
purchase)``: the value on a purchase row), the unit's variant its lowest and highest value (a
unit seen in two variants is left out or refused, as in memory). Integer sums come back as
integers, so the analysis equals the in-memory one bit for bit on counts.

CUPED covariates (one value per unit) are read per unit beside the sums; daily looks read
one row per unit x variant x day (``ibis_daily``), slices each unit's value (``ibis_labels``).
CUPAC's features come back per unit as covariates do. An exposure table (an Ibis table of the
same backend, a DataFrame or files) is joined in the backend: first exposure, windows and the events
left out as ``rankwise.experiments.event_rows`` defines them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rankwise.errors import InputError, OptionError
from rankwise.experiments.definitions import Clause, Definition
from rankwise.experiments.event_rows import ConversionWindow
from rankwise.experiments.events import MIXED, Mixed, Units


def aggregated_where(data: Any, engine: str) -> str:
    """Where ``data`` is aggregated: ``ibis`` (an Ibis table, by its backend), ``duckdb`` (the
    engine asked for, or a DuckDB database) or ``memory`` (in this process).

    >>> aggregated_where({"a": [1]}, "memory"), aggregated_where({"a": [1]}, "duckdb")
    ('memory', 'duckdb')
    """
    from rankwise.experiments.warehouse import DuckDBSource

    if is_ibis_table(data):
        return "ibis"
    return "duckdb" if engine == "duckdb" or isinstance(data, DuckDBSource) else "memory"


def is_ibis_table(data: Any) -> bool:
    """True for an Ibis table expression (checked by type name: Ibis is not imported for it).

    >>> is_ibis_table({"a": [1]})
    False
    """
    return any(cls.__module__.startswith("ibis.") and cls.__name__ == "Table" for cls in type(data).__mro__)


def connect_table(url: str, table: str | None = None, query: str | None = None) -> Any:
    """The events of an Ibis connection URL (``duckdb://events.ddb``, ``postgres://user@host/db``,
    ``bigquery://project/dataset`` ...): the table ``table`` or the result of ``query``.

    >>> import duckdb, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "events.ddb")
    >>> duckdb.connect(path).execute("CREATE TABLE events AS SELECT 1 AS unit, 'a' AS variant").close()
    >>> connect_table(f"duckdb://{path}", table="events").columns
    ('unit', 'variant')
    """
    from rankwise.data import gateway

    if (table is None) == (query is None):
        raise OptionError("with --ibis give --table NAME or --query SQL (one of them)")
    connection = gateway.ibis_connection(url)
    if query is not None:   # refused before the backend sees it
        statement = gateway.read_statement(query, url, gateway.ibis_dialect(connection))
    try:
        if table is not None:
            try:
                return _named(connection.table(table), f"{url} (table {table!r})")
            except Exception:   # a missing table, named with the tables present when the backend lists them
                present = _tables(connection)
                if present is not None and table not in present:
                    listed = ", ".join(repr(t) for t in present[:20]) or "none"
                    raise InputError(f"no table or view named {table!r}; the database has {listed}",
                                     source=url) from None
                raise
        return _named(connection.sql(statement), f"{url} (--query)")
    except InputError:
        raise
    except Exception as error:   # a backend's own error types: drivers, parsers, missing tables
        raise gateway.backend_error(error, url, f"table {table!r}" if table is not None else "--query") from None


def _tables(connection: Any) -> list[str] | None:
    """The tables a connection lists, or None when the backend cannot list them."""
    raw = getattr(connection, "con", None)
    try:
        if connection.name == "duckdb" and raw is not None:
            return [str(r[0]) for r in raw.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return [str(t) for t in connection.list_tables()]
    except Exception:   # a backend without a listing, or without the rights to it
        return None


_SOURCES: dict[int, tuple[Any, str]] = {}
"""The tables ``connect_table`` made, by identity (a weak reference: the table is not kept
alive), with the source a message names (the URL and the table or ``--query``): an Ibis
expression does not carry its connection's URL."""


def _named(table: Any, source: str) -> Any:
    import weakref

    key = id(table)
    _SOURCES[key] = (weakref.ref(table, lambda _: _SOURCES.pop(key, None)), source)
    return table


def _describe(table: Any) -> str:
    """What a message names a table by: the URL it came from (``connect_table``), else its name
    in its backend, else ``<ibis expression>``."""
    known = _SOURCES.get(id(table))
    if known is not None and known[0]() is table:
        return known[1]
    try:
        name = table.get_name()
    except Exception:   # an expression (a filter, a join) has no name of its own
        name = None
    return f"<ibis table {name}>" if name else "<ibis expression>"


def _condition(table: Any, clause: Clause, numeric: bool) -> Any:
    import ibis

    column = table[clause.column]
    values = [float(v) for v in clause.values] if numeric else [str(v) for v in clause.values]
    if not numeric:
        column = column.cast("string")
    if clause.op == "in":
        test = column.isin(values)
    else:
        value = ibis.literal(values[0])
        test = {"=": column == value, "!=": column != value, "<": column < value, "<=": column <= value,
                ">": column > value, ">=": column >= value}[clause.op]
    return test.fill_null(False)


@dataclass
class UnitRows:
    """One row per event (and, with exposures, per exposure) as an Ibis expression: ``u``,
    ``v``, one contribution ``c0``, ``c1`` ... per column the metrics read, the covariates
    ``k0`` ... and, with a timestamp, the ``day`` (UTC; numbers are seconds since the epoch)."""

    rows: Any
    names: list[str]
    """The contributions' names, in the order of ``columns``."""
    columns: list[str]
    covariates: list[str]
    """The covariates' names (``k0`` ...)."""
    events: int
    source: str
    left_out: dict[str, int] = field(default_factory=dict)
    """Events the exposure join left out, as ``rankwise.experiments.event_rows``."""


def _unit_rows(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, plain_counts: Sequence[str], constants: Sequence[str],
               timestamp: str | None = None, daily: bool = False, exposures: Any = None,
               window: ConversionWindow | None = None, check: bool = True) -> UnitRows:
    """The data checked (rankwise's errors; ``check=False`` skips the scan for bad rows, for
    data checked already) and its rows (``UnitRows``); with ``exposures`` (an
    Ibis table of ``unit``, ``variant``, ``timestamp``) each unit's variant is that of its first
    exposure and its events count from then, for ``window`` seconds if given, as in memory."""
    import ibis

    from rankwise.experiments.event_rows import aggregates_of

    source = _describe(table)
    schema = table.schema()
    aggregates = aggregates_of(definitions)
    if exposures is not None and not timestamp:
        raise OptionError("exposures are joined to events by time: give the timestamp column (--timestamp)")
    if daily and not timestamp:
        raise OptionError("daily looks need the timestamp column (--timestamp)")
    needed = [unit, *([variant] if exposures is None else []), *plain_sums, *constants,
              *(c for a in aggregates for c in a.source_columns(event)), *([timestamp] if timestamp else [])]
    missing = [c for c in dict.fromkeys(needed) if c not in schema]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; found {', '.join(schema.names)}",
                         source=source)
    numeric = {c for c in schema.names if schema[c].is_numeric()}
    for target in [*(a.target for a in aggregates if a.sums), *plain_sums, *constants]:
        if target not in numeric:
            raise InputError(f"the column holds {schema[target]}, not numbers", source=source, field=target)
    contributions, integer = [], []
    for a in aggregates:
        conditions = [_condition(table, c, c.column in numeric) for c in a.clauses(event)]
        value = table[a.target] if a.sums else ibis.literal(1)
        if conditions:
            met = conditions[0]
            for c in conditions[1:]:
                met = met & c
            value = ibis.ifelse(met, value, 0)
        contributions.append(value)
        integer.append(not a.sums or schema[a.target].is_integer())
    for c in plain_sums:
        contributions.append(table[c])
        integer.append(schema[c].is_integer())
    names = [f"c{i}" for i in range(len(contributions))]
    checks = {f"no {unit}": table[unit].isnull()}
    if exposures is None:
        checks[f"no {variant}"] = table[variant].isnull()
    for a, contribution in zip(aggregates, contributions, strict=False):
        if a.sums:
            checks[f"no number in {a.target}"] = contribution.isnull()
    for c in plain_sums:
        checks[f"no number in {c}"] = table[c].isnull()
    for c in plain_counts:
        checks[f"a negative count in {c}"] = table[c] < 0
    for c in constants:
        checks[f"no number in {c}"] = table[c].isnull()
    if timestamp:
        checks[f"no {timestamp}"] = table[timestamp].isnull()
    events = _checked(table, checks, source) if check else 0
    unit_value = table[unit] if schema[unit].is_integer() else table[unit].cast("string")
    kept = {f"k{i}": table[c].cast("float64") for i, c in enumerate(constants)}
    if timestamp:
        kept["t"] = _time(table, timestamp)
    if exposures is None:
        kept["v"] = table[variant].cast("string")
    rows = table.select(u=unit_value, **{n: value.cast("int64" if whole else "float64")
                                         for n, value, whole in zip(names, contributions, integer, strict=True)},
                        **kept)
    left_out: dict[str, int] = {}
    if exposures is not None:
        assert timestamp is not None
        rows, left_out = _exposed(rows, exposures, unit, variant, timestamp, window, names,
                                  [k for k in kept if k.startswith("k")], schema[unit].is_integer(), check)
    if daily:
        rows = rows.mutate(day=_day(rows.t))
    columns = [a.column for a in aggregates] + list(plain_sums)
    return UnitRows(rows, names, columns, [f"k{i}" for i in range(len(constants))], events, source, left_out)


def _checked(table: Any, checks: dict[str, Any], source: str) -> int:
    """Refuse the table when a row meets one of ``checks`` (message: condition); its rows."""
    counted = table.aggregate(rows=table.count(),
                              **{f"k{i}": test.cast("int64").sum() for i, test in enumerate(checks.values())})
    found = counted.to_pyarrow().to_pylist()[0]
    if found["rows"] == 0:
        raise InputError("no events", source=source)
    for i, problem in enumerate(checks):
        if found[f"k{i}"]:
            raise InputError(f"{found[f'k{i}']} row(s) with {problem}", source=source)
    return int(found["rows"])


def _time(table: Any, column: str) -> Any:
    """Times as the backend compares them: numbers (seconds since the epoch) or timestamps
    (ISO 8601 text read as such)."""
    value = table[column]
    return value.cast("float64") if table.schema()[column].is_numeric() else value.cast("timestamp")


def _day(time: Any) -> Any:
    if time.type().is_numeric():   # seconds since the epoch, as on the other engines
        return ((time / 86400).floor().cast("int64") * 86400).as_timestamp("s")
    return time.truncate("D")


def _exposed(rows: Any, exposures: Any, unit: str, variant: str, timestamp: str, window: ConversionWindow | None,
             names: list[str], covariates: list[str], integer_units: bool,
             check: bool = True) -> tuple[Any, dict[str, int]]:
    """The events of exposed units from their first exposure (within ``window`` seconds), with
    that exposure's variant, and a row of zeros per exposure; the counts left out."""
    import os

    import ibis

    source = _describe(exposures) if is_ibis_table(exposures) else "<exposures>"
    if isinstance(exposures, (str, os.PathLike)) or (isinstance(exposures, (list, tuple)) and exposures):
        # files (the command line's --exposures): read here, sent to the backend as a table
        import pyarrow as pa

        from rankwise.data.tables import tables_of

        pieces = tables_of(exposures, [unit, variant, timestamp], ids=[unit, variant])
        source = ", ".join(dict.fromkeys(name for name, _, _ in pieces))
        tables = [table for _, _, table in pieces]
        exposures = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    if not is_ibis_table(exposures):
        if hasattr(exposures, "columns") or hasattr(exposures, "schema") or isinstance(exposures, dict):
            exposures = ibis.memtable(exposures)
        else:
            raise OptionError("with an Ibis table give the exposures as an Ibis table of the same backend, a "
                              "DataFrame or files")
    schema = exposures.schema()
    missing = [c for c in (unit, variant, timestamp) if c not in schema]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; found {', '.join(schema.names)}",
                         source=source)
    if check:
        _checked(exposures, {f"no {unit}": exposures[unit].isnull(), f"no {variant}": exposures[variant].isnull(),
                             f"no {timestamp}": exposures[timestamp].isnull()}, source)
    exposed_unit = exposures[unit] if integer_units else exposures[unit].cast("string")
    exposed = exposures.select(u=exposed_unit, v=exposures[variant].cast("string"), t=_time(exposures, timestamp))
    if exposed.t.type().is_numeric() != rows.t.type().is_numeric():
        raise InputError(f"the events' and the exposures' {timestamp!r} differ in kind (numbers and times)",
                         source=source, field=timestamp)
    first = exposed.group_by("u").aggregate(start=exposed.t.min(), first_v=exposed.v.argmin(exposed.t))
    first = first.select(first_u=first.u, start=first.start, first_v=first.first_v)
    joined = rows.left_join(first, rows.u == first.first_u)
    known = joined.first_u.notnull()
    exclusions = _exclusions(joined, window if window is not None else ConversionWindow())
    counts = {"never_exposed": (~known).cast("int64").sum(),
              **{kind: (known & condition).fill_null(False).cast("int64").sum() for kind, condition in exclusions}}
    counted = joined.aggregate(**counts).to_pyarrow().to_pylist()[0]
    left_out = {k: int(v or 0) for k, v in counted.items()}
    kept = known
    for _, condition in exclusions:
        kept = kept & ~condition.fill_null(False)
    events = joined.filter(kept).select(
        u=joined.u, v=joined.first_v, **{n: joined[n] for n in [*names, *covariates]}, t=joined.t)
    zeros = exposed.select(u=exposed.u, v=exposed.v, **{n: ibis.literal(0).cast(rows[n].type()) for n in names},
                           **{k: ibis.null().cast("float64") for k in covariates}, t=exposed.t)
    return events.union(zeros), left_out


def _span(joined: Any, seconds: float) -> Any:
    """``seconds`` as the events' time column adds them: a number, or an interval."""
    import ibis

    return seconds if joined.t.type().is_numeric() else ibis.interval(microseconds=round(seconds * 1e6))


def _moment(joined: Any, seconds: float) -> Any:
    """A moment (seconds since the epoch) as the events' time column compares with it."""
    import ibis

    if joined.t.type().is_numeric():
        return seconds
    import numpy as np

    return ibis.literal(np.datetime64(round(seconds * 1e6), "us")).cast("timestamp")


def _exclusions(joined: Any, window: ConversionWindow) -> list[tuple[str, Any]]:
    """``ConversionWindow.exclusions`` as Ibis conditions over the events joined to their unit's
    first exposure (``t`` and ``start``: seconds or times), each excluding the ones before it."""
    import ibis

    t, start = joined.t, joined.start
    kinds = [("before_exposure", t < start + _span(joined, window.lead) if window.lead else t < start)]
    if window.delay > 0:
        kinds.append(("in_delay", (t >= start) & (t < start + _span(joined, window.delay))))
    if window.not_before is not None:
        kinds.append(("before_lookback", t < _moment(joined, window.not_before)))
    if window.not_after is not None:
        kinds.append(("after_end", t > _moment(joined, window.not_after)))
    closes = window.closes
    if closes is None:
        kinds.append(("after_window", ibis.literal(False)))
    else:
        end = start + _span(joined, closes)
        kinds.append(("after_window", (t > end) if window.end == "inclusive" else (t >= end)))
    out, earlier = [], ibis.literal(False)
    for kind, condition in kinds:
        out.append((kind, condition.fill_null(False) & ~earlier))
        earlier = earlier | condition.fill_null(False)
    return out


def _unit_type(table: Any, unit: str) -> Any:
    import pyarrow as pa

    kind = table.schema()[unit]
    return kind.to_pyarrow() if kind.is_integer() else pa.string()


def ibis_units(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, plain_counts: Sequence[str] = (), variants: Sequence[str] | None = None,
               mixed: Mixed = "exclude", constants: Sequence[str] = (), exposures: Any = None,
               window: ConversionWindow | None = None, timestamp: str | None = None) -> tuple[Units, dict[str, int]]:
    """One row per unit with its variant and the sums the metrics read, computed by the Ibis
    backend holding ``table`` (see the module); ``constants``: per-unit covariates (CUPED), one
    value per unit; ``exposures``: an Ibis table (or DataFrame) of (``unit``, ``variant``,
    ``timestamp``) exposures, each unit's events counted from its first, for ``window`` seconds
    if given; and the events the exposure join left out (as ``duckdb_units``).

    >>> import ibis
    >>> from rankwise.experiments.definitions import parse_definition
    >>> events = ibis.memtable({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"]})
    >>> units, _ = ibis_units(events, [parse_definition("ctr = count(click) / count(view)")], [], "u", "arm",
    ...                       "event")
    >>> units.variants, units.codes.tolist(), units.values["count(click)"].tolist()
    (['a', 'b'], [0, 1], [1, 0])
    """
    from rankwise.experiments.warehouse import _units

    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")
    got = _unit_rows(table, definitions, plain_sums, unit, variant, event, plain_counts, constants, timestamp,
                     exposures=exposures, window=window)
    rows, names = got.rows, got.names
    spans = {**{k: rows[k].min() for k in got.covariates}, **{f"{k}_max": rows[k].max() for k in got.covariates}}
    per_unit = (rows.group_by("u").aggregate(v_max=rows.v.max(), **{n: rows[n].sum() for n in names},
                                             v=rows.v.min(), **spans)
                .select("u", "v", "v_max", *names, *spans).order_by("u"))
    result = _with_unit_type(per_unit.to_pyarrow(), _unit_type(table, unit))
    return _units(result, got.columns, names, variants, mixed, unit, got.events, got.source, constants), got.left_out


def _with_unit_type(result: Any, kind: Any) -> Any:
    """The backend's unit column as the input's integer type (a backend may widen it)."""
    if result.num_rows and result.schema.field("u").type != kind:
        return result.set_column(0, "u", result.column("u").cast(kind))
    return result


def ibis_daily(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, timestamp: str, plain_counts: Sequence[str] = (), constants: Sequence[str] = (),
               exposures: Any = None, window: ConversionWindow | None = None, check: bool = True) -> Any:
    """One row per unit x variant x day (UTC) with the sums the metrics read, computed by the
    Ibis backend, as an Arrow table with the columns ``unit``, ``variant``, ``timestamp`` (the
    day) and the metrics' columns: what the daily looks add up to each day's units (as
    ``rankwise.experiments.warehouse.duckdb_daily``; ``check=False`` skips the scan for bad rows).

    >>> import ibis
    >>> from rankwise.experiments.definitions import parse_definition
    >>> events = ibis.memtable({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"],
    ...                         "ts": [1772359200, 1772442000, 1772409540]})   # 1 Mar 10:00, 2 Mar 09:00, 1 Mar 23:59
    >>> t = ibis_daily(events, [parse_definition("clicks = count(click)")], [], "u", "arm", "event", "ts")
    >>> [str(d.date()) for d in t.column("ts").to_pylist()], t.column("count(click)").to_pylist()
    (['2026-03-01', '2026-03-02', '2026-03-01'], [0, 1, 0])
    """
    import pyarrow as pa

    got = _unit_rows(table, definitions, plain_sums, unit, variant, event, plain_counts, constants, timestamp,
                     daily=True, exposures=exposures, window=window, check=check)
    rows = got.rows
    per_day = (rows.group_by(["u", "v", "day"]).aggregate(**{n: rows[n].sum() for n in got.names},
                                                         **{k: rows[k].min() for k in got.covariates})
               .order_by(["u", "day"]))
    result = _with_unit_type(per_day.to_pyarrow(), _unit_type(table, unit))
    out = {unit: result.column("u"), variant: result.column("v"), timestamp: result.column("day")}
    out.update({c: result.column(n) for c, n in zip(got.columns, got.names, strict=True)})
    out.update({c: result.column(k) for c, k in zip(constants, got.covariates, strict=True)})
    return pa.table(out)


def ibis_labels(table: Any, unit: str, dimension: str) -> Any:
    """Each unit's value of ``dimension``, computed by the Ibis backend: one row per unit with
    ``unit``, ``value`` (the lowest: a warehouse keeps no row order) and ``distinct`` (values
    its rows had, a missing one counted), as ``rankwise.experiments.warehouse.duckdb_labels``.

    >>> import ibis
    >>> t = ibis_labels(ibis.memtable({"u": [1, 1, 2], "country": ["FR", "DE", None]}), "u", "country")
    >>> sorted(zip(t.column("unit").to_pylist(), t.column("value").to_pylist(), t.column("distinct").to_pylist()))
    [(1, 'DE', 2), (2, None, 1)]
    """
    schema = table.schema()
    missing = [c for c in (unit, dimension) if c not in schema]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; found {', '.join(schema.names)}",
                         source=_describe(table))
    value = table[dimension].cast("string")
    unit_value = table[unit] if schema[unit].is_integer() else table[unit].cast("string")
    rows = table.select(unit=unit_value, value=value).filter(unit_value.notnull())
    per_unit = rows.group_by("unit").aggregate(
        value=rows.value.min(), distinct=rows.value.nunique() + rows.value.isnull().cast("int64").max())
    return per_unit.to_pyarrow()


__all__ = ["connect_table", "ibis_daily", "ibis_labels", "ibis_units", "is_ibis_table"]


def ibis_latest_seconds(table: Any, timestamp: str) -> float:
    """The latest of the events' times, in seconds, computed by the Ibis backend."""
    import pyarrow as pa

    time = _time(table, timestamp)
    value = time.max().to_pyarrow()
    if not value.is_valid:
        return float("-inf")
    if time.type().is_numeric():
        return float(value.as_py())
    from rankwise.experiments.event_rows import TICKS_PER_SECOND

    return float(value.cast(pa.int64()).as_py()) / TICKS_PER_SECOND[value.type.unit]   # any unit, no rounding
