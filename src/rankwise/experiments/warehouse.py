"""Per-unit aggregation pushed down to DuckDB (``engine="duckdb"``): the event log stays where
it is (Parquet, CSV or JSON files, a DuckDB database table or query, a DataFrame), DuckDB
computes each unit's sums out of core on every core, and only one row per unit comes back to
the same analysis code as the in-memory path.

DuckDB may use 2 GB here (``DEFAULT_MEMORY``) and spills to a temporary directory past it;
the environment variable ``RANKWISE_DUCKDB_MEMORY`` (``8GB``) sets another limit.

The SQL is written from the same declarations as the in-memory rows
(``rankwise.experiments.definitions``): each aggregation is a ``CASE WHEN ... THEN 1 ELSE 0 END``
(or the value) per row, summed per unit; exposures, first exposure and windows as in
``rankwise.experiments.event_rows``. Integer sums are exact (64-bit), so counts, and every metric
built from them, are bit-identical to the in-memory path; float sums agree to rounding.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from rankwise.errors import InputError, OptionError, RankwiseError
from rankwise.experiments.definitions import Definition, quote_identifier
from rankwise.experiments.event_rows import ConversionWindow
from rankwise.experiments.events import MIXED, Mixed, Units
from rankwise.experiments.moments import VariantMoments

AggregationEngine = Literal["memory", "duckdb"]
"""Where the per-unit aggregation runs: pandas/NumPy in this process, or DuckDB."""
AGGREGATION_ENGINES: tuple[AggregationEngine, ...] = get_args(AggregationEngine)
"""Where per-unit sums are computed: ``memory`` (Arrow, in this process) or ``duckdb``."""


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise RankwiseError("engine='duckdb' needs DuckDB: pip install 'rankwise[duckdb]'") from None
    return duckdb


@dataclass(frozen=True)
class DuckDBSource:
    """A table or a query of a DuckDB database file, as the experiment's data.

    >>> DuckDBSource("warehouse.duckdb", table="events").describe()
    'warehouse.duckdb (table events)'
    """

    database: str
    table: str | None = None
    query: str | None = None

    def describe(self) -> str:
        return f"{self.database} ({'table ' + self.table if self.table else 'query'})"


def _relation(connection: Any, data: Any, name: str, ids: Sequence[str] = ()) -> str:
    """Register ``data`` as view ``name`` and return a description of it. ``ids``: identifier
    columns, which a CSV or TSV file gives as integers or as text, never as other numbers (ids
    past int64 or written ``1.0`` would round to one: the memory engine's rule,
    ``rankwise.data.tables.exact_ids``)."""
    import pyarrow as pa

    if isinstance(data, DuckDBSource):
        if (data.table is None) == (data.query is None):
            raise OptionError("a DuckDB source takes a table or a query (--table or --query), one of them")
        from rankwise.data import gateway

        if data.query is not None:   # refused before anything is attached or run
            body = gateway.read_statement(data.query, data.database)
        gateway.attach_read_only(connection, data.database)
        if data.table is not None:
            gateway.check_table(connection, data.table, data.database)
            body = f"SELECT * FROM source.{quote_identifier(data.table)}"
        try:
            connection.execute(f"CREATE TEMP VIEW {name} AS {body}")
        except _duckdb().Error as error:
            raise gateway.backend_error(error, data.database, "--query" if data.query is not None
                                        else f"table {data.table!r}") from None
        return data.describe()
    if hasattr(data, "columns") and hasattr(data, "to_numpy") or isinstance(data, pa.Table):
        connection.register(f"{name}_frame", data)
        connection.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {name}_frame")
        return "<DataFrame>" if not isinstance(data, pa.Table) else "<table>"
    if isinstance(data, dict):
        return _relation(connection, pa.table(data), name)
    paths = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    files: list[str] = []
    from rankwise.data.tables import _files

    for path in paths:
        if not isinstance(path, (str, os.PathLike)):
            raise InputError(f"engine='duckdb' reads files, DataFrames and DuckDB sources, not a {type(path).__name__}",
                             source="<input>")
        files.extend(str(p) for p in _files(path))
    kinds = {_kind(f) for f in files}
    if len(kinds) != 1:
        raise InputError("engine='duckdb' reads files of one kind at a time (Parquet, CSV/TSV or JSON lines), "
                         f"found {', '.join(sorted(kinds))}", source=", ".join(files[:3]))
    kind = kinds.pop()
    listed = "[" + ", ".join(_text(f) for f in files) + "]"
    reader = {"parquet": f"read_parquet({listed})",
              "csv": f"read_csv({listed}, header = true, auto_detect = true)",
              "tsv": f"read_csv({listed}, header = true, delim = '\t', auto_detect = true)",
              "json": f"read_json_auto({listed}, format = 'newline_delimited')"}[kind]
    connection.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM {reader}")
    if kind in ("csv", "tsv") and ids:
        sniffed = {str(r[0]): str(r[1]).upper() for r in connection.execute(f"DESCRIBE {name}").fetchall()}
        text = [c for c in ids if c in sniffed and not _is_integer(sniffed[c]) and sniffed[c] != "VARCHAR"]
        if text:
            typed = ", ".join(f"{_text(c)}: 'VARCHAR'" for c in text)
            connection.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM "
                               f"{reader[:-1]}, types = {{{typed}}})")
    return ", ".join(files)


def _kind(path: str) -> str:
    lowered = path.lower().removesuffix(".gz")
    for ending, kind in ((".parquet", "parquet"), (".pq", "parquet"), (".tsv", "tsv"), (".jsonl", "json"),
                         (".ndjson", "json"), (".json", "json")):
        if lowered.endswith(ending):
            return kind
    return "csv"


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _types(connection: Any, view: str, source: str, needed: Sequence[str]) -> dict[str, str]:
    types = {row[0]: str(row[1]).upper() for row in connection.execute(f"DESCRIBE {view}").fetchall()}
    missing = [c for c in needed if c not in types]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; it has "
                         f"{', '.join(map(repr, types))}", source=source)
    return types


NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
           "FLOAT", "DOUBLE", "REAL")


def _is_numeric(kind: str) -> bool:
    return kind.startswith(NUMERIC) or kind.startswith("DECIMAL")


def _is_integer(kind: str) -> bool:
    return kind.startswith(("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER",
                            "BOOLEAN"))


def _seconds_sql(column: str, kind: str) -> str:
    quoted = quote_identifier(column)
    if _is_numeric(kind):
        return f"CAST({quoted} AS DOUBLE)"
    if kind == "TIMESTAMP_NS":   # pandas' times: nanoseconds kept, as in memory
        return f"(epoch_ns({quoted}) / 1e9)"
    return f"(epoch_us(CAST({quoted} AS TIMESTAMP)) / 1e6)"   # timestamps, dates and ISO 8601 text


def _check(connection: Any, view: str, source: str, conditions: dict[str, str]) -> None:
    """Refuse the data when a row meets one of ``conditions`` (message: SQL condition)."""
    if not conditions:
        return
    counts = connection.execute("SELECT " + ", ".join(f"count(*) FILTER (WHERE {c})" for c in conditions.values())
                                + f" FROM {view}").fetchall()[0]
    for (message, _), count in zip(conditions.items(), counts, strict=True):
        if count:
            raise InputError(f"{count} row(s) with {message}", source=source)


@dataclass(frozen=True)
class PerUnit:
    """The per-unit query DuckDB runs: one row per unit with ``u``, ``v`` (its lowest variant),
    ``v_max`` (its highest: a unit in two variants has them differ) and one sum per column."""

    query: str
    columns: list[str]
    """The metrics' columns (aggregations, then plain columns), in the order of ``names``."""
    names: list[str]
    """Their SQL aliases (``c0``, ``c1`` ...)."""
    integer: list[bool]
    """Whether each sum is an exact integer."""
    left_out: dict[str, int]
    events: int
    source: str
    constants: list[str] = field(default_factory=list)
    """Per-unit covariates (CUPED): one value per unit, read as ``k0``, ``k1`` ... (and their
    ``_max``, which must agree)."""
    daily: str | None = None
    """With ``daily=True``: one row per unit x variant x day (``u``, ``v``, ``day``, the sums and
    the covariates), for the daily looks."""


