"""Fit click models on simulated logs: rankwise (NumPy EM and counting, streamed from a stored
log chunk by chunk) against CLAX (JAX, gradient descent, on CPU), each fit in a fresh process.

The logs: ``--queries`` queries (default 5,000) with 20 documents each; every session shows 10 of its query's
documents in a random order (so the parameters are identifiable), with clicks from a DBN
(attractiveness and satisfaction drawn per pair from Beta(1, 2), gamma 0.9). Every model is
fitted on the training log and scored on a held-out log of 200,000 sessions: perplexity and
conditional perplexity (CLAX's definitions, rankwise.streaming.clicks for both tools).

Time to quality: CLAX runs first; rankwise then records its parameters after every EM pass
and, once fitted, finds by bisection the first pass whose parameters score both CLAX's
held-out perplexity and conditional perplexity (that scoring is not timed). The last column is
the seconds from rankwise's process start to the end of that pass; CLAX's is its whole run
(it reaches its perplexity at its end). rankwise's fit is its defaults: the placement prior,
SQUAREM, EM to convergence.

CLAX runs when ``clax-models`` is installed (``pip install -e '.[clax]'``, or in its own
environment named by ``--clax-python``), on the sizes in
``--clax-sessions`` (default the first size only: an epoch over 10M sessions on 2 CPU cores
takes longer than the whole rankwise run), with Adam (``--clax-learning-rate``, batches of
``--clax-batch`` sessions) and early stopping on held-out loss (patience 2).

Usage: python benchmarks/bench_clicks.py [--sessions 1000000 10000000] [--models pbm ubm dbn ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from clax_models import BUILD  # noqa: E402

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.resolve()))
from _measure import load_average  # noqa: E402

DOCS_PER_QUERY = 20
RANKS = 10
TEST_SESSIONS = 200_000

RANKWISE = """
import json, math, sys, time
t0 = time.perf_counter()
import numpy as np
from rankwise import clicks
from rankwise.clicks.acceleration import set_parameter_vector
train, test, kind = clicks.open_log(sys.argv[1]), clicks.open_log(sys.argv[2]), sys.argv[3]
target_ppl, target_cond = float(sys.argv[4]), float(sys.argv[5])
model = clicks.MODELS[kind]()
passes = []   # each pass's end (seconds since the start of the process) and parameters
started = time.perf_counter() - t0
model.fit(train, progress=lambda entry: passes.append((started + entry["seconds"], model.parameter_vector())))
seconds = time.perf_counter() - t0
final = model.parameter_vector()
table = clicks.evaluate_model(model, test).table.set_index("rank")
ppl, cond = float(table.loc["all", "perplexity"]), float(table.loc["all", "conditional_perplexity"])


def reached(k):   # the parameters after pass k score the target on the held-out log (not timed)
    set_parameter_vector(model, passes[k][1])
    scored = clicks.evaluate_model(model, test).table.set_index("rank").loc["all"]
    return scored["perplexity"] <= target_ppl and scored["conditional_perplexity"] <= target_cond


to_target = math.nan
if math.isfinite(target_ppl) and passes and ppl <= target_ppl and cond <= target_cond:
    low, high = 0, len(passes) - 1   # the first pass at the target, by bisection (quality rises with the passes)
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if reached(middle) else (middle + 1, high)
    to_target = passes[low][0]
elif not passes and ppl <= target_ppl and cond <= target_cond:
    to_target = seconds
set_parameter_vector(model, final)
print(json.dumps({"seconds": seconds, "iterations": len(model.history) or 1, "ppl": ppl, "cond_ppl": cond,
                  "to_target": to_target,
                  "gamma": float(getattr(model, "gamma", float("nan"))) if kind == "dbn" else None}))
"""

CLAX = """
import itertools, json, sys, time
t0 = time.perf_counter()
import numpy as np, jax, jax.numpy as jnp, optax
from flax import nnx
from flax.training.early_stopping import EarlyStopping
import clax
from rankwise import clicks
from rankwise.streaming.clicks import ConditionalPerplexity, Perplexity
""" + BUILD + """
train, test, kind = clicks.open_log(sys.argv[1]), clicks.open_log(sys.argv[2]), sys.argv[3]
pairs, ranks = train.n_pairs, train.ranks

