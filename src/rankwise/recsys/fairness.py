"""Fairness of recommendation lists to items and their providers: popularity bias as parity
between the short head and the long tail (PopRSP, PopREO), and the exposure item groups get
from users' attention (AWRF, the exposure ratio, the per-group table).

Attention at rank r (1-based) follows a browsing model (``Attention``): ``geometric``,
``patience^(r-1)`` (RBP's user, TREC Fair Ranking's); ``log``, ``1 / log2(r + 1)`` (DCG's);
``uniform``, 1 for every rank of the top k. An item in several groups splits its attention
equally between them; an item without a group gives its attention to none (left out of the
group distribution).

>>> attention_weights(np.array([0, 1, 2]), "geometric", 0.5).tolist()
[1.0, 0.5, 0.25]
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import numpy as np

from rankwise.data.distinct import distinct, member
from rankwise.errors import InputError
from rankwise.recsys.common import Value, _mean
from rankwise.recsys.inputs import RecsysData, keys_of

Attention = Literal["geometric", "log", "uniform", "trec_fair"]
"""How a user's attention falls with the rank (see the module)."""
ATTENTIONS: tuple[Attention, ...] = get_args(Attention)
Target = Literal["catalogue", "equal", "relevant"]
"""The group distribution a fair list's attention follows: the groups' shares of the catalogue,
equal shares, or their shares of the user's relevant (held-out) items."""
TARGETS: tuple[Target, ...] = get_args(Target)


def attention_weights(rank: np.ndarray, attention: Attention = "geometric", patience: float = 0.5) -> np.ndarray:
    """Attention at each 0-based ``rank`` under the browsing model ``attention``."""
    if attention == "geometric":
        return np.power(float(patience), rank.astype(np.float64))
    if attention == "log":
        return 1.0 / np.log2(rank + 2.0)
    if attention == "trec_fair":   # TREC Fair Ranking 2021-22: 1 / log2(max(r, 2)), r from 1
        return 1.0 / np.log2(np.maximum(rank + 1.0, 2.0))
    return np.ones(len(rank))


def universe(data: RecsysData) -> np.ndarray:
    """Which item codes are in the catalogue: the one given, else every item the training
    interactions, the held-out interactions or the lists name."""
    inside = np.zeros(len(data.vocabulary), dtype=bool)
    if data.catalogue is not None:
        inside[data.catalogue] = True
        return inside
    inside[data.items] = True
    if data.train_item is not None:
        inside[data.train_item] = True
    if data.relevant is not None:
        inside[data.relevant[1]] = True
    return inside


def short_head(data: RecsysData, head_share: float = 0.8) -> np.ndarray:
    """Which item codes are in the short head: the items by distinct training users, most
    first (ties by id), taken until they hold ``head_share`` of the (user, item) training
    pairs, the item that reaches it included (Elliot's ``get_short_head``; Abdollahpouri et
    al. 2019). Every other catalogue item is the long tail."""
    popularity = data.user_popularity
    order = np.argsort(-popularity, kind="stable")
    total = float(popularity.sum())
    head = np.zeros(len(popularity), dtype=bool)
    if total > 0:
        cumulative = np.cumsum(popularity[order])
        head[order[: int(np.searchsorted(cumulative, head_share * total, side="left")) + 1]] = True
    return head


def _train_lists(data: RecsysData) -> tuple[np.ndarray, np.ndarray]:
    """(list index, item code) of the distinct training pairs of users who have a list."""
    owner, item = data.train_by_list()
    key = distinct(owner * len(data.vocabulary) + item)
    return key // len(data.vocabulary), key % len(data.vocabulary)


def _relevant_pairs(data: RecsysData) -> tuple[np.ndarray, np.ndarray]:
    """(list index, item code) of every held-out relevant pair."""
    if data.relevant is None:
        raise InputError("no held-out interactions: give test= (which items each user liked)", field="test")
    return data.relevant


def _parity(rates: np.ndarray) -> float:
    """std / mean of the groups' rates (population std, as Elliot's ``np.std``)."""
    return float(np.std(rates) / np.mean(rates)) if np.mean(rates) > 0 else math.nan