def _per_unit(connection: Any, data: Any, definitions: Sequence[Definition], plain_sums: Sequence[str],
              unit: str, variant: str, event: str, plain_counts: Sequence[str], exposures: Any,
              window: ConversionWindow | None, timestamp: str | None, constants: Sequence[str] = (),
              daily: bool = False, check: bool = True) -> PerUnit:
    """Check the data (rankwise's errors, the file named; ``check=False`` skips the scan for
    bad rows) and write the per-unit query (``constants``: per-unit covariates, one value per
    unit; ``daily``: the per-unit-day query too, by ``timestamp``, which is read and checked
    whenever it is given)."""
    source = _relation(connection, data, "rankwise_events", ids=[unit, variant])
    from rankwise.experiments.event_rows import aggregates_of

    aggregates = aggregates_of(definitions)
    if constants and exposures is not None:
        raise OptionError("engine='duckdb' does not join covariates (CUPED) to an exposure table yet: use "
                          "engine='memory'")
    read = [unit, *([variant] if exposures is None else []), *plain_sums, *constants,
            *(c for a in aggregates for c in a.source_columns(event)),
            *([timestamp] if timestamp else [])]
    types = _types(connection, "rankwise_events", source, list(dict.fromkeys(read)))
    numeric = frozenset(c for c, k in types.items() if _is_numeric(k))
    for a in aggregates:
        if a.sums and a.target not in numeric:
            raise InputError(f"sum({a.target}): the column holds {types[a.target]}, not numbers", source=source,
                             field=a.target)
    for c in [*plain_sums, *constants]:
        if c not in numeric:
            raise InputError(f"the column holds {types[c]}, not numbers", source=source, field=c)
    u, v = quote_identifier(unit), quote_identifier(variant)
    checks = {f"no {unit}": f"{u} IS NULL"}
    if timestamp:
        checks[f"no {timestamp}"] = f"{quote_identifier(timestamp)} IS NULL"
    if exposures is None:
        checks[f"no {variant}"] = f"{v} IS NULL OR trim(CAST({v} AS VARCHAR)) = ''"
    for a in aggregates:
        if a.sums:
            condition = " AND ".join(c.sql(c.column in numeric) for c in a.clauses(event)) or "TRUE"
            target = quote_identifier(a.target)
            checks[f"no number in {a.target}"] = f"({condition}) AND {target} IS NULL"
            if not _is_integer(types[a.target]):
                checks[f"a value of {a.target} that is not finite"] = f"({condition}) AND NOT isfinite({target})"
    for c in plain_sums:
        checks[f"no number in {c}"] = f"{quote_identifier(c)} IS NULL"
        if not _is_integer(types[c]):
            checks[f"a value of {c} that is not finite"] = f"NOT isfinite({quote_identifier(c)})"
    for c in plain_counts:
        checks[f"a negative count in {c}"] = f"{quote_identifier(c)} < 0"
    for c in constants:
        checks[f"no number in {c}"] = f"{quote_identifier(c)} IS NULL"
    if types[unit] == "VARCHAR":
        checks[f"an empty {unit}"] = f"trim({u}) = ''"
    if check:
        _check(connection, "rankwise_events", source, checks)
    columns = [a.column for a in aggregates] + list(plain_sums)
    expressions = [a.sql(event, numeric) for a in aggregates] + [quote_identifier(c) for c in plain_sums]
    names = [f"c{i}" for i in range(len(columns))]
    unit_type = "BIGINT" if _is_integer(types[unit]) else "VARCHAR"
    select = ", ".join([f"{e} AS {n}" for e, n in zip(expressions, names, strict=True)]
                       + [f"CAST({quote_identifier(c)} AS DOUBLE) AS k{i}" for i, c in enumerate(constants)])
    left_out = {"never_exposed": 0, "before_exposure": 0, "after_window": 0}
    if daily and timestamp is None:
        raise OptionError("daily looks need the timestamp column (--timestamp)")
    if exposures is None:
        seconds = f", {_seconds_sql(timestamp, types[timestamp])} AS t" if daily and timestamp else ""
        rows = (f"SELECT CAST({u} AS {unit_type}) AS u, CAST({v} AS VARCHAR) AS v"
                f"{', ' + select if select else ''}{seconds} FROM rankwise_events")
    else:
        rows, left_out = _exposed_rows(connection, exposures, unit, variant, timestamp, window, types, select,
                                       names, unit_type, daily)
    integer = [not a.sums or _is_integer(types[a.target]) for a in aggregates] + \
              [_is_integer(types[c]) for c in plain_sums]
    # integer sums are exact; float sums use the compensated fsum (DuckDB adds in parallel, in no
    # fixed order)
    sums = ", ".join(f"CAST(sum({n}) AS BIGINT) AS {n}" if whole else f"fsum({n}) AS {n}"
                     for n, whole in zip(names, integer, strict=True))
    sums += "".join(f"{', ' if sums or i else ''}min(k{i}) AS k{i}, max(k{i}) AS k{i}_max"
                    for i in range(len(constants)))
    query = (f"SELECT u, min(v) AS v, max(v) AS v_max{', ' + sums if sums else ''} FROM ({rows}) GROUP BY u")
    per_day = None
    if daily:   # the day of each event (exposure), in UTC from its seconds since the epoch
        day = "make_timestamp(CAST(floor(t / 86400) AS BIGINT) * 86400000000)"
        per_day = (f"SELECT u, v, {day} AS day{', ' + sums if sums else ''} FROM ({rows}) GROUP BY u, v, day "
                   "ORDER BY u, day")
    events = int(connection.execute("SELECT count(*) FROM rankwise_events").fetchall()[0][0]) if check else 0
    return PerUnit(query, columns, names, integer, left_out, events, source, list(constants), per_day)


