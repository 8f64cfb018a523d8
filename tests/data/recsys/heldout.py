"""Write test.csv (3 held-out items per user of train.csv, popular items likelier) and
random.csv (5 random unseen items per user, a second run to compare): seeded, numpy and
pandas only. ``python tests/data/recsys/heldout.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
rng = np.random.default_rng(11)
train = pd.read_csv(HERE / "train.csv")
weights = np.linspace(2, 0.2, 25)
test_rows, random_rows = [], []
for user in range(30):
    unseen = np.setdiff1d(np.arange(25), train.loc[train["userID"] == user, "itemID"])
    liked = rng.choice(unseen, 3, replace=False, p=weights[unseen] / weights[unseen].sum())
    test_rows += [(user, int(i), 1) for i in liked]
    random_rows += [(user, int(i), float(5 - r)) for r, i in enumerate(rng.choice(unseen, 5, replace=False))]
pd.DataFrame(test_rows, columns=["userID", "itemID", "rating"]).to_csv(HERE / "test.csv", index=False)
pd.DataFrame(random_rows, columns=["userID", "itemID", "prediction"]).to_csv(HERE / "random.csv", index=False)
