"""Streaming states: merging chunk states equals one state over everything (every metric, with
hypothesis), differential checks against scikit-learn, scipy and torchmetrics, hand-computed
click metrics (CLAX's example), MultiMetric routing, masks, tensors and checkpoints."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import rankwise
from rankwise import streaming as rs
from rankwise.state import MetricInputError, MultiMetric

# --- generators of one batch of inputs per family ------------------------------------------------


def binary(rng: np.random.Generator, n: int) -> dict:
    labels = rng.integers(0, 2, n)
    return {"predictions": np.round(np.clip(0.3 * labels + rng.uniform(0, 0.7, n), 0, 1), 2), "targets": labels}


def multiclass(rng: np.random.Generator, n: int, c: int = 4) -> dict:
    p = rng.dirichlet(np.ones(c), n)
    return {"predictions": p, "targets": rng.integers(0, c, n)}


def multilabel(rng: np.random.Generator, n: int, c: int = 3) -> dict:
    return {"predictions": rng.uniform(0, 1, (n, c)), "targets": rng.integers(0, 2, (n, c))}


def regression(rng: np.random.Generator, n: int) -> dict:
    y = rng.normal(5, 2, n)
    return {"predictions": y + rng.normal(0, 1, n), "targets": y}


def positive_regression(rng: np.random.Generator, n: int) -> dict:
    y = rng.uniform(0, 10, n)
    return {"predictions": np.abs(y + rng.normal(0, 1, n)), "targets": y}


def vectors(rng: np.random.Generator, n: int) -> dict:
    return {"predictions": rng.normal(size=(n, 3)), "targets": rng.normal(size=(n, 3))}


def clicks(rng: np.random.Generator, n: int, key: str = "conditional_log_probs") -> dict:
    return {key: np.log(rng.uniform(0.01, 0.99, (n, 5))), "clicks": rng.integers(0, 2, (n, 5)),
            "where": rng.uniform(size=(n, 5)) < 0.9}


def padded(rng: np.random.Generator, n: int) -> dict:
    return {"predictions": np.round(rng.uniform(size=(n, 8)), 1), "targets": rng.integers(0, 3, (n, 8)),
            "where": rng.uniform(size=(n, 8)) < 0.8}


WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "a", "big", "red", "über", "ça", "naïve", "猫"]


def sentences(rng: np.random.Generator, n: int) -> dict:
    def one() -> str:
        return " ".join(rng.choice(WORDS, rng.integers(1, 9)))

    return {"predictions": [one() for _ in range(n)], "targets": [one() for _ in range(n)]}


def images(rng: np.random.Generator, n: int) -> dict:
    target = rng.uniform(size=(n, 12, 12))
    return {"predictions": np.clip(target + rng.normal(0, 0.1, target.shape), 0, 1), "targets": target}


def class_maps(rng: np.random.Generator, n: int) -> dict:
    target = rng.integers(0, 4, (n, 6, 6))
    pred = np.where(rng.uniform(size=target.shape) < 0.7, target, rng.integers(0, 4, target.shape))
    return {"predictions": pred, "targets": target}


def signals(rng: np.random.Generator, n: int) -> dict:
    target = rng.normal(size=(n, 50))
    return {"predictions": target + rng.normal(0, 0.3, target.shape), "targets": target}


METRICS: dict[str, tuple[Callable[[], rs.Metric], Callable[[np.random.Generator, int], dict]]] = {
    "accuracy": (lambda: rs.Accuracy(), binary),
    "accuracy_top2": (lambda: rs.Accuracy(task="multiclass", num_classes=4, top_k=2), multiclass),
    "accuracy_multilabel": (lambda: rs.Accuracy(task="multilabel", num_classes=3), multilabel),
    "confusion": (lambda: rs.ConfusionMatrix(task="multiclass", num_classes=4), multiclass),
    "precision": (lambda: rs.Precision(task="multiclass", num_classes=4, average="weighted"), multiclass),
    "recall": (lambda: rs.Recall(), binary),
    "f2": (lambda: rs.FBeta(task="multilabel", num_classes=3, beta=2.0, average="micro"), multilabel),
    "mcc": (lambda: rs.MatthewsCorrCoef(task="multiclass", num_classes=4), multiclass),
    "log_loss": (lambda: rs.LogLoss(task="multiclass"), multiclass),
    "brier": (lambda: rs.BrierScore(), binary),
    "ece": (lambda: rs.CalibrationError(n_bins=10), binary),
    "roc_auc": (lambda: rs.ROCAUC(), binary),
    "roc_auc_grid": (lambda: rs.ROCAUC(num_thresholds=101), binary),
    "average_precision": (lambda: rs.AveragePrecision(), binary),
    "average_precision_grid": (lambda: rs.AveragePrecision(num_thresholds=101), binary),
    "roc_auc_multiclass": (lambda: rs.ROCAUC(task="multiclass", num_classes=4, average="weighted"), multiclass),
    "average_precision_multilabel_grid": (lambda: rs.AveragePrecision(num_thresholds=50, task="multilabel",
                                                                      num_classes=3), multilabel),
    "mae": (lambda: rs.MeanAbsoluteError(), regression),
    "rmse": (lambda: rs.RootMeanSquaredError(), regression),
    "msle": (lambda: rs.MeanSquaredLogError(), positive_regression),
    "r2": (lambda: rs.R2Score(), regression),
    "pearson": (lambda: rs.PearsonCorrCoef(), regression),
    "spearman": (lambda: rs.SpearmanCorrCoef(), regression),
    "cosine": (lambda: rs.CosineSimilarity(), vectors),
    "log_likelihood": (lambda: rs.LogLikelihood(positions=5), clicks),
    "conditional_perplexity": (lambda: rs.ConditionalPerplexity(positions=5), clicks),
    "perplexity": (lambda: rs.Perplexity(positions=5), lambda rng, n: clicks(rng, n, "log_probs")),
    "ctr_calibration": (lambda: rs.CTRCalibration(positions=5),
                        lambda rng, n: {"predictions": rng.uniform(size=(n, 5)),
                                        "clicks": rng.integers(0, 2, (n, 5))}),
    "ranking": (lambda: rs.RankingMetrics(["ndcg@5", "mrr", "map", "P@3", "recall@5", "err@5", "Rprec"], max_label=2),
                padded),
    "ranking_expected_ties": (lambda: rs.RankingMetrics(["ndcg@3", "P@2", "map"], ties="expected"), padded),
    "bleu": (lambda: rs.BLEU(), sentences),
    "rouge": (lambda: rs.ROUGE(tokenizer="unicode"), sentences),
    "wer": (lambda: rs.WordErrorRate(), sentences),
    "cer": (lambda: rs.CharErrorRate(), sentences),
    "token_perplexity": (lambda: rs.TokenPerplexity(),
                         lambda rng, n: {"logits": rng.normal(size=(n, 4, 6)), "targets": rng.integers(0, 6, (n, 4)),
                                         "where": rng.uniform(size=(n, 4)) < 0.8}),
    "psnr": (lambda: rs.PSNR(data_range=1.0), images),
    "psnr_per_image": (lambda: rs.PSNR(data_range=1.0, per_image=True), images),
    "ssim": (lambda: rs.SSIM(data_range=1.0, win_size=5), images),
    "iou": (lambda: rs.IoU(num_classes=4), class_maps),
    "dice": (lambda: rs.Dice(num_classes=4, ignore_index=3), class_maps),
    "snr": (lambda: rs.SNR(zero_mean=True), signals),
}


def _close(a: object, b: object) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)  # type: ignore[arg-type]
        for k in a:
            _close(a[k], b[k])  # type: ignore[index]
    elif isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):  # type: ignore[call-overload]
            _close(x, y)
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12,
                                   equal_nan=True)


@pytest.mark.parametrize("name", list(METRICS))
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cuts=st.lists(st.integers(1, 39), max_size=4, unique=True))
def test_merging_chunk_states_equals_one_state(name: str, seed: int, cuts: list[int]) -> None:
    factory, generate = METRICS[name]
    batch = generate(np.random.default_rng(seed), 40)
    whole = factory().update(**batch)
    bounds = [0, *sorted(cuts), 40]
    spans = zip(bounds, bounds[1:], strict=False)
    parts = [factory().update(**{k: v[a:b] for k, v in batch.items()}) for a, b in spans]
    merged = parts[0].empty()
    for p in parts:
        merged = merged.merge(p)
    _close(whole.compute(), merged.compute())
    # a checkpoint restores the same state
    restored = factory().load_state_dict(merged.state_dict())
    _close(merged.compute(), restored.compute())


@pytest.mark.parametrize("name", list(METRICS))
def test_empty_batches_are_accepted(name: str) -> None:
    """An empty batch (an empty shard, the last step of an epoch) is accepted and adds nothing."""
    factory, generate = METRICS[name]
    batch = generate(np.random.default_rng(3), 40)
    empty = {k: v[:0] for k, v in batch.items()}
    padded = factory().update(**empty).update(**batch).update(**empty)
    _close(factory().update(**batch).compute(), padded.compute())


@pytest.mark.parametrize("metric", ["pearson", "r2"])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 7))
def test_merges_keep_single_pass_precision_far_from_zero(metric: str, seed: int, chunk: int) -> None:
    """Data near 1e9 with unit spread, merged from many small chunks, equals one pass over a
    float64-exact reference to 1e-12 (naive sums of squares lose every digit here)."""
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    x = 1e9 + rng.normal(size=300)
    y = 1e9 + 0.5 * (x - 1e9) + rng.normal(size=300)
    factory = rs.PearsonCorrCoef if metric == "pearson" else rs.R2Score
    merged = factory().empty()
    for start in range(0, len(x), chunk):
        merged = merged.merge(factory().update(predictions=x[start:start + chunk], targets=y[start:start + chunk]))
    fx, fy = [Fraction(v) for v in x], [Fraction(v) for v in y]
    mx, my = sum(fx) / len(fx), sum(fy) / len(fy)
    cxy = sum((a - mx) * (b - my) for a, b in zip(fx, fy, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in fx), sum((b - my) ** 2 for b in fy)
    if metric == "pearson":
        exact = float(cxy) / float(np.sqrt(float(sxx) * float(syy)))
    else:
        exact = 1 - float(sum((a - b) ** 2 for a, b in zip(fx, fy, strict=True)) / syy)
    single = factory().update(predictions=x, targets=y).compute()
    assert merged.compute() == pytest.approx(exact, rel=1e-12)
    assert single == pytest.approx(exact, rel=1e-12)


# --- differential: scikit-learn, scipy ------------------------------------------------------------

def test_top_k_accuracy_with_ties_equals_scikit_learn() -> None:
    """Probabilities on a coarse grid tie often; scikit-learn ranks tied classes by index,
    highest first (a stable argsort, reversed)."""
    from sklearn.metrics import top_k_accuracy_score

    rng = np.random.default_rng(11)
    probs = rng.integers(0, 4, size=(400, 5)).astype(float)
    probs[probs.sum(axis=1) == 0, 0] = 1.0
    probs /= probs.sum(axis=1, keepdims=True)
    labels = rng.integers(0, 5, size=400)
    for k in (2, 3, 4):
        ours = rs.Accuracy(task="multiclass", num_classes=5, top_k=k).update(predictions=probs, targets=labels)
        assert ours.compute() == top_k_accuracy_score(labels, probs, k=k, labels=range(5)), k
    # top_k=1 is plain accuracy of the argmax (the first of tied classes), scikit-learn's accuracy_score
    ours = rs.Accuracy(task="multiclass", num_classes=5).update(predictions=probs, targets=labels)
    assert ours.compute() == float((probs.argmax(axis=1) == labels).mean())
    # a hand example: row [0.4, 0.3, 0.3] with true class 1: class 2 ties with it and ranks first
    one = rs.Accuracy(task="multiclass", num_classes=3, top_k=2)
    assert one.update(predictions=[[0.4, 0.3, 0.3]], targets=[1]).compute() == 0.0
    assert top_k_accuracy_score([1], [[0.4, 0.3, 0.3]], k=2, labels=[0, 1, 2]) == 0.0


def test_classification_equals_scikit_learn() -> None:
    rng = np.random.default_rng(1)
    b, m, ml = binary(rng, 500), multiclass(rng, 500), multilabel(rng, 500)
    pb = (b["predictions"] >= 0.5).astype(int)
    pm = m["predictions"].argmax(axis=1)
    pml = (ml["predictions"] >= 0.5).astype(int)
    assert rs.Accuracy().update(**b).compute() == pytest.approx(skm.accuracy_score(b["targets"], pb))
    assert rs.Accuracy(task="multilabel", num_classes=3).update(**ml).compute() == pytest.approx(
        skm.accuracy_score(ml["targets"], pml))
    assert rs.Accuracy(task="multiclass", num_classes=4, top_k=2).update(**m).compute() == pytest.approx(
        skm.top_k_accuracy_score(m["targets"], m["predictions"], k=2))
    assert (rs.ConfusionMatrix(task="multiclass", num_classes=4).update(**m).compute()
            == skm.confusion_matrix(m["targets"], pm)).all()
    assert (rs.ConfusionMatrix(task="multilabel", num_classes=3).update(**ml).compute()
            == skm.multilabel_confusion_matrix(ml["targets"], pml)).all()
    for avg in ("micro", "macro", "weighted", None):
        for ours, theirs in ((rs.Precision, skm.precision_score), (rs.Recall, skm.recall_score)):
            got = ours(task="multiclass", num_classes=4, average=avg).update(**m).compute()
            np.testing.assert_allclose(got, theirs(m["targets"], pm, average=avg, zero_division=0), rtol=1e-12)
            got = ours(task="multilabel", num_classes=3, average=avg).update(**ml).compute()
            np.testing.assert_allclose(got, theirs(ml["targets"], pml, average=avg, zero_division=0), rtol=1e-12)
        got = rs.FBeta(task="multiclass", num_classes=4, average=avg, beta=0.5).update(**m).compute()
        np.testing.assert_allclose(got, skm.fbeta_score(m["targets"], pm, beta=0.5, average=avg, zero_division=0),
                                   rtol=1e-12)
    assert rs.FBeta().update(**b).compute() == pytest.approx(skm.f1_score(b["targets"], pb))
    assert rs.MatthewsCorrCoef(task="multiclass", num_classes=4).update(**m).compute() == pytest.approx(
        skm.matthews_corrcoef(m["targets"], pm), rel=1e-12)
    assert rs.LogLoss().update(**b).compute() == pytest.approx(skm.log_loss(b["targets"], b["predictions"]),
                                                               rel=1e-12)
    assert rs.LogLoss(task="multiclass").update(**m).compute() == pytest.approx(
        skm.log_loss(m["targets"], m["predictions"]), rel=1e-12)
    assert rs.BrierScore().update(**b).compute() == pytest.approx(
        skm.brier_score_loss(b["targets"], b["predictions"]), rel=1e-12)


def test_auc_equals_scikit_learn_exact_and_on_the_grid() -> None:
    rng = np.random.default_rng(2)
    b = binary(rng, 2000)  # scores rounded to 0.01: on the 101-point grid, with many ties
    auc = skm.roc_auc_score(b["targets"], b["predictions"])
    ap = skm.average_precision_score(b["targets"], b["predictions"])
    assert rs.ROCAUC().update(**b).compute() == pytest.approx(auc, abs=1e-12)
    assert rs.ROCAUC(num_thresholds=101).update(**b).compute() == pytest.approx(auc, abs=1e-12)
    assert rs.AveragePrecision().update(**b).compute() == pytest.approx(ap, abs=1e-12)
    assert rs.AveragePrecision(num_thresholds=101).update(**b).compute() == pytest.approx(ap, abs=1e-12)
    fpr, tpr, thresholds = skm.roc_curve(b["targets"], b["predictions"], drop_intermediate=False)
    ours = rs.ROCAUC().update(**b).curve()
    np.testing.assert_allclose(ours[0], fpr, atol=1e-15)
    np.testing.assert_allclose(ours[1], tpr, atol=1e-15)
    m, ml = multiclass(rng, 800), multilabel(rng, 800)
    for avg in ("macro", "weighted", None):
        np.testing.assert_allclose(
            rs.ROCAUC(task="multiclass", num_classes=4, average=avg).update(**m).compute(),
            skm.roc_auc_score(m["targets"], m["predictions"], multi_class="ovr", average=avg), rtol=1e-12)
        np.testing.assert_allclose(
            rs.ROCAUC(task="multilabel", num_classes=3, average=avg).update(**ml).compute(),
            skm.roc_auc_score(ml["targets"], ml["predictions"], average=avg), rtol=1e-12)
        np.testing.assert_allclose(
            rs.AveragePrecision(task="multilabel", num_classes=3, average=avg).update(**ml).compute(),
            skm.average_precision_score(ml["targets"], ml["predictions"], average=avg), rtol=1e-12)
    coarse = rs.ROCAUC(num_thresholds=11).update(**b).compute()  # a coarse grid: an approximation
    assert abs(coarse - auc) < 0.02 and coarse != auc


def test_regression_equals_scikit_learn_and_scipy() -> None:
    from scipy import stats

    rng = np.random.default_rng(3)
    r, p, v = regression(rng, 1000), positive_regression(rng, 1000), vectors(rng, 50)
    y, yhat = r["targets"], r["predictions"]
    assert rs.MeanAbsoluteError().update(**r).compute() == pytest.approx(skm.mean_absolute_error(y, yhat), rel=1e-12)
    assert rs.MeanSquaredError().update(**r).compute() == pytest.approx(skm.mean_squared_error(y, yhat), rel=1e-12)
    assert rs.RootMeanSquaredError().update(**r).compute() == pytest.approx(
        skm.root_mean_squared_error(y, yhat), rel=1e-12)
    assert rs.MeanSquaredLogError().update(**p).compute() == pytest.approx(
        skm.mean_squared_log_error(p["targets"], p["predictions"]), rel=1e-12)
    assert rs.RootMeanSquaredLogError().update(**p).compute() == pytest.approx(
        skm.root_mean_squared_log_error(p["targets"], p["predictions"]), rel=1e-12)
    assert rs.R2Score().update(**r).compute() == pytest.approx(skm.r2_score(y, yhat), rel=1e-12)
    assert rs.PearsonCorrCoef().update(**r).compute() == pytest.approx(stats.pearsonr(yhat, y)[0], rel=1e-12)
    assert rs.SpearmanCorrCoef().update(**r).compute() == pytest.approx(stats.spearmanr(yhat, y)[0], rel=1e-12)
    cos = np.diag(skm.pairwise.cosine_similarity(v["predictions"], v["targets"])).mean()
    assert rs.CosineSimilarity().update(**v).compute() == pytest.approx(cos, rel=1e-12)


def test_chan_merge_keeps_precision_where_naive_sums_cancel() -> None:
    # values near 1e9 with unit spread: a naive sum of squares loses every digit of the variance
    rng = np.random.default_rng(4)
    y = 1e9 + rng.normal(0, 1, 10_000)
    yhat = y + rng.normal(0, 0.1, 10_000)
    m = rs.R2Score().empty()
    for chunk in range(10):
        m = m.merge(rs.R2Score().update(predictions=yhat[chunk::10], targets=y[chunk::10]))
    assert m.compute() == pytest.approx(skm.r2_score(y, yhat), rel=1e-9)


# --- differential: torchmetrics ---------------------------------------------------------------------

def test_calibration_and_ranking_equal_torchmetrics() -> None:
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional")
    rng = np.random.default_rng(5)
    b = binary(rng, 1000)
    ece = tmf.classification.binary_calibration_error(torch.tensor(b["predictions"]), torch.tensor(b["targets"]),
                                                      n_bins=15)
    assert rs.CalibrationError().update(**b).compute() == pytest.approx(float(ece), abs=1e-6)
    m = multiclass(rng, 1000)
    ece = tmf.classification.multiclass_calibration_error(torch.tensor(m["predictions"]),
                                                          torch.tensor(m["targets"]), num_classes=4, n_bins=10)
    assert rs.CalibrationError(task="multiclass", n_bins=10).update(**m).compute() == pytest.approx(float(ece),
                                                                                                   abs=1e-6)
    p = rng.random(1000)  # off the bin edges: numpy's and torch's linspace may differ there in the last bit
    y = (rng.random(1000) < p).astype(int)
    ece = tmf.classification.binary_calibration_error(torch.tensor(p), torch.tensor(y), n_bins=15, norm="l2")
    assert rs.CalibrationError(norm="l2").update(predictions=p, targets=y).compute() == pytest.approx(float(ece),
                                                                                                    abs=1e-12)
    # ranking: distinct scores (torch's order of ties is unspecified), graded labels, padding
    scores = rng.permutation(64 * 10).reshape(64, 10) / 640.0 + 0.01
    labels = rng.integers(0, 3, (64, 10))
    where = rng.uniform(size=(64, 10)) < 0.85
    ours = rs.RankingMetrics(["ndcg@5", "mrr", "P@5"], missing="zero").update(predictions=scores, targets=labels,
                                                                            where=where).compute()
    idx = torch.tensor(np.broadcast_to(np.arange(64)[:, None], (64, 10))[where])
    s, t = torch.tensor(scores[where]), torch.tensor(labels[where])
    from torchmetrics.retrieval import RetrievalMRR, RetrievalNormalizedDCG, RetrievalPrecision

    assert ours["ndcg@5"] == pytest.approx(float(RetrievalNormalizedDCG(top_k=5)(s, t, indexes=idx)), abs=1e-6)
    assert ours["mrr"] == pytest.approx(float(RetrievalMRR()(s, t >= 1, indexes=idx)), abs=1e-6)
    assert ours["P@5"] == pytest.approx(float(RetrievalPrecision(top_k=5)(s, t >= 1, indexes=idx)), abs=1e-6)


def test_padded_ranking_equals_evaluate() -> None:
    rng = np.random.default_rng(6)
    batch = padded(rng, 30)
    names = ["ndcg@5", "ndcg", "map", "mrr@3", "P@5", "recall@5", "Rprec", "bpref", "err@5", "ap_min@5"]
    ours = rs.RankingMetrics(names, max_label=2).update(**batch).compute()  # the data's largest label is 2
    qrels, run = {}, {}
    for q in range(30):
        items = np.flatnonzero(batch["where"][q])
        if len(items):
            qrels[str(q)] = {f"d{i}": int(batch["targets"][q, i]) for i in items}
            run[str(q)] = {f"d{i}": float(batch["predictions"][q, i]) for i in items}
    ref = rankwise.evaluate(qrels, run, names, ties="input", score_precision="float64").summary.iloc[0]
    for name in names:
        assert ours[name] == pytest.approx(ref[name], abs=1e-12), name


# --- click metrics by hand (CLAX's documented example) ----------------------------------------------

def test_click_metrics_by_hand() -> None:
    logp = np.array([[-0.01, -10.0, -0.7]])
    clicks_ = np.array([[1, 0, 1]])
    ll = rs.LogLikelihood(positions=3).update(conditional_log_probs=logp, clicks=clicks_)
    per_rank = [-0.01, np.log(1 - np.exp(-10.0)), -0.7]
    np.testing.assert_allclose(ll.compute_per_rank(), per_rank, rtol=1e-12)
    assert ll.compute() == pytest.approx(np.mean(per_rank))
    ppl = rs.ConditionalPerplexity(positions=3).update(conditional_log_probs=logp, clicks=clicks_)
    expected = [2 ** (-v / np.log(2)) for v in per_rank]  # 2^(-log2 likelihood)
    np.testing.assert_allclose(ppl.compute_per_rank(), expected, rtol=1e-12)
    assert ppl.compute() == pytest.approx(np.mean(expected))
    # log-probability 0 and -inf: no NaN (a certain click observed; an impossible click not observed)
    edge = rs.Perplexity(positions=2).update(log_probs=[[0.0, -np.inf]], clicks=[[1, 0]])
    assert edge.compute_per_rank().tolist() == [1.0, 1.0]
    impossible = rs.LogLikelihood(positions=1).update(conditional_log_probs=[[-np.inf]], clicks=[[1]])
    assert impossible.compute() == -np.inf
    with pytest.raises(MetricInputError, match="log-probabilities"):
        rs.LogLikelihood(positions=1).update(conditional_log_probs=[[0.5]], clicks=[[1]])


# --- the API ------------------------------------------------------------------------------------------

def test_multimetric_routes_inputs_and_refuses_unknown_ones() -> None:
    mm = MultiMetric(acc=rs.Accuracy(), auc=rs.ROCAUC(), mse=rs.MeanSquaredError())
    with pytest.raises(MetricInputError, match="no metric takes logit"):
        mm.update(predictions=[0.2], targets=[0], logit=[1.0])
    mm = MultiMetric(acc=rs.Accuracy(), ll=rs.LogLikelihood(positions=2))
    with pytest.raises(MetricInputError, match="LogLikelihood.update: missing input"):
        mm.update(predictions=[[0.3, 0.1]], targets=[[1, 0]])
    mm = MultiMetric(ndcg=rs.NDCG(k=2), mrr=rs.MRR(k=2))
    out = mm.update(predictions=[[0.3, 0.1]], targets=[[1, 0]]).compute()
    assert out == {"ndcg": 1.0, "mrr": 1.0}


def test_masks_tensors_and_from_model_output() -> None:
    torch = pytest.importorskip("torch")
    p = torch.tensor([0.9, 0.1, 0.8, 0.3], requires_grad=True)
    y = torch.tensor([1, 0, 0, 1])
    keep = torch.tensor([True, True, False, False])
    m = rs.Accuracy.from_model_output(predictions=p, targets=y, where=keep, threshold=0.5)
    assert m.compute() == 1.0 and m.params["threshold"] == 0.5
    assert rs.ROCAUC().update(predictions=p, targets=y).compute() == pytest.approx(
        skm.roc_auc_score(y.numpy(), p.detach().numpy()))
    with pytest.raises(MetricInputError, match="where: shape"):
        rs.Accuracy().update(predictions=[0.1, 0.2], targets=[0, 1], where=[True])
    with pytest.raises(rankwise.errors.RankwiseError, match="cannot merge"):
        rs.Accuracy().merge(rs.Accuracy(threshold=0.3))


# --- text and image: the reference libraries ------------------------------------------------------

def test_text_metrics_equal_sacrebleu_rouge_score_and_jiwer() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    jiwer = pytest.importorskip("jiwer")
    data = sentences(np.random.default_rng(7), 200)
    hyps, refs = data["predictions"], data["targets"]
    bleu = rs.BLEU().empty()
    for i in range(0, 200, 50):  # four chunks, merged
        bleu = bleu.merge(rs.BLEU().update(predictions=hyps[i:i + 50], targets=refs[i:i + 50]))
    ref = sacrebleu.corpus_bleu(hyps, [refs])
    assert bleu.compute() == pytest.approx(ref.score, abs=1e-12)
    scorer = sacrebleu.BLEU()
    scorer.corpus_score(hyps, [refs])
    assert bleu.signature() == str(scorer.get_signature())
    two = rs.BLEU().update(predictions=hyps[:20], targets=[[a, b] for a, b in zip(refs[:20], refs[20:40],
                                                                                      strict=True)])
    expected = sacrebleu.corpus_bleu(hyps[:20], [refs[:20], refs[20:40]]).score
    assert two.compute() == pytest.approx(expected, abs=1e-12)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])
    ours = rs.ROUGE().update(predictions=hyps, targets=refs).compute()
    for kind in ("rouge1", "rouge2", "rougeL"):
        expected = np.mean([scorer.score(r, h)[kind].fmeasure for h, r in zip(hyps, refs, strict=True)])
        assert ours[kind] == pytest.approx(expected, abs=1e-12)
    # rouge-score's default tokenizer drops "猫" and "犬", so two different sentences look equal;
    # the unicode tokenizer keeps them: unigram overlap 1 of 2 -> F = 0.5
    uni = rs.ROUGE(["rouge1"], tokenizer="unicode").update(predictions=["猫 cat"], targets=["犬 cat"]).compute()
    default = rs.ROUGE(["rouge1"]).update(predictions=["猫 cat"], targets=["犬 cat"]).compute()
    assert uni["rouge1"] == 0.5 and default["rouge1"] == 1.0
    assert rs.WordErrorRate().update(**data).compute() == pytest.approx(jiwer.wer(refs, hyps), abs=1e-12)
    assert rs.CharErrorRate().update(**data).compute() == pytest.approx(jiwer.cer(refs, hyps), abs=1e-12)
    assert rs.MatchErrorRate().update(**data).compute() == pytest.approx(jiwer.mer(refs, hyps), abs=1e-12)
    assert rs.WordInformationLost().update(**data).compute() == pytest.approx(jiwer.wil(refs, hyps), abs=1e-12)
    assert rs.WordInformationPreserved().update(**data).compute() == pytest.approx(jiwer.wip(refs, hyps), abs=1e-12)


def test_token_perplexity_from_logits_equals_torch_cross_entropy() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    logits, targets = rng.normal(size=(3, 5, 7)), rng.integers(0, 7, (3, 5))
    ce = torch.nn.functional.cross_entropy(torch.tensor(logits).reshape(-1, 7), torch.tensor(targets).reshape(-1))
    assert rs.TokenPerplexity().update(logits=logits, targets=targets).compute() == pytest.approx(
        float(torch.exp(ce)), rel=1e-12)


def test_image_metrics_equal_scikit_image_scikit_learn_and_torchmetrics() -> None:
    skimage_metrics = pytest.importorskip("skimage.metrics")
    rng = np.random.default_rng(9)
    img = images(rng, 6)
    per_image = [skimage_metrics.peak_signal_noise_ratio(t, p, data_range=1.0)
                 for p, t in zip(img["predictions"], img["targets"], strict=True)]
    assert rs.PSNR(data_range=1.0, per_image=True).update(**img).compute() == pytest.approx(np.mean(per_image),
                                                                                            rel=1e-12)
    pooled = 10 * np.log10(1.0 / np.mean((img["predictions"] - img["targets"]) ** 2))
    assert rs.PSNR(data_range=1.0).update(**img).compute() == pytest.approx(pooled, rel=1e-12)
    for options in ({}, {"gaussian_weights": True, "sigma": 1.5, "use_sample_covariance": False}):
        expected = np.mean([skimage_metrics.structural_similarity(p, t, data_range=1.0, **options)
                            for p, t in zip(img["predictions"], img["targets"], strict=True)])
        assert rs.SSIM(data_range=1.0, **options).update(**img).compute() == pytest.approx(expected, rel=1e-12)
    maps = class_maps(rng, 5)
    iou = skm.jaccard_score(maps["targets"].ravel(), maps["predictions"].ravel(), average=None)
    np.testing.assert_allclose(rs.IoU(num_classes=4).update(**maps).compute_per_class(), iou, rtol=1e-12)
    dice = skm.f1_score(maps["targets"].ravel(), maps["predictions"].ravel(), average=None)
    np.testing.assert_allclose(rs.Dice(num_classes=4).update(**maps).compute_per_class(), dice, rtol=1e-12)
    torch = pytest.importorskip("torch")
    audio = pytest.importorskip("torchmetrics.functional.audio")
    sig = signals(rng, 4)
    for zero_mean in (False, True):
        ref = audio.signal_noise_ratio(torch.tensor(sig["predictions"]), torch.tensor(sig["targets"]),
                                     zero_mean=zero_mean).mean()
        assert rs.SNR(zero_mean=zero_mean).update(**sig).compute() == pytest.approx(float(ref), rel=1e-9)


def test_ranking_rows_without_relevant_items_and_padding_rows() -> None:
    scores = [[0.9, 0.1, 0.5], [0.3, 0.2, 0.1], [0.0, 0.0, 0.0]]
    labels = [[0, 1, 0], [0, 0, 0], [1, 0, 0]]
    where = [[True, True, True], [True, True, True], [False, False, False]]  # row 3 is padding
    zero = rs.MRR(k=3).update(predictions=scores, targets=labels, where=where)
    skip = rs.MRR(k=3, missing="skip").update(predictions=scores, targets=labels, where=where)
    assert zero.compute() == pytest.approx((1 / 3 + 0) / 2)  # d2 is third; row 2 has no relevant item
    assert skip.compute() == pytest.approx(1 / 3) and int(skip.state["queries"]) == 1
    with pytest.raises(rankwise.errors.RankwiseError, match="err@10: on batches this metric needs max_label"):
        rs.RankingMetrics(["err@10"])
    with pytest.raises(MetricInputError, match="non-negative integers"):
        rs.NDCG(k=2).update(predictions=[[0.1, 0.2]], targets=[[0.5, 1]])


# -- bad input is refused, never turned into a number (issue #37) --------------------------------

def test_unknown_constructor_arguments_are_errors() -> None:
    from rankwise.errors import MetricParameterError
    from rankwise.streaming import MeanAbsoluteError

    with pytest.raises(MetricParameterError, match=r"MeanAbsoluteError: unknown parameter\(s\) axis; it takes none"):
        MeanAbsoluteError(axis=0)


def test_cosine_similarity_along_an_axis() -> None:
    """metrax's ``CosineSimilarity(axis=0)``; it returned the axis=-1 value before."""
    from rankwise.streaming import CosineSimilarity

    pred = np.array([[1.0, 2.0, 0.0], [3.0, 1.0, 1.0]])
    target = np.array([[2.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    # axis 0: columns (1,3).(2,1) = 5 / (sqrt 10 sqrt 5); (2,1).(1,1) = 3 / (sqrt 5 sqrt 2); (0,1).(1,0) = 0
    expected = (5 / np.sqrt(50) + 3 / np.sqrt(10) + 0.0) / 3
    assert CosineSimilarity(axis=0).update(predictions=pred, targets=target).compute() == pytest.approx(expected,
                                                                                                          rel=1e-15)
    # axis -1: rows (1,2,0).(2,1,1) = 4 / (sqrt 5 sqrt 6); (3,1,1).(1,1,0) = 4 / (sqrt 11 sqrt 2)
    rows = (4 / np.sqrt(30) + 4 / np.sqrt(22)) / 2
    assert CosineSimilarity().update(predictions=pred, targets=target).compute() == pytest.approx(rows, rel=1e-15)
    with pytest.raises(MetricInputError, match="axis=2 for 2-dimensional inputs"):
        CosineSimilarity(axis=2).update(predictions=pred, targets=target)


def test_token_perplexity_reads_targets_from_vocabulary_log_probs() -> None:
    """log_probs [B, T, V] with targets: the targets' entries (6.2436, the mean over the whole
    vocabulary, was returned before)."""
    from rankwise.streaming import TokenPerplexity

    rng = np.random.default_rng(3)
    logits = rng.normal(size=(2, 4, 5))
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    targets = rng.integers(0, 5, size=(2, 4))
    picked = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    want = float(np.exp(-picked.mean()))
    assert TokenPerplexity().update(log_probs=logp, targets=targets).compute() == pytest.approx(want, rel=1e-12)
    assert TokenPerplexity().update(logits=logits, targets=targets).compute() == pytest.approx(want, rel=1e-12)
    with pytest.raises(MetricInputError, match=r"with targets, log_probs must be \[batch, tokens, vocabulary\]"):
        TokenPerplexity().update(log_probs=picked, targets=targets)
    with pytest.raises(MetricInputError, match="token ids must lie in 0..4"):
        TokenPerplexity().update(log_probs=logp, targets=targets + 5)


def test_overlap_metrics_refuse_probabilities() -> None:
    from rankwise.streaming import Dice, IoU

    for metric in (Dice, IoU):
        with pytest.raises(MetricInputError, match="predictions must be class ids"):
            metric(num_classes=2).update(predictions=[[0.9, 0.2, 0.7]], targets=[[1, 0, 1]])


def test_classification_inputs_are_checked() -> None:
    from rankwise.streaming import ROCAUC, Accuracy, BrierScore, LogLoss

    with pytest.raises(MetricInputError, match="probabilities must be finite numbers; element 1 is nan"):
        Accuracy().update(predictions=[0.9, np.nan], targets=[1, 0])   # counted as a negative (0.5) before
    for bad in (1.5, np.inf, -0.1):
        with pytest.raises(MetricInputError, match="probabilities must|finite"):
            LogLoss().update(predictions=[0.5, bad], targets=[1, 0])
    with pytest.raises(MetricInputError, match=r"probabilities must lie in \[0, 1\]; got 1.5"):
        BrierScore().update(predictions=[1.5], targets=[1])
    with pytest.raises(MetricInputError, match=r"binary needs \[N\] scores and \[N\] labels, got \(1, 2\) and \(2,\)"):
        ROCAUC().update(predictions=[[0.1, 0.9]], targets=[0, 1])


def test_a_crafted_saved_state_is_refused() -> None:
    from rankwise.errors import RankwiseError
    from rankwise.streaming import MeanSquaredError

    saved = MeanSquaredError().update(predictions=[1.0, 2.0], targets=[1.0, 4.0]).state_dict()
    saved["state"]["total"] = -4.0
    with pytest.raises(RankwiseError, match="state 'total' must not be negative, got -4.0"):
        MeanSquaredError().load_state_dict(saved)
    saved["state"]["total"] = float("nan")
    with pytest.raises(RankwiseError, match="state 'total' holds NaN"):
        MeanSquaredError().load_state_dict(saved)


def test_multimetric_sends_a_synonym_only_to_the_metrics_that_take_it() -> None:
    """CLAX's spelling in one update of LogLikelihood, Perplexity and ConditionalPerplexity (the
    seed's own call raised before)."""
    from rankwise.state import MultiMetric
    from rankwise.streaming import ConditionalPerplexity, LogLikelihood, Perplexity

    cond = np.log([[0.5, 0.25]])
    full = np.log([[0.5, 0.2]])
    clicks = np.array([[1, 0]])
    both = MultiMetric(ll=LogLikelihood(positions=2), ppl=Perplexity(positions=2),
                       cppl=ConditionalPerplexity(positions=2))
    out = both.update(log_probs=full, cond_log_probs=cond, clicks=clicks).compute()
    assert out["ll"] == pytest.approx((np.log(0.5) + np.log(0.75)) / 2, rel=1e-12)   # click at 1, none at 2
    assert out["ppl"] == pytest.approx((2.0 + 1 / 0.8) / 2, rel=1e-12)              # 2^-log2(0.5), 2^-log2(0.8)
    assert out["cppl"] == pytest.approx((2.0 + 1 / 0.75) / 2, rel=1e-12)


def test_binary_metrics_take_batch_by_list_tensors() -> None:
    """docs/streaming.md's torch loop feeds [batch, list] scores to LogLoss: a NumPy IndexError
    before; every cell is one binary prediction, ``where`` masks cells."""
    from rankwise.streaming import Accuracy, LogLoss

    p = np.array([[0.9, 0.2], [0.6, 0.1]])
    t = np.array([[1, 0], [1, 0]])
    # -(ln 0.9 + ln 0.8 + ln 0.6 + ln 0.9) / 4
    want = -(np.log(0.9) + np.log(0.8) + np.log(0.6) + np.log(0.9)) / 4
    assert LogLoss().update(predictions=p, targets=t).compute() == pytest.approx(want, rel=1e-12)
    masked = Accuracy().update(predictions=[[0.9, 0.7], [0.4, 0.1]], targets=t,
                               where=[[True, False], [True, True]]).compute()
    assert masked == pytest.approx(2 / 3)   # cells (0,0) right, (1,0) wrong, (1,1) right


def test_word_information_of_an_empty_prediction_is_jiwers() -> None:
    """jiwer: WIP 0 and WIL 1 for an empty hypothesis (NaN before)."""
    import jiwer

    from rankwise.streaming import WordInformationLost, WordInformationPreserved

    assert WordInformationPreserved().update(predictions=[""], targets=["the cat"]).compute() == \
        jiwer.wip("the cat", "") == 0
    assert WordInformationLost().update(predictions=[""], targets=["the cat"]).compute() == \
        jiwer.wil("the cat", "") == 1


def test_multilabel_mcc_is_one_coefficient_over_every_cell() -> None:
    """What the docstring now says, held against torchmetrics and scikit-learn (issue #37)."""
    import torch
    from sklearn.metrics import matthews_corrcoef
    from torchmetrics.functional.classification import multilabel_matthews_corrcoef

    rng = np.random.default_rng(1)
    p, t = rng.integers(0, 2, (20, 3)), rng.integers(0, 2, (20, 3))
    ours = rs.MatthewsCorrCoef(task="multilabel", num_classes=3).update(predictions=p, targets=t).compute()
    assert ours == pytest.approx(matthews_corrcoef(t.ravel(), p.ravel()), rel=1e-12)
    assert ours == pytest.approx(float(multilabel_matthews_corrcoef(torch.tensor(p), torch.tensor(t), num_labels=3)),
                                 rel=1e-6)