UNNAMED_SOURCE = "<events>"
"""What an error names when the connection has no attached database (files or frames were read)."""


def data_source_name(connection: Any) -> str:
    """What the error of a failed read names: the attached database, or the files read."""
    try:
        rows = connection.execute("SELECT path FROM duckdb_databases() WHERE database_name = 'source'").fetchall()
    except Exception:   # a connection in a failed state
        rows = []
    return str(rows[0][0]) if rows and rows[0][0] else UNNAMED_SOURCE


DEFAULT_MEMORY = "2GB"
"""DuckDB's memory limit unless ``RANKWISE_DUCKDB_MEMORY`` gives another: what does not fit
spills to a temporary directory of its own (100M events joined to their exposures peak at
2.2 GB: ``benchmarks/bench_exposures.py``, docs/online.md)."""


def _configure(connection: Any, spill: str | None) -> None:
    """The settings of every connection rankwise runs: no insertion order kept (less memory; every
    order is rankwise's own), no progress bar; on a connection of its own (``spill``: its
    temporary directory) the memory limit, on a caller's only the one the environment gives."""
    duckdb = _duckdb()
    connection.execute("SET preserve_insertion_order = false")
    connection.execute("SET enable_progress_bar = false")
    limit = os.environ.get("RANKWISE_DUCKDB_MEMORY") or (DEFAULT_MEMORY if spill is not None else None)
    if limit:
        try:
            connection.execute(f"SET memory_limit = {_text(limit)}")
        except duckdb.Error as error:
            raise OptionError(f"RANKWISE_DUCKDB_MEMORY={limit!r}: {str(error).splitlines()[0]} (expected a size "
                              "such as 2GB)") from None
    if spill is not None:
        connection.execute(f"SET temp_directory = {_text(spill)}")


