"""Every click model on CLARA 2 (Naver's beta click log, 31,564 result pages), rankwise against
CLAX in one run: held-out log-likelihood per shown cell, perplexity and conditional
perplexity; nDCG@10 and MRR (label >= 3 relevant) of each model's relevance ranking against
the editorial query-url labels (0-5); fit seconds.

Two split schemes, both seeded (seed 0), a quarter held out:
- ``session``: each result page held out with probability 1/4;
- ``query``: each query's pages all held out or all kept, so held-out pairs are unseen.

rankwise fits each model with its defaults (the empirical prior structured by placement, EM
accelerated by SQUAREM until it converges), with CLAX's protocol (EM on 90% of the training
pages, stopped when the other 10% have not scored better for 3 iterations or when converged,
the best iteration kept), with the flat empirical prior of the previous version, and with the fixed prior (1, 2)
of earlier ones. For the default fit the table also ranks by attractiveness alone, by
satisfaction alone (DBN, SDBN) and by each pair's lower 95% credible bound. Beyond the
defaults: PBM, UBM and DBN with hashed document ids as features (1,024 buckets; a url's
attractiveness carries across queries), and a mixture of UBM and DCM. A second table per split
checks the goal for each model CLAX has: relevance nDCG@10 at least the best of attractiveness
and satisfaction alone and at least CLAX's, the held-out log-likelihood at least CLAX's; beside
it, relevance against the better single rule query by query (``rankwise.compare``: wins, ties
and losses of relevance, and the paired t-test's p-value), which tells a shortfall of chance
from a real one.

CLAX (``clax-models``, JAX on CPU) runs in a child process with the Python given by
``--clax-python`` (CLAX pins older JAX than rankwise's test extra, so it usually lives in its
own environment with rankwise installed beside it: ``python -m venv clax-env &&
clax-env/bin/pip install 'clax-models>=0.1.1' 'jax<0.8' 'flax<0.12' -e .``). It trains with
AdamW (learning rate ``--clax-learning-rate``, batches of ``--clax-batch`` pages), every
(query, url) pair named by its id in the whole log, with early stopping on a seeded tenth of the
training pages, under two settings (``CLAX_SETTINGS``): its own defaults (``Trainer``: 50
epochs, ``EarlyStopping()``: patience 0) and the settings of earlier docs (100 epochs,
patience 2), and is scored with the same rankwise metric code.

The label file numbers queries differently from the log (the urls shown for log query 2031
are labelled under 2038); each log query's shown urls are labelled under exactly one label
query, one to one, and the script relabels the judgments by that match.

Usage: python benchmarks/clara2_clicks.py [--data CLARA2_FOLDER] [--clax-python PATH] [--splits session query]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import rankwise
from rankwise import clicks

sys.path.insert(0, str(Path(__file__).parent))
from clax_models import BUILD  # noqa: E402

MODELS = ["global-ctr", "rank-ctr", "document-ctr", "pbm", "ubm", "cascade", "dcm", "sdbn", "dbn", "ccm"]
HASHED = ["pbm", "ubm", "dbn"]
"""Also fitted with hashed document ids as features."""
MIXTURES = ["mixture(components=ubm+dcm)"]
SATISFACTION_BY_PLACEMENT = "rankwise, satisfaction by placement too"
"""DBN and SDBN also fitted with each pair's satisfaction (partial pooling) under a prior
structured by placement, as attractiveness's is (a structure this script declares: rankwise's
``placement`` keeps satisfaction flat)."""
SATISFACTION_PER_PAIR = "rankwise, satisfaction per pair"
"""DBN and SDBN also fitted with each pair's own satisfaction (``satisfaction_pooling=partial``,
the default before the held-out choice)."""
SATISFACTION_ROWS = {
    SATISFACTION_BY_PLACEMENT: {"prior_structure": "placement-both", "satisfaction_pooling": "partial"},
    SATISFACTION_PER_PAIR: {"satisfaction_pooling": "partial"}}
CLAX_MODELS = ["pbm", "ubm", "cascade", "dcm", "sdbn", "dbn", "ccm"]
DEFAULT_DATA = Path(__file__).parents[2] / "shared/data/clicks/clara2"

CLAX = """
import contextlib, io, json, sys, time
import numpy as np, jax.numpy as jnp, optax
from flax import nnx
from flax.training.early_stopping import EarlyStopping
import clax
from rankwise import clicks
""" + BUILD + """
folder, split, kinds, epochs, batch_size, rate, patience, min_delta, out = sys.argv[1:10]
log = clicks.read_yandex(folder + "/CLARA2SearchLog_beta")
train, test = log.split(test_share=0.25, seed=0, by=split)
fit_part, validation = train.split(test_share=0.1, seed=1)
pairs, ranks = log.n_pairs, log.ranks


