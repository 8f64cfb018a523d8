"""Beyond-accuracy metrics of recommendation lists with rankwise, Microsoft Recommenders and
RecBole on the same data, in one run, at full size: wall and CPU seconds, peak memory.

    python benchmarks/bench_recsys.py                      # 100,000 and 1,000,000 users, rankwise only
    python benchmarks/bench_recsys.py --recommenders-python PY1 --recbole-python PY2
    python benchmarks/bench_recsys.py --users 100000 --repeat 3 ...

The data (seeded, the same in every process): ``--items`` items with Zipf-like popularity
(exponent 0.8), 32-dimensional embeddings and one of 20 genres each; per user a top-``--k``
list (distinct items, starting at a popularity-weighted item), 10 training interactions drawn
by popularity (repeats, and those that fall in the user's own list, are dropped, so no list
holds an item the user has seen, as Recommenders requires) and 2 held-out items.

Each tool runs in a fresh process; the tools are timed in turn, ``--repeat`` rounds, and the
table shows medians. "call" is the work after the data is in memory (reading the tables,
encoding, every metric), after a warm-up call on 1,000 users that leaves the imports and every
first-call set-up out of it, for every tool alike; "process" adds the interpreter, the imports,
the warm-up and building the data.
CPU seconds count every thread. Peak MB is the process's maximum resident set; "before" is
that maximum before the call (the data), so the difference is the tool's own.

- rankwise ``beyond_accuracy`` computes every one of its 20 beyond-accuracy metrics, then the
  five Recommenders has (``coverage(outside=count)``, ``distributional_coverage``, ``novelty``,
  ``ild(similarity=cooccurrence)``, ``serendipity``), then RecBole's three (coverage, Gini,
  ARP), each from the DataFrames.
- rankwise ``ItemExposure`` (the streaming state) reads the lists as a (users x k) id matrix,
  in chunks of 100,000 users, as RecBole's evaluator holds them, and computes coverage, Gini
  and ARP (with entropy, novelty and EPC).
- Microsoft Recommenders 1.2.1 ``python_evaluation``: ``catalog_coverage``,
  ``distributional_coverage``, ``novelty``, ``diversity`` and ``serendipity`` (their default,
  co-occurrence similarity), from the DataFrames.
- RecBole 1.2.1 ``ItemCoverage``, ``GiniIndex`` and ``AveragePopularity`` from the id matrix
  and the training items' counter, as its collector hands them over (``DataStruct``).

The metrics the tools share are printed side by side (equal to 1e-9, or the run fails).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import SECTION_CLOCK, Summary, in_turn, load_average, run_child  # noqa: E402

DATA = r"""
import numpy as np, pandas as pd
def lists_and_train(users, items, k, seed=0):
    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, items + 1) ** 0.8
    weight /= weight.sum()
    start = rng.choice(items, size=users, p=weight)
    lists = (start[:, None] + np.arange(k)[None, :] * 7919) % items          # distinct items per list
    train_user = np.repeat(np.arange(users), 10)
    train_item = rng.choice(items, size=users * 10, p=weight)
    seen = (lists[train_user] == train_item[:, None]).any(axis=1)              # in the user's own list
    _, first = np.unique(train_user * items + train_item, return_index=True)  # each (user, item) once
    repeat = np.ones(len(seen), dtype=bool)
    repeat[first] = False
    seen |= repeat
    test_item = rng.choice(items, size=users * 2, p=weight)
    return lists, train_user[~seen], train_item[~seen], test_item, rng
def frames(users, items, k):
    lists, train_user, train_item, test_item, rng = lists_and_train(users, items, k)
    train = pd.DataFrame({"userID": train_user, "itemID": train_item})
    reco = pd.DataFrame({"userID": np.repeat(np.arange(users), k), "itemID": lists.ravel(),
                         "prediction": np.tile(np.arange(k, 0, -1), users).astype(float)})
    test = pd.DataFrame({"userID": np.repeat(np.arange(users), 2), "itemID": test_item}).drop_duplicates()
    vectors = rng.normal(size=(items, 32))
    genre = rng.integers(0, 20, items)
    return train, reco, test, vectors, genre
