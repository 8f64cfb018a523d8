"""The recommender inputs that gave silent wrong numbers: items outside the catalogue (coverage
above 1), a header-only recommendation table (coverage 0), an empty training table (novelty 0),
held-out users without a list (left out of the accuracy metrics)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rankwise.errors import InputError
from rankwise.recsys import beyond_accuracy


def test_coverage_counts_catalogue_items_only_and_warns() -> None:
    lists = {"u1": ["a", "x", "y"], "u2": ["b", "x", "z"]}
    out = beyond_accuracy(lists, ["coverage@3", "coverage(outside=count)@3"], catalogue=["a", "b", "c"])
    # a and b of the catalogue {a, b, c}: 2/3; Recommenders' way: 5 distinct recommended / 3 = 1.67
    assert out.table["value"].tolist() == pytest.approx([2 / 3, 5 / 3])
    assert any("3 recommended item(s) are not in the catalogue (the one given)" in w for w in out.warnings)


def test_empty_tables_are_refused(tmp_path) -> None:
    header_only = tmp_path / "reco.csv"
    header_only.write_text("user,item,score\n")
    with pytest.raises(InputError, match="reco.csv: no recommendations"):
        beyond_accuracy(str(header_only), ["coverage@5"], catalogue=["a"])
    empty_train = tmp_path / "train.csv"
    empty_train.write_text("user,item\n")
    with pytest.raises(InputError, match="train.csv: no training interactions"):
        beyond_accuracy({"u": ["a"]}, ["novelty@5"], train=str(empty_train))


def test_held_out_users_without_a_list_count_as_empty_lists() -> None:
    lists = {"u1": ["a", "b"]}
    test = pd.DataFrame({"user": ["u1", "u2"], "item": ["a", "c"]})
    out = beyond_accuracy(lists, ["ndcg@2", "hits@2"], test=test)
    # u1: a at rank 1 -> nDCG 1, hit 1; u2 has no list: 0 and 0; means over both users 0.5
    assert out.table["value"].tolist() == pytest.approx([0.5, 0.5])
    assert any("1 held-out user(s) have no recommendation list, e.g. 'u2'" in w for w in out.warnings)
    assert not math.isnan(out.table["value"].iloc[0])


def test_cooccurrence_is_sparse_with_64_bit_indices_and_equal_to_counting() -> None:
    import numpy as np

    from rankwise.recsys import RecsysData
    from rankwise.recsys.metrics import _cooccurrence

    rng = np.random.default_rng(4)
    train = pd.DataFrame({"user": rng.integers(0, 300, 3000), "item": rng.integers(0, 40, 3000)})
    data = RecsysData.build({"u": ["0", "1"]}, train=train.astype(str))
    co = _cooccurrence(data)
    assert co.indices.dtype == np.int64 or co.nnz < 2**31   # scipy widens the indices when they need it
    # counted by hand: the users of each item as sets, intersected
    users = {item: set(group["user"]) for item, group in train.astype(str).groupby("item")}
    index = {item: i for i, item in enumerate(data.vocabulary.tolist())}
    for a, b in [("0", "1"), ("5", "5"), ("7", "39")]:
        assert co[index[a], index[b]] == len(users[a] & users[b])
    assert co.nnz <= len(index) ** 2


def test_a_mixture_has_a_bounded_number_of_components() -> None:
    from rankwise.clicks import MODELS
    from rankwise.errors import OptionError

    declared, values = MODELS.parse("mixture(components=" + "+".join(["pbm"] * 10_000) + ")")
    with pytest.raises(OptionError, match="at most 16 components, got 10000"):
        declared.build(values)
