"""Impressions per second for each interleaving method and off-policy estimator.

Interleaving: two rankings of 10 documents (BM25 and SPLADE++ on a DL19 query when
``../shared`` is there, else two synthetic rankings), each impression interleaved and its
clicks (a random pattern) credited. Two ways: one impression at a time (``interleave`` then
``credit``), and vectorised (``distribution`` once, then ``draw`` and ``credits`` over all
impressions). Estimators: every off-policy estimator on a million logged rounds (value and a
200-resample bootstrap interval), and position-based IPS on a million impressions of 10
ranks. No peer runs here: mpkato/interleaving's PyPI entry is an empty placeholder and OBP
does not install on Python 3.11 or later.

Usage: python benchmarks/bench_interleaving.py [--impressions 100000] [--rounds 1000000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def rankings() -> list[list[str]]:
    from rankwise.clicks.simulate import sessions_from_run

    if (SHARED / "runs").exists():
        lists = []
        for name in ("BM25", "SPLADE_P_P_ENSEMBLE_DISTIL"):
            log = sessions_from_run(str(SHARED / "runs" / f"{name}.dl19.trec"), 10)
            lists.append([log.doc_ids[d] for d in log.docs[0]])
        return lists
    return [[f"d{i}" for i in range(10)], [f"d{i}" for i in (3, 0, 11, 1, 12, 5, 13, 2, 14, 4)]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--impressions", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1_000_000)
    args = parser.parse_args()
    from rankwise import counterfactual, interleaving
    from rankwise.counterfactual.estimators import ESTIMATORS

    lists = rankings()
    rng = np.random.default_rng(0)
    rows = []
    loop_n = min(args.impressions, 20_000)
    for method in ("balanced", "team-draft", "probabilistic", "optimized"):
        table = interleaving.distribution(lists, method, rng=0)   # optimized: the linear program, once
        start = time.perf_counter()
        clicks = rng.random((loop_n, 10)) < 0.2
        if method == "optimized":
            for row in clicks:
                table.shown(int(table.draw(1, rng)[0])).credit(np.flatnonzero(row))
        else:
            for row in clicks:
                interleaving.interleave(lists, method, rng=rng).credit(np.flatnonzero(row))
        loop = loop_n / (time.perf_counter() - start)
        start = time.perf_counter()
        table = interleaving.distribution(lists, method, rng=0)
        chosen = table.draw(args.impressions, rng)
        clicks = (rng.random((args.impressions, 10)) < 0.2).astype(np.int8)
        for index in np.unique(chosen):
            table.credits(int(index), clicks[chosen == index])
        fast = args.impressions / (time.perf_counter() - start)
        rows.append((method, f"{loop:,.0f}", f"{fast:,.0f}", len(table.lists)))
    print(f"interleaving, 10 + 10 documents, {args.impressions:,} impressions (one at a time: {loop_n:,})")
    print(f"{'method':<14} {'one at a time /s':>17} {'vectorised /s':>15} {'lists':>6}")
    for method, loop, fast, count in rows:
        print(f"{method:<14} {loop:>17} {fast:>15} {count:>6}")

    n = args.rounds
    reward = (rng.random(n) < 0.05).astype(float)
    behavior = rng.uniform(0.05, 1.0, n)
    target = rng.uniform(0.0, 1.0, n)
    q_logged, q_target = rng.uniform(0, 0.1, n), rng.uniform(0, 0.1, n)
    print(f"\noff-policy estimators, {n:,} rounds, value + 200-resample bootstrap")
    print(f"{'estimator':<14} {'seconds':>8} {'rounds /s':>14}")
    for name in ESTIMATORS:
        start = time.perf_counter()
        counterfactual.estimate(reward, behavior, target, name, q_logged, q_target, clip=10, resamples=200)
        seconds = time.perf_counter() - start
        print(f"{name:<14} {seconds:>8.2f} {n / seconds:>14,.0f}")
    sessions = n // 10
    start = time.perf_counter()
    counterfactual.pbm_ips(np.repeat(np.arange(sessions), 10), np.tile(np.arange(1, 11), sessions),
                   (rng.random(sessions * 10) < 0.1).astype(float), rng.integers(0, 11, sessions * 10),
                   1.0 / np.arange(1, 11), k=10, resamples=200)
    seconds = time.perf_counter() - start
    print(f"{'pbm-ips ctr@10':<14} {seconds:>8.2f} {sessions / seconds:>14,.0f}  (impressions of 10 ranks /s)")


if __name__ == "__main__":
    main()