def popularity_rsp(data: RecsysData, k: int, head_share: float = 0.8) -> Value:
    """PopRSP (Zhu et al. 2021, ranking-based statistical parity; Elliot's ``PopRSP``): for the
    short head and the long tail, P(g) = recommended top-k slots holding items of g / the items
    of g each user had not interacted with, summed over users; PopRSP = std(P) / mean(P). 0:
    both groups are recommended in proportion to what could be; larger: one is favoured.

    >>> data = RecsysData.build({"u1": ["a", "b"], "u2": ["a", "c"]}, train={"u1": ["a"], "u2": ["a", "b"]})
    >>> # users per item: a 2, b 1, c 0 of 3 pairs; head (0.8 of 3 = 2.4): a, b; tail: c
    >>> # head: 3 slots (u1's a and b, u2's a) / head items each user had not seen (u1: b; u2: none) = 3/1
    >>> # tail: 1 slot (u2's c) / unseen tail items (c, for each user) = 1/2; std/mean of (3, 0.5) = 1.25/1.75
    >>> round(popularity_rsp(data, 2)[0], 6)
    0.714286
    """
    head = short_head(data, head_share)
    inside = universe(data)
    items, _, _ = data.top(k)
    seen_list, seen_item = _train_lists(data)
    rates = []
    for group in (head & inside, ~head & inside):
        shown = float(group[items].sum())
        unseen = group.sum() * data.n_lists - float(group[seen_item].sum())
        rates.append(shown / unseen if unseen > 0 else 0.0)
    return _parity(np.array(rates)), None


def popularity_reo(data: RecsysData, k: int, head_share: float = 0.8) -> Value:
    """PopREO (Zhu et al. 2021, ranking-based equal opportunity; Elliot's ``PopREO``): for the
    short head and the long tail, P(g) = held-out relevant items of g recommended in the top k /
    held-out relevant items of g, summed over users; PopREO = std(P) / mean(P). 0: a relevant
    item is as likely to be recommended in either group.

    >>> data = RecsysData.build({"u1": ["a", "b"], "u2": ["a", "c"]}, train={"u1": ["a"], "u2": ["a", "b"]},
    ...                         test={"u1": ["b", "c"], "u2": ["c"]})
    >>> # head {a, b}: relevant b (u1), recommended: 1/1; tail {c}: relevant c (u1, u2), recommended u2's: 1/2
    >>> round(popularity_reo(data, 2)[0], 6)   # std/mean of (1, 0.5)
    0.333333
    """
    head = short_head(data, head_share)
    inside = universe(data)
    items, owner, _ = data.top(k)
    _, rel_item = _relevant_pairs(data)
    recommended = items[data.is_relevant(owner, items)]   # each relevant pair shown in the top k, once
    rates = []
    for group in (head & inside, ~head & inside):
        relevant = group[rel_item]
        rates.append(float(group[recommended].sum()) / float(relevant.sum()) if relevant.any() else 0.0)
    return _parity(np.array(rates)), None


def _groups_of(data: RecsysData) -> np.ndarray:
    if data.groups is None:
        raise InputError("fairness between item groups needs the groups (groups=, --groups)", field="groups")
    return data.groups


def _catalogue_shares(data: RecsysData) -> np.ndarray:
    """Each group's share of the catalogue's items (an item in several groups split)."""
    mass = _groups_of(data)[universe(data)].sum(axis=0)
    return mass / mass.sum() if mass.sum() > 0 else mass


def list_exposure(data: RecsysData, k: int, attention: Attention = "geometric",
                  patience: float = 0.5) -> np.ndarray:
    """Each list's attention per group (lists x groups): the attention of the top-k ranks
    holding the group's items."""
    from scipy import sparse

    groups = _groups_of(data)
    items, owner, rank = data.top(k)
    weight = attention_weights(rank, attention, patience)
    attention_on = sparse.csr_matrix((weight, (owner, items)), shape=(data.n_lists, groups.shape[0]))
    return np.asarray(attention_on @ groups)   # lists x groups, never rows x groups


def _jensen_shannon(p: np.ndarray, q: np.ndarray, log: Any = np.log2) -> np.ndarray:
    """Jensen-Shannon divergence between the rows of p and q (bits, in [0, 1]; ``log=np.log``:
    nats, in [0, ln 2])."""
    m = (p + q) / 2

    def kl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, a * log(a / np.where(b > 0, b, 1.0)), 0.0).sum(axis=1)

    return np.asarray(kl(p, m) / 2 + kl(q, m) / 2)


