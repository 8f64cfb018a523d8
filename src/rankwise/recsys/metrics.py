"""Beyond-accuracy metrics of recommendation lists, one function and one declaration each
(``BEYOND_ACCURACY``): coverage, novelty, popularity bias, diversity, personalisation,
calibration and serendipity. Each takes the encoded inputs (``RecsysData``) and the cut-off
``k`` and returns the run's value and, where the metric is a mean over users, each user's
value (``NaN`` where it is undefined for that user, left out of the mean).

Notation: ``L_u`` is user u's top-k list, ``U`` the users with a list, ``c(i)`` the training
interactions of item i, ``N`` all training interactions, ``n(i)`` the distinct training
users of i and ``|U_train|`` the training users.

Example used below (``example()``): lists u1 = [a, b], u2 = [b, c]; training interactions
u1: c, u2: a, a.

>>> example().items.tolist()
[0, 1, 1, 2]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import InputError
from rankwise.params import Declared, Param, Registry
from rankwise.recsys.common import Value, _mean, _per_user
from rankwise.recsys.fairness import (
    ATTENTIONS,
    TARGETS,
    awrf,
    expected_exposure_disparity,
    expected_exposure_loss,
    expected_exposure_relevance,
    exposure_ratio,
    popularity_reo,
    popularity_rsp,
)
from rankwise.recsys.inputs import RecsysData

Similarity = Literal["cosine", "jaccard", "cooccurrence"]
"""Item similarity: cosine of feature vectors, Jaccard of feature sets, or co-occurrence in training."""
Discount = Literal["none", "log2"]
"""A rank discount: none, or 1 / log2(rank + 1)."""
Unseen = Literal["zero", "skip"]
"""A recommended item without training interactions: counted with 0, or left out."""
Frequency = Literal["interactions", "users"]
"""An item's popularity for novelty: its share of the training interactions c(i)/N, or of the
training users n(i)/|U| (inverse user frequency)."""
Average = Literal["slots", "users"]
"""How novelty is averaged: over every top-k slot, or per user and then over users."""

def example() -> RecsysData:
    """The docstrings' example: lists u1 = [a, b], u2 = [b, c]; training u1: c, u2: a, a."""
    return RecsysData.build({"u1": ["a", "b"], "u2": ["b", "c"]}, train={"u1": ["c"], "u2": ["a", "a"]})


def catalogue_coverage(data: RecsysData, k: int, outside: str = "leave_out") -> Value:
    """Distinct catalogue items in the top-k lists / catalogue size (the catalogue given, else
    the distinct items of the training interactions), in [0, 1]; recommended items outside the
    catalogue are left out and counted in the warnings. ``outside="count"`` counts them too,
    as Microsoft Recommenders' ``catalog_coverage`` does (distinct recommended items / distinct
    training items, which can exceed 1).

    >>> data = example()
    >>> catalogue_coverage(data, 2)   # a, b, c recommended; the catalogue (train) is a, c: 2 of 2
    (1.0, None)
    >>> catalogue_coverage(data, 2, outside="count")   # Recommenders: 3 recommended / 2 in train
    (1.5, None)
    """
    shown = data.exposure(k) > 0
    if outside == "leave_out":
        inside = np.zeros(len(data.vocabulary), dtype=bool)
        if data.catalogue is not None:
            inside[data.catalogue] = True
        elif data.train_item is not None:
            inside = data.popularity > 0
        else:
            data.catalogue_size()   # the error: no catalogue
        shown &= inside
    return int(shown.sum()) / data.catalogue_size(), None


def user_coverage(data: RecsysData, k: int) -> Value:
    """Users with a non-empty list / users (those with a list and those in the training data).

    >>> data = example()
    >>> user_coverage(data, 2)
    (1.0, None)
    """
    listed = np.diff(data.offsets) > 0
    users = set(data.users.tolist()) | (set(data.train_users.tolist()) if data.train_users is not None else set())
    return float(listed.sum()) / max(len(users), 1), None


def distributional_coverage(data: RecsysData, k: int) -> Value:
    """Shannon entropy (bits) of the items' shares of all top-k slots: -sum p(i) log2 p(i),
    p(i) = slots holding i / slots (Shani & Gunawardana 2010, eq. 21; Recommenders'
    ``distributional_coverage``).

    >>> data = example()
    >>> round(distributional_coverage(data, 2)[0], 6)   # shares 1/4, 1/2, 1/4: 0.5 + 0.5 + 0.5
    1.5
    """
    from rankwise.streaming.coverage import entropy_bits  # the one definition; streaming loads on use

    return entropy_bits(data.exposure(k)), None


