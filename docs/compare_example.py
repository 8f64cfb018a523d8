"""Builds the worked example of docs/compare.md: BM25 vs SPLADE++ on TREC DL 2019 and 2020.

``python docs/compare_example.py`` (from the repository root) rewrites every image in docs/img
and prints the tables the page quotes; ``tests/test_docs_images.py`` draws the images again and
fails when a committed one is stale.
"""

from __future__ import annotations

from pathlib import Path

from rankwise.comparison import compare
from rankwise.report import formats, plots

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "golden"
IMG = ROOT / "docs" / "img"
METRICS = ["ndcg@10", "map", "recall@100", "mrr@10"]


def runs_of(year: str) -> tuple[Path, dict[str, Path]]:
    qrels = DATA / f"qrels.dl{year}-passage.txt"
    return qrels, {"BM25": DATA / f"BM25.dl{year}.trec", "SPLADE++": DATA / f"SPLADE_P_P_ENSEMBLE_DISTIL.dl{year}.trec"}


def comparison(year: str, permutations: int = 10_000):
    qrels, runs = runs_of(year)
    return compare(qrels, runs, METRICS, test="randomization", correction="holm", seed=0, bootstrap_ci="BCa",
                   rel_level=2, permutations=permutations)


def write_images(folder: Path) -> list[Path]:
    """Draw every image of docs/compare.md into ``folder``; returns the files written."""
    written = []
    for year in ("19", "20"):
        qrels, runs = runs_of(year)
        evaluation = compare(qrels, runs, ["ndcg@10"], rel_level=2).evaluation
        out = {name: folder / f"dl{year}_{name}.png" for name in ("ndcg_at_k", "ndcg10_diff", "ndcg10_violin", "pr",
                                                                   "roc")}
        plots.metric_at_k(qrels, runs, "ndcg", 100, path=out["ndcg_at_k"], rel_level=2)
        plots.per_query_difference(evaluation, "ndcg@10", "BM25", "SPLADE++", path=out["ndcg10_diff"])
        written += [out["ndcg_at_k"], out["ndcg10_diff"]]
        if year == "19":
            plots.distribution(evaluation, "ndcg@10", "violin", path=out["ndcg10_violin"])
            plots.precision_recall(qrels, runs, path=out["pr"], rel_level=2)
            plots.roc(qrels, runs, path=out["roc"], rel_level=2)
            written += [out["ndcg10_violin"], out["pr"], out["roc"]]
    written.append(_recsys_tradeoff(folder / "recsys_tradeoff.png"))
    return written


def _recsys_tradeoff(path: Path) -> Path:
    """docs/recsys.md's trade-off plot: two runs of recommendation lists, ndcg@5 against ILD."""
    from rankwise.recsys import beyond_accuracy

    data = ROOT / "tests" / "data" / "recsys"
    result = beyond_accuracy({"reco": str(data / "reco.csv"), "random": str(data / "random.csv")},
                             ["ndcg@5", "ild(similarity=cooccurrence)@5"], train=str(data / "train.csv"),
                             test=str(data / "test.csv"))
    plots.tradeoff(result, "ndcg@5", "ild(similarity=cooccurrence)@5", path=path)
    return path


def main() -> None:
    for year in ("19", "20"):
        comp = comparison(year)
        print(f"\n## DL{year} ({comp.n_queries['map']} queries)\n")
        print(formats.summary_markdown(comp.evaluation, comp))
        print()
        print(formats.comparison_markdown(comp))
    IMG.mkdir(exist_ok=True)
    for path in write_images(IMG):
        print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
