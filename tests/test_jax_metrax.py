"""Differential tests against google-metrax (JAX) where its definitions are rankwise's. metrax is
an optional extra (`rankwise[metrax]`, about 600 MB with JAX): these tests skip without it.
metrax computes in float32, so values agree to about 1e-6."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise import streaming as rs
from rankwise.state import MetricInputError

metrax = pytest.importorskip("metrax")
jnp = pytest.importorskip("jax.numpy")


def value(metric: object) -> np.ndarray:
    return np.asarray(metric.compute(), dtype=np.float64)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def data() -> dict:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    p = np.round(np.clip(0.3 * y + rng.uniform(0, 0.7, 1000), 0, 1) * 199) / 199
    t = rng.normal(size=1000)
    return {"y": y, "p": p, "t": t, "q": t + rng.normal(size=1000), "rng": rng}


def test_classification_and_regression(data: dict) -> None:
    y, p, t, q = data["y"], data["p"], data["t"], data["q"]
    hard = (p >= 0.5).astype(np.int32)
    assert rs.Accuracy().update(predictions=p, targets=y).compute() == pytest.approx(
        value(metrax.Accuracy.from_model_output(jnp.array(hard), jnp.array(y))), rel=1e-6)
    assert rs.Precision().update(predictions=p, targets=y).compute() == pytest.approx(
        value(metrax.Precision.from_model_output(jnp.array(p), jnp.array(y))), rel=1e-6)
    assert rs.Recall().update(predictions=p, targets=y).compute() == pytest.approx(
        value(metrax.Recall.from_model_output(jnp.array(p), jnp.array(y))), rel=1e-6)
    for ours, theirs in ((rs.MeanSquaredError(), metrax.MSE), (rs.RootMeanSquaredError(), metrax.RMSE),
                         (rs.MeanAbsoluteError(), metrax.MAE), (rs.R2Score(), metrax.RSQUARED)):
        assert ours.update(predictions=q, targets=t).compute() == pytest.approx(
            value(theirs.from_model_output(jnp.array(q), jnp.array(t))), rel=1e-5)
    # ROC AUC on metrax's 200-threshold grid: the same trapezoids; metrax's float32 thresholds
    # move a few grid-aligned scores across a threshold (measured difference 1.5e-4)
    assert rs.ROCAUC(num_thresholds=200).update(predictions=p, targets=y).compute() == pytest.approx(
        value(metrax.AUCROC.from_model_output(jnp.array(p), jnp.array(y), num_thresholds=200)), abs=1e-3)


def test_image_audio_text_and_ranking(data: dict) -> None:
    rng = data["rng"]
    target = rng.uniform(size=(4, 12, 12, 1))
    pred = np.clip(target + rng.normal(0, 0.1, target.shape), 0, 1)
    assert rs.PSNR(data_range=1.0, per_image=True).update(predictions=pred, targets=target).compute() == \
        pytest.approx(value(metrax.PSNR.from_model_output(jnp.array(pred), jnp.array(target), max_val=1.0)), rel=1e-6)
    sig = rng.normal(size=(4, 50))
    est = sig + rng.normal(0, 0.3, sig.shape)
    assert rs.SNR().update(predictions=est, targets=sig).compute() == pytest.approx(
        value(metrax.SNR.from_model_output(jnp.array(est), jnp.array(sig))), rel=1e-6)
    logits, tokens = rng.normal(size=(3, 5, 7)), rng.integers(0, 7, (3, 5))
    assert rs.TokenPerplexity().update(logits=logits, targets=tokens).compute() == pytest.approx(
        value(metrax.Perplexity.from_model_output(jnp.array(logits), jnp.array(tokens), from_logits=True)), rel=1e-6)
    scores = rng.permutation(40).reshape(4, 10) / 40.0  # distinct scores
    labels = rng.integers(0, 2, (4, 10))
    for cls, ours in (("NDCGAtK", "ndcg"), ("MRR", "mrr"), ("PrecisionAtK", "P")):
        metric = getattr(metrax, cls).from_model_output(jnp.array(scores), jnp.array(labels), ks=jnp.array([3, 5]))
        theirs = value(metric)
        got = rs.RankingMetrics([f"{ours}@3", f"{ours}@5"]).update(predictions=scores, targets=labels).compute()
        np.testing.assert_allclose(list(got.values()), theirs, rtol=1e-6)


def test_bleu_on_metrax_scale() -> None:
    """``BLEU.metrax()``: whitespace tokens, no smoothing, the shortest reference, 0-1; sacrebleu's
    default scores the same sentences 0-100 with exp smoothing and the closest reference."""
    preds = ["the cat sat on the mat", "a quick brown fox jumps over the lazy dog", "hello there general kenobi",
             "it is a test of the bleu"]
    refs = [["the cat is on the mat", "there is a cat on the mat"], ["the quick brown fox jumps over the lazy dog"],
            ["hello there general kenobi you are a bold one"], ["it is a test", "this is a test of bleu here"]]
    theirs = value(metrax.BLEU.from_model_output(preds[:2], refs[:2]).merge(
        metrax.BLEU.from_model_output(preds[2:], refs[2:])))
    ours = rs.BLEU.metrax().update(predictions=preds[:2], targets=refs[:2]).merge(
        rs.BLEU.metrax().update(predictions=preds[2:], targets=refs[2:]))
    assert ours.compute() == pytest.approx(float(theirs), rel=1e-6)
    assert ours.signature().endswith("|scale:1|ref:shortest")
    # one sentence without a 4-gram match: metrax (no smoothing) 0, sacrebleu's exp smoothing > 0
    one = (["the cat sat on the mat"], [["the cat is on the mat"]])
    assert value(metrax.BLEU.from_model_output(*one)) == 0.0
    assert rs.BLEU.metrax().update(predictions=one[0], targets=one[1]).compute() == 0.0
    assert rs.BLEU().update(predictions=one[0], targets=one[1]).compute() == pytest.approx(37.99, abs=0.01)


def test_sample_weights_equal_metrax_and_scikit_learn(data: dict) -> None:
    """``sample_weights`` on MAE, MSE, RMSE, R² and Accuracy: metrax's values (float32) and
    scikit-learn's (to 1e-12), merged across two batches."""
    from sklearn.metrics import accuracy_score, mean_absolute_error, mean_squared_error, r2_score

    t, q, y, p = data["t"], data["q"], data["y"], data["p"]
    w = np.random.default_rng(5).uniform(0, 2, len(t))
    hard = (p >= 0.5).astype(np.int32)

    def merged(metric: object, **inputs: np.ndarray) -> float:
        first = metric.empty().update(**{k: v[:600] for k, v in inputs.items()})   # type: ignore[attr-defined]
        second = metric.empty().update(**{k: v[600:] for k, v in inputs.items()})   # type: ignore[attr-defined]
        return float(first.merge(second).compute())

    cases = ((rs.MeanAbsoluteError(), metrax.MAE, mean_absolute_error(t, q, sample_weight=w)),
             (rs.MeanSquaredError(), metrax.MSE, mean_squared_error(t, q, sample_weight=w)),
             (rs.RootMeanSquaredError(), metrax.RMSE, np.sqrt(mean_squared_error(t, q, sample_weight=w))),
             (rs.R2Score(), metrax.RSQUARED, r2_score(t, q, sample_weight=w)))
    for ours, theirs, sklearn_value in cases:
        got = merged(ours, predictions=q, targets=t, sample_weights=w)
        assert got == pytest.approx(sklearn_value, rel=1e-12)
        assert got == pytest.approx(float(value(theirs.from_model_output(jnp.array(q), jnp.array(t),
                                                                          sample_weights=jnp.array(w)))), rel=1e-5)
    accuracy = merged(rs.Accuracy(), predictions=p, targets=y, sample_weights=w)
    assert accuracy == pytest.approx(accuracy_score(y, hard, sample_weight=w), rel=1e-12)
    assert accuracy == pytest.approx(float(value(metrax.Accuracy.from_model_output(
        jnp.array(hard), jnp.array(y), sample_weights=jnp.array(w)))), rel=1e-6)
    with pytest.raises(MetricInputError, match="finite, non-negative"):
        rs.Accuracy().update(predictions=p[:3], targets=y[:3], sample_weights=[1.0, -1.0, 1.0])
    with pytest.raises(MetricInputError, match="fit neither predictions"):
        rs.MeanSquaredError().update(predictions=q[:3], targets=t[:3], sample_weights=[1.0, 2.0])


