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


def test_one_vs_one_leaves_out_classes_absent_from_the_targets() -> None:
    # class 2 never occurs: scikit-learn averages the one pair (0, 1) it can score; rankwise gave NaN
    from sklearn.metrics import roc_auc_score

    from rankwise.streaming import ROCAUC

    y = np.array([0, 1, 0, 1, 1])
    p = np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4], [0.6, 0.2, 0.2], [0.1, 0.8, 0.1]])
    for average in ("macro", "weighted"):
        ours = ROCAUC(task="multiclass", num_classes=3, multi_class="ovo", average=average)
        expected = roc_auc_score(y, p, multi_class="ovo", labels=[0, 1, 2], average=average)
        assert ours.update(predictions=p, targets=y).compute() == pytest.approx(expected, abs=1e-12)


def test_top_1_ties_as_argmax_or_as_top_k_accuracy_score() -> None:
    from sklearn.metrics import accuracy_score, top_k_accuracy_score

    from rankwise.streaming import Accuracy

    y = np.array([0, 1, 2, 2, 0])
    scores = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.4, 0.4], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
    argmax = Accuracy(task="multiclass", num_classes=3).update(predictions=scores, targets=y).compute()
    assert argmax == pytest.approx(accuracy_score(y, scores.argmax(axis=1)))          # 2 of 5
    sklearn_ties = Accuracy(task="multiclass", num_classes=3, ties="sklearn").update(predictions=scores, targets=y)
    assert sklearn_ties.compute() == pytest.approx(top_k_accuracy_score(y, scores, k=1, labels=[0, 1, 2]))  # 3 of 5
    assert argmax != sklearn_ties.compute()
