"""Generate an MS MARCO dev-sized run and qrels: 6,980 queries x 1,000 docs, string ids, ties.

Usage: python benchmarks/generate.py [OUT_DIR] [--queries N] [--depth K]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def generate(out: Path, n_queries: int = 6980, depth: int = 1000, seed: int = 7) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.txt`` into ``out`` and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    run_path, qrels_path = out / "run.trec", out / "qrels.txt"
    qids = np.array([str(1000000 + 17 * i) for i in range(n_queries)])
    n = n_queries * depth
    docs = rng.integers(0, 8_841_823, size=n)
    # unique docs per query: offset by position so no (query, doc) repeats
    docs = (docs - docs % depth) + np.tile(np.arange(depth), n_queries)
    scores = np.round(rng.normal(10.0, 3.0, size=n), 3)  # 3 decimals -> a few tied scores per query
    order = np.lexsort((-scores, np.repeat(np.arange(n_queries), depth)))
    docs, scores = docs[order], scores[order]
    rank = np.tile(np.arange(1, depth + 1), n_queries)
    q = np.repeat(qids, depth)
    lines = np.char.add(np.char.add(q, " Q0 "), docs.astype(str))
    with open(run_path, "w") as f:
        for i in range(0, n, 500_000):
            block = [f"{a} {r} {s:.3f} bench\n" for a, r, s in zip(lines[i:i + 500_000],
                                                              rank[i:i + 500_000], scores[i:i + 500_000], strict=False)]
            f.writelines(block)
    with open(qrels_path, "w") as f:
        for qi in range(n_queries):
            k = rng.integers(1, 4)
            picks = rng.choice(depth * 3, size=k, replace=False)
            for p in picks:
                doc = docs[qi * depth + p] if p < depth else rng.integers(0, 8_841_823)
                f.write(f"{qids[qi]} 0 {doc} {int(rng.integers(1, 3))}\n")
    return run_path, qrels_path


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=str(Path(__file__).parent / "_data"))
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    a = ap.parse_args()
    print(*generate(Path(a.out), a.queries, a.depth))
