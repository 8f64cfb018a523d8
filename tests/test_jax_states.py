"""rankwise.jax: pytree states equal to the NumPy streaming metrics (float32: 1e-5; x64: 1e-12),
under jit and vmap, merged by addition, reduced with psum inside shard_map over 2 forced host
devices, with a bounded number of compilations, and equal to metrax where metrax has the metric."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise import streaming as rs

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
rj = pytest.importorskip("rankwise.jax")

FAMILIES = ("ndcg", "dcg", "mrr", "map", "P", "recall", "success")
KS = (1, 3, 5, 12)  # 12 is past the lists' end (10)


def padded_batches(seed: int, batches: int = 4, rows: int = 16, width: int = 10) -> list[tuple[np.ndarray, ...]]:
    """Batches with tied scores, graded labels, ragged lists (padding) and all-padding rows."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(batches):
        scores = rng.integers(0, 6, (rows, width)) / 5.0  # many ties
        labels = rng.integers(0, 4, (rows, width)) * (rng.random((rows, width)) < 0.4)
        lengths = rng.integers(0, width + 1, rows)  # 0: a padding row
        where = np.arange(width)[None, :] < lengths[:, None]
        out.append((scores, labels, where))
    return out


def numpy_values(batches, rel_level: int, missing: str) -> dict[str, float]:
    metric = rs.RankingMetrics([f"{f}@{k}" for f in FAMILIES for k in KS], ties="input", rel_level=rel_level,
                               missing=missing)
    for scores, labels, where in batches:
        metric.update(predictions=scores, targets=labels, where=where)
    return metric.compute()


@pytest.mark.parametrize("rel_level", [1, 2])
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_ranking_states_equal_the_numpy_metrics(rel_level: int, missing: str) -> None:
    batches = padded_batches(7)
    expected = numpy_values(batches, rel_level, missing)
    step = jax.jit(lambda s, x, y, m: s.update(x, y, where=m))
    state = rj.RankingAtK.empty(FAMILIES, KS, rel_level=rel_level, missing=missing)
    for scores, labels, where in batches:
        state = step(state, scores, labels, where)
    got = {k: float(v) for k, v in state.compute().items()}
    assert list(got) == list(expected)
    np.testing.assert_allclose(list(got.values()), list(expected.values()), rtol=1e-5, atol=1e-6)


def test_with_x64_the_states_equal_to_1e_12() -> None:
    batches = padded_batches(8)
    expected = numpy_values(batches, 1, "zero")
    with jax.enable_x64(True):
        state = rj.RankingAtK.empty(FAMILIES, KS)
        for scores, labels, where in batches:
            state = state.update(scores, labels, where)
        assert state.total.dtype == jnp.float64
        got = [float(v) for v in state.compute().values()]
    np.testing.assert_allclose(got, list(expected.values()), rtol=1e-12, atol=1e-12)


def test_hand_computed_ranking_values() -> None:
    # scores 0.9, 0.5, 0.5, 0.1: the tie keeps column order, so the ranking is d0, d1, d2, d3
    # labels 0, 2, 1, 1 (d3 padding): relevant (>= 1) d1, d2; R = 2
    state = rj.RankingAtK.from_model_output(jnp.array([[0.9, 0.5, 0.5, 0.1]]), jnp.array([[0, 2, 1, 1]]),
                                            jnp.array([[True, True, True, False]]),
                                            families=("ndcg", "mrr", "map", "P", "recall"), k=(2,))
    got = {k: float(v) for k, v in state.compute().items()}
    ideal = 2 + 1 / np.log2(3)  # labels 2, 1 in the first two places
    assert got["ndcg@2"] == pytest.approx((2 / np.log2(3)) / ideal, rel=1e-6)
    assert got["mrr@2"] == 0.5 and got["P@2"] == 0.5 and got["recall@2"] == 0.5
    assert got["map@2"] == pytest.approx((1 / 2) / 2, rel=1e-6)  # precision 1/2 at rank 2, / R


def test_vmap_over_batches_then_merge_equals_one_pass() -> None:
    batches = padded_batches(9)
    scores, labels, where = (np.stack(parts) for parts in zip(*batches, strict=True))
    empty = rj.NDCG.empty(k=(3, 10))
    states = jax.vmap(lambda x, y, m: empty.update(x, y, where=m))(scores, labels, where)
    merged = jax.tree_util.tree_map(lambda a: a.sum(axis=0), states)  # sum states merge by adding
    one = empty
    for s, y, m in batches:
        one = one.update(s, y, where=m)
    np.testing.assert_allclose(merged.total, one.total, rtol=1e-6)
    np.testing.assert_allclose(merged.count, one.count)
    np.testing.assert_allclose(one.merge(one).total, 2 * one.total, rtol=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.integers(1, 63))
