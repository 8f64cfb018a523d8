"""scikit-learn's own ranking tests (``sklearn/metrics/tests/test_ranking.py``, shipped with
scikit-learn) run against rankwise: its metric functions are replaced by adapters over
rankwise's streaming metrics, then its test functions run unchanged. The cases the API cannot
express (sparse-matrix error messages, string labels, one-document nDCG refusal, sklearn's own
input validation messages) are left out."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.streaming import (
    ROCAUC,
    Accuracy,
    CoverageError,
    DCGScore,
    LabelRankingAveragePrecision,
    LabelRankingLoss,
    NDCGScore,
)
from rankwise.streaming.label_ranking import dcg_rows

suite = pytest.importorskip("sklearn.metrics.tests.test_ranking")


def _dense(x: object) -> np.ndarray:
    return np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)


def _per_sample(metric: type, **params: object):  # noqa: ANN202
    def score(y_true: object, y_score: object, sample_weight: object = None, **more: object) -> float:
        m = metric(**{**params, **more})
        return m.update(predictions=_dense(y_score), targets=_dense(y_true), sample_weight=sample_weight).compute()
    return score


def _dcg_samples(y_true: object, y_score: object, k: int | None = None, log_base: float = 2,
                 ignore_ties: bool = False) -> np.ndarray:
    return dcg_rows(_dense(y_score), _dense(y_true), k, log_base, ignore_ties)[:, 0]


def _ndcg_samples(y_true: object, y_score: object, k: int | None = None, ignore_ties: bool = False) -> np.ndarray:
    ours = _dcg_samples(y_true, y_score, k, 2, ignore_ties)
    best = _dcg_samples(y_true, y_true, k, 2, True)
    return np.divide(ours, best, out=np.zeros(len(ours)), where=best > 0)


def _roc_auc(y_true: object, y_score: object, *, average: str = "macro", sample_weight: object = None,
             max_fpr: float | None = None, multi_class: str = "raise", labels: object = None) -> float:
    y, s = np.asarray(y_true), np.asarray(y_score, dtype=np.float64)
    if s.ndim == 1:
        return ROCAUC(max_fpr=None if max_fpr is None or max_fpr == 1 else max_fpr).update(
            predictions=s, targets=y).compute()
    if multi_class == "ovo" and average is None:  # scikit-learn's own refusal, which its test expects
        raise NotImplementedError("average=None is not implemented for multi_class='ovo'.")
    classes = list(labels) if labels is not None else sorted(set(y.tolist()))
    codes = np.array([classes.index(v) for v in y.tolist()])
    metric = ROCAUC(task="multiclass", num_classes=len(classes), multi_class=multi_class, average=average)
    return metric.update(predictions=s, targets=codes).compute()


@pytest.fixture
def patched(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(suite, "coverage_error", _per_sample(CoverageError))
    monkeypatch.setattr(suite, "label_ranking_loss", _per_sample(LabelRankingLoss))
    monkeypatch.setattr(suite, "label_ranking_average_precision_score", _per_sample(LabelRankingAveragePrecision))
    monkeypatch.setattr(suite, "dcg_score", _per_sample(DCGScore))
    monkeypatch.setattr(suite, "ndcg_score", _per_sample(NDCGScore))
    monkeypatch.setattr(suite, "_dcg_sample_scores", _dcg_samples)
    monkeypatch.setattr(suite, "_ndcg_sample_scores", _ndcg_samples)
    monkeypatch.setattr(suite, "roc_auc_score", _roc_auc)
    return suite


@pytest.mark.parametrize("name", ["test_coverage_error", "test_coverage_tie_handling", "test_label_ranking_loss",
                                  "test_dcg_score", "test_dcg_ties", "test_ndcg_ignore_ties_with_k",
                                  "test_ndcg_invariant", "test_ndcg_score", "test_partial_roc_auc_score"])
def test_scikit_learn_case(patched: object, name: str) -> None:
    getattr(patched, name)()


@pytest.mark.parametrize("ignore_ties", [True, False])
def test_ndcg_toy_examples(patched: object, ignore_ties: bool) -> None:
    patched.test_ndcg_toy_examples(ignore_ties)


@pytest.mark.parametrize("check", ["check_lrap_toy", "check_lrap_without_tie_and_increasing_score",
                                   "check_lrap_only_ties", "check_zero_or_all_relevant_labels"])
def test_label_ranking_average_precision_checks(patched: object, check: str) -> None:
    getattr(patched, check)(_per_sample(LabelRankingAveragePrecision))


@pytest.mark.parametrize("y_true,labels", [(np.array([0, 1, 0, 2]), [0, 1, 2]), (np.array([0, 1, 0, 2]), None)])
def test_multiclass_ovo_toy_data(patched: object, y_true: np.ndarray, labels: object) -> None:
    patched.test_multiclass_ovo_roc_auc_toydata(y_true, labels)


@pytest.mark.parametrize("y_score,k,true_score", [
    (np.array([-1, -1, 1, 1]), 1, 1), (np.array([-1, 1, -1, 1]), 1, 0.5), (np.array([-1, 1, -1, 1]), 2, 1),
    (np.array([0.2, 0.2, 0.7, 0.7]), 1, 1), (np.array([0.2, 0.7, 0.2, 0.7]), 1, 0.5),
    (np.array([0.2, 0.7, 0.2, 0.7]), 2, 1)])
def test_top_k_binary(y_score: np.ndarray, k: int, true_score: float) -> None:
    """scikit-learn's test_top_k_accuracy_score_binary cases (its threshold is 0.5 for scores in
    [0, 1], else 0; integer scores are given as floats: integer predictions are classes)."""
    threshold = 0.5 if y_score.min() >= 0 and y_score.max() <= 1 else 0.0
    y_true = [0, 0, 1, 1]
    got = Accuracy(top_k=k, threshold=np.nextafter(threshold, 1)).update(predictions=y_score.astype(float),
                                                                         targets=y_true).compute()
    assert got == true_score