def test_interpolated_pr_auc_equals_metrax_aucpr() -> None:
    """``AveragePrecision.metrax()``: Davis & Goadrich's interpolation on metrax's 200-threshold
    grid, equal to metrax's ``AUCPR``; the step-wise default is scikit-learn's average precision."""
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 500)
    p = np.clip(0.3 * y + rng.uniform(0, 0.7, 500), 0, 1)
    theirs = float(value(metrax.AUCPR.from_model_output(jnp.array(p), jnp.array(y))))
    ours = rs.AveragePrecision.metrax().update(predictions=p[:200], targets=y[:200]).merge(
        rs.AveragePrecision.metrax().update(predictions=p[200:], targets=y[200:]))
    assert ours.compute() == pytest.approx(theirs, rel=1e-6)
    assert rs.AveragePrecision().update(predictions=p, targets=y).compute() == pytest.approx(
        average_precision_score(y, p), rel=1e-12)
    small = {"predictions": [0.1, 0.4, 0.35, 0.8], "targets": [0, 0, 1, 1]}   # where the two differ
    assert rs.AveragePrecision().update(**small).compute() == pytest.approx(0.8333, abs=1e-4)
    assert rs.AveragePrecision.metrax().update(**small).compute() == pytest.approx(float(value(
        metrax.AUCPR.from_model_output(jnp.array(small["predictions"]), jnp.array(small["targets"])))), rel=1e-6)


