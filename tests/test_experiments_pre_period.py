"""CUPED from each metric's own events before the exposure (``pre_period``): equal to gbstats
0.8's regression adjustment, the same numbers on every engine, equal to the per-unit table built
by hand, and a seeded A/A false-positive rate and coverage at the nominal level."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.errors import OptionError
from rankwise.experiments import ABSettings, Adjustments, DataSource, ExperimentDesign, analyze, plan, run
from rankwise.experiments.pre_period import pre_period_window

DATA = Path(__file__).parent / "data" / "online"
EVENTS = DATA / "pre_period_events.csv"        # written by make_pre_period_log.py (seeded)
EXPOSURES = DATA / "pre_period_exposures.csv"
METRICS = {"impressions": "count(impression)", "clickers": "any(click)", "ctr": "count(click) / count(impression)"}
COLUMNS = ["n_control", "n", "control_value", "value", "difference", "ci_lower", "ci_upper", "p_value", "theta"]


def _settings(engine: str = "memory", pre_period: str | None = "14d", **source: object) -> ABSettings:
    return ABSettings(DataSource(unit="user", variant="arm", exposures=str(EXPOSURES), timestamp="timestamp",
                                 window="7d", engine=engine, looks=False, **source),  # type: ignore[arg-type]
                      ExperimentDesign(control="A", correction="none"), Adjustments(pre_period=pre_period))


def _table(data: object, engine: str = "memory") -> pd.DataFrame:
    return run(data, plan(METRICS, _settings(engine))).table.set_index("metric")


def test_equal_to_gbstats_regression_adjustment() -> None:
    # gbstats_pre_period.json: gbstats 0.8.0's RegressionAdjustedStatistic and TwoSidedTTest on the
    # per-user counts pandas computes (make_gbstats_pre_period.py): theta pooled over both arms,
    # a proportion's variances p (1 - p)
    golden = json.loads((DATA / "gbstats_pre_period.json").read_text())
    table = _table(str(EVENTS))
    for metric in ("impressions", "clickers"):
        row, expected = table.loc[metric], golden[metric]
        assert [row["n_control"], row["n"]] == expected["n"]
        assert row["theta"] == pytest.approx(expected["theta"], rel=1e-10)
        assert row["difference"] == pytest.approx(expected["expected"], rel=1e-10)
        assert [row["ci_lower"], row["ci_upper"]] == pytest.approx(expected["ci"], rel=1e-9)
        assert row["p_value"] == pytest.approx(expected["p_value"], rel=1e-9)


def test_every_engine_gives_the_same_numbers() -> None:
    ibis = pytest.importorskip("ibis")
    pytest.importorskip("duckdb")
    memory = _table(str(EVENTS))
    events = pd.read_csv(EVENTS, parse_dates=["timestamp"])
    for data, engine in ((str(EVENTS), "duckdb"), (ibis.memtable(events), "memory"), (events, "memory")):
        other = _table(data, engine)
        for column in COLUMNS:
            np.testing.assert_allclose(other[column].to_numpy(float), memory[column].to_numpy(float), rtol=1e-12,
                                       err_msg=f"{engine} {type(data).__name__} {column}")


def test_equal_to_the_per_unit_table_built_by_hand() -> None:
    # each user's counts in [first exposure, +7 days) and in [first exposure - 14 days, first
    # exposure), with pandas; CUPED on those columns must be the pre-period analysis exactly
    events = pd.read_csv(EVENTS, parse_dates=["timestamp"])
    first = pd.read_csv(EXPOSURES, parse_dates=["timestamp"]).sort_values("timestamp", kind="stable")
    first = first.groupby("user").first()
    joined = events.join(first.rename(columns={"timestamp": "start"}), on="user", how="inner")
    since = joined["timestamp"] - joined["start"]
    window = {"post": (since >= pd.Timedelta(0)) & (since < pd.Timedelta(days=7)),
              "pre": (since < pd.Timedelta(0)) & (since >= -pd.Timedelta(days=14))}
    units = pd.DataFrame({"user": first.index, "arm": first["arm"].to_numpy()})
    for period, rows in window.items():
        for event in ("impression", "click"):
            counted = joined[rows & (joined["event"] == event)].groupby("user").size()
            units[f"{period}_{event}"] = counted.reindex(first.index, fill_value=0).to_numpy(float)
    by_hand = analyze(units, unit="user", variant="arm", control="A", correction="none",
                      metrics={"impressions": "post_impression", "ctr": "post_click/post_impression"},
                      covariates={"impressions": "pre_impression", "ctr": "pre_click/pre_impression"})
    table = _table(str(EVENTS))
    for row in by_hand.table.itertuples():
        for column in COLUMNS:
            assert getattr(row, column) == pytest.approx(table.loc[row.metric, column], rel=1e-12), (row.metric, column)


def test_the_covariate_narrows_the_interval_and_is_recorded() -> None:
    plain = run(str(EVENTS), plan(METRICS, _settings(pre_period=None))).table.set_index("metric")
    result = run(str(EVENTS), plan(METRICS, _settings()))
    adjusted = result.table.set_index("metric")
    for metric in METRICS:   # the pre-period predicts the experiment's counts (each user's own rate)
        assert adjusted.loc[metric, "ci_upper"] - adjusted.loc[metric, "ci_lower"] < \
            plain.loc[metric, "ci_upper"] - plain.loc[metric, "ci_lower"]
    assert result.settings["pre_period"] == "14d"
    # the events before the pre-period are counted in a warning of their own
    assert any("before the unit's 14d pre-period were left out of its CUPED covariates" in w for w in result.warnings)


def test_pre_period_window_bounds() -> None:
    window = pre_period_window("1d")   # [exposure - 86400 s, exposure)
    times = np.array([-86401.0, -86400.0, -0.5, 0.0, 10.0])
    assert window.counted(times, np.zeros(5)).tolist() == [False, True, True, False, False]
    assert window.before(times, np.zeros(5)).tolist() == [True, False, False, False, False]


@pytest.mark.parametrize(("settings", "message"), [
    (ABSettings(DataSource(unit="user", variant="arm"), adjustments=Adjustments(pre_period="14d")),
     "give the exposures table and the timestamp column"),
    (ABSettings(DataSource(unit="user", variant="arm", exposures=str(EXPOSURES), timestamp="timestamp"),
                adjustments=Adjustments(pre_period="14d", covariates={"impressions": "x"})),
     "one source of covariates"),
    (ABSettings(DataSource(unit="user", variant="arm", exposures=str(EXPOSURES), timestamp="timestamp"),
                adjustments=Adjustments(pre_period="-3d")), "pre_period"),
])
def test_bad_settings_are_refused(settings: ABSettings, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        plan(METRICS, settings)


def test_a_metric_without_events_is_refused() -> None:
    settings = ABSettings(DataSource(unit="user", variant="arm", exposures=str(EXPOSURES), timestamp="timestamp"),
                          adjustments=Adjustments(pre_period="14d"))
    with pytest.raises(OptionError, match="views read a per-unit column"):
        plan({"views": "views"}, settings)


def test_cli_pre_period() -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    got = CliRunner().invoke(app, ["ab", str(EVENTS), "--unit", "user", "--variant", "arm", "--exposures",
                                   str(EXPOSURES), "--timestamp", "timestamp", "--window", "7d", "--no-looks",
                                   "--pre-period", "14d", "--control", "A", "--correction", "none",
                                   "-m", "impressions=count(impression)", "--format", "json"])
    assert got.exit_code == 0, got.output
    row = json.loads(got.stdout)["rows"][0]
    golden = json.loads((DATA / "gbstats_pre_period.json").read_text())["impressions"]
    assert row["difference"] == pytest.approx(golden["expected"], rel=1e-10)


def _aa_rows(trials: int, effect: float, seed: int) -> list[tuple[float, float]]:
    """Per-user counts as the pre-period pass gives them (each user's rate the same before and
    after exposure; ``effect`` multiplies B's after), analysed with the pre-period covariate."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        rate = rng.gamma(2.0, 1.5, 400)
        arm = np.where(rng.random(400) < 0.5, "A", "B")
        after = rng.poisson(rate * 0.7 * np.where(arm == "B", 1 + effect, 1.0))
        before = rng.poisson(rate * 1.4)
        row = analyze({"u": np.arange(400), "arm": arm, "y": after, "x": before}, unit="u", variant="arm",
                      metrics=["y"], covariates={"y": "x"}, control="A").table.iloc[0]
        out.append((row["ci_lower"], row["ci_upper"]))
    return out


def test_seeded_false_positive_rate_and_coverage() -> None:
    trials = 500
    binomial = 3 * math.sqrt(0.05 * 0.95 / trials)
    null = _aa_rows(trials, 0.0, 1)
    false_positive = sum(not (low <= 0 <= high) for low, high in null) / trials
    assert abs(false_positive - 0.05) < binomial
    truth = 0.7 * 3.0 * 0.1   # E[rate] = 2 x 1.5; B's mean after exposure is 10% above A's
    covered = sum(low <= truth <= high for low, high in _aa_rows(trials, 0.1, 2)) / trials
    assert abs(covered - 0.95) < binomial
