"""Time an A/B analysis of an event log joined to an exposure table with a 7-day window:
rankwise through DuckDB and in memory, each in a fresh process (peak memory its own), with
and without the daily looks.

The log has ``--events`` rows from ``--users`` users over 21 days (one row per event: user,
event type, value, time in seconds); every user has one exposure (half of them a second,
later one) spread over the first 14 days. Each tool counts a user's events from the first
exposure for 7 days, then compares CTR (``count(click) / count(impression)``) and revenue
per user. The script checks the runs agree on the CTR difference.

Usage: python benchmarks/bench_exposures.py [--events 100000000] [--users 10000000]
       [--only duckdb-no-looks] [--repeat 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from bench_online import peak_mb  # noqa: E402

RUN = """
import json, sys, time
t0 = time.perf_counter()
from rankwise.experiments.settings import ABSettings, DataSource, ExperimentDesign, plan
from rankwise.experiments.analysis import run
events, exposures = sys.argv[1], sys.argv[1].replace("events", "exposures")
source = DataSource("user", "arm", exposures=exposures, window="7d", timestamp="t", engine=ENGINE, looks=LOOKS)
metrics = ["ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)"]
r = run(events, plan(metrics, ABSettings(source, ExperimentDesign(control="A", correction="none"))))
row = r.table.set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["difference"]),
                  "ctr_p": float(row["p_value"]), "looks": 0 if r.looks is None else len(r.looks)}))
"""


def make(folder: Path, events: int, users: int, seed: int = 0) -> Path:
    """The event log and the exposure table as Parquet (written piece by piece)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankwise import experiments

    rng = np.random.default_rng(seed)
    day = 86400.0
    arm = np.where(experiments.assign(np.arange(1, users + 1), "bench-exposures") == 0, "A", "B")
    first = rng.uniform(0, 14 * day, users)
    again = rng.random(users) < 0.5
    exposures = pa.table({"user": np.concatenate([np.arange(1, users + 1), np.flatnonzero(again) + 1]),
                          "arm": np.concatenate([arm, arm[again]]),
                          "t": np.concatenate([first, first[again] + rng.uniform(0, 3 * day, int(again.sum()))])})
    pq.write_table(exposures, folder / "exposures.parquet")
    click_rate = rng.beta(2, 10, users) * np.where(arm == "B", 1.02, 1.0)
    kinds = np.array(["impression", "click", "purchase"])
    writer = None
    for start in range(0, events, 10_000_000):
        size = min(10_000_000, events - start)
        user = rng.integers(0, users, size)
        draw = rng.random(size)
        kind = np.where(draw < 0.02, 2, np.where(draw < 0.02 + 0.98 * click_rate[user] / (1 + click_rate[user]), 1, 0))
        value = np.where(kind == 2, rng.gamma(2.0, 25.0, size).round(2), np.nan)
        table = pa.table({"user": user + 1,
                          "event": pa.DictionaryArray.from_arrays(pa.array(kind.astype(np.int32)), pa.array(kinds)),
                          "value": pa.array(value, from_pandas=True), "t": rng.uniform(0, 21 * day, size)})
        if writer is None:
            writer = pq.ParquetWriter(folder / "events.parquet", table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()
    return folder / "events.parquet"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000)
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--only", action="append", default=[],
                        help="run only these (duckdb-no-looks, duckdb-looks, memory-no-looks)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each engine, in turn; medians")
    args = parser.parse_args()
    import tempfile
    import time

    tools = [("duckdb-no-looks", "rankwise, engine='duckdb', --no-looks", "'duckdb'", "False"),
             ("memory-no-looks", "rankwise in memory, --no-looks", "'memory'", "False"),
             ("duckdb-looks", "rankwise, engine='duckdb', with the daily looks", "'duckdb'", "True")]
    tools = [t for t in tools if not args.only or t[0] in args.only]
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        events = make(Path(folder), args.events, args.users)
        print(f"wrote {args.events:,} events and {args.users:,} users' exposures in {time.perf_counter() - t0:.1f} s\n")
        rows = []
        rounds: dict[str, list] = {name: [] for name, *_ in tools}
        for _ in range(args.repeat):   # every engine once per round, so slow spells fall on all alike
            for name, _label, engine, looks in tools:
                rounds[name].append(peak_mb(RUN.replace("ENGINE", engine).replace("LOOKS", looks), events))
        for name, label, _engine, _looks in tools:
            runs = rounds[name]
            walls = sorted(r["wall"] for r, _ in runs if r is not None)
            cpus = sorted(r["cpu"] for r, _ in runs if r is not None)
            result = runs[0][0]
            assert result is not None, name
            rows.append((label, walls[len(walls) // 2], cpus[len(cpus) // 2], max(mb for _, mb in runs), result))
    import os

    print(f"{args.events:,} events from {args.users:,} users joined to their exposures (7-day window), "
          f"CTR and revenue per user, whole process, medians of {args.repeat} run(s); load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"RANKWISE_DUCKDB_MEMORY={os.environ.get('RANKWISE_DUCKDB_MEMORY', '(unset: 2GB)')}:\n")
    print("| run | wall s | CPU s | peak MB | looks | CTR difference | p |")
    print("|---|---|---|---|---|---|---|")
    for label, wall, cpu, mb, r in rows:
        print(f"| {label} | {wall:.1f} | {cpu:.1f} | {mb:,.0f} | {r['looks']} | {r['ctr_difference']:.8f} | "
              f"{r['ctr_p']:.4g} |")
    differences = {round(r["ctr_difference"], 12) for *_, r in rows}
    assert len(differences) == 1, differences


if __name__ == "__main__":
    main()
