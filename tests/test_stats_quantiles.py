"""Quantile metrics (rankwise.stats.quantiles, ``NAME=p90(COL)``): the estimate and bounds
against DuckDB's quantile_cont (the SQL GrowthBook runs), gbstats' variance on its own case,
hand-computed values through ``online.analyze``, and seeded simulations of the A/A
false-positive rate and of the interval's coverage under a known shift."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankwise.errors import OptionError
from rankwise.experiments import analyze
from rankwise.stats.quantiles import N_STAR, bound_levels, estimate_quantile, n_star, quantile_variance
from rankwise.stats.twosample import Arm, compare_arms


def test_the_grid_and_the_bounds_follow_growthbook() -> None:
    assert N_STAR[0] == 100 and N_STAR[-1] == 52_428_800 and len(N_STAR) == 20
    assert [n_star(n) for n in (2, 100, 101, 200, 201, 11054)] == [100, 100, 100, 100, 200, 6400]
    low, high = bound_levels(0.9, 6400)
    assert (low, high) == pytest.approx((0.9 - 1.959963984540054 * math.sqrt(0.09 / 6400),
                                         0.9 + 1.959963984540054 * math.sqrt(0.09 / 6400)), rel=1e-15)
    assert bound_levels(0.999, 100) == (pytest.approx(0.999 - 1.959963984540054 * math.sqrt(0.000999 / 100)),
                                        1 - 1e-8)   # clipped as GrowthBook clips


def test_gbstats_variance_on_its_own_case() -> None:
    # gbstats' QuantileStatistic(n=11054, n_star=11054, nu=0.9, lower 7.0988..., upper 7.2172...):
    # variance_init = (n*/n) (n - 1) ((upper - lower) / (2 z))^2
    expected = 11053 * ((7.217194843758751 - 7.098780136176828) / (2 * 1.959963984540054)) ** 2
    assert quantile_variance(11054, 11054, 7.098780136176828, 7.217194843758751) == pytest.approx(expected, rel=1e-15)
    assert quantile_variance(500, 400, 3.0, 3.0) == 1e-5     # a floor from 100 units on
    assert quantile_variance(50, 100, 3.0, 3.0) == 0.0 and quantile_variance(1, 100, 1.0, 2.0) == 0.0


def test_estimate_and_bounds_equal_duckdb_quantile_cont() -> None:
    duckdb = pytest.importorskip("duckdb")
    rng = np.random.default_rng(2)
    values = np.round(rng.lognormal(0, 1, 3333), 3)   # ties included
    for nu in (0.5, 0.9, 0.99):
        e = estimate_quantile(values, nu)
        low, high = bound_levels(nu, e.n_star)
        with duckdb.connect() as connection:
            connection.register("t", {"x": values})
            got = connection.execute(f"SELECT quantile_cont(x, [{nu!r}, {low!r}, {high!r}]) FROM t").fetchall()[0][0]
        assert [e.quantile, e.lower, e.upper] == pytest.approx(got, rel=1e-14)


def test_hand_computed_values_through_analyze() -> None:
    # A: 1..200, B: 3..202 (every unit 2 more): p50 100.5 and 102.5; n* = 100 in each arm, so each
    # arm's bounds are 1 + 199 * (0.5 -+ z * 0.05) (+2 for B) and its variance is
    # (100 / 200) * 199 * ((upper - lower) / (2 z))^2
    data = {"u": np.arange(400), "v": ["A"] * 200 + ["B"] * 200,
            "x": np.concatenate([np.arange(1.0, 201.0), np.arange(3.0, 203.0)])}
    row = analyze(data, "u", "v", ["median=p50(x)"], test="z").table.iloc[0]
    assert (row["control_value"], row["value"], row["difference"]) == (100.5, 102.5, 2.0)
    half = 199 * 1.959963984540054 * 0.05
    variance = 0.5 * 199 * (2 * half / (2 * 1.959963984540054)) ** 2
    assert row["se"] == pytest.approx(math.sqrt(2 * variance / 200), rel=1e-12)
    assert row["definition"] == "p50(x)"
    with pytest.raises(OptionError, match="compare it with test welch, z or bayesian, not 'mann-whitney'"):
        analyze(data, "u", "v", ["median=p50(x)"], test="mann-whitney")
    with pytest.raises(OptionError, match="between 0 and 1"):
        analyze(data, "u", "v", ["m=p100(x)"])


def _simulate(shift: float, seed: int, trials: int = 300, n: int = 1000) -> dict[float, tuple[float, float]]:
    """For p50 and p90 of lognormal values: the share of trials whose interval misses the true
    difference (``shift``: every treatment value moved by it, so each quantile moves by it)."""
    rng = np.random.default_rng(seed)
    out = {}
    for nu in (0.5, 0.9):
        misses = 0
        for _ in range(trials):
            a = estimate_quantile(rng.lognormal(0, 1, n), nu)
            b = estimate_quantile(rng.lognormal(0, 1, n) + shift, nu)
            d = compare_arms(Arm(a.quantile, a.variance, a.n), Arm(b.quantile, b.variance, b.n), "welch")
            misses += not (d.ci_lower <= shift <= d.ci_upper)
        out[nu] = (misses / trials, math.sqrt(0.05 * 0.95 / trials))
    return out


@pytest.mark.parametrize("shift", [0.0, 0.5])
def test_false_positive_rate_and_coverage_are_nominal(shift: float) -> None:
    """A/A (shift 0): the interval misses 0, a false positive, in about 5% of experiments;
    with a shift of 0.5 it misses the true difference about as often. 300 seeded experiments of
    2 x 1,000 units: within 3 binomial standard errors (+-3.8%) of 5%."""
    for nu, (rate, se) in _simulate(shift, seed=11 if shift else 7).items():
        assert abs(rate - 0.05) < 3 * se, (nu, rate)


def test_ignore_zeros_takes_the_quantile_of_the_units_not_at_zero() -> None:
    # A: 100 units at 0 and 1..200; B: 50 units at 0 and 3..202. Ignoring zeros each arm is the
    # case above (p50 100.5 and 102.5, n 200 each). Counting the zeros, A's p50 is the mean of its
    # 150th and 151st of 300 values (50 and 51: 50.5), B's of its 125th and 126th of 250 (77, 78: 77.5)
    x = np.concatenate([np.zeros(100), np.arange(1.0, 201.0), np.zeros(50), np.arange(3.0, 203.0)])
    data = {"u": np.arange(len(x)), "v": ["A"] * 300 + ["B"] * 250, "x": x}
    ignoring = analyze(data, "u", "v", ["m=p50(x, ignore_zeros)"], test="z").table.iloc[0]
    alone = analyze({"u": np.arange(400), "v": ["A"] * 200 + ["B"] * 200,
                     "x": np.concatenate([np.arange(1.0, 201.0), np.arange(3.0, 203.0)])}, "u", "v",
                    ["m=p50(x)"], test="z").table.iloc[0]
    for column in ("control_value", "value", "difference", "se", "p_value", "n", "n_control"):
        assert ignoring[column] == alone[column], column
    assert ignoring["definition"] == "p50(x, ignore_zeros)"
    counting = analyze(data, "u", "v", ["m=p50(x)"], test="z").table.iloc[0]
    assert (counting["control_value"], counting["value"], counting["n_control"]) == (50.5, 77.5, 300)


def test_ignore_zeros_holds_its_error_rate_and_coverage() -> None:
    """A/A with 60% of units at 0 (seeded, 200 experiments of 2 x 1,000 units, lognormal spend
    among the others): the interval of p50 ignoring zeros misses the true 0 about 5% of the
    time, within 3 binomial standard errors; the same data counting the zeros would compare a
    quantile of mostly zeros."""
    rng = np.random.default_rng(29)
    misses, trials = 0, 200
    for _ in range(trials):
        values = rng.lognormal(0, 1, 2000) * (rng.random(2000) < 0.4)
        data = {"u": np.arange(2000), "v": ["A"] * 1000 + ["B"] * 1000, "x": values}
        row = analyze(data, "u", "v", ["m=p50(x, ignore_zeros)"], test="z").table.iloc[0]
        misses += not (row["ci_lower"] <= 0 <= row["ci_upper"])
    assert abs(misses / trials - 0.05) < 3 * math.sqrt(0.05 * 0.95 / trials)


def test_clustered_event_quantile_on_gbstats_own_case() -> None:
    # the case GrowthBook's statistics tests use for QuantileClusteredStatistic: two clusters with
    # S = 10, sum S^2 = 52, N = 4, sum N^2 = 10, sum S N = 22 -> mean S 5, mean N 2, var S 2,
    # var N 2, cov 2: (2 - 2 (5/2) 2 + (25/4) 2) / (2 x 4) = 0.5625; the variances gbstats 0.8
    # gives for it (and for 500 clusters), computed with gbstats in its own environment
    from rankwise.stats.quantiles import ClusteredQuantileEstimate, ClusterSums

    def case(clusters: int = 2, **changed: float) -> ClusteredQuantileEstimate:
        values = {"n": 11054, "n_star": 11054, "nu": 0.9, "quantile": 7.157987489967789,
                  "lower": 7.098780136176828, "upper": 7.217194843758751, **changed}
        sums = ClusterSums(10.0, 52.0, float(changed.get("events", 4.0)), 10.0, 22.0, clusters)
        return ClusteredQuantileEstimate(values["nu"], int(values["n"]), int(values["n_star"]), values["quantile"],
                                         values["lower"], values["upper"], sums)

    assert case().sums.share_variance() == pytest.approx(0.5625, rel=1e-12)
    assert case().variance == pytest.approx(696842.7210894219, rel=1e-12)
    assert case(500).variance == pytest.approx(349119.5997442001, rel=1e-12)
    # gbstats' degenerate cases: one event, one cluster or no events in the denominator -> 0
    # (floored at 1e-5 from 100 events on)
    assert case(n=1).variance == 0.0
    assert case(1).variance == 1e-5
    assert case(events=0.0).variance == 1e-5
