"""Binary classification states for JAX: confusion counts at a threshold (accuracy, precision,
recall, F-beta), log-loss, and ROC / PR AUC on a fixed threshold grid. Each is a sum of
arrays, so it merges by addition and reduces across devices with one ``psum``; values equal
the NumPy streaming metrics of the same names (``rankwise.streaming``).

``probabilities`` are in [0, 1]; ``labels`` are 0 or 1; ``where`` marks the rows to count.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rankwise.jax.state import SumState, float_dtype, pytree_state, static
from rankwise.streaming.curves import grid


def _mask(where: Any, shape: tuple[int, ...]) -> jax.Array:
    return jnp.ones(shape, dtype=bool) if where is None else jnp.broadcast_to(jnp.asarray(where, dtype=bool), shape)


def _ratio(num: jax.Array, den: jax.Array, zero_division: float) -> jax.Array:
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1.0), zero_division)


@pytree_state
class BinaryCounts(SumState):
    """True/false positives and negatives at ``threshold`` (predicted positive when the
    probability >= threshold). ``compute()`` gives accuracy, precision, recall and F-beta
    (``zero_division``: the value of an undefined ratio, NaN by default as in the streaming
    metrics).

    >>> import jax.numpy as jnp
    >>> s = BinaryCounts.from_model_output(jnp.array([0.9, 0.2, 0.7, 0.4]), jnp.array([1, 1, 0, 0]))
    >>> {k: round(float(v), 4) for k, v in s.compute().items()}   # tp 1, fn 1, fp 1, tn 1
    {'accuracy': 0.5, 'precision': 0.5, 'recall': 0.5, 'fbeta': 0.5}
    """

    tp: jax.Array
    fp: jax.Array
    tn: jax.Array
    fn: jax.Array
    threshold: float = static(0.5)
    beta: float = static(1.0)
    zero_division: float = static(float("nan"))

    @classmethod
    def empty(cls, threshold: float = 0.5, beta: float = 1.0, zero_division: float = float("nan")) -> BinaryCounts:
        z = jnp.zeros((), float_dtype())
        return cls(z, z, z, z, float(threshold), float(beta), float(zero_division))

    @classmethod
    def from_model_output(cls, probabilities: Any, labels: Any, where: Any = None, **config: Any) -> BinaryCounts:
        return cls.empty(**config).update(probabilities, labels, where)

    def update(self, probabilities: Any, labels: Any, where: Any = None) -> BinaryCounts:
        p = jnp.asarray(probabilities)
        w = _mask(where, p.shape).astype(float_dtype())
        pred = p >= self.threshold
        truth = jnp.asarray(labels) > 0
        return BinaryCounts(self.tp + (w * (pred & truth)).sum(), self.fp + (w * (pred & ~truth)).sum(),
                            self.tn + (w * (~pred & ~truth)).sum(), self.fn + (w * (~pred & truth)).sum(),
                            self.threshold, self.beta, self.zero_division)

    def compute(self) -> dict[str, jax.Array]:
        b2 = self.beta**2
        total = self.tp + self.fp + self.tn + self.fn
        return {"accuracy": _ratio(self.tp + self.tn, total, jnp.nan),
                "precision": _ratio(self.tp, self.tp + self.fp, self.zero_division),
                "recall": _ratio(self.tp, self.tp + self.fn, self.zero_division),
                "fbeta": _ratio((1 + b2) * self.tp, (1 + b2) * self.tp + b2 * self.fn + self.fp, self.zero_division)}


@pytree_state
class LogLoss(SumState):
    """Mean negative log-likelihood of the true class, probabilities clipped to [eps, 1 - eps]
    (eps of float64, as scikit-learn; in float32 the clip is float32's eps).

    >>> import jax.numpy as jnp
    >>> round(float(LogLoss.from_model_output(jnp.array([0.9, 0.2]), jnp.array([1, 0])).compute()), 5)
    0.16425
    """

    total: jax.Array
    count: jax.Array

    @classmethod
    def empty(cls) -> LogLoss:
        z = jnp.zeros((), float_dtype())
        return cls(z, z)

    @classmethod
    def from_model_output(cls, probabilities: Any, labels: Any, where: Any = None) -> LogLoss:
        return cls.empty().update(probabilities, labels, where)

    def update(self, probabilities: Any, labels: Any, where: Any = None) -> LogLoss:
        dtype = float_dtype()
        eps = jnp.finfo(dtype).eps
        p = jnp.clip(jnp.asarray(probabilities, dtype=dtype), eps, 1 - eps)
        w = _mask(where, p.shape).astype(dtype)
        nll = -jnp.where(jnp.asarray(labels) > 0, jnp.log(p), jnp.log1p(-p))
        return LogLoss(self.total + (w * nll).sum(), self.count + w.sum())

    def compute(self) -> jax.Array:
        return _ratio(self.total, self.count, jnp.nan)


@pytree_state
class GridAUC(SumState):
    """Histograms of positives' and negatives' scores over ``num_thresholds`` thresholds
    (-eps, 1/(N-1), ..., 1 + eps: the Keras / metrax grid; a score counts as positive at a
    threshold it is above). ``compute()`` gives ``roc_auc`` (trapezoids) and
    ``average_precision`` (sum of recall steps times precision), as
    ``rankwise.streaming.ROCAUC(num_thresholds=N)`` and ``AveragePrecision(num_thresholds=N)``.

    >>> import jax.numpy as jnp
    >>> s = GridAUC.from_model_output(jnp.array([0.1, 0.4, 0.35, 0.8]), jnp.array([0, 0, 1, 1]), num_thresholds=21)
    >>> round(float(s.compute()["roc_auc"]), 4)
    0.75
    """

    positives: jax.Array
    negatives: jax.Array
    num_thresholds: int = static(200)

    @classmethod
    def empty(cls, num_thresholds: int = 200) -> GridAUC:
        z = jnp.zeros(int(num_thresholds) + 1, float_dtype())
        return cls(z, z, int(num_thresholds))

    @classmethod
    def from_model_output(cls, probabilities: Any, labels: Any, where: Any = None, **config: Any) -> GridAUC:
        return cls.empty(**config).update(probabilities, labels, where)

    def update(self, probabilities: Any, labels: Any, where: Any = None) -> GridAUC:
        p = jnp.asarray(probabilities).ravel()
        w = _mask(where, jnp.shape(probabilities)).ravel().astype(float_dtype())
        thresholds = jnp.asarray(np.asarray(grid(self.num_thresholds), dtype=np.float64), dtype=p.dtype)
        bucket = jnp.searchsorted(thresholds, p, side="left")  # thresholds the score is above
        truth = jnp.asarray(labels).ravel() > 0
        return GridAUC(self.positives.at[bucket].add(w * truth), self.negatives.at[bucket].add(w * ~truth),
                       self.num_thresholds)

    def compute(self) -> dict[str, jax.Array]:
        tps = jnp.cumsum(self.positives[::-1])[:-1]  # past each threshold, the highest first
        fps = jnp.cumsum(self.negatives[::-1])[:-1]
        p, n = tps[-1], fps[-1]
        tpr = jnp.concatenate([jnp.zeros(1, tps.dtype), tps]) / jnp.where(p > 0, p, jnp.nan)
        fpr = jnp.concatenate([jnp.zeros(1, fps.dtype), fps]) / jnp.where(n > 0, n, jnp.nan)
        roc = jnp.sum((fpr[1:] - fpr[:-1]) * (tpr[1:] + tpr[:-1]) / 2)
        predicted = tps + fps
        precision = jnp.where(predicted > 0, tps / jnp.where(predicted > 0, predicted, 1.0), 1.0)
        recall = tps / jnp.where(p > 0, p, jnp.nan)
        previous = jnp.concatenate([jnp.zeros(1, recall.dtype), recall[:-1]])
        # thresholds where nothing is predicted positive add no recall step
        ap = jnp.sum(jnp.where(predicted > 0, (recall - previous) * precision, 0.0))
        return {"roc_auc": roc, "average_precision": ap}