def _run(connection: Any, per_unit: Callable[[Any], Any], finish: Callable[[Any, Any], Any],
         inputs: Sequence[Any] = ()) -> Any:
    """``finish(connection, per_unit(connection))`` on a configured connection; a DuckDB error
    becomes rankwise's, naming the database, else the files of ``inputs`` (events, exposures)."""
    import tempfile

    duckdb = _duckdb()
    own = connection is None
    with tempfile.TemporaryDirectory(prefix="rankwise-duckdb-") as spill:
        from rankwise.data import gateway

        connection = gateway.duckdb_connection() if own else connection
        try:
            _configure(connection, spill if own else None)
            try:
                plan = per_unit(connection)
            except duckdb.Error as error:   # a view that binds but cannot be read (types, files)
                source = data_source_name(connection)
                files = [str(x) for x in inputs if isinstance(x, (str, os.PathLike))]
                source = ", ".join(files) if source == UNNAMED_SOURCE and files else source
                raise InputError(f"DuckDB could not read it: {str(error).splitlines()[0]}", source=source) from None
            try:
                return finish(connection, plan)
            except duckdb.Error as error:
                raise InputError(f"DuckDB could not read it: {str(error).splitlines()[0]}",
                                 source=plan.source) from None
        finally:
            if own:
                connection.close()


