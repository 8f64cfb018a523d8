"""Regenerate gbstats_pre_period.json: gbstats 0.8.0's regression adjustment (CUPED) of the
seeded log pre_period_events.csv, each user's covariate the same metric over the 14 days before
their first exposure, the metric itself over the 7 days from it.

Run with the Python of a virtual environment holding ``gbstats==0.8.0`` (see
make_gbstats_golden.py), from the repository root, redirecting the output to
``tests/data/online/gbstats_pre_period.json``. The per-user values are computed here with pandas,
independently of rankwise.
"""

import json

import pandas as pd
from gbstats.frequentist.tests import FrequentistConfig, TwoSidedTTest
from gbstats.models.statistics import (
    ProportionStatistic,
    RegressionAdjustedStatistic,
    SampleMeanStatistic,
    compute_theta,
)

events = pd.read_csv("tests/data/online/pre_period_events.csv", parse_dates=["timestamp"])
exposures = pd.read_csv("tests/data/online/pre_period_exposures.csv", parse_dates=["timestamp"])
first = exposures.sort_values("timestamp", kind="stable").groupby("user").first()
joined = events.join(first.rename(columns={"timestamp": "start"}), on="user", how="inner")
after = joined["timestamp"] - joined["start"]
post = joined[(after >= pd.Timedelta(0)) & (after < pd.Timedelta(days=7))]
pre = joined[(after < pd.Timedelta(0)) & (after >= -pd.Timedelta(days=14))]


def per_user(rows, event):
    return rows[rows["event"] == event].groupby("user").size().reindex(first.index, fill_value=0).astype(float)


out = {}
for name, event, binary in (("impressions", "impression", False), ("clickers", "click", True)):
    y, x = per_user(post, event), per_user(pre, event)
    if binary:
        y, x = (y > 0).astype(float), (x > 0).astype(float)
    stats = {}
    for arm in ("A", "B"):
        yy, xx = y[first["arm"] == arm], x[first["arm"] == arm]
        n = len(yy)
        def kind(values, n=n, binary=binary):
            if binary:
                return ProportionStatistic(n=n, sum=float(values.sum()))
            return SampleMeanStatistic(n=n, sum=float(values.sum()), sum_squares=float((values * values).sum()))

        stats[arm] = RegressionAdjustedStatistic(
            n=n, post_statistic=kind(yy), pre_statistic=kind(xx),
            post_pre_sum_of_products=float((yy * xx).sum()), theta=0.0)
    theta = compute_theta(stats["A"], stats["B"])
    for arm in ("A", "B"):
        stats[arm].theta = theta
    result = TwoSidedTTest(stats["A"], stats["B"], FrequentistConfig(difference_type="absolute")).compute_result()
    out[name] = {"theta": theta, "expected": result.expected, "ci": list(result.ci), "p_value": result.p_value,
                 "n": [stats["A"].n, stats["B"].n]}
print(json.dumps(out, indent=1))
