"""Every click model on CLARA 2 (Naver's beta click log, 31,564 result pages), rankwise against
CLAX in one run: held-out log-likelihood per shown cell, perplexity and conditional
perplexity; nDCG@10 and MRR (label >= 3 relevant) of each model's relevance ranking against
the editorial query-url labels (0-5); fit seconds.

Two split schemes, both seeded (seed 0), a quarter held out:
- ``session``: each result page held out with probability 1/4;
- ``query``: each query's pages all held out or all kept, so held-out pairs are unseen.

rankwise fits each model with its defaults (the empirical-Bayes prior; EM to 200 iterations
or a 1e-7 change per session), with CLAX's protocol (EM on 90% of the training pages,
stopped when the other 10% have not scored better for 3 iterations, the best iteration
kept), and with the fixed prior (1, 2) of earlier versions. The nDCG of the lower-bound
ranking (each pair's lower 95% credible bound) is shown for the default fit. Beyond the
defaults: PBM, UBM and DBN with hashed document ids as features (1,024 buckets; a url's
attractiveness carries across queries), PBM, UBM, DBN and CCM with the placement features
(``clicks.placement_features``: each pair's mean log2(rank + 1) over the whole log, where the
engine placed it; no click is read), and a mixture of UBM and DCM.

CLAX (``clax-models``, JAX on CPU) runs in a child process with the Python given by
``--clax-python`` (CLAX pins older JAX than rankwise's test extra, so it usually lives in its
own environment with rankwise installed beside it: ``python -m venv clax-env &&
clax-env/bin/pip install 'clax-models>=0.1.1' 'jax<0.8' 'flax<0.12' -e .``); it trains with
AdamW (learning rate ``--clax-learning-rate``, batches of ``--clax-batch`` pages) for at most
``--clax-epochs`` epochs with early stopping (patience 2) on a seeded tenth of the training
pages, and is scored with the same rankwise metric code.

The label file numbers queries differently from the log (the urls shown for log query 2031
are labelled under 2038); each log query's shown urls are labelled under exactly one label
query, one to one, and the script relabels the judgments by that match.

Usage: python benchmarks/clara2_clicks.py [--data CLARA2_FOLDER] [--clax-python PATH] [--splits session query]
"""

from __future__ import annotations

import argparse
import json
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
PLACED = ["pbm", "ubm", "dbn", "ccm"]
"""Also fitted with the placement features (each pair's mean log2(rank + 1) in the whole log: where
the engine put it, known for every page shown; no click is read)."""
MIXTURES = ["mixture(components=ubm+dcm)"]
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
folder, split, kinds, epochs, batch_size, rate, out = sys.argv[1:8]
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
    def __init__(self, model, part):
        self.model, self.to_whole = model, part.pair_ids_in(log)

    def conditional_log_probs(self, chunk):
        return np.asarray(self.model.predict_conditional_clicks(batch_of(chunk, self.to_whole)), dtype=np.float64)

    def log_probs(self, chunk):
        return np.asarray(self.model.predict_clicks(batch_of(chunk, self.to_whole)), dtype=np.float64)


results = {}
for kind in kinds.split(","):
    model = clax_model(kind, pairs, ranks)
    trainer = clax.Trainer(optimizer=optax.adamw(float(rate)), epochs=int(epochs),
                           early_stopping=EarlyStopping(patience=2, min_delta=1e-6))
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        history = trainer.train(model, batches(fit_part, int(batch_size)), batches(validation, 4096))
    seconds = time.perf_counter() - started
    table = clicks.evaluate_model(Scored(model, test), test).table.set_index("rank")
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


