"""Quantiles of events (``p90(latency, per_event)``): equal to gbstats 0.8's clustered event
quantiles, the same on every engine, the quantile of every event rather than of each unit's
sum, bad input refused, and a seeded A/A false-positive rate and coverage at the nominal level."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.errors import InputError, OptionError
from rankwise.experiments import analyze

DATA = Path(__file__).parent / "data" / "online"
LOG = DATA / "latency_events.csv"      # written by make_latency_log.py (seeded)
METRICS = ["p50=p50(latency, per_event)", "p90=p90(latency, per_event)"]
COLUMNS = ["n_control", "n", "control_value", "value", "difference", "ci_lower", "ci_upper", "p_value", "se"]


def _table(data: object, engine: str = "memory") -> pd.DataFrame:
    return analyze(data, unit="user", variant="arm", metrics=METRICS, control="A", correction="none",
                   engine=engine).table.set_index("metric")  # type: ignore[arg-type]


def test_equal_to_gbstats_clustered_event_quantiles() -> None:
    # gbstats_event_quantiles.json: gbstats 0.8.0's QuantileClusteredStatistic and TwoSidedTTest, the
    # quantiles, bounds and per-user counts computed by numpy and pandas (make_gbstats_event_quantiles.py)
    golden = json.loads((DATA / "gbstats_event_quantiles.json").read_text())
    table = _table(str(LOG))
    for metric, expected in golden.items():
        row = table.loc[metric]
        assert [row["control_value"], row["value"]] == pytest.approx(expected["quantile"], rel=1e-12)
        assert [row["n_control"], row["n"]] == expected["n"]   # a per-event quantile's n counts its events
        assert [row["variance_control"], row["variance"]] == pytest.approx(expected["variance"], rel=1e-10)
        assert row["difference"] == pytest.approx(expected["expected"], rel=1e-10)
        assert [row["ci_lower"], row["ci_upper"]] == pytest.approx(expected["ci"], rel=1e-9)
        assert row["p_value"] == pytest.approx(expected["p_value"], rel=1e-9)


def test_every_engine_gives_the_same_numbers() -> None:
    ibis = pytest.importorskip("ibis")
    pytest.importorskip("duckdb")
    memory = _table(str(LOG))
    frame = pd.read_csv(LOG)
    for data, engine in ((str(LOG), "duckdb"), (frame, "duckdb"), (ibis.memtable(frame), "memory"), (frame, "memory")):
        other = _table(data, engine)
        for column in COLUMNS:
            np.testing.assert_allclose(other[column].to_numpy(float), memory[column].to_numpy(float), rtol=1e-12,
                                       err_msg=f"{engine} {type(data).__name__} {column}")


def test_the_quantile_of_events_not_of_unit_sums() -> None:
    frame = pd.read_csv(LOG)
    loads = frame[frame["latency"].notna()]
    result = analyze(loads, unit="user", variant="arm", control="A",
                     metrics=["events=p90(latency, per_event)", "units=p90(latency)"]).table.set_index("metric")
    for arm, column in (("A", "control_value"), ("B", "value")):
        latency = loads.loc[loads["arm"] == arm, "latency"]
        assert result.loc["events", column] == pytest.approx(np.quantile(latency, 0.9), rel=1e-12)
        per_user = latency.groupby(loads.loc[loads["arm"] == arm, "user"]).sum()
        assert result.loc["units", column] == pytest.approx(np.quantile(per_user, 0.9), rel=1e-12)
    assert result.loc["units", "value"] > 3 * result.loc["events", "value"]   # sums of ~7 page loads each


def test_ignore_zeros_leaves_out_the_events_at_zero() -> None:
    # u1: 0, 10; u2: 0, 30; u3: 20 (arm a) -- u4 .. u6 (arm b): 5, 0, 15, 25
    log = {"u": [1, 1, 2, 2, 3, 4, 5, 5, 6], "arm": ["a"] * 5 + ["b"] * 4,
           "ms": [0.0, 10.0, 0.0, 30.0, 20.0, 5.0, 0.0, 15.0, 25.0]}
    table = analyze(log, unit="u", variant="arm", metrics=["m=p50(ms, per_event, ignore_zeros)"]).table
    row = table.iloc[0]
    # a: median of 10, 20, 30 = 20; b: of 5, 15, 25 = 15 (each n = 3 events)
    assert (row["control_value"], row["value"], row["n_control"], row["n"]) == (20.0, 15.0, 3, 3)


def test_a_cli_run_equals_gbstats() -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    got = CliRunner().invoke(app, ["ab", str(LOG), "--unit", "user", "--variant", "arm", "--control", "A",
                                   "--correction", "none", "-m", "p90=p90(latency, per_event)", "--format", "json"])
    assert got.exit_code == 0, got.output
    row = json.loads(got.stdout)["rows"][0]
    golden = json.loads((DATA / "gbstats_event_quantiles.json").read_text())["p90"]
    assert row["p_value"] == pytest.approx(golden["p_value"], rel=1e-9)


@pytest.mark.parametrize(("metric", "kwargs", "error", "message"), [
    ("m=p90(latency, per_events)", {}, OptionError, "unknown quantile option 'per_events'"),
    ("m=p90(latency, per_event)", {"exposures": str(DATA / "exposures.csv"), "timestamp": "t"}, OptionError,
     "without --exposures"),
    ("m=p90(event, per_event)", {}, InputError, "not a number|expected a number"),
])
def test_bad_input_is_refused(metric: str, kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        analyze(str(LOG), unit="user", variant="arm", metrics=[metric], **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_an_infinite_value_is_refused_with_its_place(tmp_path: Path, engine: str) -> None:
    pytest.importorskip("duckdb")
    path = tmp_path / "log.csv"
    path.write_text("user,arm,latency\n1,A,10\n2,B,inf\n")
    with pytest.raises(InputError) as caught:
        analyze(str(path), unit="user", variant="arm", metrics=["m=p50(latency, per_event)"], engine=engine)
    assert "log.csv" in str(caught.value) and "latency" in str(caught.value)


def _intervals(trials: int, slower: float, seed: int) -> list[tuple[float, float]]:
    """p50 of page-load latency over 300 users per experiment, each user's latency a level of
    their own x noise (lognormal: the events' latencies are lognormal(5, sqrt(0.41)) in A), B's
    ``slower`` times A's."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        arm = np.where(rng.random(300) < 0.5, "A", "B")
        level = rng.lognormal(5.0, 0.4, 300) * np.where(arm == "B", slower, 1.0)
        user = np.repeat(np.arange(300), rng.poisson(6.0, 300) + 1)
        log = {"user": user, "arm": arm[user], "latency": level[user] * rng.lognormal(0.0, 0.5, len(user))}
        row = analyze(log, unit="user", variant="arm", control="A", metrics=["m=p50(latency, per_event)"]).table
        out.append((float(row["ci_lower"].iloc[0]), float(row["ci_upper"].iloc[0])))
    return out


def test_seeded_false_positive_rate_and_coverage() -> None:
    trials = 300
    binomial = 3 * math.sqrt(0.05 * 0.95 / trials)
    null = _intervals(trials, 1.0, 3)
    assert abs(sum(not (low <= 0 <= high) for low, high in null) / trials - 0.05) < binomial
    truth = 0.04 * math.exp(5.0)   # the median of lognormal(5, s) is e^5; B's is 1.04 e^5
    covered = sum(low <= truth <= high for low, high in _intervals(trials, 1.04, 4)) / trials
    assert abs(covered - 0.95) < binomial


def test_no_slice_or_daily_look_borrows_the_whole_experiments_quantile() -> None:
    frame = pd.read_csv(LOG)
    frame["device"] = np.where(frame["user"] % 2 == 0, "mobile", "desktop")
    frame["day"] = pd.Timestamp("2026-03-01") + pd.to_timedelta(frame.index % 3, unit="D")
    result = analyze(frame, unit="user", variant="arm", control="A", timestamp="day", slices=["device"],
                     metrics=["loads=count(page_load)", "p90=p90(latency, per_event)"])
    table = result.table
    whole = table[(table["metric"] == "p90") & (table["slice"] == "all")]
    assert whole["value"].iloc[0] == pytest.approx(json.loads(
        (DATA / "gbstats_event_quantiles.json").read_text())["p90"]["quantile"][1], rel=1e-12)
    sliced = table[(table["metric"] == "p90") & (table["slice"] != "all")]
    assert len(sliced) == 2 and sliced["p_value"].isna().all()   # blank, and said so
    assert sum("not compared: a per-event quantile" in w for w in result.warnings) == 2
    assert result.looks is not None and set(result.looks["metric"]) == {"loads"}
    assert any("p90: a per-event quantile is computed over the whole experiment" in w for w in result.warnings)
