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
CUPAC's features come back per unit as covariates do. Not on this path yet: an exposure table
with windows (give the joined, windowed events as the expression, or use ``engine='memory'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rankwise.errors import InputError, OptionError
from rankwise.online.definitions import Clause, Definition
from rankwise.online.events import MIXED, Mixed, Units


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
    try:
        import ibis
    except ImportError:
        raise OptionError("--ibis needs Ibis and its backend: pip install 'rankwise[ibis]' (and e.g. "
                          "'ibis-framework[postgres]')") from None
    if (table is None) == (query is None):
        raise OptionError("with --ibis give --table NAME or --query SQL (one of them)")
    try:
        connection = ibis.connect(url)
        return connection.table(table) if table is not None else connection.sql(query)
    except Exception as error:   # a backend's own error types: drivers, parsers, missing tables
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"Ibis could not read it: {reason}", source=url) from None


def _describe(table: Any) -> str:
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


def _unit_rows(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, plain_counts: Sequence[str], constants: Sequence[str],
               timestamp: str | None = None) -> tuple[Any, list[str], list[str], list[str], int, str]:
    """The data checked (rankwise's errors) and one row per event as an expression: ``u``,
    ``v``, a contribution ``c0``, ``c1`` ... per column the metrics read, the covariates ``k0``
    ... and, with ``timestamp``, the ``day`` (UTC; numbers are seconds since the epoch). Returns
    the rows, the contributions' names and columns, the covariates' names, the events and the
    source's description."""
    import ibis

    from rankwise.online.event_rows import aggregates_of

    source = _describe(table)
    schema = table.schema()
    aggregates = aggregates_of(definitions)
    needed = [unit, variant, *plain_sums, *constants, *(c for a in aggregates for c in a.source_columns(event)),
              *([timestamp] if timestamp else [])]
    missing = [c for c in dict.fromkeys(needed) if c not in schema]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; found {', '.join(schema.names)}",
                         source=source)
    numeric = {c for c in schema.names if schema[c].is_numeric()}
    for target in [*(a.target for a in aggregates if a.function == "sum"), *plain_sums, *constants]:
        if target not in numeric:
            raise InputError(f"the column holds {schema[target]}, not numbers", source=source, field=target)
    contributions, integer = [], []
    for a in aggregates:
        conditions = [_condition(table, c, c.column in numeric) for c in a.clauses(event)]
        value = table[a.target] if a.function == "sum" else ibis.literal(1)
        if conditions:
            met = conditions[0]
            for c in conditions[1:]:
                met = met & c
            value = ibis.ifelse(met, value, 0)
        contributions.append(value)
        integer.append(a.function != "sum" or schema[a.target].is_integer())
    for c in plain_sums:
        contributions.append(table[c])
        integer.append(schema[c].is_integer())
    names = [f"c{i}" for i in range(len(contributions))]
    checks = {f"no {unit}": table[unit].isnull(), f"no {variant}": table[variant].isnull()}
    for a, contribution in zip(aggregates, contributions, strict=False):
        if a.function == "sum":
            checks[f"no number in {a.target}"] = contribution.isnull()
    for c in plain_sums:
        checks[f"no number in {c}"] = table[c].isnull()
    for c in plain_counts:
        checks[f"a negative count in {c}"] = table[c] < 0
    for c in constants:
        checks[f"no number in {c}"] = table[c].isnull()
    if timestamp:
        checks[f"no {timestamp}"] = table[timestamp].isnull()
    counted = table.aggregate(rows=table.count(),
                              **{f"k{i}": test.cast("int64").sum() for i, test in enumerate(checks.values())})
    found = counted.to_pyarrow().to_pylist()[0]
    if found["rows"] == 0:
        raise InputError("no events", source=source)
    for i, problem in enumerate(checks):
        if found[f"k{i}"]:
            raise InputError(f"{found[f'k{i}']} row(s) with {problem}", source=source)
    label = table[variant].cast("string")
    unit_value = table[unit] if schema[unit].is_integer() else table[unit].cast("string")
    kept = {f"k{i}": table[c].cast("float64") for i, c in enumerate(constants)}
    if timestamp:
        time = table[timestamp]
        if schema[timestamp].is_numeric():   # seconds since the epoch, as on the other engines
            time = (time.cast("float64") / 86400).floor().cast("int64") * 86400
            kept["day"] = time.as_timestamp("s")
        else:
            kept["day"] = time.cast("timestamp").truncate("D")
    rows = table.select(u=unit_value, v=label, **{n: value.cast("int64" if whole else "float64")
                                                 for n, value, whole in zip(names, contributions, integer,
                                                                            strict=True)}, **kept)
    columns = [a.column for a in aggregates] + list(plain_sums)
    return rows, names, columns, [k for k in kept if k != "day"], int(found["rows"]), source