"""

CHILD = SECTION_CLOCK + DATA + r"""
import json, sys
tool, users, items, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
RECOMMENDERS_FIVE = [f"coverage(outside=count)@{k}", f"distributional_coverage@{k}", f"novelty@{k}",
                     f"ild(similarity=cooccurrence)@{k}", f"serendipity@{k}"]
RECBOLE_THREE = [f"coverage@{k}", f"gini@{k}", f"arp@{k}"]
ALL = ["catalogue_coverage", "user_coverage", "distributional_coverage", "gini", "unique_items", "novelty", "epc",
       "arp", "aplt", "ild", "personalisation", "calibration", "serendipity", "pop_rsp", "pop_reo", "awrf",
       "exposure_ratio", "ee_loss", "ee_disparity", "ee_relevance"]

if tool.startswith("rankwise-frame"):
    from rankwise.recsys import beyond_accuracy
    which = tool.split(":")[1]
    def compute(train, reco, test, vectors, genre):
        if which == "all":
            features = pd.DataFrame(vectors).assign(itemID=np.arange(items))
            groups = pd.DataFrame({"itemID": np.arange(items), "genre": genre.astype(str)})
            result = beyond_accuracy(reco, [f"{m}@{k}" for m in ALL], train=train, test=test, features=features,
                                     groups=groups)
        else:
            result = beyond_accuracy(reco, RECOMMENDERS_FIVE if which == "recommenders" else RECBOLE_THREE,
                                     train=train)
        return dict(zip(result.table["metric"], result.table["value"].astype(float)))
elif tool == "rankwise-matrix":
    from rankwise.streaming import ItemExposure
    def compute(lists, train_user, train_item, test_item, rng):
        state = ItemExposure(items, k=k, popularity=np.bincount(train_item, minlength=items))
        for first in range(0, len(lists), 100_000):          # the lists as they would arrive, 100,000 users at a time
            state.update(predictions=lists[first:first + 100_000])
        out = state.compute()
        return {f"coverage@{k}": out["catalogue_coverage"], f"gini@{k}": out["gini"], f"arp@{k}": out["arp"]}
elif tool == "recommenders":
    from recommenders.evaluation import python_evaluation as pe
    def compute(train, reco, test, vectors, genre):
        return {f"coverage(outside=count)@{k}": pe.catalog_coverage(train, reco),
                f"distributional_coverage@{k}": pe.distributional_coverage(train, reco),
                f"novelty@{k}": pe.novelty(train, reco),
                f"ild(similarity=cooccurrence)@{k}": pe.diversity(train, reco),
                f"serendipity@{k}": pe.serendipity(train, reco)}
elif tool == "recbole":
    from collections import Counter
    import torch
    from recbole.evaluator.collector import DataStruct
    from recbole.evaluator.metrics import AveragePopularity, GiniIndex, ItemCoverage
    def compute(lists, train_user, train_item, test_item, rng):
        data = DataStruct()
        data.set("rec.items", torch.from_numpy(lists))
        data.set("data.num_items", items)
        data.set("data.count_items", Counter(train_item.tolist()))     # its collector's item counter
        config = {"topk": [k], "metric_decimal_place": 12}
        return {name: float(next(iter(metric(config).calculate_metric(data).values())))
                for name, metric in ((f"coverage@{k}", ItemCoverage), (f"gini@{k}", GiniIndex),
                                     (f"arp@{k}", AveragePopularity))}
else:
    raise SystemExit(f"unknown tool {tool}")
