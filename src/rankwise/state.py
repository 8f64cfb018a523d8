"""Streaming, mergeable metric states: ``empty / update / merge / compute`` for every family.

A metric's state is a dict of fixed-shape NumPy arrays of sufficient statistics (sums, counts,
per-rank sums, histograms, co-moments) that merge by addition, or by Chan et al.'s pairwise
formulas for means and (co)variances. The same state serves a training loop (update per batch),
data larger than memory (update per chunk) and several processes or machines (merge the states,
or ship ``state_dict()`` and ``load_state_dict()``). A metric whose exact answer needs every
input (exact ROC AUC, exact Spearman) says so in its docstring; its state grows by a documented
number of bytes per input.

Inputs may be NumPy arrays, Python lists, or any array with ``__dlpack__`` or ``__array__``
(PyTorch and JAX tensors, on the CPU). Every metric takes ``where`` (a boolean mask, e.g. for
padding); an input a metric does not take is an error, never silently ignored.

>>> from rankwise.streaming import MeanSquaredError
>>> a = MeanSquaredError().update(predictions=[1.0, 2.0], targets=[1.0, 4.0])
>>> b = MeanSquaredError().update(predictions=[3.0], targets=[0.0])
>>> a.merge(b).compute()      # (0 + 4 + 9) / 3
4.333333333333333
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from rankwise.errors import MetricInputError, RankwiseError


def as_array(value: Any, name: str = "input") -> np.ndarray:
    """Any array-like as a NumPy array, without a copy when possible: NumPy arrays, lists,
    PyTorch / JAX tensors (through ``__dlpack__``, or ``__array__``; tensors that need a
    gradient are detached, tensors on an accelerator are moved to the CPU).

    >>> as_array([1, 2, 3]).tolist()
    [1, 2, 3]
    """
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and callable(value.detach):  # PyTorch: drop the autograd graph
        value = value.detach()
        if getattr(getattr(value, "device", None), "type", "cpu") != "cpu":
            value = value.cpu()
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError):
            pass
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as err:
        raise MetricInputError(f"{name}: cannot read {type(value).__name__} as an array ({err})") from None


def mask_of(where: Any, shape: tuple[int, ...], name: str = "where") -> np.ndarray | None:
    """``where`` as a boolean mask broadcast to ``shape`` (None when absent)."""
    if where is None:
        return None
    mask = as_array(where, name)
    if mask.dtype != np.bool_:
        if not np.isin(mask, (0, 1)).all():
            raise MetricInputError(f"{name}: expected a boolean mask (or 0/1), got values other than 0 and 1")
        mask = mask.astype(bool)
    if mask.shape == shape:
        return mask
    if mask.ndim < len(shape) and mask.shape == shape[:mask.ndim]:  # a row mask over [rows, ...] inputs
        return np.broadcast_to(mask.reshape(mask.shape + (1,) * (len(shape) - mask.ndim)), shape)
    raise MetricInputError(f"{name}: shape {mask.shape} does not match the input's {shape}")


def chan_merge(n_a: float, mean_a: np.ndarray, m2_a: np.ndarray, n_b: float, mean_b: np.ndarray,
               m2_b: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Merge two (count, mean, sum of squared deviations) summaries (Chan, Golub & LeVeque 1979).

    >>> x = np.array([1.0, 2.0, 4.0, 8.0])
    >>> n, mean, m2 = chan_merge(2, x[:2].mean(), ((x[:2] - 1.5) ** 2).sum(), 2, x[2:].mean(), 8.0)
    >>> float(mean), float(m2), float(((x - x.mean()) ** 2).sum())
    (3.75, 28.75, 28.75)
    """
    n = n_a + n_b
    if n == 0:
        return 0, mean_a, m2_a
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / n)
    m2 = m2_a + m2_b + delta * delta * (n_a * n_b / n)
    return n, mean, m2


