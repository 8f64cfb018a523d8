"""Write latency_events.csv: a seeded log of page loads (with their latency in ms) and clicks
(without one) of 400 users; each user's latency has a level of their own (so that a user's
events are not independent), arm B's 4% slower.

Run from the repository root with the project's Python: ``python tests/data/online/make_latency_log.py``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261129)
users = 400
arm = np.where(rng.random(users) < 0.5, "A", "B")
level = rng.lognormal(5.0, 0.4, users) * np.where(arm == "B", 1.04, 1.0)
loads = rng.poisson(6.0, users) + 1
user = np.repeat(np.arange(users), loads)
latency = np.round(level[user] * rng.lognormal(0.0, 0.5, len(user)), 1)
clicks = rng.integers(0, users, 900)
events = pd.DataFrame({
    "user": np.concatenate([user, clicks]), "arm": np.concatenate([arm[user], arm[clicks]]),
    "event": ["page_load"] * len(user) + ["click"] * len(clicks),
    "latency": np.concatenate([latency, np.full(len(clicks), np.nan)])})
events.to_csv(Path(__file__).parent / "latency_events.csv", index=False)
