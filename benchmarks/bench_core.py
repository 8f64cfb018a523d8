"""Time rankwise against the trec_eval 10.0 binary, pytrec_eval, ranx and ir_measures.

Each tool runs in a fresh subprocess (so peak memory is its own): load qrels + run, compute
nDCG@10, MAP, MRR@10, Recall@100 and P@10, report load / compute / end-to-end seconds, peak
memory and the mean values, which must agree with rankwise's. The trec_eval binary is built
from its source (``$TREC_EVAL_SRC``, or ``$TREC_EVAL`` for a ready binary) as the test suite does.

Usage: python benchmarks/bench_core.py [--queries 6980] [--depth 1000] [--judged J] [--long-id] [--id-prefix P]
       [--tools rankwise,trec_eval,pytrec_eval,...] [--processes 3] [--processes-only] [--baseline SRC]

First, the whole-process comparison: ``rankwise evaluate`` and ``rankwise trec-eval`` side by
side with pytrec_eval (its own C parsers ``parse_run`` / ``parse_qrel``), as a user runs them,
each rankwise command and the floor once right after a pytrec_eval run and once right after
another command (each compared with the floor of the same slot), on a 1,000 x 100 run and on
the main run.

Scenarios of the trust issue: ``--queries 20000 --judged 100 --tools rankwise,trec_eval --repeat 1``
(a 20M-row run against a 2M-line qrels) and ``--queries 2000 --long-id --tools rankwise,trec_eval``
(a 2M-row run with one 10,000-character document id).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.resolve()))
from _measure import load_average  # noqa: E402

COMMON = """
import json, sys, time
qrels_path, run_path = sys.argv[1], sys.argv[2]
out = {}
def done(values):
    out["values"] = {k: float(v) for k, v in values.items()}
    print(json.dumps(out))
"""

TOOLS = {
    "rankwise": """
t0 = time.perf_counter()
import rankwise
from rankwise.data import load_qrels, load_run
qrels = load_qrels(qrels_path); run = load_run(run_path)
t1 = time.perf_counter()
res = rankwise.evaluate(qrels, run, ["ndcg@10", "map", "mrr@10", "recall@100", "P@10"])
t2 = time.perf_counter()
res2 = rankwise.evaluate(qrels, run, ["ndcg@10", "map", "mrr@10", "recall@100", "P@10"])
t3 = time.perf_counter()
out.update(load=t1 - t0, compute=t2 - t1, compute_warm=t3 - t2, total=t2 - t0)
s = res.summary.iloc[0]
done({"ndcg@10": s["ndcg@10"], "map": s["map"], "mrr@10": s["mrr@10"], "recall@100": s["recall@100"],
      "P@10": s["P@10"]})
""",
    "pytrec_eval": """
t0 = time.perf_counter()
import pytrec_eval
with open(qrels_path) as f: qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f: run = pytrec_eval.parse_run(f)
t1 = time.perf_counter()
ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"})
res = ev.evaluate(run)
t2 = time.perf_counter()
out.update(load=t1 - t0, compute=t2 - t1, compute_warm=None, total=t2 - t0)
n = len(res)
mean = lambda k: sum(v[k] for v in res.values()) / n
done({"ndcg@10": mean("ndcg_cut_10"), "map": mean("map"), "mrr@10": mean("recip_rank"),
      "recall@100": mean("recall_100"), "P@10": mean("P_10")})
""",
    "ranx": """
t0 = time.perf_counter()
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(qrels_path, kind="trec"); run = Run.from_file(run_path, kind="trec")
t1 = time.perf_counter()
m = ["ndcg@10", "map", "mrr@10", "recall@100", "precision@10"]
res = evaluate(qrels, run, m)
t2 = time.perf_counter()
res = evaluate(qrels, run, m)
t3 = time.perf_counter()
out.update(load=t1 - t0, compute=t2 - t1, compute_warm=t3 - t2, total=t2 - t0)
done({"ndcg@10": res["ndcg@10"], "map": res["map"], "mrr@10": res["mrr@10"],
      "recall@100": res["recall@100"], "P@10": res["precision@10"]})