def duckdb_units(data: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str,
                 variant: str, event: str, plain_counts: Sequence[str] = (),
                 variants: Sequence[str] | None = None, mixed: Mixed = "exclude", exposures: Any = None,
                 window: ConversionWindow | None = None, timestamp: str | None = None,
                 connection: Any = None, constants: Sequence[str] = ()) -> tuple[Units, dict[str, int]]:
    """One row per unit with its variant and the sums the metrics read, computed by DuckDB
    (units in id order); and the events the exposure join left out (as
    ``rankwise.experiments.event_rows``).

    ``plain_sums``: columns of the input summed as they are (the ``NAME=COL`` metrics), of
    which ``plain_counts`` must not be negative.

    >>> from rankwise.experiments.definitions import parse_definition
    >>> units, _ = duckdb_units({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"]},
    ...                         [parse_definition("ctr = count(click) / count(view)")], [], "u", "arm", "event")
    >>> units.variants, units.codes.tolist(), units.values["count(click)"].tolist()
    (['a', 'b'], [0, 1], [1, 0])
    """
    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")

    def finish(connection: Any, plan: PerUnit) -> tuple[Units, dict[str, int]]:
        relation = connection.sql(plan.query + " ORDER BY u")
        # DuckDB 2 names it to_arrow_table; DuckDB 1's arrow() returns the table
        table = relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()
        return (_units(table, plan.columns, plan.names, variants, mixed, unit, plan.events, plan.source,
                       plan.constants), plan.left_out)

    return _run(connection, lambda c: _per_unit(c, data, definitions, plain_sums, unit, variant, event,
                                                 plain_counts, exposures, window, timestamp, constants), finish,
                (data, exposures))


def duckdb_daily(data: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str,
                 variant: str, event: str, timestamp: str, plain_counts: Sequence[str] = (),
                 exposures: Any = None, window: ConversionWindow | None = None, connection: Any = None,
                 constants: Sequence[str] = (), check: bool = True) -> Any:
    """One row per unit x variant x day (UTC) with the sums the metrics read, computed by
    DuckDB, as an Arrow table with the columns ``unit``, ``variant``, ``timestamp`` (the day)
    and the metrics' columns: what the daily looks (``rankwise.experiments.analysis.cumulative_looks``)
    add up to each day's units. A unit's rows of two variants stay apart, so the looks see it
    as mixed as the per-unit query does. ``check=False`` skips the scan for bad rows (for data
    a per-unit pass has checked already).

    >>> from rankwise.experiments.definitions import parse_definition
    >>> rows = {"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"],
    ...         "ts": ["2026-03-01 10:00", "2026-03-02 09:00", "2026-03-01 23:59"]}
    >>> t = duckdb_daily(rows, [parse_definition("clicks = count(click)")], [], "u", "arm", "event", "ts")
    >>> [str(d.date()) for d in t.column("ts").to_pylist()], t.column("count(click)").to_pylist()
    (['2026-03-01', '2026-03-02', '2026-03-01'], [0, 1, 0])
    """
    import pyarrow as pa

    def finish(connection: Any, plan: PerUnit) -> Any:
        assert plan.daily is not None
        relation = connection.sql(plan.daily)
        table = relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()
        columns = {unit: table.column("u"), variant: table.column("v"), timestamp: table.column("day")}
        columns.update({c: table.column(n) for c, n in zip(plan.columns, plan.names, strict=True)})
        columns.update({c: table.column(f"k{i}") for i, c in enumerate(plan.constants)})
        return pa.table(columns)

    return _run(connection, lambda c: _per_unit(c, data, definitions, plain_sums, unit, variant, event,
                                                 plain_counts, exposures, window, timestamp, constants,
                                                 daily=True, check=check), finish, (data, exposures))


