"""Every call as metrax and CLAX write it works here and gives their value: sample weights on the
curves, weights broadcast to the labels' shape, positional ``from_model_output``, their state
fields in ``from_state``, pre-tokenised WER, CLAX's ``top_n``, continuous relevance for CG and
FCP, ranks CLAX leaves out of ``compute_per_rank``, and ``FBeta``'s beta checked."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise import streaming as rs
from rankwise.errors import RankwiseError

metrax = pytest.importorskip("metrax", reason="metrax is in the test extra (pip install -e '.[test]')")
jnp = pytest.importorskip("jax.numpy", reason="jax is in the test extra")


def _value(metric: object) -> float:
    return float(np.asarray(metric.compute()))  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def scored() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 400)
    return {"y": y, "p": np.clip(0.25 * y + rng.random(400) * 0.75, 0, 1), "w": rng.random(400) * 3}


def test_curves_take_sample_weights_as_metrax_and_scikit_learn(scored) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score

    p, y, w = scored["p"], scored["y"], scored["w"]
    theirs_roc = _value(metrax.AUCROC.from_model_output(jnp.array(p), jnp.array(y), sample_weights=jnp.array(w)))
    ours_roc = rs.ROCAUC(num_thresholds=200).update(predictions=p, targets=y, sample_weights=w).compute()
    assert ours_roc == pytest.approx(theirs_roc, abs=1e-6)   # metrax in float32
    theirs_pr = _value(metrax.AUCPR.from_model_output(jnp.array(p), jnp.array(y), sample_weights=jnp.array(w)))
    ours_pr = rs.AveragePrecision.metrax().update(predictions=p, targets=y, sample_weights=w).compute()
    assert ours_pr == pytest.approx(theirs_pr, rel=1e-6)
    # exact curves: scikit-learn's sample_weight, also over a merge of a weighted and an
    # unweighted batch (the unweighted rows weigh 1)
    assert rs.ROCAUC().update(predictions=p, targets=y, sample_weights=w).compute() == pytest.approx(
        roc_auc_score(y, p, sample_weight=w), abs=1e-12)
    assert rs.AveragePrecision().update(predictions=p, targets=y, sample_weights=w).compute() == pytest.approx(
        average_precision_score(y, p, sample_weight=w), abs=1e-12)
    half = rs.ROCAUC().update(predictions=p[:200], targets=y[:200]).merge(
        rs.ROCAUC().update(predictions=p[200:], targets=y[200:], sample_weights=w[200:]))
    assert half.compute() == pytest.approx(roc_auc_score(y, p, sample_weight=np.r_[np.ones(200), w[200:]]),
                                           abs=1e-12)
    with pytest.raises(RankwiseError, match="one per row"):
        rs.ROCAUC().update(predictions=p, targets=y, sample_weights=w[:3])


def test_accuracy_weights_broadcast_to_the_labels_shape() -> None:
    rng = np.random.default_rng(2)
    labels, predictions = rng.integers(0, 4, (6, 5)), rng.integers(0, 4, (6, 5))   # a class id per token
    weights = rng.random((6, 1))                                                     # one per sequence
    theirs = _value(metrax.Accuracy.from_model_output(jnp.array(predictions), jnp.array(labels),
                                                      sample_weights=jnp.array(weights)))
    ours = rs.Accuracy(task="multiclass", num_classes=4).update(predictions=predictions, targets=labels,
                                                                sample_weights=weights).compute()
    assert ours == pytest.approx(theirs, rel=1e-6)
    with pytest.raises(RankwiseError, match=r"do not broadcast to the labels' shape \(6, 5\)"):
        rs.Accuracy(task="multiclass", num_classes=4).update(predictions=predictions, targets=labels,
                                                             sample_weights=np.ones(4))


def test_from_model_output_takes_positional_arguments_and_state_fields_load() -> None:
    p, t, w = np.array([1.0, 2.5, 4.0]), np.array([1.5, 2.0, 1.0]), np.array([1.0, 2.0, 0.5])
    theirs = metrax.MAE.from_model_output(jnp.array(p), jnp.array(t), jnp.array(w))
    ours = rs.MeanAbsoluteError.from_model_output(p, t, w)
    assert ours.compute() == pytest.approx(_value(theirs), rel=1e-6)   # (0.5 + 1 + 1.5) / 3.5
    assert ours.compute() == pytest.approx(3.0 / 3.5)
    # metrax's own fields, total and count, build the same metric
    fields = {"total": np.asarray(theirs.total), "count": np.asarray(theirs.count)}
    assert rs.MeanAbsoluteError.from_state(fields).compute() == pytest.approx(3.0 / 3.5, rel=1e-6)
    accuracy = metrax.Accuracy.from_model_output(jnp.array([1, 0, 1, 1]), jnp.array([1, 1, 1, 0]))
    rebuilt = rs.Accuracy.from_state({"total": np.asarray(accuracy.total), "count": np.asarray(accuracy.count)})
    assert rebuilt.compute() == 0.5                                      # 2 of 4 right
    assert rs.Accuracy.from_model_output([1, 0, 1, 1], [1, 1, 1, 0]).compute() == 0.5
    with pytest.raises(RankwiseError, match="at most 3 positional"):
        rs.MeanAbsoluteError.from_model_output(p, t, w, w)
    with pytest.raises(RankwiseError, match="given twice"):
        rs.MeanAbsoluteError.from_model_output(p, t, predictions=p)


def test_wer_takes_token_lists_and_metrax_fields() -> None:
    pred, ref = ["the", "cat", "sat", "down"], ["the", "cat", "is", "here", "now"]
    theirs = metrax.WER.from_model_output(pred, ref)
    # 1 substitution (sat/is), 1 (down/here), 1 deletion (now): 3 / 5
    assert rs.WER.from_model_output(pred, ref).compute() == pytest.approx(_value(theirs)) == pytest.approx(0.6)
    assert rs.WER.from_model_output(" ".join(pred), " ".join(ref)).compute() == pytest.approx(0.6)
    # a batch of pre-tokenised pairs; a token with a space stays one token
    batch = rs.WordErrorRate().update(predictions=[pred, ["new york", "is", "big"]],
                                      targets=[ref, ["new york", "is", "large"]])
    assert batch.compute() == pytest.approx((3 + 1) / (5 + 3))
    rebuilt = rs.WER.from_state({"total": np.asarray(theirs.total), "count": np.asarray(theirs.count)})
    assert rebuilt.compute() == pytest.approx(0.6)


def test_function_metric_takes_clax_top_n_and_refuses_unknown_options_at_once() -> None:
    rax = pytest.importorskip("rax", reason="rax is in the test extra")
    scores, labels = np.array([[0.9, 0.1, 0.5, 0.3]]), np.array([[0.0, 1.0, 1.0, 0.0]])
    ours = rs.FunctionMetric(rax.ndcg_metric, top_n=2).update(predictions=scores, targets=labels)
    theirs = float(rax.ndcg_metric(jnp.array(scores), jnp.array(labels), topn=2))
    assert ours.compute() == pytest.approx(theirs, rel=1e-6)
    with pytest.raises(RankwiseError, match="takes no option 'topk'"):
        rs.FunctionMetric(rax.ndcg_metric, topk=2)


def test_cg_and_fcp_take_continuous_relevance() -> None:
    # watch times 0.25, -1.0 and 3.5 s ranked in that order
    m = rs.RankingMetrics(["cg@2", "fcp"], continuous=True).update(predictions=[[0.9, 0.5, 0.1]],
                                                                   targets=[[0.25, -1.0, 3.5]])
    # CG@2: the positive values of the top 2: 0.25; FCP: (0.25 > -1) concordant, 3.5 below
    # both discordant: 1 / 3
    assert m.compute() == pytest.approx({"cg@2": 0.25, "fcp": 1 / 3})


def test_compute_per_rank_leaves_out_unobserved_ranks_as_clax_on_request() -> None:
    # CLAX's documented example on a 10-position metric: three ranks observed
    ll = rs.LogLikelihood(positions=10).update(conditional_log_probs=[[-0.01, -10.0, -0.7]], clicks=[[1, 0, 1]])
    every = ll.compute_per_rank()
    assert len(every) == 10 and np.isnan(every[3:]).all()          # index = rank - 1
    observed = ll.compute_per_rank(observed_only=True)
    np.testing.assert_allclose(observed, [-0.01, np.log1p(-np.exp(-10.0)), -0.7], rtol=1e-12)
    both = rs.MultiMetric(ll=ll, ppl=rs.Perplexity(positions=10).update(log_probs=[[-0.5]], clicks=[[0]]))
    assert [len(v) for v in both.compute_per_rank(observed_only=True).values()] == [3, 1]


@pytest.mark.parametrize("beta", [-1, 0, float("nan"), float("inf"), "2"])
def test_fbeta_refuses_a_beta_that_is_not_positive(beta) -> None:
    with pytest.raises(RankwiseError, match="beta must be a positive finite number"):
        rs.FBeta(beta=beta)
    assert rs.FBeta(beta=2).params["beta"] == 2.0
