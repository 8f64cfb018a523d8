"""The p-value of the relative lift (GrowthBook's default display): equal to gbstats'
relative ``TwoSidedTTest`` on its golden cases (``tests/test_experiments.py``), the p every output
shows and corrects with ``p_value="relative"`` / ``--p-value relative``, refused where the test
has no relative form, and at its nominal false-positive rate in seeded A/A experiments."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankwise import experiments
from rankwise.errors import RankwiseError
from rankwise.stats.twosample import Arm, compare_arms

EVENTS = Path(__file__).resolve().parent / "data" / "online" / "events.csv"
METRICS = ["ctr=count(click)/count(impression)", "clicks=count(click)"]


def test_the_relative_p_is_shown_and_corrected_on_request() -> None:
    plain = experiments.analyze(str(EVENTS), unit="user_id", metrics=METRICS).table
    lift = experiments.analyze(str(EVENTS), unit="user_id", metrics=METRICS, p_value="relative").table
    np.testing.assert_allclose(lift["p_value"], plain["relative_p_value"], rtol=1e-15)
    np.testing.assert_allclose(lift["absolute_p_value"], plain["p_value"], rtol=1e-15)
    # Holm over the two metrics: the smaller p doubled, the larger kept, both at least the smaller's
    p = sorted(lift["p_value"])
    assert sorted(lift["p_corrected"]) == pytest.approx([max(2 * p[0], p[1])] * 2)
    # the relative lift's statistic is its estimate over its delta-method standard error
    row = plain.iloc[0]
    from scipy.stats import t

    assert row["relative_p_value"] == pytest.approx(2 * t.sf(abs(row["relative"] / row["relative_se"]), row["df"]),
                                                    rel=1e-12)


@pytest.mark.parametrize("options", [{"test": "mann-whitney"}, {"test": "bayesian"},
                                     {"sequential": "always-valid"}])
def test_a_test_without_a_relative_form_is_refused(options) -> None:
    with pytest.raises(RankwiseError, match="has no relative form"):
        experiments.analyze(str(EVENTS), unit="user_id", metrics=METRICS, p_value="relative", **options)


def test_the_command_line_shows_it(rankwise_cli, capsys) -> None:
    assert rankwise_cli(["ab", str(EVENTS), "--unit", "user_id", "-m", METRICS[0], "--p-value", "relative",
                         "-f", "text"]) == 0
    assert "p of the relative lift" in capsys.readouterr().out
    assert rankwise_cli(["ab", str(EVENTS), "--unit", "user_id", "-m", METRICS[0], "--p-value", "lift"]) == 2
    assert "expected absolute or relative" in capsys.readouterr().err


def test_a_a_false_positive_rate_is_nominal() -> None:
    # 2,000 seeded A/A experiments, 300 units per arm, skewed (gamma) values: the share of
    # relative-lift p-values below 0.05 lies within 3 binomial standard errors of 5%
    rng = np.random.default_rng(52)
    trials, hits = 2000, 0
    for _ in range(trials):
        a, b = rng.gamma(2.0, 3.0, 300), rng.gamma(2.0, 3.0, 300)
        d = compare_arms(Arm(a.mean(), a.var(ddof=1), 300), Arm(b.mean(), b.var(ddof=1), 300))
        hits += d.relative_p_value < 0.05
    assert abs(hits / trials - 0.05) < 3 * math.sqrt(0.05 * 0.95 / trials), hits / trials
