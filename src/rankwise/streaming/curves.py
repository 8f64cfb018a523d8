"""ROC AUC and PR AUC (average precision), exact or on a fixed threshold grid, with curve points;
binary, or one-vs-rest per class (multiclass) or per label (multilabel), averaged.

Exact metrics keep every (score, label) pair: their state grows by 5 bytes per input for float32
scores, 9 for float64 (the score in its own precision and a 1-byte label; multiclass: C scores
per row); ``compute`` sorts the positives' and the negatives' scores once per class. Grid metrics
(``num_thresholds=N``) keep two histograms of N + 1 counts per class whatever the input size: a
row counts as predicted positive at threshold t when its score is > t, with thresholds t_0 =
-eps, t_i = i / (N - 1), t_{N-1} = 1 + eps (the Keras / metrax grid for probabilities in
[0, 1]). On scores that lie on the grid, grid and exact values are equal (the tests check it
against scikit-learn).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of
from rankwise.streaming.classification import Average, Task


def grid(num_thresholds: int, rule: str = "above") -> np.ndarray:
    """The threshold grid. ``above`` (Keras / metrax, positive when score > t): -eps,
    1/(N-1), ..., (N-2)/(N-1), 1 + eps. ``at_least`` (torchmetrics' ``thresholds=N``, positive
    when score >= t): linspace(0, 1, N).

    >>> grid(3).tolist(), grid(3, "at_least").tolist()
    ([-1e-07, 0.5, 1.0000001], [0.0, 0.5, 1.0])
    """
    t = np.linspace(0.0, 1.0, num_thresholds)
    if rule == "above":
        eps = 1e-7
        t[0], t[-1] = -eps, 1.0 + eps
    return t


def exact_counts(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative (true positives, false positives) at each distinct score, from the highest
    down, and those scores (as scikit-learn's curves, with every threshold kept); with
    ``weights``, each row counts its weight (scikit-learn's ``sample_weight``).

    >>> [a.tolist() for a in exact_counts(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1], bool))]
    [[1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 1.0, 2.0], [0.8, 0.4, 0.35, 0.1]]
    >>> exact_counts(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1], bool), np.array([1, 2, 3, 4.0]))[1]
    array([0., 2., 2., 3.])
    """
    if weights is not None:
        order = np.argsort(-scores, kind="stable")
        ranked, right, w = scores[order], labels[order], weights[order]
        last = np.r_[ranked[1:] != ranked[:-1], True] if len(ranked) else np.zeros(0, dtype=bool)
        return (np.cumsum(w * right)[last], np.cumsum(w * ~right)[last], ranked[last].astype(np.float64))
    pos, neg = np.sort(scores[labels]), np.sort(scores[~labels])  # value sorts: no index arrays
    merged = np.sort(np.concatenate([pos, neg]), kind="stable")  # two sorted runs: a merge
    distinct = merged[np.r_[True, merged[1:] != merged[:-1]]] if len(merged) else merged
    thresholds = distinct[::-1]
    tps = len(pos) - np.searchsorted(pos, thresholds, side="left")
    fps = len(neg) - np.searchsorted(neg, thresholds, side="left")
    return tps.astype(np.float64), fps.astype(np.float64), thresholds.astype(np.float64)


