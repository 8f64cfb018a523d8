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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.errors import InputError

ESTIMATORS = ("ips", "snips", "dm", "dr", "sndr", "switch-dr")
NEEDS_MODEL = ("dm", "dr", "sndr", "switch-dr")


@dataclass(frozen=True)
class RoundTerms:
    """An estimate as ``sum(numerator) / sum(denominator) + mean(added)`` over rounds, the
    form every estimator here takes, so a bootstrap resample recomputes it exactly."""

    numerator: np.ndarray
    denominator: np.ndarray
    added: np.ndarray

    def value(self, rows: np.ndarray | None = None) -> np.ndarray | float:
        if rows is None:
            return float(self.numerator.sum() / self.denominator.sum() + self.added.mean())
        return self.numerator[rows].sum(axis=-1) / self.denominator[rows].sum(axis=-1) + self.added[rows].mean(axis=-1)


def _column(values: Any, name: str, size: int | None = None) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).ravel()
    if size is not None and len(array) != size:
        raise InputError(f"{name} has {len(array)} values for {size} rounds", field=name)
    bad = ~np.isfinite(array)
    if bad.any():
        raise InputError(f"{name} is not a finite number in round {int(np.flatnonzero(bad)[0])}", field=name)
    return array


def round_terms(estimator: str, reward: Any, behavior: Any, target: Any, q_logged: Any = None,
                q_target: Any = None, clip: float = np.inf) -> RoundTerms:
    """The per-round terms of ``estimator`` (see the module for the definitions).

    >>> terms = round_terms("ips", [1, 0, 1], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5])   # w = 2, 1, 2
    >>> terms.value()   # (2 x 1 + 1 x 0 + 2 x 1) / 3
    1.3333333333333333
    """
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}",
                         field="estimator")
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
    ones = np.ones(n)
    zeros = np.zeros(n)
    if estimator in NEEDS_MODEL:
        if q_logged is None or q_target is None:
            raise InputError(f"{estimator} needs a reward model: q_logged and q_target", field="q_logged")
        q_log = _column(q_logged, "q_logged", n)
        q_tgt = _column(q_target, "q_target", n)
    if estimator == "ips":
        return RoundTerms(np.minimum(w, clip) * r, ones, zeros)
    if estimator == "snips":
        return RoundTerms(w * r, w, zeros)
    if estimator == "dm":
        return RoundTerms(zeros, ones, q_tgt)
    if estimator == "dr":
        return RoundTerms(np.minimum(w, clip) * (r - q_log), ones, q_tgt)
    if estimator == "sndr":
        return RoundTerms(w * (r - q_log), w, q_tgt)
    return RoundTerms(np.where(w <= clip, w, 0.0) * (r - q_log), ones, q_tgt)


def bootstrap_interval(terms: RoundTerms, alpha: float = 0.05, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``terms.value()``, resampling rounds with replacement."""
    rng = np.random.default_rng(seed)
    n = len(terms.numerator)
    values = []
    chunk = max(1, 2_000_000 // max(n, 1))
    for start in range(0, resamples, chunk):
        rows = rng.integers(n, size=(min(chunk, resamples - start), n))
        with np.errstate(invalid="ignore", divide="ignore"):
            values.append(np.asarray(terms.value(rows)))
    draws = np.concatenate(values)
    low, high = np.nanquantile(draws, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def estimate(reward: Any, behavior: Any, target: Any, estimator: str = "ips", q_logged: Any = None,
             q_target: Any = None, clip: float = np.inf, alpha: float = 0.05, resamples: int = 2000,
             seed: int = 0) -> dict[str, Any]:
    """One estimator's value with its bootstrap interval and diagnostics.

    >>> row = estimate([1, 0, 1, 0], [0.5] * 4, [0.5, 0.5, 1.0, 0.0], "snips")
    >>> row["value"]   # weights 1, 1, 2, 0: (1 + 0 + 2 + 0) / 4
    0.75
    >>> row["effective_n"]   # (1 + 1 + 2 + 0)^2 / (1 + 1 + 4 + 0)
    2.6666666666666665
    """
    terms = round_terms(estimator, reward, behavior, target, q_logged, q_target, clip)
    w = np.asarray(target, dtype=np.float64).ravel() / np.asarray(behavior, dtype=np.float64).ravel()
    value = terms.value()
    low, high = bootstrap_interval(terms, alpha, resamples, seed)
    per_round = terms.numerator * len(w) / terms.denominator.sum() + terms.added
    weight_sq = float((w ** 2).sum())
    return {"estimator": estimator, "value": float(value), "ci_low": low, "ci_high": high,
            "se": float(per_round.std(ddof=1) / np.sqrt(len(w))) if len(w) > 1 else float("nan"),
            "n": int(len(w)), "effective_n": float(w.sum() ** 2 / weight_sq) if weight_sq > 0 else 0.0,
            "max_weight": float(w.max()),
            "clipped": int((w > clip).sum()) if estimator in ("ips", "dr", "switch-dr") else 0}


def estimate_all(reward: Any, behavior: Any, target: Any, estimators: Sequence[str] = ESTIMATORS,
                 q_logged: Any = None, q_target: Any = None, clip: float = np.inf, alpha: float = 0.05,
                 resamples: int = 2000, seed: int = 0) -> Any:
    """A table (pandas) of ``estimate`` for several estimators; the model-based ones are left
    out, with a note in ``table.attrs["skipped"]``, when no reward model is given.

    >>> table = estimate_all([1, 0], [0.5, 0.5], [0.5, 0.5], estimators=("ips", "dm"))
    >>> table["estimator"].tolist(), table.attrs["skipped"]
    (['ips'], ['dm'])
    """
    import pandas as pd

    rows, skipped = [], []
    for name in estimators:
        if name in NEEDS_MODEL and (q_logged is None or q_target is None):
            skipped.append(name)
            continue
        rows.append(estimate(reward, behavior, target, name, q_logged, q_target, clip, alpha, resamples, seed))
    table = pd.DataFrame(rows)
    table.attrs["skipped"] = skipped
    return table


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


__all__ = ["ESTIMATORS", "RoundTerms", "bootstrap_interval", "estimate", "estimate_all", "from_action_dist",
           "round_terms"]