def duckdb_labels(data: Any, unit: str, dimension: str, connection: Any = None) -> Any:
    """Each unit's value of ``dimension``, computed by DuckDB: an Arrow table of one row per unit
    with ``unit``, ``value`` (its lowest value: a warehouse keeps no row order, so a unit whose
    rows disagree takes the lowest, where the in-memory path takes its first row's) and
    ``distinct`` (how many values its rows had, a missing one counted), for
    ``rankwise.experiments.slices.labels_in_order``.

    >>> t = duckdb_labels({"u": [1, 1, 2], "country": ["FR", "DE", None]}, "u", "country")
    >>> sorted(zip(t.column("unit").to_pylist(), t.column("value").to_pylist(), t.column("distinct").to_pylist()))
    [(1, 'DE', 2), (2, None, 1)]
    """
    from types import SimpleNamespace

    def plan(connection: Any) -> Any:
        source = _relation(connection, data, "rankwise_labels", ids=[unit])
        types = _types(connection, "rankwise_labels", source, [unit, dimension])
        return SimpleNamespace(source=source, unit_type="BIGINT" if _is_integer(types[unit]) else "VARCHAR")

    def finish(connection: Any, plan: Any) -> Any:
        u, d = quote_identifier(unit), quote_identifier(dimension)
        relation = connection.sql(
            f"SELECT CAST({u} AS {plan.unit_type}) AS unit, min(CAST({d} AS VARCHAR)) AS value, "
            f"count(DISTINCT {d}) + max(CASE WHEN {d} IS NULL THEN 1 ELSE 0 END) AS distinct "
            f"FROM rankwise_labels WHERE {u} IS NOT NULL GROUP BY 1")
        return relation.to_arrow_table() if hasattr(relation, "to_arrow_table") else relation.arrow()

    return _run(connection, plan, finish)