def batch_of(chunk, to_whole):
    # CLAX identifies a (query, document) pair by its id: every part speaks the whole log's ids
    # (a part of a split numbers its pairs afresh; ClickLog.pair_ids_in maps them back)
    return {"query_doc_ids": jnp.asarray(np.where(chunk.mask, to_whole[chunk.pairs], 0)),
            "clicks": jnp.asarray(chunk.clicks, dtype=jnp.float32), "mask": jnp.asarray(chunk.mask),
            "positions": jnp.asarray(np.broadcast_to(np.arange(1, ranks + 1), chunk.pairs.shape))}


def batches(part, size):
    to_whole = part.pair_ids_in(log)
    return [batch_of(chunk, to_whole) for chunk in part.chunks(size)]


class Scored:   # CLAX's predictions in the shape rankwise's evaluate_model reads
    def __init__(self, model, part, name):
        self.model, self.to_whole, self.name = model, part.pair_ids_in(log), name

    def conditional_log_probs(self, chunk):
        return np.asarray(self.model.predict_conditional_clicks(batch_of(chunk, self.to_whole)), dtype=np.float64)

    def log_probs(self, chunk):
        return np.asarray(self.model.predict_clicks(batch_of(chunk, self.to_whole)), dtype=np.float64)


results = {}
for kind in kinds.split(","):
    model = clax_model(kind, pairs, ranks)
    trainer = clax.Trainer(optimizer=optax.adamw(float(rate)), epochs=int(epochs),
                           early_stopping=EarlyStopping(patience=int(patience), min_delta=float(min_delta)))
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        history = trainer.train(model, batches(fit_part, int(batch_size)), batches(validation, 4096))
    seconds = time.perf_counter() - started
    table = clicks.evaluate_model(Scored(model, test, 'clax-' + kind), test).table.set_index("rank")
    every = {"query_doc_ids": jnp.arange(pairs)[:, None], "mask": jnp.ones((pairs, 1), bool),
             "positions": jnp.ones((pairs, 1), jnp.int32), "clicks": jnp.zeros((pairs, 1))}
    relevance = np.asarray(model.predict_relevance(every), dtype=np.float64).reshape(pairs, -1)[:, 0]
    np.save(f"{out}/{kind}.npy", relevance)
    results[kind] = {"seconds": seconds, "epochs": len(history), "ll": float(table.loc["all", "log_likelihood"]),
                     "ppl": float(table.loc["all", "perplexity"]),
                     "cond_ppl": float(table.loc["all", "conditional_perplexity"])}
print(json.dumps(results))
"""


def in_log_query_ids(qrels: pd.DataFrame, log: clicks.ClickLog) -> pd.DataFrame:
    """The judgments relabelled with the log's query ids (see the module docstring)."""
    shown = pd.DataFrame({"query": np.asarray(log.query_ids)[log.pair_query],
                          "doc": np.asarray(log.doc_ids)[log.pair_doc]})
    overlap = shown.merge(qrels.rename(columns={"query": "label_query"}), on="doc")
    best = overlap.groupby(["query", "label_query"]).size().rename("n").reset_index()
    best = best.sort_values("n", ascending=False, kind="stable").drop_duplicates("query")
    assert best["label_query"].is_unique, "the query mapping is not one to one"
    mapping = dict(zip(best["label_query"], best["query"], strict=True))
    kept = qrels[qrels["query"].isin(mapping)]
    return kept.assign(query=kept["query"].map(mapping))


