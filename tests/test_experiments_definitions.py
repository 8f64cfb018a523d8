"""Metrics defined over event logs (rankwise.experiments.definitions, rankwise.experiments.event_rows):
the syntax and its errors, hand-computed values, equality with the pivoted per-unit table,
filters, YAML files, exposures and windows, and bad rows named by file and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.errors import InputError, OptionError, RankwiseError
from rankwise.experiments import analyze
from rankwise.experiments.definitions import parse_definition, read_definitions

# u1 (A): impression, impression, click, purchase 10;  u2 (A): impression
# u3 (B): impression, click, click, purchase 4, purchase 6;  u4 (B): impression, impression
HAND = pd.DataFrame({
    "user": ["u1"] * 4 + ["u2"] + ["u3"] * 5 + ["u4"] * 2,
    "arm": ["A"] * 5 + ["B"] * 7,
    "event": ["impression", "impression", "click", "purchase", "impression",
              "impression", "click", "click", "purchase", "purchase", "impression", "impression"],
    "value": [0, 0, 0, 10, 0, 0, 0, 0, 4, 6, 0, 0],
    "country": ["DE", "DE", "DE", "DE", "FR", "FR", "FR", "FR", "FR", "DE", "DE", "DE"],
})
METRICS = ["ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)",
           "buyers = any(purchase)", "events = count(*)"]


def _values(result) -> dict[str, tuple[float, float]]:
    return {row.metric: (row.control_value, row.value) for row in result.table.itertuples()}


def test_hand_computed_values() -> None:
    got = _values(analyze(HAND, unit="user", variant="arm", metrics=METRICS))
    assert got["ctr"] == pytest.approx((1 / 3, 2 / 3))      # A: 1 click / 3 impressions; B: 2 / 3
    assert got["revenue"] == (5.0, 5.0)                      # A: (10 + 0) / 2 units; B: (4 + 6 + 0) / 2
    assert got["buyers"] == (0.5, 0.5)                       # one buyer of two units in each arm
    assert got["events"] == (2.5, 3.5)                       # A: (4 + 1) / 2; B: (5 + 2) / 2


def test_categorical_columns_give_the_same_values() -> None:
    """Dictionary-encoded columns (pandas categoricals, Parquet dictionaries) are compared per
    distinct value; a missing category matches no filter."""
    categorical = HAND.astype({"event": "category", "country": "category"})
    categorical.loc[0, "country"] = None
    metrics = [*METRICS, "de = count(* where country = DE)", "not_de = count(* where country != DE)"]
    got = _values(analyze(categorical, unit="user", variant="arm", metrics=metrics))
    assert {k: got[k] for k in ("ctr", "revenue", "buyers", "events")} == _values(
        analyze(HAND, unit="user", variant="arm", metrics=METRICS))
    assert got["de"] == (1.5, 1.5)       # A: u1's 3 DE rows left (row 0 has none); B: u3's 1 + u4's 2
    assert got["not_de"] == (0.5, 2.0)   # A: u2's FR row; B: u3's 4 FR rows


def test_filters_on_other_columns() -> None:
    metrics = ["de_clicks = count(click where country = DE)", "de_fr = count(* where country in (DE, FR))",
               "big = sum(value where event = purchase and value >= 5)", "not_imp = count(* where event != impression)"]
    got = _values(analyze(HAND, unit="user", variant="arm", metrics=metrics))
    assert got["de_clicks"] == (0.5, 0.0)   # u1's click was in DE; u3's clicks in FR
    assert got["de_fr"] == (2.5, 3.5)       # every event
    assert got["big"] == (5.0, 3.0)         # A: 10 / 2; B: only the 6 passes value >= 5: 6 / 2
    assert got["not_imp"] == (1.0, 2.0)     # A: u1's click and purchase, u2 none: 2 / 2; B: u3's 4 / 2
    with pytest.raises(OptionError, match="column 'value' holds numbers: compare it with a number, not 'ten'"):
        analyze(HAND, unit="user", variant="arm", metrics=["x = count(* where value > ten)"])


def test_definitions_equal_the_pivoted_per_unit_table() -> None:
    """The same experiment given as events with definitions and as the per-unit table a user
    would pivot in pandas: the same table, value for value."""
    rng = np.random.default_rng(3)
    rows = []
    for u in range(600):
        arm = ("A", "B", "C")[u % 3]
        for _ in range(rng.integers(1, 8)):
            rows.append((u, arm, "impression", 0.0))
            if rng.random() < 0.3:
                rows.append((u, arm, "click", 0.0))
        if rng.random() < 0.2:
            rows.append((u, arm, "purchase", float(rng.integers(1, 100))))
    events = pd.DataFrame(rows, columns=["user", "arm", "event", "value"])
    per_unit = events.assign(clicks=(events.event == "click").astype(int),
                             impressions=(events.event == "impression").astype(int),
                             revenue=np.where(events.event == "purchase", events.value, 0.0),
                             purchases=(events.event == "purchase").astype(int)
                             ).groupby(["user", "arm"], as_index=False)[["clicks", "impressions", "revenue",
                                                                        "purchases"]].sum()
    by_events = analyze(events, unit="user", variant="arm", metrics={
        "ctr": "count(click) / count(impression)", "revenue": "sum(value where event = purchase)",
        "buyers": "any(purchase)"})
    by_units = analyze(per_unit, unit="user", variant="arm",
                       metrics=["ctr=clicks/impressions", "revenue=revenue", "buyers=purchases>0"])
    pd.testing.assert_frame_equal(by_events.table.drop(columns="definition"), by_units.table.drop(columns="definition"))
    assert list(by_events.table["definition"])[::2] == ["count(click) / count(impression)",
                                                       "sum(value where event = purchase)", "count(purchase) > 0"]
    assert by_events.settings["definitions"]["ctr"] == "count(click) / count(impression)"


@pytest.mark.parametrize("spec,message", [
    ("ctr = cnt(click) / count(view)", "unknown aggregation 'cnt'; did you mean 'count'"),
    ("x = any(purchase) / count(view)", "any\\(...\\) is a proportion of units and cannot be part of a ratio"),
    ("x = sum(*)", "sum\\(\\*\\) is not defined"),
    ("x = count(click) extra", "expected /, found 'extra'"),
    ("x = count(click where country ~ DE)", "unknown comparison '~'"),
    ("x = count(click where country = 'DE)", "cannot read"),
    ("x = count(click where country)", "expected more, found the end|unknown comparison"),
    ("x = count(click", "expected \\), found the end"),
])
def test_definition_errors_say_what_is_expected(spec: str, message: str) -> None:
    with pytest.raises(RankwiseError, match=message):
        parse_definition(spec)


def test_texts_read_back_as_themselves() -> None:
    for spec in ["ctr = count(click) / count(impression)",
                 "r = sum(value where event = purchase and country in (DE, FR))",
                 "q = count(* where 'page type' = 'home page')", "b = any(purchase)"]:
        assert parse_definition(spec).text() == spec
        assert parse_definition(parse_definition(spec).text()) == parse_definition(spec)


def test_a_matching_row_without_a_number_names_its_line(tmp_path: Path) -> None:
    log = tmp_path / "events.csv"
    log.write_text("user,arm,event,value\nu1,A,impression,\nu1,A,purchase,3\nu2,B,purchase,\nu2,B,impression,\n")
    # rows without a value are fine where they do not count (impressions); line 4's purchase has none
    with pytest.raises(InputError, match=r"events.csv:4: field 'value': missing value; expected a number"):
        analyze(log, unit="user", variant="arm", metrics=["revenue = sum(value where event = purchase)"])
    log.write_text("user,arm,event,value\nu1,A,purchase,3\nu2,B,purchase,lots\n")
    with pytest.raises(InputError, match=r"events.csv:3: field 'value': expected a number, got 'lots'"):
        analyze(log, unit="user", variant="arm", metrics=["revenue = sum(value where event = purchase)"])


def test_a_yaml_file_of_definitions(tmp_path: Path) -> None:
    path = tmp_path / "metrics.yaml"
    path.write_text("metrics:\n  ctr: count(click) / count(impression)\n  revenue:\n    numerator: sum(value)\n"
                    "    where: event = purchase\n  de_ctr:\n    numerator: count(click)\n"
                    "    denominator: count(impression)\n    where: country = DE\n")
    definitions = read_definitions(str(path))
    assert [d.text() for d in definitions] == [
        "ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)",
        "de_ctr = count(click where country = DE) / count(impression where country = DE)"]
    got = _values(analyze(HAND, unit="user", variant="arm", metrics=definitions))
    assert got["de_ctr"] == pytest.approx((1 / 2, 0.0))   # A: u1's 1 click / 2 DE impressions; B: 0 / 2
    path.write_text("metrics:\n  ctr:\n    numerator: count(click)\n    denominatr: count(impression)\n")
    with pytest.raises(InputError, match=r"metrics.yaml: field 'ctr': metric 'ctr': unknown key\(s\) denominatr"):
        read_definitions(str(path))
    path.write_text("metrics: [a, b\n")
    with pytest.raises(InputError, match=r"metrics.yaml:\d+: not valid YAML"):
        read_definitions(str(path))


# exposures: u1 A at t=0, u2 A at t=0, u3 B at t=0 (and B again at t=5), u5 B at t=0 (no events),
# u6 in A at t=0 and in B at t=1 (mixed: left out); events at t = 0..30 s, window 10 s
EXPOSURES = pd.DataFrame({"user": ["u1", "u2", "u3", "u3", "u5", "u6", "u6"],
                          "arm": ["A", "A", "B", "B", "B", "A", "B"],
                          "t": [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 1.0]})
TIMED = pd.DataFrame({"user": ["u1", "u1", "u1", "u2", "u3", "u3", "u3", "u4", "u6"],
                      "event": ["impression", "click", "click", "impression", "impression", "click", "impression",
                                "impression", "click"],
                      "t": [1.0, 2.0, 25.0, 3.0, 1.0, 9.9, 10.0, 2.0, 2.0]})


def test_exposures_decide_the_variant_and_the_window() -> None:
    result = analyze(TIMED, unit="user", variant="arm", timestamp="t", exposures=EXPOSURES, window="10s",
                     metrics=["clicks = count(click)", "imps = count(impression)"])
    got = _values(result)
    # A: u1 (1 click in the window; the one at 25 s is after it), u2 (0): 1/2 click per unit
    # B: u3 (the click at 9.9 s counts, the impression at 10 s does not), u5 (no events): 1/2
    assert got["clicks"] == (0.5, 0.5)
    assert got["imps"] == (1.0, 0.5)        # A: u1 1 + u2 1; B: u3 1 + u5 0
    assert [int(row.n_control) for row in result.table.itertuples()] == [2, 2]
    assert result.warnings[:2] == ["1 event(s) of units never exposed were left out",    # u4
                                   "2 event(s) after the unit's window were left out"]    # u1 at 25 s, u3 at 10 s
    assert "1 unit(s) appeared in more than one variant and were left out" in result.warnings   # u6
    with pytest.raises(OptionError, match="a window counts events from each unit's first exposure"):
        analyze(TIMED.assign(arm="A"), unit="user", variant="arm", metrics=["c = count(click)"], window="1d")
    with pytest.raises(OptionError, match="give the timestamp column"):
        analyze(TIMED, unit="user", variant="arm", exposures=EXPOSURES, metrics=["c = count(click)"])
    with pytest.raises(OptionError, match="window '7 days'"):
        analyze(TIMED, unit="user", variant="arm", timestamp="t", exposures=EXPOSURES, metrics=["c = count(click)"],
                window="7 days")


def test_exposure_times_as_text_and_timestamps() -> None:
    """ISO 8601 text in the events and Arrow timestamps in the exposures are the same instants."""
    start = pd.Timestamp("2026-03-01 12:00:00")
    exposures = EXPOSURES.assign(t=start + pd.to_timedelta(EXPOSURES["t"], unit="s"))
    events = TIMED.assign(t=(start + pd.to_timedelta(TIMED["t"], unit="s")).dt.strftime("%Y-%m-%d %H:%M:%S.%f"))
    by_seconds = analyze(TIMED, unit="user", variant="arm", timestamp="t", exposures=EXPOSURES, window=10,
                         metrics=["clicks = count(click)"])
    by_times = analyze(events, unit="user", variant="arm", timestamp="t", exposures=exposures, window="10s",
                       metrics=["clicks = count(click)"])
    assert _values(by_times) == _values(by_seconds)
    bad = events.copy()
    bad.loc[3, "t"] = "yesterday"
    with pytest.raises(InputError, match=r"<DataFrame>:4: field 't': expected a time \(ISO 8601"):
        analyze(bad, unit="user", variant="arm", timestamp="t", exposures=exposures, metrics=["c = count(click)"])
