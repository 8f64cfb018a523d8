"""MDCG@k: the mean of DCG@j over a window of cut-offs."""

from __future__ import annotations

import numpy as np
import pytest

import rankwise


def test_hand_computed_window() -> None:
    # labels by rank 3, 0, 2, 1: DCG@1 = 3, DCG@2 = 3, DCG@3 = 3 + 2/log2(4) = 4, DCG@4 = 4 + 1/log2(5)
    qrels = {"q": {"a": 3, "b": 0, "c": 2, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    res = rankwise.evaluate(qrels, run, ["MDCG@4", "MDCG(start=3)@4", "MDCG@2", "MDCG@6"]).per_query.iloc[0]
    dcg4 = 4 + 1 / np.log2(5)
    assert res["MDCG@4"] == pytest.approx((3 + 3 + 4 + dcg4) / 4)
    assert res["MDCG(start=3)@4"] == pytest.approx((4 + dcg4) / 2)
    assert res["MDCG@2"] == pytest.approx(3.0)
    # past the ranking's end DCG@j stays DCG@4: (3 + 3 + 4 + 3 DCG@4) / 6
    assert res["MDCG@6"] == pytest.approx((3 + 3 + 4 + 3 * dcg4) / 6)


def test_equals_the_mean_of_dcg_columns_on_a_real_run() -> None:
    from pathlib import Path

    data = Path(__file__).parent / "data"
    qrels, run = data / "qrels.test", data / "results.test"
    res = rankwise.evaluate(qrels, run, ["MDCG(start=3)@8"] + [f"dcg@{j}" for j in range(3, 9)]).per_query
    expected = res[[f"dcg@{j}" for j in range(3, 9)]].mean(axis=1)
    np.testing.assert_allclose(res["MDCG(start=3)@8"], expected, rtol=1e-12)
