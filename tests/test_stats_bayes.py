"""The Bayesian engine (rankwise.stats.bayes, ``test="bayesian"``) against gbstats 0.8's own
test cases (growthbook/growthbook commit c6b15529f6, packages/stats/tests/bayesian/test_tests.py:
the expected values are theirs), its closed-form risk against simulation, its use through
``online.analyze`` and the command line, and the A/A rate of its decision rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankwise.experiments import VariantMoments, analyze
from rankwise.stats.bayes import NormalPrior, expected_loss, normal_posterior

Z975 = 1.959963984540054


def _mean_statistic(total: float, squares: float, n: int) -> tuple[float, float, int]:
    return total / n, (squares - total * total / n) / (n - 1), n


def _relative(a: tuple[float, float, int], b: tuple[float, float, int]) -> tuple[float, float]:
    """gbstats' frequentist_diff and frequentist_variance, relative."""
    (ma, va, na), (mb, vb, nb) = a, b
    return (mb - ma) / ma, vb / (ma ** 2 * nb) + va * mb ** 2 / (ma ** 4 * na)


def _rounded(p, *fields: str) -> list[float]:
    return [round(float(getattr(p, f)), 5) for f in fields]


FIELDS = ("mean", "lower", "upper", "sd", "chance_to_win", "risk_control", "risk_treatment")


def test_gbstats_gaussian_cases() -> None:
    a = _mean_statistic(100, 1002.25, 10)
    b = _mean_statistic(105, 1111.5, 10)
    d, v = _relative(a, b)
    # test_bayesian_gaussian_ab_test: expected 0.05, ci [-0.02, 0.12], sd 0.03572, ctw 0.91923, risk [0.05131, 0.00131]
    assert _rounded(normal_posterior(d, v), *FIELDS) == [0.05, -0.02, 0.12, 0.03572, 0.91923, 0.05131, 0.00131]
    # test_bayesian_gaussian_ab_test_informative: prior N(0.1, 0.1), proper
    assert _rounded(normal_posterior(d, v, NormalPrior(0.1, 0.1, True)), *FIELDS) == [
        0.05063, -0.01893, 0.12019, 0.03549, 0.92315, 0.05186, 0.00123]


def test_gbstats_binomial_case() -> None:
    # test_bayesian_binomial_ab_test: 49 / 100 against 51 / 100 (variance p (1 - p))
    a, b = (0.49, 0.49 * 0.51, 100), (0.51, 0.51 * 0.49, 100)
    d, v = _relative(a, b)
    assert _rounded(normal_posterior(d, v), *FIELDS) == [0.04082, -0.24779, 0.32943, 0.14725, 0.60918, 0.0814,
                                                         0.04058]


def test_gbstats_quantile_effect_cases_to_the_last_bits() -> None:
    """TestEffectBayesianABTest: p90 quantiles with their order-statistic bounds; gbstats checks
    exact floats, and so does this test (1e-15 relative: one rounding apart at most)."""
    n_c, n_t = 11054, 10861
    hat_c, hat_t = 7.157987489967789, 7.694499927525767
    lower_c, lower_t = 7.098780136176828, 7.64180598628119
    upper_c, upper_t = 7.217194843758751, 7.747193868770344

    def variance(n: int, lower: float, upper: float) -> float:   # QuantileStatistic.variance, n_star = n
        return (n - 1) * ((upper - lower) / (2 * Z975)) ** 2

    va, vb = variance(n_c, lower_c, upper_c), variance(n_t, lower_t, upper_t)
    absolute, absolute_var = hat_t - hat_c, vb / n_t + va / n_c
    relative, relative_var = _relative((hat_c, va, n_c), (hat_t, vb, n_t))
    flat, informative = NormalPrior(variance=1e6, proper=True), NormalPrior(variance=1.0, proper=True)
    cases = [
        (normal_posterior(absolute, absolute_var), 0.5365124375579775, [0.45725595891154214, 0.6157689162044129]),
        # an absolute difference with the prior on the relative effect: rescaled by the control's quantile
        (normal_posterior(absolute, absolute_var, flat.rescaled(hat_c)), 0.536512437540855,
         [0.4572559588956844, 0.6157689161860256]),
        (normal_posterior(relative, relative_var, flat), 0.07495297222736319,
         [0.06341005842481906, 0.08649588602990732]),
        (normal_posterior(absolute, absolute_var, informative.rescaled(hat_c)), 0.536495315442269,
         [0.4572401014910488, 0.6157505293934893]),
        (normal_posterior(relative, relative_var, informative), 0.07495037261804469,
         [0.06340765898986044, 0.08649308624622894]),
    ]
    for posterior, expected, interval in cases:
        assert posterior.mean == pytest.approx(expected, rel=1e-15)
        assert [posterior.lower, posterior.upper] == pytest.approx(interval, rel=1e-15)