""",
    "ir_measures": """
t0 = time.perf_counter()
import ir_measures
from ir_measures import nDCG, AP, RR, R, P
qrels = list(ir_measures.read_trec_qrels(qrels_path)); run = list(ir_measures.read_trec_run(run_path))
t1 = time.perf_counter()
res = ir_measures.calc_aggregate([nDCG@10, AP, RR@10, R@100, P@10], qrels, run)
t2 = time.perf_counter()
out.update(load=t1 - t0, compute=t2 - t1, compute_warm=None, total=t2 - t0)
done({"ndcg@10": res[nDCG@10], "map": res[AP], "mrr@10": res[RR@10], "recall@100": res[R@100],
      "P@10": res[P@10]})
""",
}

FIRST_SMALL = """
import time
t0 = time.perf_counter()
import rankwise
res = rankwise.evaluate(sys.argv[1], sys.argv[2], ["ndcg@10", "map"])
out.update(total=time.perf_counter() - t0)
done({"ndcg@10": res.summary.iloc[0]["ndcg@10"], "map": res.summary.iloc[0]["map"]})
"""


def run_once(code: str, qrels: Path, run: Path) -> dict | None:
    """Run one tool in a fresh interpreter; its peak memory comes from wait4's rusage."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(COMMON + code), str(qrels), str(run)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        if "ModuleNotFoundError" in err:
            return None
        raise RuntimeError(err[-2000:])
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = usage.ru_maxrss / 1024
    result["cpu"] = usage.ru_utime + usage.ru_stime   # the whole process, every thread
    return result


TREC_EVAL_MEASURES = {"ndcg_cut_10": "ndcg@10", "map": "map", "recip_rank": "mrr@10", "recall_100": "recall@100",
                      "P_10": "P@10"}


def trec_eval_binary() -> Path | None:
    """The trec_eval 10.0 binary: ``$TREC_EVAL``, or built once from source into benchmarks/_data."""
    if os.environ.get("TREC_EVAL"):
        return Path(os.environ["TREC_EVAL"])
    sys.path.insert(0, str(HERE.parent / "tests"))
    from oracle import build, why_unavailable

    if why_unavailable() is not None:
        print(f"trec_eval skipped: {why_unavailable()}", file=sys.stderr)
        return None
    dest = HERE / "_data" / "trec_eval-10.0"
    if not (dest / "trec_eval").exists():
        import shutil

        shutil.rmtree(dest, ignore_errors=True)
        build(dest)
    return dest / "trec_eval"


