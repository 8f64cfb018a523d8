"""Mergeable states on a 2-worker Dask LocalCluster: streaming metrics, A/B statistics and
click-model E-steps computed per partition and added up in a tree equal the one-process
results (counts exactly, float sums to rounding)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import DATA

from rankwise import clicks
from rankwise.errors import RankwiseError
from rankwise.experiments.analysis import analyze
from rankwise.experiments.moments import VariantMoments
from rankwise.scale.states import fit_click_model, reduce_metric, reduce_moments, tree_reduce
from rankwise.streaming import NDCG, Accuracy, LogLoss, MeanSquaredError, MultiMetric

dd = pytest.importorskip("dask.dataframe")
db = pytest.importorskip("dask.bag")


def _add(*xs: int) -> int:
    return sum(xs)


def test_tree_reduce_adds_every_state_once(dask_client) -> None:
    futures = dask_client.map(lambda x: x, range(1, 21), pure=False)
    assert tree_reduce(dask_client, futures, _add, split_every=3) == 210  # 20 * 21 / 2
    with pytest.raises(RankwiseError, match="split_every=1"):
        tree_reduce(dask_client, futures, _add, split_every=1)
    with pytest.raises(RankwiseError, match="no partition"):
        tree_reduce(dask_client, [], _add)


def test_a_metric_reduced_over_partitions_equals_one_update(dask_client) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"p": rng.random(10_000), "y": rng.integers(0, 2, 10_000)})
    expected = MultiMetric(acc=Accuracy(), logloss=LogLoss(), mse=MeanSquaredError()).update(
        predictions=frame["p"].to_numpy(), targets=frame["y"].to_numpy()).compute()
    parts = dd.from_pandas(frame, npartitions=13)
    acc = reduce_metric(Accuracy(), parts, {"predictions": "p", "targets": "y"}, client=dask_client, split_every=2)
    assert acc.compute() == expected["acc"]  # a ratio of counts: exact
    multi = MultiMetric(acc=Accuracy(), logloss=LogLoss(), mse=MeanSquaredError())
    got = reduce_metric(multi, parts, to_inputs=lambda part: {"predictions": part["p"].to_numpy(),
                                                             "targets": part["y"].to_numpy()},
                        client=dask_client).compute()
    assert got["acc"] == expected["acc"]
    assert got["logloss"] == pytest.approx(expected["logloss"], rel=1e-12)
    assert got["mse"] == pytest.approx(expected["mse"], rel=1e-12)
    assert multi.compute() == got  # the states were merged into the metric given


def test_ranking_states_from_a_bag_of_batches(dask_client) -> None:
    rng = np.random.default_rng(1)
    batches = [{"predictions": rng.random((50, 20)), "targets": rng.integers(0, 3, (50, 20))} for _ in range(24)]
    whole = NDCG(k=[5, 10])
    for batch in batches:
        whole.update(**batch)
    got = reduce_metric(NDCG(k=[5, 10]), db.from_sequence(batches, npartitions=5), client=dask_client)
    expected, values = whole.compute(), got.compute()
    assert set(values) == set(expected) and len(expected) == 2
    for k in expected:
        assert values[k] == pytest.approx(expected[k], rel=1e-12)


def test_variant_moments_reduced_over_partitions_drive_the_same_ab_test(dask_client) -> None:
    rng = np.random.default_rng(2)
    units = pd.DataFrame({"arm": rng.choice(["A", "B", "C"], 20_000), "views": rng.poisson(3.0, 20_000),
                          "clicks": rng.poisson(0.4, 20_000)})
    whole = VariantMoments.from_units(units["arm"].to_numpy(), {"views": units["views"], "clicks": units["clicks"]})
    got = reduce_moments(dd.from_pandas(units, npartitions=9), "arm", ["views", "clicks"], client=dask_client)
    assert got.variants == whole.variants == ["A", "B", "C"]
    assert got.n.tolist() == whole.n.tolist()
    assert np.allclose(got.means, whole.means, rtol=1e-13, atol=0)
    assert np.allclose(got.comoments, whole.comoments, rtol=1e-11, atol=1e-9)
    metrics = {"ctr": "ctr=clicks/views", "views": "views=views"}
    table_whole = analyze(whole, variant="arm", metrics=list(metrics.values())).table
    table_dask = analyze(got, variant="arm", metrics=list(metrics.values())).table
    assert np.allclose(table_whole["p_value"].to_numpy(float), table_dask["p_value"].to_numpy(float), rtol=1e-9)


@pytest.mark.parametrize(("model", "prior", "rtol", "acceleration"), [
    ("DBN", (1, 2), 1e-12, "none"), ("UBM", (1, 2), 1e-12, "none"), ("PBM", (1, 2), 1e-12, "none"),
    ("DocumentCTR", (1, 2), 1e-12, "none"),
    # the cluster adds the chunks' statistics in a tree, so sums differ in the last bits; the
    # empirical prior's Beta is an optimiser's answer on a flat ridge and carries them to ~1e-8
    ("PBM", "empirical", 1e-6, "none"),
    # SQUAREM's jumps follow those last bits: the same limit, within the parameter tolerance
    ("PBM", "empirical", 1e-3, "squarem")])
def test_a_click_model_fitted_on_the_cluster_equals_the_local_fit(dask_client, model: str, prior, rtol: float,
                                                                   acceleration: str) -> None:
    log = clicks.read_yandex(DATA / "clicks" / "clara2_head.tsv")
    # each pass is a round trip to the cluster (about 0.25 s): PBM and SQUAREM run to their own
    # stop (96 and 92 passes on this log), so the stopping rule is checked on the cluster; the
    # others stop at 20 passes (plain EM under the empirical prior would need a thousand)
    runs_to_its_stop = (model, acceleration) == ("PBM", "squarem") or (model, prior) == ("PBM", (1, 2))
    passes = None if runs_to_its_stop else 20
    local = getattr(clicks, model)(prior=prior).fit(log, chunk_size=40, workers=1, acceleration=acceleration,
                                                    **({"iterations": passes} if passes else {}))
    remote = fit_click_model(getattr(clicks, model)(prior=prior), log, client=dask_client, chunk_size=40,
                             split_every=3, acceleration=acceleration, iterations=passes)
    if rtol == 1e-12:
        assert len(remote.history) == len(local.history)
    for key, value in local.parameters().items():
        other = remote.parameters()[key]
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(value, other, rtol=rtol, atol=1e-15)
        else:
            assert np.allclose(np.asarray(value, dtype=float), np.asarray(other, dtype=float), rtol=rtol, atol=1e-15)
    assert remote.hyper.keys() == local.hyper.keys() and (prior == "empirical") == bool(local.hyper)
    for field, hyper in local.hyper.items():
        assert np.allclose(remote.hyper[field], hyper, rtol=rtol)
    lp_local = local.conditional_log_probs(log)
    assert np.allclose(remote.conditional_log_probs(log), lp_local, rtol=rtol, atol=1e-15)
