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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import SECTION_CLOCK, in_turn, load_average, run_child  # noqa: E402

CHILD = SECTION_CLOCK + r"""
import json, sys
import numpy as np, pandas as pd
from rankwise.recsys import beyond_accuracy

users, items = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
train = pd.DataFrame({"user": np.repeat(np.arange(users), 10), "item": rng.zipf(1.3, 10 * users) % items})
reco = pd.DataFrame({"user": np.repeat(np.arange(users), 10), "item": rng.integers(0, items, 10 * users),
                     "score": np.tile(np.arange(10, 0, -1), users)})
start = section_clock()
out = beyond_accuracy(reco, ["serendipity@10", "ild(similarity=cooccurrence)@10"], train=train)
print(json.dumps(dict(section_since(start), values=out.table["value"].tolist())))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, every size once per round; medians")
    args = parser.parse_args()
    sizes = {f"{users:,} users": [sys.executable, "-c", CHILD, str(users), str(args.items)] for users in args.users}
    done = in_turn({name: (lambda argv=argv: run_child(argv)) for name, argv in sizes.items()}, args.repeat)
    print(f"{args.items:,} items; medians of {args.repeat} rounds, each size in turn in a fresh process; "
          f"call = the beyond_accuracy call; {load_average()}\n")
    print("| users | call wall s | call CPU s | process wall s | process CPU s | peak MB | serendipity@10 | "
          "ild(cooccurrence)@10 |\n|---|---|---|---|---|---|---|---|")
    for name, summary in done.items():
        serendipity, ild = summary.result["values"]
        print(f"| {name} | {summary.median('call_seconds'):.2f} | {summary.median('call_cpu'):.2f} | "
              f"{summary.median('wall'):.2f} | {summary.median('cpu'):.2f} | {summary.peak_mb:,.0f} | "
              f"{serendipity:.4f} | {ild:.4f} |")


if __name__ == "__main__":
    main()
