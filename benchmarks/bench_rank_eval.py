"""Time the rank-eval workflow end to end on real test collections: convert, index with Tantivy,
run two systems' searches, evaluate five metrics and compare the systems with a paired t-test.

Cranfield is bundled (tests/data/cranfield); NPL (Vaswani, 11,429 documents) is read from a
directory given with --npl (the Terrier ``vaswani_npl`` folder).

Usage: python benchmarks/bench_rank_eval.py [--npl DIR] [--size 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from rankwise.rankeval.evaluation import rank_eval
from rankwise.rankeval.spec import load_spec
from rankwise.rankeval.tantivy_index import TantivyBackend, build_index

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import in_turn, load_average, measure_fork  # noqa: E402


def _prepare_module():
    path = ROOT / "examples" / "rank_eval" / "prepare_collections.py"
    spec = importlib.util.spec_from_file_location("prepare_collections", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_run(kind: str, data: Path, size: int, work: Path) -> dict[str, float]:
    prepare = _prepare_module()
    t0 = time.perf_counter()
    paths = prepare.prepare(kind, data, work)
    t1 = time.perf_counter()
    fields = ["title", "body"] if kind == "cranfield" else ["body"]
    meta = build_index(paths["corpus"], work / "index", "id", fields, overwrite=True)
    backends = {}
    if kind == "npl":  # the second system searches an English-stemmed index
        build_index(paths["corpus"], work / "stem", "id", fields, analyzer="en_stem", overwrite=True)
    t2 = time.perf_counter()
    spec = load_spec(paths["spec"])
    plain = TantivyBackend(work / "index")
    backends = {s.name: plain for s in spec.systems}
    if kind == "npl":
        backends["stemmed"] = TantivyBackend(work / "stem")
    result = rank_eval(spec, backends, size=size)
    t3 = time.perf_counter()
    searches = sum(len(h.hits) for h in result.systems.values())
    search_seconds = sum(h.seconds for h in result.systems.values())
    names = list(result.systems)
    return {"documents": meta["documents"], "queries": len(spec.requests), "prepare": t1 - t0,
            "index": t2 - t1, "rank_eval": t3 - t2, "total": t3 - t0, "searches": searches,
            "search_s": search_seconds, "qps": searches / search_seconds,
            "map": {n: result.score(n, "map") for n in names},
            "ndcg@10": {n: result.score(n, "ndcg@10") for n in names}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npl", type=Path, default=None, help="the vaswani_npl directory")
    ap.add_argument("--size", type=int, default=1000, help="hits per search")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    collections = [("cranfield", ROOT / "tests" / "data" / "cranfield")]
    if args.npl is not None:
        collections.append(("npl", args.npl))
    def measured(kind: str, data: Path):
        def work() -> dict:
            with tempfile.TemporaryDirectory() as tmp:
                return one_run(kind, data, args.size, Path(tmp))
        return lambda: measure_fork(work)

    done = in_turn({kind: measured(kind, data) for kind, data in collections}, args.repeat)
    print(f"medians of {args.repeat} rounds, each collection in turn, in a fork of one process (imports done "
          f"before); {args.size} hits per search; {load_average()}\n")
    print("| collection | docs | queries x systems | index s | searches + evaluation + comparison s | "
          "end to end s | CPU s | peak MB | searches/s | MAP (system: value) | nDCG@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, summary in done.items():
        med = {k: summary.median(k) for k in ("index", "rank_eval", "total", "qps")}
        last = summary.runs[-1].result
        maps = ", ".join(f"{n}: {v:.4f}" for n, v in last["map"].items())
        ndcg = ", ".join(f"{n}: {v:.4f}" for n, v in last["ndcg@10"].items())
        print(f"| {kind} | {last['documents']:,} | {last['queries']} x {len(last['map'])} | {med['index']:.2f} | "
              f"{med['rank_eval']:.2f} | {med['total']:.2f} | {summary.median('cpu'):.2f} | {summary.peak_mb:,.0f} | "
              f"{med['qps']:.0f} | {maps} | {ndcg} |")


if __name__ == "__main__":
    main()
