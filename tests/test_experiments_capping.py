"""What a cap reaches (``cap_convention``): ``value`` caps the metric's value (a ratio's
numerator) only; ``growthbook`` also caps the CUPED covariate at the value's cap and a ratio's
denominator by the same rule. Each equals the analysis of the columns capped by hand, the two
differ where the covariate or the denominator has outliers, and a seeded A/A keeps its level."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.errors import OptionError
from rankwise.experiments import analyze
from rankwise.experiments.capping import CAP_CONVENTIONS

# three units per arm: x the metric, v a ratio's denominator, pre and pre_v their covariates
UNITS = pd.DataFrame({"user": range(6), "arm": ["A"] * 3 + ["B"] * 3,
                      "x": [1.0, 2.0, 10.0, 2.0, 3.0, 20.0], "v": [1.0, 1.0, 4.0, 2.0, 1.0, 6.0],
                      "pre": [1.0, 8.0, 3.0, 2.0, 1.0, 9.0], "pre_v": [1.0, 5.0, 1.0, 1.0, 1.0, 4.0]})
COLUMNS = ["difference", "ci_lower", "ci_upper", "p_value", "theta"]


def _rows(frame: pd.DataFrame, metrics: list[str], covariates: dict[str, str], **kwargs: object) -> pd.DataFrame:
    return analyze(frame, unit="user", variant="arm", control="A", metrics=metrics, covariates=covariates,
                   correction="none", **kwargs).table.set_index("metric")  # type: ignore[arg-type]


def test_value_convention_caps_the_value_only() -> None:
    # x capped at 5: A 1, 2, 5; B 2, 3, 5 -- pre as it is
    got = _rows(UNITS, ["m=x"], {"m": "pre"}, caps={"m": 5})
    by_hand = UNITS.assign(x=[1.0, 2.0, 5.0, 2.0, 3.0, 5.0])
    expected = _rows(by_hand, ["m=x"], {"m": "pre"})
    for column in COLUMNS:
        assert got.loc["m", column] == pytest.approx(expected.loc["m", column], rel=1e-12)


def test_growthbook_convention_caps_the_covariate_at_the_values_cap() -> None:
    # the cap is p50 of x over both arms: x sorted 1, 2, 2, 3, 10, 20 -> (2 + 3) / 2 = 2.5;
    # x capped: 1, 2, 2.5, 2, 2.5, 2.5; pre capped at the same 2.5: 1, 2.5, 2.5, 2, 1, 2.5
    got = analyze(UNITS, unit="user", variant="arm", control="A", metrics=["m=x"], covariates={"m": "pre"},
                  caps={"m": "p50"}, cap_convention="growthbook", correction="none")
    assert got.settings["caps"]["m"] == 2.5 and got.settings["cap_convention"] == "growthbook"
    by_hand = UNITS.assign(x=[1.0, 2.0, 2.5, 2.0, 2.5, 2.5], pre=[1.0, 2.5, 2.5, 2.0, 1.0, 2.5])
    expected = _rows(by_hand, ["m=x"], {"m": "pre"})
    table = got.table.set_index("metric")
    for column in COLUMNS:
        assert table.loc["m", column] == pytest.approx(expected.loc["m", column], rel=1e-12)


def test_growthbook_convention_caps_a_ratios_denominator_by_the_same_rule() -> None:
    # rule 3: x -> 1, 2, 3, 2, 3, 3; v -> 1, 1, 3, 2, 1, 3; pre at x's cap 3 -> 1, 3, 3, 2, 1, 3;
    # pre_v at v's cap 3 -> 1, 3, 1, 1, 1, 3
    got = _rows(UNITS, ["r=x/v"], {"r": "pre/pre_v"}, caps={"r": 3}, cap_convention="growthbook")
    by_hand = UNITS.assign(x=[1.0, 2.0, 3.0, 2.0, 3.0, 3.0], v=[1.0, 1.0, 3.0, 2.0, 1.0, 3.0],
                           pre=[1.0, 3.0, 3.0, 2.0, 1.0, 3.0], pre_v=[1.0, 3.0, 1.0, 1.0, 1.0, 3.0])
    expected = _rows(by_hand, ["r=x/v"], {"r": "pre/pre_v"})
    for column in COLUMNS:
        assert got.loc["r", column] == pytest.approx(expected.loc["r", column], rel=1e-12)
    value_only = _rows(UNITS, ["r=x/v"], {"r": "pre/pre_v"}, caps={"r": 3})
    assert value_only.loc["r", "value"] != pytest.approx(got.loc["r", "value"])   # the denominators differ


def _heavy(seed: int, users: int = 2000) -> pd.DataFrame:
    """Revenue with a heavy tail, its pre-period correlated; a few whales before the experiment."""
    rng = np.random.default_rng(seed)
    level = rng.lognormal(0.0, 1.5, users)
    pre = level * rng.lognormal(0.0, 0.5, users)
    pre[rng.random(users) < 0.01] *= 200   # outliers the value's cap should reach
    return pd.DataFrame({"user": range(users), "arm": np.where(rng.random(users) < 0.5, "A", "B"),
                         "revenue": level * rng.lognormal(0.0, 0.5, users), "pre": pre})


def test_the_conventions_give_different_answers_where_the_covariate_has_outliers() -> None:
    frame = _heavy(7)
    rows = {name: _rows(frame, ["m=revenue"], {"m": "pre"}, caps={"m": "p99"}, cap_convention=name).loc["m"]
            for name in CAP_CONVENTIONS.names()}
    # capping the covariate at the value's p99 makes it a far better predictor: the variance falls
    assert rows["growthbook"]["se"] < 0.9 * rows["value"]["se"]
    assert rows["growthbook"]["theta"] != pytest.approx(rows["value"]["theta"], rel=0.05)


def test_seeded_false_positive_rate_of_capped_cuped() -> None:
    trials = 300
    rejected = sum(_rows(_heavy(100 + seed, 600), ["m=revenue"], {"m": "pre"}, caps={"m": "p99"},
                         cap_convention="growthbook").loc["m", "p_value"] < 0.05 for seed in range(trials))
    assert abs(rejected / trials - 0.05) < 3 * math.sqrt(0.05 * 0.95 / trials)


def test_an_unknown_convention_is_refused_with_the_choices() -> None:
    with pytest.raises(OptionError, match="growthbook"):
        analyze(UNITS, unit="user", variant="arm", metrics=["m=x"], caps={"m": 5}, cap_convention="winsor")


def test_cli_cap_convention(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    path = tmp_path / "units.csv"
    UNITS.to_csv(path, index=False)
    got = CliRunner().invoke(app, ["ab", str(path), "--unit", "user", "--variant", "arm", "--control", "A",
                                   "-m", "m=x", "--covariate", "m=pre", "--cap", "m=p50", "--cap-convention",
                                   "growthbook", "--format", "json"])
    assert got.exit_code == 0, got.output
    document = json.loads(got.stdout)
    expected = analyze(UNITS, unit="user", variant="arm", control="A", metrics=["m=x"], covariates={"m": "pre"},
                       caps={"m": "p50"}, cap_convention="growthbook").table.iloc[0]
    assert document["rows"][0]["p_value"] == pytest.approx(expected["p_value"], rel=1e-12)
    assert document["settings"]["cap_convention"] == "growthbook"
