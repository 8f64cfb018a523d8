"""ItemExposure: beyond-accuracy metrics of top-k lists as a mergeable streaming state, equal to
``rankwise.recsys.beyond_accuracy`` on the same lists."""

from __future__ import annotations

from typing import Any

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


def _long_rows(lists: np.ndarray, seed: int) -> Any:
    """The padded lists as one row per user x item with its rank, shuffled."""
    import pandas as pd

    users, positions = np.nonzero(lists >= 0)
    rows = pd.DataFrame({"user": users, "item": lists[users, positions], "rank": positions + 1})
    return rows.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def test_ranked_lists_rebuild_the_lists_from_long_rows() -> None:
    from hypothesis import given
    from hypothesis import strategies as st

    from rankwise.streaming.coverage import ranked_lists

    # user 3: [12]; user 7: ranks 1, 2, 3 are items 11, 10, 13
    assert ranked_lists([7, 7, 3, 7], [10, 11, 12, 13], ranks=[2, 1, 1, 3]).tolist() == [[12, -1, -1], [11, 10, 13]]
    assert ranked_lists(["b", "a", "b"], [1, 2, 3]).tolist() == [[2, -1], [1, 3]]   # no ranks: the rows' order
    with pytest.raises(MetricInputError, match="not scores"):
        ranked_lists([1, 1], [0.5, 2.0])

    @given(st.integers(0, 2**31 - 1))
    def rebuilt(seed: int) -> None:
        lists, _, _ = _data(seed % 1000)
        rows = _long_rows(lists, seed)
        got = ranked_lists(rows["user"].to_numpy(), rows["item"].to_numpy(), rows["rank"].to_numpy())
        assert got.tolist() == lists.tolist()   # every user has a list: the rows are the users in order

    rebuilt()


def test_lists_reduced_on_a_dask_cluster_equal_one_update(dask_client) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from rankwise.scale.states import reduce_lists

    lists, _, _ = _data(seed=5)
    popularity = np.bincount(lists[lists >= 0], minlength=120).astype(float)
    whole = ItemExposure(120, k=5, popularity=popularity).update(predictions=lists).compute()
    frame = dd.from_pandas(_long_rows(lists, 1), npartitions=6)   # every user's rows spread over partitions
    got = reduce_lists(ItemExposure(120, k=5, popularity=popularity), frame, rank="rank", client=dask_client)
    values = got.compute()
    assert values["catalogue_coverage"] == whole["catalogue_coverage"] and values["gini"] == whole["gini"]
    assert values["arp"] == pytest.approx(whole["arp"], rel=1e-12)
    assert int(got.state["users"]) == 300
    with pytest.raises(RankwiseError, match="missing column"):
        reduce_lists(ItemExposure(120, k=5), frame, user="userID", client=dask_client)
