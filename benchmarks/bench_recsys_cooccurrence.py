"""Co-occurrence similarity (the default of ``serendipity``, and ``ild(similarity=cooccurrence)``)
at growing numbers of users, each size in a fresh process: whole-call seconds and peak memory.

    python benchmarks/bench_recsys_cooccurrence.py                       # 1,000 / 10,000 / 100,000 users
    python benchmarks/bench_recsys_cooccurrence.py --users 1000 100000 1000000

The data (seeded): ``--items`` items with Zipf-like popularity, 10 training interactions and a
top-10 list per user. The similarity is one sparse items x items product of the training
matrix, so memory follows the co-occurring item pairs, not users x pairs (which ran out of
4 GiB at a few hundred users before).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np, pandas as pd
from rankwise.recsys import beyond_accuracy

users, items = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
train = pd.DataFrame({"user": np.repeat(np.arange(users), 10), "item": rng.zipf(1.3, 10 * users) % items})
reco = pd.DataFrame({"user": np.repeat(np.arange(users), 10), "item": rng.integers(0, items, 10 * users),
                     "score": np.tile(np.arange(10, 0, -1), users)})
start = time.perf_counter()
out = beyond_accuracy(reco, ["serendipity@10", "ild(similarity=cooccurrence)@10"], train=train)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "values": out.table["value"].tolist()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--items", type=int, default=2_000)
    args = parser.parse_args()
    print("| users | items | seconds | peak MB | serendipity@10 | ild(cooccurrence)@10 |\n|---|---|---|---|---|---|")
    for users in args.users:
        done = subprocess.run([sys.executable, "-c", CHILD, str(users), str(args.items)], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            print(f"| {users:,} | {args.items:,} | failed: {done.stderr.strip().splitlines()[-1]} | | | |")
            continue
        got = json.loads(done.stdout)
        serendipity, ild = got["values"]
        print(f"| {users:,} | {args.items:,} | {got['seconds']:.1f} | {got['peak_mb']:,.0f} | {serendipity:.4f} | "
              f"{ild:.4f} |")


if __name__ == "__main__":
    main()