def test_the_closed_form_risk_equals_simulation() -> None:
    # gbstats checks its truncated-normal risk against 10^7 draws to 3 decimals; the closed form
    # E[max(X, 0)] = mu Phi(mu / s) + s phi(mu / s) against 2 * 10^6 seeded draws
    rng = np.random.default_rng(20240329)
    for mean, sd in ((0.5365, 0.04), (-0.2, 0.3), (0.0, 1.0)):
        draws = rng.normal(mean, sd, 2_000_000)
        above, below = expected_loss(mean, sd)
        assert above == pytest.approx(np.maximum(draws, 0).mean(), abs=3 * sd / math.sqrt(2e6) + 1e-4)
        assert below == pytest.approx(np.maximum(-draws, 0).mean(), abs=3 * sd / math.sqrt(2e6) + 1e-4)
        assert above - below == pytest.approx(mean, abs=1e-12)   # E[max(X,0)] - E[max(-X,0)] = E[X]


def test_through_analyze_and_the_command_line(tmp_path) -> None:
    data = {"u": np.arange(200), "v": ["A"] * 100 + ["B"] * 100, "x": [1] * 49 + [0] * 51 + [1] * 51 + [0] * 49}
    row = analyze(data, "u", "v", ["conversion=x>0"], test="bayesian").table.iloc[0]
    # the gbstats binomial case again, now from unit rows
    assert [round(float(row[c]), 5) for c in ("relative", "relative_lower", "relative_upper", "chance_to_win",
                                               "risk_control", "risk_treatment")] == [
        0.04082, -0.24779, 0.32943, 0.60918, 0.0814, 0.04058]
    assert row["difference"] == pytest.approx(0.02, abs=1e-15) and math.isnan(row["p_value"])
    assert not row["significant"]
    informative = analyze(data, "u", "v", ["conversion=x>0"],
                          test="bayesian(prior_mean=0.1, prior_variance=0.1, proper=true)")
    assert informative.settings["prior"]["proper"] is True
    assert informative.table.iloc[0]["relative"] > row["relative"]   # pulled towards the prior's +10%
    lower_is_better = analyze(data, "u", "v", ["conversion=x>0"], test="bayesian(inverse=true)").table.iloc[0]
    assert lower_is_better["chance_to_win"] == pytest.approx(1 - row["chance_to_win"], abs=1e-15)
    assert lower_is_better["risk_control"] == row["risk_treatment"]
    from rankwise.errors import ParameterError

    with pytest.raises(ParameterError, match="bayesian: prior_type must be one of relative, absolute"):
        analyze(data, "u", "v", ["conversion=x>0"], test="bayesian(prior_type=log)")

    import pandas as pd
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    pd.DataFrame(data).to_csv(tmp_path / "log.csv", index=False)
    result = CliRunner().invoke(app, ["ab", str(tmp_path / "log.csv"), "--unit", "u", "--variant", "v", "-m",
                                      "conversion=x>0", "--test", "bayesian", "-f", "text"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "A/B analysis against A (test=bayesian, flat prior, relative=delta, alpha=0.05)"
    assert lines[2].endswith("chance to win  risk control  risk treatment")
    assert lines[4].split()[-3:] == ["60.9%", "8.14%", "4.06%"]


def test_the_decision_rule_declares_a_winner_in_2_alpha_of_aa_tests() -> None:
    """With the flat prior the chance to win is Phi(z): 'at least 95% or at most 5%' happens in
    10% of A/A experiments. 400 seeded A/A experiments of 2 x 500 units: the rate within
    binomial error (sd 0.015) of 0.10."""
    rng = np.random.default_rng(5)
    winners = 0
    trials = 400
    for _ in range(trials):
        values = rng.gamma(2.0, 3.0, (1000, 1))
        codes = np.repeat([0, 1], 500)
        moments = VariantMoments.from_codes(codes, values, ["A", "B"], ["x"])
        winners += bool(analyze(moments, metrics=["x"], test="bayesian").table.iloc[0]["significant"])
    assert abs(winners / trials - 0.10) < 0.045


def test_lower_is_better_turns_the_posterior_around_per_metric() -> None:
    data = {"u": np.arange(200), "v": ["A"] * 100 + ["B"] * 100, "x": [1] * 49 + [0] * 51 + [1] * 51 + [0] * 49}
    table = analyze(data, "u", "v", ["up=x>0", "down=x>0"], test="bayesian", lower_is_better=["down"]).table
    up, down = table.iloc[0], table.iloc[1]
    assert down["chance_to_win"] == pytest.approx(1 - up["chance_to_win"], abs=1e-15)
    assert (down["risk_control"], down["risk_treatment"]) == (up["risk_treatment"], up["risk_control"])


def _guarded(test: str, shift: float, rng: np.random.Generator, n: int = 2000) -> dict:
    """One experiment of ``n`` units per arm (normal values, mean 10; B's shifted by ``shift``
    relative), the metric guarded at a 2% margin, analysed with ``test``."""
    values = np.concatenate([rng.normal(10, 3, n), rng.normal(10 * (1 + shift), 3, n)])
    data = {"u": np.arange(2 * n), "v": ["A"] * n + ["B"] * n, "x": values}
    return analyze(data, "u", "v", ["x"], test=test, guardrails={"x": 0.02}).table.iloc[0].to_dict()


def test_a_bayesian_guardrail_reads_the_posterior() -> None:
    rng = np.random.default_rng(3)
    # a flat prior: the posterior of the lift is the z test's estimate and error, so the guardrail
    # is the z test's (the posterior probability of being worse than the margin = the one-sided p)
    state = rng.bit_generator.state
    flat = _guarded("bayesian", 0.0, rng)
    rng.bit_generator.state = state
    z = _guarded("z", 0.0, rng)
    assert flat["guardrail_p"] == pytest.approx(z["guardrail_p"], rel=1e-9)
    assert flat["guardrail"] == z["guardrail"]
    # a proper prior N(0, 0.01^2) on the lift: P(lift < -0.02) under the posterior, by hand
    row = analyze({"u": np.arange(8), "v": ["A"] * 4 + ["B"] * 4, "x": [9.0, 10, 11, 10, 9.5, 10.5, 11.5, 10.5]},
                  "u", "v", ["x"], test="bayesian(proper=true, prior_variance=0.0001)",
                  guardrails={"x": 0.02}).table.iloc[0]
    sd = (row["relative_upper"] - row["relative_lower"]) / (2 * 1.959963984540054)
    from scipy.stats import norm

    assert row["guardrail_p"] == pytest.approx(norm.cdf((-0.02 - row["relative"]) / sd), rel=1e-9)


def test_a_bayesian_guardrail_passes_a_metric_at_the_margin_in_alpha_of_experiments() -> None:
    """Seeded: 200 experiments whose treatment is exactly 2% worse (the margin). A guardrail
    that passes a metric this bad is wrong; with a flat prior it does so in about 5% of
    experiments, within 3 binomial standard errors."""
    rng = np.random.default_rng(11)
    passed = sum(_guarded("bayesian", -0.02, rng, n=500)["guardrail"] == "passed" for _ in range(200))
    assert abs(passed / 200 - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 200)


def test_more_than_two_arms_each_against_the_control_as_growthbook() -> None:
    """Three arms: each treatment's posterior, chance to win and risks are those of the two-arm
    analysis of that arm with the control alone (GrowthBook compares every variation with the
    control; the Bayesian decision is per arm, not corrected)."""
    rng = np.random.default_rng(5)
    n = 300
    values = np.concatenate([rng.normal(10, 2, n), rng.normal(10.3, 2, n), rng.normal(10.6, 2, n)])
    data = {"u": np.arange(3 * n), "v": ["A"] * n + ["B"] * n + ["C"] * n, "x": values}
    three = analyze(data, "u", "v", ["x"], test="bayesian(proper=true, prior_variance=0.01)").table
    assert three["variant"].tolist() == ["B", "C"]
    for arm, start in (("B", n), ("C", 2 * n)):
        keep = np.r_[0:n, start:start + n]
        pair = analyze({k: np.asarray(v)[keep] for k, v in data.items()}, "u", "v", ["x"],
                       test="bayesian(proper=true, prior_variance=0.01)").table.iloc[0]
        row = three[three["variant"] == arm].iloc[0]
        for column in ("difference", "ci_lower", "ci_upper", "relative", "chance_to_win", "risk_control",
                       "risk_treatment"):
            assert row[column] == pytest.approx(pair[column], rel=1e-12), (arm, column)
        assert row["p_corrected"] != row["p_corrected"]   # no p-value to correct: NaN
