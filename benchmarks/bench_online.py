"""Time an A/B analysis of an event log: rankwise against pandas groupby + statsmodels and
against tea-tasting, on the same Parquet file, each in a fresh process (peak memory its own).

The log has ``--events`` rows from ``--users`` users (Poisson events per user), two arms
assigned by hashing the user id, and per event a number of impressions and clicks. Every tool
sums events per user, then analyses CTR (a ratio of sums per user, delta method) and views
per user (Welch). The script checks that the three agree on the CTR difference.

With ``--long`` the log is as a warehouse exports it: one row per event with its type in a
column (impression, click, purchase) and a value (purchase amount). rankwise reads it with
definitions over events (``count(click) / count(impression)``, ``sum(value where event =
purchase)``) in memory and through DuckDB; the peers first pivot it per user in pandas.

With ``--long``, gbstats 0.8 runs too when installed (in its own environment named by
``--gbstats-python``: it pins pandas 1.x): the same pivot, then its t-tests on per-variant sums.

Usage: python benchmarks/bench_online.py [--events 100000000] [--users 10000000] [--long]
       [--only rankwise-duckdb] [--gbstats-python PATH] [--spark]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

RANKWISE = """
import json, sys, time
t0 = time.perf_counter()
from rankwise import experiments
r = experiments.analyze(sys.argv[1], unit="user", variant="arm", metrics=["ctr=clicks/views", "views=views"],
                   control="A", correction="none")
row = r.table.set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["difference"]),
                  "ctr_p": float(row["p_value"])}))
"""

CTR_BY_HAND = """
def ctr(g):
    c, v = g["clicks"].to_numpy(float), g["views"].to_numpy(float)
    r = c.sum() / v.sum(); n = len(g)
    var = (np.var(c, ddof=1) - 2 * r * np.cov(c, v)[0, 1] + r * r * np.var(v, ddof=1)) / v.mean() ** 2
    return r, var / n
(ra, va), (rb, vb) = ctr(arms["A"]), ctr(arms["B"])
"""
"""The peers' CTR per user: a ratio of sums with its delta-method variance, by hand."""

PANDAS = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
from statsmodels.stats.weightstats import ttest_ind
events = pd.read_parquet(sys.argv[1], columns=["user", "arm", "clicks", "views"])
users = events.groupby("user", sort=False).agg(arm=("arm", "first"), clicks=("clicks", "sum"),
                                               views=("views", "sum"))
out = {}
arms = {a: g for a, g in users.groupby("arm")}
ttest_ind(arms["B"]["views"], arms["A"]["views"], usevar="unequal")
CTR_BY_HAND
from scipy import stats
z = (rb - ra) / np.sqrt(va + vb)
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": rb - ra,
                  "ctr_p": float(2 * stats.norm.sf(abs(z)))}))
""".replace("CTR_BY_HAND", CTR_BY_HAND)

TEA = """
import json, sys, time
t0 = time.perf_counter()
import pandas as pd
import tea_tasting as tt
events = pd.read_parquet(sys.argv[1], columns=["user", "arm", "clicks", "views"])
users = events.groupby("user", sort=False).agg(variant=("arm", "first"), clicks=("clicks", "sum"),
                                               views=("views", "sum")).reset_index()
r = tt.Experiment(ctr=tt.RatioOfMeans("clicks", "views"), views=tt.Mean("views")).analyze(users, control="A")
row = r.to_pandas().set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["effect_size"]),
                  "ctr_p": float(row["pvalue"])}))
"""


LONG_METRICS = '["ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)"]'

RANKWISE_LONG = """
import json, sys, time
t0 = time.perf_counter()
from rankwise import experiments
r = experiments.analyze(sys.argv[1], unit="user", variant="arm", metrics=METRICS, control="A", correction="none",
                   engine=ENGINE)
row = r.table.set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["difference"]),
                  "ctr_p": float(row["p_value"])}))
""".replace("METRICS", LONG_METRICS)

RANKWISE_SPARK = """
import json, sys, time
t0 = time.perf_counter()
import ibis
from rankwise import experiments
from pyspark.sql import SparkSession
from rankwise.scale.spark_engine import QUIET_LOGS
# one row per unit comes back to the driver (10M rows at 100M events): the driver's memory must hold it
spark = (SparkSession.builder.master("local[*]").config("spark.driver.memory", "8g")
         .config("spark.driver.maxResultSize", "4g").config("spark.sql.shuffle.partitions", "16")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOGS}").getOrCreate())
table = ibis.pyspark.connect(spark).read_parquet(sys.argv[1])
r = experiments.analyze(table, unit="user", variant="arm", metrics=METRICS, control="A", correction="none")
row = r.table.set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["difference"]),
                  "ctr_p": float(row["p_value"])}))
