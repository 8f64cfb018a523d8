"""Streaming classification metrics: accuracy, confusion-matrix measures, log loss, Brier score,
calibration error, and ROC / PR AUC (exact, or on a fixed threshold grid).

Inputs: ``labels`` (class ids; 0/1 for binary; a 0/1 matrix for multilabel) and either
``probabilities`` (binary: P(positive) per row; multiclass: [N, C]; multilabel: [N, L]) or
``predictions`` (hard class ids / 0-1 matrix). ``where`` masks rows (or cells, multilabel).
Definitions follow scikit-learn; the tests check each against it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of

Task = Literal["binary", "multiclass", "multilabel"]
"""The shape of a classification problem."""
TASKS: tuple[Task, ...] = get_args(Task)
Average = Literal["micro", "macro", "weighted"]
"""How per-class values are combined (None: one value per class)."""
AVERAGES: tuple[Average | None, ...] = (*get_args(Average), None)
MultilabelAccuracy = Literal["subset", "hamming"]
"""Multilabel accuracy: every label of a row right, or the share of (row, label) cells right."""
CalibrationNorm = Literal["l1", "l2", "max"]
"""The norm of the calibration error over bins: expected (l1), root mean square (l2) or maximum."""


def _labels_and_predictions(metric: Metric, inputs: dict[str, Any], need_scores: bool = False
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(labels, hard predictions, scores or None) of the rows kept by ``where``."""
    task = metric.params.get("task", "binary")
    name = type(metric).__name__
    labels = inputs["labels"]
    probs = inputs.get("probabilities")
    preds = inputs.get("predictions")
    if (probs is None) == (preds is None):
        raise MetricInputError(f"{name}.update: give exactly one of probabilities and predictions")
    for what, values in (("probabilities", probs), ("predictions", preds), ("labels", labels)):
        if values is not None and values.dtype.kind in "fc" and not np.isfinite(values).all():
            bad = np.flatnonzero(~np.isfinite(values.ravel()))[0]
            raise MetricInputError(f"{name}.update: {what} must be finite numbers; element {int(bad)} is "
                                   f"{values.ravel()[bad]}")
    if need_scores and probs is None:
        raise MetricInputError(f"{name}.update: needs probabilities")
    if task == "multiclass" and probs is not None:
        if probs.ndim != 2:
            raise MetricInputError(f"{name}.update: multiclass probabilities must be [N, C], got shape {probs.shape}")
        hard = probs.argmax(axis=1)
    elif probs is not None:
        hard = (probs >= metric.params.get("threshold", 0.5)).astype(np.int64)
    else:
        assert preds is not None  # exactly one of the two was given
        hard = preds.astype(np.int64)
    if task != "multilabel" and labels.shape != hard.shape:
        raise MetricInputError(f"{name}.update: labels have shape {labels.shape}, predictions {hard.shape}")
    if task == "multilabel" and labels.shape != hard.shape:
        raise MetricInputError(f"{name}.update: multilabel labels {labels.shape} and predictions {hard.shape} differ")
    if task == "binary" and labels.ndim > 1:   # [batch, list] of binary cells (clicks): every cell one row
        mask = mask_of(inputs.get("where"), labels.shape)
        keep = np.ones(labels.size, dtype=bool) if mask is None else np.asarray(mask).ravel()
        labels, hard = labels.ravel()[keep], hard.ravel()[keep]
        scores_flat = None if probs is None else probs.ravel()[keep]
        if not np.isin(labels, (0, 1)).all():
            raise MetricInputError(f"{name}.update: binary labels must be 0 or 1")
        return labels.astype(np.int64), hard, scores_flat
    mask = mask_of(inputs.get("where"), labels.shape if task == "multilabel" else labels.shape[:1])
    scores = probs
    if mask is not None and task != "multilabel":
        labels, hard = labels[mask], hard[mask]
        scores = None if probs is None else probs[mask]
    if task == "binary" and not np.isin(labels, (0, 1)).all():
        raise MetricInputError(f"{name}.update: binary labels must be 0 or 1")
    return labels.astype(np.int64), hard, scores


