"""Evaluate one large run through every engine and print a table: wall time, peak memory, rows
per second per core, and whether the per-query values equal the in-memory path's.

    pip install -e ".[dask,spark]"
    python benchmarks/bench_scale.py --rows 100_000_000   # the issue's size (about 4 GB as TREC text)
    python benchmarks/bench_scale.py --rows 10_000_000 --engines memory,chunks,dask,spark

The run is generated as a Parquet dataset (files of 1M rows, grouped by query and ranked by
score, as search systems write them; scores with three decimals so that some documents tie)
plus TREC text of the same rows, with qrels of 1-3 judgments per query. Each engine runs in a
fresh process; peak memory is that process's maximum resident set size and, for Dask, each
worker's, or for Spark the high-water marks (``VmHWM``) of the driver JVM, which runs
``local[2]``'s executors, plus its Python workers.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.resolve()))
from _measure import Measured, in_turn, load_average, run_child  # noqa: E402

CHILD = r"""
import json, resource, sys, time, os
import numpy as np
engine, qrels, run, out = sys.argv[1:5]
t0 = time.perf_counter()
from rankwise.evaluation import evaluate
metrics = ["ndcg@10", "map", "recip_rank", "P@10", "recall@100"]
client = None
if engine == "dask":
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
if engine == "spark":
    from pyspark.sql import SparkSession
    client = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
              .config("spark.driver.memory", "8g").getOrCreate())
start = time.perf_counter() - t0
t1 = time.perf_counter()
res = evaluate(qrels, run, metrics, engine=engine, client=client, duplicates="first")
took = time.perf_counter() - t1
np.save(out, np.stack([res.runs[0].values[c] for c in ("ndcg_cut_10", "map", "recip_rank")]))
children = 0
if engine == "dask":
    def peak_kb():
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = sum(client.run(peak_kb).values())
if engine == "spark":  # the driver JVM (a child of this process) and its Python workers, by VmHWM
    def high_water_kb(pid):
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmHWM")), 0)
    def descendants(pid):
        kids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as stat:
                        parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                except OSError:
                    continue
                if parent == pid:
                    kids += [int(entry), *descendants(int(entry))]
        return kids
    jvm = client.sparkContext._gateway.proc.pid
    children = high_water_kb(jvm) + sum(high_water_kb(p) for p in descendants(jvm))
print(json.dumps({"start": start, "evaluate": took, "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": children}))
"""


def generate(directory: Path, rows: int, depth: int = 100, seed: int = 0) -> tuple[Path, Path, Path]:
    """A Parquet dataset and a TREC file of ``rows`` rows (``depth`` per query), and qrels."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    qrels, dataset, trec = directory / "qrels.txt", directory / "run", directory / "run.trec"
    queries = rows // depth
    if not dataset.exists():
        rng = np.random.default_rng(seed)
        dataset.mkdir()
        per_file = 1_000_000 // depth
        with open(trec, "w") as text:
            for start in range(0, queries, per_file):
                q = np.arange(start, min(start + per_file, queries))
                qid = np.repeat(q, depth).astype(str)
                doc = rng.integers(0, 8_000_000, size=len(qid)).astype(str)
                score = -np.sort(-np.round(rng.random((len(q), depth)) * 100, 3), axis=1).ravel()  # ranked lists
                table = pa.table({"qid": qid, "docno": doc, "score": score})
                pq.write_table(table, dataset / f"part-{start // per_file:05d}.parquet")
                rank = np.tile(np.arange(1, depth + 1), len(q)).astype(str)
                lines = np.char.add(np.char.add(np.char.add(np.char.add(qid, " Q0 "), doc), " "), rank)
                lines = np.char.add(np.char.add(lines, " "), score.astype(str))
                text.write("\n".join(np.char.add(lines, " gen").tolist()) + "\n")
    if not qrels.exists():
        rng = np.random.default_rng(seed + 1)
        with open(qrels, "w") as f:
            for q in range(queries):  # 1-3 distinct judged documents per query
                for d in dict.fromkeys(rng.integers(0, 8_000_000, size=rng.integers(1, 4)).tolist()):
                    f.write(f"{q} 0 {d} {rng.integers(1, 3)}\n")
    return qrels, dataset, trec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engines", default="memory,chunks,dask,spark")
    ap.add_argument("--data", default=str(HERE / "_data"))
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each engine in turn; medians")
    args = ap.parse_args()
    qrels, dataset, trec = generate(Path(args.data) / f"scale_{args.rows}", args.rows)
    size = sum(f.stat().st_size for f in dataset.iterdir()) / 2**20
    outs = {engine: Path(args.data) / f"scale_{args.rows}" / f"values_{engine}.npy"
            for engine in args.engines.split(",")}

    def one(engine: str) -> Measured | None:
        try:
            return run_child([sys.executable, "-c", CHILD, engine, str(qrels), str(dataset), str(outs[engine])])
        except RuntimeError as failed:
            print(f"{engine}: failed\n{failed}", file=sys.stderr)
            return None

    done = in_turn({engine: (lambda engine=engine: one(engine)) for engine in outs}, args.repeat)
    print(f"run: {args.rows:,} rows ({args.rows // 100:,} queries x 100), Parquet {size:.0f} MB, "
          f"TREC {trec.stat().st_size / 2**20:.0f} MB; 5 measures; medians of {args.repeat} rounds, each engine in "
          f"turn in a fresh process; CPU s: the driver process and what it waited for (Dask's and Spark's "
          f"workers run apart: their CPU is not in it); {load_average()}\n")
    rows = []
    reference = None
    for engine, summary in done.items():
        values = np.load(outs[engine])
        if reference is None:
            reference = values
        same = "yes" if np.array_equal(values, reference) else "NO"
        cores = 1 if engine == "chunks" else (os.cpu_count() or 1)
        evaluate = summary.median("evaluate")
        workers = max(float(r.result["workers_kb"]) for r in summary.runs)
        rows.append((engine, f"{summary.median('wall'):.1f}", f"{summary.median('cpu'):.1f}",
                     f"{summary.median('start'):.1f}", f"{evaluate:.1f}", f"{summary.peak_mb:.0f}",
                     f"{workers / 1024:.0f}" if workers else "-", f"{args.rows / evaluate / cores / 1e6:.2f}", same))
    head = ("engine", "wall s", "CPU s (driver)", "start s", "evaluate s", "peak MB (driver)",
            "peak MB (workers / JVM)", "M rows/s/core", "same values")
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
