"""A/B experiments: hash assignment (GrowthBook-identical), event aggregation, the analysis of
means, proportions, ratios and quantiles with CUPED, caps, slices, guardrails, sample-ratio
checks and sequential designs. Every statistic comes from ``rankwise.stats``.

An experiment is described by settings objects (``DataSource``, ``ExperimentDesign``,
``Adjustments`` inside one ``ABSettings``); ``plan`` checks them once and ``run`` composes the
stages (``source`` -> ``compare`` -> ``corrections`` -> ``looks``). ``analyze`` builds the
settings from keywords.

>>> from rankwise import experiments
>>> experiments.assign(["u1", "u2"], "exp-1").tolist()
[1, 1]
"""

from __future__ import annotations

from rankwise.experiments.ab_tests import AB_TESTS, ABTest
from rankwise.experiments.analysis import ABResult, analyze, run
from rankwise.experiments.events import Units, aggregate_units
from rankwise.experiments.hashing import assign, bucket_ranges, fnv1a32, gbhash, in_namespace
from rankwise.experiments.metric_table import parse_metric
from rankwise.experiments.metrics import Mean, Proportion, Quantile, Ratio
from rankwise.experiments.moments import VariantMoments
from rankwise.experiments.settings import ABSettings, Adjustments, DataSource, ExperimentDesign, Plan, plan
from rankwise.experiments.statistics_table import read_statistics, statistics_table
from rankwise.stats.power import minimum_detectable_effect, power, sample_size
from rankwise.stats.sequential import always_valid, boundaries, msprt
from rankwise.stats.srm import SRM, srm_test
from rankwise.stats.twosample import Arm, Difference, compare_arms

__all__ = ["AB_TESTS", "ABResult", "ABSettings", "ABTest", "Adjustments", "Arm", "DataSource", "Difference",
           "ExperimentDesign", "Mean", "Plan", "Proportion", "Quantile", "Ratio", "SRM", "Units", "VariantMoments",
           "aggregate_units", "always_valid", "analyze", "assign", "boundaries", "bucket_ranges", "compare_arms",
           "fnv1a32", "gbhash", "in_namespace", "minimum_detectable_effect", "msprt", "parse_metric", "plan", "power",
           "read_statistics", "run", "sample_size", "srm_test", "statistics_table"]