def batches(log, size=int(sys.argv[5])):
    for chunk in log.chunks(size):
        yield {"query_doc_ids": jnp.asarray(np.maximum(chunk.pairs, 0)),
               "clicks": jnp.asarray(chunk.clicks, dtype=jnp.float32), "mask": jnp.asarray(chunk.mask),
               "positions": jnp.asarray(np.broadcast_to(np.arange(1, ranks + 1), chunk.pairs.shape))}

model = clax_model(kind, pairs, ranks)
validation = list(itertools.islice(batches(test), 2))
trainer = clax.Trainer(optimizer=optax.adamw(float(sys.argv[6])), epochs=int(sys.argv[4]),
                       early_stopping=EarlyStopping(patience=2, min_delta=1e-5))
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    history = trainer.train(model, list(batches(train)), validation)
seconds = time.perf_counter() - t0
ppl, cond = Perplexity(positions=ranks), ConditionalPerplexity(positions=ranks)
for batch in batches(test):
    ppl.update(log_probs=np.maximum(np.asarray(model.predict_clicks(batch)), -1e30), clicks=np.asarray(batch["clicks"]),
               where=np.asarray(batch["mask"]))
    cond.update(conditional_log_probs=np.maximum(np.asarray(model.predict_conditional_clicks(batch)), -1e30),
                clicks=np.asarray(batch["clicks"]), where=np.asarray(batch["mask"]))
print(json.dumps({"seconds": seconds, "iterations": len(history), "ppl": ppl.compute(), "cond_ppl": cond.compute(),
                  "gamma": None}))
