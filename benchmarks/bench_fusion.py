"""Fuse two large runs with rankwise and ranx and print a table: seconds per method (the runs
already in memory in each library's own form), peak memory, and whether the fused scores agree.

    pip install -e ".[bench]"
    python benchmarks/bench_fusion.py                       # 6,980 queries x 1,000 documents per run
    python benchmarks/bench_fusion.py --queries 1000 --methods rrf,wsum,combmnz
    python benchmarks/bench_fusion.py --cli     # also: rankwise fuse, TREC files in, TREC file out

Each run returns 1,000 documents per query drawn from 1,500 candidates (so the two runs share
about two thirds of their documents), ranked by random scores (distinct: no tie rule involved). Each library runs in
a fresh process; rankwise fuses ``Run`` objects, ranx its ``Run`` objects (numba, all cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import Summary, in_turn, load_average, print_table, run_child  # noqa: E402

CHILD = r"""
import json, sys, time
import numpy as np
lib, queries, depth, methods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
rng = np.random.default_rng(0)
qids = np.repeat([f"q{q}" for q in range(queries)], depth)
runs = []
for r in range(2):
    docs = np.concatenate([rng.choice(1500, size=depth, replace=False) for _ in range(queries)])
    scores = -np.sort(-rng.random((queries, depth)), axis=1).ravel()  # each list ranked, as systems write them
    runs.append((qids, np.char.add("d", docs.astype(str)), scores))
params = {"wsum": {"weights": [0.3, 0.7]}, "rrf": {"k": 60}}
out = {}
if lib == "rankwise":
    from rankwise.data.containers import Run
    from rankwise.fusion import fuse
    made = [Run(q, d, s, name=f"r{i}") for i, (q, d, s) in enumerate(runs)]
    tiny = [Run.from_dict({"q": {"a": 2.0, "b": 1.0}}, name=f"t{i}") for i in range(2)]
    for m in methods:
        fuse(tiny, m, **params.get(m, {}))  # lazy imports, as ranx's warm-up compiles
        t = time.perf_counter()
        fused = fuse(made, m, **params.get(m, {}))
        out[m] = {"seconds": time.perf_counter() - t, "rows": len(fused),
                  "sample": {f"{q} {d}": float(s) for q, d, s in zip(fused.query.slice(0, 5).to_pylist(),
                                                                   fused.doc.slice(0, 5).to_pylist(), fused.score[:5])}}
else:
    from ranx import Run, fuse
    made = []
    for i, (q, d, s) in enumerate(runs):
        import pandas as pd
        frame = pd.DataFrame({"q_id": pd.Series(q.tolist(), dtype=object),
                              "doc_id": pd.Series(d.tolist(), dtype=object), "score": s})
        made.append(Run.from_df(frame,
                                q_id_col="q_id",
                                doc_id_col="doc_id", score_col="score", name=f"r{i}"))
    names = {"combmnz": "mnz", "combsum": "sum"}
    tiny = [Run.from_dict({"q": {"a": 2.0, "b": 1.0}}, name=f"t{i}") for i in range(2)]
    for m in methods:
        fuse(tiny, norm="min-max", method=names.get(m, m), params=params.get(m, {}))  # numba compiles
        t = time.perf_counter()
        fused = fuse(made, norm="min-max", method=names.get(m, m), params=params.get(m, {}))
        d = fused.to_dict()
        out[m] = {"seconds": time.perf_counter() - t, "rows": sum(len(v) for v in d.values())}
        wanted = [k.split() for k in sys.argv[5].split(";") if k] if len(sys.argv) > 5 else []
        out[m]["lookup"] = {f"{q} {doc}": d[q][doc] for q, doc in wanted}
print(json.dumps({"methods": out}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--methods", default="rrf,wsum,combmnz")
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each library in turn; medians")
    ap.add_argument("--cli", action="store_true", help="also time the whole rankwise fuse command on TREC files")
    args = ap.parse_args()
    common = [str(args.queries), str(args.depth), args.methods]
    first = run_child([sys.executable, "-c", CHILD, "rankwise", *common])   # its sample: which pairs ranx looks up
    samples = ";".join(k for m in first.result["methods"].values() for k in m["sample"])
    argvs = {"rankwise": [sys.executable, "-c", CHILD, "rankwise", *common],
             "ranx": [sys.executable, "-c", CHILD, "ranx", *common, samples]}
    done = in_turn({name: (lambda argv=argv: run_child(argv)) for name, argv in argvs.items()}, args.repeat)
    ours, theirs = done["rankwise"], done["ranx"]

    def seconds(summary: Summary, method: str) -> float:
        return statistics.median(r.result["methods"][method]["seconds"] for r in summary.runs)

    rows = args.queries * args.depth
    print(f"two runs of {rows:,} rows ({args.queries:,} queries x {args.depth:,}); medians of {args.repeat} rounds, "
          f"each library in turn in a fresh process; {load_average()}\n")
    print("| method | rankwise s | ranx s | ranx / rankwise | fused rows | same scores (sample) |")
    print("|---|---|---|---|---|---|")
    for m, mine in ours.result["methods"].items():
        other = theirs.result["methods"][m]
        same = all(abs(mine["sample"][k] - other["lookup"][k]) <= 1e-12 * max(1.0, abs(other["lookup"][k]))
                   for k in mine["sample"])
        print(f"| {m} | {seconds(ours, m):.2f} | {seconds(theirs, m):.2f} | "
              f"{seconds(theirs, m) / seconds(ours, m):.1f}x | {mine['rows']:,} | "
              f"{'yes' if same and mine['rows'] == other['rows'] else 'NO'} |")
    print("\nwhole processes (building both runs, warm-ups, every method):\n")
    print_table(done, own_memory=False)
    if args.cli:
        time_cli(args)


WRITE_RUNS = r"""
import sys
import numpy as np
from rankwise.data.containers import Run
from rankwise.data.trec_io import write_trec_run
queries, depth, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
qids = np.repeat([f"q{q}" for q in range(queries)], depth)
for r in range(2):
    docs = np.concatenate([rng.choice(1500, size=depth, replace=False) for _ in range(queries)])
    scores = -np.sort(-rng.random((queries, depth)), axis=1).ravel()
    write_trec_run(Run(qids, np.char.add("d", docs.astype(str)), scores, name=f"r{r}"), f"{folder}/r{r}.trec")
"""


def time_cli(args: argparse.Namespace) -> None:
    """The whole ``rankwise fuse`` process: read two TREC files, fuse, write the fused TREC file."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp()
    try:
        subprocess.run([sys.executable, "-c", WRITE_RUNS, str(args.queries), str(args.depth), folder], check=True)
        size = sum(os.path.getsize(f"{folder}/r{r}.trec") for r in range(2)) / 1e6
        rankwise = shutil.which("rankwise") or "rankwise"
        params = {"wsum": ["--weights", "0.3,0.7"]}

        def command(m: str) -> list[str]:
            return [rankwise, "fuse", f"{folder}/r0.trec", f"{folder}/r1.trec", "--method", m, *params.get(m, []),
                    "-o", f"{folder}/out_{m}.trec"]

        done = in_turn({f"rankwise fuse --method {m}": (lambda m=m: run_child(command(m), json_result=False))
                        for m in args.methods.split(",")}, args.repeat)
        print(f"\nrankwise fuse, whole process: two TREC files ({size:.0f} MB) in, the fused TREC file out; medians "
              f"of {args.repeat} rounds, each method in turn; {load_average()}\n")
        print_table(done, own_memory=False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
