"""Named profiles: every convention (and metric meaning) at once, to reproduce another tool.

- ``trec_eval``: the defaults.
- ``ranx``: scores compared as float64, ties keep the run's order, nDCG gains are the labels at
  or above the relevance level (0 below it, ranx's ``-lN``).
- ``recbole``: ties keep the list order, binary nDCG gains, ``map@k`` normalised by min(R, k).
- ``elasticsearch``: ties keep the hits' order; ``precision@k``, ``recall@k``, ``mrr@k``,
  ``ndcg@k``/``dcg@k`` and ``err@k`` are the rank_eval metrics (gain 2^r - 1, ideal DCG over
  the ratings; ERR's maximum relevance is the largest judged label).
"""

from __future__ import annotations

import re
from typing import Any

from rankwise.errors import RankwiseError

PROFILES: dict[str, dict[str, Any]] = {
    "trec_eval": {},
    "ranx": {"ties": "input", "score_precision": "float64", "gains": "above_level"},
    "recbole": {"ties": "input", "score_precision": "float64", "gains": "binary"},
    "elasticsearch": {"ties": "input", "score_precision": "float64"},
}


def conventions_of(profile: str | None, explicit: dict[str, Any]) -> dict[str, Any]:
    """The profile's conventions, overridden by the ones given explicitly.

    >>> conventions_of("ranx", {"rel_level": 2})["gains"]
    'above_level'
    """
    if profile is None:
        return dict(explicit)
    if profile not in PROFILES:
        raise RankwiseError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    return {**PROFILES[profile], **explicit}


def metric_of(profile: str | None, name: Any, max_label: int) -> Any:
    """The metric a name means under a profile (a name or an Elasticsearch metric object).

    >>> metric_of("recbole", "map@10", 3)
    'ap_min@10'
    >>> metric_of("elasticsearch", "ndcg@10", 3)
    {'dcg': {'k': 10, 'normalize': True}}
    """
    if not isinstance(name, str) or profile not in ("recbole", "elasticsearch"):
        return name
    m = re.fullmatch(r"([A-Za-z_]+)@(\d+)", name.strip())
    if not m:
        return name
    base, k = m.group(1).lower(), int(m.group(2))
    if profile == "recbole":
        return f"ap_min@{k}" if base in ("map", "ap") else name
    es = {"precision": {"precision": {"k": k}}, "p": {"precision": {"k": k}},
          "recall": {"recall": {"k": k}}, "r": {"recall": {"k": k}},
          "mrr": {"mean_reciprocal_rank": {"k": k}}, "rr": {"mean_reciprocal_rank": {"k": k}},
          "ndcg": {"dcg": {"k": k, "normalize": True}}, "dcg": {"dcg": {"k": k}},
          "err": {"expected_reciprocal_rank": {"k": k, "maximum_relevance": max_label}}}
    return es.get(base, name)
