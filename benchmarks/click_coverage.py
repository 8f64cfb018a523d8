"""Coverage of click models' credible intervals (``model.intervals(0.95)``) over seeded logs.

Each log: 200 queries x 8 documents, 5 shown per session in a random order, ``--sessions``
sessions per query; every pair's attractiveness drawn from Beta(2, 5) and (DBN, SDBN) its
satisfaction from Beta(2, 3); PBM examination 1, 0.8, 0.6, 0.45, 0.3, DBN's gamma 0.9. Sessions
come from ``rankwise.clicks.simulate`` on a model given those true values; each model is then
fitted (defaults: empirical prior, converged EM) and the share of pairs whose true value lies
in its 95% interval is counted, over ``--logs`` logs.

Usage: python benchmarks/click_coverage.py [--logs 30] [--sessions 25]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from rankwise import clicks

QUERIES, DOCS, RANKS = 200, 8, 5
GAMMA = np.array([1.0, 0.8, 0.6, 0.45, 0.3])


def _base(sessions: int, rng: np.random.Generator) -> clicks.ClickLog:
    queries = np.repeat(np.arange(QUERIES), sessions)
    order = np.argsort(rng.random((len(queries), DOCS)), axis=1)[:, :RANKS]
    docs = [[f"q{q}d{d}" for d in row] for q, row in zip(queries, order, strict=True)]
    return clicks.ClickLog.from_arrays([f"q{q}" for q in queries], docs, np.zeros((len(queries), RANKS), int).tolist())


def one_log(kind: str, sessions: int, seed: int) -> dict[str, float]:
    """The share of pairs covered, per parameter, in one seeded log."""
    rng = np.random.default_rng(seed)
    base = _base(sessions, rng)
    alpha = rng.beta(2, 5, (QUERIES, DOCS))
    sigma = rng.beta(2, 3, (QUERIES, DOCS))
    truth = clicks.MODELS[kind](prior=(1, 2)).fit(base, iterations=1)
    pair = [(int(base.query_ids[q][1:]), int(base.doc_ids[d].split("d")[1]))
            for q, d in zip(truth.pair_query, truth.pair_doc, strict=True)]
    at = tuple(np.array(pair).T)
    truth.alpha = alpha[at]
    if kind == "pbm":
        truth.gamma = GAMMA.copy()
    else:
        truth.sigma = sigma[at]
        if kind == "dbn":
            truth.gamma = 0.9
    log = clicks.simulate(truth, base, seed=seed + 1)
    model = clicks.MODELS[kind]().fit(log)
    table = model.intervals(0.95)
    doc = table["doc"].str.split("d").str[1].astype(int).to_numpy()
    query = table["query"].str[1:].astype(int).to_numpy()
    out = {}
    for name, values in (("attractiveness", alpha), ("satisfaction", sigma)):
        if f"{name}_low" in table:
            true = values[query, doc]
            out[name] = float(((table[f"{name}_low"] <= true) & (true <= table[f"{name}_high"])).mean())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per query")
    args = parser.parse_args()
    print(f"{args.logs} logs of {QUERIES * args.sessions:,} sessions per model, 95% intervals\n")
    print("| model | parameter | coverage (mean over logs) | binomial band of 95% | seconds |")
    print("|---|---|---|---|---|")
    for kind in ("pbm", "sdbn", "dbn"):
        started = time.perf_counter()
        shares = [one_log(kind, args.sessions, 1000 * k + 7) for k in range(args.logs)]
        seconds = time.perf_counter() - started
        for name in shares[0]:
            covered = float(np.mean([s[name] for s in shares]))
            band = 3 * math.sqrt(0.95 * 0.05 / (args.logs * QUERIES * DOCS))
            print(f"| {kind} | {name} | {covered:.3f} | {0.95 - band:.3f}-{0.95 + band:.3f} | {seconds:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