def test_property_merging_two_states_equals_one_state_over_both(seed: int, cut: int) -> None:
    rng = np.random.default_rng(seed)
    p, y = rng.random(64), rng.integers(0, 2, 64)
    t = rng.normal(size=64) * 3 + 100.0
    # the two parts are masks, not slices: every example has the same shapes, so JAX compiles once
    first = np.arange(64) < cut
    for cls, args in ((rj.BinaryCounts, (p, y)), (rj.LogLoss, (p, y)), (rj.GridAUC, (p, y)), (rj.Moments, (p, t))):
        whole = cls.from_model_output(*args)
        parts = cls.from_model_output(*args, where=first).merge(cls.from_model_output(*args, where=~first))
        for a, b in zip(jax.tree_util.tree_leaves(whole), jax.tree_util.tree_leaves(parts), strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-3)


def test_classification_states_equal_the_numpy_metrics() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 3000)
    p = np.round(np.clip(0.35 * y + rng.uniform(0, 0.65, 3000), 0, 1) * 199) / 199  # on the 200 grid
    where = rng.random(3000) < 0.9
    with jax.enable_x64(True):
        counts = rj.BinaryCounts.empty(beta=2.0)
        loss, auc = rj.LogLoss.empty(), rj.GridAUC.empty(num_thresholds=200)
        for part in np.array_split(np.arange(3000), 7):
            counts = counts.update(p[part], y[part], where[part])
            loss = loss.update(p[part], y[part], where[part])
            auc = auc.update(p[part], y[part], where[part])
        got = {**{k: float(v) for k, v in counts.compute().items()}, "log_loss": float(loss.compute()),
               **{k: float(v) for k, v in auc.compute().items()}}
    pk, yk = p[where], y[where]
    expected = {
        "accuracy": rs.Accuracy().update(predictions=pk, targets=yk).compute(),
        "precision": rs.Precision().update(predictions=pk, targets=yk).compute(),
        "recall": rs.Recall().update(predictions=pk, targets=yk).compute(),
        "fbeta": rs.FBeta(beta=2.0).update(predictions=pk, targets=yk).compute(),
        "log_loss": rs.LogLoss().update(predictions=pk, targets=yk).compute(),
        "roc_auc": rs.ROCAUC(num_thresholds=200).update(predictions=pk, targets=yk).compute(),
        "average_precision": rs.AveragePrecision(num_thresholds=200).update(predictions=pk, targets=yk).compute(),
    }
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
    # and scikit-learn's exact areas, since these scores lie on the grid
    from sklearn.metrics import average_precision_score, roc_auc_score

    assert got["roc_auc"] == pytest.approx(roc_auc_score(yk, pk), abs=1e-12)
    assert got["average_precision"] == pytest.approx(average_precision_score(yk, pk), abs=1e-12)


def test_regression_moments_equal_the_numpy_metrics_far_from_zero() -> None:
    rng = np.random.default_rng(2)
    t = 1e6 + rng.normal(size=5000)  # far from 0, unit spread: moments must keep their digits
    q = t + rng.normal(scale=0.5, size=5000)
    state = rj.Moments.empty()
    step = jax.jit(lambda s, x, y: s.update(x, y))
    for part in np.array_split(np.arange(5000), 50):
        state = step(state, q[part], t[part])
    got = {k: float(v) for k, v in state.compute().items()}
    expected = {"mse": rs.MeanSquaredError(), "mae": rs.MeanAbsoluteError(), "r2": rs.R2Score(),
                "pearson": rs.PearsonCorrCoef()}
    # float32: the inputs themselves are rounded to float32 (0.0625 apart near 1e6); on those
    # inputs the moments, kept relative to the first pair, lose nothing more than float32 sums
    q32, t32 = q.astype(np.float32).astype(np.float64), t.astype(np.float32).astype(np.float64)
    for name, metric in expected.items():
        assert got[name] == pytest.approx(metric.update(predictions=q32, targets=t32).compute(), rel=1e-4), name
    with jax.enable_x64(True):
        state = rj.Moments.empty()
        for part in np.array_split(np.arange(5000), 50):
            state = state.update(q[part], t[part])
        got = {k: float(v) for k, v in state.compute().items()}
    for name, metric in {"mse": rs.MeanSquaredError(), "mae": rs.MeanAbsoluteError(), "r2": rs.R2Score(),
                         "pearson": rs.PearsonCorrCoef()}.items():
        assert got[name] == pytest.approx(metric.update(predictions=q, targets=t).compute(), rel=1e-10), name