def awrf(data: RecsysData, k: int, attention: Attention = "geometric", patience: float = 0.5,
         target: Target = "catalogue", convention: str = "rankwise") -> Value:
    """AWRF (attention-weighted rank fairness; Sapiezynski et al. 2019, TREC Fair Ranking
    2021-22): per user, 1 - JSD(d, t), d the list's attention per item group normalised to
    sum 1, t the ``target`` distribution (the groups' catalogue shares, equal shares, or their
    shares of the user's held-out relevant items) and JSD the Jensen-Shannon divergence in
    bits; mean over users. 1: attention follows the target exactly. ``convention="trec_fair"``
    is TREC Fair Ranking 2021-22's evaluation: attention 1/log2(max(r, 2)) at rank r (the
    first two ranks alike; ``attention`` is not read) and the divergence in nats (scipy's
    ``jensenshannon`` squared).

    >>> data = RecsysData.build({"u": ["x", "y"]}, catalogue=["x", "y", "z"], groups={"x": "A", "y": "B", "z": "B"})
    >>> # attention 1 and 0.5: d = (2/3, 1/3); catalogue: t = (1/3, 2/3); m = (1/2, 1/2)
    >>> # KL(d || m) = KL(t || m) = 2/3 log2(4/3) + 1/3 log2(2/3) = 0.081704 = JSD
    >>> round(awrf(data, 2)[0], 6)
    0.918296
    """
    trec = convention == "trec_fair"
    exposure = list_exposure(data, k, "trec_fair" if trec else attention, patience)
    total = exposure.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(total > 0, exposure / np.where(total > 0, total, 1.0), np.nan)
    if target == "catalogue":
        t = np.broadcast_to(_catalogue_shares(data), d.shape)
    elif target == "equal":
        t = np.full(d.shape, 1.0 / d.shape[1])
    else:
        rel_list, rel_item = _relevant_pairs(data)
        mass = np.zeros_like(d)
        np.add.at(mass, rel_list, _groups_of(data)[rel_item])
        norm = mass.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(norm > 0, mass / np.where(norm > 0, norm, 1.0), np.nan)
    per_user = 1.0 - _jensen_shannon(np.nan_to_num(d), np.nan_to_num(t), np.log if trec else np.log2)
    undefined = np.isnan(d).any(axis=1) | np.isnan(t).any(axis=1)
    per_user = np.where(undefined, np.nan, per_user)
    return _mean(per_user), per_user


def group_exposure(data: RecsysData, k: int, attention: Attention = "geometric", patience: float = 0.5) -> Any:
    """Per item group: its catalogue items, its share of the catalogue, its share of all the
    users' attention, and their ratio (1: exposure in proportion to its size), as a DataFrame.

    >>> data = RecsysData.build({"u": ["x", "y"]}, catalogue=["x", "y", "z"], groups={"x": "A", "y": "B", "z": "B"})
    >>> group_exposure(data, 2).round(4).to_dict("list")["exposure_ratio"]   # (2/3) / (1/3), (1/3) / (2/3)
    [2.0, 0.5]
    """
    import pandas as pd

    exposure = list_exposure(data, k, attention, patience).sum(axis=0)
    share = exposure / exposure.sum() if exposure.sum() > 0 else exposure
    catalogue = _catalogue_shares(data)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(catalogue > 0, share / np.where(catalogue > 0, catalogue, 1.0), np.nan)
    return pd.DataFrame({"group": data.group_names, "items": _groups_of(data)[universe(data)].sum(axis=0),
                         "catalogue_share": catalogue, "exposure_share": share, "exposure_ratio": ratio})


def exposure_ratio(data: RecsysData, k: int, attention: Attention = "geometric", patience: float = 0.5) -> Value:
    """The least exposed group's exposure ratio over the most exposed one's (``group_exposure``'s
    ratio column: exposure share / catalogue share): 1 when every group gets attention in
    proportion to its size, near 0 when one is all but hidden.

    >>> data = RecsysData.build({"u": ["x", "y"]}, catalogue=["x", "y", "z"], groups={"x": "A", "y": "B", "z": "B"})
    >>> exposure_ratio(data, 2)   # 0.5 / 2
    (0.25, None)
    """
    ratio = group_exposure(data, k, attention, patience)["exposure_ratio"].to_numpy(dtype=np.float64)
    ratio = ratio[~np.isnan(ratio)]
    return (float(ratio.min() / ratio.max()) if len(ratio) and ratio.max() > 0 else math.nan), None


Part = Literal["loss", "disparity", "relevance"]
"""Which of expected exposure's three numbers (Diaz et al. 2020): EE-L, EE-D or EE-R."""


