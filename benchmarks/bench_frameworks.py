"""Metrics inside training, two parts (``--part torch``, ``--part jax``, default both).

**torch**: sync of metric states across 2 ranks (gloo, CPU): rankwise.torch.sync against torchmetrics.

Each rank updates nDCG@10 with ``--batches`` batches of ``--rows`` rows (queries of 10
documents: the rows are ``rows / 10`` queries x 10 documents), then syncs the states and
computes. torchmetrics' ``RetrievalNormalizedDCG(top_k=10)`` keeps every row and gathers them;
rankwise's ``NDCG(k=[10])`` keeps per-cut-off sums and does one ``all_reduce``. Both give the
same nDCG@10 (checked). Times are the slower rank's, in seconds.

**jax**: a training-style loop of ``--steps`` steps, each a ``jit``-compiled function that
scores a batch of ``--rows`` rows (queries of 10 documents) with a linear model and updates
nDCG@10 and log-loss: with ``rankwise.jax`` states inside the step, with metrax states
inside the step (nDCG@10 from ``NDCGAtK``, log-loss as an ``Average`` of per-row losses),
and with the NumPy streaming metrics on the host (each step's outputs copied out of JAX).
Steps per second after the first (compiling) step; the three nDCG@10 values agree (checked).

    pip install -e ".[test]"
    python benchmarks/bench_frameworks.py --batches 1000 --rows 1000 --steps 1000
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import socket
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import in_turn, load_average, print_table, run_child  # noqa: E402


def _batches(rank: int, batches: int, rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(rank)
    return [(rng.random((rows // 10, 10)), rng.integers(0, 3, (rows // 10, 10))) for _ in range(batches)]


def _worker(rank: int, port: int, batches: int, rows: int, out: str, library: str) -> None:
    import torch
    import torch.distributed as dist
    from torchmetrics.retrieval import RetrievalNormalizedDCG

    from rankwise.streaming import NDCG
    from rankwise.torch import sync

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    data = _batches(rank, batches, rows)
    result = {}
    cpu0 = time.process_time()
    if library == "rankwise":
        _rankwise_rank(data, result, NDCG, sync, dist)
    else:
        _torchmetrics_rank(data, result, rows, rank, batches, torch, dist, RetrievalNormalizedDCG)
    result[library]["cpu"] = time.process_time() - cpu0
    result[library]["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(f"{out}.{rank}", "wb") as f:
        pickle.dump(result, f)
    dist.destroy_process_group()


def _rankwise_rank(data, result, NDCG, sync, dist) -> None:  # noqa: N803 - the classes, imported in the rank
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


def _torchmetrics_rank(data, result, rows, rank, batches, torch, dist, RetrievalNormalizedDCG) -> None:  # noqa: N803
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


def jax_loop(steps: int, rows: int, library: str) -> tuple[str, float, float, float]:
    """(library, steps/s, nDCG@10, log-loss) of one of the three ways to keep metrics in a JAX loop."""
    import jax
    import jax.numpy as jnp
    import metrax

    import rankwise.jax as rj
    from rankwise import streaming as rs

    rng = np.random.default_rng(0)
    queries = rows // 10
    features = jnp.asarray(rng.normal(size=(steps, queries, 10, 8)), jnp.float32)
    labels = jnp.asarray(rng.integers(0, 2, (steps, queries, 10)))
    weights = jnp.asarray(rng.normal(size=8), jnp.float32)

    def forward(x):
        logits = x @ weights
        return logits, jax.nn.sigmoid(logits)

    @jax.jit
    def rankwise_step(states, x, y):
        logits, p = forward(x)
        ndcg, loss = states
        return ndcg.update(logits, y), loss.update(p, y)

    @jax.jit
    def metrax_step(states, x, y):
        logits, p = forward(x)
        ndcg, loss = states
        p = jnp.clip(p, 1e-7, 1 - 1e-7)
        bce = -(y * jnp.log(p) + (1 - y) * jnp.log1p(-p))
        return (ndcg.merge(metrax.NDCGAtK.from_model_output(logits, y, ks=jnp.array([10]))),
                loss.merge(metrax.Average.from_model_output(bce)))

    host_forward = jax.jit(forward)

    def run(step, states):
        states = step(states, features[0], labels[0])
        jax.block_until_ready(states)
        start = time.perf_counter()
        for i in range(1, steps):
            states = step(states, features[i], labels[i])
        jax.block_until_ready(states)
        return states, (steps - 1) / (time.perf_counter() - start)

    if library == JAX_LIBRARIES[0]:
        states, rate = run(rankwise_step, (rj.NDCG.empty(ks=(10,)), rj.LogLoss.empty()))
        return library, rate, float(states[0].compute()["ndcg@10"]), float(states[1].compute())
    ndcg0 = metrax.NDCGAtK.from_model_output(jnp.zeros((1, 10)), jnp.zeros((1, 10), int), ks=jnp.array([10]))
    avg0 = metrax.Average.from_model_output(jnp.zeros(1))
    if library == JAX_LIBRARIES[1]:
        states, rate = run(metrax_step, (jax.tree_util.tree_map(jnp.zeros_like, ndcg0),
                                         jax.tree_util.tree_map(jnp.zeros_like, avg0)))
        return library, rate, float(np.asarray(states[0].compute())[0]), float(states[1].compute())
    ndcg, loss = rs.NDCG(k=10, ties="input"), rs.LogLoss()
    logits, p = host_forward(features[0])
    jax.block_until_ready(p)
    start = time.perf_counter()
    for i in range(steps):
        logits, p = host_forward(features[i])
        y = np.asarray(labels[i])
        ndcg.update(predictions=np.asarray(logits), targets=y)
        loss.update(predictions=np.asarray(p, dtype=np.float64).ravel(), targets=y.ravel())
    return library, steps / (time.perf_counter() - start), float(ndcg.compute()), float(loss.compute())


def torch_part(batches: int, rows: int, repeat: int) -> None:
    import statistics

    import torch.multiprocessing as mp

    runs: dict[str, list[dict]] = {"rankwise": [], "torchmetrics": []}
    for _ in range(repeat):   # each library in turn, in two fresh rank processes of its own
        for lib in runs:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            with tempfile.TemporaryDirectory() as tmp:
                out = str(Path(tmp) / "r")
                mp.spawn(_worker, args=(port, batches, rows, out, lib), nprocs=2, join=True)
                ranks = [pickle.load(open(f"{out}.{r}", "rb"))[lib] for r in range(2)]
            runs[lib].append({k: max(r[k] for r in ranks) for k in ("update", "sync", "compute", "cpu", "peak_mb")}
                             | {"value": ranks[0]["value"]})
    print(f"2 ranks (gloo, CPU), {batches} batches x {rows} rows per rank, nDCG@10; the slower rank's times, "
          f"medians of {repeat} rounds, each library in turn; {load_average()}\n")
    print("| library | update s | sync s | compute s | sync + compute s | CPU s (a rank) | peak MB (a rank) | "
          "nDCG@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for lib, done in runs.items():
        med = {k: statistics.median(r[k] for r in done) for k in ("update", "sync", "compute", "cpu")}
        print(f"| {lib} | {med['update']:.2f} | {med['sync'] * 1000:.1f} ms | {med['compute']:.3f} | "
              f"{med['sync'] + med['compute']:.3f} | {med['cpu']:.2f} | {max(r['peak_mb'] for r in done):,.0f} | "
              f"{done[0]['value']:.6f} |")


JAX_LIBRARIES = ("rankwise.jax (in the step)", "metrax (in the step)", "NumPy states on the host")


def jax_part(steps: int, rows: int, repeat: int) -> None:
    argvs = {name: [sys.executable, __file__, "--jax-child", str(i), "--steps", str(steps), "--rows", str(rows)]
             for i, name in enumerate(JAX_LIBRARIES)}
    done = in_turn({name: (lambda argv=argv: run_child(argv)) for name, argv in argvs.items()}, repeat)
    print(f"\nJAX training-style loop (CPU), {steps} steps x {rows} rows, nDCG@10 + log-loss; each library in its "
          f"own process, in turn, medians of {repeat} rounds; {load_average()}\n")
    print_table(done, own_memory=False, extra={
        "steps/s (median)": lambda s: f"{s.median('rate'):,.0f}", "nDCG@10": lambda s: f"{s.result['ndcg']:.6f}",
        "log-loss": lambda s: f"{s.result['loss']:.6f}"})
    values = [s.result["ndcg"] for s in done.values()]
    if max(values) - min(values) > 1e-5:
        raise SystemExit(f"nDCG@10 differs between libraries: {values}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("torch", "jax", "all"), default="all")
    ap.add_argument("--batches", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each library in turn; medians")
    ap.add_argument("--jax-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.jax_child is not None:   # one library's JAX loop, in a process of its own
        name, rate, ndcg, loss = jax_loop(args.steps, args.rows, JAX_LIBRARIES[args.jax_child])
        print(json.dumps({"rate": rate, "ndcg": ndcg, "loss": loss}))
        return
    if args.part in ("torch", "all"):
        torch_part(args.batches, args.rows, args.repeat)
    if args.part in ("jax", "all"):
        jax_part(args.steps, args.rows, args.repeat)


if __name__ == "__main__":
    main()