def pair_run(log: clicks.ClickLog, scores: np.ndarray, name: str) -> rankwise.Run:
    """A run scoring every (query, url) pair of the log."""
    import pyarrow as pa

    queries = np.asarray(log.query_ids, dtype=object)[log.pair_query]
    docs = np.asarray(log.doc_ids, dtype=object)[log.pair_doc]
    return rankwise.Run(pa.array(queries, pa.string()), pa.array(docs, pa.string()), np.asarray(scores, float),
                        name=name, source=f"<{name}>")


CLAX_SETTINGS = {
    "defaults": {"epochs": 50, "patience": 0, "min_delta": 1e-5},
    "docs": {"epochs": 100, "patience": 2, "min_delta": 1e-6},
}
"""CLAX's training settings: its own defaults (``Trainer``: 50 epochs, ``EarlyStopping()``:
patience 0, min_delta 1e-5; the README's AdamW at 0.003) and the settings these docs used
(100 epochs, patience 2, min_delta 1e-6); both with ``--clax-learning-rate`` and
``--clax-batch``."""


def run_clax(python: str, folder: Path, split: str, args: argparse.Namespace,
             settings: str = "docs") -> tuple[dict, Path] | None:
    out = Path(tempfile.mkdtemp(prefix="clax-"))
    chosen = CLAX_SETTINGS[settings]
    proc = subprocess.run([python, "-c", CLAX, str(folder), split, ",".join(CLAX_MODELS), str(chosen["epochs"]),
                           str(args.clax_batch), str(args.clax_learning_rate), str(chosen["patience"]),
                           str(chosen["min_delta"]), str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        reason = "not installed" if "No module named 'clax'" in proc.stderr else proc.stderr.strip()[-400:]
        print(f"CLAX left out ({python}): {reason}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1]), out


VARIANTS = (("rankwise", {}, False), ("rankwise, validation stop", {}, True),
            ("rankwise, flat prior", {"prior_structure": "flat"}, False),
            ("rankwise, prior (1, 2)", {"prior": (1.0, 2.0)}, False))
"""rankwise's rows per model: its defaults (the placement prior, SQUAREM), CLAX's protocol, the
flat empirical prior of the previous version, and the fixed prior of earlier ones."""


def fit_rankwise(kind: str, settings: dict, stop: bool, train, fit_part, validation):
    """A fitted model and its fit seconds (None for a counting model under the validation stop,
    or settings the model does not take)."""
    member, values = clicks.MODELS.parse(kind)
    if not set(settings) <= {p.name for p in member.params}:   # global-ctr has no prior structure
        return None, 0.0
    model = member.build({**values, **settings})
    if stop and not model.iterative:
        return None, 0.0
    started = time.perf_counter()
    if stop:   # CLAX's protocol: fit on 90% of the training pages, stop on the other 10%
        model.fit(fit_part, validation=validation, patience=3)
    else:
        model.fit(train)
    return model, time.perf_counter() - started


def rankwise_rows(log, train, test, fit_part, validation, runs: dict) -> list[tuple]:
    """Every rankwise row of one split; each model's rankings go into ``runs``: by relevance,
    by attractiveness and by satisfaction alone, and by the lower credible bound."""
    rows = []
    kinds = [(kind, label, settings, stop) for kind in MODELS for label, settings, stop in VARIANTS] + \
        [(kind, "rankwise, hashed doc ids", {}, False) for kind in HASHED] + \
        [(kind, "rankwise", {}, False) for kind in MIXTURES] + \
        [(kind, label, settings, False) for label, settings in SATISFACTION_ROWS.items() for kind in ("sdbn", "dbn")]
    for kind, label, settings, stop in kinds:
        if label.endswith("hashed doc ids"):
            model = clicks.MODELS[kind]().use_features(hashed=("doc",), buckets=1024)
            started = time.perf_counter()
            model.fit(train)
            seconds = time.perf_counter() - started
        else:
            model, seconds = fit_rankwise(kind, settings, stop, train, fit_part, validation)
        if model is None:
            continue
        table = clicks.evaluate_model(model, test).table.set_index("rank")
        name = f"{model.name} / {label}"
        runs[name] = model.relevance(name, log)
        if getattr(model, "selection", None) and label == "rankwise":
            choice = model.selection
            print(f"{model.name}: satisfaction pooled {choice['pooling']} by held-out likelihood (gain of each pair's "
                  f"own over one rate {choice['gain']:.2e} per session, standard error {choice['standard_error']:.2e}, "
                  f"{choice['sessions']:,} held-out pages)\n")
        if label in ("rankwise", *SATISFACTION_ROWS) and model.name != "mixture":
            for rule in ("attractiveness", "satisfaction"):
                if rule == "attractiveness" or "sigma" in model.pair_fields.values():
                    runs[f"{name} ({rule})"] = model.relevance(f"{name} ({rule})", log, by=rule)
            if model.posterior and label == "rankwise":
                runs[f"{name} (lower)"] = model.relevance(f"{name} (lower)", log, bound="lower")
        rows.append((model.name, label, table.loc["all", "log_likelihood"], table.loc["all", "perplexity"],
                     table.loc["all", "conditional_perplexity"], seconds,
                     model.best_iteration or len(model.history) or 1, name))
    return rows


def clax_rows(log, split: str, args: argparse.Namespace, runs: dict) -> list[tuple]:
    """CLAX's rows of one split, with its own defaults and with the docs' settings."""
    rows = []
    for settings in CLAX_SETTINGS:
        result = run_clax(args.clax_python, args.data, split, args, settings)
        if result is None:
            return rows
        results, folder = result
        for kind, values in results.items():
            name = f"{kind} / CLAX, {settings}"
            runs[name] = pair_run(log, np.load(folder / f"{kind}.npy"), name)
            rows.append((kind, f"CLAX, {settings} (CPU)", values["ll"], values["ppl"], values["cond_ppl"],
                         values["seconds"], values["epochs"], name))
        shutil.rmtree(folder, ignore_errors=True)   # CLAX's scores are in the runs now
    return rows


def print_split(rows: list[tuple], runs: dict, qrels: pd.DataFrame) -> None:
    """The split's table, then each model's goal check (relevance against attractiveness alone,
    satisfaction alone and CLAX; held-out log-likelihood against CLAX's)."""
    # a few first pages list one url twice: its first (highest) position counts
    ndcg = rankwise.evaluate(qrels, list(runs.values()), ["ndcg_cut_10"], duplicates="first").summary["ndcg_cut_10"]
    mrr = rankwise.evaluate(qrels, list(runs.values()), ["recip_rank"], duplicates="first",
                            rel_level=3).summary["recip_rank"]

    def cell(name: str) -> str:
        return f"{ndcg[name]:.4f}" if name in ndcg else ""

    print("| model | tool | held-out LL per cell | PPL | cond-PPL | nDCG@10 | nDCG@10 by attractiveness "
          "| nDCG@10 by satisfaction | nDCG@10, lower bound | MRR | fit s | iterations / epochs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    tied = "all ties (no information)"
    print(f"| {tied} | | | | | {ndcg[tied]:.4f} | | | | {mrr[tied]:.4f} | | |")
    order = {kind: i for i, kind in enumerate([*MODELS, "mixture"])}
    for kind, label, ll, ppl, cond, seconds, steps, name in sorted(rows, key=lambda r: order[r[0]]):
        print(f"| {kind} | {label} | {ll:.5f} | {ppl:.4f} | {cond:.4f} | {ndcg[name]:.4f} | "
              f"{cell(name + ' (attractiveness)')} | {cell(name + ' (satisfaction)')} | {cell(name + ' (lower)')} | "
              f"{mrr[name]:.4f} | {seconds:.1f} | {steps} |")
    print("\n| model | relevance nDCG@10 | best of attractiveness, satisfaction | relevance against it: wins / ties / "
          "losses (queries) | p (paired t) | best CLAX nDCG@10 | held-out LL | best CLAX LL | goal met |")
    print("|---|---|---|---|---|---|---|---|---|")
    lls = {name: ll for _, _, ll, *_, name in rows}
    for kind in CLAX_MODELS:
        ours = f"{kind} / rankwise"
        parts = {n: ndcg[n] for n in (ours + " (attractiveness)", ours + " (satisfaction)") if n in ndcg}
        single = max(parts, key=lambda n: parts[n])
        clax = [n for n in ndcg.index if n.startswith(f"{kind} / CLAX")]
        best_clax = max((ndcg[n] for n in clax), default=float("nan"))
        best_clax_ll = max((lls[n] for n in clax), default=float("nan"))
        # per query: does relevance rank worse than the better single rule, beyond chance?
        paired = rankwise.compare(qrels, [runs[single], runs[ours]], "ndcg_cut_10", baseline=single,
                                  duplicates="first").table.iloc[0]
        met = ndcg[ours] >= parts[single] and not ndcg[ours] < best_clax and not lls[ours] < best_clax_ll
        below_by_chance = not met and not paired["significant"] and not ndcg[ours] < best_clax and \
            not lls[ours] < best_clax_ll
        verdict = "yes" if met else ("no, by chance (not significant)" if below_by_chance else "no")
        print(f"| {kind} | {ndcg[ours]:.5f} | {parts[single]:.5f} | {int(paired['wins'])} / {int(paired['ties'])} / "
              f"{int(paired['losses'])} | {paired['p_value']:.3f} | {best_clax:.5f} | {lls[ours]:.5f} | "
              f"{best_clax_ll:.5f} | {verdict} |")
    print()


def declare_satisfaction_by_placement() -> None:
    """The prior structure ``placement-both``: rankwise's ``placement`` over attractiveness and
    satisfaction."""
    import dataclasses

    from rankwise.clicks.structure import PRIOR_STRUCTURES

    if "placement-both" not in PRIOR_STRUCTURES:
        PRIOR_STRUCTURES.register(dataclasses.replace(PRIOR_STRUCTURES["placement"], name="placement-both",
                                                      fields=("alpha", "sigma")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--splits", nargs="+", default=["session", "query"], choices=["session", "query", "time"])
    parser.add_argument("--clax-python", default=sys.executable)
    parser.add_argument("--clax-batch", type=int, default=256)
    parser.add_argument("--clax-learning-rate", type=float, default=0.003)
    args = parser.parse_args()
    declare_satisfaction_by_placement()

    log = clicks.read_yandex(args.data / "CLARA2SearchLog_beta")
    labels = pd.read_csv(args.data / "CLARA2QueryUrlRelevance_beta", sep="\t", dtype=str)
    qrels = in_log_query_ids(pd.DataFrame({"query": labels["query"], "doc": labels["url"],
                                           "label": labels["relevance"].astype(int)}), log)
    print(f"{log.sessions:,} result pages, {log.n_pairs:,} (query, url) pairs, {len(qrels):,} labels\n")
    for split in args.splits:
        train, test = log.split(test_share=0.25, seed=0, by=split)
        print(f"## split by {split}: {train.sessions:,} pages to fit, {test.sessions:,} held out\n")
        tied = "all ties (no information)"
        runs = {tied: pair_run(log, np.zeros(log.n_pairs), tied)}
        fit_part, validation = train.split(test_share=0.1, seed=1)
        rows = rankwise_rows(log, train, test, fit_part, validation, runs) + clax_rows(log, split, args, runs)
        print_split(rows, runs, qrels)


if __name__ == "__main__":
    main()
