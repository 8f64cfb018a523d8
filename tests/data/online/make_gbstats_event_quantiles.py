"""Regenerate gbstats_event_quantiles.json: gbstats 0.8.0's QuantileClusteredStatistic and
TwoSidedTTest for the p50 and p90 of every page load's latency in latency_events.csv, the
quantiles, their bounds and the per-user counts computed here with numpy and pandas as
GrowthBook's SQL computes them (PERCENTILE_CONT; n* the largest of 100, 200, 400, ... below the
number of events; levels nu -+ 1.96 sqrt(nu (1 - nu) / n*)).

Run with the Python of a virtual environment holding ``gbstats==0.8.0`` (see
make_gbstats_golden.py), from the repository root, redirecting the output to
``tests/data/online/gbstats_event_quantiles.json``.
"""

import json

import numpy as np
import pandas as pd
from gbstats.frequentist.tests import FrequentistConfig, TwoSidedTTest
from gbstats.models.statistics import QuantileClusteredStatistic
from scipy.stats import norm

events = pd.read_csv("tests/data/online/latency_events.csv")
users = events.groupby("user")["arm"].first()
loads = events[events["latency"].notna()]
z = norm.ppf(0.975)


def statistic(arm, nu):
    rows = loads[loads["arm"] == arm]
    n = len(rows)
    n_star = max([100 * 2 ** k for k in range(20) if 100 * 2 ** k < n] or [100])
    half = z * np.sqrt(nu * (1 - nu) / n_star)
    low, high = max(nu - half, 1e-8), min(nu + half, 1 - 1e-8)
    q, lower, upper = np.quantile(rows["latency"].to_numpy(), [nu, low, high])
    per_user = rows.groupby("user")["latency"].agg(s=lambda x: (x <= q).sum(), n="size")
    s, m = per_user["s"].to_numpy(float), per_user["n"].to_numpy(float)
    return QuantileClusteredStatistic(
        n=n, n_star=n_star, nu=nu, quantile_hat=q, quantile_lower=lower, quantile_upper=upper,
        main_sum=s.sum(), main_sum_squares=(s * s).sum(), denominator_sum=m.sum(),
        denominator_sum_squares=(m * m).sum(), main_denominator_sum_product=(s * m).sum(),
        n_clusters=int((users == arm).sum()))


out = {}
for nu in (0.5, 0.9):
    a, b = statistic("A", nu), statistic("B", nu)
    result = TwoSidedTTest(a, b, FrequentistConfig(difference_type="absolute")).compute_result()
    out[f"p{round(nu * 100)}"] = {"quantile": [a.quantile_hat, b.quantile_hat], "n": [a.n, b.n],
                                  "variance": [a.variance, b.variance], "expected": result.expected,
                                  "ci": list(result.ci), "p_value": result.p_value}
print(json.dumps(out, indent=1))
