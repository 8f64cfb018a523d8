"""Event logs through Ibis: the per-unit sums computed by the backend holding the table (DuckDB
here), equal to the in-memory analysis bit for bit on counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from test_experiments_warehouse import _timed_events

from rankwise import experiments
from rankwise.errors import InputError, OptionError

ibis = pytest.importorskip("ibis")

DATA = Path(__file__).parent / "data" / "online"
METRICS = {"ctr": "count(click) / count(impression)", "buyers": "any(purchase)",
           "revenue": "sum(value where event = purchase)"}


@pytest.fixture(scope="module")
def events() -> pd.DataFrame:
    return pd.read_csv(DATA / "events.csv")


def test_equal_to_the_in_memory_analysis(events: pd.DataFrame) -> None:
    memory = experiments.analyze(events, unit="user_id", metrics=METRICS)
    for table in (ibis.memtable(events), ibis.duckdb.connect().read_csv(DATA / "events.csv")):
        pdt.assert_frame_equal(experiments.analyze(table, unit="user_id", metrics=METRICS).table, memory.table)
    # a Welch test reads the per-unit rows; the bootstrap the same rows in the same (id) order
    boot = experiments.analyze(events, unit="user_id", metrics=METRICS, test="bootstrap", resamples=300)
    pdt.assert_frame_equal(experiments.analyze(ibis.memtable(events), unit="user_id", metrics=METRICS, test="bootstrap",
                                          resamples=300).table, boot.table)


def test_integer_unit_ids_plain_columns_and_mixed_units() -> None:
    rng = np.random.default_rng(3)
    n = 2_000
    wide = pd.DataFrame({"user": rng.integers(0, 400, n), "variant": rng.choice(["a", "b"], n),
                         "clicks": rng.integers(0, 3, n), "views": rng.integers(1, 5, n),
                         "spend": np.round(rng.exponential(3.0, n), 2)})
    metrics = {"ctr": "clicks / views", "spend": "spend"}
    memory = experiments.analyze(wide, unit="user", metrics=metrics)
    pushed = experiments.analyze(ibis.memtable(wide), unit="user", metrics=metrics)
    pdt.assert_frame_equal(pushed.table, memory.table)
    assert pushed.warnings == memory.warnings and any("more than one variant" in w for w in pushed.warnings)


def test_bad_tables_and_options_are_named(events: pd.DataFrame) -> None:
    with pytest.raises(InputError, match=r"<ibis table .*missing column\(s\) 'member'; found user_id, variant"):
        experiments.analyze(ibis.memtable(events), unit="member", metrics=METRICS)
    gaps = events.copy()
    gaps.loc[3, "user_id"] = None
    with pytest.raises(InputError, match=r"1 row\(s\) with no user_id"):
        experiments.analyze(ibis.memtable(gaps), unit="user_id", metrics=METRICS)
    with pytest.raises(InputError, match="field 'event': the column holds string, not numbers"):
        experiments.analyze(ibis.memtable(events), unit="user_id", metrics={"x": "sum(event)"})
    with pytest.raises(OptionError, match="exposures are joined to events by time: give the timestamp column"):
        experiments.analyze(ibis.memtable(events), unit="user_id", metrics=METRICS, exposures=DATA / "exposures.csv")
    with pytest.raises(InputError, match="unknown variant 'treatment'"):
        experiments.analyze(ibis.memtable(events), unit="user_id", metrics=METRICS, variants=["control", "other"])


def test_command_line_reads_a_database_through_ibis(tmp_path: Path, events: pd.DataFrame) -> None:
    import duckdb
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    path = tmp_path / "events.ddb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE TABLE events AS SELECT * FROM read_csv('{DATA / 'events.csv'}')")
    args = ["ab", "--unit", "user_id", "-m", "ctr = count(click) / count(impression)", "-f", "csv"]
    through_ibis = CliRunner().invoke(app, [*args, "--ibis", f"duckdb://{path}", "--table", "events"])
    from_file = CliRunner().invoke(app, [*args, str(DATA / "events.csv")])
    assert through_ibis.exit_code == 0, through_ibis.output
    assert through_ibis.stdout == from_file.stdout
    neither = CliRunner().invoke(app, [*args, "--ibis", f"duckdb://{path}"])
    assert neither.exit_code != 0 and "give --table NAME or --query SQL" in neither.output
    missing = CliRunner().invoke(app, [*args, "--ibis", f"duckdb://{path}", "--table", "nothing"])
    assert missing.exit_code != 0 and "no table or view named 'nothing'; the database has 'events'" in missing.output
    # --exposures files with --ibis: sent to the backend, joined there, the same table as from files
    exposed = [*args, "--exposures", str(DATA / "exposures.csv"), "--timestamp", "timestamp", "--window", "7d"]
    through_ibis = CliRunner().invoke(app, [*exposed, "--ibis", f"duckdb://{path}", "--table", "events"])
    from_file = CliRunner().invoke(app, [*exposed, str(DATA / "events.csv")])
    assert through_ibis.exit_code == 0, through_ibis.output
    assert through_ibis.stdout == from_file.stdout and "ctr,ratio" in through_ibis.stdout


def test_cuped_covariates_through_ibis() -> None:
    rng = np.random.default_rng(8)
    users = rng.integers(0, 500, 3_000)
    pre = rng.gamma(2.0, 2.0, 500)
    rows = pd.DataFrame({"user": users, "variant": np.where(users % 2 == 0, "a", "b"),
                         "clicks": rng.poisson(1 + pre[users] / 4), "views": rng.integers(1, 6, 3_000),
                         "pre_clicks": pre[users]})
    metrics, covariates = {"clicks": "clicks", "ctr": "clicks / views"}, {"clicks": "pre_clicks"}
    memory = experiments.analyze(rows, unit="user", metrics=metrics, covariates=covariates)
    pushed = experiments.analyze(ibis.memtable(rows), unit="user", metrics=metrics, covariates=covariates)
    pdt.assert_frame_equal(pushed.table, memory.table, check_exact=False, rtol=1e-12)
    uneven = rows.copy()
    uneven.loc[0, "pre_clicks"] += 1.0
    with pytest.raises(InputError, match="covariate 'pre_clicks' differs within unit"):
        experiments.analyze(ibis.memtable(uneven), unit="user", metrics=metrics, covariates=covariates)


@pytest.mark.parametrize("sequential", ["obrien-fleming", "msprt"])
def test_daily_looks_through_ibis_equal_the_in_memory_looks(sequential: str) -> None:
    events, _ = _timed_events(7)
    options = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts", "sequential": sequential,
               "planned_units": 2000, "metrics": {"ctr": "count(click) / count(impression)", "buyers": "any(purchase)",
                                                  "revenue": "sum(value where event = purchase)"}}
    memory = experiments.analyze(events, **options)
    pushed = experiments.analyze(ibis.memtable(events), **options)
    counts = memory.looks["metric"] != "revenue"
    assert len(memory.looks) == len(pushed.looks) > 12
    pdt.assert_frame_equal(pushed.looks[counts], memory.looks[counts], check_exact=True)
    pdt.assert_frame_equal(pushed.looks[~counts], memory.looks[~counts], check_exact=False, rtol=1e-12)
    pdt.assert_frame_equal(pushed.table, memory.table, check_exact=False, rtol=1e-12)
    # times as seconds since the epoch: the same days
    seconds = events.assign(ts=(events["ts"] - pd.Timestamp("1970-01-01")) // pd.Timedelta("1s"))
    looks = experiments.analyze(ibis.memtable(seconds), **options).looks
    assert looks["look"].tolist() == experiments.analyze(events.assign(ts=events["ts"].dt.floor("s")), **options
                                                    ).looks["look"].tolist()


def test_slices_through_ibis_equal_the_in_memory_slices() -> None:
    sliced = pd.read_csv(DATA / "sliced.csv")
    options = {"unit": "user", "metrics": {"ctr": "clicks / views", "clicks": "clicks"},
               "slices": ["device", "country"], "correction_scope": "all"}
    memory = experiments.analyze(sliced, **options)
    pushed = experiments.analyze(ibis.memtable(sliced), **options)
    pdt.assert_frame_equal(pushed.table, memory.table)
    assert pushed.warnings == memory.warnings and pushed.settings["correction_scope"] == "all"


def test_exposures_and_windows_through_ibis_equal_the_in_memory_analysis() -> None:
    from test_experiments_definitions import EXPOSURES, TIMED

    events, exposures = _timed_events(11)
    metrics = {"ctr": "count(click) / count(impression)", "revenue": "sum(value where event = purchase)"}
    for window in (None, "1d"):
        options = {"unit": "user", "variant": "arm", "control": "control", "timestamp": "ts", "metrics": metrics,
                   "window": window, "sequential": "always-valid"}
        memory = experiments.analyze(events, exposures=exposures, **options)
        pushed = experiments.analyze(ibis.memtable(events.drop(columns="arm")), exposures=ibis.memtable(exposures),
                                **options)
        pdt.assert_frame_equal(pushed.table, memory.table, check_exact=False, rtol=1e-12)
        pdt.assert_frame_equal(pushed.looks, memory.looks, check_exact=False, rtol=1e-12)
        assert pushed.warnings == memory.warnings and len(memory.warnings) == (2 if window else 1)
    # the hand example (numbers as seconds; a unit never exposed, one exposed twice, a 10 s window)
    hand = {"unit": "user", "variant": "arm", "timestamp": "t", "window": "10s",
            "metrics": {"clicks": "count(click)", "imps": "count(impression)"}}
    memory = experiments.analyze(TIMED, exposures=EXPOSURES, **hand)
    pushed = experiments.analyze(ibis.memtable(TIMED), exposures=EXPOSURES, **hand)   # a DataFrame of exposures too
    pdt.assert_frame_equal(pushed.table, memory.table)
    assert pushed.warnings == memory.warnings
    with pytest.raises(OptionError, match="every metric is a definition over events"):
        experiments.analyze(ibis.memtable(TIMED), exposures=EXPOSURES, unit="user", variant="arm", timestamp="t",
                       metrics=["t"])
    with pytest.raises(InputError, match=r"<exposures>: missing column\(s\) 't'; found user, arm, when"):
        experiments.analyze(ibis.memtable(TIMED), exposures=EXPOSURES.rename(columns={"t": "when"}), **hand)
