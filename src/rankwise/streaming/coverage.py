"""Beyond-accuracy metrics of recommendation lists as a streaming state: the lists arrive in
batches (a million users in chunks, or across workers), each batch adds to per-item exposure
counts and per-user sums, and states merge by addition, exactly.

``ItemExposure(num_items, k, popularity=None, train_users=None)`` takes ``predictions``: the
recommended item ids in rank order, ``[batch, list]`` integers in ``0 .. num_items - 1`` (the
ids a model's top-k returns), ``where`` (or an id of -1) marking padding. ``compute()`` gives,
with the catalogue = every item id and the same definitions as ``rankwise.recsys``:

- ``catalogue_coverage``: distinct items in the top-k lists / ``num_items``;
- ``unique_items``: distinct items in the top-k lists;
- ``distributional_coverage``: the entropy (bits) of the items' shares of all top-k slots;
- ``gini``: the Gini index of the items' exposure over the catalogue (items never shown: 0);
- with ``popularity`` (training interactions per item id): ``arp``, the mean over users of a
  list's mean popularity, and ``novelty``, the mean self-information -log2(c(i) / N) over
  every slot (an item without interactions counts 0, as Recommenders);
- with ``train_users`` too (distinct training users per item id, and their total as
  ``users_in_train``): ``epc``, the mean over users of the list's mean 1 - n(i) / |U_train|.

The state is the exposure count per item (int64, ``num_items`` long) and a few sums, so its
size follows the catalogue, not the users.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.state import Metric, MetricInputError, mask_of


def gini(exposure: np.ndarray) -> float:
    """Gini index of non-negative exposures: sum_j (2j - n - 1) x_(j) / (n sum x), x ascending
    (RecBole's ``GiniIndex``); NaN when there is nothing to share.

    >>> gini(np.array([0, 1, 1, 2]))   # (-3*0 - 1*1 + 1*1 + 3*2) / (4 * 4)
    0.375
    """
    x = np.sort(np.asarray(exposure, dtype=np.float64))
    n = len(x)
    if n == 0 or x.sum() == 0:
        return math.nan
    j = np.arange(1, n + 1)
    return float(((2 * j - n - 1) * x).sum() / (n * x.sum()))


def entropy_bits(counts: np.ndarray) -> float:
    """Shannon entropy in bits of the shares of ``counts`` (zeros left out); NaN without any.

    >>> entropy_bits(np.array([1, 2, 1, 0]))   # shares 1/4, 1/2, 1/4
    1.5
    """
    counts = np.asarray(counts)
    total = counts.sum()
    if total == 0:
        return math.nan
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())


def ranked_lists(users: Any, items: Any, ranks: Any = None) -> np.ndarray:
    """One row per user of long-format recommendations (one row per user x item, as a table
    holds them) as ``[users, longest list]`` item ids in rank order, padded with -1: what
    ``ItemExposure.update(predictions=...)`` takes. ``ranks`` orders each list (ascending; the
    rows' order otherwise). Users come in sorted order.

    >>> ranked_lists([7, 7, 3, 7], [10, 11, 12, 13], ranks=[2, 1, 1, 3]).tolist()   # user 3, then user 7
    [[12, -1, -1], [11, 10, 13]]
    """
    users = np.asarray(users)
    items = np.asarray(items)
    if users.shape != items.shape or users.ndim != 1:
        raise MetricInputError("ranked_lists: users and items must be two columns of one length")
    if items.dtype.kind == "f" and np.any(items != np.floor(items)):
        raise MetricInputError("ranked_lists: items must be item ids (integers), not scores")
    if not len(users):
        return np.zeros((0, 0), dtype=np.int64)
    codes = np.unique(users, return_inverse=True)[1].ravel()
    position_key = np.arange(len(users)) if ranks is None else np.asarray(ranks)
    order = np.lexsort((position_key, codes))
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    column = np.arange(len(order)) - np.repeat(starts, sizes)
    out = np.full((len(starts), int(sizes.max())), -1, dtype=np.int64)
    out[sorted_codes, column] = items[order].astype(np.int64)
    return out


class ItemExposure(Metric):
    """Coverage, Gini, entropy, ARP, novelty and EPC of top-k lists over batches (see the
    module).

    >>> m = ItemExposure(num_items=4, k=2, popularity=[2, 0, 1, 0])
    >>> out = m.update(predictions=[[0, 1], [1, 2]]).compute()   # lists [0, 1] and [1, 2]
    >>> out["catalogue_coverage"], out["unique_items"]             # items 0, 1, 2 of 4
    (0.75, 3.0)
    >>> round(out["gini"], 6)   # exposure 0, 1, 1, 2 ascending: (-3*0 - 1*1 + 1*1 + 3*2) / (4 * 4)
    0.375
    >>> out["arp"]              # user 1: (2 + 0) / 2, user 2: (0 + 1) / 2
    0.75
    """

    inputs = ("predictions",)
    nonnegative_state = ("exposure", "users", "slots", "popularity_sum", "epc_sum")

    def __init__(self, num_items: int, k: int = 10, popularity: Any = None, train_users: Any = None,
                 users_in_train: int | None = None) -> None:
        if int(num_items) <= 0 or int(k) <= 0:
            raise RankwiseError(f"ItemExposure: num_items and k must be positive, got {num_items} and {k}")
        pop = None if popularity is None else np.asarray(popularity, dtype=np.float64)
        seen = None if train_users is None else np.asarray(train_users, dtype=np.float64)
        for name, values in (("popularity", pop), ("train_users", seen)):
            if values is not None and (values.shape != (int(num_items),) or (values < 0).any()
                                       or not np.isfinite(values).all()):
                raise RankwiseError(f"ItemExposure: {name} must be {int(num_items)} non-negative numbers (one per "
                                    "item id)")
        if seen is not None and (users_in_train is None or int(users_in_train) <= 0):
            raise RankwiseError("ItemExposure: train_users needs users_in_train (the training users' number)")
        self._popularity, self._train_users = pop, seen
        super().__init__(num_items=int(num_items), k=int(k),
                         popularity=None if pop is None else pop.tolist(),
                         train_users=None if seen is None else seen.tolist(),
                         users_in_train=None if users_in_train is None else int(users_in_train))

    def _initial_state(self) -> dict[str, Any]:
        return {"exposure": np.zeros(self.params["num_items"], dtype=np.int64), "users": np.zeros((), np.int64),
                "slots": np.zeros((), np.int64), "popularity_sum": np.zeros(()), "novelty_sum": np.zeros(()),
                "epc_sum": np.zeros(())}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        name = type(self).__name__
        items = np.atleast_2d(inputs["predictions"])
        if items.dtype.kind == "f" and np.any(items != np.floor(items)):
            raise MetricInputError(f"{name}.update: predictions must be item ids (integers), not scores")
        items = items.astype(np.int64)
        mask = mask_of(inputs.get("where"), items.shape)
        valid = items >= 0 if mask is None else (np.asarray(mask) & (items >= 0))
        top = valid & (np.cumsum(valid, axis=1) <= self.params["k"])   # the first k real items of each list
        n = self.params["num_items"]
        ids = items[top]
        if len(ids) and ids.max() >= n:
            raise MetricInputError(f"{name}.update: item id {int(ids.max())} is not below num_items = {n}")
        per_list = top.sum(axis=1)
        listed = per_list > 0
        self.state["exposure"] += np.bincount(ids, minlength=n)
        self.state["users"] += int(listed.sum())
        self.state["slots"] += int(len(ids))
        rows = np.nonzero(top)[0]
        if self._popularity is not None:
            c = self._popularity[ids]
            per_user = np.bincount(rows, weights=c, minlength=len(items))[listed] / per_list[listed]
            self.state["popularity_sum"] += float(per_user.sum())
            total = self._popularity.sum()
            with np.errstate(divide="ignore"):
                info = np.where(c > 0, -np.log2(c / max(total, 1.0)), 0.0)
            self.state["novelty_sum"] += float(info.sum())
        if self._train_users is not None:
            complement = 1.0 - self._train_users[ids] / self.params["users_in_train"]
            per_user = np.bincount(rows, weights=complement, minlength=len(items))[listed] / per_list[listed]
            self.state["epc_sum"] += float(per_user.sum())

    def compute(self) -> dict[str, float]:
        exposure = self.state["exposure"]
        users, slots = int(self.state["users"]), int(self.state["slots"])
        shown = int((exposure > 0).sum())
        out = {"catalogue_coverage": shown / self.params["num_items"], "unique_items": float(shown)}
        out["distributional_coverage"] = entropy_bits(exposure)
        out["gini"] = gini(exposure)
        if self._popularity is not None:
            out["arp"] = float(self.state["popularity_sum"]) / users if users else math.nan
            out["novelty"] = float(self.state["novelty_sum"]) / slots if slots else math.nan
        if self._train_users is not None:
            out["epc"] = float(self.state["epc_sum"]) / users if users else math.nan
        return out


__all__ = ["ItemExposure", "entropy_bits", "gini", "ranked_lists"]