def _labels_and_scores(metric: Metric, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, hard predictions, probabilities) of the rows kept by ``where``; probabilities required."""
    labels, hard, probs = _labels_and_predictions(metric, {**inputs, "predictions": None}, need_scores=True)
    assert probs is not None  # need_scores refuses their absence
    return labels, hard, probs


class ConfusionMatrix(Metric):
    """Counts of (true class, predicted class): ``[C, C]`` (binary: C = 2, rows = true), or
    ``[L, 2, 2]`` per label for multilabel. Equal to ``sklearn.metrics.confusion_matrix`` /
    ``multilabel_confusion_matrix``.

    >>> ConfusionMatrix().update(predictions=[0.9, 0.2, 0.7], targets=[1, 0, 0]).compute().tolist()
    [[1, 1], [0, 1]]
    """

    inputs = ("labels",)
    optional_inputs = ("probabilities", "predictions", "where")

    def __init__(self, task: Task = "binary", num_classes: int | None = None, threshold: float = 0.5,
                 **params: Any) -> None:
        if task not in TASKS:
            raise MetricInputError(f"task {task!r}: expected one of {', '.join(TASKS)}")
        if task != "binary" and not num_classes:
            raise MetricInputError(f"task {task!r} needs num_classes (labels for multilabel)")
        super().__init__(task=task, num_classes=num_classes, threshold=threshold, **params)

    @property
    def n_classes(self) -> int:
        return 2 if self.params["task"] == "binary" else int(self.params["num_classes"])

    def _initial_state(self) -> dict[str, Any]:
        if self.params["task"] == "multilabel":
            return {"matrix": np.zeros((self.n_classes, 2, 2), dtype=np.int64)}
        return {"matrix": np.zeros((self.n_classes, self.n_classes), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        labels, hard, _ = _labels_and_predictions(self, inputs)
        c = self.n_classes
        if self.params["task"] == "multilabel":
            mask = mask_of(inputs.get("where"), labels.shape)
            keep = np.ones(labels.shape, dtype=bool) if mask is None else mask
            for cell_true in (0, 1):
                for cell_pred in (0, 1):
                    hit = (labels == cell_true) & (hard == cell_pred) & keep
                    self.state["matrix"][:, cell_true, cell_pred] += hit.sum(axis=0)
            return
        if len(labels) and (labels.min() < 0 or labels.max() >= c or hard.min() < 0 or hard.max() >= c):
            raise MetricInputError(f"{type(self).__name__}.update: class ids must lie in 0..{c - 1}")
        self.state["matrix"] += np.bincount(labels * c + hard, minlength=c * c).reshape(c, c)

    def compute(self) -> np.ndarray:
        return self.state["matrix"].copy()

    def _per_class(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(tp, fp, fn, support) per class (binary: the positive class only)."""
        m = self.state["matrix"]
        if self.params["task"] == "multilabel":
            tp, fp, fn = m[:, 1, 1], m[:, 0, 1], m[:, 1, 0]
            return tp, fp, fn, tp + fn
        tp = np.diag(m)
        fp = m.sum(axis=0) - tp
        fn = m.sum(axis=1) - tp
        if self.params["task"] == "binary":
            return tp[1:], fp[1:], fn[1:], (tp + fn)[1:]
        return tp, fp, fn, tp + fn


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float = 0.0) -> np.ndarray:
    """num / den, ``zero_division`` where den is 0 (scikit-learn's name and meaning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.full_like(num, zero_division), where=den > 0)


def zero_division_value(value: Any) -> float:
    """``zero_division`` as a number: ``"nan"`` (rankwise's default: undefined stays undefined and
    is left out of averages), 0 (scikit-learn's default) or 1; ``"torchmetrics"`` is 0 for a
    class seen somewhere (in the targets or the predictions) and leaves a class never seen out of
    macro and weighted averages, as torchmetrics does.

    >>> [zero_division_value(v) for v in ("nan", 0, 1.0, "torchmetrics")]
    [nan, 0.0, 1.0, 0.0]
    """
    if isinstance(value, str) and value.lower() == "nan":
        return float("nan")
    if isinstance(value, str) and value.lower() == "torchmetrics":
        return 0.0
    if isinstance(value, (int, float)) and (value in (0, 1) or value != value):
        return float(value)
    raise MetricInputError(f"zero_division={value!r}: expected 'nan', 0, 1 or 'torchmetrics'")


class _Averaged(ConfusionMatrix):
    """A per-class ratio averaged ``micro``, ``macro``, ``weighted`` or not at all (None)."""

    def __init__(self, task: Task = "binary", num_classes: int | None = None, threshold: float = 0.5,
                 average: Average | None = "macro", zero_division: Any = "nan", **params: Any) -> None:
        if average not in AVERAGES:
            raise MetricInputError(f"average {average!r}: expected one of micro, macro, weighted, None")
        zero_division_value(zero_division)
        super().__init__(task, num_classes, threshold, average=average, zero_division=zero_division, **params)

    @property
    def _undefined(self) -> float:
        return zero_division_value(self.params["zero_division"])

    def _score(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def compute(self) -> Any:
        tp, fp, fn, support = self._per_class()
        if self.params["task"] == "binary":
            return float(self._score(tp, fp, fn)[0])
        average = self.params["average"]
        if average == "micro":
            return float(self._score(tp.sum(keepdims=True), fp.sum(keepdims=True), fn.sum(keepdims=True))[0])
        scores = self._score(tp, fp, fn)
        if average is None:
            return scores
        defined = ~np.isnan(scores)  # zero_division="nan": undefined classes are left out
        if str(self.params["zero_division"]).lower() == "torchmetrics":
            defined = (tp + fp + fn) > 0   # a class never seen is left out; other 0/0 count 0
        if not defined.any():
            return float("nan")
        if average == "weighted":
            w = support[defined]
            return float(np.average(scores[defined], weights=w)) if w.sum() else self._undefined
        return float(scores[defined].mean())


class Precision(_Averaged):
    """Precision = TP / (TP + FP), per class and averaged; where nothing is predicted positive,
    ``zero_division`` (``"nan"``: undefined, left out of the average; scikit-learn and
    torchmetrics use 0).

    >>> Precision().update(predictions=[0.9, 0.2, 0.7], targets=[1, 0, 0]).compute()   # 1 / 2
    0.5
    """

    def _score(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        return _ratio(tp, tp + fp, self._undefined)


class Recall(_Averaged):
    """Recall = TP / (TP + FN), per class and averaged (``zero_division`` without positives).

    >>> Recall().update(predictions=[1, 0, 1, 0], targets=[1, 1, 1, 0]).compute()   # 2 / 3
    0.6666666666666666
    """

    def _score(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        return _ratio(tp, tp + fn, self._undefined)


class FBeta(_Averaged):
    """F-beta = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP); ``beta=1`` is F1.

    >>> FBeta(beta=1.0).update(predictions=[1, 0, 1, 0], targets=[1, 1, 1, 0]).compute()   # 2*2 / (2*2 + 1)
    0.8
    """

    def __init__(self, task: Task = "binary", num_classes: int | None = None, threshold: float = 0.5,
                 average: Average | None = "macro", beta: float = 1.0, zero_division: Any = "nan") -> None:
        if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)) or \
                not np.isfinite(beta) or beta <= 0:
            raise MetricInputError(f"FBeta: beta must be a positive finite number (recall weighs beta times "
                                   f"precision), got {beta!r}")
        super().__init__(task, num_classes, threshold, average, zero_division, beta=float(beta))

    def _score(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        b2 = self.params["beta"] ** 2
        return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, self._undefined)


class MatthewsCorrCoef(ConfusionMatrix):
    """Matthews correlation from the confusion matrix (multiclass: Gorodkin's R_K), as
    ``sklearn.metrics.matthews_corrcoef``; 0 when undefined. Multilabel: one coefficient over
    every (row, label) cell taken as one binary problem (the cells' 2 x 2 matrices summed), as
    torchmetrics' ``multilabel_matthews_corrcoef`` and as ``matthews_corrcoef`` of the flattened
    cells; not a mean of per-label coefficients.

    >>> round(MatthewsCorrCoef().update(predictions=[1, 0, 1, 0], targets=[1, 1, 1, 0]).compute(), 4)
    0.5774
    """

    def compute(self) -> float:  # type: ignore[override]  # one number summarising the matrix
        """Multilabel: every (row, label) cell as one binary problem, as torchmetrics'
        ``multilabel_matthews_corrcoef``."""
        m = self.state["matrix"].astype(np.float64)
        if self.params["task"] == "multilabel":
            m = m.sum(axis=0)
        t, p = m.sum(axis=1), m.sum(axis=0)
        c, s = np.trace(m), m.sum()
        cov_ytyp = c * s - t @ p
        cov_ypyp = s * s - p @ p
        cov_ytyt = s * s - t @ t
        den = cov_ytyt * cov_ypyp
        return 0.0 if den == 0 else float(cov_ytyp / np.sqrt(den))


class Accuracy(Metric):
    """Fraction of correct predictions: binary (threshold), multiclass (argmax, or the label in
    the ``top_k`` highest probabilities; for ``top_k`` >= 2 tied probabilities rank the higher
    class index first, as scikit-learn's ``top_k_accuracy_score`` does; binary: ``top_k`` >= 2
    is always right, as there. At ``top_k=1`` ties go to the lowest index, as ``argmax`` (and
    scikit-learn's ``accuracy_score`` of it, and torchmetrics) does; ``ties="sklearn"`` gives
    the higher index there too, as ``top_k_accuracy_score(k=1)``), multilabel
    (``multilabel='subset'``: every label of the
    row right, scikit-learn's ``accuracy_score``; ``'hamming'``: the fraction of right cells).

    >>> Accuracy().update(predictions=[0.9, 0.2, 0.7], targets=[1, 0, 0]).compute()   # 2 of 3
    0.6666666666666666
    >>> Accuracy(task="multiclass", num_classes=3, top_k=2).update(
    ...     predictions=[[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]], targets=[1, 0]).compute()
    0.5
    >>> tied = [[0.5, 0.5, 0.0]]      # class 0 and 1 tied: argmax says 0, top_k_accuracy_score 1
    >>> Accuracy(task="multiclass", num_classes=3).update(predictions=tied, targets=[0]).compute()
    1.0
    >>> Accuracy(task="multiclass", num_classes=3, ties="sklearn").update(predictions=tied, targets=[0]).compute()
    0.0

    ``sample_weights`` (one per row, binary or multiclass, micro average) weigh each row, as
    metrax's and scikit-learn's: sum(weight x right) / sum(weight). Any shape that broadcasts
    to the labels' is taken, as metrax takes it: ``[N, 1]`` for ``[N]`` labels, ``[N, 1]`` or
    ``[N, T]`` for a sequence of class ids per row (multiclass ``[N, T]`` labels, each cell a
    prediction).

    >>> Accuracy().update(predictions=[0.9, 0.2, 0.7], targets=[1, 0, 0], sample_weights=[1, 1, 2]).compute()
    0.5
    >>> Accuracy(task="multiclass", num_classes=4).update(predictions=[[1, 2], [3, 3]], targets=[[1, 0], [3, 3]],
    ...                                                    sample_weights=[[1.0], [3.0]]).compute()   # (1 + 6) / 8
    0.875
    """

    inputs = ("labels",)
    optional_inputs = ("probabilities", "predictions", "where", "sample_weights")

    def __init__(self, task: Task = "binary", num_classes: int | None = None, threshold: float = 0.5,
                 top_k: int = 1, multilabel: MultilabelAccuracy = "subset", average: Average | None = "micro",
                 ties: str = "argmax") -> None:
        if task not in TASKS:
            raise MetricInputError(f"task {task!r}: expected one of {', '.join(TASKS)}")
        if ties not in ("argmax", "sklearn"):
            raise MetricInputError(f"ties {ties!r}: expected argmax or sklearn")
        if multilabel not in get_args(MultilabelAccuracy):
            raise MetricInputError(f"multilabel {multilabel!r}: expected subset or hamming")
        per_class = average != "micro"
        if average not in ("micro", "macro", None) or (per_class and (task != "multiclass" or not num_classes)):
            raise MetricInputError(f"average {average!r}: expected micro, or macro / None (per class) with "
                                   "task='multiclass' and num_classes")
        super().__init__(task=task, num_classes=num_classes, threshold=threshold, top_k=top_k,
                         multilabel=multilabel, average=average, ties=ties)

    def _initial_state(self) -> dict[str, Any]:
        state: dict[str, np.ndarray] = {"correct": np.zeros((), dtype=np.int64),
                                        "total": np.zeros((), dtype=np.int64),
                                        "weighted_correct": np.zeros(()), "weight": np.zeros(())}
        if self.params.get("average", "micro") != "micro":
            c = int(self.params["num_classes"])
            state["class_correct"] = np.zeros(c, dtype=np.int64)
            state["class_total"] = np.zeros(c, dtype=np.int64)
        return state

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        labels, hard, scores = _labels_and_predictions(self, inputs)
        task, k = self.params["task"], self.params["top_k"]
        if task == "multiclass" and (k > 1 or self.params.get("ties") == "sklearn"):
            if scores is None:
                raise MetricInputError("Accuracy.update: top_k needs probabilities")
            # scikit-learn's top_k_accuracy_score: classes sorted by score descending, tied scores
            # by class index descending; the true class is right if fewer than k come before it
            own = scores[np.arange(len(labels)), labels][:, None]
            later = np.arange(scores.shape[1])[None, :] > labels[:, None]
            before = (scores > own).sum(axis=1) + ((scores == own) & later).sum(axis=1)
            right = before < k
        elif task == "binary" and k > 1:
            right = np.ones(len(labels), dtype=bool)  # two classes: the truth is always in the top 2
        elif task == "multilabel":
            mask = mask_of(inputs.get("where"), labels.shape)
            cells = labels == hard
            if self.params["multilabel"] == "hamming":   # right cells / cells
                self._row_weights(inputs, len(labels))   # refused here: weights are per row
                keep = np.ones(labels.shape, dtype=bool) if mask is None else mask
                right_cells, all_cells = int((cells & keep).sum()), int(keep.sum())
                self.state["correct"] += right_cells
                self.state["total"] += all_cells
                self.state["weighted_correct"] = self.state["weighted_correct"] + right_cells
                self.state["weight"] = self.state["weight"] + all_cells
                return
            rows = np.ones(len(labels), dtype=bool) if mask is None else mask.any(axis=1)
            right = (cells | (~mask if mask is not None else False)).all(axis=1)[rows]
        else:
            right = labels == hard
        right = right.reshape(-1)   # a sequence of class ids per row: every cell one prediction
        weights = self._row_weights(inputs, len(right))
        self.state["correct"] += int(right.sum())
        self.state["total"] += int(right.size)
        self.state["weighted_correct"] = self.state["weighted_correct"] + (
            int(right.sum()) if weights is None else float((weights * right).sum()))
        self.state["weight"] = self.state["weight"] + (right.size if weights is None else float(weights.sum()))
        if "class_total" in self.state:  # per true class: the share of its rows that are right
            c = int(self.params["num_classes"])
            self.state["class_correct"] += np.bincount(labels.reshape(-1)[right], minlength=c)
            self.state["class_total"] += np.bincount(labels.reshape(-1), minlength=c)

    def compute(self) -> Any:
        """micro: right rows / rows; per class (``average=None``): right rows of the class / its
        rows (NaN for a class without rows); ``macro``: their mean over classes with rows."""
        if "class_total" in self.state:
            per_class = _ratio(self.state["class_correct"], self.state["class_total"], float("nan"))
            if self.params["average"] is None:
                return per_class
            seen = ~np.isnan(per_class)
            return float(per_class[seen].mean()) if seen.any() else float("nan")
        weight = float(self.state["weight"])
        return float(self.state["weighted_correct"]) / weight if weight else float("nan")

    def _seed_state(self, fields: Any) -> dict[str, Any] | None:
        """metrax's ``Accuracy`` fields: ``total`` (the weighted right predictions) and ``count``
        (the weights' sum)."""
        if set(fields) != {"total", "count"} or "class_total" in self._initial_state():
            return None
        right, weight = float(np.asarray(fields["total"])), float(np.asarray(fields["count"]))
        return {"weighted_correct": np.asarray(right), "weight": np.asarray(weight),
                "correct": np.asarray(int(round(right)), dtype=np.int64),
                "total": np.asarray(int(round(weight)), dtype=np.int64)}

    def _row_weights(self, inputs: dict[str, Any], rows: int) -> np.ndarray | None:
        """The rows' ``sample_weights`` after ``where`` (None when not given)."""
        given = inputs.get("sample_weights")
        if given is None:
            return None
        weights = np.asarray(given, dtype=np.float64)
        labels = np.asarray(inputs["labels"])
        if self.params["task"] == "multilabel" or self.params.get("average", "micro") != "micro":
            raise MetricInputError("Accuracy.update: sample_weights weigh rows of binary or multiclass labels "
                                   "(average='micro')")
        try:
            weights = np.broadcast_to(weights, labels.shape)
        except ValueError:
            raise MetricInputError(f"Accuracy.update: sample_weights of shape {weights.shape} do not broadcast to "
                                   f"the labels' shape {labels.shape}") from None
        if not (np.isfinite(weights) & (weights >= 0)).all():
            raise MetricInputError("Accuracy.update: sample_weights must be finite, non-negative weights")
        mask = mask_of(inputs.get("where"), labels.shape)
        weights = weights.reshape(-1) if mask is None else weights[mask]
        assert len(weights) == rows
        return weights


def _unit_interval(metric: Metric, probs: np.ndarray) -> np.ndarray:
    """``probs`` as float64, refused unless every value lies in [0, 1] (a probability of 1.5 or
    a logit is not clipped into a number).

    >>> _unit_interval(LogLoss(), np.array([1.5]))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.MetricInputError: LogLoss.update: probabilities must lie in [0, 1]; got 1.5 (pass logits ...
    """
    probs = probs.astype(np.float64)
    bad = (probs < 0) | (probs > 1)
    if bad.any():
        raise MetricInputError(f"{type(metric).__name__}.update: probabilities must lie in [0, 1]; got "
                               f"{probs[bad].ravel()[0]} (pass logits through a sigmoid or softmax first)")
    return probs


def _probability_of_truth(metric: Metric, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, P(true class), full probability matrix) with rows masked; probabilities are
    clipped to [eps, 1 - eps] and multiclass rows renormalised, as scikit-learn's log_loss."""
    labels, _, probs = _labels_and_scores(metric, inputs)
    eps = np.finfo(np.float64).eps
    probs = _unit_interval(metric, probs)
    if metric.params["task"] == "multiclass":
        full = np.clip(probs, eps, 1 - eps)
        full = full / full.sum(axis=1, keepdims=True)
    else:
        p = np.clip(probs, eps, 1 - eps)
        full = np.column_stack([1 - p, p])
    if len(labels) and (labels.min() < 0 or labels.max() >= full.shape[1]):
        raise MetricInputError(f"{type(metric).__name__}.update: class ids must lie in 0..{full.shape[1] - 1}")
    return labels, full[np.arange(len(labels)), labels], full


class LogLoss(Metric):
    """Mean negative log-likelihood of the true class (cross-entropy), probabilities clipped to
    [eps, 1 - eps], as ``sklearn.metrics.log_loss``.

    >>> round(LogLoss().update(predictions=[0.9, 0.2], targets=[1, 0]).compute(), 6)   # -(ln .9 + ln .8) / 2
    0.164252
    """

    inputs = ("probabilities", "labels")

    def __init__(self, task: Task = "binary") -> None:
        if task not in ("binary", "multiclass"):
            raise MetricInputError(f"task {task!r}: expected binary or multiclass")
        super().__init__(task=task)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        _, p_true, _ = _probability_of_truth(self, inputs)
        self.state["total"] = self.state["total"] - np.log(p_true).sum()
        self.state["count"] += len(p_true)

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")


class BrierScore(Metric):
    """Mean squared error of the probabilities: binary mean (p - y)^2; multiclass mean over rows
    of sum_c (p_c - [y = c])^2 (scikit-learn's ``brier_score_loss``).

    >>> round(BrierScore().update(predictions=[0.9, 0.2], targets=[1, 0]).compute(), 6)   # (0.01 + 0.04) / 2
    0.025
    """

    inputs = ("probabilities", "labels")

    def __init__(self, task: Task = "binary") -> None:
        super().__init__(task=task)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        labels, _, probs = _labels_and_scores(self, inputs)
        probs = _unit_interval(self, probs)
        if self.params["task"] == "multiclass":
            onehot = np.zeros_like(probs)
            onehot[np.arange(len(labels)), labels] = 1.0
            self.state["total"] = self.state["total"] + ((probs - onehot) ** 2).sum()
        else:
            self.state["total"] = self.state["total"] + ((probs - labels) ** 2).sum()
        self.state["count"] += len(labels)

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")


class CalibrationError(Metric):
    """Expected calibration error: rows binned by confidence into ``n_bins`` equal-width bins;
    ECE = sum_b (n_b / n) |accuracy_b - confidence_b| (``norm='l1'``), the root of
    sum_b (n_b / n) gap_b^2 (``'l2'``), or the largest gap (``'max'``). Binary: confidence =
    P(positive), accuracy = the label (torchmetrics' binary_calibration_error); multiclass: the
    top probability and whether it was right.
    Example: bins [0, .5) and [.5, 1]: |0 - .2| x 1 row + |.5 - .85| x 2 rows, / 3 rows = 0.3.

    >>> round(CalibrationError(n_bins=2).update(predictions=[0.9, 0.8, 0.2], targets=[1, 0, 0]).compute(), 6)
    0.3
    """

    inputs = ("probabilities", "labels")

    def __init__(self, task: Task = "binary", n_bins: int = 15, norm: CalibrationNorm = "l1") -> None:
        if norm not in get_args(CalibrationNorm):
            raise MetricInputError(f"norm {norm!r}: expected l1, l2 or max")
        super().__init__(task=task, n_bins=n_bins, norm=norm)

    def _initial_state(self) -> dict[str, Any]:
        n = self.params["n_bins"]
        return {"count": np.zeros(n, dtype=np.int64), "confidence": np.zeros(n), "accuracy": np.zeros(n)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        labels, hard, probs = _labels_and_scores(self, inputs)
        if self.params["task"] == "multiclass":
            confidence = probs.max(axis=1).astype(np.float64)
            accuracy = (hard == labels).astype(np.float64)
        else:
            confidence = probs.astype(np.float64)
            accuracy = labels.astype(np.float64)
        n = self.params["n_bins"]
        edges = np.linspace(0, 1, n + 1)
        bins = np.clip(np.searchsorted(edges[1:-1], confidence, side="right"), 0, n - 1)  # bins [a, b)
        self.state["count"] += np.bincount(bins, minlength=n)
        self.state["confidence"] += np.bincount(bins, weights=confidence, minlength=n)
        self.state["accuracy"] += np.bincount(bins, weights=accuracy, minlength=n)

    def compute(self) -> float:
        count = self.state["count"]
        total = count.sum()
        if total == 0:
            return float("nan")
        gap = np.abs(_ratio(self.state["accuracy"], count) - _ratio(self.state["confidence"], count))
        if self.params["norm"] == "max":
            return float(gap[count > 0].max())
        if self.params["norm"] == "l2":  # torchmetrics: the root of the bin-weighted squared gaps
            return float(np.sqrt((gap**2 * count).sum() / total))
        return float((gap * count).sum() / total)