make = lists_and_train if tool in ("rankwise-matrix", "recbole") else frames
compute(*make(1_000, items, k))      # warm-up on 1,000 users: lazy imports and first-call set-up, not timed
inputs = make(users, items, k)
before = peak_mb()
start = section_clock()
values = compute(*inputs)
print(json.dumps(dict(section_since(start), before_mb=before, values=values)))
"""

TOOLS = (
    ("rankwise-frame:all", "rankwise `beyond_accuracy`, all 20 metrics", "rankwise"),
    ("rankwise-frame:recommenders", "rankwise `beyond_accuracy`, Recommenders' five", "rankwise"),
    ("recommenders", "Microsoft Recommenders 1.2.1, its five", "recommenders"),
    ("rankwise-frame:recbole", "rankwise `beyond_accuracy`, RecBole's three", "rankwise"),
    ("rankwise-matrix", "rankwise `ItemExposure` (id matrix, chunks of 100k users)", "rankwise"),
    ("recbole", "RecBole 1.2.1, its three (id matrix)", "recbole"),
)
PAIRS = (("recommenders", "rankwise-frame:recommenders"), ("recbole", "rankwise-matrix"),
         ("recbole", "rankwise-frame:recbole"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, every tool once per round; medians")
    parser.add_argument("--memory-cap", type=float, default=20_000, help="MB resident at which a run is stopped")
    parser.add_argument("--time-cap", type=float, default=3_600, help="seconds after which a run is stopped")
    parser.add_argument("--recommenders-python", default=None, help="a Python with recommenders 1.2.1")
    parser.add_argument("--recbole-python", default=None, help="a Python with recbole 1.2.1 and torch")
    args = parser.parse_args()
    pythons = {"rankwise": sys.executable, "recommenders": args.recommenders_python, "recbole": args.recbole_python}
    for users in args.users:
        def runner(key: str, python: str | None, users: int = users):
            if python is None:
                return lambda: None
            argv = [python, "-c", CHILD, key, str(users), str(args.items), str(args.k)]
            return lambda: run_child(argv, memory_cap_mb=args.memory_cap, time_cap_s=args.time_cap)
        tools = {key: runner(key, pythons[owner]) for key, _, owner in TOOLS}
        done = in_turn(tools, args.repeat)
        print_size(users, args, done)


def print_size(users: int, args: argparse.Namespace, done: dict[str, Summary]) -> None:
    names = {key: name for key, name, _ in TOOLS}
    print(f"\n{users:,} users x top-{args.k}, {args.items:,} items; medians of {args.repeat} rounds, each tool in "
          f"turn; {load_average()}\n")
    print("| tool | call wall s | call CPU s | process wall s | process CPU s | peak MB | before the call MB |")
    print("|---|---|---|---|---|---|---|")
    for key, summary in done.items():
        if summary.stopped:
            print(f"| {names[key]} | {summary.stopped} | | | | {summary.peak_mb:,.0f} | |")
            continue
        print(f"| {names[key]} | {_seconds(summary.median('call_seconds'))} | {_seconds(summary.median('call_cpu'))} | "
              f"{summary.median('wall'):.2f} | {summary.median('cpu'):.2f} | {summary.peak_mb:,.0f} | "
              f"{summary.median('before_mb'):,.0f} |")
    for peer, ours in PAIRS:
        if peer in done and ours in done and not done[peer].stopped and not done[ours].stopped:
            call = done[peer].median("call_cpu") / done[ours].median("call_cpu")
            process = done[peer].median("cpu") / done[ours].median("cpu")
            print(f"\n{names[ours]}: {call:,.1f}x {names[peer]} by call CPU, {process:,.1f}x by process CPU; "
                  f"peak memory {done[ours].peak_mb / done[peer].peak_mb:.2f}x the peer's")
            check_values(done[peer].result["values"], done[ours].result["values"], names[peer], names[ours])


def _seconds(value: float) -> str:
    """Seconds with three decimals below one second (a call of 0.04 s is 0.035 or 0.045), two above."""
    return f"{value:.3f}" if value < 1 else f"{value:.2f}"


def check_values(peer: dict, ours: dict, peer_name: str, our_name: str) -> None:
    print(f"\n| metric | {our_name} | {peer_name} |\n|---|---|---|")
    for metric, value in peer.items():
        print(f"| {metric} | {ours[metric]:.9f} | {value:.9f} |")
        if abs(ours[metric] - value) > 1e-9 * max(1.0, abs(value)):
            raise SystemExit(f"{metric}: rankwise {ours[metric]!r} differs from the peer's {value!r}")


if __name__ == "__main__":
    main()