def duckdb_moments(data: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str,
                   variant: str, event: str, matrix: Sequence[tuple[str, str, bool]], plain_counts: Sequence[str] = (),
                   variants: Sequence[str] | None = None, mixed: Mixed = "exclude", exposures: Any = None,
                   window: ConversionWindow | None = None, timestamp: str | None = None,
                   connection: Any = None) -> tuple[VariantMoments, int, int, dict[str, int]]:
    """The per-variant sufficient statistics, computed by DuckDB to the end: only one row per
    variant comes back (for tests that need no unit rows). ``matrix``: the moment columns, each
    ``(name, summed column, indicator)`` (an indicator is 1 for a unit whose sum is above 0).
    Integer columns give integer sums and cross-products (HUGEINT: exact), made into the same
    state the in-memory path makes, bit for bit. Returns the state, the units left out for being
    in two variants, the events read and the events the exposure join left out.

    >>> from rankwise.experiments.definitions import parse_definition
    >>> m, mixed, events, _ = duckdb_moments(
    ...     {"u": [1, 1, 2, 3], "arm": ["a", "a", "b", "b"], "event": ["view", "click", "view", "click"]},
    ...     [parse_definition("clicks = count(click)")], [], "u", "arm", "event",
    ...     [("count(click)", "count(click)", False)])
    >>> m.n.tolist(), m.mean("b", "count(click)"), mixed, events
    ([1, 2], 0.5, 0, 4)
    """
    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")

    def finish(connection: Any, plan: PerUnit) -> tuple[VariantMoments, int, int, dict[str, int]]:
        alias = dict(zip(plan.columns, plan.names, strict=True))
        whole = dict(zip(plan.columns, plan.integer, strict=True))
        values = [f"CASE WHEN {alias[c]} > 0 THEN 1 ELSE 0 END" if indicator else alias[c]
                  for _, c, indicator in matrix]
        exact = all(whole[c] or indicator for _, c, indicator in matrix)
        kind = "HUGEINT" if exact else "DOUBLE"
        total = "sum" if exact else "fsum"
        parts = [f"{total}(CAST(m{i} AS {kind})) AS s{i}" for i in range(len(values))]
        parts += [f"{total}(CAST(m{i} AS {kind}) * CAST(m{j} AS {kind})) AS p{i}_{j}"
                  for i in range(len(values)) for j in range(i, len(values))]
        selected = ", ".join(f"{e} AS m{i}" for i, e in enumerate(values))
        query = (f"SELECT v, v = v_max AS clean, count(*) AS n{', ' + ', '.join(parts) if parts else ''} "
                 f"FROM (SELECT v, v_max{', ' + selected if selected else ''} FROM ({plan.query})) "
                 "GROUP BY v, clean ORDER BY v")
        rows = connection.execute(query).fetchall()
        both = sum(int(r[2]) for r in rows if not r[1])
        if both and mixed == "error":
            raise InputError(f"{both} unit(s) appear in more than one variant; pass mixed='exclude' (--mixed "
                             "exclude) to leave them out", field=unit)
        clean = {str(r[0]): r for r in rows if r[1]}
        found = sorted(clean)
        design = list(variants) if variants is not None else found
        unknown = [x for x in {str(r[0]) for r in rows} if x not in design]
        if unknown:
            raise InputError(f"unknown variant {sorted(unknown)[0]!r}; the design has {design}", source=plan.source)
        k = len(values)
        n = [int(clean[x][2]) if x in clean else 0 for x in design]
        sums, products = [], []
        for x in design:
            row = clean.get(x)
            sums.append([row[3 + i] if row else 0 for i in range(k)])
            square = [[0] * k for _ in range(k)]
            at = 3 + k
            for i in range(k):
                for j in range(i, k):
                    square[i][j] = square[j][i] = row[at] if row else 0
                    at += 1
            products.append(square)
        names = [name for name, _, _ in matrix]
        if exact:
            moments = VariantMoments.from_exact_sums(design, names, n, sums, products)
        else:
            moments = VariantMoments.from_sums(design, names, n, np.asarray(sums, dtype=np.float64),
                                               np.asarray(products, dtype=np.float64))
        return moments, both, plan.events, plan.left_out

    return _run(connection, lambda c: _per_unit(c, data, definitions, plain_sums, unit, variant, event,
                                                 plain_counts, exposures, window, timestamp), finish,
                (data, exposures))


def _exposed_rows(connection: Any, exposures: Any, unit: str, variant: str, timestamp: str | None,
                  window: ConversionWindow | None, types: dict[str, str], select: str, names: list[str],
                  unit_type: str, daily: bool = False) -> tuple[str, dict[str, int]]:
    if timestamp is None:
        raise OptionError("exposures are joined to events by time: give the timestamp column (--timestamp)")
    exposure_source = _relation(connection, exposures, "rankwise_exposures", ids=[unit, variant])
    exposure_types = _types(connection, "rankwise_exposures", exposure_source, [unit, variant, timestamp])
    u, v = quote_identifier(unit), quote_identifier(variant)
    _check(connection, "rankwise_exposures", exposure_source,
           {f"no {unit}": f"{u} IS NULL", f"no {variant}": f"{v} IS NULL OR trim(CAST({v} AS VARCHAR)) = ''",
            f"no {timestamp}": f"{quote_identifier(timestamp)} IS NULL"})
    connection.execute(
        f"CREATE TEMP TABLE rankwise_exposed AS SELECT CAST({u} AS {unit_type}) AS u, CAST({v} AS VARCHAR) AS v, "
        f"{_seconds_sql(timestamp, exposure_types[timestamp])} AS t FROM rankwise_exposures")
    connection.execute("CREATE TEMP TABLE rankwise_first AS SELECT u, min(t) AS start, arg_min(v, t) AS v "
                       "FROM rankwise_exposed GROUP BY u")
    seconds = _seconds_sql(timestamp, types[timestamp])
    exclusions = (window if window is not None else ConversionWindow()).sql_exclusions("rankwise_t", "start")
    connection.execute(
        f"CREATE TEMP VIEW rankwise_joined AS SELECT e.*, f.start, f.v AS first_variant, f.u IS NOT NULL AS known "
        f"FROM (SELECT *, CAST({u} AS {unit_type}) AS rankwise_u, {seconds} AS rankwise_t FROM rankwise_events) e "
        f"LEFT JOIN rankwise_first f ON e.rankwise_u = f.u")
    counts = connection.execute(
        "SELECT count(*) FILTER (WHERE NOT known), "
        + ", ".join(f"count(*) FILTER (WHERE known AND {condition})" for _, condition in exclusions)
        + " FROM rankwise_joined").fetchall()[0]
    left_out = dict(zip(["never_exposed", *(kind for kind, _ in exclusions)], (int(c) for c in counts), strict=True))
    keep = "known AND " + " AND ".join(f"NOT ({condition})" for _, condition in exclusions)
    zeros = ", ".join(f"0 AS {n}" for n in names)
    event_time, exposure_time = (", rankwise_t AS t", ", t") if daily else ("", "")
    rows = (f"SELECT rankwise_u AS u, first_variant AS v{', ' + select if select else ''}{event_time} FROM "
            f"rankwise_joined WHERE {keep} UNION ALL SELECT u, v{', ' + zeros if zeros else ''}{exposure_time} "
            "FROM rankwise_exposed")
    return rows, left_out


