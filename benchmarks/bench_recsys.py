"""Beyond-accuracy metrics of a large recommender run with rankwise and Microsoft Recommenders,
in one run, printed as a table: whole-process seconds and peak memory per tool.

    python benchmarks/bench_recsys.py                                  # 1M users x top-100, 100k items
    python benchmarks/bench_recsys.py --users 100000                   # smaller
    python benchmarks/bench_recsys.py --recommenders-python /path/to/python   # a Python with recommenders

The data (seeded): ``--items`` items with Zipf-like popularity and ``--dims``-dimensional
embeddings, 20 genres (each item one or two); ``--users`` users with up to 10 training interactions
each and a top-``--k`` list without the items the user has interacted with. rankwise
computes catalogue coverage, novelty, intra-list diversity (cosine of the embeddings), ARP,
calibration, personalisation and expected exposure (against 2 held-out items per user) in one
``beyond_accuracy`` call, reading the lists and interactions as DataFrames. Microsoft
Recommenders (``python_evaluation``) has no ARP, calibration, personalisation or expected
exposure; it computes catalogue coverage, novelty and diversity
(``item_feature_vector``), and its diversity cross-joins every pair of catalogue items in
pandas, so it runs on ``--peer-users`` users and ``--peer-items`` items and its time is
scaled to the full size per list (and per item pair for diversity). RecBole is not timed: it
computes metrics inside its trainer from its own dataset objects, not from a table of lists.
Each tool runs in a fresh process; peak MB is its maximum resident set size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

DATA = r"""
import numpy as np, pandas as pd
def data(users, items, k, dims, seed=0):
    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, items + 1) ** 0.8
    weight /= weight.sum()
    train_items = rng.choice(items, size=(users, 10), p=weight)
    offset = rng.integers(0, items, size=users)
    lists = (offset[:, None] + np.arange(k)[None, :] * 7919) % items   # distinct items per list
    train = pd.DataFrame({"userID": np.repeat(np.arange(users), 10), "itemID": train_items.ravel()})
    reco = pd.DataFrame({"userID": np.repeat(np.arange(users), k), "itemID": lists.ravel(),
                         "prediction": np.tile(np.arange(k, 0, -1), users).astype(float)})
    train = train.drop_duplicates()
    seen = reco.merge(train, on=["userID", "itemID"], how="left", indicator=True)
    reco = reco[(seen["_merge"] == "left_only").to_numpy()]   # Recommenders refuses items already seen
    vectors = rng.normal(size=(items, dims))
    genre = rng.integers(0, 20, items)
    test = pd.DataFrame({"userID": np.repeat(np.arange(users), 2),
                         "itemID": rng.choice(items, size=users * 2, p=weight)}).drop_duplicates()
    return train, reco, vectors, genre, test
"""

CHILD = DATA + r"""
import json, resource, sys, time
tool, users, items, k, dims = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
start = time.perf_counter()
if tool != "rankwise-streaming":
    train, reco, vectors, genre, test = data(users, items, k, dims)
    start = time.perf_counter()
out = {}
if tool == "rankwise-streaming":
    # the lists arrive in chunks of 100,000 users as a model's top-k ids (no DataFrame, no
    # exclusion of seen items); training popularity is counted chunk by chunk first
    from rankwise.streaming import ItemExposure
    rng = np.random.default_rng(0)
    weight = 1.0 / np.arange(1, items + 1) ** 0.8
    weight /= weight.sum()
    chunk = 100_000
    popularity = np.zeros(items)
    for first in range(0, users, chunk):
        n = min(chunk, users - first)
        popularity += np.bincount(rng.choice(items, size=n * 10, p=weight), minlength=items)
    state = ItemExposure(items, k=k, popularity=popularity)
    for first in range(0, users, chunk):
        n = min(chunk, users - first)
        offset = rng.integers(0, items, size=n)
        state.update(predictions=(offset[:, None] + np.arange(k)[None, :] * 7919) % items)
    out = state.compute()
