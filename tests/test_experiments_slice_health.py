"""Experiment health per slice and times without looks: each slice's sample-ratio check (as
GrowthBook's balance check per dimension value), and event times that only join events to
exposures (``looks=False``, ``--no-looks``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from rankwise import experiments
from rankwise.experiments.analysis import run
from rankwise.experiments.settings import ABSettings, Adjustments, DataSource, ExperimentDesign, plan

DATA = Path(__file__).resolve().parent / "data" / "online"
SLICED = DATA / "sliced.csv"


def test_every_slice_has_its_own_sample_ratio_check() -> None:
    frame = pd.read_csv(SLICED)
    result = experiments.analyze(frame, unit="user", metrics=["clicks"], slices=["device", "country"])
    checks = result.slice_srm
    assert list(zip(checks["dimension"], checks["slice"], strict=True)) == [
        ("device", "desktop"), ("device", "mobile"), ("country", "DE"), ("country", "FR"), ("country", "US")]
    for check in checks.to_dict("records"):
        units = frame[frame[check["dimension"]] == check["slice"]].groupby("variant")["user"].nunique()
        observed = [int(units.get("control", 0)), int(units.get("treatment", 0))]
        assert check["units"] == observed
        # Pearson's chi-square on equal weights, as scipy (and gbstats' check_srm) compute it
        expected = stats.chisquare(observed)
        assert check["statistic"] == pytest.approx(expected.statistic, rel=1e-12)
        assert check["p_value"] == pytest.approx(expected.pvalue, rel=1e-12)
        assert check["mismatch"] == (expected.pvalue < 0.001)
    as_json = result.to_dict()["slice_srm"]
    assert [row["slice"] for row in as_json] == checks["slice"].tolist()
    assert experiments.analyze(frame, unit="user", metrics=["clicks"]).slice_srm is None   # no slices, no table


def test_a_broken_slice_is_flagged_and_the_healthy_ones_are_not() -> None:
    """Seeded: 4,000 users, half on each arm; logging drops 30% of the treatment's iOS users.
    The iOS slice flags a mismatch, the other slice does not, and the warning names iOS."""
    rng = np.random.default_rng(20261129)
    n = 4000
    frame = pd.DataFrame({"user": np.arange(n), "variant": rng.choice(["control", "treatment"], n),
                          "os": rng.choice(["ios", "android"], n), "x": rng.normal(1, 1, n)})
    lost = (frame["os"] == "ios") & (frame["variant"] == "treatment") & (rng.random(n) < 0.3)
    result = experiments.analyze(frame[~lost], unit="user", metrics=["x"], slices=["os"])
    flagged = dict(zip(result.slice_srm["slice"], result.slice_srm["mismatch"], strict=True))
    assert flagged == {"android": False, "ios": True}
    assert any(w.startswith("in os=ios: sample ratio mismatch") for w in result.warnings)
    assert not any("os=android" in w and "mismatch" in w for w in result.warnings)


def test_healthy_slices_flag_at_the_threshold_rate() -> None:
    """A/A with 8 slices x 200 seeded experiments: the share of slice checks that flag stays
    within binomial error of the 0.001 threshold (1,600 checks: expected 1.6, at most 8)."""
    rng = np.random.default_rng(7)
    flagged = checks = 0
    for _ in range(200):
        n = 1600
        frame = pd.DataFrame({"user": np.arange(n), "variant": rng.choice(["A", "B"], n),
                              "segment": rng.integers(0, 8, n).astype(str), "x": rng.normal(0, 1, n)})
        table = experiments.analyze(frame, unit="user", metrics=["x"], slices=["segment"]).slice_srm
        flagged += int(table["mismatch"].sum())
        checks += len(table)
    assert checks == 1600
    assert flagged <= stats.binom.ppf(0.999, checks, 0.001)


def test_times_without_looks_join_exposures_and_skip_the_daily_looks(tmp_path: Path, rankwise_cli) -> None:
    events = pd.DataFrame({"user": ["a", "a", "b", "c", "c", "d"],
                           "event": ["click"] * 6,
                           "time": pd.to_datetime(["2026-01-01 10:00", "2026-01-09 10:00", "2026-01-02 09:00",
                                                   "2026-01-01 12:00", "2026-01-03 12:00", "2026-01-02 08:00"])})
    exposures = pd.DataFrame({"user": ["a", "b", "c", "d"], "variant": ["A", "A", "B", "B"],
                              "time": pd.to_datetime(["2026-01-01 09:00", "2026-01-02 08:00", "2026-01-01 11:00",
                                                      "2026-01-02 07:00"])})
    settings = ABSettings(DataSource("user", "variant", exposures=exposures, window="7d", timestamp="time"),
                          ExperimentDesign(test="z"))
    with_looks = run(events, plan(["clicks=count(click)"], settings))
    quiet = run(events, plan(["clicks=count(click)"],
                             ABSettings(DataSource("user", "variant", exposures=exposures, window="7d",
                                                   timestamp="time", looks=False), ExperimentDesign(test="z"))))
    # a's click on Jan 9 is outside its 7-day window: A = (1 + 1) / 2, B = (2 + 1) / 2
    assert quiet.table["control_value"].iloc[0] == 1.0 and quiet.table["value"].iloc[0] == 1.5
    assert quiet.looks is None and with_looks.looks is not None and len(with_looks.looks)
    for column in ("difference", "se", "p_value"):
        assert quiet.table[column].tolist() == with_looks.table[column].tolist()
    # the command line: --no-looks
    events.to_csv(tmp_path / "events.csv", index=False)
    exposures.to_csv(tmp_path / "exposures.csv", index=False)
    out = tmp_path / "out.json"
    assert rankwise_cli(["ab", str(tmp_path / "events.csv"), "--unit", "user", "--exposures",
                         str(tmp_path / "exposures.csv"), "--window", "7d", "--timestamp", "time", "--no-looks",
                         "-m", "clicks=count(click)", "-f", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["value"] == 1.5


def test_alpha_spending_needs_the_looks() -> None:
    from rankwise.errors import OptionError

    settings = ABSettings(DataSource(timestamp="time", looks=False), ExperimentDesign(sequential="pocock"))
    with pytest.raises(OptionError, match="analyses daily looks"):
        plan(["x"], settings)


def test_settings_objects_give_what_the_keywords_give() -> None:
    frame = pd.read_csv(SLICED)
    keywords = experiments.analyze(frame, unit="user", metrics=["ctr=clicks/views"], test="z", alpha=0.1,
                              slices=["device"], guardrails={"ctr": 0.05})
    settings = ABSettings(DataSource(unit="user"), ExperimentDesign(test="z", alpha=0.1),
                          Adjustments(slices=("device",), guardrails={"ctr": 0.05}))
    objects = run(frame, plan(["ctr=clicks/views"], settings))
    pd.testing.assert_frame_equal(keywords.table, objects.table)
    assert keywords.settings == objects.settings