"""
"""rankwise on a local Spark through Ibis (``--spark``): the per-unit sums run in Spark; the
JVM's start is in the time, its memory is not in the peak (that is the Python driver's)."""

PIVOT = """
events = pd.read_parquet(sys.argv[1], columns=["user", "arm", "event", "value"])
kind = events["event"].astype(str)
events = events.assign(clicks=(kind == "click").astype("int64"), views=(kind == "impression").astype("int64"),
                       revenue=events["value"].where(kind == "purchase", 0.0))
users = events.groupby("user", sort=False).agg(variant=("arm", "first"), clicks=("clicks", "sum"),
                                               views=("views", "sum"), revenue=("revenue", "sum")).reset_index()
"""

PANDAS_LONG = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
from scipy import stats
PIVOT
arms = {a: g for a, g in users.groupby("variant")}
stats.ttest_ind(arms["B"]["revenue"], arms["A"]["revenue"], equal_var=False)
CTR_BY_HAND
z = (rb - ra) / np.sqrt(va + vb)
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": rb - ra,
                  "ctr_p": float(2 * stats.norm.sf(abs(z)))}))
""".replace("PIVOT", PIVOT).replace("CTR_BY_HAND", CTR_BY_HAND)

TEA_LONG = """
import json, sys, time
t0 = time.perf_counter()
import pandas as pd
import tea_tasting as tt
PIVOT
r = tt.Experiment(ctr=tt.RatioOfMeans("clicks", "views"), revenue=tt.Mean("revenue")).analyze(users, control="A")
row = r.to_pandas().set_index("metric").loc["ctr"]
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(row["effect_size"]),
                  "ctr_p": float(row["pvalue"])}))
""".replace("PIVOT", PIVOT)

GBSTATS_LONG = """
import json, sys, time
t0 = time.perf_counter()
import pandas as pd
from gbstats.frequentist.tests import FrequentistConfig, TwoSidedTTest
from gbstats.models.statistics import RatioStatistic, SampleMeanStatistic
PIVOT
def sample(x):
    return SampleMeanStatistic(n=len(x), sum=float(x.sum()), sum_squares=float((x * x).sum()))
stats = {}
for arm, g in users.groupby("variant"):
    c, v = g["clicks"].astype(float), g["views"].astype(float)
    stats[arm] = (RatioStatistic(n=len(g), m_statistic=sample(c), d_statistic=sample(v),
                                 m_d_sum_of_products=float((c * v).sum())), sample(g["revenue"].astype(float)))
config = FrequentistConfig(difference_type="absolute")
ctr = TwoSidedTTest(stats["A"][0], stats["B"][0], config).compute_result()
TwoSidedTTest(stats["A"][1], stats["B"][1], config).compute_result()
print(json.dumps({"seconds": time.perf_counter() - t0, "ctr_difference": float(ctr.expected),
                  "ctr_p": float(ctr.p_value)}))
""".replace("PIVOT", PIVOT)
"""gbstats 0.8 (GrowthBook's engine) takes per-variant sums: the pivot per user, then n, sums,
sums of squares and the clicks x views products per arm, in its own environment (it pins
pandas 1.x)."""


