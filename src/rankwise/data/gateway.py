"""The one gateway to databases and remote sources: every DuckDB database or Ibis backend that
rankwise reads is opened here, read-only, and never created; a ``--query`` is accepted only as
one read statement, as the engine's own parser sees it; a backend's error becomes a rankwise
error naming the source, table or query.

- ``duckdb_database(path)``: the path checked to be an existing DuckDB database file (a CSV,
  SQLite or empty file is named for what it is).
- ``read_statement(sql, source, dialect)``: the single ``SELECT`` (``WITH``, ``VALUES``,
  ``FROM t``, set operations) that ``sql`` holds, its trailing ``;`` removed; anything that
  writes, attaches, copies or sets is refused before it reaches the engine. DuckDB's statements
  are classified by DuckDB's parser (``duckdb.extract_statements``); another backend's by
  sqlglot in that backend's dialect.
- ``duckdb_connection()``: every in-memory DuckDB connection rankwise opens, set so that no
  statement downloads an extension (``NO_DOWNLOADS``).
- ``attach_read_only(connection, path)``: the database attached read-only as ``source`` and made
  the default catalog, so a query names tables as the user names them (``events`` and
  ``source.events`` both work).
- ``check_table(connection, table, source)``: a missing table is an error listing the tables.
- ``backend_error(error, source)``: the first line of a backend's error, as an ``InputError``.

>>> read_statement("SELECT unit, variant FROM events;", "ev.ddb")
'SELECT unit, variant FROM events'
>>> read_statement("SELECT 1; COPY (SELECT 1) TO 'x.csv'", "ev.ddb")
Traceback (most recent call last):
...
rankwise.errors.OptionError: ev.ddb: --query must be one read statement (SELECT ...); it holds 2 statements: ...
"""

from __future__ import annotations

import os
from typing import Any

from rankwise.errors import InputError, OptionError

_DUCKDB_MAGIC = b"DUCK"
"""A DuckDB database file holds these bytes at offset 8."""

FILE_BACKENDS = ("duckdb", "sqlite")
"""Ibis backends whose URL names a database file (which must exist: a connection never
creates one)."""


def duckdb_module() -> Any:
    """DuckDB, or an error with the install line of the extra that brings it."""
    try:
        import duckdb
    except ImportError:
        raise OptionError("reading a DuckDB database needs DuckDB: pip install 'rankwise[duckdb]'") from None
    return duckdb


NO_DOWNLOADS = {"autoinstall_known_extensions": False}
"""The settings of every DuckDB connection rankwise opens: no statement installs an extension.
By default a query that reads an ``https://`` or ``s3://`` path, or calls ``sqlite_scan``,
downloads the extension it needs into the home directory (``~/.duckdb``): a write made by a
read. Extensions already installed still load."""


def duckdb_connection() -> Any:
    """A new in-memory DuckDB connection with rankwise's settings (``NO_DOWNLOADS``).

    >>> connection = duckdb_connection()
    >>> connection.execute("SELECT current_setting('autoinstall_known_extensions')").fetchone()
    (False,)
    >>> connection.close()
    """
    return duckdb_module().connect(config=dict(NO_DOWNLOADS))


def _what_file_is(head: bytes) -> str:
    if not head:
        return "an empty file"
    if head.startswith(b"SQLite format 3\x00"):
        return "a SQLite database"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file"
    if all(32 <= b < 127 or b in (9, 10, 13) for b in head[:512]):
        return "a text file (CSV or similar: give it as a log file, not with --database)"
    return "not a DuckDB database"


def duckdb_database(path: str | os.PathLike[str]) -> str:
    """``path`` as a string, checked to be an existing DuckDB database file.

    >>> import tempfile, os
    >>> csv = os.path.join(tempfile.mkdtemp(), "log.csv"); _ = open(csv, "w").write("unit,variant\\n1,a\\n")
    >>> duckdb_database(csv)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...log.csv: expected a DuckDB database file; this is a text file ...
    """
    text = os.fspath(path)
    if not os.path.exists(text):
        raise InputError("no such database file (a database is read, never created)", source=text)
    if os.path.isdir(text):
        raise InputError("is a directory; expected a DuckDB database file", source=text)
    try:
        with open(text, "rb") as f:
            head = f.read(4096)
    except OSError as error:
        raise InputError(f"cannot be read ({error.strerror or error})", source=text) from None
    if head[8:12] != _DUCKDB_MAGIC:
        raise InputError(f"expected a DuckDB database file; this is {_what_file_is(head)}", source=text)
    return text


