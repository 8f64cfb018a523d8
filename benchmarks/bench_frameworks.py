"""Sync of metric states across 2 ranks (gloo, CPU): rankwise.torch.sync against torchmetrics.

Each rank updates nDCG@10 with ``--batches`` batches of ``--rows`` rows (queries of 10
documents: the rows are ``rows / 10`` queries x 10 documents), then syncs the states and
computes. torchmetrics' ``RetrievalNormalizedDCG(top_k=10)`` keeps every row and gathers them;
rankwise's ``NDCG(k=[10])`` keeps per-cut-off sums and does one ``all_reduce``. Both give the
same nDCG@10 (checked). Times are the slower rank's, in seconds.

    pip install -e ".[test]"
    python benchmarks/bench_frameworks.py --batches 1000 --rows 1000
"""

from __future__ import annotations

import argparse
import os
import pickle
import socket
import tempfile
import time
from pathlib import Path

import numpy as np


def _batches(rank: int, batches: int, rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(rank)
    return [(rng.random((rows // 10, 10)), rng.integers(0, 3, (rows // 10, 10))) for _ in range(batches)]


def _worker(rank: int, port: int, batches: int, rows: int, out: str) -> None:
    import torch
    import torch.distributed as dist
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    from rankwise.streaming import NDCG
    from rankwise.torch import sync

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    data = _batches(rank, batches, rows)
    result = {}

    ours = NDCG(k=[10])
    t0 = time.perf_counter()
    for scores, labels in data:
        ours.update(predictions=scores, targets=labels)
    t1 = time.perf_counter()
    dist.barrier()
    t2 = time.perf_counter()
    synced = sync(ours)
    t3 = time.perf_counter()
    value = synced.compute()
    t4 = time.perf_counter()
    result["rankwise"] = {"update": t1 - t0, "sync": t3 - t2, "compute": t4 - t3,
                          "value": float(value[10] if isinstance(value, dict) else value)}

    theirs = RetrievalNormalizedDCG(top_k=10)
    queries = rows // 10
    t0 = time.perf_counter()
    for b, (scores, labels) in enumerate(data):
        index = torch.arange(queries).repeat_interleave(10) + (rank * batches + b) * queries
        theirs.update(torch.from_numpy(scores.ravel()), torch.from_numpy(labels.ravel()), indexes=index)
    t1 = time.perf_counter()
    dist.barrier()
    t2 = time.perf_counter()
    theirs.sync()  # gathers every rank's rows
    t3 = time.perf_counter()
    theirs.unsync()
    dist.barrier()
    t4 = time.perf_counter()
    theirs_value = float(theirs.compute())  # syncs again, then computes
    t5 = time.perf_counter()
    result["torchmetrics"] = {"update": t1 - t0, "sync": t3 - t2, "compute": (t5 - t4) - (t3 - t2),
                              "value": theirs_value}
    with open(f"{out}.{rank}", "wb") as f:
        pickle.dump(result, f)
    dist.destroy_process_group()


def main() -> None:
    import torch.multiprocessing as mp

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=1000)
    args = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "r")
        mp.spawn(_worker, args=(port, args.batches, args.rows, out), nprocs=2, join=True)
        ranks = [pickle.load(open(f"{out}.{r}", "rb")) for r in range(2)]
    print(f"2 ranks (gloo, CPU), {args.batches} batches x {args.rows} rows per rank, nDCG@10\n")
    print("| library | update s | sync s | compute s | sync + compute s | nDCG@10 |")
    print("|---|---|---|---|---|---|")
    for lib in ("rankwise", "torchmetrics"):
        worst = {k: max(r[lib][k] for r in ranks) for k in ("update", "sync", "compute")}
        print(f"| {lib} | {worst['update']:.2f} | {worst['sync'] * 1000:.1f} ms | {worst['compute']:.3f} | "
              f"{worst['sync'] + worst['compute']:.3f} | {ranks[0][lib]['value']:.6f} |")


if __name__ == "__main__":
    main()
