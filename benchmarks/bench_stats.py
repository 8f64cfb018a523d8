"""Time the vectorised randomisation and bootstrap tests: 7,000 queries x 5 systems (10 pairs),
10,000 permutations each, against a plain Python loop per permutation (extrapolated from a
few hundred permutations) and scipy.stats.permutation_test on one pair.

Usage: python benchmarks/bench_stats.py [--queries 7000] [--systems 5] [--permutations 10000]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from rankwise.stats import paired


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
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, args.queries)
    systems = [np.clip(base + rng.normal(0.01 * i, 0.2, args.queries), 0, 1) for i in range(args.systems)]
    pairs = list(itertools.combinations(range(args.systems), 2))
    rows = []
    for name, fn in (("randomization", paired.randomization_test), ("bootstrap", paired.bootstrap_test)):
        t0 = time.perf_counter()
        ps = [fn(systems[i], systems[j], args.permutations, 0) for i, j in pairs]
        rows.append((f"rankwise {name}, {len(pairs)} pairs", time.perf_counter() - t0, min(ps)))
    probe = 300
    t0 = time.perf_counter()
    naive_randomization(systems[0], systems[1], probe, 0)
    per_pair = (time.perf_counter() - t0) / probe * args.permutations
    rows.append((f"Python loop per permutation, {len(pairs)} pairs (extrapolated)", per_pair * len(pairs), None))
    try:
        from scipy import stats

        t0 = time.perf_counter()
        stats.permutation_test((systems[0], systems[1]), lambda x, y, axis: np.mean(x - y, axis=axis),
                               permutation_type="samples", n_resamples=args.permutations, vectorized=True,
                               random_state=0)
        rows.append((f"scipy permutation_test, {len(pairs)} pairs (1 timed)", (time.perf_counter() - t0) * len(pairs),
                     None))
    except ImportError:
        pass
    print(f"\n{args.queries:,} queries x {args.systems} systems, {args.permutations:,} permutations per pair\n")
    print("| method | seconds | x rankwise randomization |")
    print("|---|---|---|")
    for name, secs, _ in rows:
        print(f"| {name} | {secs:.2f} | {secs / rows[0][1]:.1f} |")


if __name__ == "__main__":
    main()
