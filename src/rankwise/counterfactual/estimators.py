"""Off-policy (counterfactual) estimators: the value of a target policy from rounds logged
under another (logging) policy, with the logging propensities.

Each round ``i`` has a reward ``r_i`` for the logged action ``a_i`` (at position ``k_i``, when
there are several), the logging propensity ``pi_b(a_i | x_i, k_i)`` and the target policy's
probability of the same action ``pi_e(a_i | x_i, k_i)``; ``w_i = pi_e / pi_b``. With a reward
model ``q(x, a)``: ``q_logged_i = q(x_i, a_i)`` and ``q_target_i = sum_a pi_e(a | x_i) q(x_i, a)
/ sum_a pi_e(a | x_i)`` (at the round's position). The estimators, as OBP defines them
(Saito et al. 2021, ``obp.ope``):

- ``ips``: ``mean(min(w, clip) r)``
- ``snips``: ``sum(w r) / sum(w)``
- ``dm``: ``mean(q_target)``
- ``dr``: ``mean(q_target + min(w, clip) (r - q_logged))``
- ``sndr``: ``mean(q_target) + sum(w (r - q_logged)) / sum(w)``
- ``switch-dr``: ``mean(q_target + [w <= clip] w (r - q_logged))`` (the model alone where the
  weight is above ``clip``)

Intervals: a percentile bootstrap over rounds (``resamples``, seeded). Self-normalised
estimators recompute their normaliser in every resample (OBP keeps the full sample's), so
their interval includes the normaliser's variability. Also reported: the standard error of
the round rewards, the effective sample size ``(sum w)^2 / sum w^2`` and the number of
clipped weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.errors import InputError
from rankwise.params import Declared, Param, Registry
from rankwise.results import Estimate, TableResult, signed


@dataclass(frozen=True)
class RoundTerms:
    """An estimate as ``sum(numerator) / sum(denominator) + mean(added)`` over rounds, the
    form every estimator here takes, so a bootstrap resample recomputes it exactly.

    A term that is 1 or 0 in every round (IPS's denominator and added term) is not gathered in
    a resample: ``n`` ones add up to exactly ``n`` and zeros to 0, so the values keep their
    bits, and a resample costs one random gather per varying term instead of three.

    >>> terms = RoundTerms(np.array([1.0, 2.0, 4.0]), np.ones(3), np.zeros(3))
    >>> terms.value(np.array([[0, 0, 2], [1, 2, 2]])).tolist()   # (1 + 1 + 4) / 3, (2 + 4 + 4) / 3
    [2.0, 3.3333333333333335]
    """

    numerator: np.ndarray
    denominator: np.ndarray
    added: np.ndarray
    _constants: tuple[float | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_constants", tuple(_one_or_zero(t) for t in (self.numerator, self.denominator,
                                                                                 self.added)))

    def value(self, rows: np.ndarray | None = None) -> np.ndarray | float:
        """The estimate, or with ``rows`` (a ``(resamples, n)`` index array) one per resample."""
        if rows is None:
            return float(self.numerator.sum() / self.denominator.sum() + self.added.mean())
        terms = (self.numerator, self.denominator, self.added)
        numerator, denominator, added = (self._resampled_sum(term, constant, rows)
                                         for term, constant in zip(terms, self._constants, strict=True))
        return numerator / denominator + added / rows.shape[-1]

    @staticmethod
    def _resampled_sum(term: np.ndarray, constant: float | None, rows: np.ndarray) -> np.ndarray:
        if constant is not None:   # exact: a sum of n ones is n, of zeros 0
            return np.full(rows.shape[:-1], constant * rows.shape[-1])
        return np.take(term, rows).sum(axis=-1)


def _one_or_zero(term: np.ndarray) -> float | None:
    """1.0 or 0.0 when every value of ``term`` is that number (a positive zero), else None.

    >>> _one_or_zero(np.ones(3)), _one_or_zero(np.zeros(2))
    (1.0, 0.0)
    >>> _one_or_zero(np.array([-0.0])), _one_or_zero(np.arange(2.0))   # -0.0 is not gathered as 0
    (None, None)
    """
    if len(term) and bool((term == 1.0).all()):
        return 1.0
    if len(term) and not term.any() and not np.signbit(term).any():
        return 0.0
    return None


@dataclass(frozen=True)
class Estimator(Declared[Callable[..., "RoundTerms"]]):
    """An off-policy estimator: ``target(w, r, q_logged, q_target, **params)`` gives its
    ``RoundTerms`` from the weights ``w``, rewards ``r`` and (when ``needs_model``) the reward
    model's predictions."""

    needs_model: bool = False


CLIP = Param("clip", float, np.inf, "cap on the importance weight (switch-dr: above it, the model alone)", low=0)


def _ips(w: np.ndarray, r: np.ndarray, q_log: Any, q_tgt: Any, clip: float) -> RoundTerms:
    return RoundTerms(np.minimum(w, clip) * r, np.ones(len(r)), np.zeros(len(r)))


def _snips(w: np.ndarray, r: np.ndarray, q_log: Any, q_tgt: Any) -> RoundTerms:
    return RoundTerms(w * r, w, np.zeros(len(r)))


def _dm(w: np.ndarray, r: np.ndarray, q_log: np.ndarray, q_tgt: np.ndarray) -> RoundTerms:
    return RoundTerms(np.zeros(len(r)), np.ones(len(r)), q_tgt)


def _dr(w: np.ndarray, r: np.ndarray, q_log: np.ndarray, q_tgt: np.ndarray, clip: float) -> RoundTerms:
    return RoundTerms(np.minimum(w, clip) * (r - q_log), np.ones(len(r)), q_tgt)


def _sndr(w: np.ndarray, r: np.ndarray, q_log: np.ndarray, q_tgt: np.ndarray) -> RoundTerms:
    return RoundTerms(w * (r - q_log), w, q_tgt)


def _switch_dr(w: np.ndarray, r: np.ndarray, q_log: np.ndarray, q_tgt: np.ndarray, clip: float) -> RoundTerms:
    return RoundTerms(np.where(w <= clip, w, 0.0) * (r - q_log), np.ones(len(r)), q_tgt)


OPE_ESTIMATORS: Registry[Estimator] = Registry("estimator", (
    Estimator("ips", _ips, "Inverse propensity scoring: mean(min(w, clip) r).", (CLIP,),
              reference="Precup et al. 2000; OBP InverseProbabilityWeighting"),
    Estimator("snips", _snips, "Self-normalised IPS: sum(w r) / sum(w).",
              reference="Swaminathan & Joachims 2015; OBP SelfNormalizedInverseProbabilityWeighting"),
    Estimator("dm", _dm, "Direct method: mean of the reward model under the target policy.", needs_model=True,
              reference="Beygelzimer & Langford 2009; OBP DirectMethod"),
    Estimator("dr", _dr, "Doubly robust: mean(q_target + min(w, clip) (r - q_logged)).", (CLIP,), needs_model=True,
              reference="Dudik et al. 2014; OBP DoublyRobust"),
    Estimator("sndr", _sndr, "Self-normalised doubly robust.", needs_model=True,
              reference="OBP SelfNormalizedDoublyRobust"),
    Estimator("switch-dr", _switch_dr, "Switch-DR: the reward model alone where w exceeds clip.", (CLIP,),
              needs_model=True, reference="Wang et al. 2017; OBP SwitchDoublyRobust"),
), option="--estimator")
"""The off-policy estimators for one action per round (OBP's definitions)."""

ESTIMATORS = tuple(OPE_ESTIMATORS.names())
NEEDS_MODEL = tuple(e.name for e in OPE_ESTIMATORS.values() if e.needs_model)
CLIPPED = tuple(e.name for e in OPE_ESTIMATORS.values() if any(p.name == "clip" for p in e.params))


def _column(values: Any, name: str, size: int | None = None) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).ravel()
    if size is not None and len(array) != size:
        raise InputError(f"{name} has {len(array)} values for {size} rounds", field=name)
    bad = ~np.isfinite(array)
    if bad.any():
        raise InputError(f"{name} is not a finite number in round {int(np.flatnonzero(bad)[0])}", field=name)
    return array