def _units(table: Any, columns: list[str], names: list[str], variants: Sequence[str] | None, mixed: Mixed,
           unit: str, events: int, source: str, constants: Sequence[str] = ()) -> Units:
    import pyarrow as pa
    import pyarrow.compute as pc

    found = sorted(str(x) for x in table.column("v").unique().to_pylist())
    design = list(variants) if variants is not None else found
    unknown = [x for x in found if x not in design]
    if unknown:
        raise InputError(f"unknown variant {unknown[0]!r}; the design has {design}", source=source)
    both = np.asarray(pc.not_equal(table.column("v"), table.column("v_max")).to_numpy(zero_copy_only=False),
                      dtype=bool)
    if both.any() and mixed == "error":
        first_unit = table.filter(pa.array(both)).column("u")[0].as_py()
        raise InputError(f"unit {first_unit!r} appears in more than one variant ({int(both.sum())} such units); "
                         "pass mixed='exclude' (--mixed exclude) to leave them out", field=unit)
    kept = table.filter(pa.array(~both))
    codes = np.asarray(pc.index_in(kept.column("v"), value_set=pa.array(design)).to_numpy(), dtype=np.int64)
    values = {}
    for column, name in zip(columns, names, strict=True):
        array = kept.column(name)
        values[column] = np.asarray(array.to_numpy(), dtype=np.int64 if pa.types.is_integer(array.type) else np.float64)
    for i, column in enumerate(constants):   # a covariate is one value per unit
        low = np.asarray(kept.column(f"k{i}").to_numpy(), dtype=np.float64)
        differs = np.flatnonzero(low != np.asarray(kept.column(f"k{i}_max").to_numpy(), dtype=np.float64))
        if len(differs):
            raise InputError(f"covariate {column!r} differs within unit {kept.column('u')[int(differs[0])].as_py()!r}; "
                             "expected one value per unit", source=source, field=column)
        values[column] = low
    return Units(design, codes, values, kept.column("u"), int(both.sum()), int(events), [source])



def duckdb_latest_seconds(data: Any, timestamp: str) -> float:
    """The latest of the events' times, in seconds, computed by DuckDB."""
    def latest(connection: Any) -> str:
        source = _relation(connection, data, "rankwise_events")
        kind = _types(connection, "rankwise_events", source, [timestamp])[timestamp]
        return f"SELECT max({_seconds_sql(timestamp, kind)}) FROM rankwise_events"

    def finish(connection: Any, query: str) -> float:
        value = connection.execute(query).fetchall()[0][0]
        return float(value) if value is not None else -math.inf

    return float(_run(None, latest, finish))