def run_clax(python: str, folder: Path, split: str, args: argparse.Namespace) -> tuple[dict, Path] | None:
    out = Path(tempfile.mkdtemp(prefix="clax-"))
    proc = subprocess.run([python, "-c", CLAX, str(folder), split, ",".join(CLAX_MODELS), str(args.clax_epochs),
                           str(args.clax_batch), str(args.clax_learning_rate), str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        reason = "not installed" if "No module named 'clax'" in proc.stderr else proc.stderr.strip()[-400:]
        print(f"CLAX left out ({python}): {reason}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1]), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--splits", nargs="+", default=["session", "query"], choices=["session", "query", "time"])
    parser.add_argument("--clax-python", default=sys.executable)
    parser.add_argument("--clax-epochs", type=int, default=100)
    parser.add_argument("--clax-batch", type=int, default=256)
    parser.add_argument("--clax-learning-rate", type=float, default=0.003)
    args = parser.parse_args()

    log = clicks.read_yandex(args.data / "CLARA2SearchLog_beta")
    labels = pd.read_csv(args.data / "CLARA2QueryUrlRelevance_beta", sep="\t", dtype=str)
    qrels = in_log_query_ids(pd.DataFrame({"query": labels["query"], "doc": labels["url"],
                                           "label": labels["relevance"].astype(int)}), log)
    print(f"{log.sessions:,} result pages, {log.n_pairs:,} (query, url) pairs, {len(qrels):,} labels\n")
    for split in args.splits:
        train, test = log.split(test_share=0.25, seed=0, by=split)
        print(f"## split by {split}: {train.sessions:,} pages to fit, {test.sessions:,} held out\n")
        rows, runs = [], {"all ties (no information)": pair_run(log, np.zeros(log.n_pairs), "ties")}
        fit_part, validation = train.split(test_share=0.1, seed=1)
        for kind in MODELS:
            for label, prior, stop in (("rankwise", "empirical", False), ("rankwise, validation stop", "empirical",
                                                                          True),
                                       ("rankwise, prior (1, 2)", (1.0, 2.0), False)):
                model = clicks.MODELS[kind](prior=prior)
                if stop and not model.iterative:
                    continue
                started = time.perf_counter()
                if stop:   # CLAX's protocol: fit on 90% of the training pages, stop on the other 10%
                    model.fit(fit_part, iterations=300, tolerance=0, validation=validation, patience=3)
                else:
                    model.fit(train, iterations=200, tolerance=1e-7)
                seconds = time.perf_counter() - started
                table = clicks.evaluate_model(model, test).table.set_index("rank")
                name = f"{kind} / {label}"
                runs[name] = model.relevance(name, log)
                if prior == "empirical" and not stop and model.posterior:
                    runs[f"{name} (lower)"] = model.relevance(f"{name} (lower)", log, bound="lower")
                rows.append((kind, label, table.loc["all", "log_likelihood"], table.loc["all", "perplexity"],
                             table.loc["all", "conditional_perplexity"], seconds,
                             model.best_iteration or len(model.history) or 1, name))
        placement = clicks.placement_features(log)
        for kind, extra in [(k, "hashed") for k in HASHED] + [(k, "placement") for k in PLACED] + \
                [(k, "") for k in MIXTURES]:
            member, values = clicks.MODELS.parse(kind)
            model = member.build(values)
            if extra == "hashed":
                model.use_features(hashed=("doc",), buckets=1024)
            elif extra == "placement":
                model.use_features(placement)
            label = {"hashed": "rankwise, hashed doc ids", "placement": "rankwise, placement features"}.get(extra,
                                                                                                          "rankwise")
            started = time.perf_counter()
            model.fit(train, iterations=200, tolerance=1e-7)
            seconds = time.perf_counter() - started
            table = clicks.evaluate_model(model, test).table.set_index("rank")
            name = f"{kind} / {label}"
            runs[name] = model.relevance(name, log)
            if extra == "placement":
                runs[f"{name} (lower)"] = model.relevance(f"{name} (lower)", log, bound="lower")
            rows.append((member.name, label, table.loc["all", "log_likelihood"], table.loc["all", "perplexity"],
                         table.loc["all", "conditional_perplexity"], seconds, len(model.history) or 1, name))
        clax_results = run_clax(args.clax_python, args.data, split, args)
        if clax_results is not None:
            results, folder = clax_results
            for kind, result in results.items():
                name = f"{kind} / CLAX"
                runs[name] = pair_run(log, np.load(folder / f"{kind}.npy"), name)
                rows.append((kind, "CLAX (CPU)", result["ll"], result["ppl"], result["cond_ppl"], result["seconds"],
                             result["epochs"], name))
        # a few first pages list one url twice: its first (highest) position counts
        ndcg = rankwise.evaluate(qrels, list(runs.values()), ["ndcg_cut_10"], duplicates="first").summary["ndcg_cut_10"]
        mrr = rankwise.evaluate(qrels, list(runs.values()), ["recip_rank"], duplicates="first",
                                rel_level=3).summary["recip_rank"]
        print("| model | tool | held-out LL per cell | PPL | cond-PPL | nDCG@10 | nDCG@10, lower bound | MRR | fit s "
              "| iterations / epochs |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        name = "all ties (no information)"
        print(f"| {name} | | | | | {ndcg[runs[name].name]:.4f} | | {mrr[runs[name].name]:.4f} | | |")
        order = {kind: i for i, kind in enumerate([*MODELS, "mixture"])}
        for kind, label, ll, ppl, cond, seconds, steps, run_name in sorted(rows, key=lambda r: order[r[0]]):
            lower = f"{ndcg[run_name + ' (lower)']:.4f}" if run_name + " (lower)" in ndcg else ""
            print(f"| {kind} | {label} | {ll:.5f} | {ppl:.4f} | {cond:.4f} | {ndcg[run_name]:.4f} | {lower} | "
                  f"{mrr[run_name]:.4f} | {seconds:.1f} | {steps} |")
        print()


if __name__ == "__main__":
    main()
