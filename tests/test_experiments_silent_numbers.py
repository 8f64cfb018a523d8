"""Each silent wrong number of the A/B half, fixed, with an independently computed expectation:
a misspelt event name, planned units of 0, a Bayesian analysis with no comparable row, a proper
prior over a control mean of 0, a constant CUPAC feature, an empty slice value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise import experiments
from rankwise.errors import InputError, OptionError

EVENTS = Path(__file__).resolve().parent / "data" / "online" / "events.csv"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("spec", ["count(clicks)", "any(purchases)", "count(click) / count(impresion)"])
def test_a_misspelt_event_is_an_error_naming_the_events(spec, engine) -> None:
    if engine == "duckdb":
        pytest.importorskip("duckdb", reason="the DuckDB engine needs the duckdb test extra")
    present = sorted(pd.read_csv(EVENTS)["event"].unique())   # click, impression, purchase
    with pytest.raises(InputError) as error:
        experiments.analyze(str(EVENTS), unit="user_id", metrics={"m": spec}, engine=engine)
    message = str(error.value)
    assert "which the data does not hold" in message and "events.csv" in message
    assert "its events are " + ", ".join(map(repr, present)) in message


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize(("spec", "column", "value"), [
    ("sum(value where event = purchse)", "event", "purchse"),
    ("count(click where variant = contrl)", "variant", "contrl"),
    ("sum(value where event in (purchse, clik))", "event", "purchse"),
])
def test_a_misspelt_value_of_a_condition_is_an_error_naming_the_values(spec, column, value, engine) -> None:
    """A condition no row meets made the whole metric zero in every arm, silently (the check
    named only a count's event type)."""
    if engine == "duckdb":
        pytest.importorskip("duckdb", reason="the DuckDB engine needs the duckdb test extra")
    present = sorted(str(v) for v in pd.read_csv(EVENTS)[column].unique())
    with pytest.raises(InputError) as error:
        experiments.analyze(str(EVENTS), unit="user_id", metrics={"m": spec}, engine=engine)
    message = str(error.value)
    assert f"names {column} {value!r}, which the data does not hold" in message and "events.csv" in message
    assert ", ".join(map(repr, present)) in message


def test_a_condition_on_a_number_is_not_looked_up() -> None:
    """``value = 7`` compares numbers: a value no row holds is a true zero, not a spelling."""
    frame = pd.DataFrame({"unit": [1, 2, 3, 4], "variant": ["a", "b", "a", "b"], "event": ["buy"] * 4,
                          "value": [1.0, 2.0, 3.0, 4.0]})
    result = experiments.analyze(frame, metrics={"sevens": "sum(value where value = 7)"})
    assert result.table["value"].tolist() == [0.0]


def test_an_event_that_exists_but_never_happened_in_the_arms_is_zero_not_an_error() -> None:
    frame = pd.DataFrame({"unit": [1, 2, 3, 4], "variant": ["a", "b", "a", "b"], "event": ["view"] * 3 + ["buy"]})
    # 'buy' is present (one row): a real count, a zero in arm a
    result = experiments.analyze(frame, metrics={"buys": "count(buy)"})
    assert result.table["value"].tolist() == [0.5]   # b: 1 buy over 2 units


def test_planned_units_of_zero_are_refused() -> None:
    with pytest.raises(OptionError, match="planned number of units is a positive count"):
        experiments.analyze(str(EVENTS), unit="user_id", metrics={"c": "count(click)"}, sequential="obrien-fleming",
                       timestamp="timestamp", planned_units=0)


def test_bayesian_with_no_comparable_row_is_a_warning_not_a_key_error() -> None:
    frame = pd.DataFrame({"unit": range(6), "variant": ["a", "b"] * 3, "x": [1.0] * 6})   # no variance at all
    result = experiments.analyze(frame, metrics={"x": "x"}, test="bayesian")
    assert np.isnan(result.table["chance_to_win"].iloc[0]) and not result.table["significant"].iloc[0]
    assert any("not compared" in w for w in result.warnings)


def test_a_proper_prior_over_a_zero_control_mean_leaves_out_that_comparison_only() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"unit": range(200), "variant": ["a", "b"] * 100})
    frame["x"] = np.where(frame["variant"] == "a", 0.0, rng.random(200))
    frame["y"] = rng.random(200)
    result = experiments.analyze(frame, metrics={"x": "x", "y": "y"}, test="bayesian(proper=true,prior_variance=0.1)")
    table = result.table.set_index("metric")
    assert np.isnan(table.loc["x", "chance_to_win"]) and np.isfinite(table.loc["y", "chance_to_win"])
    assert any("x, b against a: not compared: the control's mean is 0" in w for w in result.warnings)


def test_a_constant_cupac_feature_changes_nothing_and_is_named() -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"unit": range(400), "variant": ["a", "b"] * 200, "y": rng.normal(10, 2, 400),
                          "same": 1.0})
    plain = experiments.analyze(frame, metrics={"y": "y"})
    constant = experiments.analyze(frame, metrics={"y": "y"}, cupac=["same"])
    assert constant.table["difference"].tolist() == plain.table["difference"].tolist()
    assert constant.table["se"].tolist() == plain.table["se"].tolist()
    assert any("'same' have one value for every unit" in w for w in constant.warnings)


def test_an_empty_slice_value_is_the_missing_slice() -> None:
    rng = np.random.default_rng(8)
    frame = pd.DataFrame({"unit": range(300), "variant": ["a", "b"] * 150, "y": rng.random(300),
                          "device": ["mobile", "desktop", ""] * 100})
    result = experiments.analyze(frame, metrics={"y": "y"}, slices=["device"])
    assert "" not in set(result.table["slice"]) and "(missing)" in set(result.table["slice"])
    missing = result.table[result.table["slice"] == "(missing)"].iloc[0]
    assert missing["n"] + missing["n_control"] == 100   # every third unit
    assert any("100 unit(s) have an empty 'device'" in w for w in result.warnings)
