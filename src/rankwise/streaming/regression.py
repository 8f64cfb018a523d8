"""Streaming regression metrics: MAE, MSE, RMSE, MSLE, RMSLE, R², Pearson, Spearman, cosine
similarity. Inputs ``predictions`` and ``targets`` (same shape), ``where`` masks cells.

Sums merge by addition; R² and Pearson keep (count, means, sums of squared deviations,
co-moment) and merge them with Chan et al.'s formulas, which stay accurate where naive sums of
squares cancel. Spearman is exact: it keeps every pair (16 bytes per input).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, chan_merge, mask_of


def paired(metric: Metric, inputs: dict[str, Any], per_row: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``predictions`` and ``targets`` as float64 arrays of one shape, with ``where`` applied: a
    mask per cell (flattened result), or with ``per_row`` one flag per row (rows kept whole)."""
    pred = inputs["predictions"].astype(np.float64)
    target = inputs["targets"].astype(np.float64)
    if pred.shape != target.shape:
        raise MetricInputError(f"{type(metric).__name__}.update: predictions {pred.shape} and targets "
                               f"{target.shape} differ")
    mask = mask_of(inputs.get("where"), pred.shape[:1] if per_row else pred.shape)
    if mask is not None:
        return pred[mask], target[mask]
    return (pred, target) if per_row else (pred.ravel(), target.ravel())


