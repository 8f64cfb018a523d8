"""engine='duckdb' (rankwise.experiments.warehouse): the per-unit sums DuckDB computes give the
in-memory path's table, bit for bit with integer counts and to rounding with float sums, from
CSV, Parquet, DataFrames and DuckDB database tables and queries, with exposures and windows;
bad data gets rankwise's own errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_experiments_definitions import EXPOSURES, HAND, TIMED

from rankwise.errors import InputError, OptionError
from rankwise.experiments import analyze
from rankwise.experiments.warehouse import DuckDBSource

duckdb = pytest.importorskip("duckdb")

COUNTS = ["ctr = count(click) / count(impression)", "buyers = any(purchase)", "events = count(*)",
          "de_clicks = count(click where country = DE)"]


def _events(seed: int, units: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 12, units)
    user = np.repeat(np.arange(units), n)
    arm = np.array(["control", "treatment", "other"])[user % 3]
    kind = rng.choice(["impression", "impression", "click", "purchase"], len(user), p=[0.5, 0.2, 0.25, 0.05])
    value = np.where(kind == "purchase", rng.gamma(2.0, 20.0, len(user)).round(2), np.nan)
    country = rng.choice(["DE", "FR", "US"], len(user))
    return pd.DataFrame({"user": user, "arm": arm, "event": kind, "value": value, "country": country})


def _same(a, b, exact: bool = True) -> None:
    assert a.warnings == b.warnings
    if exact:
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    else:
        pd.testing.assert_frame_equal(a.table, b.table, check_exact=False, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", ["dataframe", "csv", "parquet", "database table", "database query"])
def test_duckdb_equals_memory_bit_for_bit_on_counts(form: str, tmp_path: Path) -> None:
    events = _events(1)
    memory = analyze(events, unit="user", variant="arm", metrics=COUNTS, control="control")
    data: object = events
    if form == "csv":
        data = tmp_path / "events.csv"
        events.to_csv(data, index=False)
    elif form == "parquet":
        data = tmp_path / "events.parquet"
        events.to_parquet(data)
    elif form.startswith("database"):
        database = tmp_path / "warehouse.duckdb"
        with duckdb.connect(str(database)) as connection:
            connection.register("frame", events)
            connection.execute("CREATE TABLE events AS SELECT * FROM frame")
            connection.execute("CREATE TABLE other AS SELECT 1 AS x")
        data = (DuckDBSource(str(database), table="events") if form.endswith("table") else
                DuckDBSource(str(database), query="SELECT * FROM source.events WHERE user >= 0"))
    got = analyze(data, unit="user", variant="arm", metrics=COUNTS, control="control", engine="duckdb")
    _same(memory, got)


def test_float_sums_agree_to_rounding_and_ratios_of_columns_too() -> None:
    events = _events(2)
    events["clicks"] = (events["event"] == "click").astype(int)
    events["views"] = (events["event"] == "impression").astype(int)
    metrics = ["revenue = sum(value where event = purchase)", "big = count(purchase where value > 50)",
               "ctr=clicks/views", "clicks=clicks"]
    memory = analyze(events, unit="user", variant="arm", metrics=metrics, control="control")
    got = analyze(events, unit="user", variant="arm", metrics=metrics, control="control", engine="duckdb")
    _same(memory, got, exact=False)
    treated = memory.table.query("metric == 'revenue' and variant == 'treatment'")["value"].iloc[0]
    assert treated == pytest.approx(float(events.query("event == 'purchase' and arm == 'treatment'")["value"].sum()
                                          / 1000), rel=1e-12)   # 3,000 units, every third in treatment


def test_hand_example_and_exposures_on_duckdb() -> None:
    for frame, options in [(HAND, {}), (TIMED, {"timestamp": "t", "exposures": EXPOSURES, "window": "10s"})]:
        metrics = (["ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)"]
                   if frame is HAND else ["clicks = count(click)", "imps = count(impression)"])
        memory = analyze(frame, unit="user", variant="arm", metrics=metrics, **options)
        got = analyze(frame, unit="user", variant="arm", metrics=metrics, engine="duckdb", **options)
        _same(memory, got)


def test_exposures_with_times_as_text_and_parquet_timestamps(tmp_path: Path) -> None:
    start = pd.Timestamp("2026-03-01 12:00:00")
    exposures = EXPOSURES.assign(t=start + pd.to_timedelta(EXPOSURES["t"], unit="s"))
    events = TIMED.assign(t=(start + pd.to_timedelta(TIMED["t"], unit="s")).dt.strftime("%Y-%m-%d %H:%M:%S.%f"))
    exposures.to_parquet(tmp_path / "exposures.parquet")
    events.to_csv(tmp_path / "events.csv", index=False)
    options = {"unit": "user", "variant": "arm", "timestamp": "t", "window": "10s", "metrics": ["c = count(click)"]}
    memory = analyze(tmp_path / "events.csv", exposures=tmp_path / "exposures.parquet", **options)
    got = analyze(tmp_path / "events.csv", exposures=tmp_path / "exposures.parquet", engine="duckdb", **options)
    _same(memory, got)
    assert memory.table["value"].iloc[0] == 0.5


def test_bad_data_gets_rankwise_errors(tmp_path: Path) -> None:
    events = _events(3, units=30)
    with pytest.raises(InputError, match=r"<DataFrame>: missing column\(s\) 'segment'"):
        analyze(events, unit="user", variant="arm", metrics=["x = count(* where segment = a)"], engine="duckdb")
    broken = events.astype({"user": object})
    broken.loc[4, "user"] = None
    with pytest.raises(InputError, match=r"1 row\(s\) with no user"):
        analyze(broken, unit="user", variant="arm", metrics=["c = count(click)"], engine="duckdb")
    with pytest.raises(InputError, match=r"sum\(country\): the column holds VARCHAR, not numbers"):
        analyze(events, unit="user", variant="arm", metrics=["x = sum(country)"], engine="duckdb")
    infinite = events.copy()
    infinite.loc[infinite.event == "purchase", "value"] = np.inf
    with pytest.raises(InputError, match="a value of value that is not finite"):
        analyze(infinite, unit="user", variant="arm", metrics=["r = sum(value where event = purchase)"],
                engine="duckdb")
    with pytest.raises(InputError, match="no such database file"):
        analyze(DuckDBSource(str(tmp_path / "none.duckdb"), table="events"), unit="user", variant="arm",
                metrics=["c = count(click)"])
    with pytest.raises(OptionError, match="takes a table or a query"):
        analyze(DuckDBSource(str(tmp_path / "none.duckdb")), unit="user", variant="arm", metrics=["c = count(click)"])
    with pytest.raises(OptionError, match="unknown engine 'spark'; expected one of memory, duckdb"):
        analyze(events, unit="user", variant="arm", metrics=["c = count(click)"], engine="spark")


def test_the_command_line_reads_a_database_and_a_metrics_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", HAND)
        connection.execute("CREATE TABLE events AS SELECT * FROM frame")
    (tmp_path / "metrics.yaml").write_text("metrics:\n  ctr: count(click) / count(impression)\n")
    HAND.to_csv(tmp_path / "events.csv", index=False)
    runner = CliRunner()
    outputs = []
    for args in (["--database", str(database), "--table", "events"], [str(tmp_path / "events.csv")]):
        result = runner.invoke(app, ["ab", *args, "--unit", "user", "--variant", "arm", "--metrics-file",
                                     str(tmp_path / "metrics.yaml"), "-f", "csv"])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert outputs[0] == outputs[1]
    assert "0.3333333333333333" in outputs[0] and "0.6666666666666666" in outputs[0]
    result = runner.invoke(app, ["ab", str(tmp_path / "events.csv"), "--table", "events", "-m", "c=count(click)",
                                 "--unit", "user", "--variant", "arm"])
    assert result.exit_code != 0 and "--table and --query read from a DuckDB database" in result.output


def test_only_per_variant_statistics_come_back_unless_a_test_needs_the_units(monkeypatch) -> None:
    """Welch, z and the Bayesian engine need the per-variant sums only: DuckDB computes them to the
    end (exact HUGEINT sums and cross-products) and no unit row leaves it; quantiles, caps, the
    bootstrap and Mann-Whitney read the units' rows."""
    import rankwise.experiments.warehouse as warehouse

    events = _events(5)
    memory = analyze(events, unit="user", variant="arm", metrics=COUNTS, control="control")

    def no_rows(*args, **kwargs):
        raise AssertionError("unit rows were fetched")

    monkeypatch.setattr(warehouse, "duckdb_units", no_rows)
    pushed = analyze(events, unit="user", variant="arm", metrics=COUNTS, control="control", engine="duckdb")
    _same(memory, pushed)
    with pytest.raises(AssertionError, match="unit rows were fetched"):
        analyze(events, unit="user", variant="arm", metrics=["c = count(click)"], engine="duckdb",
                test="mann-whitney")
    monkeypatch.undo()
    for options in ({"test": "mann-whitney"}, {"caps": {"c": "p99"}}):
        by_rows = analyze(events, unit="user", variant="arm", metrics=["c = count(click)"], engine="duckdb", **options)
        in_memory = analyze(events, unit="user", variant="arm", metrics=["c = count(click)"], **options)
        _same(in_memory, by_rows)


