"""Per-query ROC AUC equals scikit-learn's roc_auc_score on the same documents: the retrieved
ones scored by rank, the judged ones the run missed tied below them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.data.containers import Qrels, Run

metrics = pytest.importorskip("sklearn.metrics")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from("abcdefghij"), min_size=1, max_size=8, unique=True),
       st.dictionaries(st.sampled_from("abcdefghijkl"), st.sampled_from([0, 1, 2]), min_size=1, max_size=10))
def test_auc_matches_sklearn(ranking: list[str], labels: dict[str, int]) -> None:
    docs = list(dict.fromkeys(ranking + sorted(labels)))
    y_true = np.array([1 if labels.get(d, 0) >= 1 else 0 for d in docs])
    retrieved = {d: len(ranking) - i for i, d in enumerate(ranking)}
    y_score = np.array([retrieved.get(d, -1.0) for d in docs], dtype=float)
    res = rankwise.evaluate(Qrels.from_dict({"q": labels}), Run.from_ranked_lists({"q": ranking}), "auc")
    value = res.per_query.loc[("run", "q"), "auc"]
    if y_true.min() == y_true.max():  # one class only: AUC undefined
        assert np.isnan(value)
        return
    assert value == pytest.approx(metrics.roc_auc_score(y_true, y_score), abs=1e-12)


def test_mean_auc_skips_undefined_queries() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}, "r": {"x": 1}})
    run = Run.from_ranked_lists({"q": ["a", "b"], "r": ["x"]})  # r has positives only: undefined
    res = rankwise.evaluate(qrels, run, "auc")
    assert np.isnan(res.per_query.loc[("run", "r"), "auc"])
    assert res.summary.iloc[0, 0] == 1.0
