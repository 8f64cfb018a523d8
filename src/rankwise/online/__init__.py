"""Online experiments: hash assignment (GrowthBook-identical), event aggregation, A/B analysis
with ratio metrics, CUPED, sample ratio mismatch and peeking-safe tests; interleaving and
multileaving; off-policy (counterfactual) estimators.

>>> from rankwise import online
>>> online.assign(["u1", "u2"], "exp-1").tolist()
[1, 1]
"""

from __future__ import annotations

from rankwise.online.analysis import ABResult, analyze
from rankwise.online.counterfactual import estimate, estimate_all
from rankwise.online.events import Units, aggregate_units
from rankwise.online.hashing import assign, bucket_ranges, fnv1a32, gbhash, in_namespace
from rankwise.online.interleaving import Interleaved, distribution, interleave, preferences
from rankwise.online.list_distribution import ListDistribution
from rankwise.online.metric_table import parse_metric
from rankwise.online.metrics import Mean, Proportion, Ratio
from rankwise.online.moments import VariantMoments
from rankwise.online.ranking_estimators import pbm_ips, position_propensities, slate_estimate
from rankwise.online.statistics_table import read_statistics, statistics_table
from rankwise.stats.power import minimum_detectable_effect, power, sample_size
from rankwise.stats.sequential import always_valid, boundaries, msprt
from rankwise.stats.srm import SRM, srm_test
from rankwise.stats.twosample import Arm, Difference, compare_arms

__all__ = ["ABResult", "Arm", "Difference", "Interleaved", "ListDistribution", "Mean", "Proportion", "Ratio", "SRM",
           "Units", "VariantMoments", "aggregate_units", "always_valid", "analyze", "assign", "boundaries",
           "bucket_ranges", "compare_arms", "distribution", "estimate", "estimate_all", "fnv1a32", "gbhash",
           "in_namespace", "interleave", "minimum_detectable_effect", "msprt", "parse_metric", "pbm_ips",
           "position_propensities", "power", "preferences", "read_statistics", "sample_size", "slate_estimate",
           "srm_test", "statistics_table"]
