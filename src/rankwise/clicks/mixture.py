"""A mixture of click models: each session follows one of K models, drawn with probabilities
``weights`` (users who browse differently: scanners, one-click navigators, ...).

The fit starts from each component fitted alone to the whole log, then runs one EM over both
hidden layers. E-step: each session's responsibility
``r_sk = w_k P_k(clicks_s) / sum_j w_j P_j(clicks_s)`` (``P_k`` the session's likelihood under
component ``k`` at its current parameters); each component then computes its own expected
statistics with every session weighted by ``r_sk``. M-step: ``w_k = sum_s r_sk / S``, and each
component maximises on its weighted statistics (its empirical prior included). The
log-likelihood of the mixture, ``sum_s log sum_k w_k P_k(clicks_s)``, is what the passes
report and what the stopping rule reads.

Predictions are exact mixtures: ``P(C_r = 1) = sum_k w_k P_k(C_r = 1)``, and the conditional
``P(C_r = 1 | C_<r) = sum_k P(k | C_<r) P_k(C_r = 1 | C_<r)`` with the posterior over
components given the clicks above rank r only. (CLAX's ``MixtureModel`` weighs each rank's
conditional by the posterior given the whole session, its later clicks included; that is not a
conditional probability of the click at r, and flatters conditional perplexity.) Relevance is
``sum_k w_k relevance_k``, as in CLAX.

>>> from rankwise.clicks.log import ClickLog
>>> from rankwise.clicks.models import PBM, CascadeModel
>>> log = ClickLog.from_arrays(["q"] * 6, [["a", "b"]] * 6, [[1, 0], [1, 0], [0, 1], [1, 1], [0, 0], [1, 0]])
>>> model = Mixture([PBM(), CascadeModel()]).fit(log, iterations=20)
>>> round(float(model.weights.sum()), 6), [m.name for m in model.models]
(1.0, ['pbm', 'cascade'])
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rankwise.clicks.acceleration import DEFAULT_ACCELERATION
from rankwise.clicks.log import ClickLog
from rankwise.clicks.models import CHUNK, ITERATION_CAP, TINY, ClickModel
from rankwise.errors import OptionError
from rankwise.stats.resampling import seeded

SEPARATOR = "+"
"""Between the components' names in the registry spelling: ``mixture(components=pbm+dbn)``
(``rankwise.clicks.registry`` builds the models from their names)."""


MAX_COMPONENTS = 16
"""The most components a mixture takes: every component is a whole click model refitted on
each EM pass, so a user-given count is bounded (a mixture of 10,000 never returned)."""


def _components(components: Sequence[ClickModel]) -> list[ClickModel]:
    """The component models, checked: at least two, none a mixture."""
    models = list(components)
    for model in models:
        if isinstance(model, Mixture):
            raise OptionError("a mixture's components are click models, not mixtures")
        if not isinstance(model, ClickModel):
            raise OptionError(f"a mixture's components are click models, got {type(model).__name__}")
    if len(models) < 2:
        raise OptionError(f"a mixture needs at least two components, got {len(models)}")
    if len(models) > MAX_COMPONENTS:   # each component is a whole model fitted on every EM pass
        raise OptionError(f"a mixture takes at most {MAX_COMPONENTS} components, got {len(models)}")
    return models


def session_log_likelihoods(model: ClickModel, log: ClickLog) -> np.ndarray:
    """Each session's log-likelihood of its clicks under ``model`` (the sum over shown cells of
    log P(observed click | clicks above)).

    >>> from rankwise.clicks.models import GlobalCTR
    >>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["a", "b"]], [[1, 0], [0, 0]])
    >>> model = GlobalCTR(prior=(1, 4)).fit(log)   # ctr (1 + 1) / (4 + 4) = 1/4
    >>> np.round(session_log_likelihoods(model, log), 4).tolist()   # log(1/4) + log(3/4); 2 log(3/4)
    [-1.674, -0.5754]
    """
    return _cell_log_likelihoods(model.conditional_click_probs(log), log).sum(axis=1)


def _cell_log_likelihoods(p_click: np.ndarray, log: ClickLog) -> np.ndarray:
    observed = np.where(log.clicks == 1, p_click, 1 - p_click)
    return np.where(log.mask, np.log(np.clip(observed, TINY, 1.0)), 0.0)


def _softmax_rows(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(softmax over the last axis, log-sum-exp over it)."""
    top = logits.max(axis=-1, keepdims=True)
    exp = np.exp(logits - top)
    total = exp.sum(axis=-1, keepdims=True)
    return exp / total, (np.log(total) + top)[..., 0]