class Metric:
    """Base of every streaming metric.

    Subclasses declare ``inputs`` (required keyword inputs of ``update``) and
    ``optional_inputs`` (``where`` always), build their state in ``_initial_state``, fold a
    batch in ``_update`` and answer in ``compute``. States merge by addition unless
    ``_merge`` says otherwise.
    """

    inputs: ClassVar[tuple[str, ...]] = ()
    optional_inputs: ClassVar[tuple[str, ...]] = ("where",)
    growing_state: ClassVar[tuple[str, ...]] = ()
    """State entries that grow with the data (lists of arrays, concatenated when states merge);
    the other entries add up."""
    nonnegative_state: ClassVar[tuple[str, ...]] = ()
    """State entries that can never be negative (sums of squares, counts): a loaded state
    breaking this is refused. Integer entries are counts and always checked."""

    def __init__(self, **params: Any) -> None:
        if params and type(self).__init__ is Metric.__init__:   # a metric without parameters of its own
            from rankwise.errors import MetricParameterError

            raise MetricParameterError(f"{type(self).__name__}: unknown parameter(s) {', '.join(sorted(params))}; "
                                       "it takes none")
        self.params = params
        self.state: dict[str, Any] = self._initial_state()

    # -- to override -------------------------------------------------------------------------
    def _initial_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        raise NotImplementedError

    def _merge(self, other: dict[str, Any]) -> None:
        for key, value in other.items():
            self.state[key] = self.state[key] + value

    def compute(self) -> Any:
        raise NotImplementedError

    # -- the API -------------------------------------------------------------------------------
    @property
    def accepted_inputs(self) -> tuple[str, ...]:
        """The input keywords ``update`` takes: ``predictions`` and ``targets`` (every metric's
        names for its outputs and its ground truth, where it has them) and the metric's own
        names (``scores``, ``probabilities``, ``labels``, ``references``: deprecated spellings)."""
        own = self.inputs + self.optional_inputs
        common = tuple(n for n in ("predictions", "targets") if n in own or _own_name(own, n) is not None)
        return tuple(dict.fromkeys(common + own))

    def empty(self) -> Metric:
        """A new metric with the same parameters and an empty state."""
        return type(self)(**self.params)

    def reset(self) -> Metric:
        """Empty the state in place."""
        self.state = self._initial_state()
        return self

    def update(self, **inputs: Any) -> Metric:
        """Fold one batch in; returns the metric (calls chain)."""
        return self._update_shared(inputs, {})

    def _update_shared(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> Metric:
        name = type(self).__name__
        inputs = canonical_inputs(self.inputs + self.optional_inputs, inputs, name)
        unknown = sorted(set(inputs) - set(self.accepted_inputs))
        if unknown:
            raise MetricInputError(f"{name}.update: unknown input(s) {', '.join(unknown)}; "
                                   f"it takes {', '.join(self.accepted_inputs)}")
        missing = [k for k in self.inputs if inputs.get(k) is None]
        if missing:
            raise MetricInputError(f"{name}.update: missing input(s) {', '.join(missing)}")
        arrays = {k: (v if k in self._raw_inputs else as_array(v, f"{name}.{k}")) for k, v in inputs.items()
                  if v is not None}
        self._update(arrays, shared)
        return self

    _raw_inputs: ClassVar[tuple[str, ...]] = ()
    """Inputs passed through unconverted (text)."""

    def merge(self, other: Metric) -> Metric:
        """A new metric holding the state of both inputs (same metric, same parameters);
        ``self`` and ``other`` are unchanged. ``a + b`` is the same.

        >>> from rankwise.streaming import MeanAbsoluteError
        >>> a = MeanAbsoluteError().update(predictions=[1.0], targets=[0.0])
        >>> a.merge(MeanAbsoluteError().update(predictions=[0.0], targets=[3.0])).compute(), a.compute()
        (2.0, 1.0)
        """
        out = self.empty()
        out.state = copy.deepcopy(self.state)
        return out.merge_state(other)

    def __add__(self, other: Metric) -> Metric:
        return self.merge(other)

    def merge_state(self, other: Metric) -> Metric:
        """Add another state of the same metric (same parameters) into this one, in place
        (torchmetrics' ``merge_state``); returns ``self``."""
        if type(other) is not type(self) or other.params != self.params:
            raise RankwiseError(f"cannot merge {type(other).__name__}({other.params}) into "
                                f"{type(self).__name__}({self.params}): same metric and parameters needed")
        self._merge(copy.deepcopy(other.state))
        return self

    @classmethod
    def from_model_output(cls, *args: Any, **kwargs: Any) -> Metric:
        """A metric updated with one batch: input keywords go to ``update``, the others to the
        constructor. Positional arguments are ``predictions``, ``targets`` and (where the metric
        takes them) ``sample_weights``, in metrax's and CLAX's order.

        >>> from rankwise.streaming import MeanAbsoluteError
        >>> MeanAbsoluteError.from_model_output([1.0, 3.0], [0.0, 0.0], [1.0, 3.0]).compute()   # (1 + 9) / 4
        2.5
        """
        order = ("predictions", "targets") + (("sample_weights",) if "sample_weights" in cls.optional_inputs
                                              else ())
        if len(args) > len(order):
            raise MetricInputError(f"{cls.__name__}.from_model_output: at most {len(order)} positional "
                                   f"arguments ({', '.join(order)}), got {len(args)}")
        given = dict(zip(order, args, strict=False))
        twice = sorted(set(given) & set(kwargs))
        if twice:
            raise MetricInputError(f"{cls.__name__}.from_model_output: {', '.join(twice)} given twice")
        kwargs = {**given, **kwargs}
        accepted = cls.inputs + cls.optional_inputs + ("predictions", "targets") + tuple(SYNONYMS) + \
            GROUND_TRUTH_NAMES + OUTPUT_NAMES
        params = {k: v for k, v in kwargs.items() if k not in accepted}
        inputs = {k: v for k, v in kwargs.items() if k in accepted}
        return cls(**params).update(**inputs)

    def state_dict(self) -> dict[str, Any]:
        """The metric's name, parameters and state, in plain Python types only (dicts, lists,
        numbers, strings), so ``torch.save`` / ``torch.load(weights_only=True)``, JSON and pickle
        all carry it; every value round-trips exactly (float64 through Python floats).

        >>> from rankwise.streaming import NDCG
        >>> NDCG(k=[1, 2]).update(predictions=[[0.9, 0.1]], targets=[[1, 0]]).state_dict()["state"]["total"]
        {'dtype': 'float64', 'shape': [2], 'values': [1.0, 1.0]}
        """
        return {"metric": type(self).__name__, "params": _plain(dict(self.params)),
                "state": {k: _portable(v) for k, v in self.state.items()}}

    def load_state_dict(self, saved: Mapping[str, Any]) -> Metric:
        """Restore a state saved by ``state_dict`` (same metric and parameters); a key beside
        ``metric``, ``params`` and ``state`` is refused (a misspelt key would be ignored)."""
        unknown = sorted(set(saved) - {"metric", "params", "state"})
        if unknown:
            raise RankwiseError(f"{type(self).__name__}: unknown key {unknown[0]!r} in a saved state; it has metric, "
                                "params and state")
        if "state" not in saved or not isinstance(saved["state"], Mapping):
            raise RankwiseError(f"{type(self).__name__}: a saved state needs a 'state' mapping")
        if saved.get("metric") != type(self).__name__ or dict(saved.get("params", {})) != _plain(self.params):
            raise RankwiseError(f"cannot load a {saved.get('metric')}({saved.get('params')}) state into "
                                f"{type(self).__name__}({self.params})")
        fields = {k: _from_portable(v) for k, v in saved["state"].items()}
        fresh = self._initial_state()
        if set(fields) != set(fresh):
            fields = self._seed_state(fields) or fields
        if set(fields) != set(fresh):
            raise RankwiseError(f"{type(self).__name__}: state keys {sorted(fields)} do not match "
                                f"{sorted(fresh)}")
        self.state = self._checked(fields, fresh)
        return self

    def _checked(self, fields: Mapping[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
        """``fields`` checked against an empty state (known keys, shapes, counts not negative),
        copied."""
        for key, value in fields.items():
            if key not in fresh:
                raise RankwiseError(f"{type(self).__name__}: no state field {key!r}; it has {', '.join(fresh)}")
            if isinstance(fresh[key], np.ndarray):
                if np.shape(value) != fresh[key].shape:
                    raise RankwiseError(f"{type(self).__name__}: state {key!r} has shape {np.shape(value)}, "
                                        f"expected {fresh[key].shape}")
            _check_loaded(type(self).__name__, key, value, fresh[key], key in self.nonnegative_state)
        return {k: _copy_state(v) for k, v in fields.items()}

    def replace(self, **updates: Any) -> Metric:
        """A new metric with the same parameters and this state, the fields named in
        ``updates`` replaced (metrax's ``replace``); ``self`` is unchanged.

        >>> from rankwise.streaming import MeanAbsoluteError
        >>> m = MeanAbsoluteError().update(predictions=[1.0, 2.0], targets=[0.0, 0.0])
        >>> sorted(m.state), m.compute()
        (['count', 'total', 'weight'], 1.5)
        >>> m.replace(total=6.0).compute(), m.compute()   # 6 / 2
        (3.0, 1.5)
        """
        out = self.empty()
        out.state = {**copy.deepcopy(self.state), **self._checked(updates, self._initial_state())}
        return out

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **params: Any) -> Metric:
        """A metric built with ``params`` holding ``state`` (every field of its state), as a
        metrax metric is built from its fields.

        >>> from rankwise.streaming import MeanAbsoluteError
        >>> MeanAbsoluteError.from_state({"total": 3.0, "count": np.array(2), "weight": 2.0}).compute()
        1.5
        """
        metric = cls(**params)
        fresh = metric._initial_state()
        if set(state) != set(fresh):
            seed = metric._seed_state(state)
            if seed is None:
                raise RankwiseError(f"{cls.__name__}: state fields {sorted(state)} do not match {sorted(fresh)}")
            state = seed
        metric.state = metric._checked(state, fresh)
        return metric

    def _seed_state(self, fields: Mapping[str, Any]) -> dict[str, Any] | None:
        """This metric's state from the fields a peer's metric of the same definition holds
        (metrax's ``total`` and ``count``), or None when they are not such fields."""
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"


OUTPUT_NAMES = ("scores", "probabilities")
"""Old names of ``predictions`` (a metric's continuous output)."""
GROUND_TRUTH_NAMES = ("labels", "references")
"""Old names of ``targets`` (the ground truth)."""
SYNONYMS = {"cond_log_probs": "conditional_log_probs"}
"""Other spellings taken as they are (CLAX's documentation uses both)."""


def _own_name(own: tuple[str, ...], common: str) -> str | None:
    """The metric's own input name behind ``predictions`` or ``targets`` (None: it has none)."""
    names = OUTPUT_NAMES if common == "predictions" else GROUND_TRUTH_NAMES
    return next((n for n in own if n in names), None)


def canonical_inputs(own: tuple[str, ...], inputs: dict[str, Any], where: str) -> dict[str, Any]:
    """``update``'s keywords as the metric's own input names: ``predictions`` / ``targets``
    become the names it declares (a metric taking both ``probabilities`` and hard
    ``predictions`` reads floating-point predictions as probabilities, integers as classes, as
    torchmetrics does); the old names work with a deprecation warning.

    >>> canonical_inputs(("scores", "labels", "where"), {"predictions": [0.5], "targets": [1]}, "NDCG")
    {'scores': [0.5], 'labels': [1]}
    """
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        key = SYNONYMS.get(key, key)
        if key in ("predictions", "targets") and key not in own:
            target = _own_name(own, key)
            key = target if target is not None else key
        elif key == "predictions" and "probabilities" in own and value is not None:
            value = as_array(value, f"{where}.predictions")  # converted once: update uses it as it is
            key = "probabilities" if value.dtype.kind == "f" else key
        elif key in OUTPUT_NAMES + GROUND_TRUTH_NAMES and _own_name(own, "predictions" if key in OUTPUT_NAMES
                                                                     else "targets") == key:
            import warnings

            from rankwise.errors import RankwiseDeprecationWarning

            new = "predictions" if key in OUTPUT_NAMES else "targets"
            warnings.warn(f"{where}.update: {key!r} is deprecated; write {new!r}", RankwiseDeprecationWarning,
                          stacklevel=4)
        if key in out:
            raise MetricInputError(f"{where}.update: {key!r} given twice (under two names)")
        out[key] = value
    return out


def _portable(value: Any) -> Any:
    """A state value in plain Python types: arrays as ``{dtype, shape, values}``."""
    if isinstance(value, np.ndarray):
        return {"dtype": value.dtype.str if value.dtype.kind in "US" else str(value.dtype),
                "shape": list(value.shape), "values": value.tolist()}
    if isinstance(value, list):
        return [_portable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return copy.deepcopy(value)


def _from_portable(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"dtype", "shape", "values"}:
        return np.asarray(value["values"], dtype=np.dtype(value["dtype"])).reshape(value["shape"])
    if isinstance(value, list):
        return [_from_portable(v) for v in value]
    return value


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters with tuples as lists (what a JSON or torch round trip gives back)."""
    def plain(v: Any) -> Any:
        if isinstance(v, (tuple, list)):
            return [plain(x) for x in v]
        if isinstance(v, np.generic):
            return v.item()
        return v

    return {k: plain(v) for k, v in params.items()}


def _check_loaded(metric: str, key: str, value: Any, fresh: Any, nonnegative: bool) -> None:
    """A loaded state entry: the dtype kind of a fresh one, no NaN, and no negative count or
    sum of squares (a crafted state cannot make MSE negative)."""
    if not isinstance(fresh, np.ndarray):
        return
    array = np.asarray(value)
    if fresh.dtype.kind in "iub" and array.dtype.kind not in "iub":
        raise RankwiseError(f"{metric}: state {key!r} must hold integers, got {array.dtype}")
    if array.dtype.kind in "fc" and np.isnan(array).any():
        raise RankwiseError(f"{metric}: state {key!r} holds NaN")
    if (nonnegative or fresh.dtype.kind in "iu") and array.dtype.kind in "iuf" and (array < 0).any():
        raise RankwiseError(f"{metric}: state {key!r} must not be negative, got {array[array < 0].ravel()[0]}")


def _copy_state(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy_state(v) for v in value]
    return copy.deepcopy(value)


def _taken(metric: Metric) -> set[str]:
    """The keywords ``metric.update`` takes: its inputs and the synonyms of those.

    >>> from rankwise.streaming import LogLikelihood, Perplexity
    >>> sorted(_taken(LogLikelihood())), sorted(_taken(Perplexity()))
    (['clicks', 'cond_log_probs', 'conditional_log_probs', 'where'], ['clicks', 'log_probs', 'where'])
    """
    own = set(metric.accepted_inputs)
    return own | {synonym for synonym, name in SYNONYMS.items() if name in own}


class MultiMetric:
    """Several metrics updated from one call: each receives only the inputs it declares, an
    input no metric takes is an error, and metrics that need the same sort (ranking metrics
    on the same scores) share it.

    >>> from rankwise.streaming import Accuracy, LogLoss
    >>> mm = MultiMetric(acc=Accuracy(), loss=LogLoss())
    >>> mm.update(predictions=[0.9, 0.2, 0.6], targets=[1, 0, 0]).compute()["acc"]
    0.6666666666666666
    >>> try:
    ...     mm.update(predictions=[0.5], targets=[1], logits=[0.0])
    ... except MetricInputError as err:
    ...     print(str(err).split(";")[0])
    MultiMetric.update: no metric takes logits
    """

    def __init__(self, **metrics: Metric) -> None:
        if not metrics:
            raise RankwiseError("MultiMetric needs at least one metric")
        self.metrics = dict(metrics)

    def update(self, **inputs: Any) -> MultiMetric:
        accepted = set().union(*(_taken(m) for m in self.metrics.values()))
        unknown = sorted(set(inputs) - accepted)
        if unknown:
            raise MetricInputError(f"MultiMetric.update: no metric takes {', '.join(unknown)}; the metrics take "
                                   f"{', '.join(sorted(accepted))}")
        shared: dict[Any, Any] = {}  # work several metrics need (a sort, a conversion), done once
        for metric in self.metrics.values():
            own = _taken(metric)   # a synonym (CLAX's cond_log_probs) goes only to the metrics that take it
            metric._update_shared({k: v for k, v in inputs.items() if k in own}, shared)
        return self

    def merge(self, other: MultiMetric) -> MultiMetric:
        """A new MultiMetric holding the states of both inputs; neither is changed."""
        if set(other.metrics) != set(self.metrics):
            raise RankwiseError("cannot merge MultiMetrics holding different metrics")
        return MultiMetric(**{name: metric.merge(other.metrics[name]) for name, metric in self.metrics.items()})

    def __add__(self, other: MultiMetric) -> MultiMetric:
        return self.merge(other)

    def merge_state(self, other: MultiMetric) -> MultiMetric:
        """Add another MultiMetric's states into this one, in place; returns ``self``."""
        if set(other.metrics) != set(self.metrics):
            raise RankwiseError("cannot merge MultiMetrics holding different metrics")
        for name, metric in self.metrics.items():
            metric.merge_state(other.metrics[name])
        return self

    def compute(self) -> dict[str, Any]:
        return {name: m.compute() for name, m in self.metrics.items()}

    def compute_per_rank(self, observed_only: bool = False) -> dict[str, Any]:
        """Per-rank values of the metrics that are per-rank averages (``observed_only``: ranks
        without data left out, CLAX's form)."""
        return {name: m.compute_per_rank(observed_only=observed_only) for name, m in self.metrics.items()
                if hasattr(m, "compute_per_rank")}

    def reset(self) -> MultiMetric:
        for m in self.metrics.values():
            m.reset()
        return self

    def empty(self) -> MultiMetric:
        return MultiMetric(**{k: m.empty() for k, m in self.metrics.items()})

    def state_dict(self) -> dict[str, Any]:
        return {name: m.state_dict() for name, m in self.metrics.items()}

    def load_state_dict(self, saved: Mapping[str, Any]) -> MultiMetric:
        for name, m in self.metrics.items():
            m.load_state_dict(saved[name])
        return self