def grid_counts(positives: np.ndarray, negatives: np.ndarray, rule: str = "above"
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative (true positives, false positives, thresholds) from the histograms (bin i:
    scores past i thresholds), highest threshold first."""
    n = len(positives) - 1
    pos = positives[::-1].cumsum()[:-1]  # past t_i for i = N-1 .. 0
    neg = negatives[::-1].cumsum()[:-1]
    return pos.astype(np.float64), neg.astype(np.float64), grid(n, rule)[::-1]


def partial_roc_auc(tps: np.ndarray, fps: np.ndarray, max_fpr: float) -> float:
    """The ROC area up to ``max_fpr`` (the curve interpolated linearly at it), McClish-standardised:
    0.5 (1 + (area - max_fpr^2 / 2) / (max_fpr - max_fpr^2 / 2)), as scikit-learn's ``max_fpr``.

    >>> tps, fps, _ = exact_counts(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1], dtype=bool))
    >>> partial_roc_auc(tps, fps, 0.5)   # (0,0)-(0,.5)-(.5,.5): area .25; 0.5 (1 + (.25 - .125) / .375)
    0.6666666666666666
    """
    fpr, tpr = roc_points(tps, fps)
    if len(fpr) < 2 or np.isnan(fpr).any() or np.isnan(tpr).any():
        return float("nan")
    stop = int(np.searchsorted(fpr, max_fpr, side="right"))
    tpr_at = float(np.interp(max_fpr, [fpr[stop - 1], fpr[stop]], [tpr[stop - 1], tpr[stop]]))
    fpr_cut = np.append(fpr[:stop], max_fpr)
    tpr_cut = np.append(tpr[:stop], tpr_at)
    area = float(np.trapezoid(tpr_cut, fpr_cut))
    low, high = 0.5 * max_fpr**2, max_fpr
    return 0.5 * (1 + (area - low) / (high - low))


def roc_points(tps: np.ndarray, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rate, true positive rate) from (0, 0); NaN without both classes."""
    tps, fps = np.r_[0.0, tps], np.r_[0.0, fps]
    p, n = tps[-1], fps[-1]
    return (fps / n if n else np.full_like(fps, np.nan), tps / p if p else np.full_like(tps, np.nan))


def roc_auc(tps: np.ndarray, fps: np.ndarray) -> float:
    fpr, tpr = roc_points(tps, fps)
    if np.isnan(fpr).any() or np.isnan(tpr).any():
        return float("nan")
    return float(np.trapezoid(tpr, fpr))