class Mixture(ClickModel):
    """A mixture of click models fitted by EM (see the module's docstring): ``components``
    are the models (each with its own settings; ``MODELS["mixture"](components="pbm+dbn")``
    builds them from names, as ``--model 'mixture(components=pbm+dbn)'`` does); ``weights`` are
    the fitted mixing probabilities; ``models`` the fitted components.
    ``seed`` breaks the tie between components of one kind (their starting attractiveness
    is perturbed), so that a mixture of two DBNs can find two kinds of user."""

    name = "mixture"
    iterative = True
    accelerated = False   # its components' statistics depend on the weights in ways a jump ignores
    pair_fields: dict[str, str] = {}
    fields = {"weights": (None,)}

    def __init__(self, components: Sequence[ClickModel], seed: int = 0) -> None:
        super().__init__()
        self.models = _components(components)
        self.components = SEPARATOR.join(m.name for m in self.models)
        """The components' names, as the registry spells them (what a saved model records)."""
        self.seed = int(seed)
        self.weights = np.full(len(self.models), 1 / len(self.models))

    # -- fitting ---------------------------------------------------------------------------------
    def fit(self, log: Any, iterations: int = ITERATION_CAP, tolerance: float = 1e-6, chunk_size: int = CHUNK,
            progress: Callable[[dict[str, float]], None] | None = None, workers: int | None = None,
            validation: Any = None, patience: int = 3, parameter_tolerance: float | None = None,
            acceleration: str = DEFAULT_ACCELERATION) -> Any:
        """Each component first fitted alone to the whole log (the mixture's EM starts from
        there: started from scratch, the component that fits fastest takes every session;
        ``acceleration`` applies to these fits), then the mixture's passes as
        ``ClickModel.fit`` makes them, plain. A mixture's likelihood has many maxima, between
        which the parameters drift slowly while the likelihood hardly changes: its fit stops on
        the log-likelihood alone (``parameter_tolerance`` inf) unless given one."""
        stopping = self.parameter_tolerance if parameter_tolerance is None else parameter_tolerance
        for model in self.models:
            model.fit(log, iterations=iterations, tolerance=tolerance, chunk_size=chunk_size, workers=workers,
                      parameter_tolerance=stopping, acceleration=acceleration)
        return super().fit(log, iterations, tolerance, chunk_size, progress, workers, validation, patience,
                           stopping)

    parameter_tolerance = math.inf   # many maxima: the log-likelihood alone decides

    def parameter_vector(self) -> np.ndarray:
        """The weights and every component's probabilities."""
        return np.concatenate([self.weights, *(m.parameter_vector() for m in self.models)])

    def _start(self, log: Any) -> None:
        rng = seeded(self.seed)
        seen: set[type] = set()
        for model in self.models:
            if type(model) in seen and hasattr(model, "alpha"):   # a second component of one kind
                model.alpha = np.clip(model.alpha * rng.uniform(0.5, 1.5, len(model.alpha)), 0.01, 0.99)
            seen.add(type(model))
        self.weights = np.full(len(self.models), 1 / len(self.models))

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        session = np.column_stack([session_log_likelihoods(m, chunk) for m in self.models])
        responsibility, mixture_ll = _softmax_rows(np.log(self.weights)[None, :] + session)
        totals = {"weights": responsibility.sum(axis=0)}
        for k, model in enumerate(self.models):
            model._first_pass = True   # the weights change every pass: no statistic is constant
            chunk.cache["weight"] = responsibility[:, k]
            try:
                statistics, _ = model._statistics(chunk)
            finally:
                chunk.cache.pop("weight", None)
            totals.update({f"{k}:{key}": value for key, value in statistics.items()})
        return totals, float(mixture_ll.sum())

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.weights = np.maximum(totals["weights"], 1e-12) / max(float(totals["weights"].sum()), 1e-12)
        for k, model in enumerate(self.models):
            prefix = f"{k}:"
            model._maximise({key[len(prefix):]: value for key, value in totals.items() if key.startswith(prefix)})

    def use_features(self, features: Any = None, l2: float = 1.0, hashed: Sequence[str] = (),
                     buckets: int = 4096) -> Mixture:
        """Every component's attractiveness from (query, document) features (see
        ``ClickModel.use_features``)."""
        for model in self.models:
            model.use_features(features, l2, hashed, buckets)
        return self

    def _snapshot(self) -> dict[str, Any]:
        return {"weights": self.weights.copy(), "models": copy.deepcopy(self.models)}

    # -- predictions -----------------------------------------------------------------------------
    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self._weighted(lambda m: m.click_probs(log))

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:
        probs = np.stack([m.conditional_click_probs(log) for m in self.models], axis=-1)   # S x R x K
        cells = np.stack([_cell_log_likelihoods(probs[..., k], log) for k in range(len(self.models))], axis=-1)
        above = np.cumsum(cells, axis=1) - cells            # the clicks above each rank only
        posterior, _ = _softmax_rows(np.log(self.weights)[None, None, :] + above)
        return (posterior * probs).sum(axis=-1)

    def attractiveness(self, log: ClickLog) -> np.ndarray:
        return self._weighted(lambda m: m.attractiveness(log))

    def relevance_scores(self, values: dict[str, np.ndarray] | None = None) -> np.ndarray:
        if values is not None:
            raise ValueError("a mixture's relevance comes from its components' parameters")
        return self._weighted(lambda m: np.asarray(m.relevance_scores(), dtype=np.float64))

    def unseen_relevance(self, bound: str = "mean", level: float = 0.95) -> float:
        return float(self._weighted(lambda m: np.float64(m.unseen_relevance(bound, level))))

    def relevance(self, name: str | None = None, log: Any = None, bound: str = "mean", level: float = 0.95,
                  by: str = "relevance") -> Any:
        """The weighted sum of the components' relevance scores (``bound="lower"``: of their
        lower credible bounds; ``by``: each component's ranking rule), as a ``Run``."""
        from rankwise.data.containers import Run

        runs = {id(m): m.relevance(name or self.name, log, bound, level, by) for m in self.models}
        first = runs[id(self.models[0])]
        return Run(first.query, first.doc, self._weighted(lambda m: runs[id(m)].score), name=name or self.name,
                   source=f"<{self.name}>")

    def intervals(self, level: float = 0.95) -> Any:
        raise ValueError("a mixture has no per-pair parameters of its own: ask a component, "
                         "model.models[k].intervals()")

    def parameters(self) -> dict[str, Any]:
        """``components``: each component's model and weight; then each component's tables,
        keyed ``"k.name"`` (``"0.pairs"``, ``"1.ranks"`` ...)."""
        import pandas as pd

        out: dict[str, Any] = {"components": pd.DataFrame({"component": range(len(self.models)),
                                                           "model": [m.name for m in self.models],
                                                           "weight": self.weights})}
        for k, model in enumerate(self.models):
            out.update({f"{k}.{key}": value for key, value in model.parameters().items()})
        return out

    def _weighted(self, value: Callable[[ClickModel], Any]) -> np.ndarray:
        """``sum_k weights[k] value(component k)``."""
        terms = [w * np.asarray(value(m), dtype=np.float64) for w, m in zip(self.weights, self.models, strict=True)]
        return np.asarray(np.sum(terms, axis=0))


__all__ = ["Mixture", "SEPARATOR", "session_log_likelihoods"]