def _duckdb_statement_types(sql: str, source: str) -> list[str]:
    duckdb = duckdb_module()
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise OptionError(f"{source}: --query does not parse: {first_line(error)}") from None
    return [str(s.type).rsplit(".", 1)[-1] for s in statements]


def _sqlglot_statement_types(sql: str, source: str, dialect: str) -> list[str]:
    try:
        import sqlglot
        from sqlglot import expressions
    except ImportError:   # pragma: no cover - sqlglot comes with Ibis
        raise OptionError("checking a --query for this backend needs sqlglot (it comes with Ibis)") from None
    try:
        parsed = [e for e in sqlglot.parse(sql, read=dialect or None) if e is not None]
    except Exception as error:   # sqlglot's ParseError and TokenError
        raise OptionError(f"{source}: --query does not parse: {first_line(error)}") from None
    for statement in parsed:
        if isinstance(statement, expressions.Query):
            _refuse_writes_inside(statement, source, expressions)
    return ["SELECT" if isinstance(e, expressions.Query) else type(e).__name__.upper() for e in parsed]


_WRITES_INSIDE = ("DML", "Insert", "Update", "Delete", "Merge", "Into", "Create", "Drop", "Alter", "TruncateTable",
                  "Copy", "Command", "Lock", "Attach", "Detach", "Pragma", "Use", "Grant", "Analyze", "Transaction",
                  "Commit", "Rollback", "Kill", "Cache", "Uncache", "Refresh", "LoadData", "Export")
"""sqlglot expressions that write, lock or change a session; a SELECT holding one (PostgreSQL's
``WITH d AS (DELETE ... RETURNING *) SELECT ...``, ``SELECT ... INTO t``, ``FOR UPDATE``) is
no read statement, though its outer expression is a query."""


def _refuse_writes_inside(query: Any, source: str, expressions: Any) -> None:
    kinds = tuple(getattr(expressions, name) for name in _WRITES_INSIDE if hasattr(expressions, name))
    for node in query.walk():
        node = node[0] if isinstance(node, tuple) else node   # older sqlglot walks (node, parent, key)
        if isinstance(node, kinds):
            text = node.sql().strip()
            shown = f" ({text.splitlines()[0]})" if text else ""
            raise OptionError(f"{source}: --query must be one read statement (SELECT ...); this SELECT holds "
                              f"{type(node).__name__.upper()}{shown}, which writes or locks")


def read_statement(sql: str, source: str, dialect: str = "duckdb") -> str:
    """``sql`` if it is exactly one read statement (see the module), without its final ``;``;
    otherwise an ``OptionError`` naming the statements found. Nothing is executed."""
    if not sql.strip():
        raise OptionError(f"{source}: --query is empty; expected one SELECT statement")
    types = (_duckdb_statement_types(sql, source) if dialect == "duckdb"
             else _sqlglot_statement_types(sql, source, dialect))
    if types != ["SELECT"]:
        found = f"{len(types)} statements: {', '.join(types)}" if len(types) != 1 else f"a {types[0]} statement"
        raise OptionError(f"{source}: --query must be one read statement (SELECT ...); it holds {found}")
    return sql.strip().rstrip(";").rstrip()


