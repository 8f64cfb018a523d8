"""Regenerate recommenders_golden.json: Microsoft Recommenders 1.2.1's python_evaluation
beyond-accuracy functions on a seeded data set (train.csv, reco.csv, features.csv written
beside it). Run with a Python that has ``recommenders`` installed (it pins old pandas, so it is
not a test extra): ``python tests/data/recsys/generate.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from recommenders.evaluation import python_evaluation as pe

HERE = Path(__file__).parent
rng = np.random.default_rng(7)
train_rows, reco_rows = [], []
for user in range(30):
    seen = rng.choice(25, rng.integers(4, 9), replace=False, p=np.linspace(2, 0.2, 25) / np.linspace(2, 0.2, 25).sum())
    train_rows += [(user, int(i)) for i in seen]
    unseen = np.setdiff1d(np.arange(25), seen)
    picked = rng.choice(unseen, 5, replace=False)
    reco_rows += [(user, int(i), float(5 - r)) for r, i in enumerate(picked)]
train = pd.DataFrame(train_rows, columns=["userID", "itemID"])
reco = pd.DataFrame(reco_rows, columns=["userID", "itemID", "prediction"])
vectors = rng.normal(size=(25, 6))
features = pd.DataFrame({"itemID": np.arange(25), "features": list(vectors)})
train.to_csv(HERE / "train.csv", index=False)
reco.to_csv(HERE / "reco.csv", index=False)
pd.DataFrame(vectors, columns=[f"f{j}" for j in range(6)]).assign(itemID=np.arange(25)).to_csv(
    HERE / "features.csv", index=False)
golden = {
    "catalog_coverage": pe.catalog_coverage(train, reco),
    "distributional_coverage": pe.distributional_coverage(train, reco),
    "novelty": pe.novelty(train, reco),
    "diversity_cooccurrence": pe.diversity(train, reco),
    "diversity_feature_vector": pe.diversity(train, reco, item_feature_df=features,
                                             item_sim_measure="item_feature_vector"),
    "serendipity_cooccurrence": pe.serendipity(train, reco),
    "serendipity_feature_vector": pe.serendipity(train, reco, item_feature_df=features,
                                                 item_sim_measure="item_feature_vector"),
    "user_diversity_cooccurrence": pe.user_diversity(train, reco)["user_diversity"].tolist(),
}
(HERE / "recommenders_golden.json").write_text(json.dumps({k: float(v) if not isinstance(v, list) else v
                                                           for k, v in golden.items()}, indent=1) + "\n")