def test_padding_to_buckets_bounds_the_compilations() -> None:
    traces = []

    @jax.jit
    def step(state, scores, labels, where):
        traces.append(scores.shape)  # runs once per compilation
        return state.update(scores, labels, where=where)

    rng = np.random.default_rng(4)
    state = rj.NDCG.empty(k=10)
    reference = rs.NDCG(k=10, ties="input")
    for width in range(3, 41):  # 38 list sizes
        scores, labels = rng.random((8, width)), rng.integers(0, 3, (8, width))
        state = step(state, *rj.pad_to_bucket(scores, labels))
        reference.update(predictions=scores, targets=labels)
    assert sorted({s[-1] for s in traces}) == [8, 16, 32, 64] and len(traces) == 4
    assert float(state.compute()["ndcg@10"]) == pytest.approx(reference.compute(), rel=1e-5)


def test_equal_to_metrax_where_it_has_the_metric() -> None:
    metrax = pytest.importorskip("metrax")
    rng = np.random.default_rng(5)
    scores = rng.permutation(200).reshape(20, 10) / 200.0  # distinct: no tie rule involved
    labels = rng.integers(0, 2, (20, 10))  # binary: metrax's exp2 gains equal linear ones
    ks = (1, 3, 5)
    ours = rj.RankingAtK.from_model_output(scores, labels, families=("ndcg", "mrr", "P", "recall", "map"), k=ks)
    got = ours.compute()
    for cls, family in (("NDCGAtK", "ndcg"), ("MRR", "mrr"), ("PrecisionAtK", "P"), ("RecallAtK", "recall"),
                        ("AveragePrecisionAtK", "map")):
        theirs = np.asarray(getattr(metrax, cls).from_model_output(jnp.array(scores), jnp.array(labels),
                                                                    ks=jnp.array(ks)).compute())
        np.testing.assert_allclose([float(got[f"{family}@{k}"]) for k in ks], theirs, rtol=1e-6, err_msg=cls)


SHARDED = textwrap.dedent("""
    import os, json
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import numpy as np, jax, jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P
    import rankwise.jax as rj
    from rankwise import streaming as rs
    assert len(jax.devices()) == 2
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rng = np.random.default_rng(0)
    scores, labels = rng.random((64, 20)), rng.integers(0, 3, (64, 20))
    p, y = rng.random(64), rng.integers(0, 2, 64)
    t = 50.0 + rng.normal(size=64)
    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map

    def step(scores, labels, p, y, t):
        ranking = rj.RankingAtK.empty(("ndcg", "mrr"), (10,)).update(scores, labels).reduce("data")
        loss = rj.LogLoss.empty().update(p, y).reduce("data")
        moments = rj.Moments.empty().update(p, t).reduce("data")
        return ranking, loss, moments

    spec = (P("data"), P("data"), P("data"), P("data"), P("data"))
    f = jax.jit(shard_map(step, mesh=mesh, in_specs=spec, out_specs=(P(), P(), P()), check_vma=False)
                if "check_vma" in shard_map.__code__.co_varnames else
                shard_map(step, mesh=mesh, in_specs=spec, out_specs=(P(), P(), P()), check_rep=False))
    ranking, loss, moments = f(scores, labels, p, y, t)
    text = f.lower(scores, labels, p, y, t).as_text()
    print(json.dumps({
        "ranking": {k: float(v) for k, v in ranking.compute().items()},
        "numpy": rs.RankingMetrics(["ndcg@10", "mrr@10"], ties="input").update(predictions=scores, targets=labels)
                 .compute(),
        "loss": float(loss.compute()), "numpy_loss": rs.LogLoss().update(predictions=p, targets=y).compute(),
        "pearson": float(moments.compute()["pearson"]),
        "numpy_pearson": rs.PearsonCorrCoef().update(predictions=p, targets=t).compute(),
        "all_reduce": text.count("all_reduce"), "all_gather": text.count("all_gather"),
    }))
""")