def gini_index(data: RecsysData, k: int) -> Value:
    """Gini index of the items' exposure (top-k slots) over the catalogue, items never
    recommended counted 0: sum_j (2j - n - 1) x_(j) / (n sum x), x ascending, j = 1..n
    (RecBole's ``GiniIndex``, Elliot's). 0: every item shown equally; near 1: a few items
    take every slot.

    >>> data = example()
    >>> round(gini_index(data, 2)[0], 6)   # n = 3 (train a, c; b only recommended): x = 1, 1, 2 -> 2/12
    0.166667
    """
    exposure = data.exposure(k)
    universe = exposure > 0
    if data.catalogue is not None:
        universe[data.catalogue] = True
    elif data.train_item is not None:
        universe |= data.popularity > 0
    from rankwise.streaming.coverage import gini  # the one definition; streaming loads on use

    return gini(exposure[universe]), None


def unique_items(data: RecsysData, k: int) -> Value:
    """Distinct items in all the top-k lists together (aggregate diversity).

    >>> data = example()
    >>> unique_items(data, 1)   # a and b
    (2.0, None)
    """
    return float(np.count_nonzero(data.exposure(k))), None


def novelty(data: RecsysData, k: int, unseen: Unseen = "zero", frequency: Frequency = "interactions",
            average: Average = "slots") -> Value:
    """Mean self-information of the recommended items: -log2(c(i) / N) per top-k slot,
    averaged over every slot (Castells et al. 2011, item choice model; Recommenders'
    ``novelty``). An item without a training interaction has no self-information:
    ``unseen="zero"`` counts its slot with 0 (Recommenders), ``"skip"`` leaves it out.
    ``frequency="users"`` takes -log2(n(i) / |U_train|) instead, the share of training users
    who have the item (mean inverse user frequency); ``average="users"`` takes each user's
    mean first, then the mean over users. Evidently's ``NoveltyMetric`` is
    ``novelty(frequency=users, average=users, unseen=skip)``. The per-user values are the means
    over each user's own slots (the skipped ones left out).

    >>> data = example()
    >>> round(novelty(data, 2)[0], 6)   # a: -log2(2/3) = 0.585, b unseen: 0, c: log2 3 = 1.585; / 4 slots
    0.542481
    >>> # Evidently's: u1 [a, b]: a is 1 of 2 users' -> 1 bit, b skipped; u2 [b, c]: c 1 of 2 -> 1 bit
    >>> novelty(data, 2, unseen="skip", frequency="users", average="users")[0]
    1.0
    """
    items, owner, _ = data.top(k)
    if frequency == "users":
        c = data.user_popularity[items].astype(np.float64)
        n = len(data.train_users) if data.train_users is not None else 0
    else:
        c = data.popularity[items].astype(np.float64)
        n = len(data.train_item) if data.train_item is not None else 0
    with np.errstate(divide="ignore"):
        info = np.where(c > 0, -np.log2(c / max(n, 1)), np.nan if unseen == "skip" else 0.0)
    kept = ~np.isnan(info)
    per_user = _per_user(info[kept], owner[kept], data.n_lists)
    if average == "users":
        return _mean(per_user), per_user
    return (float(info[kept].mean()) if kept.any() else math.nan), per_user


def expected_popularity_complement(data: RecsysData, k: int, discount: Discount = "none",
                                   convention: str = "vargas") -> Value:
    """EPC (Vargas & Castells 2011): per user, the mean over the top k of 1 - n(i) / |U_train|
    (the chance a random training user has not seen i), each rank r weighted 1 (``discount=
    "none"``) or 1/log2(r + 1) (``"log2"``, the weights normalised to sum 1); mean over users.
    ``convention="elliot"``: Elliot's EPC, which also weights each item by its binary
    relevance in the held-out data (a non-relevant item adds 0, the weights still sum to 1),
    discounts by 1/log2(r + 1) and averages over the users with a relevant held-out item.

    >>> data = example()
    >>> round(expected_popularity_complement(data, 2)[0], 6)   # u1: (1 - 1/2 + 1) / 2, u2: (1 + 1 - 1/2) / 2
    0.75
    """
    items, owner, rank = data.top(k)
    users = len(data.train_users) if data.train_users is not None else 0
    novelty_of = 1.0 - data.user_popularity[items] / max(users, 1)
    if convention == "elliot":
        discount = "log2"
        if data.relevant is None:
            raise InputError("epc(convention=elliot) weights items by held-out relevance: give test=", field="test")
        novelty_of = novelty_of * data.is_relevant(owner, items)
    weight = np.ones(len(items)) if discount == "none" else 1.0 / np.log2(rank + 2.0)
    total = np.bincount(owner, weights=weight * novelty_of, minlength=data.n_lists)
    norm = np.bincount(owner, weights=weight, minlength=data.n_lists)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_user = np.where(norm > 0, total / norm, np.nan)
    if convention == "elliot":   # users without a relevant held-out item are not Elliot's users
        assert data.relevant is not None   # refused above when there is no held-out data
        with_relevant = np.zeros(data.n_lists, dtype=bool)
        with_relevant[data.relevant[0]] = True
        per_user = np.where(with_relevant, per_user, np.nan)
    return _mean(per_user), per_user


