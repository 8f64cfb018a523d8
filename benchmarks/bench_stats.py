"""Time the vectorised randomisation and bootstrap tests: 7,000 queries x 5 systems (10 pairs),
10,000 permutations each, against a plain Python loop per permutation (extrapolated from a
few hundred permutations) and scipy.stats.permutation_test on one pair.

Usage: python benchmarks/bench_stats.py [--queries 7000] [--systems 5] [--permutations 10000]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

from rankwise.stats import paired

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import in_turn, load_average, measure_fork, print_table  # noqa: E402


def naive_randomization(a: np.ndarray, b: np.ndarray, permutations: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    d = b - a
    obs = abs(d.mean())
    hits = 0
    for _ in range(permutations):
        signs = rng.choice((-1.0, 1.0), size=len(d))
        hits += abs((signs * d).mean()) >= obs
    return (hits + 1) / (permutations + 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=7000)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds, every method once per round; medians")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, args.queries)
    systems = [np.clip(base + rng.normal(0.01 * i, 0.2, args.queries), 0, 1) for i in range(args.systems)]
    pairs = list(itertools.combinations(range(args.systems), 2))
    probe = 300
    scale = {}   # a method timed on part of the work: its factor to the whole

    def rankwise_test(fn):
        return lambda: {"p": min(fn(systems[i], systems[j], args.permutations, 0) for i, j in pairs)}

    tools = {f"rankwise {name}, {len(pairs)} pairs": rankwise_test(fn)
             for name, fn in (("randomization", paired.randomization_test), ("bootstrap", paired.bootstrap_test))}
    loop = f"Python loop per permutation, {len(pairs)} pairs (extrapolated from {probe} permutations of one pair)"
    tools[loop] = lambda: {"p": naive_randomization(systems[0], systems[1], probe, 0)}
    scale[loop] = args.permutations / probe * len(pairs)
    try:
        from scipy import stats

        scipy_name = f"scipy permutation_test, {len(pairs)} pairs (one pair timed)"
        tools[scipy_name] = lambda: {"p": float(stats.permutation_test(
            (systems[0], systems[1]), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
            n_resamples=args.permutations, vectorized=True, random_state=0).pvalue)}
        scale[scipy_name] = len(pairs)
    except ImportError:
        pass
    done = in_turn({name: (lambda work=work: measure_fork(work)) for name, work in tools.items()}, args.repeat)
    first = next(iter(done.values())).median("wall")
    print(f"\n{args.queries:,} queries x {args.systems} systems, {args.permutations:,} permutations per pair; "
          f"medians of {args.repeat} rounds, each method in turn, in a fork of one process; {load_average()}\n")
    print_table(done, extra={
        "seconds for every pair": lambda s: f"{s.median('wall') * scale.get(s.name, 1):.2f}",
        "x rankwise randomization": lambda s: f"{s.median('wall') * scale.get(s.name, 1) / first:.1f}"})


if __name__ == "__main__":
    main()
