"""Regenerate evidently_golden.json: Evidently 0.7.23's recommender metrics (its legacy
``NoveltyMetric``, ``PersonalizationMetric``, ``PopularityBias``, ``DiversityMetric``,
``SerendipityMetric``; Apache-2.0) on train.csv, reco.csv and features.csv. Evidently 0.7.23
does not import under pandas 3, so it is not a test extra: run this with a Python that has
``evidently==0.7.23`` and ``pandas<3``: ``python tests/data/recsys/make_evidently_golden.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from evidently.legacy.metrics import (
    DiversityMetric,
    NoveltyMetric,
    PersonalizationMetric,
    PopularityBias,
    SerendipityMetric,
)
from evidently.legacy.pipeline.column_mapping import ColumnMapping
from evidently.legacy.report import Report

HERE = Path(__file__).parent
K = 5
features = pd.read_csv(HERE / "features.csv")
columns = [c for c in features.columns if c != "itemID"]
train = pd.read_csv(HERE / "train.csv").merge(features, on="itemID")
reco = pd.read_csv(HERE / "reco.csv").merge(features, on="itemID")
reco["target"] = 1   # every recommended item counts as relevant for serendipity
report = Report(metrics=[NoveltyMetric(k=K), PersonalizationMetric(k=K), PopularityBias(k=K),
                         DiversityMetric(k=K, item_features=columns),
                         SerendipityMetric(k=K, item_features=columns)])
mapping = ColumnMapping(user_id="userID", item_id="itemID", prediction="prediction", target="target",
                        recommendations_type="score")
report.run(reference_data=None, current_data=reco, column_mapping=mapping,
           additional_data={"current_train_data": train})
results = {m["metric"]: m["result"] for m in report.as_dict()["metrics"]}
golden = {
    "novelty": results["NoveltyMetric"]["current_value"],
    "personalisation": results["PersonalizationMetric"]["current_value"],
    "arp": results["PopularityBias"]["current_apr"],
    "coverage": results["PopularityBias"]["current_coverage"],
    "gini": results["PopularityBias"]["current_gini"],
    "diversity": results["DiversityMetric"]["current_value"],
    "serendipity": results["SerendipityMetric"]["current_value"],
}
(HERE / "evidently_golden.json").write_text(json.dumps(golden, indent=2) + "\n")
print(golden)