def _item_popularity(data: RecsysData, popularity: str) -> np.ndarray:
    """Each item's training popularity: its interactions, or its distinct training users."""
    return data.user_popularity if popularity == "users" else data.popularity


def average_popularity(data: RecsysData, k: int, popularity: str = "interactions") -> Value:
    """ARP (Abdollahpouri et al. 2019): per user, the mean over the top k of phi(i), the item's
    training interactions (the paper's "number of times rated"); mean over users.
    ``popularity="users"`` counts the item's distinct training users instead, as Elliot's ARP
    and Evidently's do (the two agree when nobody interacts with an item twice).

    >>> data = example()
    >>> average_popularity(data, 2)   # u1: (2 + 0) / 2, u2: (0 + 1) / 2
    (0.75, array([1. , 0.5]))
    >>> average_popularity(data, 2, "users")   # a: one user (u2, twice): u1 (1 + 0) / 2, u2 (0 + 1) / 2
    (0.5, array([0.5, 0.5]))
    """
    width = data.top_width(k)
    if width is not None:   # lists alike long: no list index needed
        per_user = _per_user(_item_popularity(data, popularity)[data.top_items(k)], np.empty(0), data.n_lists, width)
        return _mean(per_user), per_user
    items, owner, _ = data.top(k)
    per_user = _per_user(_item_popularity(data, popularity)[items].astype(np.float64), owner, data.n_lists)
    return _mean(per_user), per_user


def _long_tail(data: RecsysData, head_share: float, popularity: str = "interactions") -> np.ndarray:
    """Whether each item code is in the long tail: outside the short head, the most popular
    items that together take ``head_share`` of the training interactions (ties by code).
    ``popularity="users"`` (Elliot's): items ranked by distinct training users, the head
    filled until their users reach ``head_share`` of the distinct (user, item) training
    pairs, and only trained items in the tail."""
    c = _item_popularity(data, popularity)
    order = np.argsort(-c, kind="stable")
    cumulative = np.cumsum(c[order]) / max(c.sum(), 1)   # users: of the distinct (user, item) pairs
    head = order[: int(np.searchsorted(cumulative, head_share, side="left")) + 1] if c.sum() else order[:0]
    tail = np.ones(len(c), dtype=bool) if popularity == "interactions" else c > 0
    tail[head] = False
    return tail


def long_tail_share(data: RecsysData, k: int, head_share: float = 0.2, popularity: str = "interactions") -> Value:
    """APLT (Abdollahpouri et al. 2019): per user, the share of the top k from the long tail,
    the items outside the short head (the most popular items holding ``head_share`` of the
    training interactions); mean over users. ``popularity="users"`` with ``head_share=0.8``
    is Elliot's APLT (items by distinct training users; an item never trained on is in
    neither part).

    >>> data = example()
    >>> long_tail_share(data, 2)   # head = {a} (2 of 3 interactions): u1 1/2, u2 2/2
    (0.75, array([0.5, 1. ]))
    """
    items, owner, _ = data.top(k)
    per_user = _per_user(_long_tail(data, head_share, popularity)[items].astype(np.float64), owner, data.n_lists)
    return _mean(per_user), per_user