def expected_exposure(data: RecsysData, k: int, patience: float = 0.5, part: Part = "loss") -> Value:
    """Expected exposure (Diaz et al. 2020; TREC Fair Ranking 2020): per user, each catalogue
    item's exposure under RBP's browsing model, ``e(d) = mean over the user's draws of
    patience^(r-1)`` at the rank r it holds in the top k (0 when not shown; one list is one
    draw, a ``sample`` column gives several), against the exposure an ideal stochastic policy
    gives it: the user's m relevant (held-out) items shuffled over the top ranks, so each gets
    ``r* = sum_{i<min(m,k)} patience^i / m``, and the other n - m catalogue items shuffled
    below them, ``q* = sum_{m<=i<k} patience^i / (n - m)``. ``part="loss"``: EE-L = ||e -
    e*||^2; ``"disparity"``: EE-D = ||e||^2 (how unequally the policy spreads exposure);
    ``"relevance"``: EE-R = 2 e . e* (how much of it reaches relevant items); EE-L = EE-D -
    EE-R + ||e*||^2. Users without relevant items are undefined for loss and relevance; mean
    over users.

    >>> data = RecsysData.build({"u": ["x", "y"]}, test={"u": ["y"]}, catalogue=["x", "y", "z"])
    >>> # e = (x 1, y 0.5, z 0); m = 1: r* = 1, q* = 0.5 / 2 = 0.25 for x and z
    >>> round(expected_exposure(data, 2, part="loss")[0], 6)   # (1 - .25)^2 + (.5 - 1)^2 + (0 - .25)^2
    0.875
    >>> round(expected_exposure(data, 2, part="disparity")[0], 6), round(expected_exposure(data, 2,
    ...     part="relevance")[0], 6)   # 1 + .25; 2 (1 x .25 + .5 x 1)
    (1.25, 1.5)
    """
    import pandas as pd

    items, owner, rank = data.top(k)
    user_of_list, user_ids = pd.factorize(keys_of(data.users), sort=False)
    users = len(user_ids)
    draws = np.bincount(user_of_list, minlength=users).astype(np.float64)
    width = len(data.vocabulary)
    key = user_of_list[owner].astype(np.int64) * width + items
    shown, at = np.unique(key, return_inverse=True)
    exposure = np.bincount(at, weights=attention_weights(rank, "geometric", patience),
                           minlength=len(shown)) / draws[shown // width]
    shown_user = shown // width
    disparity = np.bincount(shown_user, weights=exposure ** 2, minlength=users)
    if part == "disparity":   # per list for the per-user table: each draw carries its user's value
        return _mean(disparity), disparity[user_of_list]
    rel_list, rel_item = _relevant_pairs(data)
    relevant = distinct(user_of_list[rel_list].astype(np.int64) * width + rel_item)
    rel_user = relevant // width
    m = np.bincount(rel_user, minlength=users).astype(np.float64)
    n = float(universe(data).sum())
    powers = np.power(float(patience), np.arange(k, dtype=np.float64))
    cumulative = np.concatenate(([0.0], np.cumsum(powers)))
    top = cumulative[np.minimum(m, k).astype(np.int64)]
    with np.errstate(invalid="ignore", divide="ignore"):
        r_star = np.where(m > 0, top / np.maximum(m, 1), np.nan)
        q_star = np.where(n - m > 0, (cumulative[k] - top) / np.maximum(n - m, 1), 0.0)
    is_relevant = member(shown, relevant, known_sorted=True)
    position = np.searchsorted(shown, relevant)
    found = (position < len(shown)) & (shown[np.minimum(position, len(shown) - 1)] == relevant) if len(shown) \
        else np.zeros(len(relevant), dtype=bool)
    exposure_of_relevant = np.where(found, exposure[np.minimum(position, max(len(shown) - 1, 0))] if len(shown)
                                    else 0.0, 0.0)
    other = ~is_relevant
    if part == "relevance":
        per_user = 2 * (np.bincount(rel_user, weights=exposure_of_relevant * r_star[rel_user], minlength=users)
                        + np.bincount(shown_user[other], weights=exposure[other] * q_star[shown_user[other]],
                                      minlength=users))
    else:
        shown_other = np.bincount(shown_user[other], minlength=users).astype(np.float64)
        per_user = (np.bincount(rel_user, weights=(exposure_of_relevant - r_star[rel_user]) ** 2, minlength=users)
                    + np.bincount(shown_user[other], weights=(exposure[other] - q_star[shown_user[other]]) ** 2,
                                  minlength=users)
                    + (n - m - shown_other) * q_star ** 2)
    per_user = np.where(m > 0, per_user, np.nan)
    return _mean(per_user), per_user[user_of_list]


def expected_exposure_loss(data: RecsysData, k: int, patience: float = 0.5) -> Value:
    """EE-L, ``expected_exposure(part="loss")``."""
    return expected_exposure(data, k, patience, "loss")


def expected_exposure_disparity(data: RecsysData, k: int, patience: float = 0.5) -> Value:
    """EE-D, ``expected_exposure(part="disparity")``."""
    return expected_exposure(data, k, patience, "disparity")


def expected_exposure_relevance(data: RecsysData, k: int, patience: float = 0.5) -> Value:
    """EE-R, ``expected_exposure(part="relevance")``."""
    return expected_exposure(data, k, patience, "relevance")


__all__ = ["ATTENTIONS", "Attention", "Part", "TARGETS", "Target", "attention_weights", "awrf", "expected_exposure",
           "expected_exposure_disparity", "expected_exposure_loss", "expected_exposure_relevance", "exposure_ratio",
           "group_exposure", "list_exposure", "popularity_reo", "popularity_rsp", "short_head", "universe"]
