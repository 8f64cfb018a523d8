"""Builds the worked example of docs/compare.md: BM25 vs SPLADE++ on TREC DL 2019 and 2020.

Run from the repository root: python docs/compare_example.py (writes docs/img/*.png and prints
the tables that the page quotes).
"""

from __future__ import annotations

from pathlib import Path

from rankwise.comparison import compare
from rankwise.report import formats, plots

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "golden"
IMG = ROOT / "docs" / "img"
METRICS = ["ndcg@10", "map", "recall@100", "mrr@10"]

for year in ("19", "20"):
    qrels = DATA / f"qrels.dl{year}-passage.txt"
    runs = {"BM25": DATA / f"BM25.dl{year}.trec", "SPLADE++": DATA / f"SPLADE_P_P_ENSEMBLE_DISTIL.dl{year}.trec"}
    comp = compare(qrels, runs, METRICS, test="randomization", correction="holm", seed=0,
                   bootstrap_ci="BCa", rel_level=2)
    print(f"\n## DL{year}: {comp.n_queries['map']} queries\n")
    print(formats.summary_markdown(comp.evaluation, comp))
    print()
    print(formats.comparison_markdown(comp))
    print("\nBCa intervals:", comp.table[["metric", "boot_low", "boot_high"]].round(4).to_dict("records"))
    plots.metric_at_k(qrels, runs, "ndcg", 100, path=IMG / f"dl{year}_ndcg_at_k.png", rel_level=2)
    plots.per_query_difference(comp.evaluation, "ndcg@10", "BM25", "SPLADE++", path=IMG / f"dl{year}_ndcg10_diff.png")
    if year == "19":
        plots.distribution(comp.evaluation, "ndcg@10", "violin", path=IMG / "dl19_ndcg10_violin.png")
        plots.precision_recall(qrels, runs, path=IMG / "dl19_pr.png", rel_level=2)
        plots.roc(qrels, runs, path=IMG / "dl19_roc.png", rel_level=2)