def resolved(estimator: str, clip: float = np.inf) -> tuple[Estimator, dict[str, Any]]:
    """The estimator a spelling names (``ips``, ``ips(clip=1.5)``) and its parameters' values;
    ``clip``, the keyword, joins them for an estimator that declares it (naming it both ways is
    refused).

    >>> resolved("ips(clip=1.5)")[1], resolved("dr", clip=10.0)[1], resolved("snips", clip=10.0)[1]
    ({'clip': 1.5}, {'clip': 10.0}, {})
    """
    return OPE_ESTIMATORS.parse_with_keywords(estimator, clip=None if clip == np.inf else clip)


def round_terms(estimator: str, reward: Any, behavior: Any, target: Any, q_logged: Any = None,
                q_target: Any = None, clip: float = np.inf) -> RoundTerms:
    """The per-round terms of ``estimator`` (see the module for the definitions).

    >>> terms = round_terms("ips", [1, 0, 1], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5])   # w = 2, 1, 2
    >>> terms.value()   # (2 x 1 + 1 x 0 + 2 x 1) / 3
    1.3333333333333333
    """
    declared, values = resolved(estimator, clip)
    clip = float(values.get("clip", clip))
    r = _column(reward, "reward")
    n = len(r)
    if n == 0:
        raise InputError("no rounds to estimate from", field="reward")
    b = _column(behavior, "behavior", n)
    if (b <= 0).any() or (b > 1).any():
        raise InputError(f"a logging propensity must be in (0, 1]; round {int(np.flatnonzero((b <= 0) | (b > 1))[0])} "
                         f"has {b[(b <= 0) | (b > 1)][0]}", field="behavior")
    e = _column(target, "target", n)
    if (e < 0).any() or (e > 1).any():
        raise InputError("a target probability must be in [0, 1]", field="target")
    if not clip > 0:
        raise InputError(f"clip must be positive, not {clip}", field="clip")
    w = e / b
    q_log = q_tgt = None
    if declared.needs_model:
        if q_logged is None or q_target is None:
            raise InputError(f"{declared.name} needs a reward model: q_logged and q_target", field="q_logged")
        q_log = _column(q_logged, "q_logged", n)
        q_tgt = _column(q_target, "q_target", n)
    return declared.target(w, r, q_log, q_tgt, **values)


