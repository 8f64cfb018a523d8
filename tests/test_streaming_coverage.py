"""ItemExposure: beyond-accuracy metrics of top-k lists as a mergeable streaming state, equal to
``rankwise.recsys.beyond_accuracy`` on the same lists."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.errors import RankwiseError
from rankwise.recsys import beyond_accuracy
from rankwise.state import MetricInputError
from rankwise.streaming import ItemExposure

NAMES = {"catalogue_coverage": "coverage@5", "unique_items": "unique_items@5",
         "distributional_coverage": "distributional_coverage@5", "gini": "gini@5", "novelty": "novelty@5",
         "arp": "arp@5", "epc": "epc@5"}


def _data(seed: int) -> tuple[np.ndarray, dict, dict]:
    """300 users' lists of 3-8 distinct ids from 120 items (Zipf-like), padded with -1; 5 training
    interactions per user."""
    rng = np.random.default_rng(seed)
    items, users = 120, 300
    weight = 1.0 / np.arange(1, items + 1)
    weight /= weight.sum()
    lists = np.full((users, 8), -1)
    for u in range(users):
        n = rng.integers(3, 9)
        lists[u, :n] = rng.choice(items, size=n, replace=False, p=weight)
    train = {f"u{u}": [f"i{i}" for i in rng.choice(items, size=5, p=weight)] for u in range(users)}
    run = {f"u{u}": [f"i{i}" for i in row if i >= 0] for u, row in enumerate(lists)}
    return lists, run, train


def test_batches_merged_equal_beyond_accuracy_over_the_catalogue() -> None:
    lists, run, train = _data(seed=4)
    items = 120
    popularity = np.zeros(items)
    users_of = [set() for _ in range(items)]
    for user, history in train.items():
        for item in history:
            popularity[int(item[1:])] += 1
            users_of[int(item[1:])].add(user)
    seen = np.array([len(s) for s in users_of], dtype=float)
    state = None
    for part in np.array_split(np.arange(len(lists)), 7):   # seven batches, merged
        piece = ItemExposure(items, k=5, popularity=popularity, train_users=seen, users_in_train=len(train))
        piece.update(predictions=lists[part])
        state = piece if state is None else state + piece
    assert state is not None
    got = state.compute()
    catalogue = [f"i{i}" for i in range(items)]
    table = beyond_accuracy(run, list(NAMES.values()), train=train, catalogue=catalogue).table
    expected = dict(zip(table["metric"], table["value"], strict=True))
    for mine, theirs in NAMES.items():
        assert got[mine] == pytest.approx(expected[theirs], rel=1e-12, abs=1e-12), mine
    again = ItemExposure.from_state(state.state, num_items=items, k=5, popularity=popularity, train_users=seen,
                                    users_in_train=len(train))
    assert again.compute() == got


def test_where_masks_padding_and_bad_ids_are_named() -> None:
    m = ItemExposure(num_items=3, k=2)
    m.update(predictions=[[2, 0, 1], [1, 1, 1]], where=[[True, True, True], [True, False, False]])
    # k = 2: [2, 0] and [1]: exposure 1, 1, 1 -> every item once
    assert m.compute()["gini"] == 0.0 and m.compute()["catalogue_coverage"] == 1.0
    with pytest.raises(MetricInputError, match="item id 5 is not below num_items = 3"):
        ItemExposure(num_items=3).update(predictions=[[5]])
    with pytest.raises(MetricInputError, match="must be item ids"):
        ItemExposure(num_items=3).update(predictions=[[0.5]])
    with pytest.raises(RankwiseError, match="popularity must be 3 non-negative numbers"):
        ItemExposure(num_items=3, popularity=[1, 2])
