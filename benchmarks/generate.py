"""Generate an MS MARCO dev-sized run and qrels: 6,980 queries x 1,000 docs, string ids, ties.

Usage: python benchmarks/generate.py [OUT_DIR] [--queries N] [--depth K] [--judged J] [--long-id] [--id-prefix P]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def generate(out: Path, n_queries: int = 6980, depth: int = 1000, seed: int = 7, judged: int | None = None,
             long_id: bool = False, id_prefix: str = "") -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.txt`` into ``out`` and return their paths.

    ``judged``: judgments per query (default 1 to 3, as MS MARCO dev; 100 x 20,000 queries makes
    a 2M-line qrels). ``long_id``: the first query's first document gets a 10,000-character id.
    ``id_prefix``: written before every document id (``clueweb09-en0000-00-`` makes ids of 24 to
    27 bytes, as web collections have, where MS MARCO's are at most 7).
    """
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    run_path, qrels_path = out / "run.trec", out / "qrels.txt"
    qids = np.array([str(1000000 + 17 * i) for i in range(n_queries)])
    block_queries = max(1, 500_000 // depth)
    judged_docs: list[np.ndarray] = []
    with open(run_path, "w") as f:
        for start in range(0, n_queries, block_queries):
            nq = min(block_queries, n_queries - start)
            n = nq * depth
            docs = rng.integers(0, 8_841_823, size=n)
            # unique docs per query: offset by position so no (query, doc) repeats
            docs = (docs - docs % depth) + np.tile(np.arange(depth), nq)
            scores = np.round(rng.normal(10.0, 3.0, size=n), 3)  # 3 decimals -> a few tied scores per query
            order = np.lexsort((-scores, np.repeat(np.arange(nq), depth)))
            docs, scores = docs[order], scores[order]
            names = np.char.add(id_prefix, docs.astype(str)).astype(object)
            if long_id and start == 0:
                names[0] = "D" + "x" * 9_999
            judged_docs.append(names.reshape(nq, depth))
            rank = np.tile(np.arange(1, depth + 1), nq)
            q = np.repeat(qids[start:start + nq], depth)
            f.writelines(f"{a} Q0 {d} {r} {s:.3f} bench\n" for a, d, r, s in zip(q, names, rank, scores, strict=True))
    with open(qrels_path, "w") as f:
        for qi in range(n_queries):
            block, row = divmod(qi, block_queries)
            k = judged if judged is not None else int(rng.integers(1, 4))
            picks = rng.choice(depth * 3, size=k, replace=False)
            labels = rng.integers(0 if judged else 1, 3, size=k)
            for p, label in zip(picks, labels, strict=True):
                doc = judged_docs[block][row, p] if p < depth else f"{id_prefix}u{p}x{rng.integers(0, 8_841_823)}"
                f.write(f"{qids[qi]} 0 {doc} {int(label)}\n")
    return run_path, qrels_path


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=str(Path(__file__).parent / "_data"))
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--judged", type=int, default=None, help="judgments per query (default 1 to 3)")
    ap.add_argument("--long-id", action="store_true", help="one document id of 10,000 characters")
    ap.add_argument("--id-prefix", default="", help="written before every document id")
    a = ap.parse_args()
    print(*generate(Path(a.out), a.queries, a.depth, judged=a.judged, long_id=a.long_id, id_prefix=a.id_prefix))