def _cooccurrence(data: RecsysData) -> Any:
    """Items x items: how many training users have both (the diagonal: each item's users), as
    a sparse matrix with 64-bit indices: memory in proportion to the pairs that co-occur, never
    to users x pairs. Computed once per data set.

    >>> _cooccurrence(example()).toarray().tolist()   # train: u1 c, u2 a (twice: once); a b c
    [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    cached = data._matrices.get(-1)
    if cached is not None:
        return cached
    from scipy import sparse

    assert data.train_item is not None and data.train_user is not None
    n_items = len(data.vocabulary)
    users = int(data.train_user.max()) + 1 if len(data.train_user) else 0
    seen = sparse.csr_matrix((np.ones(len(data.train_item)), (data.train_item.astype(np.int64),
                                                               data.train_user.astype(np.int64))),
                             shape=(n_items, users))
    seen.sum_duplicates()
    seen.data[:] = 1.0   # a user counts once per item
    seen.indices, seen.indptr = seen.indices.astype(np.int64), seen.indptr.astype(np.int64)
    co = (seen @ seen.T).tocsr()
    co.sum_duplicates()
    data._matrices[-1] = co   # key -1: no cut-off uses it
    return co


DENSE_PAIRS = 2**24
"""Up to this many item pairs (128 MB of float64), the co-occurrence similarity is kept as a
dense items x items table: one lookup per pair, many times faster than indexing the sparse
matrix, for a bounded memory."""


def _cooccurrence_similarity(data: RecsysData, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """training users of both / sqrt(n(a) n(b)) for every pair (a[j], b[j]), 0 where no user
    has both: from a dense table of every pair when the catalogue is small enough
    (``DENSE_PAIRS``, built once per data set), else from the sparse counts."""
    table = data._matrices.get(-2)
    if table is not None:
        return np.asarray(table[a, b]) if len(a) else np.empty(0)
    co = _cooccurrence(data)
    count = co.diagonal()   # n(a): the training users of item a
    if co.shape[0] * co.shape[1] <= DENSE_PAIRS:   # key -2: the normalised dense copy of key -1's counts
        scale = np.zeros(len(count))
        np.divide(1.0, np.sqrt(count), out=scale, where=count > 0)
        table = data._matrices[-2] = co.toarray() * scale[:, None] * scale[None, :]
        return np.asarray(table[a, b]) if len(a) else np.empty(0)
    both = np.asarray(co[a, b]).ravel() if len(a) else np.empty(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(both > 0, both / np.sqrt(count[a] * count[b]), 0.0)


def _similarity(data: RecsysData, a: np.ndarray, b: np.ndarray, similarity: Similarity) -> np.ndarray:
    """Similarity of item pairs (a[j], b[j]): ``cosine`` of feature vectors, ``jaccard`` of
    binary features, or ``cooccurrence`` (training users of both / sqrt(n(a) n(b)), Zhang et
    al. 2012; Recommenders' default). Pairs without features are refused by name."""
    if similarity == "cooccurrence":
        if data.train_item is None or data.train_user is None:
            raise InputError("similarity='cooccurrence' needs training interactions (train=)", field="train")

        return _cooccurrence_similarity(data, a, b)
    if data.features is None:
        raise InputError(f"similarity={similarity!r} needs item features (features=)", field="features")
    fa, fb = data.features[a], data.features[b]
    missing = np.isnan(fa).any(axis=1) | np.isnan(fb).any(axis=1)
    if missing.any():
        item = data.vocabulary[a[missing][0]] if np.isnan(fa[missing][0]).any() else data.vocabulary[b[missing][0]]
        raise InputError(f"item {item!r} has no feature vector", field="features")
    if similarity == "cosine":
        norms = np.linalg.norm(fa, axis=1) * np.linalg.norm(fb, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(norms > 0, (fa * fb).sum(axis=1) / norms, 0.0)
    ba, bb = fa != 0, fb != 0
    union = (ba | bb).sum(axis=1)
    return np.where(union > 0, (ba & bb).sum(axis=1) / np.maximum(union, 1), 0.0)


def _pairwise_sums(data: RecsysData, items: np.ndarray, owner: np.ndarray,
                   similarity: Similarity) -> tuple[np.ndarray, np.ndarray]:
    """Per list, the sum of ``similarity`` over its distinct pairs of positions, and the number
    of pairs. Lists of one length at a time, as a (lists x length) table of items: one call per
    pair of columns, so memory follows the lists, never the pairs."""
    order = np.argsort(owner, kind="stable")
    items, owner = items[order], owner[order]
    counts = np.bincount(owner, minlength=data.n_lists)
    starts = np.concatenate(([0], np.cumsum(counts)))
    total = np.zeros(data.n_lists)
    for size in distinct(counts[counts > 1]).tolist():
        lists = np.flatnonzero(counts == size)
        table = items[starts[lists][:, None] + np.arange(size)[None, :]]
        for i in range(size - 1):
            for j in range(i + 1, size):
                total[lists] += _similarity(data, table[:, i], table[:, j], similarity)
    return total, counts * (counts - 1) / 2.0


def _sum_rows(matrix: np.ndarray, items: np.ndarray, owner: np.ndarray, n_lists: int) -> np.ndarray:
    """Per list, the sum of ``matrix``'s rows of its items (a sparse product, no n x d gather)."""
    from scipy import sparse

    picks = sparse.csr_matrix((np.ones(len(items)), (owner, items)), shape=(n_lists, matrix.shape[0]))
    return np.asarray(picks @ matrix)


def intra_list_diversity(data: RecsysData, k: int, similarity: Similarity = "cosine") -> Value:
    """ILD (Ziegler et al. 2005): per user, 1 - the mean similarity of the distinct pairs of
    its top k (``similarity``: ``cosine`` of item features, ``jaccard`` of binary features,
    ``cooccurrence`` in the training data); a list of fewer than 2 items is undefined; mean
    over users. Equals Recommenders' ``diversity`` (its ``item_feature_vector`` measure is
    ``cosine``, its default ``item_cooccurrence_count`` is ``cooccurrence``).

    >>> data = example()
    >>> round(intra_list_diversity(data, 2, "cooccurrence")[0], 6)   # no user has both items of a pair
    1.0
    """
    items, owner, _ = data.top(k)
    if similarity == "cosine":
        per_user = 1.0 - _mean_pairwise_cosine(data, items, owner, k)
        return _mean(per_user), per_user
    total, pairs = _pairwise_sums(data, items, owner, similarity)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_user = np.where(pairs > 0, 1.0 - total / np.maximum(pairs, 1), np.nan)
    return _mean(per_user), per_user


def _mean_pairwise_cosine(data: RecsysData, items: np.ndarray, owner: np.ndarray, k: int) -> np.ndarray:
    """Per list, the mean cosine similarity of its distinct pairs without forming the pairs:
    with unit vectors u (0 for a zero vector, whose similarity is 0), the pairs sum to
    (|sum u|^2 - sum |u|^2) / 2, so a list of n items costs n x dimensions, not n^2."""
    if data.features is None:
        raise InputError("similarity='cosine' needs item features (features=)", field="features")
    missing = np.isnan(data.features).any(axis=1)[items]
    if missing.any():
        raise InputError(f"item {data.vocabulary[items[missing][0]]!r} has no feature vector", field="features")
    known = np.nan_to_num(data.features)
    norms = np.linalg.norm(known, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(norms[:, None] > 0, known / norms[:, None], 0.0)
    total = np.asarray(data.list_items(k) @ unit)
    squares = np.bincount(owner, weights=(unit * unit).sum(axis=1)[items], minlength=data.n_lists)
    sizes = np.bincount(owner, minlength=data.n_lists)
    pairs = sizes * (sizes - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, ((total * total).sum(axis=1) - squares) / 2 / np.maximum(pairs, 1), np.nan)


def personalisation(data: RecsysData, k: int) -> Value:
    """1 - the mean cosine similarity of the top-k lists of every pair of users, each list a
    binary item vector: cos(u, v) = |L_u ∩ L_v| / sqrt(|L_u| |L_v|) (Evidently's and RecList's
    personalisation; computed per item, without forming the user x user matrix).

    >>> data = example()
    >>> round(personalisation(data, 2)[0], 6)   # one pair sharing b: 1 - 1 / sqrt(2 x 2)
    0.5
    """
    items, owner, _ = data.top(k)
    sizes = np.bincount(owner, minlength=data.n_lists).astype(np.float64)
    users = int((sizes > 0).sum())
    if users < 2:
        return math.nan, None
    w = 1.0 / np.sqrt(sizes[owner])
    column = np.bincount(items, weights=w, minlength=len(data.vocabulary))
    square = np.bincount(items, weights=w * w, minlength=len(data.vocabulary))
    pair_sum = float((column ** 2 - square).sum() / 2)
    return 1.0 - pair_sum / (users * (users - 1) / 2), None


def calibration(data: RecsysData, k: int, alpha: float = 0.01) -> Value:
    """Steck's (2018) miscalibration: per user, KL(p || q~) = sum_g p(g) log(p(g) / q~(g)), p the
    group (genre) distribution of the user's training items, q that of the top k, q~ = (1 -
    alpha) q + alpha p; an item in several groups counts 1/|groups| in each. 0 is perfectly
    calibrated; users without training items are undefined; mean over users.

    >>> d = RecsysData.build({"u": ["x", "y"]}, train={"u": ["x", "x", "z"]}, groups={"x": "A", "y": "B", "z": "B"})
    >>> round(calibration(d, 2)[0], 6)   # p = (2/3, 1/3), q~ = 0.99 (1/2, 1/2) + 0.01 p; sum p log(p / q~)
    0.055527
    """
    if data.groups is None:
        raise InputError("calibration needs item groups or genres (groups=)", field="groups")
    if data.train_item is None or data.train_user is None or data.train_users is None:
        raise InputError("calibration needs training interactions (train=)", field="train")
    items, owner, _ = data.top(k)
    groups = data.groups
    train_list, train_item = data.train_by_list()
    history = _sum_rows(groups, train_item, train_list, data.n_lists)
    shown = _sum_rows(groups, items, owner, data.n_lists)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = history / history.sum(axis=1, keepdims=True)
        q = shown / shown.sum(axis=1, keepdims=True)
        q = (1 - alpha) * np.nan_to_num(q) + alpha * p
        terms = np.where(p > 0, p * np.log(p / q), 0.0)
    per_user = np.where(history.sum(axis=1) > 0, terms.sum(axis=1), np.nan)
    return _mean(per_user), per_user


CHUNK_PAIRS = 1 << 22
"""Serendipity compares each recommended item with its user's history this many pairs at a
time, so memory follows the chunk, not lists x history."""


def serendipity(data: RecsysData, k: int, similarity: Similarity = "cooccurrence") -> Value:
    """Recommenders' serendipity (Zhang et al. 2012; Yan 2020): per recommended item, (1 - its
    mean similarity to the user's training items) x its relevance (1 if the held-out data has
    the user's interaction with it, else 0; 1 for every item without held-out data, as
    Recommenders defaults); mean per user, then over users. Users without training items
    are undefined.

    >>> data = example()
    >>> round(serendipity(data, 2)[0], 6)   # no recommended item co-occurs with its user's history
    1.0
    """
    if data.train_item is None or data.train_user is None or data.train_users is None:
        raise InputError("serendipity needs training interactions (train=)", field="train")
    items, owner, _ = data.top(k)
    history_list, history_item = data.train_by_list()
    order = np.argsort(history_list, kind="stable")
    history_list, history_item = history_list[order], history_item[order]
    starts = np.searchsorted(history_list, np.arange(data.n_lists + 1))
    sizes = np.diff(starts)
    repeat = sizes[owner]
    mean_similarity = np.full(len(items), np.nan)
    cumulative = np.cumsum(repeat)
    total = int(cumulative[-1]) if len(items) else 0
    edges = distinct(np.concatenate(([0], np.searchsorted(cumulative, np.arange(CHUNK_PAIRS, total, CHUNK_PAIRS)),
                                     [len(items)])))
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):   # slots of ~CHUNK_PAIRS pairs
        runs = repeat[lo:hi]
        slot = np.repeat(np.arange(hi - lo), runs)
        # the slot's user's history, item by item: its start, plus 0, 1, ... within each slot's run
        within = np.arange(len(slot)) - np.repeat(np.cumsum(runs) - runs, runs)
        partner = history_item[np.repeat(starts[owner[lo:hi]], runs) + within]
        similar = _similarity(data, items[lo:hi][slot], partner, similarity) if len(slot) else np.empty(0)
        mean_similarity[lo:hi] = _per_user(similar, slot, hi - lo)
    relevance = np.ones(len(items)) if data.relevant is None else data.is_relevant(owner, items).astype(np.float64)
    per_item = (1.0 - mean_similarity) * relevance
    per_item = np.where(repeat > 0, per_item, np.nan)
    kept = ~np.isnan(per_item)
    per_user = _per_user(per_item[kept], owner[kept], data.n_lists)
    return _mean(per_user), per_user


@dataclass(frozen=True)
class BeyondMetric(Declared[Callable[..., Any]]):
    """A beyond-accuracy metric: ``per_user`` when its value is a mean over users (then
    ``compare`` can test it per user), ``higher_is_better`` for tables and plots."""

    per_user: bool = True
    higher_is_better: bool | None = True


_K = Param("k", int, 10, "cut-off: the top k of each list", low=1, cutoff=True)
_POPULARITY = Param("popularity", str, "interactions", "an item's popularity: its training interactions, or its "
                    "distinct training users (Elliot's, Evidently's)", choices=("interactions", "users"))
_SIMILARITY = Param("similarity", str, "cosine", "item similarity", choices=get_args(Similarity))
_HEAD = Param("head_share", float, 0.8, "share of the (user, item) training pairs the short head holds (Elliot's "
              "pop_ratio)", low=0, high=1)
_ATTENTION = Param("attention", str, "geometric", "browsing model: patience^(r-1), 1/log2(r+1), 1 per rank, or "
                   "1/log2(max(r, 2)) (trec_fair)",
                   choices=ATTENTIONS)
_PATIENCE = Param("patience", float, 0.5, "geometric attention: the chance of looking one rank further", low=0,
                  high=1)

BEYOND_ACCURACY: Registry[BeyondMetric] = Registry("beyond-accuracy metric", (
    BeyondMetric("catalogue_coverage", catalogue_coverage, "Distinct recommended catalogue items / catalogue size.",
                 (_K, Param("outside", str, "leave_out", "recommended items outside the catalogue: leave_out (coverage "
                            "in [0, 1]) or count (Microsoft Recommenders' catalog_coverage)",
                            choices=("leave_out", "count"))),
                 aliases=("catalog_coverage", "coverage", "item_coverage"),
                 reference="Shani & Gunawardana 2010; Microsoft Recommenders catalog_coverage (outside=count)",
                 per_user=False),
    BeyondMetric("user_coverage", user_coverage, "Users with a non-empty list / users.", (_K,),
                 reference="Elliot UserCoverage", per_user=False),
    BeyondMetric("distributional_coverage", distributional_coverage,
                 "Entropy (bits) of the items' shares of the top-k slots.", (_K,), aliases=("entropy",),
                 reference="Shani & Gunawardana 2010 eq. 21; Microsoft Recommenders distributional_coverage",
                 per_user=False),
    BeyondMetric("gini", gini_index, "Gini index of item exposure over the catalogue (lower is fairer).", (_K,),
                 aliases=("gini_index",), reference="RecBole GiniIndex; Elliot Gini", per_user=False,
                 higher_is_better=False),
    BeyondMetric("unique_items", unique_items, "Distinct items over all top-k lists (aggregate diversity).", (_K,),
                 aliases=("aggregate_diversity",), reference="Adomavicius & Kwon 2012", per_user=False),
    BeyondMetric("novelty", novelty, "Mean self-information -log2(c(i)/N) of the recommended items.",
                 (_K, Param("unseen", str, "zero", "slots of items without training interactions",
                            choices=get_args(Unseen)),
                  Param("frequency", str, "interactions", "popularity as a share of interactions or of users",
                        choices=get_args(Frequency)),
                  Param("average", str, "slots", "over every slot, or per user then over users",
                        choices=get_args(Average))),
                 aliases=("self_information",),
                 reference="Castells et al. 2011; Microsoft Recommenders novelty; Evidently NoveltyMetric "
                 "(frequency=users, average=users, unseen=skip)", per_user=False),
    BeyondMetric("epc", expected_popularity_complement,
                 "Expected popularity complement: mean of 1 - n(i)/|U| over the top k.",
                 (_K, Param("discount", str, "none", "rank discount", choices=get_args(Discount)),
                  Param("convention", str, "vargas", "vargas: every item counts; elliot: Elliot's EPC (relevance-"
                        "weighted, log2 discount, users with a relevant item)", choices=("vargas", "elliot"))),
                 aliases=("expected_popularity_complement",),
                 reference="Vargas & Castells 2011; Elliot EPC (convention=elliot)"),
    BeyondMetric("arp", average_popularity, "Average recommendation popularity (training interactions).",
                 (_K, _POPULARITY), aliases=("average_popularity",),
                 reference="Abdollahpouri et al. 2019; Elliot ARP and Evidently (popularity=users)",
                 higher_is_better=False),
    BeyondMetric("aplt", long_tail_share, "Share of the top k from the long tail (outside the short head).",
                 (_K, Param("head_share", float, 0.2, "share of interactions the short head holds", low=0, high=1),
                  _POPULARITY),
                 aliases=("long_tail_share",),
                 reference="Abdollahpouri et al. 2019; Elliot APLT (popularity=users, head_share=0.8)"),
    BeyondMetric("ild", intra_list_diversity, "Intra-list diversity: 1 - mean pairwise item similarity.",
                 (_K, _SIMILARITY), aliases=("intra_list_diversity", "diversity"),
                 reference="Ziegler et al. 2005; Microsoft Recommenders diversity"),
    BeyondMetric("personalisation", personalisation, "1 - mean cosine similarity of every two users' lists.", (_K,),
                 aliases=("personalization", "inter_list_diversity"),
                 reference="Evidently Personalization; RecList", per_user=False),
    BeyondMetric("calibration", calibration, "Steck's miscalibration KL(p || q~) of the lists' genres.",
                 (_K, Param("alpha", float, 0.01, "smoothing of the list's distribution", low=0, high=1)),
                 aliases=("miscalibration", "calibration_kl"), reference="Steck 2018", higher_is_better=False),
    BeyondMetric("serendipity", serendipity, "Relevance x unexpectedness against the user's history.",
                 (_K, Param("similarity", str, "cooccurrence", "item similarity",
                            choices=get_args(Similarity))),
                 reference="Zhang et al. 2012; Microsoft Recommenders serendipity"),
    BeyondMetric("pop_rsp", popularity_rsp, "Ranking-based statistical parity of short head and long tail: "
                 "std / mean of their recommendation rates.", (_K, _HEAD), aliases=("poprsp",),
                 reference="Zhu et al. 2021; Elliot PopRSP", per_user=False, higher_is_better=False),
    BeyondMetric("pop_reo", popularity_reo, "Ranking-based equal opportunity of short head and long tail: "
                 "std / mean of the rates at which their relevant items are recommended.", (_K, _HEAD),
                 aliases=("popreo",), reference="Zhu et al. 2021; Elliot PopREO", per_user=False,
                 higher_is_better=False),
    BeyondMetric("awrf", awrf, "Attention-weighted rank fairness: 1 - Jensen-Shannon divergence between the "
                 "list's attention per item group and a target distribution.",
                 (_K, _ATTENTION, _PATIENCE, Param("target", str, "catalogue", "the fair distribution: the groups' "
                                                   "catalogue shares, equal shares, or the user's relevant items'",
                                                   choices=TARGETS),
                  Param("convention", str, "rankwise", "rankwise: the attention given, divergence in bits; "
                        "trec_fair: TREC Fair Ranking 2021-22's 1/log2(max(r, 2)) and nats",
                        choices=("rankwise", "trec_fair"))),
                 aliases=("attention_weighted_rank_fairness",),
                 reference="Sapiezynski et al. 2019; TREC Fair Ranking 2021-22 (convention=trec_fair)"),
    BeyondMetric("exposure_ratio", exposure_ratio, "Least over most exposed item group's exposure share / "
                 "catalogue share (1: exposure in proportion to size).", (_K, _ATTENTION, _PATIENCE),
                 aliases=("group_exposure_ratio",), reference="Singh & Joachims 2018 (exposure)", per_user=False),
    BeyondMetric("ee_loss", expected_exposure_loss,
                 "Expected exposure loss ||e - e*||^2 against an ideal stochastic policy (RBP browsing).",
                 (_K, _PATIENCE), aliases=("expected_exposure", "ee_l"),
                 reference="Diaz et al. 2020; TREC Fair Ranking 2020", higher_is_better=False),
    BeyondMetric("ee_disparity", expected_exposure_disparity,
                 "Expected exposure disparity ||e||^2: how unequally exposure is spread over items.",
                 (_K, _PATIENCE), aliases=("ee_d",), reference="Diaz et al. 2020", higher_is_better=False),
    BeyondMetric("ee_relevance", expected_exposure_relevance,
                 "Expected exposure relevance 2 e . e*: how much exposure reaches relevant items.",
                 (_K, _PATIENCE), aliases=("ee_r",), reference="Diaz et al. 2020"),
), option="--metric")
"""Every beyond-accuracy metric, spelled ``name@k`` or ``name(k=10, ...)``."""


def parse(text: str) -> tuple[BeyondMetric, dict[str, Any]]:
    """A metric and its parameters from ``name@k`` or ``name(param=value, ...)``.

    >>> member, values = parse("ild(similarity=jaccard)@5")
    >>> member.name, values
    ('ild', {'k': 5, 'similarity': 'jaccard'})
    """
    return BEYOND_ACCURACY.parse(text)

