"""Ranking metrics over label matrices (multilabel classification, scikit-learn's
``label_ranking_*``, ``coverage_error``, ``dcg_score`` and ``ndcg_score``): ``labels`` and
``scores`` of shape [samples, labels]; each sample ranks its labels by score. Every metric is a
weighted mean over samples (``sample_weight``, default 1), so the state is a weighted sum and a
total weight; ``where`` (one flag per sample) leaves samples out.

Definitions, per sample with relevant labels R (``labels != 0``) and scores s:

- label ranking average precision: mean over j in R of |{k in R: s_k >= s_j}| / |{k: s_k >= s_j}|
  (1 when R is empty or holds every label);
- coverage error: |{k: s_k >= min_{j in R} s_j}| (0 when R is empty);
- label ranking loss: |{(j, k): j in R, k not in R, s_k >= s_j}| / (|R| (L - |R|)) (0 when R is
  empty or full);
- DCG@k: sum over the top k of gain / log_base(rank + 1), gains = labels; tied scores share
  their gains' mean (``ignore_ties=False``, as scikit-learn); nDCG@k divides by the DCG of the
  labels sorted (0 when that is 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of


class _PerSample(Metric):
    """A weighted mean over samples of one value per sample."""

    inputs = ("scores", "labels")
    optional_inputs = ("sample_weight", "where")

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "weight": np.zeros(())}

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        name = type(self).__name__
        scores = np.atleast_2d(np.asarray(inputs["scores"], dtype=np.float64))
        labels = np.atleast_2d(np.asarray(inputs["labels"], dtype=np.float64))
        if scores.shape != labels.shape or scores.ndim != 2:
            raise MetricInputError(f"{name}.update: scores {scores.shape} and labels {labels.shape} must both be "
                                   "[samples, labels]")
        if np.isnan(scores).any() or np.isnan(labels).any():
            raise MetricInputError(f"{name}.update: NaN in scores or labels")
        weight = np.ones(len(scores)) if "sample_weight" not in inputs else \
            np.asarray(inputs["sample_weight"], dtype=np.float64).reshape(-1)
        if weight.shape != (len(scores),):
            raise MetricInputError(f"{name}.update: sample_weight needs one value per sample ({len(scores)})")
        keep = mask_of(inputs.get("where"), (len(scores),))
        if keep is not None:
            scores, labels, weight = scores[keep], labels[keep], weight[keep]
        if not len(scores):
            return
        values = self._values(scores, labels)
        self.state["total"] = self.state["total"] + float(np.dot(values, weight))
        self.state["weight"] = self.state["weight"] + float(weight.sum())

    def compute(self) -> float:
        w = float(self.state["weight"])
        return float(self.state["total"]) / w if w else float("nan")


def _ranked_at_least(scores: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every cell: how many labels of its row score at least as much, and how many relevant
    labels do (ties count as at least)."""
    from scipy.stats import rankdata

    return (rankdata(-scores, method="max", axis=1),
            rankdata(np.where(rel, -scores, np.inf), method="max", axis=1))


class LabelRankingAveragePrecision(_PerSample):
    """scikit-learn's ``label_ranking_average_precision_score``.

    >>> m = LabelRankingAveragePrecision()
    >>> m.update(predictions=[[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]], targets=[[1, 0, 0], [0, 0, 1]]).compute()
    0.41666666666666663

    Sample 1: the relevant label is second -> 1/2; sample 2: third -> 1/3; mean 5/12.
    """

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        rel = labels != 0
        all_ge, rel_ge = _ranked_at_least(scores, rel)
        n_rel = rel.sum(axis=1)
        ratio = np.where(rel, rel_ge / all_ge, 0.0).sum(axis=1)
        trivial = (n_rel == 0) | (n_rel == scores.shape[1])
        return np.where(trivial, 1.0, ratio / np.maximum(n_rel, 1))


class CoverageError(_PerSample):
    """scikit-learn's ``coverage_error``: how far down the ranking all relevant labels are.

    >>> CoverageError().update(predictions=[[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]],
    ...                        targets=[[1, 0, 0], [0, 0, 1]]).compute()
    2.5
    """

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        rel = labels != 0
        lowest = np.where(rel, scores, np.inf).min(axis=1, keepdims=True)
        return np.where(rel.any(axis=1), (scores >= lowest).sum(axis=1), 0).astype(np.float64)


