"""ROC AUC variants equal scikit-learn's ``roc_auc_score``: one-vs-one (macro and weighted),
micro and samples averaging, partial AUC (``max_fpr``, McClish); binary top-k accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.errors import RankwiseError
from rankwise.streaming import ROCAUC, Accuracy
from rankwise.streaming.curves import grid

skm = pytest.importorskip("sklearn.metrics")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", range(30))
def test_equal_to_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, 70)
    p = rng.dirichlet([1, 1, 1], 70)
    for average in ("macro", "weighted"):
        ours = ROCAUC(task="multiclass", num_classes=3, multi_class="ovo", average=average)
        halves = ours.empty().update(predictions=p[:30], targets=y[:30]).merge(
            ours.empty().update(predictions=p[30:], targets=y[30:]))
        assert halves.compute() == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovo", average=average),
                                                 abs=1e-12)
    micro = ROCAUC(task="multiclass", num_classes=3, average="micro").update(predictions=p, targets=y).compute()
    assert micro == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr", average="micro"), abs=1e-12)
    labels = (rng.random((40, 4)) < 0.5).astype(int)
    scores = grid(11)[rng.integers(1, 10, (40, 4))]  # on the grid: exact and grid curves agree
    expected = skm.roc_auc_score(labels, scores, average="micro")
    for n in (None, 11):
        got = ROCAUC(task="multilabel", num_classes=4, average="micro", num_thresholds=n).update(
            predictions=scores, targets=labels).compute()
        assert got == pytest.approx(expected, abs=1e-12)
    both = (labels.min(axis=1) == 0) & (labels.max(axis=1) == 1)
    samples = ROCAUC(task="multilabel", num_classes=4, average="samples").update(
        predictions=scores[both], targets=labels[both]).compute()
    assert samples == pytest.approx(skm.roc_auc_score(labels[both], scores[both], average="samples"), abs=1e-12)
    yb, pb = rng.integers(0, 2, 60), np.round(rng.random(60), 2)  # ties
    for max_fpr in (0.05, 0.3, 0.77, 1.0):
        got = ROCAUC(max_fpr=max_fpr).update(predictions=pb, targets=yb).compute()
        assert got == pytest.approx(skm.roc_auc_score(yb, pb, max_fpr=max_fpr), abs=1e-12)


def test_partial_auc_by_hand() -> None:
    # ROC (0,0)-(0,.5)-(.5,.5)-(.5,1)-(1,1); up to fpr .5 the area is .25; McClish: .5 (1 + (.25 - .125) / .375)
    got = ROCAUC(max_fpr=0.5).update(predictions=[0.1, 0.4, 0.35, 0.8], targets=[0, 0, 1, 1]).compute()
    assert got == pytest.approx(2 / 3)


@pytest.mark.filterwarnings("ignore")
def test_binary_top_k_accuracy() -> None:
    y, s = np.array([0, 1, 1, 0]), np.array([0.2, 0.7, 0.4, 0.9])
    assert Accuracy(top_k=2).update(predictions=s, targets=y).compute() == skm.top_k_accuracy_score(y, s, k=2) == 1
    assert Accuracy().update(predictions=s, targets=y).compute() == skm.top_k_accuracy_score(y, s, k=1) == 0.5


def test_refused_combinations() -> None:
    with pytest.raises(RankwiseError, match="multi_class='ovo' needs task='multiclass'"):
        ROCAUC(multi_class="ovo")
    with pytest.raises(RankwiseError, match="max_fpr must lie in"):
        ROCAUC(max_fpr=0.0)
    with pytest.raises(RankwiseError, match="average='samples' needs task='multilabel'"):
        ROCAUC(task="multiclass", num_classes=3, average="samples")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [5, 11, 100])
def test_torchmetrics_binned_thresholds(seed: int, n: int) -> None:
    """``thresholds=N``: torchmetrics' grid, linspace(0, 1, N), a score counts at t when >= t
    (torchmetrics computes in float32: 1e-6)."""
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional.classification")
    rng = np.random.default_rng(seed)
    p, y = rng.random(300), rng.integers(0, 2, 300)
    p[:5] = [0.0, 0.5, 0.25, 1.0, 0.75]  # on the grid: counted at their own threshold
    assert ROCAUC(thresholds=n).update(predictions=p, targets=y).compute() == pytest.approx(
        float(tmf.binary_auroc(torch.tensor(p), torch.tensor(y), thresholds=n)), abs=1e-6)
    from rankwise.streaming import AveragePrecision

    assert AveragePrecision(thresholds=n).update(predictions=p, targets=y).compute() == pytest.approx(
        float(tmf.binary_average_precision(torch.tensor(p), torch.tensor(y), thresholds=n)), abs=1e-6)
    labels, scores = rng.integers(0, 2, (200, 3)), rng.random((200, 3))
    got = ROCAUC(task="multilabel", num_classes=3, thresholds=n).update(predictions=scores, targets=labels).compute()
    assert got == pytest.approx(float(tmf.multilabel_auroc(torch.tensor(scores), torch.tensor(labels), num_labels=3,
                                                           thresholds=n)), abs=1e-6)
    with pytest.raises(RankwiseError, match="not both"):
        ROCAUC(num_thresholds=n, thresholds=n)
