"""Label-ranking metrics over [samples, labels] matrices equal scikit-learn's, ties and sample
weights included, and their states merge exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.errors import RankwiseError
from rankwise.streaming import CoverageError, DCGScore, LabelRankingAveragePrecision, LabelRankingLoss, NDCGScore

skm = pytest.importorskip("sklearn.metrics")


def test_scikit_learn_documentation_examples() -> None:
    y, s = [[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]]
    # LRAP: sample 1 ranks its relevant label 2nd (1/2), sample 2 3rd (1/3) -> 5/12
    assert LabelRankingAveragePrecision().update(predictions=s, targets=y).compute() == pytest.approx(5 / 12)
    # coverage: 2 labels score at least the relevant 0.75; 3 at least the relevant 0.1 -> (2 + 3) / 2
    assert CoverageError().update(predictions=s, targets=y).compute() == 2.5
    # loss: sample 1: 1 of 2 pairs wrong; sample 2: both -> (1/2 + 1) / 2
    assert LabelRankingLoss().update(predictions=s, targets=y).compute() == 0.75
    relevance, scores = [[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]
    assert NDCGScore().update(predictions=scores, targets=relevance).compute() == pytest.approx(0.695694, abs=1e-6)
    assert NDCGScore(k=4).update(predictions=scores, targets=relevance).compute() == pytest.approx(0.412382, abs=1e-6)
    # ties: documents 1 and 5 share the top score and average their gains (10 + 5) / 2
    tied = [[1, 0, 0, 0, 1]]
    assert NDCGScore(k=1).update(predictions=tied, targets=relevance).compute() == pytest.approx(0.75)
    assert DCGScore().update(predictions=scores, targets=relevance).compute() == pytest.approx(9.499, abs=1e-3)


@pytest.mark.parametrize("seed", range(60))
def test_equal_to_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(1, 15)), int(rng.integers(2, 9))
    scores = rng.integers(0, 4, (n, width)) / 4.0  # many ties
    truth = (rng.random((n, width)) < 0.4).astype(int)
    gains = rng.integers(0, 4, (n, width)).astype(float) * 0.5
    weight = rng.random(n)
    pairs = [
        (LabelRankingAveragePrecision(), truth, skm.label_ranking_average_precision_score(truth, scores,
                                                                                          sample_weight=weight)),
        (CoverageError(), truth, skm.coverage_error(truth, scores, sample_weight=weight)),
        (LabelRankingLoss(), truth, skm.label_ranking_loss(truth, scores, sample_weight=weight)),
        (DCGScore(k=3, log_base=10), gains, skm.dcg_score(gains, scores, k=3, log_base=10, sample_weight=weight)),
        (DCGScore(), gains, skm.dcg_score(gains, scores, sample_weight=weight)),
        (NDCGScore(k=2), gains, skm.ndcg_score(gains, scores, k=2, sample_weight=weight)),
        (NDCGScore(), gains, skm.ndcg_score(gains, scores, sample_weight=weight)),
    ]
    for metric, labels, expected in pairs:
        assert metric.update(predictions=scores, targets=labels, sample_weight=weight).compute() == pytest.approx(
            expected, abs=1e-12), type(metric).__name__
    distinct = rng.permutation(n * width).reshape(n, width) / 7.0  # ignore_ties needs no ties: sklearn's order of
    # tied scores then is its sort's
    assert NDCGScore(k=3, ignore_ties=True).update(predictions=distinct, targets=gains).compute() == pytest.approx(
        skm.ndcg_score(gains, distinct, k=3, ignore_ties=True), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(2, 6), st.integers(0, 2**31 - 1))
def test_merge_equals_one_pass(n: int, width: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores, labels = rng.random((n, width)), (rng.random((n, width)) < 0.5).astype(int)
    cut = n // 2
    for metric in (LabelRankingAveragePrecision(), CoverageError(), LabelRankingLoss(), NDCGScore(k=2)):
        whole = metric.empty().update(predictions=scores, targets=labels).compute()
        halves = metric.empty().update(predictions=scores[:cut], targets=labels[:cut]).merge(
            metric.empty().update(predictions=scores[cut:], targets=labels[cut:])).compute()
        assert halves == pytest.approx(whole, abs=1e-12)


def test_bad_input() -> None:
    with pytest.raises(RankwiseError, match=r"scores \(2, 3\) and labels \(2, 2\)"):
        CoverageError().update(predictions=np.zeros((2, 3)), targets=np.zeros((2, 2)))
    with pytest.raises(RankwiseError, match="labels must not be negative"):
        NDCGScore().update(predictions=[[0.1, 0.2]], targets=[[-1, 1]])
    with pytest.raises(RankwiseError, match="log_base must be greater than 1"):
        DCGScore(log_base=1)
