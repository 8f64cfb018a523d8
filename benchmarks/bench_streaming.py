"""Stream predictions in batches of 1 million through rankwise's MultiMetric and through
torchmetrics doing the same, each in its own process (peak memory = the process's max RSS).

Classification: ROC AUC and PR AUC on a 200-threshold grid, log loss and accuracy, over
--rows predictions (default 100 million); then the exact (unbinned) AUCs on --exact-rows.
Ranking on padded batches: nDCG@10, MRR@10 and P@10 over queries of 100 items (10,000 queries
per batch); torchmetrics' retrieval metrics keep every input and loop over queries in Python, so
they run on --ranking-peer-rows and their throughput is reported from there.

Usage: python benchmarks/bench_streaming.py [--rows 100000000] [--exact-rows 20000000]
       [--ranking-rows 100000000] [--ranking-peer-rows 5000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import in_turn, load_average, run_child  # noqa: E402

BATCH = 1_000_000
ITEMS = 100


def batches(rows: int, seed: int = 0, pool: int = 4):
    """Yield (probabilities, labels) batches; a pool of distinct batches is cycled so that data
    generation does not dominate the timing."""
    rng = np.random.default_rng(seed)
    made = []
    for _ in range(pool):
        labels = (rng.uniform(size=BATCH) < 0.3).astype(np.int64)
        probs = np.clip(0.25 * labels + rng.beta(2, 5, BATCH), 0.0, 1.0).astype(np.float32)
        made.append((probs, labels))
    for i in range(rows // BATCH):
        yield made[i % pool]


def ranking_batches(rows: int, seed: int = 1, pool: int = 4):
    rng = np.random.default_rng(seed)
    queries = BATCH // ITEMS
    made = []
    for _ in range(pool):
        labels = rng.integers(0, 3, (queries, ITEMS)) * (rng.uniform(size=(queries, ITEMS)) < 0.2)
        scores = (labels * 0.3 + rng.uniform(size=(queries, ITEMS))).astype(np.float32)
        made.append((scores, labels))
    for i in range(rows // BATCH):
        yield made[i % pool]


def run_rankwise(kind: str, rows: int) -> dict:
    from rankwise import streaming as rs

    if kind == "ranking":
        mm = rs.MultiMetric(ndcg=rs.NDCG(k=10), mrr=rs.MRR(k=10), p=rs.PrecisionAtK(k=10))
        start = time.perf_counter()
        for scores, labels in ranking_batches(rows):
            mm.update(predictions=scores, targets=labels)
        return {"seconds": time.perf_counter() - start, "values": mm.compute()}
    grid = None if kind == "exact" else 200
    mm = rs.MultiMetric(auc=rs.ROCAUC(num_thresholds=grid), ap=rs.AveragePrecision(num_thresholds=grid),
                        **({} if kind == "exact" else {"log_loss": rs.LogLoss(), "accuracy": rs.Accuracy()}))
    start = time.perf_counter()
    for probs, labels in batches(rows):
        mm.update(predictions=probs, targets=labels)
    values = mm.compute()
    return {"seconds": time.perf_counter() - start, "values": values}


def run_torchmetrics(kind: str, rows: int) -> dict:
    import torch
    import torchmetrics
    from torchmetrics import classification as tc
    from torchmetrics import retrieval as tr

    torch.set_num_threads(2)
    if kind == "ranking":
        metrics = {"ndcg": tr.RetrievalNormalizedDCG(top_k=10), "mrr": tr.RetrievalMRR(top_k=10),
                   "p": tr.RetrievalPrecision(top_k=10)}
        start = time.perf_counter()
        offset = 0
        for scores, labels in ranking_batches(rows):
            q = scores.shape[0]
            idx = torch.arange(offset, offset + q).repeat_interleave(ITEMS)
            s, t = torch.from_numpy(scores).reshape(-1), torch.from_numpy(labels).reshape(-1)
            metrics["ndcg"].update(s, t, indexes=idx)
            metrics["mrr"].update(s, t > 0, indexes=idx)
            metrics["p"].update(s, t > 0, indexes=idx)
            offset += q
        values = {k: float(m.compute()) for k, m in metrics.items()}
        return {"seconds": time.perf_counter() - start, "values": values}
    grid = None if kind == "exact" else 200
    metrics = {"auc": tc.BinaryAUROC(thresholds=grid), "ap": tc.BinaryAveragePrecision(thresholds=grid)}
    if kind != "exact":
        metrics["log_loss"] = torchmetrics.MeanMetric()
        metrics["accuracy"] = tc.BinaryAccuracy()
    start = time.perf_counter()
    for probs, labels in batches(rows):
        p, y = torch.from_numpy(probs), torch.from_numpy(labels)
        metrics["auc"].update(p, y)
        metrics["ap"].update(p, y)
        if kind != "exact":
            eps = torch.finfo(torch.float32).eps
            bce = torch.nn.functional.binary_cross_entropy(p.clamp(eps, 1 - eps), y.float(), reduction="none")
            metrics["log_loss"].update(bce)
            metrics["accuracy"].update(p, y)
    values = {k: float(m.compute()) for k, m in metrics.items()}
    return {"seconds": time.perf_counter() - start, "values": values}


def child(tool: str, kind: str, rows: int) -> None:
    print(json.dumps((run_rankwise if tool == "rankwise" else run_torchmetrics)(kind, rows)))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--exact-rows", type=int, default=20_000_000)
    ap.add_argument("--ranking-rows", type=int, default=100_000_000)
    ap.add_argument("--ranking-peer-rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each tool in turn; medians")
    args = ap.parse_args()
    plan = [("grid", "AUC + AP (200 thresholds), log loss, accuracy", args.rows, args.rows),
            ("exact", "exact AUC + AP", args.exact_rows, args.exact_rows),
            ("ranking", "nDCG@10, MRR@10, P@10 on [10000, 100] batches", args.ranking_rows, args.ranking_peer_rows)]
    print(f"each tool in its own process, in turn, medians of {args.repeat} rounds; stream s = the updates and "
          f"compute; CPU s of the whole process (every thread); {load_average()}\n")
    print("| workload | tool | rows | stream s | process CPU s | rows/s | x rankwise (rows/s) | peak MB | values |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, label, ours_rows, peer_rows in plan:
        rows = {"rankwise": ours_rows, "torchmetrics": peer_rows}
        argvs = {tool: [sys.executable, __file__, "--child", tool, kind, str(n)] for tool, n in rows.items()}
        done = in_turn({tool: (lambda argv=argv: run_child(argv)) for tool, argv in argvs.items()}, args.repeat)
        rate = {tool: rows[tool] / summary.median("seconds") for tool, summary in done.items()}
        for tool, summary in done.items():
            values = ", ".join(f"{k} {v:.4f}" for k, v in summary.result["values"].items())
            ratio = "1.0" if tool == "rankwise" else f"{rate['rankwise'] / rate[tool]:.1f}"
            print(f"| {label} | {tool} | {rows[tool]:,} | {summary.median('seconds'):.1f} | "
                  f"{summary.median('cpu'):.1f} | {rate[tool]:,.0f} | {ratio} | {summary.peak_mb:,.0f} | {values} |")


if __name__ == "__main__":
    main()