def test_dice_and_iou_with_metrax_arguments() -> None:
    """``Dice.metrax()``: soft counts on positive-class probabilities, epsilon 1e-7, metrax's
    binary ``Dice``; ``IoU.metrax(...)``: logits' argmax, the mean over target classes, epsilon:
    metrax's ``IoU`` on one batch. The default hard Dice averages both classes (0.7333 here)
    where the positive class alone is 0.8; ``target_class_ids=[1]`` reports the positive class."""
    rng = np.random.default_rng(1)
    p = rng.uniform(size=(4, 8, 8))
    t = (rng.uniform(size=(4, 8, 8)) < p).astype(int)
    assert rs.Dice.metrax().update(predictions=p, targets=t).compute() == pytest.approx(
        float(value(metrax.Dice.from_model_output(jnp.array(p), jnp.array(t)))), rel=1e-6)
    logits, target = rng.normal(size=(2, 6, 6, 3)), rng.integers(0, 3, (2, 6, 6))
    theirs = metrax.IoU.from_model_output(jnp.array(logits), jnp.array(target), num_classes=3,
                                          target_class_ids=jnp.array([0, 2]), from_logits=True)
    ours = rs.IoU.metrax(3, [0, 2], from_logits=True).update(predictions=logits, targets=target)
    assert ours.compute() == pytest.approx(float(value(theirs)), rel=1e-6)
    # class 1: TP 2, FP 1, FN 1 -> 2*2 / (2*2 + 1 + 1) = 2/3; class 0: TP 1, FP 1, FN 1 -> 2 / 4 = 1/2
    hard = {"predictions": [1, 1, 0, 0, 1], "targets": [1, 1, 1, 0, 0]}
    both = rs.Dice(num_classes=2).update(**hard)
    assert both.compute_per_class().tolist() == pytest.approx([0.5, 2 * 2 / (2 * 2 + 1 + 1)])
    assert rs.Dice(num_classes=2, target_class_ids=[1]).update(**hard).compute() == pytest.approx(4 / 6)
    with pytest.raises(MetricInputError, match="soft counts take probabilities"):
        rs.Dice(num_classes=3, soft=True)


