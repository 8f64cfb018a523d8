"""Streaming states for what the other modules do not name: the weighted mean of any values
(metrax's ``Average``) and any per-list ranking function turned into a metric (CLAX's
``RaxMetric``: ``FunctionMetric(rax.dcg_metric, topn=10)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of


class Average(Metric):
    """The weighted mean of ``values``, sum(w v) / sum(w), over every cell seen (``where``
    masks cells; ``sample_weights`` one per cell or per row); merged exactly. An empty state
    is NaN (``zero_division=None``), or ``zero_division`` (metrax's ``Average`` divides
    safely: 0).

    >>> Average().update(values=[1.0, 2.0, 6.0], sample_weights=[1.0, 1.0, 2.0]).compute()   # (1 + 2 + 12) / 4
    3.75
    >>> Average(zero_division=0.0).compute()
    0.0
    """

    inputs = ("values",)
    optional_inputs = ("where", "sample_weights")
    nonnegative_state = ("weight",)

    def __init__(self, zero_division: float | None = None) -> None:
        # None, not NaN, stands for "undefined": parameters compare equal after a save and load
        super().__init__(zero_division=None if zero_division is None else float(zero_division))

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "weight": np.zeros(())}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        values = inputs["values"].astype(np.float64)
        weights = inputs.get("sample_weights")
        if weights is None:
            w = np.ones(values.shape)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape == values.shape[:1] and values.ndim > 1:
                w = np.broadcast_to(w.reshape(w.shape + (1,) * (values.ndim - 1)), values.shape)
            if w.shape != values.shape or not (np.isfinite(w) & (w >= 0)).all():
                raise MetricInputError(f"Average.update: sample_weights must be finite and non-negative, one per "
                                       f"value or per row of values {values.shape}; got shape {w.shape}")
        if not np.isfinite(values).all():
            raise MetricInputError("Average.update: values must be finite numbers")
        mask = mask_of(inputs.get("where"), values.shape)
        if mask is not None:
            values, w = values[mask], w[mask]
        self.state["total"] = self.state["total"] + float((w * values).sum())
        self.state["weight"] = self.state["weight"] + float(w.sum())

    def compute(self) -> float:
        weight = float(self.state["weight"])
        if weight:
            return float(self.state["total"]) / weight
        return float("nan") if self.params["zero_division"] is None else self.params["zero_division"]


def _name_of(function: Callable[..., Any]) -> str:
    return f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', repr(function))}".lstrip(".")


SPELLINGS = {"top_n": "topn"}
"""CLAX's ``RaxMetric(metric_fn, top_n=...)`` keyword and rax's name for it."""


def _function_options(function: Callable[..., Any], accepted: Mapping[str, Any] | None,
                      options: dict[str, Any]) -> dict[str, Any]:
    """``options`` as ``function`` names them (CLAX's ``top_n`` is rax's ``topn``); one it does
    not take is refused here, not at the first update.

    >>> def metric(scores, labels, *, topn=None, where=None):
    ...     return scores
    >>> _function_options(metric, __import__("inspect").signature(metric).parameters, {"top_n": 10})
    {'topn': 10}
    """
    if accepted is None or any(p.kind is p.VAR_KEYWORD for p in accepted.values()):
        return options
    out = {}
    for key, value in options.items():
        name = SPELLINGS.get(key, key) if key not in accepted else key
        if name not in accepted or name in ("scores", "labels", "where", "reduce_fn"):
            takes = [k for k in accepted if k not in ("scores", "labels", "where", "reduce_fn")]
            raise MetricInputError(f"FunctionMetric: {_name_of(function)} takes no option {key!r}; it takes "
                                   f"{', '.join(takes) or 'none'}")
        out[name] = value
    return out


class FunctionMetric(Metric):
    """Any ranking function of (scores, labels[, where]) returning one value per list, as a
    streaming metric: the mean over lists, merged exactly. ``function`` is called with the
    batch's [batch, list] arrays, ``where`` when given, ``reduce_fn=None`` when it takes one
    (rax's metrics: ``FunctionMetric(rax.ndcg_metric, topn=10)``, CLAX's ``RaxMetric``), and
    ``options``. The parameters record the function's name; a saved state loads into a
    ``FunctionMetric`` of the same function and options.

    >>> def top_label(scores, labels, where=None):   # the label of each list's best-scored item
    ...     return labels[np.arange(len(labels)), np.argmax(scores, axis=1)]
    >>> m = FunctionMetric(top_label).update(predictions=[[0.1, 0.9], [0.8, 0.2]], targets=[[0, 1], [0, 1]])
    >>> m.compute(), m.params["function"].endswith("top_label")
    (0.5, True)
    """

    inputs = ("scores", "labels")

    def __init__(self, function: Callable[..., Any], **options: Any) -> None:
        if not callable(function):
            raise MetricInputError(f"FunctionMetric: expected a function, got {type(function).__name__}")
        import inspect

        accepted: Mapping[str, Any] | None
        try:
            accepted = inspect.signature(function).parameters
        except (TypeError, ValueError):
            accepted = None   # a builtin without a signature: options are its business
        options = _function_options(function, accepted, options)
        self.function = function
        self._reduce = accepted is not None and "reduce_fn" in accepted
        super().__init__(function=_name_of(function), **options)

    def empty(self) -> Metric:
        options = {k: v for k, v in self.params.items() if k != "function"}
        return type(self)(self.function, **options)

    def _initial_state(self) -> dict[str, Any]:
        return {"total": np.zeros(()), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        scores, labels = inputs["scores"], inputs["labels"]
        if scores.shape != labels.shape or scores.ndim != 2:
            raise MetricInputError(f"FunctionMetric.update: scores and labels must be [batch, list] arrays of one "
                                   f"shape, got {scores.shape} and {labels.shape}")
        options = {k: v for k, v in self.params.items() if k != "function"}
        where = inputs.get("where")
        if where is not None:
            options["where"] = np.asarray(where, dtype=bool)
        if self._reduce:
            options["reduce_fn"] = None
        values = np.asarray(self.function(scores, labels, **options), dtype=np.float64).reshape(-1)
        if len(values) != len(scores):
            raise MetricInputError(f"FunctionMetric.update: {self.params['function']} returned {len(values)} values "
                                   f"for {len(scores)} lists; it must return one per list (reduce_fn=None)")
        if not np.isfinite(values).all():
            raise MetricInputError(f"FunctionMetric.update: {self.params['function']} returned a non-finite value")
        self.state["total"] = self.state["total"] + float(values.sum())
        self.state["count"] += len(values)

    def compute(self) -> float:
        n = int(self.state["count"])
        return float(self.state["total"]) / n if n else float("nan")


__all__ = ["Average", "FunctionMetric"]