def test_cuped_covariates_read_per_unit_by_duckdb_equal_the_in_memory_analysis() -> None:
    events = _events(seed=5)
    rng = np.random.default_rng(5)
    pre = rng.gamma(2.0, 1.5, events["user"].max() + 1)
    events = events.assign(pre_clicks=pre[events["user"]])   # one pre-period value per user, on every row
    metrics = ["ctr = count(click) / count(impression)", "clicks = count(click)"]
    memory = analyze(events, unit="user", variant="arm", metrics=metrics, covariates={"clicks": "pre_clicks"})
    pushed = analyze(events, unit="user", variant="arm", metrics=metrics, covariates={"clicks": "pre_clicks"},
                     engine="duckdb")
    pd.testing.assert_frame_equal(pushed.table, memory.table, check_exact=False, rtol=1e-12)
    plain = analyze(events, unit="user", variant="arm", metrics=metrics, engine="duckdb")
    se = pushed.table.set_index(["metric", "variant"])["se"]
    assert (se.loc["clicks"] < plain.table.set_index(["metric", "variant"])["se"].loc["clicks"]).all()   # CUPED
    uneven = events.copy()
    uneven.loc[uneven.index[1], "pre_clicks"] += 1.0
    with pytest.raises(InputError, match="covariate 'pre_clicks' differs within unit"):
        analyze(uneven, unit="user", variant="arm", metrics=metrics, covariates={"clicks": "pre_clicks"},
                engine="duckdb")
    with pytest.raises(OptionError, match="does not join covariates"):
        analyze(TIMED, unit="user_id", metrics=["c = count(click)"], covariates={"c": "pre"}, engine="duckdb",
                exposures=EXPOSURES, timestamp="timestamp")