def run_binary(binary: Path, qrels: Path, run: Path) -> dict:
    """trec_eval end to end (its own load and compute cannot be told apart from outside)."""
    import time

    t0 = time.perf_counter()
    proc = subprocess.Popen([str(binary), "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank", "-m", "recall.100",
                             "-m", "P.10", str(qrels), str(run)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    total = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(err[-2000:])
    values = {}
    for line in out.splitlines():
        name, _, value = line.split()
        if name in TREC_EVAL_MEASURES:
            values[TREC_EVAL_MEASURES[name]] = float(value)
    return {"load": None, "compute": None, "compute_warm": None, "total": total, "peak_mb": usage.ru_maxrss / 1024,
            "cpu": usage.ru_utime + usage.ru_stime, "values": values}


FLOOR_PROCESS = """
import sys
import pyarrow as pa
import pyarrow.csv as csv
options = csv.ParseOptions(delimiter=" ")
for path, names, kept in ((sys.argv[1], ["query", "iteration", "doc", "label"],
                           {"query": pa.string(), "doc": pa.string(), "label": pa.int64()}),
                          (sys.argv[2], ["query", "q0", "doc", "rank", "score", "tag"],
                           {"query": pa.string(), "doc": pa.string(), "score": pa.float64()})):
    table = csv.read_csv(path, read_options=csv.ReadOptions(column_names=names), parse_options=options,
                         convert_options=csv.ConvertOptions(column_types=kept, include_columns=list(kept)))
print(table.num_rows)
"""
"""The floor: a process that imports pyarrow and parses both files into Arrow tables once,
only the columns an evaluation needs (query, document, label; query, document, score), their
types given, on both cores, and does nothing else: no check of the other fields, no join,
no metric. An evaluation cannot take less."""

FLOOR = "floor: one Arrow parse of the needed columns"

AFTER_LIGHT = " (after a light process)"
"""The suffix of a command's name in its second slot of a round: right after another command
of the comparison (a process that freed at most 0.5 GB), not right after pytrec_eval (1.2 GB).
Where a process runs matters: right after a large free the kernel hands out fresh pages more
slowly, and the floor's parse, which asks for huge pages, pays the most (0.45 s after a light
process, 0.76 s after pytrec_eval in one run). Each slot is compared with the floor of the same
slot."""

PYTREC_EVAL_PROCESS = """
import sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}).evaluate(run)
print(len(res))
"""


def whole_process(qrels: Path, run: Path, rounds: int, baseline: Path | None = None) -> dict[str, dict[str, float]]:
    """Each command as a user runs it (a fresh process, output to a pipe), twice a round: right
    after a pytrec_eval run (the hard slot: that process has just freed 1.2 GB) and, named with
    ``AFTER_LIGHT``, right after another command of the comparison (the floor or a rankwise
    command). Every rankwise command and the floor take both slots, so each is compared with the
    floor in the same machine state. The median and the best of ``rounds`` wall seconds for
    each (pytrec_eval: of all its runs), the medians of user and system time, and the largest
    peak memory. With ``baseline`` (the ``src`` folder of another checkout, such as a ``git
    worktree`` of the commit before a change), its ``rankwise evaluate`` takes its turns too:
    before and after, measured in one run."""
    import statistics
    import time

    pytrec = "pytrec_eval (C parsers)"
    evaluate = ["-m", "rankwise", "evaluate", str(qrels), str(run), "-m", "ndcg@10", "-m", "map", "-m", "recip_rank",
                "-m", "recall@100", "-m", "P@10"]
    commands = {
        "rankwise evaluate": [sys.executable, *evaluate],
        "rankwise trec-eval": [sys.executable, "-m", "rankwise", "trec-eval", "-m", "ndcg_cut.10", "-m", "map", "-m",
                               "recip_rank", "-m", "recall.100", "-m", "P.10", str(qrels), str(run)],
        pytrec: [sys.executable, "-c", PYTREC_EVAL_PROCESS, str(qrels), str(run)],
        FLOOR: [sys.executable, "-c", FLOOR_PROCESS, str(qrels), str(run)],
    }
    environments: dict[str, dict[str, str] | None] = {name: None for name in commands}
    if baseline is not None:
        name = f"rankwise evaluate (baseline: {baseline})"
        commands = {name: [sys.executable, *evaluate], **commands}
        environments[name] = {**os.environ, "PYTHONPATH": str(baseline)}
    compared = [name for name in commands if name != pytrec]  # the rankwise commands and the floor
    for name in compared:
        commands[name + AFTER_LIGHT], environments[name + AFTER_LIGHT] = commands[name], environments[name]
    every: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    for round_number in range(rounds):
        # the commands take turns going first, so none always runs first
        turn = round_number % len(compared)
        turns = compared[turn:] + compared[:turn]
        order = [m for name in turns for m in (pytrec, name)] + [name + AFTER_LIGHT for name in turns]
        for measured in order:
            cmd = commands[measured]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environments[measured])
            proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError(f"{measured} failed")
            every[measured].append({"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime,
                                    "peak_mb": usage.ru_maxrss / 1024})
    return {name: {"wall": statistics.median(r["wall"] for r in runs), "best": min(r["wall"] for r in runs),
                   "user": statistics.median(r["user"] for r in runs), "sys": statistics.median(r["sys"] for r in runs),
                   "peak_mb": max(r["peak_mb"] for r in runs), "runs": len(runs)}
            for name, runs in every.items()}


def print_whole_process(title: str, rows: dict[str, dict[str, float]], size_mb: float) -> None:
    """The table of :func:`whole_process`: pytrec_eval / each command, and each command / the
    floor measured in the same slot."""
    base = rows["pytrec_eval (C parsers)"]
    print(f"\n{title}; {load_average()}\n")
    print("| command | wall s (median) | wall s (best) | runs | user s | system s | CPU s | peak MB | peak / file | "
          "pytrec_eval / this (medians) | (best) | this / floor in the same slot (medians) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        floor = rows[FLOOR + AFTER_LIGHT] if name.endswith(AFTER_LIGHT) else rows[FLOOR]
        print(f"| {name} | {r['wall']:.2f} | {r['best']:.2f} | {r['runs']:.0f} | {r['user']:.2f} | {r['sys']:.2f} | "
              f"{r['user'] + r['sys']:.2f} | {r['peak_mb']:.0f} | {r['peak_mb'] / size_mb:.2f} | "
              f"{base['wall'] / r['wall']:.1f}x | {base['best'] / r['best']:.1f}x | {r['wall'] / floor['wall']:.2f}x |")


def _seconds(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def run_tool(code: str, qrels: Path, run: Path, repeat: int) -> dict | None:
    """The median of ``repeat`` runs for every time and for the peak memory."""
    runs = []
    for _ in range(repeat):
        r = run_once(code, qrels, run)
        if r is None:
            return None
        runs.append(r)
    return median_of(runs)


def median_of(runs: list[dict]) -> dict:
    """One tool's runs: the median of every time and of the peak memory."""
    merged = dict(runs[0])
    for key in ("load", "compute", "compute_warm", "total", "peak_mb", "cpu"):
        if runs[0].get(key) is not None:
            merged[key] = statistics.median(r[key] for r in runs)
    return merged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--data", default=str(HERE / "_data"))
    ap.add_argument("--repeat", type=int, default=3, help="runs per tool; medians are reported")
    ap.add_argument("--judged", type=int, default=None, help="judgments per query (default 1 to 3)")
    ap.add_argument("--long-id", action="store_true", help="one document id of 10,000 characters")
    ap.add_argument("--id-prefix", default="", help="written before every document id (longer ids)")
    ap.add_argument("--processes", type=int, default=3, metavar="ROUNDS",
                    help="rounds of the whole-process comparison with pytrec_eval (0: skip)")
    ap.add_argument("--processes-only", action="store_true", help="only the whole-process comparison")
    ap.add_argument("--baseline", type=Path, default=None, metavar="SRC",
                    help="the src folder of another checkout: its `rankwise evaluate` joins the whole-process "
                         "comparison (before and after a change, in one run)")
    args = ap.parse_args()
    suffix = (f"_j{args.judged}" if args.judged else "") + ("_long" if args.long_id else "") + \
        (f"_p{len(args.id_prefix)}" if args.id_prefix else "")
    data = Path(args.data) / f"q{args.queries}_d{args.depth}{suffix}"
    run_path, qrels_path = data / "run.trec", data / "qrels.txt"
    if not run_path.exists():
        print(f"generating {args.queries} x {args.depth} run in {data} ...", file=sys.stderr)
        extra = (["--judged", str(args.judged)] if args.judged else []) + (["--long-id"] if args.long_id else []) + \
            (["--id-prefix", args.id_prefix] if args.id_prefix else [])
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(data), "--queries", str(args.queries),
                        "--depth", str(args.depth), *extra], check=True, stdout=subprocess.DEVNULL)
    size_mb = run_path.stat().st_size / 2**20
    # an editable install has no compiled bytecode; the peers' installs do: compile rankwise too
    import rankwise

    compileall.compile_dir(Path(rankwise.__file__).parent, quiet=1)
    if args.baseline is not None:
        compileall.compile_dir(args.baseline, quiet=1)
    example = HERE.parent / "examples"
    small = run_tool(FIRST_SMALL, example / "qrels.test", example / "results.test", max(args.repeat, 5))
    if args.processes:
        small_run = HERE / "_data" / "q1000_d100"
        if not (small_run / "run.trec").exists():
            subprocess.run([sys.executable, str(HERE / "generate.py"), str(small_run), "--queries", "1000",
                            "--depth", "100"], check=True, stdout=subprocess.DEVNULL)
        print_whole_process("whole process, 1,000 queries x 100 documents (5 measures), "
                            f"{args.processes} rounds, each command after pytrec_eval, then after a light process",
                            whole_process(small_run / "qrels.txt", small_run / "run.trec", args.processes,
                                          args.baseline),
                            (small_run / "run.trec").stat().st_size / 2**20)
        print_whole_process(f"whole process, {args.queries:,} x {args.depth:,} (5 measures), "
                            f"{args.processes} rounds, each command after pytrec_eval, then after a light process",
                            whole_process(qrels_path, run_path, args.processes, args.baseline), size_mb)
    if args.processes_only:
        return
    runs: dict[str, list[dict]] = {}
    binary = trec_eval_binary() if "trec_eval" in args.tools.split(",") else None
    for round_number in range(args.repeat):   # every tool once per round, so slow spells fall on all alike
        for name in args.tools.split(","):
            if name in runs and runs[name] is None:
                continue
            print(f"round {round_number + 1}: {name} ...", file=sys.stderr)
            if name == "trec_eval":
                if binary is not None:
                    runs.setdefault(name, []).append(run_binary(binary, qrels_path, run_path))
                continue
            r = run_once(TOOLS[name], qrels_path, run_path)
            if r is None:
                print(f"  {name} is not installed; skipped (pip install -e '.[bench]')", file=sys.stderr)
                runs[name] = None  # type: ignore[assignment]
                continue
            runs.setdefault(name, []).append(r)
    results = {name: median_of(done) for name, done in runs.items() if done}
    base = results["rankwise"]
    qrels_lines = sum(1 for _ in open(qrels_path, "rb"))
    print(f"\nrun: {args.queries:,} queries x {args.depth:,} docs = {args.queries * args.depth:,} rows, "
          f"{size_mb:.0f} MB{', one 10,000-character doc id' if args.long_id else ''}; qrels: {qrels_lines:,} "
          f"lines; medians of {args.repeat} rounds, each tool in turn; import + first small evaluation "
          f"(rankwise, median of {max(args.repeat, 5)}): {small['total']:.2f} s; {load_average()}\n")
    head = ("tool", "load s", "compute s", "warm compute s", "end-to-end s", "process CPU s", "x rankwise (e2e)",
            "x rankwise (warm compute)", "peak MB", "peak / file")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, r in results.items():
        warm = r["compute_warm"] if r["compute_warm"] is not None else r["compute"]
        ratio = "-" if warm is None else f"{warm / base['compute_warm']:.0f}"
        print(f"| {name} | {_seconds(r['load'], 2)} | {_seconds(r['compute'], 3)} | "
              f"{_seconds(warm, 3)} | {r['total']:.2f} | {r['cpu']:.2f} | {r['total'] / base['total']:.1f} | "
              f"{ratio} | {r['peak_mb']:.0f} | {r['peak_mb'] / size_mb:.2f} |")
    print("\nmean values (trec_eval's and pytrec_eval's MRR has no cut-off; ranx breaks ties by score only):")
    metrics = list(base["values"])
    print("| tool | " + " | ".join(metrics) + " | max abs diff vs rankwise |")
    print("|" + "---|" * (len(metrics) + 2))
    for name, r in results.items():
        diffs = [abs(r["values"][m] - base["values"][m]) for m in metrics
                 if not (name in ("pytrec_eval", "trec_eval") and m == "mrr@10")]
        print(f"| {name} | " + " | ".join(f"{r['values'][m]:.6f}" for m in metrics) + f" | {max(diffs):.2e} |")


if __name__ == "__main__":
    main()