def pr_points(tps: np.ndarray, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, kept) at the thresholds where something is predicted positive."""
    predicted = tps + fps
    keep = predicted > 0
    precision = np.divide(tps, predicted, out=np.ones_like(tps), where=keep)
    recall = tps / tps[-1] if len(tps) and tps[-1] > 0 else np.full_like(tps, np.nan)
    return precision[keep], recall[keep], keep


def average_precision(tps: np.ndarray, fps: np.ndarray) -> float:
    precision, recall, _ = pr_points(tps, fps)
    if not len(recall) or np.isnan(recall).any():
        return float("nan")
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def interpolated_pr_auc(tps: np.ndarray, fps: np.ndarray) -> float:
    """PR AUC with Davis & Goadrich's interpolation (metrax's ``AUCPR``, Keras' ``AUC(curve="PR")``):
    between two successive thresholds, true positives and predicted positives P move linearly
    together, so precision is (TP_B + s (P - P_B)) / P with s = dTP / dP, and the area over the
    interval is s (dTP + (TP_B - s P_B) ln(P_A / P_B)) / positives (ln taken as 0 when either P
    is 0: constant precision over the first interval with positives). ``tps``/``fps``: counts at
    each threshold from the highest down.

    >>> # scores 0.8 (+), 0.4 (-), 0.35 (+), 0.1 (-); (TP, P) from the top: (0,0) (1,1) (1,2) (2,3) (2,4)
    >>> # intervals: s = 1: 1 + 0; s = 0; s = 1, intercept 1 - 2 = -1: 1 - ln(3/2); s = 0. Sum / 2 positives
    >>> round(interpolated_pr_auc(np.array([1.0, 1.0, 2.0, 2.0]), np.array([0.0, 1.0, 1.0, 2.0])), 4)
    0.7973
    """
    tp = np.r_[0.0, np.asarray(tps, dtype=np.float64)]
    p = np.r_[0.0, np.asarray(tps, dtype=np.float64) + np.asarray(fps, dtype=np.float64)]
    if not len(tps) or tp[-1] <= 0:
        return float("nan")
    tp_b, tp_a, p_b, p_a = tp[:-1], tp[1:], p[:-1], p[1:]
    dtp, dp = tp_a - tp_b, p_a - p_b
    slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp > 0)
    intercept = tp_b - slope * p_b
    ratio = np.divide(p_a, p_b, out=np.ones_like(p_a), where=(p_a > 0) & (p_b > 0))
    return float((slope * (dtp + intercept * np.log(ratio))).sum() / tp[-1])


class _Curve(Metric):
    inputs = ("probabilities", "labels")
    optional_inputs = ("where", "sample_weights")
    nonnegative_state = ("positives", "negatives")

    def __init__(self, num_thresholds: int | None = None, task: Task = "binary", num_classes: int | None = None,
                 average: Average | None = "macro", thresholds: int | None = None, **extra: Any) -> None:
        if num_thresholds is not None and thresholds is not None:
            raise MetricInputError("give num_thresholds (Keras / metrax grid) or thresholds (torchmetrics' grid), "
                                   "not both")
        if thresholds is not None:
            extra["thresholds"] = thresholds
            num_thresholds = thresholds
        if num_thresholds is not None and num_thresholds < 2:
            raise MetricInputError("num_thresholds must be at least 2")
        if task not in ("binary", "multiclass", "multilabel"):
            raise MetricInputError(f"task {task!r}: expected binary, multiclass or multilabel")
        if task != "binary" and not num_classes:
            raise MetricInputError(f"task {task!r} needs num_classes")
        if average not in ("macro", "weighted", "micro", "samples", None):
            raise MetricInputError(f"average {average!r}: expected macro, weighted, micro, samples or None")
        if average == "samples" and (task != "multilabel" or num_thresholds is not None):
            raise MetricInputError("average='samples' needs task='multilabel' and exact curves (no num_thresholds)")
        super().__init__(num_thresholds=num_thresholds, task=task, num_classes=num_classes, average=average, **extra)

    @property
    def rule(self) -> str:
        """How a grid counts a score as positive: ``above`` t or ``at_least`` t."""
        return "at_least" if self.params.get("thresholds") is not None else "above"

    @property
    def n_columns(self) -> int:
        return 1 if self.params["task"] == "binary" else int(self.params["num_classes"])

    def _initial_state(self) -> dict[str, Any]:
        n = self.params["num_thresholds"]
        if n is None:   # weights: one array per batch, empty for a batch without sample_weights
            return {"scores": [], "labels": [], "weights": []}
        shape = (self.n_columns, n + 1)   # weighted counts (sample_weights), whole numbers without
        return {"positives": np.zeros(shape), "negatives": np.zeros(shape)}

    def _seed_state(self, fields: Any) -> dict[str, Any] | None:
        """A saved exact state from before ``sample_weights``: every batch unweighted."""
        if set(fields) == {"scores", "labels"}:
            return {**fields, "weights": [np.zeros(0) for _ in fields["scores"]]}
        return None

    def _weights(self, inputs: dict[str, Any]) -> np.ndarray | None:
        """One non-negative finite weight per row, after ``where`` (None when not given)."""
        given = inputs.get("sample_weights")
        if given is None:
            return None
        name = type(self).__name__
        if self.params.get("multi_class") == "ovo":
            raise MetricInputError(f"{name}.update: sample_weights are not taken with multi_class='ovo'")
        rows = np.shape(inputs["labels"])[0] if np.ndim(inputs["labels"]) else 1
        weights = np.asarray(given, dtype=np.float64).reshape(-1)
        if len(weights) != rows or not (np.isfinite(weights) & (weights >= 0)).all():
            raise MetricInputError(f"{name}.update: sample_weights must be {rows} finite, non-negative weights, one "
                                   f"per row; got shape {np.shape(given)}")
        mask = mask_of(inputs.get("where"), (rows,))
        return weights if mask is None else weights[mask]

    def _matrices(self, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """Scores and 0/1 labels as [rows, columns] (one column per class or label)."""
        name = type(self).__name__
        raw = inputs["probabilities"]
        scores = raw if raw.dtype in (np.float32, np.float64) else raw.astype(np.float64)
        labels = inputs["labels"]
        task, c = self.params["task"], self.n_columns
        if task == "binary":
            if scores.shape != labels.shape or scores.ndim > 1:
                raise MetricInputError(f"{name}.update: binary needs [N] scores and [N] labels, got {scores.shape} "
                                       f"and {labels.shape}")
            scores, labels = scores.reshape(-1, 1), labels.reshape(-1, 1)
        elif task == "multiclass":
            if scores.ndim != 2 or scores.shape[1] != c or labels.shape != scores.shape[:1]:
                raise MetricInputError(f"{name}.update: multiclass needs [N, {c}] probabilities and [N] labels, "
                                       f"got {scores.shape} and {labels.shape}")
            if len(labels) and (labels.min() < 0 or labels.max() >= c):
                raise MetricInputError(f"{name}.update: class ids must lie in 0..{c - 1}")
            labels = labels[:, None] == np.arange(c)
        elif scores.shape != labels.shape or scores.ndim != 2 or scores.shape[1] != c:
            raise MetricInputError(f"{name}.update: multilabel needs [N, {c}] probabilities and labels, got "
                                   f"{scores.shape} and {labels.shape}")
        if scores.shape[0] != labels.shape[0]:
            raise MetricInputError(f"{name}.update: {scores.shape[0]} scores for {labels.shape[0]} labels")
        mask = mask_of(inputs.get("where"), inputs["labels"].shape[:1])
        if mask is not None:
            scores, labels = scores[mask], labels[mask]
        if not np.isin(labels, (0, 1)).all():
            raise MetricInputError(f"{name}.update: labels must be 0 or 1")
        if np.isnan(scores).any():
            raise MetricInputError(f"{name}.update: NaN scores (row {int(np.flatnonzero(np.isnan(scores))[0])})")
        return scores, labels.astype(bool)

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        key = ("curve-input", self.params["task"], id(inputs["probabilities"]), id(inputs["labels"]),
               id(inputs.get("where")))
        if key not in shared:
            shared[key] = self._matrices(inputs)
        scores, labels = shared[key]
        weights = self._weights(inputs)
        n = self.params["num_thresholds"]
        if n is None:
            self.state["scores"].append(scores.copy())
            self.state["labels"].append(labels.copy())
            self.state["weights"].append(np.zeros(0) if weights is None else weights.copy())
            return
        side: Literal["left", "right"] = "right" if self.rule == "at_least" else "left"
        bucket = np.searchsorted(grid(n, self.rule), scores, side=side)  # thresholds the score passes
        for col in range(self.n_columns):
            pos, neg = labels[:, col], ~labels[:, col]
            self.state["positives"][col] += np.bincount(bucket[pos, col], None if weights is None else weights[pos],
                                                        minlength=n + 1)
            self.state["negatives"][col] += np.bincount(bucket[neg, col], None if weights is None else weights[neg],
                                                        minlength=n + 1)

    def _merge(self, other: dict[str, Any]) -> None:
        if self.params["num_thresholds"] is None:
            self.state["scores"] += other["scores"]
            self.state["labels"] += other["labels"]
            self.state["weights"] += other["weights"]
        else:
            super()._merge(other)

    def _counts(self, col: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.params["num_thresholds"] is not None:
            return grid_counts(self.state["positives"][col], self.state["negatives"][col], self.rule)
        if not self.state["scores"]:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        scores = np.concatenate([s[:, col] for s in self.state["scores"]])
        labels = np.concatenate([lab[:, col] for lab in self.state["labels"]])
        return exact_counts(scores, labels, self._row_weights())

    def _row_weights(self) -> np.ndarray | None:
        """Every stored row's weight (1 in batches without sample_weights), or None when no
        batch had weights."""
        stored = self.state.get("weights", [])
        if not any(len(w) for w in stored):
            return None
        return np.concatenate([w if len(w) else np.ones(len(s)) for w, s in zip(stored, self.state["scores"],
                                                                               strict=True)])

    def _area(self, tps: np.ndarray, fps: np.ndarray) -> float:
        raise NotImplementedError

    def _all(self) -> tuple[np.ndarray, np.ndarray]:
        """Every stored (exact) score and label, as [rows, columns]."""
        c = self.n_columns
        if not self.state["scores"]:
            return np.zeros((0, c)), np.zeros((0, c), dtype=bool)
        return np.concatenate(self.state["scores"]), np.concatenate(self.state["labels"])

    def _micro(self) -> float:
        """Every (row, class) cell as one binary problem."""
        if self.params["num_thresholds"] is not None:
            tps, fps, _ = grid_counts(self.state["positives"].sum(axis=0), self.state["negatives"].sum(axis=0),
                                      self.rule)
        else:
            scores, labels = self._all()
            weights = self._row_weights()
            cells = None if weights is None else np.repeat(weights, scores.shape[1])   # row-major cells
            tps, fps, _ = exact_counts(scores.ravel(), labels.ravel(), cells)
        return self._area(tps, fps)

    def _samples(self) -> float:
        """Each row's labels as one binary problem; rows without both outcomes left out."""
        scores, labels = self._all()
        areas = np.array([self._area(*exact_counts(s, lab)[:2]) for s, lab in zip(scores, labels, strict=True)])
        weights = self._row_weights()
        kept = ~np.isnan(areas)
        if not kept.any():
            return float("nan")
        return float(np.average(areas[kept], weights=None if weights is None else weights[kept]))

    def compute(self) -> Any:
        """Binary: the area. Multiclass / multilabel: one area per class (one-vs-rest), averaged
        ``macro`` (classes without both outcomes left out, counted as NaN per class),
        ``weighted`` by positives, ``micro`` (every cell one binary problem), ``samples``
        (multilabel: per row, averaged), or all of them (``average=None``)."""
        if self.params["task"] != "binary" and self.params["average"] == "micro":
            return self._micro()
        if self.params["average"] == "samples":
            return self._samples()
        per_class = []
        support = []
        for col in range(self.n_columns):
            tps, fps, _ = self._counts(col)
            per_class.append(self._area(tps, fps))
            support.append(tps[-1] if len(tps) else 0.0)
        areas = np.array(per_class)
        if self.params["task"] == "binary":
            return float(areas[0])
        if self.params["average"] is None:
            return areas
        ok = ~np.isnan(areas)
        if not ok.any():
            return float("nan")
        if self.params["average"] == "weighted":
            weights = np.array(support)[ok]
            return float(np.average(areas[ok], weights=weights)) if weights.sum() else float("nan")
        return float(areas[ok].mean())