"""


def make_logs(folder: Path, sessions: int, queries: int, seed: int = 0) -> None:
    """A training log of ``sessions`` and a test log of 200,000, stored (written chunk by
    chunk, so memory stays bounded)."""
    import numpy as np

    from rankwise import clicks
    from rankwise.clicks.log import piece_of

    rng = np.random.default_rng(seed)
    n_pairs = queries * DOCS_PER_QUERY

    class Vocabulary:
        query_ids = [f"q{q:07d}" for q in range(queries)]
        doc_ids = [f"q{q:07d}-d{d:02d}" for q in range(queries) for d in range(DOCS_PER_QUERY)]
        pair_query = np.arange(n_pairs) // DOCS_PER_QUERY
        pair_doc = np.arange(n_pairs)

    truth = clicks.DBN()
    truth._remember_pairs(Vocabulary)
    truth.alpha, truth.sigma, truth.gamma = rng.beta(1, 2, n_pairs), rng.beta(1, 2, n_pairs), 0.9

    def pieces(total: int):
        for start in range(0, total, 500_000):
            size = min(500_000, total - start)
            query = rng.integers(0, queries, size)
            shown = np.argsort(rng.random((size, DOCS_PER_QUERY)), axis=1)[:, :RANKS]
            pairs = query[:, None] * DOCS_PER_QUERY + shown
            log = piece_of(Vocabulary, query, pairs, pairs, np.zeros(pairs.shape, np.int8), np.ones(pairs.shape, bool))
            yield clicks.simulate(truth, log, seed=int(rng.integers(2**31)))

    clicks.write_log(pieces(sessions), folder / "train", ranks=RANKS)
    clicks.write_log(pieces(TEST_SESSIONS), folder / "test", ranks=RANKS)


def run_child(code: str, *args: str, python: str = sys.executable) -> tuple[dict | None, float]:
    """Run in a child and read its peak resident memory and its CPU seconds (every thread)."""
    proc = subprocess.Popen([python, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        if "ModuleNotFoundError" in err:
            return None, 0.0
        raise RuntimeError(err[-3000:])
    result = json.loads(out.strip().splitlines()[-1])
    result["wall"] = time.perf_counter() - t0
    result["cpu"] = usage.ru_utime + usage.ru_stime
    return result, usage.ru_maxrss / 1024


def median_run(runs: list[tuple[dict, float]]) -> tuple[dict, float]:
    """One tool's rounds: the median of every number it reports, the largest peak."""
    merged = dict(runs[0][0])
    for key, value in runs[0][0].items():
        if isinstance(value, (int, float)):
            merged[key] = statistics.median(r[key] for r, _ in runs)
    merged["rounds"] = len(runs)
    return merged, max(peak for _, peak in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--models", nargs="+", default=["pbm", "ubm", "dbn", "ccm", "sdbn", "dcm", "cascade"])
    parser.add_argument("--clax-sessions", type=int, nargs="*", default=None)
    parser.add_argument("--clax-models", nargs="+", default=["pbm", "ubm", "dbn", "ccm"])
    parser.add_argument("--clax-epochs", type=int, default=20)
    parser.add_argument("--clax-batch", type=int, default=4096)
    parser.add_argument("--clax-learning-rate", type=float, default=0.01)
    parser.add_argument("--clax-python", default=sys.executable,
                        help="The Python of an environment with clax-models and rankwise (CLAX pins older JAX).")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per model (CLAX, then rankwise); medians")
    args = parser.parse_args()
    clax_sizes = set(args.sessions[:1] if args.clax_sessions is None else args.clax_sessions)
    print(f"medians of {args.repeat} rounds per model, CLAX then rankwise in each, each in a fresh process; "
          f"{load_average()} at the start\n")
    print("| sessions | model | tool | fit s | process CPU s | iterations / epochs | peak MB | held-out PPL | "
          "held-out cond-PPL | s to CLAX's PPL and cond-PPL |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sessions in args.sessions:
        folder = HERE / "_data" / f"clicks_{sessions}_{args.queries}"
        if not (folder / "test" / "log.json").exists():
            t0 = time.perf_counter()
            make_logs(folder, sessions, args.queries)
            print(f"simulated {sessions:,} sessions in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        for kind in args.models:
            clax_runs: list[tuple[dict, float]] = []
            our_runs: list[tuple[dict, float]] = []
            for _ in range(args.repeat):
                target = (float("inf"), float("inf"))   # CLAX's held-out perplexities, when CLAX ran
                if sessions in clax_sizes and kind in args.clax_models:
                    extra = (str(args.clax_epochs), str(args.clax_batch), str(args.clax_learning_rate))
                    result, peak = run_child(CLAX, str(folder / "train"), str(folder / "test"), kind, *extra,
                                             python=args.clax_python)
                    if result is None:
                        print("CLAX: not installed", file=sys.stderr)
                    else:
                        target = (result["ppl"], result["cond_ppl"])
                        clax_runs.append((result, peak))
                result, peak = run_child(RANKWISE, str(folder / "train"), str(folder / "test"), kind,
                                         *(str(t) for t in target))
                assert result is not None
                our_runs.append((result, peak))
            if clax_runs:
                result, peak = median_run(clax_runs)
                print_row(sessions, kind, "CLAX (CPU)", result, peak, f"{result['seconds']:.1f}")
            result, peak = median_run(our_runs)
            reached = [r["to_target"] for r, _ in our_runs if r["to_target"] == r["to_target"]]
            shown = f"{statistics.median(reached):.1f}" if reached else ("not reached" if clax_runs else "")
            print_row(sessions, kind, "rankwise", result, peak, shown)


def print_row(sessions: int, kind: str, tool: str, result: dict, peak: float, to_target: str) -> None:
    """One row of the table."""
    gamma = f" (gamma {result['gamma']:.4f})" if result.get("gamma") else ""
    print(f"| {sessions:,} | {kind}{gamma} | {tool} | {result['seconds']:.1f} | {result['cpu']:.1f} | "
          f"{result['iterations']:.0f} | {peak:,.0f} | {result['ppl']:.4f} | {result['cond_ppl']:.4f} | {to_target} |",
          flush=True)


if __name__ == "__main__":
    main()
