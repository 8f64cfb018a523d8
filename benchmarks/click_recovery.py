"""Parameter recovery of every EM click model at 300,000 sessions, from a simulator written
here from the models' definitions (not rankwise's own simulator), fitted by the default
stopping rule (converged: the log-likelihood per session changes by less than 1e-6 and no
probability is further than 1e-4 from EM's limit) and by the earlier one (the log-likelihood
alone, at most 50 passes); converged by plain EM and by SQUAREM (the default acceleration), under
the flat prior, and with every default (the placement prior, SQUAREM).

One query, 8 documents, 5 shown per session in a random order (so every parameter is
identifiable); attractiveness 0.9 .. 0.1 per document. Each model's own parameters: PBM
examination 1, 0.8, 0.6, 0.45, 0.3; UBM's by rank and previous click (``UBM_GAMMA``); DCM
lambda 0.6 .. 0.2 per rank; SDBN and DBN satisfaction per document (DBN gamma 0.9); CCM tau 0.8,
0.4, 0.2. Printed: the largest absolute error of each parameter family, for the exact EM fit
(by both stopping rules) and, for DCM and SDBN, the counting
approximation.

Usage: python benchmarks/click_recovery.py [--sessions 300000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rankwise import clicks

ALPHA = np.array([0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
SIGMA = np.array([0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.6, 0.3])
GAMMA = np.array([1.0, 0.8, 0.6, 0.45, 0.3])
LAMBDA = np.array([0.6, 0.5, 0.4, 0.3, 0.2])
TAU = np.array([0.8, 0.4, 0.2])
RANKS = 5
UBM_GAMMA = np.array([[1.0 if r == 0 else 0.9 * GAMMA[r] if p == 0 else GAMMA[r - p] if p <= r else 0.0
                       for p in range(RANKS)] for r in range(RANKS)])
"""UBM's examination [rank, previous click rank]: without a click above, 0.9 x PBM's; after one,
PBM's at the distance from it (the top rank always examined)."""


def simulate(kind: str, sessions: int, rng: np.random.Generator) -> clicks.ClickLog:
    order = np.argsort(rng.random((sessions, len(ALPHA))), axis=1)[:, :RANKS]
    alpha = ALPHA[order]
    click = np.zeros((sessions, RANKS), dtype=int)
    if kind == "pbm":
        click = (rng.random(alpha.shape) < alpha * GAMMA).astype(int)
    elif kind == "ubm":   # examination by rank and the rank of the previous click (0: none)
        previous = np.zeros(sessions, dtype=int)
        for r in range(RANKS):
            examined = rng.random(sessions) < UBM_GAMMA[r, previous]
            click[:, r] = examined & (rng.random(sessions) < alpha[:, r])
            previous = np.where(click[:, r] == 1, r + 1, previous)
    else:
        examining = np.ones(sessions, dtype=bool)
        for r in range(RANKS):
            click[:, r] = examining & (rng.random(sessions) < alpha[:, r])
            doc = order[:, r]
            after_click = {"dcm": np.full(sessions, LAMBDA[r]), "sdbn": 1 - SIGMA[doc], "dbn": 0.9 * (1 - SIGMA[doc]),
                           "ccm": np.where(rng.random(sessions) < alpha[:, r], TAU[2], TAU[1])}[kind]
            after_skip = {"dcm": 1.0, "sdbn": 1.0, "dbn": 0.9, "ccm": TAU[0]}[kind]
            go_on = rng.random(sessions) < np.where(click[:, r] == 1, after_click, after_skip)
            examining &= go_on
    return clicks.ClickLog.from_arrays(["q"] * sessions, [[f"d{d}" for d in row] for row in order], click.tolist())


def by_doc(model: clicks.ClickModel, values: np.ndarray) -> np.ndarray:
    return np.asarray(values)[np.argsort([int(model.doc_ids[d][1:]) for d in model.pair_doc])]


def errors(kind: str, model: clicks.ClickModel) -> dict[str, float]:
    out = {"alpha": float(np.abs(by_doc(model, model.alpha) - ALPHA).max())}
    if kind == "pbm":
        out["gamma"] = float(np.abs(model.gamma - GAMMA).max())
    if kind == "ubm":   # the cells a session can reach: previous click above the rank
        reachable = np.tril(np.ones((RANKS, RANKS), dtype=bool))
        out["gamma"] = float(np.abs(model.gamma_matrix - UBM_GAMMA)[reachable].max())
    if kind == "dcm":
        out["lambda_1..4"] = float(np.abs(model.lam[:4] - LAMBDA[:4]).max())
    if kind in ("sdbn", "dbn"):
        out["sigma"] = float(np.abs(by_doc(model, model.sigma) - SIGMA).max())
    if kind == "dbn":
        out["gamma"] = abs(model.gamma - 0.9)
    if kind == "ccm":
        out["tau"] = float(np.abs(model.tau - TAU).max())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.sessions:,} sessions per model\n")
    print("| model | fit | iterations | seconds | largest absolute error per parameter family |")
    print("|---|---|---|---|---|")
    for kind in ("pbm", "ubm", "dcm", "sdbn", "dbn", "ccm"):
        log = simulate(kind, args.sessions, rng)
        methods = [("em, the log-likelihood alone, 50 passes", {"prior_structure": "flat"},
                    {"iterations": 50, "parameter_tolerance": np.inf, "acceleration": "none"}),
                   ("em, plain, converged (flat prior)", {"prior_structure": "flat"}, {"acceleration": "none"}),
                   ("em, SQUAREM, converged (flat prior)", {"prior_structure": "flat"}, {}),
                   ("em, defaults (placement prior, SQUAREM)", {}, {})]
        if kind in ("dcm", "sdbn"):
            methods.append(("counting", {"method": "counting"}, {}))
        for label, settings, fitting in methods:
            started = time.perf_counter()
            model = clicks.MODELS[kind](**settings).fit(log, **fitting)
            seconds = time.perf_counter() - started
            shown = ", ".join(f"{name} {value:.4f}" for name, value in errors(kind, model).items())
            capped = " (the cap)" if model.warnings else ""
            print(f"| {kind} | {label} | {len(model.history) or 1}{capped} | {seconds:.1f} | {shown} |", flush=True)


if __name__ == "__main__":
    main()