class ROCAUC(_Curve):
    """Area under the ROC curve (trapezoids between the curve's points; ties are diagonal
    segments), as ``sklearn.metrics.roc_auc_score``; NaN with one class only. Exact (default):
    memory grows by 5 (float32) or 9 (float64) bytes per score. ``num_thresholds=N``: fixed memory.

    Multiclass: ``multi_class='ovr'`` (each class against the rest) or ``'ovo'`` (Hand & Till:
    every pair of classes present in the targets, each scored on the rows of the two, both
    directions averaged; pairs averaged ``macro`` or ``weighted`` by their rows; a class never
    seen in the targets has no pairs, as in scikit-learn). Binary ``max_fpr``: the partial area up to
    that false-positive rate, McClish-standardised to 0.5 (random) .. 1 (perfect).

    >>> ROCAUC().update(predictions=[0.1, 0.4, 0.35, 0.8], targets=[0, 0, 1, 1]).compute()
    0.75
    """

    def __init__(self, num_thresholds: int | None = None, task: Task = "binary", num_classes: int | None = None,
                 average: Average | None = "macro", multi_class: Literal["ovr", "ovo"] = "ovr",
                 max_fpr: float | None = None, thresholds: int | None = None) -> None:
        if multi_class not in ("ovr", "ovo"):  # one-vs-rest, one-vs-one
            raise MetricInputError(f"multi_class {multi_class!r}: expected ovr or ovo")
        if multi_class == "ovo" and (task != "multiclass" or num_thresholds is not None
                                     or average not in ("macro", "weighted")):
            raise MetricInputError("multi_class='ovo' needs task='multiclass', exact curves and average macro or "
                                   "weighted")
        if max_fpr is not None and (not 0 < max_fpr <= 1 or task != "binary" or num_thresholds is not None):
            raise MetricInputError("max_fpr must lie in (0, 1] and needs task='binary' and exact curves")
        if thresholds is not None and (multi_class == "ovo" or max_fpr is not None):
            raise MetricInputError("multi_class='ovo' and max_fpr need exact curves")
        super().__init__(num_thresholds, task, num_classes, average, thresholds, multi_class=multi_class,
                         max_fpr=max_fpr)

    def _area(self, tps: np.ndarray, fps: np.ndarray) -> float:
        max_fpr = self.params.get("max_fpr")
        if max_fpr is None or max_fpr == 1:
            return roc_auc(tps, fps)
        return partial_roc_auc(tps, fps, max_fpr)

    def compute(self) -> Any:
        if self.params.get("multi_class") == "ovo":
            return self._one_vs_one()
        return super().compute()

    def _one_vs_one(self) -> float:
        scores, labels = self._all()
        c = self.n_columns
        pairs, weights = [], []
        present = np.asarray(labels.any(axis=0))
        for a in range(c):
            for b in range(a + 1, c):
                if not (present[a] and present[b]):
                    continue   # a class absent from the targets has no pairs (as scikit-learn)
                rows = labels[:, a] | labels[:, b]
                ab = roc_auc(*exact_counts(scores[rows, a], labels[rows, a])[:2])
                ba = roc_auc(*exact_counts(scores[rows, b], labels[rows, b])[:2])
                pairs.append((ab + ba) / 2.0)
                weights.append(rows.sum())
        values, w = np.array(pairs), np.array(weights, dtype=np.float64)
        if self.params["average"] == "weighted":
            return float(np.average(values, weights=w)) if w.sum() else float("nan")
        return float(values.mean()) if len(values) else float("nan")

    def curve(self, column: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(false positive rate, true positive rate, thresholds) of a class, from (0, 0)."""
        tps, fps, thresholds = self._counts(column)
        fpr, tpr = roc_points(tps, fps)
        return fpr, tpr, np.r_[np.inf, thresholds]


class AveragePrecision(_Curve):
    """PR AUC as average precision: sum over thresholds of (R_i - R_{i-1}) P_i, as
    ``sklearn.metrics.average_precision_score`` (``interpolation="step"``, the default); or
    with Davis & Goadrich's interpolation between thresholds (``"davis_goadrich"``: metrax's
    ``AUCPR`` and Keras' on their 200-threshold grid, ``AveragePrecision.metrax()``; see
    ``interpolated_pr_auc``); NaN without positives. Exact by default (5 or 9 bytes per
    score), or on ``num_thresholds``.

    >>> round(AveragePrecision().update(predictions=[0.1, 0.4, 0.35, 0.8], targets=[0, 0, 1, 1]).compute(), 4)
    0.8333
    >>> round(AveragePrecision(interpolation="davis_goadrich").update(
    ...     predictions=[0.1, 0.4, 0.35, 0.8], targets=[0, 0, 1, 1]).compute(), 4)
    0.7973
    """

    def __init__(self, num_thresholds: int | None = None, task: Task = "binary", num_classes: int | None = None,
                 average: Average | None = "macro", thresholds: int | None = None,
                 interpolation: Literal["step", "davis_goadrich"] = "step") -> None:
        if interpolation not in ("step", "davis_goadrich"):
            raise MetricInputError(f"interpolation={interpolation!r}: expected step or davis_goadrich")
        super().__init__(num_thresholds=num_thresholds, task=task, num_classes=num_classes, average=average,
                         thresholds=thresholds, interpolation=interpolation)

    @classmethod
    def metrax(cls, num_thresholds: int = 200) -> AveragePrecision:
        """metrax's ``AUCPR``: Davis & Goadrich's interpolation on its threshold grid."""
        return cls(num_thresholds=num_thresholds, interpolation="davis_goadrich")

    def _area(self, tps: np.ndarray, fps: np.ndarray) -> float:
        if self.params.get("interpolation", "step") == "davis_goadrich":
            return interpolated_pr_auc(tps, fps)
        return average_precision(tps, fps)

    def curve(self, column: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(precision, recall, thresholds) of a class, from the highest threshold down."""
        tps, fps, thresholds = self._counts(column)
        precision, recall, keep = pr_points(tps, fps)
        return precision, recall, thresholds[keep]