def _timed_events(seed: int, units: int = 2000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Events over 6 days, and each unit's exposures (a unit exposed twice keeps its first)."""
    events = _events(seed, units)
    rng = np.random.default_rng(seed + 100)
    start = pd.Timestamp("2026-03-01") + pd.to_timedelta(rng.integers(0, 5 * 86400, units), unit="s")
    exposures = pd.DataFrame({"user": np.arange(units), "arm": np.array(["control", "treatment", "other"])[
        np.arange(units) % 3], "ts": start})
    lag = pd.to_timedelta(rng.integers(-3600, 2 * 86400, len(events)), unit="s")
    events["ts"] = start[events["user"].to_numpy()] + lag
    return events, exposures


@pytest.mark.parametrize("sequential", ["obrien-fleming", "always-valid"])
def test_daily_looks_on_duckdb_equal_the_in_memory_looks(sequential: str) -> None:
    events, exposures = _timed_events(5)
    options = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts", "sequential": sequential,
               "planned_units": 2000, "metrics": ["ctr = count(click) / count(impression)", "buyers = any(purchase)",
                                                  "revenue = sum(value where event = purchase)"]}
    for extra in ({}, {"exposures": exposures, "window": "1d"}):
        memory = analyze(events, **options, **extra)
        got = analyze(events, **options, **extra, engine="duckdb")
        assert len(memory.looks) == len(got.looks) > 12   # 6-7 days x 3 metrics x 2 arms
        counts = memory.looks["metric"] != "revenue"
        pd.testing.assert_frame_equal(memory.looks[counts], got.looks[counts], check_exact=True)
        pd.testing.assert_frame_equal(memory.looks[~counts], got.looks[~counts], check_exact=False, rtol=1e-12)
        _same(memory, got, exact=False)
        if sequential == "obrien-fleming":   # one look per day with events, the crossing read from them
            days = got.looks["look"].nunique()
            assert got.table["looks"].tolist() == [days] * 6 and days >= 6