def bootstrap_interval(terms: RoundTerms, alpha: float = 0.05, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``terms.value()``, resampling rounds with replacement."""
    from rankwise.stats.checks import resample_count, significance_level
    from rankwise.stats.resampling import bootstrap_statistic, percentile_interval

    alpha, resamples = significance_level(alpha), resample_count(resamples)

    def value(rows: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(terms.value(rows))

    draws = bootstrap_statistic(terms.numerator, value, resamples, np.random.default_rng(seed), budget=2_000_000)
    return percentile_interval(draws, alpha, ignore_nan=True)


def estimate(reward: Any, behavior: Any, target: Any, estimator: str = "ips", q_logged: Any = None,
             q_target: Any = None, clip: float = np.inf, alpha: float = 0.05, resamples: int = 2000,
             seed: int = 0) -> Estimate:
    """One estimator's value with its bootstrap interval and diagnostics (an ``Estimate``: read
    it like a dict, ``["value"]``, or as a one-row ``table``).

    >>> row = estimate([1, 0, 1, 0], [0.5] * 4, [0.5, 0.5, 1.0, 0.0], "snips")
    >>> row["value"]   # weights 1, 1, 2, 0: (1 + 0 + 2 + 0) / 4
    0.75
    >>> row["effective_n"]   # (1 + 1 + 2 + 0)^2 / (1 + 1 + 4 + 0)
    2.6666666666666665
    """
    declared, values = resolved(estimator, clip)
    terms = round_terms(estimator, reward, behavior, target, q_logged, q_target, clip)
    clip = float(values.get("clip", clip))
    w = np.asarray(target, dtype=np.float64).ravel() / np.asarray(behavior, dtype=np.float64).ravel()
    value = terms.value()
    low, high = bootstrap_interval(terms, alpha, resamples, seed)
    per_round = terms.numerator * len(w) / terms.denominator.sum() + terms.added
    weight_sq = float((w ** 2).sum())
    return Estimate({"estimator": declared.name, "value": float(value), "ci_low": low, "ci_high": high,
                     "se": float(per_round.std(ddof=1) / np.sqrt(len(w))) if len(w) > 1 else float("nan"),
                     "n": int(len(w)), "effective_n": float(w.sum() ** 2 / weight_sq) if weight_sq > 0 else 0.0,
                     "max_weight": float(w.max()),
                     "clipped": int((w > clip).sum()) if "clip" in values else 0},
                    signed("ope", {"estimator": declared.spelled(values), "alpha": alpha, "resamples": resamples,
                                   "seed": seed}))


def estimate_all(reward: Any, behavior: Any, target: Any, estimators: Sequence[str] = ESTIMATORS,
                 q_logged: Any = None, q_target: Any = None, clip: float = np.inf, alpha: float = 0.05,
                 resamples: int = 2000, seed: int = 0) -> TableResult:
    """``estimate`` for several estimators, one row each (a ``TableResult``); the model-based
    ones are left out when no reward model is given, named in ``settings["skipped"]`` and in a
    warning.

    >>> result = estimate_all([1, 0], [0.5, 0.5], [0.5, 0.5], estimators=("ips", "dm"))
    >>> result.table["estimator"].tolist(), result.settings["skipped"], result.warnings
    (['ips'], ['dm'], ['dm left out: it needs a reward model (q_logged and q_target)'])
    """
    import pandas as pd

    rows, skipped = [], []
    for name in estimators:
        if OPE_ESTIMATORS.get(name).needs_model and (q_logged is None or q_target is None):
            skipped.append(name)
            continue
        rows.append(estimate(reward, behavior, target, name, q_logged, q_target, clip, alpha, resamples, seed).row)
    warnings = [f"{', '.join(skipped)} left out: {'it needs' if len(skipped) == 1 else 'they need'} a reward model "
                "(q_logged and q_target)"] if skipped else []
    settings = {"estimators": list(estimators), "skipped": skipped, "clip": clip, "alpha": alpha,
                "resamples": resamples, "seed": seed}
    return TableResult(pd.DataFrame(rows), signed("ope", settings), warnings)


def from_action_dist(action: Any, action_dist: Any, position: Any = None,
                     estimated_rewards: Any = None) -> dict[str, np.ndarray | None]:
    """OBP-shaped inputs (``action_dist[i, a, k]``: the target's probabilities; the reward
    model ``estimated_rewards[i, a, k]``) turned into per-round ``target``, ``q_logged`` and
    ``q_target``.

    >>> dist = np.array([[[0.2], [0.8]], [[1.0], [0.0]]])          # 2 rounds, 2 actions, 1 position
    >>> q = np.array([[[0.5], [0.1]], [[0.3], [0.9]]])
    >>> out = from_action_dist([1, 0], dist, estimated_rewards=q)
    >>> out["target"].tolist(), out["q_logged"].tolist(), out["q_target"].round(2).tolist()
    ([0.8, 1.0], [0.1, 0.3], [0.18, 0.3])
    """
    dist = np.asarray(action_dist, dtype=np.float64)
    if dist.ndim != 3:
        raise InputError(f"action_dist must be rounds x actions x positions, not {dist.ndim}-dimensional",
                         field="action_dist")
    rounds = np.arange(dist.shape[0])
    acts = np.asarray(action, dtype=np.int64)
    pos = np.zeros(len(acts), dtype=np.int64) if position is None else np.asarray(position, dtype=np.int64)
    if len(acts) != len(rounds) or len(pos) != len(rounds):
        raise InputError(f"{len(acts)} actions and {len(pos)} positions for {len(rounds)} rounds", field="action")
    if acts.min() < 0 or acts.max() >= dist.shape[1]:
        raise InputError(f"an action outside 0..{dist.shape[1] - 1}", field="action")
    out: dict[str, np.ndarray | None] = {"target": dist[rounds, acts, pos], "q_logged": None, "q_target": None}
    if estimated_rewards is not None:
        q = np.asarray(estimated_rewards, dtype=np.float64)
        if q.shape != dist.shape:
            raise InputError(f"estimated_rewards has shape {q.shape}, action_dist {dist.shape}",
                             field="estimated_rewards")
        at = dist[rounds, :, pos]
        out["q_logged"] = q[rounds, acts, pos]
        out["q_target"] = (at * q[rounds, :, pos]).sum(axis=1) / at.sum(axis=1)
    return out


__all__ = ["CLIPPED", "ESTIMATORS", "NEEDS_MODEL", "OPE_ESTIMATORS", "Estimator", "RoundTerms",
           "bootstrap_interval", "estimate", "estimate_all", "from_action_dist",
           "round_terms"]
