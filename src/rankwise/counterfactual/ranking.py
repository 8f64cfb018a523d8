"""Off-policy estimators for rankings: a target ranking's CTR@k or DCG@k from clicks logged
under another ranking, and OBP's slate estimators.

**Position-based IPS** (Joachims et al. 2017; Wang et al. 2016): under a position-based
examination model a click on document ``d`` shown at logged rank ``k_log`` divided by the
examination ``exam(k_log)`` is an unbiased estimate of ``d``'s attractiveness. Over ``n``
logged impressions::

    CTR@k(target) = 1/n  sum_impressions  sum_{clicked d, rank_t(d) <= k}  exam(rank_t(d)) / exam(k_log(d))
    DCG@k(target) = 1/n  sum_impressions  sum_{clicked d, rank_t(d) <= k}  (1 / log2(1 + rank_t(d))) / exam(k_log(d))

(``rank_t`` the target's rank, 1-based). Unbiased for the documents the logging policy can
show; what it never shows counts as zero (``coverage`` reports the target's top-k share that
the log shows). ``clip`` caps ``1 / exam(k_log)``. Examination comes from the caller or from a
randomised log by ``position_propensities``: when documents are placed at random, the CTR at
rank ``k`` is ``exam(k)`` times the same mean attractiveness, so ``exam(k) = CTR_k / CTR_1``.

**Slate estimators** (OBP's ``SlateStandardIPS``, ``SlateIndependentIPS``,
``SlateRewardInteractionIPS``): one row per (slate, position) with reward ``r_k``; the value
is ``sum_rows r_k pi_e / pi_b`` divided by the number of slates, where the propensities are
the whole slate's (``sips``), the item's at its position (``iips``, item-position click model)
or the prefix's down to ``k`` (``rips``, cascade). ``cascade_propensities`` turns
per-position conditional probabilities into the prefix products.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from rankwise.counterfactual.estimators import RoundTerms, bootstrap_interval
from rankwise.errors import InputError
from rankwise.params import Declared, Registry
from rankwise.results import Estimate, signed

GAINS = ("ctr", "dcg")


def position_propensities(position: Any, click: Any, ranks: int | None = None) -> np.ndarray:
    """Examination by rank (``exam[0]`` = 1) from a log where documents were placed at random:
    ``CTR_k / CTR_1`` for ranks ``1..ranks`` (positions 1-based in).

    >>> position_propensities([1, 1, 2, 2, 2, 2], [1, 0, 1, 0, 0, 0])   # CTR 1/2 and 1/4
    array([1. , 0.5])
    """
    pos = np.asarray(position, dtype=np.int64)
    clicks = np.asarray(click, dtype=np.float64)
    if len(pos) != len(clicks):
        raise InputError(f"{len(pos)} positions for {len(clicks)} clicks", field="position")
    if len(pos) == 0 or pos.min() < 1:
        raise InputError("positions are 1-based ranks", field="position")
    size = int(pos.max()) if ranks is None else int(ranks)
    shown = np.bincount(pos, minlength=size + 1)[1:size + 1]
    clicked = np.bincount(pos, weights=clicks, minlength=size + 1)[1:size + 1]
    if (shown == 0).any():
        raise InputError(f"no impression at rank {int(np.flatnonzero(shown == 0)[0]) + 1}", field="position")
    ctr = clicked / shown
    if ctr[0] <= 0:
        raise InputError("no click at rank 1: examination relative to rank 1 is undefined", field="click")
    return ctr / ctr[0]


def pbm_ips(impression: Any, logged_rank: Any, click: Any, target_rank: Any, examination: Any, k: int = 10,
            gain: str = "ctr", clip: float = np.inf, alpha: float = 0.05, resamples: int = 2000,
            seed: int = 0) -> Estimate:
    """Position-based IPS estimate of the target ranking's CTR@k or DCG@k (see the module), an
    ``Estimate`` (read like a dict).
    One row per shown document: its impression id, logged rank (1-based), click (0/1) and
    target rank (1-based; 0 or negative when the target does not rank it).

    >>> # one impression, clicks on the documents at logged ranks 1 and 2; the target ranks them 2 and 1
    >>> exam = [1.0, 0.5]
    >>> pbm_ips([0, 0], [1, 2], [1, 1], [2, 1], exam, k=2)["value"]   # 1 x 0.5 / 1 + 1 x 1.0 / 0.5
    2.5
    """
    if gain not in GAINS:
        raise InputError(f"unknown gain {gain!r}; expected one of {', '.join(GAINS)}", field="gain")
    ids = np.asarray(impression)
    log_rank = np.asarray(logged_rank, dtype=np.int64)
    clicks = np.asarray(click, dtype=np.float64)
    target = np.asarray(target_rank, dtype=np.int64)
    exam = np.asarray(examination, dtype=np.float64)
    if not len(ids) == len(log_rank) == len(clicks) == len(target):
        raise InputError("impression, logged_rank, click and target_rank differ in length", field="impression")
    if len(ids) == 0:
        raise InputError("no logged rows", field="impression")
    if log_rank.min() < 1 or log_rank.max() > len(exam):
        raise InputError(f"a logged rank outside 1..{len(exam)} (the examination's ranks)", field="logged_rank")
    if (exam <= 0).any():
        raise InputError("examination probabilities must be positive", field="examination")
    _, session = np.unique(ids, return_inverse=True)
    sessions = int(session.max()) + 1
    inverse = np.minimum(1.0 / exam[log_rank - 1], clip)
    in_top = (target >= 1) & (target <= k)
    safe = np.clip(target, 1, None)
    if gain == "ctr":
        weight = np.where(in_top, exam[np.minimum(safe, len(exam)) - 1], 0.0)
        if k > len(exam):
            raise InputError(f"CTR@{k} needs examination down to rank {k}; given {len(exam)}", field="examination")
    else:
        weight = np.where(in_top, 1.0 / np.log2(1.0 + safe), 0.0)
    per_row = clicks * inverse * weight
    per_session = np.bincount(session, weights=per_row, minlength=sessions)
    terms = RoundTerms(per_session, np.ones(sessions), np.zeros(sessions))
    low, high = bootstrap_interval(terms, alpha, resamples, seed)
    return Estimate({"estimator": f"pbm-ips {gain}@{k}", "value": float(terms.value()), "ci_low": low,
                     "ci_high": high,
                     "se": float(per_session.std(ddof=1) / np.sqrt(sessions)) if sessions > 1 else float("nan"),
                     "n": sessions, "clipped": int((1.0 / exam[log_rank - 1] > clip).sum())},
                    signed("pbm-ips", {"k": k, "gain": gain, "clip": clip, "alpha": alpha, "resamples": resamples,
                                       "seed": seed}))


def cascade_propensities(slate_id: Any, position: Any, conditional: Any) -> np.ndarray:
    """Prefix products of per-position probabilities within each slate: the probability of
    the slate's top ``k`` (RIPS' propensity), rows in any order.

    >>> cascade_propensities([7, 7, 7, 8], [1, 2, 3, 1], [0.5, 0.5, 0.2, 0.1]).tolist()
    [0.5, 0.25, 0.05, 0.1]
    """
    import pandas as pd

    frame = pd.DataFrame({"slate": np.asarray(slate_id), "position": np.asarray(position, dtype=np.int64),
                          "p": np.asarray(conditional, dtype=np.float64)})
    if len(frame) and not ((frame["p"] > 0) & (frame["p"] <= 1)).all():
        raise InputError("a conditional probability outside (0, 1]", field="conditional")
    ordered = frame.sort_values(["slate", "position"], kind="stable")
    return ordered.groupby("slate", sort=False)["p"].cumprod().reindex(frame.index).to_numpy()


def slate_estimate(slate_id: Any, reward: Any, behavior: Any, target: Any, estimator: str = "iips",
                   alpha: float = 0.05, resamples: int = 2000, seed: int = 0) -> Estimate:
    """OBP's slate estimators: ``sum_rows r pi_e / pi_b / slates`` with the propensities the
    estimator names (joint for ``sips``, item-position for ``iips``, prefix for ``rips``).

    >>> # two slates of two positions; w = 2, 1 in the first and 0.5, 4 in the second
    >>> slate_estimate([0, 0, 1, 1], [1, 0, 1, 1], [0.5, 0.5, 0.5, 0.25], [1, 0.5, 0.25, 1])["value"]
    3.25

    (slate 0: ``1 x 2 + 0 x 1 = 2``; slate 1: ``1 x 0.5 + 1 x 4 = 4.5``; ``(2 + 4.5) / 2``.)
    """
    member, values = SLATE.parse(estimator)
    slates = np.asarray(slate_id)
    r = np.asarray(reward, dtype=np.float64)
    b = np.asarray(behavior, dtype=np.float64)
    e = np.asarray(target, dtype=np.float64)
    if not len(slates) == len(r) == len(b) == len(e):
        raise InputError("slate_id, reward, behavior and target differ in length", field="slate_id")
    if (b <= 0).any():
        raise InputError("a logging propensity must be positive", field="behavior")
    _, group = np.unique(slates, return_inverse=True)
    per_slate_value: SlateValues = member.target
    per_slate = np.asarray(per_slate_value(group, r, b, e, **values), dtype=np.float64)
    terms = RoundTerms(per_slate, np.ones(len(per_slate)), np.zeros(len(per_slate)))
    low, high = bootstrap_interval(terms, alpha, resamples, seed)
    spelled = member.spelled(values)
    return Estimate({"estimator": spelled, "value": float(terms.value()), "ci_low": low, "ci_high": high,
                     "se": float(per_slate.std(ddof=1) / np.sqrt(len(per_slate))) if len(per_slate) > 1
                     else float("nan"), "n": int(len(per_slate))},
                    signed("slate", {"estimator": spelled, "alpha": alpha, "resamples": resamples, "seed": seed}))


class SlateValues(Protocol):
    """A slate estimator's ``target``: each slate's value from its rows (``slate`` the slate's
    index, 0 .. slates - 1; reward, logging and target propensities per row)."""

    def __call__(self, slate: np.ndarray, reward: np.ndarray, behavior: np.ndarray, target: np.ndarray,
                 **params: Any) -> np.ndarray: ...


def weighted_rewards(slate: np.ndarray, reward: np.ndarray, behavior: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``sum over the slate's rows of r pi_e / pi_b``: every OBP slate estimator, with the
    propensities its name says (the caller computes them).

    >>> weighted_rewards(np.array([0, 0, 1]), np.array([1.0, 1.0, 1.0]), np.array([0.5, 0.5, 0.5]),
    ...                  np.array([1.0, 0.5, 0.25])).tolist()   # 2 + 1, 0.5
    [3.0, 0.5]
    """
    return np.bincount(slate, weights=reward * target / behavior)


SLATE: Registry[Declared[Callable[..., np.ndarray]]] = Registry("slate estimator", (
    Declared("sips", weighted_rewards, "Standard slate IPS: the whole slate's propensities.",
             reference="OBP SlateStandardIPS"),
    Declared("iips", weighted_rewards, "Independent IPS: the item's propensity at its position (item-position "
             "click model).", reference="Li et al. 2018; OBP SlateIndependentIPS"),
    Declared("rips", weighted_rewards, "Reward-interaction IPS: the prefix's propensity down to the position "
             "(cascade).", reference="McInerney et al. 2020; OBP SlateRewardInteractionIPS"),
), option="--estimator")
"""The slate estimators; each is ``weighted_rewards`` with the propensities its name says
(``SlateValues``: a new estimator declares its own per-slate value and parameters)."""

SLATE_ESTIMATORS = tuple(SLATE.names())

__all__ = ["GAINS", "SLATE", "SLATE_ESTIMATORS", "SlateValues", "cascade_propensities", "pbm_ips",
           "position_propensities", "slate_estimate", "weighted_rewards"]
