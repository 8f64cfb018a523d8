"""ROC AUC and PR AUC (average precision), exact or on a fixed threshold grid, with curve points.

Exact metrics keep every (score, label) pair: their state grows by 5 bytes per input for float32
scores, 9 for float64 (the score in its own precision and a 1-byte label); ``compute`` sorts the
positives' and the negatives' scores once. Grid metrics (``num_thresholds=N``) keep
two histograms of N + 1 counts whatever the input size: a row counts as predicted positive at
threshold t when its score is > t, with thresholds t_0 = -eps, t_i = i / (N - 1), t_{N-1} =
1 + eps (the Keras / metrax grid for probabilities in [0, 1]). On scores that lie on the grid,
grid and exact values are equal (the tests check it against scikit-learn).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of


def _scores_and_labels(metric: Metric, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    raw = inputs["probabilities"]
    scores = (raw if raw.dtype in (np.float32, np.float64) else raw.astype(np.float64)).ravel()
    labels = inputs["labels"].ravel()
    if scores.shape != labels.shape:
        raise MetricInputError(f"{type(metric).__name__}.update: {scores.shape[0]} scores for {labels.shape[0]} labels")
    mask = mask_of(inputs.get("where"), inputs["labels"].shape)
    if mask is not None:
        scores, labels = scores[mask.ravel()], labels[mask.ravel()]
    if not np.isin(labels, (0, 1)).all():
        raise MetricInputError(f"{type(metric).__name__}.update: labels must be 0 or 1")
    if np.isnan(scores).any():
        raise MetricInputError(f"{type(metric).__name__}.update: NaN scores")
    return scores, labels.astype(bool)


def grid(num_thresholds: int) -> np.ndarray:
    """The threshold grid: -eps, 1/(N-1), ..., (N-2)/(N-1), 1 + eps."""
    eps = 1e-7
    t = np.linspace(0.0, 1.0, num_thresholds)
    t[0], t[-1] = -eps, 1.0 + eps
    return t


class _Curve(Metric):
    inputs = ("probabilities", "labels")

    def __init__(self, num_thresholds: int | None = None) -> None:
        if num_thresholds is not None and num_thresholds < 2:
            raise MetricInputError("num_thresholds must be at least 2")
        super().__init__(num_thresholds=num_thresholds)

    def _initial_state(self) -> dict[str, Any]:
        n = self.params["num_thresholds"]
        if n is None:
            return {"scores": [], "labels": []}
        return {"positives": np.zeros(n + 1, dtype=np.int64), "negatives": np.zeros(n + 1, dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        key = ("curve-input", id(inputs["probabilities"]), id(inputs["labels"]), id(inputs.get("where")))
        if key not in shared:
            shared[key] = _scores_and_labels(self, inputs)
        scores, labels = shared[key]
        n = self.params["num_thresholds"]
        if n is None:
            self.state["scores"].append(scores.copy())
            self.state["labels"].append(labels.copy())
            return
        bucket = np.searchsorted(grid(n), scores, side="left")  # thresholds strictly below the score
        self.state["positives"] += np.bincount(bucket[labels], minlength=n + 1)
        self.state["negatives"] += np.bincount(bucket[~labels], minlength=n + 1)

    def _merge(self, other: dict[str, Any]) -> None:
        if self.params["num_thresholds"] is None:
            self.state["scores"] += other["scores"]
            self.state["labels"] += other["labels"]
        else:
            super()._merge(other)

    def _counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cumulative (true positives, false positives, thresholds) from the highest threshold
        down, one point per distinct threshold (as scikit-learn's curves)."""
        if self.params["num_thresholds"] is None:
            if not self.state["scores"]:
                return np.zeros(0), np.zeros(0), np.zeros(0)
            scores = np.concatenate(self.state["scores"])
            labels = np.concatenate(self.state["labels"])
            pos, neg = np.sort(scores[labels]), np.sort(scores[~labels])  # value sorts: no index arrays
            merged = np.sort(np.concatenate([pos, neg]), kind="stable")  # two sorted runs: a merge
            distinct = merged[np.r_[True, merged[1:] != merged[:-1]]] if len(merged) else merged
            thresholds = distinct[::-1]
            tps = len(pos) - np.searchsorted(pos, thresholds, side="left")
            fps = len(neg) - np.searchsorted(neg, thresholds, side="left")
            return tps.astype(np.float64), fps.astype(np.float64), thresholds.astype(np.float64)
        n = self.params["num_thresholds"]
        pos = self.state["positives"][::-1].cumsum()[:-1]  # score > t_i for i = N-1 .. 0
        neg = self.state["negatives"][::-1].cumsum()[:-1]
        return pos.astype(np.float64), neg.astype(np.float64), grid(n)[::-1]


class ROCAUC(_Curve):
    """Area under the ROC curve (trapezoids between the curve's points; ties are diagonal
    segments), as ``sklearn.metrics.roc_auc_score``; NaN with one class only.
    Exact (default): memory grows by 5 (float32) or 9 (float64) bytes per input. ``num_thresholds=N``: fixed memory.

    >>> ROCAUC().update(probabilities=[0.1, 0.4, 0.35, 0.8], labels=[0, 0, 1, 1]).compute()
    0.75
    """

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(false positive rate, true positive rate, thresholds), starting at (0, 0)."""
        tps, fps, thresholds = self._counts()
        tps, fps = np.r_[0.0, tps], np.r_[0.0, fps]
        p, n = tps[-1], fps[-1]
        return (fps / n if n else np.full_like(fps, np.nan), tps / p if p else np.full_like(tps, np.nan),
                np.r_[np.inf, thresholds])

    def compute(self) -> float:
        fpr, tpr, _ = self.curve()
        if np.isnan(fpr).any() or np.isnan(tpr).any():
            return float("nan")
        return float(np.trapezoid(tpr, fpr))


class AveragePrecision(_Curve):
    """PR AUC as average precision: sum over thresholds of (R_i - R_{i-1}) P_i, as
    ``sklearn.metrics.average_precision_score`` (step-wise, no interpolation); NaN without
    positives. Exact by default (5 or 9 bytes per input), or on ``num_thresholds``.

    >>> round(AveragePrecision().update(probabilities=[0.1, 0.4, 0.35, 0.8], labels=[0, 0, 1, 1]).compute(), 4)
    0.8333
    """

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(precision, recall, thresholds) from the highest threshold down."""
        tps, fps, thresholds = self._counts()
        predicted = tps + fps
        keep = predicted > 0
        precision = np.divide(tps, predicted, out=np.ones_like(tps), where=keep)
        recall = tps / tps[-1] if len(tps) and tps[-1] > 0 else np.full_like(tps, np.nan)
        return precision[keep], recall[keep], thresholds[keep]

    def compute(self) -> float:
        precision, recall, _ = self.curve()
        if not len(recall) or np.isnan(recall).any():
            return float("nan")
        return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
