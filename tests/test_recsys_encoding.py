"""How ``rankwise.recsys`` encodes its inputs: the fast paths (users coded by their runs, one
item coding shared by every input without joining them, repeated items found row by row in
lists alike long, top-k rows without list indexes) give exactly what the general paths give,
and every metric is the same whatever order the rows come in."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.recsys import BEYOND_ACCURACY, beyond_accuracy
from rankwise.recsys.inputs import repeated, repeated_in_lists, run_codes, shared_codes, sorted_codes

ids = st.lists(st.integers(0, 6), min_size=1, max_size=40)


@given(runs=st.lists(st.tuples(st.integers(-3, 50), st.integers(1, 4)), min_size=1, max_size=15), text=st.booleans())
def test_run_codes_equal_factorize_when_each_id_comes_together(runs: list[tuple[int, int]], text: bool) -> None:
    values = np.repeat([user for user, _ in runs], [size for _, size in runs])
    values = values.astype(str).astype(object) if text else values
    grouped = run_codes(values)
    expected_codes, expected_names = pd.factorize(pd.Series(values, dtype=values.dtype), sort=False)
    changes = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = values[np.concatenate(([0], changes))]
    if len(set(starts.tolist())) < len(starts):   # an id came back after another: only a hash table tells
        assert grouped is None
        return
    assert grouped is not None
    assert grouped[0].tolist() == expected_codes.tolist()
    assert grouped[1].tolist() == list(expected_names)


def test_run_codes_by_hand() -> None:
    codes, names = run_codes(np.array(["b", "b", "a", "c"], dtype=object))   # type: ignore[misc]
    assert codes.tolist() == [0, 0, 1, 2] and names.tolist() == ["b", "a", "c"]
    assert run_codes(np.array([1, 2, 1])) is None
    assert run_codes(np.array([], dtype=np.int64)) is None


@given(parts=st.lists(ids, min_size=1, max_size=4), wide=st.booleans(), text=st.integers(-1, 3))
def test_shared_codes_equal_one_coding_of_the_parts_joined(parts: list[list[int]], wide: bool, text: int) -> None:
    arrays = [np.asarray(p, dtype=np.int64) * (10**9 if wide else 1) for p in parts]
    if 0 <= text < len(arrays):   # one input of string ids: every part is compared as text (10 is '10')
        arrays[text] = np.array([f"i{v}" if v % 2 else str(v) for v in parts[text]], dtype=object)
    coded, vocabulary = shared_codes(arrays)
    joined = np.concatenate(arrays) if all(a.dtype.kind == "i" for a in arrays) else \
        np.concatenate([np.array([str(v) for v in a.tolist()], dtype=object) for a in arrays])
    codes, expected = sorted_codes(joined)
    assert list(vocabulary) == list(expected)
    assert np.concatenate(coded).tolist() == codes.tolist()
    assert all(c.dtype == np.int64 for c in coded)


@settings(max_examples=60)
@given(lists=st.integers(1, 30), width=st.integers(1, 12), items=st.integers(2, 15), seed=st.integers(0, 2**31))
def test_repeated_items_in_lists_alike_long_equal_one_sort(lists: int, width: int, items: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, items, lists * width)
    owner = np.repeat(np.arange(lists), width)
    expected = repeated(owner * items + codes)   # the first of each (list, item) is kept
    assert repeated_in_lists(owner, codes, items).tolist() == expected.tolist()
    # lists of different lengths take the general path, with the same answer
    uneven = np.repeat(np.arange(lists), rng.integers(1, width + 1, lists))
    codes = rng.integers(0, items, len(uneven))
    assert repeated_in_lists(uneven, codes, items).tolist() == repeated(uneven * items + codes).tolist()


def test_repeated_in_lists_by_hand() -> None:
    # two lists of three: [4, 4, 1] repeats 4 at its second slot, [2, 1, 2] repeats 2 at its third
    out = repeated_in_lists(np.array([0, 0, 0, 1, 1, 1]), np.array([4, 4, 1, 2, 1, 2]), 5)
    assert out.tolist() == [False, True, False, False, False, True]


def test_average_popularity_by_hand_with_lists_of_different_lengths() -> None:
    train = {"t1": ["a", "a"], "t2": ["c"]}   # popularity a 2, b 0, c 1
    lists = {"u1": ["a", "b", "c"], "u2": ["b"]}
    out = beyond_accuracy(lists, ["arp@3", "arp@1", "arp@2"], train=train)
    # @3: u1 (2 + 0 + 1) / 3 = 1, u2 0 / 1 = 0 -> 0.5; @1: u1 [a] 2, u2 [b] 0 -> 1.0;
    # @2: u1 (2 + 0) / 2 = 1, u2 0 -> 0.5
    assert out.table["value"].tolist() == [0.5, 1.0, 0.5]
    alike = beyond_accuracy({"u1": ["a", "b"], "u2": ["c", "b"]}, "arp@2", train=train)
    assert alike.table["value"].iloc[0] == 0.75   # u1 (2 + 0) / 2 = 1, u2 (1 + 0) / 2 = 0.5


def _inputs(seed: int, uneven: bool) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    users, items = 40, 30
    lengths = rng.integers(2, 9, users) if uneven else np.full(users, 6)
    reco = pd.DataFrame({"userID": np.repeat(np.arange(users), lengths),
                         "itemID": np.concatenate([rng.choice(items, n, replace=False) for n in lengths]),
                         "prediction": np.concatenate([np.arange(n, 0, -1) for n in lengths]).astype(float)})
    train = pd.DataFrame({"userID": rng.integers(0, users, 300), "itemID": rng.integers(0, items, 300)})
    test = pd.DataFrame({"userID": rng.integers(0, users, 80), "itemID": rng.integers(0, items, 80)})
    features = pd.DataFrame(rng.normal(size=(items, 4))).assign(itemID=np.arange(items))
    groups = pd.DataFrame({"itemID": np.arange(items), "genre": rng.integers(0, 4, items).astype(str)})
    return {"reco": reco, "train": train, "test": test, "features": features, "groups": groups}


@pytest.mark.parametrize("uneven", [False, True], ids=["lists alike long", "lists of different lengths"])
def test_every_metric_is_the_same_whatever_order_the_rows_come_in(uneven: bool) -> None:
    data = _inputs(7, uneven)
    metrics = [f"{name}@5" for name in BEYOND_ACCURACY]
    ordered = beyond_accuracy(data["reco"], metrics, train=data["train"], test=data["test"],
                              features=data["features"], groups=data["groups"]).table
    shuffled_reco = data["reco"].sample(frac=1.0, random_state=3)   # users come back: the hash-table path
    shuffled = beyond_accuracy(shuffled_reco, metrics, train=data["train"].sample(frac=1.0, random_state=4),
                               test=data["test"], features=data["features"], groups=data["groups"]).table
    assert ordered["metric"].tolist() == shuffled["metric"].tolist()
    np.testing.assert_allclose(ordered["value"].to_numpy(float), shuffled["value"].to_numpy(float),
                               rtol=1e-12, atol=1e-15)
    assert not np.isnan(ordered["value"].to_numpy(float)).all()