def make_long_log(path: Path, events: int, users: int, seed: int = 0) -> None:
    """One row per event: user, arm, event type (impression, click, purchase), value."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankwise import experiments

    rng = np.random.default_rng(seed)
    arm_of_user = np.where(experiments.assign(np.arange(1, users + 1), "bench") == 0, "A", "B")
    click_rate = rng.beta(2, 10, users) * np.where(arm_of_user == "B", 1.02, 1.0)
    kinds = np.array(["impression", "click", "purchase"])
    writer = None
    chunk = 10_000_000
    for start in range(0, events, chunk):
        size = min(chunk, events - start)
        user = rng.integers(0, users, size)
        draw = rng.random(size)
        kind = np.where(draw < 0.02, 2, np.where(draw < 0.02 + 0.98 * click_rate[user] / (1 + click_rate[user]), 1, 0))
        value = np.where(kind == 2, rng.gamma(2.0, 25.0, size).round(2), np.nan)
        table = pa.table({"user": user + 1, "arm": pa.array(arm_of_user[user]).dictionary_encode(),
                          "event": pa.DictionaryArray.from_arrays(pa.array(kind.astype(np.int32)), pa.array(kinds)),
                          "value": pa.array(value, from_pandas=True)})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def make_log(path: Path, events: int, users: int, seed: int = 0) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankwise import experiments

    rng = np.random.default_rng(seed)
    arm_of_user = np.where(experiments.assign(np.arange(1, users + 1), "bench") == 0, "A", "B")
    propensity = rng.beta(2, 30, users) * np.where(arm_of_user == "B", 1.02, 1.0)
    writer = None
    chunk = 10_000_000
    for start in range(0, events, chunk):
        size = min(chunk, events - start)
        user = rng.integers(0, users, size)
        views = rng.integers(1, 4, size)
        clicks = rng.binomial(views, propensity[user])
        table = pa.table({"user": user + 1, "arm": pa.array(arm_of_user[user]).dictionary_encode(),
                          "clicks": clicks.astype(np.int32), "views": views.astype(np.int32)})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def peak_mb(code: str, path: Path, python: str = sys.executable) -> tuple[dict | None, float]:
    """Run in a child and read its peak resident memory."""
    proc = subprocess.Popen([python, "-c", code, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    t0 = time.perf_counter()
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        if "ModuleNotFoundError" in err:
            return None, 0.0
        raise RuntimeError(err[-2000:])
    result = json.loads(out.strip().splitlines()[-1])
    result["wall"] = wall
    result["cpu"] = usage.ru_utime + usage.ru_stime   # the child's own CPU seconds, every thread
    return result, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000)
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--long", action="store_true", help="one row per event, its type in a column")
    parser.add_argument("--only", action="append", default=[],
                        help="run only these tools (rankwise, rankwise-duckdb, rankwise-spark, pandas, tea-tasting, "
                             "gbstats)")
    parser.add_argument("--spark", action="store_true",
                        help="also run rankwise on a local Spark session through Ibis (rankwise[spark,ibis], Java)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each tool, in turn; the table shows the median wall time (a cold first run "
                             "of any tool is noise of the machine, not of the tool)")
    parser.add_argument("--gbstats-python", default=sys.executable,
                        help="The Python of an environment with gbstats 0.8 (it pins pandas 1.x), for --long")
    args = parser.parse_args()
    path = HERE / "_data" / f"online_{'long_' if args.long else ''}{args.events}_{args.users}.parquet"
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        t0 = time.perf_counter()
        (make_long_log if args.long else make_log)(path, args.events, args.users)
        print(f"wrote {path.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    rows = []
    if args.long:
        tools = [("rankwise", "rankwise experiments.analyze (memory)", RANKWISE_LONG.replace("ENGINE", "'memory'")),
                 ("rankwise-duckdb", "rankwise experiments.analyze (engine='duckdb')",
                  RANKWISE_LONG.replace("ENGINE", "'duckdb'")),
                 ("pandas", "pandas pivot + groupby + scipy", PANDAS_LONG),
                 ("tea-tasting", "tea-tasting (after a pandas pivot)", TEA_LONG),
                 ("gbstats", "gbstats 0.8 (after a pandas pivot)", GBSTATS_LONG)]
        spark_metrics = LONG_METRICS
    else:
        tools = [("rankwise", "rankwise experiments.analyze", RANKWISE),
                 ("pandas", "pandas groupby + statsmodels", PANDAS),
                 ("tea-tasting", "tea-tasting (after a pandas groupby)", TEA)]
        spark_metrics = '["ctr=clicks/views", "views=views"]'
    if args.spark:
        tools.insert(1, ("rankwise-spark", "rankwise through Ibis on local Spark (2 cores)",
                         RANKWISE_SPARK.replace("METRICS", spark_metrics)))
    import statistics

    chosen = [(key, name, code) for key, name, code in tools if not args.only or key in args.only]
    runs: dict[str, list[tuple[dict, float]]] = {name: [] for _, name, _ in chosen}
    for _ in range(args.repeat):   # every tool once per round, so slow spells of the machine spread over all
        for key, name, code in chosen:
            if name not in runs:
                continue
            result, peak = peak_mb(code, path, args.gbstats_python if key == "gbstats" else sys.executable)
            if result is None:
                print(f"{name}: not installed", file=sys.stderr)
                del runs[name]
                continue
            runs[name].append((result, peak))
    for name, done in runs.items():
        result = dict(done[0][0], wall=statistics.median(r["wall"] for r, _ in done),
                      cpu=statistics.median(r["cpu"] for r, _ in done), walls=[r["wall"] for r, _ in done])
        rows.append((name, result, max(peak for _, peak in done)))
    reference = rows[0][1]["ctr_difference"]
    what = "CTR and revenue per user from one row per event" if args.long else "CTR and views per user"
    print(f"\n{args.events:,} events from {args.users:,} users ({path.stat().st_size / 2**20:,.0f} MB of "
          f"Parquet), {what}, two arms, whole process; load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}:\n")
    print(f"| tool | wall s (median of {args.repeat}) | CPU s (median) | runs | peak MB | CTR difference | p |")
    print("|---|---|---|---|---|---|---|")
    for name, result, peak in rows:
        assert abs(result["ctr_difference"] - reference) <= 1e-9 * max(1.0, abs(reference)), name
        walls = ", ".join(f"{w:.1f}" for w in result["walls"])
        print(f"| {name} | {result['wall']:.1f} | {result['cpu']:.1f} | {walls} | {peak:,.0f} | "
              f"{result['ctr_difference']:.6g} | {result['ctr_p']:.4g} |")
    fastest_peer = min((r["wall"] for n, r, _ in rows if not n.startswith("rankwise")), default=None)
    if fastest_peer is not None:
        for name, result, _ in rows:
            if name.startswith("rankwise"):
                print(f"\n{name}: {fastest_peer / result['wall']:.1f}x the fastest peer (medians)")


if __name__ == "__main__":
    main()
