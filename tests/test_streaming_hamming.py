"""Multilabel Hamming accuracy (right cells / cells) equals 1 - scikit-learn's hamming_loss
(a regression: it was NaN), on seeded data and through merged states."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import hamming_loss

from rankwise.streaming import Accuracy


def test_hamming_accuracy_equals_scikit_learn() -> None:
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 2, (50, 4))
    predictions = rng.integers(0, 2, (50, 4))
    whole = Accuracy(task="multilabel", multilabel="hamming").update(predictions=predictions, targets=labels)
    assert whole.compute() == pytest.approx(1 - hamming_loss(labels, predictions), abs=1e-15)
    first = Accuracy(task="multilabel", multilabel="hamming").update(predictions=predictions[:20], targets=labels[:20])
    rest = Accuracy(task="multilabel", multilabel="hamming").update(predictions=predictions[20:], targets=labels[20:])
    assert first.merge(rest).compute() == pytest.approx(whole.compute(), abs=1e-15)
    # hand-computed: [[1,0,1],[0,1,1]] against [[1,0,0],[0,1,1]]: 5 of 6 cells right
    small = Accuracy(task="multilabel", multilabel="hamming")
    assert small.update(predictions=[[1, 0, 1], [0, 1, 1]], targets=[[1, 0, 0], [0, 1, 1]]).compute() == 5 / 6