def weighted_pairs(metric: Metric, inputs: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``paired``'s flattened predictions and targets, and the ``sample_weights`` of each cell
    (None when not given): one weight per cell, or one per row spread over the row's cells, as
    metrax's ``sample_weights``; weights must be finite and non-negative.

    >>> m = MeanSquaredError()
    >>> weighted_pairs(m, {"predictions": np.ones((2, 2)), "targets": np.zeros((2, 2)),
    ...                    "sample_weights": np.array([1.0, 3.0])})[2].tolist()
    [1.0, 1.0, 3.0, 3.0]
    """
    weights = inputs.get("sample_weights")
    pred = inputs["predictions"]
    if weights is None:
        return (*paired(metric, inputs), None)
    name = type(metric).__name__
    w = np.asarray(weights, dtype=np.float64)
    if w.shape == pred.shape[:1] and pred.ndim > 1:
        w = np.broadcast_to(w.reshape(w.shape + (1,) * (pred.ndim - 1)), pred.shape)
    if w.shape != pred.shape:
        raise MetricInputError(f"{name}.update: sample_weights {w.shape} fit neither predictions {pred.shape} nor "
                               "their rows")
    if not (np.isfinite(w) & (w >= 0)).all():
        raise MetricInputError(f"{name}.update: sample_weights must be finite and non-negative")
    mask = mask_of(inputs.get("where"), pred.shape)
    x, y = paired(metric, inputs)
    return x, y, (w[mask] if mask is not None else w.ravel())


class _Mean(Metric):
    """Mean over cells of an error term (weighted by ``sample_weights`` when given);
    subclasses give the term. ``weight`` is the cells' total weight (their count unweighted)."""

    inputs = ("predictions", "targets")
    optional_inputs = ("where", "sample_weights")
    nonnegative_state = ("total", "weight")

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64), "weight": np.zeros(())}

    def _term(self, pred: np.ndarray, target: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        pred, target, w = weighted_pairs(self, inputs)
        term = self._term(pred, target)
        self.state["total"] = self.state["total"] + (term.sum() if w is None else (w * term).sum())
        self.state["count"] += pred.size
        self.state["weight"] = self.state["weight"] + (pred.size if w is None else w.sum())

    def compute(self) -> float:
        weight = float(self.state["weight"])
        return float(self.state["total"]) / weight if weight else float("nan")

    def _seed_state(self, fields: Mapping[str, Any]) -> dict[str, Any] | None:
        """metrax's ``MSE`` / ``MAE`` / ``RMSE`` fields: ``total`` (the weighted sum of the
        terms) and ``count`` (the weights' sum)."""
        if set(fields) != {"total", "count"}:
            return None
        weight = float(np.asarray(fields["count"]))
        return {"total": np.asarray(fields["total"], dtype=np.float64), "weight": np.asarray(weight),
                "count": np.asarray(int(round(weight)), dtype=np.int64)}


class MeanAbsoluteError(_Mean):
    """MAE = mean |prediction - target|.

    >>> MeanAbsoluteError().update(predictions=[1.0, 3.0], targets=[2.0, 3.0]).compute()
    0.5
    """

    def _term(self, pred: np.ndarray, target: np.ndarray) -> np.ndarray:
        return np.abs(pred - target)


class MeanSquaredError(_Mean):
    """MSE = mean (prediction - target)^2; ``squared=False`` gives RMSE.

    >>> MeanSquaredError(squared=False).update(predictions=[1.0, 3.0], targets=[3.0, 3.0]).compute()   # sqrt(4/2)
    1.4142135623730951
    """

    def __init__(self, squared: bool = True) -> None:
        super().__init__(squared=squared)

    def _term(self, pred: np.ndarray, target: np.ndarray) -> np.ndarray:
        return (pred - target) ** 2

    def compute(self) -> float:
        mse = super().compute()
        return mse if self.params["squared"] else float(np.sqrt(mse))


class MeanSquaredLogError(_Mean):
    """MSLE = mean (ln(1 + prediction) - ln(1 + target))^2 (values must be > -1);
    ``squared=False`` gives RMSLE.

    >>> round(MeanSquaredLogError().update(predictions=[np.e - 1], targets=[0.0]).compute(), 12)
    1.0
    """

    def __init__(self, squared: bool = True) -> None:
        super().__init__(squared=squared)

    def _term(self, pred: np.ndarray, target: np.ndarray) -> np.ndarray:
        if (pred <= -1).any() or (target <= -1).any():
            raise MetricInputError("MeanSquaredLogError.update: values must be greater than -1")
        return (np.log1p(pred) - np.log1p(target)) ** 2

    def compute(self) -> float:
        msle = super().compute()
        return msle if self.params["squared"] else float(np.sqrt(msle))


def RootMeanSquaredError() -> MeanSquaredError:  # noqa: N802 (a class-like factory)
    """RMSE = sqrt(MSE).

    >>> RootMeanSquaredError().update(predictions=[0.0, 0.0], targets=[3.0, 4.0]).compute()   # sqrt(25/2)
    3.5355339059327378
    """
    return MeanSquaredError(squared=False)


def RootMeanSquaredLogError() -> MeanSquaredLogError:  # noqa: N802
    """RMSLE = sqrt(MSLE)."""
    return MeanSquaredLogError(squared=False)


class _Moments(Metric):
    """count, means, M2 of x and y, and the co-moment C = sum (x - mean_x)(y - mean_y); with
    ``sample_weights``, the total weight and the weighted means, M2 and co-moment (Chan et al.'s
    merge holds with weights as counts).

    Means are kept relative to a shift (the first pair of values seen), so data far from 0
    with a small spread (values near 1e9 with unit spread) keep their digits: every batch
    subtracts the shift exactly, and merging many small batches stays as accurate as one pass.
    """

    inputs = ("predictions", "targets")
    optional_inputs = ("where", "sample_weights")

    nonnegative_state = ("n", "m2_x", "m2_y", "sse")

    def _initial_state(self) -> dict[str, Any]:
        z = np.zeros(())
        return {"n": np.zeros(()), "mean_x": z.copy(), "mean_y": z.copy(), "m2_x": z.copy(), "m2_y": z.copy(),
                "c_xy": z.copy(), "sse": z.copy(), "shift_x": z.copy(), "shift_y": z.copy()}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        x, y, w = weighted_pairs(self, inputs)
        if w is not None:   # cells of weight 0 are left out: they change none of the sums
            x, y, w = x[w > 0], y[w > 0], w[w > 0]
        if not x.size:
            return
        empty = float(self.state["n"]) == 0
        shift_x = x[0] if empty else float(self.state["shift_x"])
        shift_y = y[0] if empty else float(self.state["shift_y"])
        xs, ys = x - shift_x, y - shift_y
        if w is None:
            batch = {"n": np.array(float(x.size)), "mean_x": np.array(xs.mean()), "mean_y": np.array(ys.mean()),
                     "shift_x": np.array(shift_x), "shift_y": np.array(shift_y)}
            dx, dy = xs - batch["mean_x"], ys - batch["mean_y"]
            batch["m2_x"] = np.array((dx * dx).sum())
            batch["m2_y"] = np.array((dy * dy).sum())
            batch["c_xy"] = np.array((dx * dy).sum())
            batch["sse"] = np.array(((x - y) ** 2).sum())
        else:   # weighted moments: n the total weight, means and squared deviations weighted
            total = float(w.sum())
            batch = {"n": np.array(total), "mean_x": np.array((w * xs).sum() / total),
                     "mean_y": np.array((w * ys).sum() / total), "shift_x": np.array(shift_x),
                     "shift_y": np.array(shift_y)}
            dx, dy = xs - batch["mean_x"], ys - batch["mean_y"]
            batch["m2_x"] = np.array((w * dx * dx).sum())
            batch["m2_y"] = np.array((w * dy * dy).sum())
            batch["c_xy"] = np.array((w * dx * dy).sum())
            batch["sse"] = np.array((w * (x - y) ** 2).sum())
        self._merge(batch)

    def _merge(self, other: dict[str, Any]) -> None:
        s = self.state
        n_a, n_b = float(s["n"]), float(other["n"])
        if n_b == 0:
            return
        if n_a == 0:
            self.state = {k: np.asarray(other.get(k, 0.0), dtype=np.float64).copy() for k in s}
            return
        n = n_a + n_b
        # the other side's means, relative to this side's shift
        mean_bx = other["mean_x"] + (other.get("shift_x", 0.0) - s["shift_x"])
        mean_by = other["mean_y"] + (other.get("shift_y", 0.0) - s["shift_y"])
        dx, dy = mean_bx - s["mean_x"], mean_by - s["mean_y"]
        c_xy = s["c_xy"] + other["c_xy"] + dx * dy * (n_a * n_b / n)
        _, mean_x, m2_x = chan_merge(n_a, s["mean_x"], s["m2_x"], n_b, mean_bx, other["m2_x"])
        _, mean_y, m2_y = chan_merge(n_a, s["mean_y"], s["m2_y"], n_b, mean_by, other["m2_y"])
        self.state = {"n": np.array(n), "mean_x": np.asarray(mean_x), "mean_y": np.asarray(mean_y),
                      "m2_x": np.asarray(m2_x), "m2_y": np.asarray(m2_y), "c_xy": np.asarray(c_xy),
                      "sse": s["sse"] + other["sse"], "shift_x": s["shift_x"], "shift_y": s["shift_y"]}


class R2Score(_Moments):
    """R² = 1 - SSE / SST, SST = sum (target - mean target)^2, as ``sklearn.metrics.r2_score``
    (NaN for a constant target with errors, 1 when also error-free).

    >>> R2Score().update(predictions=[2.5, 0.0, 2.0, 8.0], targets=[3.0, -0.5, 2.0, 7.0]).compute()
    0.9486081370449679
    """

    def compute(self) -> float:
        sst, sse = float(self.state["m2_y"]), float(self.state["sse"])
        if float(self.state["n"]) == 0:
            return float("nan")  # nothing seen
        if sst == 0:
            return 1.0 if sse == 0 else float("nan")
        return 1.0 - sse / sst


class PearsonCorrCoef(_Moments):
    """Pearson's r = C_xy / sqrt(M2_x M2_y) (NaN when either side is constant).

    >>> round(PearsonCorrCoef().update(predictions=[1.0, 2.0, 3.0], targets=[2.0, 4.0, 7.0]).compute(), 12)
    0.993399267799
    """

    def compute(self) -> float:
        den = float(np.sqrt(self.state["m2_x"] * self.state["m2_y"]))
        return float(self.state["c_xy"]) / den if den > 0 else float("nan")


class SpearmanCorrCoef(Metric):
    """Spearman's rho: Pearson's r of the ranks (ties get average ranks), as
    ``scipy.stats.spearmanr``. Exact: keeps every pair, 16 bytes per input.

    >>> SpearmanCorrCoef().update(predictions=[1.0, 2.0, 3.0, 4.0], targets=[1.0, 3.0, 2.0, 4.0]).compute()
    0.8
    """

    inputs = ("predictions", "targets")

    def _initial_state(self) -> dict[str, Any]:
        return {"x": [], "y": []}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        x, y = paired(self, inputs)
        self.state["x"].append(x.copy())
        self.state["y"].append(y.copy())

    def _merge(self, other: dict[str, Any]) -> None:
        self.state["x"] += other["x"]
        self.state["y"] += other["y"]

    def compute(self) -> float:
        from scipy.stats import rankdata

        if not self.state["x"]:
            return float("nan")
        rx = rankdata(np.concatenate(self.state["x"]))
        ry = rankdata(np.concatenate(self.state["y"]))
        rx, ry = rx - rx.mean(), ry - ry.mean()
        den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
        return float((rx * ry).sum() / den) if den > 0 else float("nan")


class CosineSimilarity(Metric):
    """Mean of the cosine similarity between predictions and targets along ``axis`` (metrax's
    ``CosineSimilarity(axis=...)``; default the last axis: one similarity per row of [N, D]
    inputs), averaged over every other position; a zero vector has similarity 0. ``where``
    masks rows when ``axis`` is the last axis.

    >>> CosineSimilarity().update(predictions=[[1.0, 0.0], [1.0, 1.0]], targets=[[1.0, 0.0], [1.0, 0.0]]).compute()
    0.8535533905932737
    >>> m = CosineSimilarity(axis=0).update(predictions=[[1.0, 0.0], [1.0, 1.0]], targets=[[1.0, 0.0], [1.0, 0.0]])
    >>> round(m.compute(), 12)   # columns: (1, 1) vs (1, 1) gives 1; (0, 1) vs the zero vector gives 0
    0.5
    """

    inputs = ("predictions", "targets")

    def __init__(self, axis: int = -1) -> None:
        super().__init__(axis=int(axis))

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        pred = np.atleast_2d(inputs["predictions"].astype(np.float64))
        target = np.atleast_2d(inputs["targets"].astype(np.float64))
        if pred.shape != target.shape:
            raise MetricInputError(f"CosineSimilarity.update: predictions {pred.shape} and targets {target.shape} "
                                   "differ")
        axis = self.params["axis"]
        if not -pred.ndim <= axis < pred.ndim:
            raise MetricInputError(f"CosineSimilarity.update: axis={axis} for {pred.ndim}-dimensional inputs")
        if axis % pred.ndim != pred.ndim - 1:
            if inputs.get("where") is not None:
                raise MetricInputError("CosineSimilarity.update: where masks rows of the last axis only")
            pred, target = np.moveaxis(pred, axis, -1), np.moveaxis(target, axis, -1)
        pred, target = pred.reshape(-1, pred.shape[-1]), target.reshape(-1, target.shape[-1])
        mask = mask_of(inputs.get("where"), pred.shape[:1])
        if mask is not None:
            pred, target = pred[mask], target[mask]
        norms = np.linalg.norm(pred, axis=1) * np.linalg.norm(target, axis=1)
        cos = np.divide((pred * target).sum(axis=1), norms, out=np.zeros(len(pred)), where=norms > 0)
        self.state["total"] = self.state["total"] + cos.sum()
        self.state["count"] += len(cos)

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")
