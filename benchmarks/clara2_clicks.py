"""Every click model on CLARA 2 (Naver's beta click log, 31,564 result pages): perplexity and
conditional perplexity per rank on a held-out quarter of the pages, and nDCG@10 of each
model's relevance ranking against the editorial query-url labels (0-5), next to the ranking
the search engine showed (each query's first result page).

Usage: python benchmarks/clara2_clicks.py [CLARA2_FOLDER]   (default ../shared/data/clicks/clara2)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

import rankwise
from rankwise import clicks

MODELS = ["global-ctr", "rank-ctr", "document-ctr", "pbm", "ubm", "cascade", "dcm", "sdbn", "dbn", "ccm"]


def _in_log_query_ids(qrels: pd.DataFrame, log: clicks.ClickLog) -> pd.DataFrame:
    """The label file numbers queries differently from the log (the urls shown for log query
    2031 are labelled under 2038). Each log query's shown urls are labelled under exactly one
    label-file query, one to one; relabel the judgments with the log's query ids by that."""
    shown = pd.DataFrame({"query": np.asarray(log.query_ids)[log.pair_query],
                          "doc": np.asarray(log.doc_ids)[log.pair_doc]})
    overlap = shown.merge(qrels.rename(columns={"query": "label_query"}), on="doc")
    best = overlap.groupby(["query", "label_query"]).size().rename("n").reset_index()
    best = best.sort_values("n", ascending=False, kind="stable").drop_duplicates("query")
    assert best["label_query"].is_unique, "the query mapping is not one to one"
    covered = best["n"].sum() / len(shown)
    print(f"label-file queries matched to log queries by shown urls: {len(best):,} one to one, "
          f"{covered:.2%} of shown (query, url) pairs labelled")
    mapping = dict(zip(best["label_query"], best["query"], strict=True))
    kept = qrels[qrels["query"].isin(mapping)]
    return kept.assign(query=kept["query"].map(mapping))


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[2] / "shared/data/clicks/clara2"
    log = clicks.read_yandex(folder / "CLARA2SearchLog_beta")
    labels = pd.read_csv(folder / "CLARA2QueryUrlRelevance_beta", sep="\t", dtype=str)
    qrels = pd.DataFrame({"query": labels["query"], "doc": labels["url"], "label": labels["relevance"].astype(int)})
    qrels = _in_log_query_ids(qrels, log)
    train, test = log.split(test_share=0.25, seed=0)
    print(f"{log.sessions:,} result pages ({train.sessions:,} to fit, {test.sessions:,} held out), "
          f"{log.n_pairs:,} (query, url) pairs, {len(qrels):,} labels; {'; '.join(log.notes)}\n")
    first = ~pd.Series(log.query).duplicated().to_numpy()
    shown = pd.DataFrame({"query": np.asarray(log.query_ids)[np.repeat(log.query[first], log.ranks)],
                          "doc": np.asarray(log.doc_ids)[np.maximum(log.docs[first].ravel(), 0)],
                          "score": -np.tile(np.arange(1.0, log.ranks + 1), int(first.sum()))})
    runs = {"engine's ranking": rankwise.Run.from_dataframe(shown[log.mask[first].ravel()], name="engine")}
    rows, per_rank = [], {}
    for kind in MODELS:
        model = clicks.MODELS[kind]().fit(train, iterations=200, tolerance=1e-7)
        table = clicks.evaluate_model(model, test).set_index("rank")
        per_rank[kind] = table["conditional_perplexity"]
        runs[kind] = model.relevance(kind, log)
        rows.append([kind, table.loc["all", "log_likelihood"], table.loc["all", "perplexity"],
                     table.loc["all", "conditional_perplexity"]])
    # a few first pages list one url twice: its first (highest) position counts
    result = rankwise.evaluate(qrels, list(runs.values()), ["ndcg_cut_10"], duplicates="first")
    ndcg = result.summary["ndcg_cut_10"]
    print("| model | held-out LL per cell | PPL | cond-PPL | nDCG@10 vs labels |")
    print("|---|---|---|---|---|")
    print(f"| engine's ranking | | | | {ndcg['engine']:.4f} |")
    for kind, ll, ppl, cond in rows:
        print(f"| {kind} | {ll:.4f} | {ppl:.4f} | {cond:.4f} | {ndcg[kind]:.4f} |")
    print("\nconditional perplexity per rank (held out):\n")
    frame = pd.DataFrame(per_rank).T
    print("| model | " + " | ".join(frame.columns) + " |")
    print("|---" * (len(frame.columns) + 1) + "|")
    for kind, values in frame.iterrows():
        print(f"| {kind} | " + " | ".join(f"{v:.4f}" for v in values) + " |")


if __name__ == "__main__":
    main()