def test_numeric_times_are_seconds_since_the_epoch_for_the_looks_too() -> None:
    events, _ = _timed_events(6, units=300)
    seconds = events.assign(ts=(events["ts"] - pd.Timestamp("1970-01-01")) // pd.Timedelta("1s"))
    options = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts",
               "metrics": ["clicks = count(click)"]}
    as_times = analyze(events.assign(ts=events["ts"].dt.floor("s")), **options).looks
    for engine in ("memory", "duckdb"):
        looks = analyze(seconds, **options, engine=engine).looks
        assert looks["look"].tolist() == as_times["look"].tolist()   # days of March 2026, not of 1970
        assert looks["look"].iloc[0] == pd.Timestamp("2026-03-01")


def test_slices_on_duckdb_equal_the_in_memory_slices(tmp_path: Path) -> None:
    sliced = Path(__file__).parent / "data" / "online" / "sliced.csv"
    options = {"unit": "user", "metrics": ["ctr=clicks/views", "clicks"], "slices": ["device", "country"]}
    memory = analyze(sliced, **options)
    got = analyze(sliced, **options, engine="duckdb")
    _same(memory, got)
    assert len(got.table) == 12   # (all, 2 devices, 3 countries) x 2 metrics
    # sequential and sliced: each slice's daily looks from DuckDB's unit x day rows
    events, exposures = _timed_events(9)
    events["device"] = np.where(events["user"] % 4 == 0, "mobile", "desktop")
    timed = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts", "slices": ["device"],
             "sequential": "obrien-fleming", "planned_units": 2000,
             "metrics": ["ctr = count(click) / count(impression)"]}
    memory, got = analyze(events, **timed), analyze(events, **timed, engine="duckdb")
    _same(memory, got)
    pd.testing.assert_frame_equal(memory.looks, got.looks, check_exact=True)
    assert set(got.looks["slice"]) == {"all", "desktop", "mobile"}


def test_a_unit_whose_rows_disagree_takes_its_lowest_value_in_a_warehouse() -> None:
    rows = pd.DataFrame({"u": [1, 1, 2, 3, 4, 5, 6], "v": ["A", "A", "A", "A", "B", "B", "B"],
                         "device": ["mobile", "desktop", "mobile", "desktop", "mobile", "desktop", None],
                         "x": [1, 2, 3, 4, 5, 6, 7]})
    memory = analyze(rows, "u", "v", ["x"], slices=["device"])
    got = analyze(rows, "u", "v", ["x"], slices=["device"], engine="duckdb")
    # unit 1: first row mobile (memory), lowest value desktop (DuckDB)
    assert memory.table.set_index("slice").loc["mobile", "n_control"] == 2
    assert got.table.set_index("slice").loc["mobile", "n_control"] == 1
    assert got.table.set_index("slice").loc["(missing)", "n"] == 1
    assert "1 unit(s) had more than one 'device'; each is in the slice of its lowest value" in got.warnings
    assert "1 unit(s) had more than one 'device'; each is in the slice of its first row" in memory.warnings


