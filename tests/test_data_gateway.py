"""The one gateway for databases: every backend the suite runs (DuckDB through --database, DuckDB
through Ibis) is opened read-only; a --query that is not one read statement is refused before
the engine runs it; the database file (hashed) and its folder (listed) are unchanged after each
refused query; a missing database is never created; what is not a DuckDB database, a missing
table and a backend's error are rankwise errors naming the source."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).resolve().parent / "data" / "online"

duckdb = pytest.importorskip("duckdb", reason="the DuckDB gateway needs the duckdb test extra")

HOSTILE = [
    "SELECT * FROM events; COPY (SELECT 1) TO '{folder}/x.csv'",
    "COPY events TO '{folder}/copy.csv'",
    "ATTACH '{folder}/new.ddb' AS other",
    "DROP TABLE events",
    "DELETE FROM events",
    "INSERT INTO events SELECT * FROM events",
    "CREATE TABLE t AS SELECT 1",
    "UPDATE events SET value = 0",
    "SET memory_limit = '1MB'",
    "PRAGMA show_tables",
    "EXPLAIN SELECT * FROM events",
    "SELECT * FROM events; DROP TABLE events",
    "",
    "SELEC * FROM events",
]


@pytest.fixture()
def database(tmp_path: Path) -> Path:
    path = tmp_path / "events.ddb"
    frame = pd.read_csv(DATA / "events.csv")
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", frame)
        connection.execute("CREATE TABLE events AS SELECT * FROM frame")
    return path


def _state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


BACKENDS = ["--database", "--ibis"]
ARGS = ["ab", "--unit", "user_id", "-m", "clicks=count(click)", "-f", "csv"]


def _source(backend: str, path: Path | str) -> list[str]:
    return ["--database", str(path)] if backend == "--database" else ["--ibis", f"duckdb://{path}"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("query", HOSTILE)
def test_a_query_that_writes_is_refused_and_nothing_changes(backend, query, database, rankwise_cli, capsys) -> None:
    if backend == "--ibis":
        pytest.importorskip("ibis", reason="the Ibis backend needs ibis-framework (test extra)")
    folder = database.parent
    before = _state(folder)
    code = rankwise_cli([*ARGS, *_source(backend, database), "--query", query.format(folder=folder)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and str(database.name) in err, err
    assert "--query" in err, err
    assert _state(folder) == before   # the database byte for byte, and no new file


READS_THAT_WOULD_WRITE = [
    "SELECT * FROM read_parquet('https://example.invalid/events.parquet')",   # installs httpfs
    "SELECT * FROM sqlite_scan('{folder}/other.db', 'events')",               # installs sqlite_scanner
    "SELECT * FROM checkpoint('source')",
    "SELECT * FROM force_checkpoint()",
]
"""Read statements that DuckDB lets write: an extension is downloaded into the home directory
by default (``~/.duckdb``); a checkpoint flushes a database."""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("query", READS_THAT_WOULD_WRITE)
def test_a_read_statement_writes_nothing_anywhere(backend, query, database, tmp_path, monkeypatch, rankwise_cli,
                                                  capsys) -> None:
    """No extension is installed (the home directory stays empty), the database and its folder
    are unchanged, and the query ends in a rankwise error naming the database (the extension
    that is missing, or columns the events do not have)."""
    if backend == "--ibis":
        pytest.importorskip("ibis", reason="the Ibis backend needs ibis-framework (test extra)")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    folder = database.parent
    before = _state(folder)
    code = rankwise_cli([*ARGS, *_source(backend, database), "--query", query.format(folder=folder)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and database.name in err, err
    if "https" in query or "sqlite_scan" in query:
        assert "never installs one" in err, err
    assert list(home.iterdir()) == []
    assert _state(folder) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_tables_are_named_as_the_user_names_them(backend, database, rankwise_cli, capsys) -> None:
    if backend == "--ibis":
        pytest.importorskip("ibis", reason="the Ibis backend needs ibis-framework (test extra)")
    outputs = []
    for extra in (["--table", "events"], ["--query", "SELECT * FROM events;"],
                  ["--query", "WITH e AS (SELECT * FROM events) SELECT * FROM e"]):
        assert rankwise_cli([*ARGS, *_source(backend, database), *extra]) == 0
        outputs.append(capsys.readouterr().out)
    assert rankwise_cli([*ARGS, str(DATA / "events.csv")]) == 0
    from_file = capsys.readouterr().out
    assert outputs == [from_file] * 3 and "clicks" in from_file


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_is_not_a_database_is_named(backend, database, tmp_path, rankwise_cli, capsys) -> None:
    if backend == "--ibis":
        pytest.importorskip("ibis", reason="the Ibis backend needs ibis-framework (test extra)")
    sqlite_file = tmp_path / "events.sqlite"
    with sqlite3.connect(sqlite_file) as connection:
        connection.execute("CREATE TABLE events (unit INTEGER)")
    csv_file = tmp_path / "log.csv"
    csv_file.write_text((DATA / "events.csv").read_text())
    empty = tmp_path / "empty.ddb"
    empty.write_bytes(b"")
    cases = {tmp_path / "missing.ddb": "no such database file", sqlite_file: "this is a SQLite database",
             csv_file: "this is a text file", empty: "this is an empty file", tmp_path: "is a directory"}
    for path, expected in cases.items():
        before = sorted(p.name for p in tmp_path.iterdir())
        assert rankwise_cli([*ARGS, *_source(backend, path), "--table", "events"]) == 2
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err, (path, err)
        assert sorted(p.name for p in tmp_path.iterdir()) == before   # nothing created
    assert rankwise_cli([*ARGS, *_source(backend, database), "--table", "nothing"]) == 2
    assert "no table or view named 'nothing'; the database has 'events'" in capsys.readouterr().err


def test_a_filter_with_an_infinite_bound_is_a_value_not_a_column(database, rankwise_cli, capsys) -> None:
    # value < 1e999 is value < inf: every purchase with a value; the same through DuckDB and in memory
    metric = ["-m", "spent=sum(value where event = purchase and value < 1e999)"]
    assert rankwise_cli([*ARGS[:3], *metric, "-f", "csv", "--database", str(database), "--table",
                                 "events"]) == 0
    through_duckdb = capsys.readouterr().out
    assert rankwise_cli([*ARGS[:3], *metric, "-f", "csv", str(DATA / "events.csv")]) == 0
    import io

    in_memory = pd.read_csv(io.StringIO(capsys.readouterr().out))
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(through_duckdb)), in_memory, rtol=1e-12)   # sums' order
    purchases = pd.read_csv(DATA / "events.csv").query("event == 'purchase'")["value"].sum()
    assert in_memory["control"].notna().all() and purchases > 0


def test_the_parser_decides_what_a_statement_is() -> None:
    from rankwise.data.gateway import read_statement
    from rankwise.errors import OptionError

    assert read_statement("  FROM events;  ", "db") == "FROM events"
    assert read_statement("(SELECT 1) UNION (SELECT 2)", "db") == "(SELECT 1) UNION (SELECT 2)"
    assert read_statement("SELECT ';' AS semicolon", "db") == "SELECT ';' AS semicolon"
    with pytest.raises(OptionError, match="it holds a COPY statement"):
        read_statement("COPY events TO 'x.csv'", "db")
    pytest.importorskip("sqlglot", reason="another backend's dialect is read by sqlglot (comes with Ibis)")
    assert read_statement("SELECT * FROM events", "pg", "postgres") == "SELECT * FROM events"
    with pytest.raises(OptionError, match="2 statements"):
        read_statement("SELECT 1; DROP TABLE events", "pg", "postgres")
    with pytest.raises(OptionError, match="it holds a INSERT statement"):
        read_statement("INSERT INTO t VALUES (1)", "pg", "postgres")


@pytest.mark.parametrize(("query", "dialect", "inside"), [
    ("WITH d AS (DELETE FROM events RETURNING *) SELECT * FROM d", "postgres", "DELETE"),
    ("WITH x AS (INSERT INTO a VALUES (1) RETURNING *) SELECT * FROM x", "postgres", "INSERT"),
    ("WITH u AS (UPDATE events SET value = 0 RETURNING *) SELECT * FROM u", "postgres", "UPDATE"),
    ("SELECT * INTO copied FROM events", "postgres", "INTO"),
    ("SELECT * INTO copied FROM events", "tsql", "INTO"),
    ("SELECT * FROM events FOR UPDATE", "postgres", "LOCK"),
    ("SELECT * FROM (SELECT * FROM events FOR UPDATE) AS t", "mysql", "LOCK"),
])
def test_a_select_that_writes_inside_is_refused(query, dialect, inside) -> None:
    # the outer expression is a query, but a PostgreSQL data-modifying CTE, SELECT INTO or a
    # row lock writes: the whole tree is read before the backend sees the text
    pytest.importorskip("sqlglot", reason="another backend's dialect is read by sqlglot (comes with Ibis)")
    from rankwise.data.gateway import read_statement
    from rankwise.errors import OptionError

    with pytest.raises(OptionError, match=f"this SELECT holds {inside}[ ,]"):
        read_statement(query, "pg", dialect)
    assert read_statement("WITH d AS (SELECT * FROM events) SELECT * FROM d", "pg", dialect)
