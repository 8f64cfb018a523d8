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


def test_an_item_on_several_group_rows_weighs_one(tmp_path) -> None:
    """One row per item and genre (i2 on two rows) is the same input as ``B|C`` on one row:
    i2 weighs 1/2 in B and 1/2 in C (it weighed 1 in each, counting twice in calibration); an
    empty group field is counted in a warning."""
    from rankwise.recsys.inputs import RecsysData

    long_rows = tmp_path / "groups.csv"
    long_rows.write_text("item,genre\ni1,A\ni2,B\ni2,C\ni3,\ni4,A|B\n")
    one_row = tmp_path / "groups_one_row.csv"
    one_row.write_text("item,genre\ni1,A\ni2,B|C\ni3,\ni4,A|B\n")
    lists = {"u1": ["i1", "i2", "i3"], "u2": ["i2", "i4", "i1"]}
    train = {"u1": ["i4", "i2"], "u2": ["i1"]}
    data = RecsysData.build(lists, train=train, groups=str(long_rows))
    weights = dict(zip(data.vocabulary.tolist(), data.groups.tolist(), strict=True))
    assert data.group_names == ["A", "B", "C"]
    assert weights == {"i1": [1, 0, 0], "i2": [0, 0.5, 0.5], "i3": [0, 0, 0], "i4": [0.5, 0.5, 0]}
    assert any("1 item(s) have an empty group field" in note for note in data.notes)
    by_rows = beyond_accuracy(lists, ["calibration@3"], train=train, groups=str(long_rows))
    by_bars = beyond_accuracy(lists, ["calibration@3"], train=train, groups=str(one_row))
    assert by_rows.table["value"].tolist() == by_bars.table["value"].tolist()


def test_an_item_with_two_feature_rows_is_refused(tmp_path) -> None:
    features = tmp_path / "features.csv"
    features.write_text("item,f1,f2\ni1,1,0\ni2,0,1\ni2,1,1\n")
    twice = r"features.csv:4: field 'item': item 'i2' is listed twice \(first on line 3\)"
    with pytest.raises(InputError, match=twice):
        beyond_accuracy({"u1": ["i1", "i2"]}, ["ild(similarity=cosine)@2"], features=str(features))


def test_a_user_in_two_groups_or_none_is_refused(tmp_path) -> None:
    """The last row's group was taken silently (u1 counted in g2 only); an empty group was the
    group 'None'. The same group twice is one membership."""
    lists = {"u1": ["a", "b"], "u2": ["b", "c"]}
    train = {"u1": ["c"], "u2": ["a"]}
    groups = tmp_path / "users.csv"
    groups.write_text("user,group\nu1,g1\nu2,g2\nu1,g2\n")
    with pytest.raises(InputError, match=r"users.csv:4: field 'group': user 'u1' is in two groups, 'g1' \(line 2\)"):
        beyond_accuracy(lists, ["novelty@2"], train=train, user_groups=str(groups))
    groups.write_text("user,group\nu1,g1\nu2,\n")
    with pytest.raises(InputError, match=r"users.csv:3: field 'group': user 'u2' has an empty group"):
        beyond_accuracy(lists, ["novelty@2"], train=train, user_groups=str(groups))
    groups.write_text("user,group\nu1,g1\nu1,g1\nu2,g2\n")
    rows = beyond_accuracy(lists, ["novelty@2"], train=train, user_groups=str(groups)).table
    by_group = dict(zip(rows["user_group"], rows["value"], strict=True))
    assert sorted(by_group) == ["all", "g1", "g2"]
    alone = beyond_accuracy({"u1": lists["u1"]}, ["novelty@2"], train=train).table["value"].tolist()
    assert by_group["g1"] == pytest.approx(alone[0])   # g1 holds u1 alone, listed twice
