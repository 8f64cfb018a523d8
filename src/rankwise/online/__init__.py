"""The former home of online experiments, kept so that ``from rankwise import online`` goes on
working: it re-exports the public names of ``rankwise.experiments`` (A/B tests),
``rankwise.interleaving`` and ``rankwise.counterfactual``, which new code imports directly.

>>> from rankwise import online
>>> online.assign(["u1", "u2"], "exp-1").tolist()
[1, 1]
"""

from __future__ import annotations

from rankwise.counterfactual import estimate, estimate_all, pbm_ips, position_propensities, slate_estimate
from rankwise.experiments import (
                                  SRM,
                                  ABResult,
                                  Arm,
                                  Difference,
                                  Mean,
                                  Proportion,
                                  Quantile,
                                  Ratio,
                                  Units,
                                  VariantMoments,
                                  aggregate_units,
                                  always_valid,
                                  analyze,
                                  assign,
                                  boundaries,
                                  bucket_ranges,
                                  compare_arms,
                                  fnv1a32,
                                  gbhash,
                                  in_namespace,
                                  minimum_detectable_effect,
                                  msprt,
                                  parse_metric,
                                  power,
                                  read_statistics,
                                  sample_size,
                                  srm_test,
                                  statistics_table,
)
from rankwise.interleaving import Interleaved, ListDistribution, distribution, interleave, preferences

__all__ = ["ABResult", "Arm", "Difference", "Interleaved", "ListDistribution", "Mean", "Proportion", "Quantile",
           "Ratio", "SRM", "Units", "VariantMoments", "aggregate_units", "always_valid", "analyze", "assign",
           "boundaries", "bucket_ranges", "compare_arms", "distribution", "estimate", "estimate_all", "fnv1a32",
           "gbhash", "in_namespace", "interleave", "minimum_detectable_effect", "msprt", "parse_metric", "pbm_ips",
           "position_propensities", "power", "preferences", "read_statistics", "sample_size", "slate_estimate",
           "srm_test", "statistics_table"]