def first_line(error: BaseException) -> str:
    """The first line of an error's message (a backend's messages go on with context lines); an
    extension the query needs and that is not installed is named with what to do.

    >>> first_line(ValueError("Binder Error: no column x\\nLINE 1: SELECT x"))
    'Binder Error: no column x'
    >>> message = ('An error occurred while trying to automatically install the required extension '
    ...            '\\'httpfs\\':\\nExtension not found.\\nInstall it first using "INSTALL httpfs".')
    >>> print(first_line(ValueError(message)))  # doctest: +NORMALIZE_WHITESPACE
    the query needs DuckDB's extension 'httpfs', which is not installed
    (rankwise never installs one: run INSTALL httpfs in DuckDB first)
    """
    import re

    text = str(error).strip()
    missing = re.search(r'Install it first using "INSTALL (\w+)"', text)
    if missing:
        name = missing.group(1)
        return (f"the query needs DuckDB's extension {name!r}, which is not installed (rankwise never installs one: "
                f"run INSTALL {name} in DuckDB first)")
    return text.splitlines()[0] if text else type(error).__name__


def backend_error(error: BaseException, source: str, what: str = "") -> InputError:
    """A backend's error as rankwise's: the source (and table or query) named, its first line kept."""
    return InputError(f"{what + ': ' if what else ''}the database could not read it: {first_line(error)}",
                      source=source)


def attach_read_only(connection: Any, path: str, alias: str = "source") -> None:
    """Attach the DuckDB database ``path`` read-only as ``alias`` and make it the default catalog
    (tables are named as the user names them); the connection's own temporary views stay first."""
    duckdb = duckdb_module()
    checked = duckdb_database(path)
    try:
        connection.execute(f"ATTACH {sql_text(checked)} AS {alias} (READ_ONLY)")
        connection.execute(f"USE {alias}")
    except duckdb.Error as error:
        raise backend_error(error, checked) from None


def tables_of(connection: Any, alias: str = "source") -> list[str]:
    """The tables and views of the attached database ``alias``."""
    rows = connection.execute("SELECT DISTINCT table_name FROM information_schema.tables WHERE table_catalog = ? "
                              "ORDER BY 1", [alias]).fetchall()
    return [str(r[0]) for r in rows]


def check_table(connection: Any, table: str, source: str, alias: str = "source") -> None:
    """An error listing the tables present when ``table`` is not one of them."""
    present = tables_of(connection, alias)
    if table not in present:
        listed = ", ".join(repr(t) for t in present[:20]) or "none"
        raise InputError(f"no table or view named {table!r}; the database has {listed}", source=source)


def sql_text(value: str) -> str:
    """A SQL string literal.

    >>> sql_text("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def ibis_connection(url: str) -> Any:
    """An Ibis connection to ``url``, read-only where the backend allows it (DuckDB), never
    creating a database file (a file backend's file must exist)."""
    try:
        import ibis
    except ImportError:
        raise OptionError("--ibis needs Ibis and its backend: pip install 'rankwise[ibis]' (and e.g. "
                          "'ibis-framework[postgres]')") from None
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise OptionError(f"--ibis {url!r}: expected a connection URL such as duckdb://events.ddb or "
                          "postgres://user@host/db")
    scheme = scheme.lower()
    if scheme in FILE_BACKENDS:
        path = rest.split("?", 1)[0]
        if not path or path == ":memory:":
            raise OptionError(f"--ibis {url!r}: name the database file to read (an in-memory database has no events)")
        if scheme == "duckdb":
            duckdb_database(path)
        elif not os.path.isfile(path):
            raise InputError("no such database file (a database is read, never created)", source=path)
    try:
        if scheme == "duckdb":
            return ibis.duckdb.connect(rest.split("?", 1)[0], read_only=True, **NO_DOWNLOADS)
        return ibis.connect(url)
    except Exception as error:   # a backend's own error types: drivers, authentication, missing files
        raise backend_error(error, url) from None


def ibis_dialect(connection: Any) -> str:
    """The SQL dialect of an Ibis connection (its backend's name: ``duckdb``, ``postgres`` ...)."""
    return str(getattr(connection, "name", "") or "")


__all__ = ["FILE_BACKENDS", "NO_DOWNLOADS", "attach_read_only", "backend_error", "check_table", "duckdb_connection",
           "duckdb_database", "duckdb_module", "first_line", "ibis_connection", "ibis_dialect", "read_statement",
           "sql_text", "tables_of"]