def _unit_type(table: Any, unit: str) -> Any:
    import pyarrow as pa

    kind = table.schema()[unit]
    return kind.to_pyarrow() if kind.is_integer() else pa.string()


def ibis_units(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, plain_counts: Sequence[str] = (), variants: Sequence[str] | None = None,
               mixed: Mixed = "exclude", constants: Sequence[str] = ()) -> Units:
    """One row per unit with its variant and the sums the metrics read, computed by the Ibis
    backend holding ``table`` (see the module); ``constants``: per-unit covariates (CUPED), one
    value per unit.

    >>> import ibis
    >>> from rankwise.online.definitions import parse_definition
    >>> events = ibis.memtable({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"]})
    >>> units = ibis_units(events, [parse_definition("ctr = count(click) / count(view)")], [], "u", "arm", "event")
    >>> units.variants, units.codes.tolist(), units.values["count(click)"].tolist()
    (['a', 'b'], [0, 1], [1, 0])
    """
    from rankwise.online.warehouse import _units

    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")
    rows, names, columns, kept, events, source = _unit_rows(table, definitions, plain_sums, unit, variant, event,
                                                            plain_counts, constants)
    spans = {**{k: rows[k].min() for k in kept}, **{f"{k}_max": rows[k].max() for k in kept}}
    per_unit = (rows.group_by("u").aggregate(v_max=rows.v.max(), **{n: rows[n].sum() for n in names},
                                             v=rows.v.min(), **spans)
                .select("u", "v", "v_max", *names, *spans).order_by("u"))
    result = _with_unit_type(per_unit.to_pyarrow(), _unit_type(table, unit))
    return _units(result, columns, names, variants, mixed, unit, events, source, constants)


def _with_unit_type(result: Any, kind: Any) -> Any:
    """The backend's unit column as the input's integer type (a backend may widen it)."""
    if result.num_rows and result.schema.field("u").type != kind:
        return result.set_column(0, "u", result.column("u").cast(kind))
    return result


def ibis_daily(table: Any, definitions: Sequence[Definition], plain_sums: Sequence[str], unit: str, variant: str,
               event: str, timestamp: str, plain_counts: Sequence[str] = (), constants: Sequence[str] = ()) -> Any:
    """One row per unit x variant x day (UTC) with the sums the metrics read, computed by the
    Ibis backend, as an Arrow table with the columns ``unit``, ``variant``, ``timestamp`` (the
    day) and the metrics' columns: what the daily looks add up to each day's units (as
    ``rankwise.online.warehouse.duckdb_daily``).

    >>> import ibis
    >>> from rankwise.online.definitions import parse_definition
    >>> events = ibis.memtable({"u": [1, 1, 2], "arm": ["a", "a", "b"], "event": ["view", "click", "view"],
    ...                         "ts": [1772359200, 1772442000, 1772409540]})   # 1 Mar 10:00, 2 Mar 09:00, 1 Mar 23:59
    >>> t = ibis_daily(events, [parse_definition("clicks = count(click)")], [], "u", "arm", "event", "ts")
    >>> [str(d.date()) for d in t.column("ts").to_pylist()], t.column("count(click)").to_pylist()
    (['2026-03-01', '2026-03-02', '2026-03-01'], [0, 1, 0])
    """
    import pyarrow as pa

    rows, names, columns, kept, _, _ = _unit_rows(table, definitions, plain_sums, unit, variant, event,
                                                  plain_counts, constants, timestamp)
    per_day = (rows.group_by(["u", "v", "day"]).aggregate(**{n: rows[n].sum() for n in names},
                                                         **{k: rows[k].min() for k in kept})
               .order_by(["u", "day"]))
    result = _with_unit_type(per_day.to_pyarrow(), _unit_type(table, unit))
    out = {unit: result.column("u"), variant: result.column("v"), timestamp: result.column("day")}
    out.update({c: result.column(n) for c, n in zip(columns, names, strict=True)})
    out.update({c: result.column(k) for c, k in zip(constants, kept, strict=True)})
    return pa.table(out)


def ibis_labels(table: Any, unit: str, dimension: str) -> Any:
    """Each unit's value of ``dimension``, computed by the Ibis backend: one row per unit with
    ``unit``, ``value`` (the lowest: a warehouse keeps no row order) and ``distinct`` (values
    its rows had, a missing one counted), as ``rankwise.online.warehouse.duckdb_labels``.

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
