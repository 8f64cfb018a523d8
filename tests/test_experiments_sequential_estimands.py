"""Each look's interval covers the quantity that look estimates. Per-user revenue accumulates
day by day (every user buys each day, the treatment adds DELTA a day), so the true difference
of per-user sums through day d is DELTA x d: it grows from look to look. Intersecting the
intervals of successive looks (as if they estimated one quantity) would cover none of them by
the last looks; each design's own interval must cover the truth of its look at least 95% of the
time, and never be narrower than the fixed-horizon (Welch) interval of the same look.

Seeded: EXPERIMENTS simulated experiments x 14 daily looks, every design through the public
``cumulative_looks`` the daily readout uses."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankwise.experiments.looks import cumulative_looks
from rankwise.experiments.metrics import Mean
from rankwise.experiments.settings import ABSettings, DataSource, ExperimentDesign, plan
from rankwise.stats.sequential import SEQUENTIAL_DESIGNS

DAYS, USERS, DELTA, EXPERIMENTS = 14, 60, 0.3, 80


def _experiment(rng: np.random.Generator) -> pd.DataFrame:
    users = np.arange(2 * USERS)
    arm = np.where(users < USERS, "control", "treatment")
    day = np.repeat(np.arange(DAYS), len(users))
    user = np.tile(users, DAYS)
    revenue = rng.normal(5.0, 2.0, len(user)) + DELTA * (user >= USERS)
    return pd.DataFrame({"user": user, "variant": np.tile(arm, DAYS), "revenue": revenue,
                         "time": pd.Timestamp("2026-01-01") + pd.to_timedelta(day, unit="D")})


def _looks(events: pd.DataFrame, design: str | None) -> pd.DataFrame:
    settings = ABSettings(DataSource("user", "variant", timestamp="time"),
                          ExperimentDesign(sequential=design, planned_units=2 * USERS))
    return cumulative_looks(events, plan({"revenue": Mean("revenue")}, settings), "control", ["control", "treatment"])


def test_every_look_covers_its_own_estimand() -> None:
    rng = np.random.default_rng(20261129)
    designs = SEQUENTIAL_DESIGNS.names()
    covered = {design: np.zeros(DAYS) for design in designs}
    truth = DELTA * np.arange(1, DAYS + 1)
    for _ in range(EXPERIMENTS):
        events = _experiment(rng)
        fixed = _looks(events, None)
        fixed_width = (fixed["ci_upper"] - fixed["ci_lower"]).to_numpy()
        for design in designs:
            looks = _looks(events, design)
            always_valid = SEQUENTIAL_DESIGNS.get(design).always_valid
            lower, upper = ("ci_lower", "ci_upper") if always_valid else ("rci_lower", "rci_upper")
            low, high = looks[lower].to_numpy(), looks[upper].to_numpy()
            assert len(low) == DAYS
            covered[design] += (low <= truth) & (truth <= high)
            assert np.all(high - low >= fixed_width - 1e-9), design   # never narrower than fixed-horizon
    for design in designs:
        coverage = covered[design] / EXPERIMENTS
        # 95% less three binomial standard errors, at every look (the intersection of the
        # intervals covered almost never by the last looks in this setting)
        assert coverage.min() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / EXPERIMENTS), (design, coverage.round(3).tolist())
