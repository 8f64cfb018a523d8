"""Logged bandit feedback from files, target policies and the off-policy evaluation of a
policy on a log: what ``rankwise ope`` runs.

A log has one row per shown action: the action (item) id, its position (1-based; absent:
one position), the reward (click) and the logging propensity ``pi_b(action | position)``.
A target policy is context-free here: a probability per (action, position), given

- as ``"uniform"``: ``1 / (number of actions in the log)`` at every position;
- as a table with columns ``action``, ``probability`` and optionally ``position``;
- or from another log (``policy_from_log``), for a context-free policy such as the Open
  Bandit Dataset's: each (action, position)'s time-averaged probability, estimated by the
  harmonic mean of its logged propensities (a row is logged with probability ``p_t``, so
  ``E[1 / p | logged] = T / sum_t p_t``; the plain mean of logged propensities is biased
  upward, since high-propensity moments are logged more), rescaled to sum to 1 at each
  position (the sums before rescaling are in ``policy_sums``). A logged action the other log
  never shows at its position gets probability 0 (counted in a warning).

The reward model for the model-based estimators is each (action, position)'s mean reward
shrunk toward its position's mean reward with ``prior`` pseudo-rounds:
``q(a, k) = (sum r + prior x mean_k) / (n + prior)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.counterfactual.estimators import ESTIMATORS, OPE_ESTIMATORS, estimate
from rankwise.data.distinct import distinct
from rankwise.data.tables import location, number_column, tables_of
from rankwise.errors import InputError


@dataclass
class BanditLog:
    """Rows of logged bandit feedback (actions as strings)."""

    action: np.ndarray
    position: np.ndarray
    reward: np.ndarray
    pscore: np.ndarray
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.reward)


def _floats(table: Any, column: str, name: str, first: int) -> np.ndarray:
    return np.asarray(number_column(name, first, table.column(column).combine_chunks(), column), dtype=np.float64)


def read_bandit_log(data: Any, action: str = "action", position: str | None = "position", reward: str = "reward",
                    pscore: str = "pscore") -> BanditLog:
    """Read a log (CSV, TSV, Parquet, JSONL, gzipped or not, several files, a DataFrame or a
    dict of columns). ``position=None``: one position for every row.

    >>> log = read_bandit_log({"item": ["a", "b"], "click": [1, 0], "p": [0.5, 0.5]}, action="item",
    ...                       position=None, reward="click", pscore="p")
    >>> log.action.tolist(), log.position.tolist(), log.reward.tolist()
    (['a', 'b'], [1, 1], [1.0, 0.0])
    """
    columns = [action, reward, pscore] + ([position] if position else [])
    return _log_from_pieces(tables_of(data, columns, ids=[action]), action, position, reward, pscore)


def _action_ids(column: Any, name: str, first: int, field: str) -> np.ndarray:
    """The action of every row as text; an empty or missing action is an error (it would be an
    action named '' or 'None')."""
    import pyarrow as pa

    from rankwise.data.tables import location, refuse_blank

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError("empty action; every row needs one", field=field, **location(name, first, row))
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_dictionary(column.type):
        refuse_blank(name, first, column, field)
    return np.asarray([str(v) for v in column.to_pylist()], dtype=object)


def _log_from_pieces(pieces: list[tuple[str, int, Any]], action: str, position: str | None, reward: str,
                     pscore: str) -> BanditLog:
    actions, positions, rewards, pscores, sources = [], [], [], [], []
    for name, first, table in pieces:
        missing = [c for c in (action, reward, pscore, position) if c and c not in table.column_names]
        if missing:
            raise InputError(f"no column {missing[0]!r}; the columns are {table.column_names}", source=name,
                             field=missing[0])
        sources.append(name)
        actions.append(_action_ids(table.column(action).combine_chunks(), name, first, action))
        r = _floats(table, reward, name, first)
        p = _floats(table, pscore, name, first)
        bad = (p <= 0) | (p > 1)
        if bad.any():
            raise InputError(f"a logging propensity must be in (0, 1], got {p[bad][0]}", field=pscore,
                             **location(name, first, int(np.flatnonzero(bad)[0])))
        if position:
            k = _floats(table, position, name, first)
            bad = (k < 1) | (k != np.round(k))
            if bad.any():
                raise InputError(f"a position is a whole number from 1, got {k[bad][0]}", field=position,
                                 **location(name, first, int(np.flatnonzero(bad)[0])))
            positions.append(k.astype(np.int64))
        else:
            positions.append(np.ones(len(r), dtype=np.int64))
        rewards.append(r)
        pscores.append(p)
    log = BanditLog(np.concatenate(actions), np.concatenate(positions), np.concatenate(rewards),
                    np.concatenate(pscores), sources)
    if len(log) == 0:
        raise InputError("no logged rounds", source=", ".join(sources) or "<input>")
    return log


Policy = dict[tuple[str, int], float]


def uniform_policy(log: BanditLog) -> Policy:
    """``1 / (number of distinct actions)`` for every action at every logged position."""
    actions = sorted(set(log.action.tolist()))
    return {(a, int(k)): 1.0 / len(actions) for a in actions for k in distinct(log.position).tolist()}


def policy_sums(policy: Policy) -> dict[int, float]:
    """Total probability of a policy at each position."""
    sums: dict[int, float] = {}
    for (_, k), p in policy.items():
        sums[k] = sums.get(k, 0.0) + p
    return dict(sorted(sums.items()))


def policy_from_log(log: BanditLog, rescale: bool = True) -> Policy:
    """Each (action, position)'s time-averaged probability under the policy that logged
    ``log``: the harmonic mean of its logged propensities, rescaled to sum to 1 at each
    position (see the module).

    >>> log = read_bandit_log({"action": ["a", "a", "b"], "position": [1, 1, 1], "reward": [0, 1, 0],
    ...                        "pscore": [0.5, 1.0, 0.25]})
    >>> policy_from_log(log, rescale=False)   # a: 1 / mean(2, 1) = 2/3; b: 1 / 4
    {('a', 1): 0.6666666666666666, ('b', 1): 0.25}
    """
    import pandas as pd

    frame = pd.DataFrame({"action": log.action, "position": log.position, "inverse": 1.0 / log.pscore})
    means = 1.0 / frame.groupby(["action", "position"], sort=True)["inverse"].mean()
    policy = {(str(a), int(k)): float(v) for (a, k), v in means.items()}
    if rescale:
        sums = policy_sums(policy)
        policy = {(a, k): p / sums[k] for (a, k), p in policy.items()}
    return policy


def policy_from_table(data: Any) -> Policy:
    """A policy table: ``action``, ``probability`` and optionally ``position`` (else every
    position)."""
    return _policy_from_pieces(tables_of(data, None, ids=["action"]))


def _policy_from_pieces(pieces: list[tuple[str, int, Any]]) -> Policy:
    out: Policy = {}
    for name, first, table in pieces:
        if "action" not in table.column_names or "probability" not in table.column_names:
            raise InputError("a policy table needs the columns action and probability (and optionally position)",
                             source=name, line=first)
        p = _floats(table, "probability", name, first)
        bad = (p < 0) | (p > 1)
        if bad.any():
            raise InputError(f"a probability must be in [0, 1], got {p[bad][0]}", field="probability",
                             **location(name, first, int(np.flatnonzero(bad)[0])))
        actions = [str(v) for v in table.column("action").to_pylist()]
        positions = (_floats(table, "position", name, first).astype(int)
                     if "position" in table.column_names else np.zeros(len(p), dtype=int))
        for a, k, v in zip(actions, positions.tolist(), p.tolist(), strict=True):
            out[(a, int(k))] = v
    return out


def target_policy(spec: Any, action: str = "action", position: str | None = "position", reward: str = "reward",
                  pscore: str = "pscore") -> tuple[Policy | str, list[str]]:
    """The policy ``spec`` names, read once: ``"uniform"``; a table with a ``probability``
    column (``policy_from_table``); or another log with the same columns
    (``policy_from_log``, with a warning giving its sums per position before rescaling).

    >>> target_policy({"action": ["a", "b"], "probability": [0.25, 0.75]})
    ({('a', 0): 0.25, ('b', 0): 0.75}, [])
    """
    if isinstance(spec, str) and spec == "uniform":
        return "uniform", []
    pieces = tables_of(spec, None, ids=list(dict.fromkeys(["action", action])))   # actions as the log reads them
    if all("probability" in table.column_names for _, _, table in pieces):
        return _policy_from_pieces(pieces), []
    other = _log_from_pieces(pieces, action, position, reward, pscore)
    raw = policy_sums(policy_from_log(other, rescale=False))
    note = ("policy from a log: probabilities per position summed to "
            + ", ".join(f"{v:.3f} (position {k})" for k, v in raw.items()) + " before rescaling to 1")
    return policy_from_log(other), [note]


def _probabilities(policy: Policy, log: BanditLog) -> np.ndarray:
    every_position = any(k == 0 for _, k in policy)
    return np.array([policy.get((a, int(k)), policy.get((a, 0), 0.0) if every_position else 0.0)
                     for a, k in zip(log.action.tolist(), log.position.tolist(), strict=True)])


def reward_model(log: BanditLog, policy: Policy, prior: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``q_logged`` (the model at each logged action) and ``q_target`` (the model averaged
    over the policy at each row's position); see the module for the model."""
    import pandas as pd

    frame = pd.DataFrame({"action": log.action, "position": log.position, "r": log.reward})
    position_mean = frame.groupby("position")["r"].mean()
    stats = frame.groupby(["action", "position"])["r"].agg(["sum", "count"])
    q: dict[tuple[str, int], float] = {}
    for (a, k), row in stats.iterrows():
        q[(str(a), int(k))] = (row["sum"] + prior * position_mean[k]) / (row["count"] + prior)
    q_logged = np.array([q[(a, int(k))] for a, k in zip(log.action.tolist(), log.position.tolist(), strict=True)])
    q_target_by_position = {}
    for k in position_mean.index:
        weights = {a: p for (a, kk), p in policy.items() if kk in (k, 0) and p > 0}
        total = sum(weights.values())
        q_target_by_position[int(k)] = (sum(p * q.get((a, int(k)), float(position_mean[k])) for a, p in weights.items())
                                        / total if total > 0 else float(position_mean[k]))
    return q_logged, np.array([q_target_by_position[int(k)] for k in log.position.tolist()])


