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
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import in_turn, load_average, measure_fork, print_table  # noqa: E402

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
    parser.add_argument("--repeat", type=int, default=3, help="rounds, every row once per round; medians")
    args = parser.parse_args()
    from rankwise import counterfactual, interleaving
    from rankwise.counterfactual.estimators import ESTIMATORS

    lists = rankings()
    loop_n = min(args.impressions, 20_000)
    work: dict[str, tuple[object, int]] = {}   # row -> (work, units it processes)

    def one_at_a_time(method: str):
        def run() -> None:
            rng = np.random.default_rng(0)
            clicks = rng.random((loop_n, 10)) < 0.2
            table = interleaving.distribution(lists, method, rng=0)
            for row in clicks:
                if method == "optimized":   # its linear program is solved once, above; each impression draws
                    table.shown(int(table.draw(1, rng)[0])).credit(np.flatnonzero(row))
                else:
                    interleaving.interleave(lists, method, rng=rng).credit(np.flatnonzero(row))
        return run

    def vectorised(method: str):
        def run() -> None:
            rng = np.random.default_rng(0)
            table = interleaving.distribution(lists, method, rng=0)
            chosen = table.draw(args.impressions, rng)
            clicks = (rng.random((args.impressions, 10)) < 0.2).astype(np.int8)
            for index in np.unique(chosen, return_index=True)[0]:
                table.credits(int(index), clicks[chosen == index])
        return run

    for method in ("balanced", "team-draft", "probabilistic", "optimized"):
        work[f"interleaving {method}, one impression at a time"] = (one_at_a_time(method), loop_n)
        work[f"interleaving {method}, vectorised"] = (vectorised(method), args.impressions)
    n = args.rounds
    rng = np.random.default_rng(0)
    reward = (rng.random(n) < 0.05).astype(float)
    behavior = rng.uniform(0.05, 1.0, n)
    target = rng.uniform(0.0, 1.0, n)
    q_logged, q_target = rng.uniform(0, 0.1, n), rng.uniform(0, 0.1, n)
    for name in ESTIMATORS:
        work[f"off-policy {name}, value + 200-resample bootstrap"] = (
            lambda name=name: counterfactual.estimate(reward, behavior, target, name, q_logged, q_target, clip=10,
                                                      resamples=200), n)
    sessions = n // 10
    impressions = (np.repeat(np.arange(sessions), 10), np.tile(np.arange(1, 11), sessions),
                   (rng.random(sessions * 10) < 0.1).astype(float), rng.integers(0, 11, sessions * 10))
    work["pbm-ips ctr@10 (impressions of 10 ranks)"] = (
        lambda: counterfactual.pbm_ips(*impressions, 1.0 / np.arange(1, 11), k=10, resamples=200), sessions)
    done = in_turn({name: (lambda run=run: measure_fork(lambda: run() and None)) for name, (run, _) in work.items()},
                   args.repeat)
    print(f"\nInterleaving: 10 + 10 documents, {args.impressions:,} impressions (one at a time: {loop_n:,}); "
          f"off-policy: {n:,} rounds. Medians of {args.repeat} rounds, each row in turn, in a fork of one process; "
          f"{load_average()}\n")
    print_table(done, extra={"units": lambda s: f"{work[s.name][1]:,}",
                             "units / s": lambda s: f"{work[s.name][1] / s.median('wall'):,.0f}"})


if __name__ == "__main__":
    main()
