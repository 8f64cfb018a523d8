"""rankwise.torch.sync on 2 gloo processes (CPU): the synced state equals one metric updated with
every rank's batches, in one all_reduce where states add up; a rank with fewer updates, or
none, neither hangs nor changes the result."""

from __future__ import annotations

import os
import pickle
import socket
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from rankwise.streaming import (  # noqa: E402
    BLEU,
    NDCG,
    ROCAUC,
    Accuracy,
    LogLoss,
    MultiMetric,
    PearsonCorrCoef,
    SpearmanCorrCoef,
)
from rankwise.torch import sync, sync_plan  # noqa: E402

WORLD = 2


def _metrics() -> MultiMetric:
    return MultiMetric(ndcg=NDCG(k=[5, 10]), acc=Accuracy(), loss=LogLoss(), auc=ROCAUC(),
                       binned=ROCAUC(num_thresholds=50), r=PearsonCorrCoef(), rho=SpearmanCorrCoef())


def _batches(rank: int) -> list[dict]:
    """Rank 0 does 5 updates, rank 1 does 2 (an idle rank does none)."""
    rng = np.random.default_rng(rank)
    return [{"predictions": rng.random((8, 12)), "targets": rng.integers(0, 2, (8, 12))}
            for _ in range(5 if rank == 0 else 2)]


def _flat(batch: dict) -> dict:
    return {"predictions": batch["predictions"].ravel(), "targets": batch["targets"].ravel()}


def _update(metric: MultiMetric, batch: dict) -> None:
    metric.metrics["ndcg"].update(**batch)
    for name in ("acc", "loss", "auc", "binned", "r", "rho"):
        metric.metrics[name].update(**_flat(batch))


def _worker(rank: int, port: int, out: str, idle_rank: int) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    calls = []
    for name in ("all_reduce", "all_gather"):
        original = getattr(dist, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        setattr(dist, name, counted)
    metric = _metrics()
    if rank != idle_rank:
        for batch in _batches(rank):
            _update(metric, batch)
    before = metric.compute()
    synced = sync(metric)
    only_sums = sync(MultiMetric(ndcg=metric.metrics["ndcg"], acc=metric.metrics["acc"]))
    bleu = BLEU().update(predictions=["the cat sat"] if rank == 0 else ["a dog"],
                         targets=[["the cat sat"]] if rank == 0 else [["a dog ran", "the dog"]])
    with open(f"{out}.{rank}", "wb") as f:
        pickle.dump({"synced": synced.compute(), "local_after": metric.compute(), "before": before,
                     "calls": calls, "only_sums": only_sums.compute(), "bleu": sync(bleu).compute()}, f)
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path: Path, idle_rank: int) -> list[dict]:
    out = str(tmp_path / "result")
    mp.spawn(_worker, args=(_free_port(), out, idle_rank), nprocs=WORLD, join=True)
    return [pickle.load(open(f"{out}.{r}", "rb")) for r in range(WORLD)]


@pytest.mark.skipif(sys.platform == "win32", reason="gloo on CPU, POSIX")
@pytest.mark.parametrize("idle_rank", [-1, 1])
def test_synced_state_equals_one_metric_over_all_ranks(tmp_path: Path, idle_rank: int) -> None:
    results = _run(tmp_path, idle_rank)
    single = _metrics()
    for rank in range(WORLD):
        if rank != idle_rank:
            for batch in _batches(rank):
                _update(single, batch)
    expected = single.compute()
    for rank, got in enumerate(results):
        assert str(got["local_after"]) == str(got["before"])  # the local state is untouched (NaN on an idle rank)
        for name, value in expected.items():
            values = value if isinstance(value, dict) else {"": value}
            synced = got["synced"][name] if isinstance(value, dict) else {"": got["synced"][name]}
            for key in values:
                assert synced[key] == pytest.approx(values[key], rel=1e-12), (rank, name, key)
        # one all_reduce for the sums, one all_gather for Pearson's moments, two for the lists
        assert got["calls"][:4] == ["all_reduce", "all_gather", "all_gather", "all_gather"]
        assert got["calls"][4:5] == ["all_reduce"]  # NDCG + Accuracy: one collective
    assert results[0]["synced"] == results[1]["synced"]  # every rank holds the same value
    assert results[0]["bleu"] == results[1]["bleu"]
    both = BLEU().update(predictions=["the cat sat", "a dog"], targets=[["the cat sat", ""], ["a dog ran", "the dog"]])
    assert results[0]["bleu"] == pytest.approx(both.compute(), rel=1e-12)


def test_the_plan_names_each_state_reduction() -> None:
    plan = sync_plan(_metrics())
    assert plan["ndcg"] == {"total": "sum", "count": "sum", "queries": "sum", "flat_indexes": "cat",
                            "flat_scores": "cat", "flat_labels": "cat"}   # rows of indexes= batches
    assert set(plan["r"].values()) == {"gather"}
    assert plan["auc"] == {"scores": "cat", "labels": "cat", "weights": "cat"}
    assert set(plan["binned"].values()) == {"sum"}
    assert sync_plan(BLEU())[""] == {"stats": "sum", "nrefs": "max"}