LOOKS = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts",
         "metrics": ["clicks = count(click)"]}
"""The daily looks of one count, by the ``ts`` column of ``_timed_events``."""


def _events_with_time(tmp_path: Path, row: int, value: object, as_seconds: bool = False) -> Path:
    """``_timed_events`` as a CSV file whose row ``row`` (line ``row + 2``) has ``value`` for its time."""
    events, _ = _timed_events(13, units=50)
    times = (events["ts"] - pd.Timestamp("1970-01-01")) // pd.Timedelta("1s") if as_seconds else events["ts"]
    events["ts"] = times.astype(object) if as_seconds or value is None else times.astype(str).astype(object)
    events.loc[row, "ts"] = value
    path = tmp_path / "events.csv"
    events.to_csv(path, index=False)
    return path


def test_an_event_without_a_time_is_refused_on_every_engine(tmp_path: Path) -> None:
    """The daily looks need every event's time: in memory the line is named; DuckDB counts the rows."""
    path = _events_with_time(tmp_path, 5, None)
    with pytest.raises(InputError, match=r"events.csv:7.*field 'ts'.*missing time"):
        analyze(path, **LOOKS)
    with pytest.raises(InputError, match=r"1 row\(s\) with no ts"):
        analyze(path, **LOOKS, engine="duckdb")


@pytest.mark.parametrize("bad", ["not-a-date", "2026-13-45 25:00:00", "1e20"])
def test_a_time_that_does_not_read_is_refused_on_every_engine(tmp_path: Path, bad: str) -> None:
    """A time that is no time stops the daily looks with its file, line, field and value in
    memory (it was a pandas traceback) and as DuckDB's conversion error naming the value."""
    path = _events_with_time(tmp_path, 5, bad)   # line 7: the header, then rows 0-5
    with pytest.raises(InputError, match=rf"events.csv:7: field 'ts': expected a time .* got '{bad}'"):
        analyze(path, **LOOKS)
    with pytest.raises(InputError, match=rf"events.csv.*{bad}"):
        analyze(path, **LOOKS, engine="duckdb")


def test_seconds_beyond_any_date_are_refused_with_their_line(tmp_path: Path) -> None:
    path = _events_with_time(tmp_path, 2, 10**15, as_seconds=True)   # about 31 million years after 1970
    with pytest.raises(InputError, match=r"events.csv:4: field 'ts': expected a time .* got 1000000000000000"):
        analyze(path, **LOOKS)


ONLINE = Path(__file__).parent / "data" / "online"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize(("where", "joined"), [("events", False), ("events", True), ("exposures", True)])
def test_every_door_that_reads_times_refuses_one_that_is_no_time(tmp_path: Path, engine: str, where: str,
                                                                 joined: bool) -> None:
    # the doors: the daily looks alone, and the exposure join (the events' times and the
    # exposures' own, read only by the join) with its looks, on both engines; none may end in
    # another library's error
    events, exposures = (ONLINE / "events.csv").read_text(), (ONLINE / "exposures.csv").read_text()
    if where == "events":
        events = events.replace("2026-03-02 05:02:31", "yesterday", 1)
    else:
        exposures = exposures.replace("2026-03-04 01:15:39", "yesterday", 1)
    (tmp_path / "events.csv").write_text(events)
    (tmp_path / "exposures.csv").write_text(exposures)
    options: dict = {"unit": "user_id", "variant": "variant", "metrics": ["clicks = count(click)"],
                     "timestamp": "timestamp", "engine": engine}
    if joined:
        options.update(exposures=str(tmp_path / "exposures.csv"), window="1d")
    with pytest.raises(InputError, match=rf"{where}.csv.*yesterday"):
        analyze(str(tmp_path / "events.csv"), **options)