@pytest.mark.parametrize(("filter_size", "filter_sigma", "k1", "k2"), [(11, 1.5, 0.01, 0.03), (7, 1.0, 0.02, 0.05)])
def test_ssim_with_metrax_parameters(filter_size: int, filter_sigma: float, k1: float, k2: float) -> None:
    rng = np.random.default_rng(2)
    target = rng.uniform(size=(3, 16, 14, 2))
    pred = np.clip(target + rng.normal(0, 0.1, target.shape), 0, 1)
    theirs = metrax.SSIM.from_model_output(jnp.array(pred), jnp.array(target), max_val=1.0, filter_size=filter_size,
                                           filter_sigma=filter_sigma, k1=k1, k2=k2)
    ours = rs.SSIM.metrax(1.0, filter_size, filter_sigma, k1, k2)
    ours = ours.update(predictions=pred[:1], targets=target[:1]).merge(
        ours.empty().update(predictions=pred[1:], targets=target[1:]))
    assert ours.compute() == pytest.approx(float(value(theirs)), rel=1e-6)
    with pytest.raises(MetricInputError, match=r"\[N, H, W, C\] images at least"):
        rs.SSIM.metrax(1.0).update(predictions=pred[:, :8], targets=target[:, :8])


def test_perplexity_from_probabilities_with_token_weights(data: dict) -> None:
    rng = data["rng"]
    probs = rng.uniform(0.01, 1.0, (3, 6, 5))     # unnormalised: both divide by the vocabulary sum
    probs[0, 0, 2] = 0.0                          # a zero probability: metrax clips it to 1e-7
    tokens = rng.integers(0, 5, (3, 6))
    tokens[0, 0] = 2
    weights = rng.integers(0, 3, (3, 6)).astype(np.float64)
    theirs = value(metrax.Perplexity.from_model_output(jnp.array(probs), jnp.array(tokens),
                                                       sample_weights=jnp.array(weights)))
    ours = rs.TokenPerplexity.metrax().update(predictions=probs, targets=tokens, sample_weights=weights)
    assert ours.compute() == pytest.approx(theirs, rel=1e-5)
    # without the clip the zero-probability target (weight > 0) makes the perplexity infinite
    weights[0, 0] = 1.0
    assert rs.TokenPerplexity().update(predictions=probs, targets=tokens, sample_weights=weights).compute() == np.inf
    # two updates weigh every token once: the same as one update over both batches
    a = rs.TokenPerplexity.metrax().update(predictions=probs[:1], targets=tokens[:1], sample_weights=weights[:1])
    a.update(predictions=probs[1:], targets=tokens[1:], sample_weights=weights[1:])
    whole = rs.TokenPerplexity.metrax().update(predictions=probs, targets=tokens, sample_weights=weights)
    assert a.compute() == pytest.approx(whole.compute(), rel=1e-12)
    with pytest.raises(MetricInputError, match="sample_weights"):
        rs.TokenPerplexity().update(predictions=probs, targets=tokens, sample_weights=weights[:, :2])


def test_average_precision_at_ks_per_row_equals_metrax() -> None:
    rng = np.random.default_rng(11)
    scores = rng.random((8, 12))
    labels = (rng.random((8, 12)) < 0.3).astype(np.float64)
    labels[0] = 0                                                    # no relevant item: 0, as metrax's divide_no_nan
    ks = [1, 3, 5, 12]
    expected = np.asarray(metrax.AveragePrecisionAtK.average_precision_at_ks(jnp.array(scores), jnp.array(labels),
                                                                             jnp.array(ks)))
    np.testing.assert_allclose(rs.average_precision_at_ks(scores, labels, ks), expected, atol=1e-6)   # float32
    where = np.tile(np.arange(12) < 6, (8, 1))
    where[3] = False                                                 # a padding row: NaN, not 0
    rows = rs.per_row(["map@5"], scores, labels, where=where)["map_cut_5"]
    first_six = rs.average_precision_at_ks(scores[:, :6], labels[:, :6], [5])[:, 0]
    assert np.isnan(rows[3]) and np.allclose(np.delete(rows, 3), np.delete(first_six, 3))


def test_replace_and_construction_from_state_fields() -> None:
    mae = rs.MeanAbsoluteError().update(predictions=[1.0, 3.0], targets=[0.0, 0.0])   # total 4, weight 2
    doubled = mae.replace(total=8.0)
    assert (doubled.compute(), mae.compute()) == (4.0, 2.0)
    rebuilt = rs.MeanAbsoluteError.from_state(dict(mae.state))
    assert rebuilt.compute() == 2.0 and rebuilt.state is not mae.state
    with pytest.raises(Exception, match="no state field 'totl'"):
        mae.replace(totl=1.0)
    with pytest.raises(Exception, match="state fields .* do not match"):
        rs.MeanAbsoluteError.from_state({"total": 1.0})
