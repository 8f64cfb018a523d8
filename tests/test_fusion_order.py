"""rankwise.fusion.order: the fast sorts equal NumPy's plain ones on random inputs (narrow and
wide integer keys, small and large queries, ties, queries split into several blocks)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.fusion.order import int_order, ranked_order, ranks_within_query, unique_inverse

keys = st.lists(st.integers(min_value=-(2**40), max_value=2**40), min_size=0, max_size=300)


@settings(max_examples=200, deadline=None)
@given(keys, st.integers(min_value=0, max_value=3))
def test_int_order_is_a_stable_argsort(values: list[int], narrow: int) -> None:
    key = np.array(values, dtype=np.int64) // (2**30 if narrow else 1)  # narrow keys take the radix sort
    assert int_order(key).tolist() == np.argsort(key, kind="stable").tolist()


@settings(max_examples=200, deadline=None)
@given(keys)
def test_unique_inverse_is_numpys(values: list[int]) -> None:
    key = np.array(values, dtype=np.int64)
    distinct, inverse = unique_inverse(key)
    expected, expected_inverse = np.unique(key, return_inverse=True)
    assert distinct.tolist() == expected.tolist() and inverse.tolist() == expected_inverse.tolist()


def _case(seed: int, rows: int, queries: int, split: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = np.sort(rng.integers(0, queries, rows))
    if split:  # some query's rows in two places
        q = np.roll(q, int(rng.integers(1, rows)))
    score = np.round(rng.normal(size=rows), 1)  # many ties
    tie_key = rng.permutation(rows * 3)[:rows]
    return q, score, tie_key


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("queries", [3, 200])  # few large queries (a sort per query), many small (one sort)
@pytest.mark.parametrize("split", [False, True])
def test_ranked_order_and_ranks_equal_lexsort(seed: int, queries: int, split: bool) -> None:
    q, score, tie_key = _case(seed, 600, queries, split)
    expected = np.lexsort((tie_key, -score, q))
    assert ranked_order(q, score, tie_key).tolist() == expected.tolist()
    in_input_order = np.lexsort((np.arange(len(q)), -score, q))
    assert ranked_order(q, score, tie_key, input_order=True).tolist() == in_input_order.tolist()
    for order, input_order in ((expected, False), (in_input_order, True)):
        rank = np.empty(len(q))
        sq = q[order]
        rank[order] = np.arange(len(q)) - np.searchsorted(sq, sq) + 1
        assert ranks_within_query(q, score, tie_key, input_order).tolist() == rank.tolist()


def test_a_run_in_rank_order_is_ranked_without_sorting() -> None:
    q = np.array([5, 5, 5, 2, 2])  # blocks in any query order, scores descending in each
    score = np.array([3.0, 2.0, 1.0, 9.0, 8.0])
    assert ranks_within_query(q, score, np.arange(5)).tolist() == [1.0, 2.0, 3.0, 1.0, 2.0]