elif tool == "rankwise":
    from rankwise.recsys import beyond_accuracy
    features = pd.DataFrame(vectors).assign(itemID=np.arange(items))
    groups = pd.DataFrame({"itemID": np.arange(items), "genre": genre.astype(str)})
    result = beyond_accuracy(reco, [f"coverage(outside=count)@{k}", f"novelty@{k}", f"ild@{k}", f"arp@{k}",
                                    f"calibration@{k}", f"personalisation@{k}", f"ee_loss@{k}"], train=train, test=test,
                             features=features, groups=groups)
    out = dict(zip(result.table["metric"], result.table["value"]))
else:
    from recommenders.evaluation import python_evaluation as pe
    features = pd.DataFrame({"itemID": np.arange(items), "features": list(vectors)})
    out["coverage"] = pe.catalog_coverage(train, reco)
    out["novelty"] = pe.novelty(train, reco)
    out["diversity"] = pe.diversity(train, reco, item_feature_df=features, item_sim_measure="item_feature_vector")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "values": out}))
"""


def run(python: str, tool: str, users: int, items: int, k: int, dims: int) -> dict:
    done = subprocess.run([python, "-c", CHILD, tool, str(users), str(items), str(k), str(dims)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--dims", type=int, default=32)
    parser.add_argument("--peer-users", type=int, default=2_000)
    parser.add_argument("--peer-items", type=int, default=2_000)
    parser.add_argument("--recommenders-python", default=None, help="a Python with recommenders installed")
    args = parser.parse_args()
    rows = []
    ours = run(sys.executable, "rankwise", args.users, args.items, args.k, args.dims)
    rows.append(("rankwise (coverage, novelty, ILD, ARP, calibration, personalisation, expected exposure)",
                 f"{args.users:,} x {args.k}, {args.items:,} items", ours["seconds"], ours["seconds"], ours["peak_mb"]))
    streamed = run(sys.executable, "rankwise-streaming", args.users, args.items, args.k, args.dims)
    rows.append(("rankwise streaming `ItemExposure` (coverage, entropy, Gini, ARP, novelty), lists generated in "
                 "chunks of 100,000 users", f"{args.users:,} x {args.k}, {args.items:,} items", streamed["seconds"],
                 streamed["seconds"], streamed["peak_mb"]))
    if args.recommenders_python:
        peer = run(args.recommenders_python, "recommenders", args.peer_users, args.peer_items, args.k, args.dims)
        lists = args.users / args.peer_users
        pairs = (args.items / args.peer_items) ** 2
        scaled = peer["seconds"] * max(lists, pairs)
        rows.append(("Microsoft Recommenders 1.2.1 (coverage, novelty, diversity)",
                     f"{args.peer_users:,} x {args.k}, {args.peer_items:,} items", peer["seconds"], scaled,
                     peer["peak_mb"]))
        small = run(sys.executable, "rankwise", args.peer_users, args.peer_items, args.k, args.dims)
        rows.append(("rankwise on the peer's size", f"{args.peer_users:,} x {args.k}, {args.peer_items:,} items",
                     small["seconds"], small["seconds"], small["peak_mb"]))
        print("values on the peer's size: rankwise", {m: round(v, 6) for m, v in small["values"].items()},
              "recommenders", {m: round(v, 6) for m, v in peer["values"].items()})
    print(f"| tool | data | seconds | seconds at {args.users:,} users x {args.items:,} items | peak MB |")
    print("|---|---|---|---|---|")
    for name, size, seconds, scaled, peak in rows:
        print(f"| {name} | {size} | {seconds:.1f} | {scaled:,.0f} | {peak:,.0f} |")
    if args.recommenders_python:
        print(f"\nrankwise is {rows[2][3] / rows[0][3]:,.0f}x faster at full size (the peer scaled)")


if __name__ == "__main__":
    main()
