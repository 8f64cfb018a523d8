"""Undefined values are a convention: ``zero_division`` ("nan", 0 or 1, scikit-learn's name and
meaning) for precision, recall and F-beta; rankwise's default leaves undefined classes out."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from rankwise.errors import RankwiseError
from rankwise.streaming import FBeta, Precision, Recall

skm = pytest.importorskip("sklearn.metrics")


def test_by_hand() -> None:
    # class 2 is never predicted (precision undefined) and never true (recall undefined)
    labels, predictions = [0, 1, 1, 0], [0, 1, 0, 0]
    p = Precision(task="multiclass", num_classes=3, average=None).update(predictions=predictions, targets=labels)
    assert p.compute()[:2].tolist() == [2 / 3, 1.0] and math.isnan(p.compute()[2])
    # macro leaves the undefined class out: (2/3 + 1) / 2; with zero_division=0 it counts: (2/3 + 1 + 0) / 3
    macro = Precision(task="multiclass", num_classes=3).update(predictions=predictions, targets=labels)
    assert macro.compute() == pytest.approx(5 / 6)
    zero = Precision(task="multiclass", num_classes=3, zero_division=0).update(predictions=predictions, targets=labels)
    assert zero.compute() == pytest.approx(5 / 9)
    assert math.isnan(Recall().update(predictions=[0, 0], targets=[0, 0]).compute())


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("zero_division", ["nan", 0, 1])
def test_equal_to_scikit_learn(seed: int, zero_division: object) -> None:
    rng = np.random.default_rng(seed)
    n, c = int(rng.integers(2, 12)), 4
    y, pred = rng.integers(0, c - 1, n), rng.integers(0, c - 1, n)  # class 3 never appears
    theirs_zd = np.nan if zero_division == "nan" else zero_division
    for average in ("macro", "weighted", "micro", None):
        for ours, theirs in ((Precision, skm.precision_score), (Recall, skm.recall_score),
                             (FBeta, skm.f1_score)):
            got = ours(task="multiclass", num_classes=c, average=average, zero_division=zero_division).update(
                predictions=pred, targets=y).compute()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = theirs(y, pred, labels=list(range(c)), average=average, zero_division=theirs_zd)
            np.testing.assert_allclose(got, expected, atol=1e-12, equal_nan=True,
                                       err_msg=f"{ours.__name__} {average} {zero_division}")


def test_bad_value() -> None:
    with pytest.raises(RankwiseError, match="zero_division=0.5: expected 'nan', 0, 1 or 'torchmetrics'"):
        Precision(zero_division=0.5)


@pytest.mark.parametrize("seed", range(5))
def test_per_class_accuracy_and_multilabel_mcc_equal_torchmetrics(seed: int) -> None:
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional.classification")
    from rankwise.streaming import Accuracy, MatthewsCorrCoef

    rng = np.random.default_rng(seed)
    y, p = rng.integers(0, 4, 50), rng.dirichlet([1.0] * 4, 50)
    p5 = np.c_[p, np.zeros(50)]  # class 4 has no rows: left out of the macro mean, as torchmetrics does
    macro = Accuracy(task="multiclass", num_classes=5, average="macro").update(predictions=p5, targets=y).compute()
    assert macro == pytest.approx(float(tmf.multiclass_accuracy(torch.tensor(p5), torch.tensor(y), num_classes=5,
                                                                average="macro")), abs=1e-6)
    per_class = Accuracy(task="multiclass", num_classes=4, average=None).update(predictions=p, targets=y).compute()
    np.testing.assert_allclose(per_class, tmf.multiclass_accuracy(torch.tensor(p), torch.tensor(y), num_classes=4,
                                                                  average="none").numpy(), atol=1e-6)
    labels, scores = rng.integers(0, 2, (40, 3)), rng.random((40, 3))
    mcc = MatthewsCorrCoef(task="multilabel", num_classes=3).update(predictions=scores, targets=labels).compute()
    assert mcc == pytest.approx(float(tmf.multilabel_matthews_corrcoef(torch.tensor(scores), torch.tensor(labels),
                                                                       num_labels=3)), abs=1e-6)


def test_evaluate_zero_division_convention() -> None:
    """A query without a relevant judged document: recall, AP, nDCG, RR are 0/0. trec_eval (and
    the default) says 0; ``zero_division='nan'`` leaves it out of the mean; ``1`` counts it 1."""
    import rankwise

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 0}}
    run = {"q1": {"a": 0.9, "b": 0.1}, "q2": {"c": 0.5, "d": 0.4}}
    names = ["recall@2", "map", "ndcg@2", "mrr", "P@2"]
    default = rankwise.evaluate(qrels, run, names)
    # q1: everything 1 except P@2 = 1/2; q2: R = 0
    assert default.summary.loc["run"].tolist() == [0.5, 0.5, 0.5, 0.5, 0.25]
    undefined = rankwise.evaluate(qrels, run, names, zero_division="nan")
    assert math.isnan(undefined.per_query.loc[("run", "q2"), "map"])
    assert undefined.summary.loc["run"].tolist() == [1.0, 1.0, 1.0, 1.0, 0.25]  # P@2 is defined: 0 for q2
    assert "zero_division=nan" in undefined.signatures["map"]
    one = rankwise.evaluate(qrels, run, names, zero_division=1)
    assert one.summary.loc["run"].tolist() == [1.0, 1.0, 1.0, 1.0, 0.25]
    # for one metric alone, in ir_measures' syntax
    alone = rankwise.evaluate(qrels, run, ["AP(zero_division=nan)", "AP"]).summary.loc["run"].tolist()
    assert alone == [1.0, 0.5]
    with pytest.raises(RankwiseError, match="zero_division='2'"):
        rankwise.evaluate(qrels, run, ["map"], zero_division=2)


def test_torchmetrics_macro_rule_is_a_named_option() -> None:
    """torchmetrics leaves a class never seen out of macro/weighted averages and scores other 0/0
    classes 0: no zero_division value reproduced it before (issue #37)."""
    import numpy as np
    import torch
    from torchmetrics.classification import MulticlassF1Score, MulticlassPrecision, MulticlassRecall

    from rankwise.streaming import FBeta, Precision, Recall

    preds, target = np.array([0, 0, 1, 1, 0]), np.array([0, 1, 1, 2, 0])   # class 3 never seen, 2 never predicted
    cases = [(MulticlassPrecision, Precision, {}), (MulticlassRecall, Recall, {}),
             (MulticlassF1Score, FBeta, {"beta": 1.0})]
    for theirs, ours, extra in cases:
        for average in ("macro", "weighted"):
            want = float(theirs(num_classes=4, average=average)(torch.tensor(preds), torch.tensor(target)))
            got = ours(task="multiclass", num_classes=4, average=average, zero_division="torchmetrics",
                       **extra).update(predictions=preds, targets=target).compute()
            assert got == pytest.approx(want, rel=1e-6), (theirs.__name__, average)