@dataclass
class OPEResult:
    """``table`` (one row per estimator), the log's own (on-policy) mean reward, warnings."""

    table: Any
    on_policy: float
    rounds: int
    warnings: list[str]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Settings, rounds, the on-policy mean, one row per estimator, warnings (JSON-plain)."""
        from rankwise.results import json_plain

        return json_plain({"settings": self.settings, "rounds": self.rounds, "on_policy": self.on_policy,
                           "estimates": self.table, "warnings": self.warnings}, nan_as_null=False)


def evaluate_policy(log: BanditLog, policy: Policy | str, estimators: Sequence[str] = ESTIMATORS,
                    clip: float = np.inf, prior: float = 1.0, alpha: float = 0.05, resamples: int = 2000,
                    seed: int = 0, policy_name: str = "target") -> OPEResult:
    """Every estimator's value of ``policy`` on ``log``, with intervals.

    >>> log = read_bandit_log({"action": ["a", "b", "a", "b"], "position": [1] * 4, "reward": [1, 0, 1, 1],
    ...                        "pscore": [0.5] * 4})
    >>> result = evaluate_policy(log, {("a", 1): 1.0}, estimators=["ips"], resamples=100)
    >>> float(result.table["value"].iloc[0])   # clicks on a (1 + 1) x weight 2 over 4 rounds
    1.0
    """
    import pandas as pd

    warnings = []
    if isinstance(policy, str):
        if policy != "uniform":
            raise InputError(f"unknown policy {policy!r}: give 'uniform', a table or a log", field="policy")
        policy = uniform_policy(log)
    estimators = [OPE_ESTIMATORS.get(name).name for name in estimators]
    target = _probabilities(policy, log)
    unseen = int((target == 0).sum())
    if unseen:
        warnings.append(f"{unseen} of {len(log)} logged rounds show an action the target policy never plays at that "
                        "position: their weight is 0")
    q_logged = q_target = None
    if any(OPE_ESTIMATORS.get(e).needs_model for e in estimators):
        q_logged, q_target = reward_model(log, policy, prior)
    rows = [estimate(log.reward, log.pscore, target, e, q_logged, q_target, clip, alpha, resamples, seed).row
            for e in estimators]
    settings = {"policy": policy_name, "clip": clip, "prior": prior, "alpha": alpha, "resamples": resamples,
                "seed": seed, "log": ", ".join(log.sources)}
    from rankwise.results import signed

    return OPEResult(pd.DataFrame(rows), float(log.reward.mean()), len(log), warnings, signed("ope", settings))


__all__ = ["BanditLog", "OPEResult", "evaluate_policy", "policy_from_log", "policy_from_table", "policy_sums",
           "read_bandit_log", "reward_model", "target_policy", "uniform_policy"]