def test_shard_map_over_two_devices_reduces_with_psum() -> None:
    import json

    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    proc = subprocess.run([sys.executable, "-c", SHARDED], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, value in out["numpy"].items():
        assert out["ranking"][name] == pytest.approx(value, rel=1e-5)
    assert out["loss"] == pytest.approx(out["numpy_loss"], rel=1e-5)
    assert out["pearson"] == pytest.approx(out["numpy_pearson"], rel=1e-4)
    assert out["all_reduce"] >= 1 and out["all_gather"] >= 1  # psum for sums, a gather for the moments


def test_click_likelihood_equals_the_numpy_click_metrics() -> None:
    rng = np.random.default_rng(6)
    batches = []
    for _ in range(5):
        p = rng.uniform(0.01, 0.99, (32, 10))
        p[0, 0] = 1.0  # log-probability 0: log(1 - p) is -inf only where there is no click
        clicks = (rng.random((32, 10)) < p).astype(int)
        clicks[0, 0] = 1
        batches.append((np.log(p), clicks, rng.random((32, 10)) < 0.9))
    with jax.enable_x64(True):
        state = rj.ClickLikelihood.empty(positions=10)
        step = jax.jit(lambda s, lp, c, m: s.update(lp, c, where=m))
        for lp, c, m in batches:
            state = step(state, lp, c, m)
        got = {k: np.asarray(v) for k, v in state.compute().items()}
    ll, cppl = rs.LogLikelihood(positions=10), rs.ConditionalPerplexity(positions=10)
    for lp, c, m in batches:
        ll.update(conditional_log_probs=lp, clicks=c, where=m)
        cppl.update(conditional_log_probs=lp, clicks=c, where=m)
    assert float(got["log_likelihood"]) == pytest.approx(ll.compute(), rel=1e-12)
    np.testing.assert_allclose(got["log_likelihood_per_rank"], ll.compute_per_rank(), rtol=1e-12)
    np.testing.assert_allclose(got["perplexity_per_rank"], cppl.compute_per_rank(), rtol=1e-12)
    assert float(got["perplexity"]) == pytest.approx(cppl.compute(), rel=1e-12)
    with pytest.raises(Exception, match="positions=4"):
        rj.ClickLikelihood.empty(positions=4).update(batches[0][0], batches[0][1])


def test_cut_offs_are_named_k_as_in_the_numpy_states() -> None:
    import pytest

    from rankwise.errors import RankwiseDeprecationWarning

    assert rj.NDCG.empty(k=5).ks == (5,) and rj.RankingAtK.empty(("P",), k=[1, 3]).ks == (1, 3)
    with pytest.warns(RankwiseDeprecationWarning, match="'ks' is deprecated; write 'k'"):
        assert rj.NDCG.empty(ks=(3,)).ks == (3,)


def test_families_are_the_catalogue_families_under_any_of_their_spellings() -> None:
    """The JAX state's families are looked up in the metric catalogue: each short name reads
    as its family, every spelling evaluate accepts gives the same values under its own
    column name, and the errors are the catalogue's."""
    from rankwise.errors import RankwiseError
    from rankwise.jax.ranking import KERNELS, catalogue_family
    from rankwise.metrics.registry import ORDER

    assert tuple(catalogue_family(f) for f in FAMILIES) == tuple(KERNELS)   # one kernel per family
    assert set(KERNELS) <= set(ORDER)   # keyed by the catalogue's own family names
    scores, labels = jnp.array([[0.9, 0.5, 0.5, 0.1]]), jnp.array([[0, 2, 1, 1]])
    short = rj.RankingAtK.from_model_output(scores, labels, families=FAMILIES, k=(2,)).compute()
    spelled = ("ndcg_cut", "dcg", "recip_rank", "map_cut", "precision", "r", "hit_rate")
    long = rj.RankingAtK.from_model_output(scores, labels, families=spelled, k=(2,)).compute()
    assert list(long) == [f"{f}@2" for f in spelled]
    assert [float(v) for v in long.values()] == [float(v) for v in short.values()]
    with pytest.raises(RankwiseError, match="unknown ranking family 'ndgc'.*did you mean 'ndcg"):
        rj.RankingAtK.empty(("ndgc",))
    with pytest.raises(RankwiseError, match=r"'err' \(ERR\) has no JAX state: expected one of ndcg_cut, dcg_cut"):
        rj.RankingAtK.empty(("err",))
    assert rj.NDCG.__doc__.startswith("nDCG at cut-off k")