class LabelRankingLoss(_PerSample):
    """scikit-learn's ``label_ranking_loss``: the share of (relevant, irrelevant) pairs in the
    wrong order, ties counted as wrong.

    >>> LabelRankingLoss().update(predictions=[[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]],
    ...                           targets=[[1, 0, 0], [0, 0, 1]]).compute()
    0.75
    """

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        rel = labels != 0
        all_ge, rel_ge = _ranked_at_least(scores, rel)
        wrong = np.where(rel, all_ge - rel_ge, 0).sum(axis=1)
        n_rel = rel.sum(axis=1)
        pairs = n_rel * (scores.shape[1] - n_rel)
        return np.divide(wrong, pairs, out=np.zeros(len(scores)), where=pairs > 0)


def dcg_rows(scores: np.ndarray, gains: np.ndarray, k: int | None, log_base: float, ignore_ties: bool
             ) -> np.ndarray:
    """DCG@k of every row (see the module docstring), all rows at once.

    >>> dcg_rows(np.array([[0.9, 0.9, 0.1]]), np.array([[3.0, 0.0, 1.0]]), None, 2, False).round(6).tolist()
    [[2.946395]]

    Ranks 1-2 tie: each gets (3 + 0) / 2, so 1.5 (1/log2 2 + 1/log2 3) + 1/log2 4 = 2.946395.
    """
    n, width = scores.shape
    order = np.argsort(scores, axis=1, kind="stable")[:, ::-1]  # descending; ignore_ties: the later label first,
    # as scikit-learn's reversed ascending sort leaves tied labels
    ranked_scores = np.take_along_axis(scores, order, axis=1)
    ranked_gains = np.take_along_axis(gains, order, axis=1)
    discount = 1.0 / (np.log(np.arange(width) + 2.0) / np.log(log_base))
    if k is not None:
        discount[k:] = 0.0
    if ignore_ties:
        return (ranked_gains * discount).sum(axis=1, keepdims=True)
    start = np.ones((n, width), dtype=bool)
    start[:, 1:] = ranked_scores[:, 1:] != ranked_scores[:, :-1]
    group = np.cumsum(start.ravel()) - 1
    size = np.bincount(group)
    mean_gain = np.bincount(group, weights=ranked_gains.ravel()) / size
    group_discount = np.bincount(group, weights=np.tile(discount, n))
    row = np.repeat(np.arange(n), width)[start.ravel()]
    return np.bincount(row, weights=mean_gain * group_discount, minlength=n).reshape(n, 1)


class DCGScore(_PerSample):
    """scikit-learn's ``dcg_score`` (``k``, ``log_base``, ``ignore_ties``).

    >>> DCGScore().update(predictions=[[0.9, 0.9, 0.1]], targets=[[3, 0, 1]]).compute()   # see dcg_rows
    2.9463946303571857
    """

    def __init__(self, k: int | None = None, log_base: float = 2.0, ignore_ties: bool = False) -> None:
        if k is not None and k < 1:
            raise MetricInputError("k must be a positive integer or None")
        if log_base <= 1:
            raise MetricInputError("log_base must be greater than 1")
        super().__init__(k=k, log_base=log_base, ignore_ties=ignore_ties)

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        p = self.params
        return dcg_rows(scores, labels, p["k"], p["log_base"], p["ignore_ties"])[:, 0]


class NDCGScore(DCGScore):
    """scikit-learn's ``ndcg_score``: DCG@k over the DCG@k of the labels sorted (0 when that is 0);
    labels must not be negative.

    >>> NDCGScore(k=2).update(predictions=[[0.1, 0.9, 0.5]], targets=[[2, 0, 1]]).compute()
    0.23981246656813146

    Top 2: labels 0, 1 -> 1/log2 3; ideal 2, 1 -> 2 + 1/log2 3; 0.6309 / 2.6309.
    """

    def _values(self, scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
        if (labels < 0).any():
            raise MetricInputError("NDCGScore.update: labels must not be negative")
        p = self.params
        ours = dcg_rows(scores, labels, p["k"], p["log_base"], p["ignore_ties"])[:, 0]
        best = dcg_rows(labels, labels, p["k"], p["log_base"], True)[:, 0]
        return np.divide(ours, best, out=np.zeros(len(ours)), where=best > 0)
