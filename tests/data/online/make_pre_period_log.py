"""Write pre_period_events.csv and pre_period_exposures.csv: a seeded event log whose users
click at a rate of their own, the same before and after their first exposure (so that the
pre-exposure events predict the experiment's: what CUPED from the pre-period uses).

Run from the repository root with the project's Python: ``python tests/data/online/make_pre_period_log.py``.
"""

from pathlib import Path

import numpy as np
import pandas as pd


def pre_period_log(users: int, seed: int, effect: float = 0.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Events (user, event, timestamp) over 20 days before and 10 days after each user's first
    exposure, impressions at a user's own rate (x ``1 + effect`` in arm B after exposure), each
    clicked with probability 0.3 (x ``1 + effect`` in B after), a purchase after 1 in 10
    clicks; and the exposures (user, arm, timestamp), two per user for a quarter of them."""
    rng = np.random.default_rng(seed)
    rate = rng.gamma(2.0, 1.5, users)
    arm = np.where(rng.random(users) < 0.5, "A", "B")
    exposed = pd.Timestamp("2026-03-10").value // 10**9 + rng.integers(0, 3 * 86400, users)
    lift = np.where(arm == "B", 1.0 + effect, 1.0)
    pre = rng.poisson(rate * 2.0)
    post = rng.poisson(rate * lift)
    user = np.repeat(np.arange(users), pre + post)
    after = np.concatenate([np.r_[np.zeros(a, bool), np.ones(b, bool)] for a, b in zip(pre, post, strict=True)])
    offset = np.where(after, rng.integers(0, 10 * 86400, len(user)), -rng.integers(1, 20 * 86400, len(user)))
    time = exposed[user] + offset
    clicked = rng.random(len(user)) < 0.3 * np.where(after, lift[user], 1.0)
    bought = clicked & (rng.random(len(user)) < 0.1)
    names = np.array([f"u{i:03d}" for i in range(users)])
    events = pd.DataFrame({
        "user": np.concatenate([names[user], names[user[clicked]], names[user[bought]]]),
        "event": ["impression"] * len(user) + ["click"] * int(clicked.sum()) + ["purchase"] * int(bought.sum()),
        "timestamp": pd.to_datetime(np.concatenate([time, time[clicked] + 5, time[bought] + 60]), unit="s")})
    again = rng.random(users) < 0.25
    exposures = pd.DataFrame({
        "user": np.concatenate([names, names[again]]), "arm": np.concatenate([arm, arm[again]]),
        "timestamp": pd.to_datetime(np.concatenate([exposed, exposed[again] + 3600]), unit="s")})
    return events.sort_values("timestamp", kind="stable").reset_index(drop=True), exposures


if __name__ == "__main__":
    here = Path(__file__).parent
    events, exposures = pre_period_log(300, 20261129)
    events.to_csv(here / "pre_period_events.csv", index=False)
    exposures.to_csv(here / "pre_period_exposures.csv", index=False)
