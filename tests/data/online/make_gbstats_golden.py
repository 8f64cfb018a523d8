"""Regenerate gbstats_golden.json with gbstats 0.8.0 (MIT, GrowthBook).

gbstats pins pandas < 2 and numpy < 2, so it runs in a virtual environment of its own: create
one, ``pip install gbstats==0.8.0`` into it, and run this script with its Python from the
repository root, redirecting the output to ``tests/data/online/gbstats_golden.json``.
"""

import json

import numpy as np
from gbstats.frequentist.tests import FrequentistConfig, SequentialConfig, SequentialTwoSidedTTest, TwoSidedTTest
from gbstats.models.statistics import SampleMeanStatistic
from gbstats.utils import check_srm

rng = np.random.default_rng(20261123)
cases = []
for _ in range(12):
    n_a, n_b = (int(x) for x in rng.integers(50, 50_000, 2))
    scale = float(rng.uniform(1, 5))
    a = rng.gamma(2.0, scale, n_a)
    b = rng.gamma(2.0, scale * float(rng.uniform(0.97, 1.05)), n_b)
    stat_a = SampleMeanStatistic(n=n_a, sum=float(a.sum()), sum_squares=float((a * a).sum()))
    stat_b = SampleMeanStatistic(n=n_b, sum=float(b.sum()), sum_squares=float((b * b).sum()))
    rel = TwoSidedTTest(stat_a, stat_b, FrequentistConfig(difference_type="relative")).compute_result()
    ab = TwoSidedTTest(stat_a, stat_b, FrequentistConfig(difference_type="absolute")).compute_result()
    seq = SequentialTwoSidedTTest(stat_a, stat_b, SequentialConfig(difference_type="absolute")).compute_result()
    cases.append({
        "a": {"n": n_a, "mean": stat_a.mean, "variance": stat_a.variance},
        "b": {"n": n_b, "mean": stat_b.mean, "variance": stat_b.variance},
        "relative": {"expected": rel.expected, "ci": list(rel.ci), "p_value": rel.p_value},
        "absolute": {"expected": ab.expected, "ci": list(ab.ci), "p_value": ab.p_value},
        "sequential": {"expected": seq.expected, "ci": list(seq.ci), "p_value": seq.p_value},
    })
srm = []
for users, weights in [([5100, 4900], [0.5, 0.5]), ([5210, 4790, 10050], [0.25, 0.25, 0.5]),
                       ([9000, 1000], [0.9, 0.1]), ([1000, 1100, 0], [0.5, 0.5, 0.0])]:
    srm.append({"users": users, "weights": weights, "p_value": float(check_srm(users, weights))})
print(json.dumps({"generator": "gbstats 0.8.0", "ttest": cases, "srm": srm}, indent=1))
