"""Conversion windows with a delay and an inclusive or exclusive end (GrowthBook's conversion
delay and window): a hand-computed log through every engine (memory, DuckDB, Ibis) and the
command line, each giving the same numbers and the same counts of the events left out."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rankwise.experiments.analysis import run
from rankwise.experiments.event_rows import ConversionWindow, conversion_window
from rankwise.experiments.settings import ABSettings, DataSource, ExperimentDesign, plan

# times in seconds; u1 and u2 exposed to A at 0, u3 and u4 to B at 100; u5 never exposed.
# With a 5 s delay and a 10 s window the events at [start + 5, start + 15) count (or to
# start + 15 inclusive):
#   u1: 2 (delay), 5 and 14.9 (counted), 15 (the end), 20 (after)
#   u2: -1 (before the exposure), 7 (counted)
#   u3: 104 (delay), 105 and 110 (counted), 115 (the end), 116 (after)
#   u4: 120 (after)                       u5: 3 (never exposed)
EVENTS = pd.DataFrame({
    "user": ["u1"] * 5 + ["u2"] * 2 + ["u3"] * 5 + ["u4", "u5"],
    "t": [2.0, 5.0, 14.9, 15.0, 20.0, -1.0, 7.0, 104.0, 105.0, 110.0, 115.0, 116.0, 120.0, 3.0],
    "event": ["buy"] * 14})
EXPOSURES = pd.DataFrame({"user": ["u1", "u2", "u3", "u4"], "arm": ["A", "A", "B", "B"],
                          "t": [0.0, 0.0, 100.0, 100.0]})
# exclusive end: A (2 + 1) / 2, B (2 + 0) / 2; inclusive: A (3 + 1) / 2, B (3 + 0) / 2
EXPECTED = {"exclusive": (1.5, 1.0, 5), "inclusive": (2.0, 1.5, 3)}


def _settings(end: str, engine: str = "memory", looks: bool = False) -> ABSettings:
    return ABSettings(DataSource("user", "arm", exposures=EXPOSURES, window="10s", delay="5s", window_end=end,
                                 timestamp="t", looks=looks, engine=engine),  # type: ignore[arg-type]
                      ExperimentDesign(test="z"))


@pytest.mark.parametrize("looks", [False, True])
@pytest.mark.parametrize("end", ["exclusive", "inclusive"])
def test_the_hand_example_in_every_engine(end: str, looks: bool) -> None:
    import ibis

    control, treatment, after = EXPECTED[end]
    warnings = ["1 event(s) of units never exposed were left out",
                "1 event(s) before the unit's first exposure were left out",
                f"{after} event(s) after the unit's window were left out",
                "2 event(s) in the unit's conversion delay were left out"]
    results = {"memory": run(EVENTS, plan(["buys=count(buy)"], _settings(end, looks=looks))),
               "duckdb": run(EVENTS, plan(["buys=count(buy)"], _settings(end, "duckdb", looks))),
               "ibis": run(ibis.memtable(EVENTS), plan(["buys=count(buy)"], _settings(end, looks=looks)))}
    for engine, result in results.items():
        row = result.table.iloc[0]
        assert (row["control_value"], row["value"]) == (control, treatment), engine
        assert sorted(result.warnings) == sorted(warnings), engine
        assert result.settings["delay"] == 5.0 and result.settings.get("window_end") == (
            None if end == "exclusive" else "inclusive")
        if looks:   # the last daily look counts the same window: its values are the table's
            last = result.looks.iloc[-1]
            assert (last["control_value"], last["value"]) == (control, treatment), engine
    pd.testing.assert_frame_equal(results["duckdb"].table, results["memory"].table)
    pd.testing.assert_frame_equal(results["ibis"].table, results["memory"].table)


def test_the_command_line(tmp_path: Path, rankwise_cli) -> None:
    EVENTS.to_csv(tmp_path / "events.csv", index=False)
    EXPOSURES.to_csv(tmp_path / "exposures.csv", index=False)
    out = tmp_path / "out.json"
    args = ["ab", str(tmp_path / "events.csv"), "--unit", "user", "--variant", "arm", "--exposures",
            str(tmp_path / "exposures.csv"), "--timestamp", "t", "--no-looks", "--window", "10s", "--delay", "5s",
            "-m", "buys=count(buy)", "-f", "json", "-o", str(out)]
    assert rankwise_cli([*args, "--window-end", "inclusive"]) == 0
    row = json.loads(out.read_text())["rows"][0]
    assert (row["control_value"], row["value"]) == EXPECTED["inclusive"][:2]
    assert rankwise_cli([*args, "--window-end", "both"]) == 2


def test_a_window_is_read_once_and_bad_values_are_refused() -> None:
    from rankwise.errors import OptionError

    assert conversion_window("7d") == ConversionWindow(0.0, 604800.0)
    assert conversion_window(None, "1h") == ConversionWindow(3600.0, None)   # from the delay on, no end
    with pytest.raises(OptionError, match="window end 'both': expected exclusive or inclusive"):
        conversion_window("7d", end="both")
    assert conversion_window("7d", "0s") == ConversionWindow(0.0, 604800.0)   # no delay
    with pytest.raises(OptionError, match="delay '-1h': expected a number and a unit"):
        conversion_window("7d", "-1h")
    with pytest.raises(OptionError, match="window '0d': expected a positive duration"):
        conversion_window("0d")


# -- lookback windows and the analysis end --------------------------------------------------
# The same log without a conversion window. Lookback 10 s before the end 115 (until=115): the
# events at [105, 115] count:
#   u1: 2, 5, 14.9, 15, 20 (before the lookback)   u2: -1 (before exposure), 7 (before the lookback)
#   u3: 104 (before the lookback), 105, 110, 115 (counted), 116 (after the end)
#   u4: 120 (after the end)                        u5: 3 (never exposed)
# A: (0 + 0) / 2; B: (3 + 0) / 2. With the end left out, it is the latest event, 120: the events
# at [110, 120] count, B (2 + 1) / 2 -- u3's 110, 115, 116 and u4's 120.
LOOKBACK = {"115": ((0.0, 1.5), {"before_lookback": 7, "after_end": 2}),
            None: ((0.0, 2.0), {"before_lookback": 8})}


def _lookback(engine: str = "memory", until: str | None = "115", looks: bool = False) -> ABSettings:
    return ABSettings(DataSource("user", "arm", exposures=EXPOSURES, timestamp="t", looks=looks, engine=engine,
                                 lookback="10s", until=until),  # type: ignore[arg-type]
                      ExperimentDesign(test="z"))


@pytest.mark.parametrize("until", ["115", None])
def test_lookback_and_until_in_every_engine(until: str | None) -> None:
    import ibis

    (control, treatment), kinds = LOOKBACK[until]
    words = {"before_lookback": "before the lookback window", "after_end": "after the analysis end"}
    expected = sorted(["1 event(s) of units never exposed were left out",
                       "1 event(s) before the unit's first exposure were left out",
                       *(f"{count} event(s) {words[kind]} were left out" for kind, count in kinds.items())])
    results = {"memory": run(EVENTS, plan(["buys=count(buy)"], _lookback(until=until))),
               "duckdb": run(EVENTS, plan(["buys=count(buy)"], _lookback("duckdb", until))),
               "ibis": run(ibis.memtable(EVENTS), plan(["buys=count(buy)"], _lookback(until=until)))}
    for engine, result in results.items():
        row = result.table.iloc[0]
        assert (row["control_value"], row["value"]) == (control, treatment), engine
        assert sorted(result.warnings) == expected, engine
        assert result.settings["not_after"] == (115.0 if until else 120.0), engine
        assert result.settings["lookback"] == "10s"
    pd.testing.assert_frame_equal(results["duckdb"].table, results["memory"].table)
    pd.testing.assert_frame_equal(results["ibis"].table, results["memory"].table)


def test_lookback_with_times_and_the_command_line(tmp_path: Path, rankwise_cli) -> None:
    # the same log with times: second s is 2026-03-01 00:00:00 + s (the fraction of u1's 14.9 kept)
    timed = EVENTS.assign(t=pd.Timestamp("2026-03-01") + pd.to_timedelta(EVENTS["t"], unit="s"))
    exposed = EXPOSURES.assign(t=pd.Timestamp("2026-03-01") + pd.to_timedelta(EXPOSURES["t"], unit="s"))
    timed.to_csv(tmp_path / "events.csv", index=False)
    exposed.to_csv(tmp_path / "exposures.csv", index=False)
    out = tmp_path / "out.json"
    assert rankwise_cli(["ab", str(tmp_path / "events.csv"), "--unit", "user", "--variant", "arm", "--exposures",
                         str(tmp_path / "exposures.csv"), "--timestamp", "t", "--no-looks", "--lookback", "10s",
                         "--until", "2026-03-01 00:01:55", "-m", "buys=count(buy)", "-f", "json", "-o",
                         str(out)]) == 0
    row = json.loads(out.read_text())["rows"][0]
    assert (row["control_value"], row["value"]) == LOOKBACK["115"][0]
    import ibis

    settings = ABSettings(DataSource("user", "arm", exposures=exposed, timestamp="t", looks=False, lookback="10s"),
                          ExperimentDesign(test="z"))
    for data in (timed, ibis.memtable(timed)):   # the end is the latest event, 2026-03-01 00:02:00
        result = run(data, plan(["buys=count(buy)"], settings))
        assert tuple(result.table.iloc[0][["control_value", "value"]]) == LOOKBACK[None][0]


def test_lookback_needs_exposures_and_a_duration() -> None:
    from rankwise.errors import OptionError

    with pytest.raises(OptionError, match="lookback and until bound the events of exposed units"):
        plan(["buys=count(buy)"], ABSettings(DataSource("user", "arm", timestamp="t", lookback="7d")))
    with pytest.raises(OptionError, match="lookback"):
        plan(["buys=count(buy)"], ABSettings(DataSource("user", "arm", exposures=EXPOSURES, timestamp="t",
                                                        lookback="soon")))
    with pytest.raises(OptionError, match="until='yesterday'"):
        run(EVENTS, plan(["buys=count(buy)"], ABSettings(DataSource("user", "arm", exposures=EXPOSURES,
                                                                    timestamp="t", until="yesterday"))))


def test_nanosecond_times_are_read_exactly_on_every_engine() -> None:
    # pandas' times are nanoseconds: an exposure at 00:00:00.000000500 and events 400 ns before
    # it (left out) and 600 ns after it (counted) -- no rounding to microseconds on the way
    import ibis

    start = pd.Timestamp("2026-03-01") + pd.Timedelta(nanoseconds=500)
    events = pd.DataFrame({"user": ["u1", "u1", "u2"], "event": ["buy"] * 3,
                           "t": [start - pd.Timedelta(nanoseconds=400), start + pd.Timedelta(nanoseconds=600),
                                 start + pd.Timedelta(seconds=1)]})
    exposed = pd.DataFrame({"user": ["u1", "u2"], "arm": ["A", "B"], "t": [start, start]})
    for engine in ("memory", "duckdb"):
        settings = ABSettings(DataSource("user", "arm", exposures=exposed, timestamp="t", looks=False,
                                         lookback="1h", engine=engine), ExperimentDesign(test="z"))  # type: ignore[arg-type]
        result = run(events, plan(["buys=count(buy)"], settings))
        row = result.table.iloc[0]
        assert (row["control_value"], row["value"]) == (1.0, 1.0), engine
        assert "1 event(s) before the unit's first exposure were left out" in result.warnings, engine
    # Ibis reads the same log (its memtables hold microseconds): the latest event ends the analysis
    micro = events.assign(t=events["t"].dt.floor("us"))
    on_ibis = ABSettings(DataSource("user", "arm", exposures=exposed.assign(t=exposed["t"].dt.floor("us")),
                                    timestamp="t", looks=False, lookback="1h"), ExperimentDesign(test="z"))
    assert run(ibis.memtable(micro), plan(["buys=count(buy)"], on_ibis)).settings["not_after"] == \
        pytest.approx(start.floor("us").timestamp() + 1, abs=1e-6)
