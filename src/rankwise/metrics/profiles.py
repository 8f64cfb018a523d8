"""Named profiles: every convention (and metric meaning) at once, to reproduce another tool.

- ``trec_eval``: the defaults (trec_eval 10.0: scores compared as C doubles).
- ``trec_eval9`` / ``pytrec_eval``: trec_eval 9.x, which pytrec_eval embeds: scores compared as
  C floats (scores equal in float32 tie and are ordered by document id).
- ``ranx``: scores compared as float64, ties keep the run's order, nDCG gains are the labels at
  or above the relevance level (0 below it, ranx's ``-lN``); a judged query the run did not
  answer scores 0 in every metric (ranx's ``make_comparable=True``); ``precision``, ``recall``
  and ``f1`` without a cut-off are computed on everything retrieved (0 when nothing was).
- ``recbole``: ties keep the list order, binary nDCG gains, ``map@k`` normalised by min(R, k).
- ``elasticsearch``: ties keep the hits' order; ``precision@k``, ``recall@k``, ``mrr@k``,
  ``ndcg@k``/``dcg@k`` and ``err@k`` are the rank_eval metrics (gain 2^r - 1, ideal DCG over
  the ratings; ERR's maximum relevance is the largest judged label).
- ``torchmetrics``: only the scored documents exist (``universe='run'``), ties keep the input
  order; ``P@k``, ``recall@k``, ``mrr@k`` and ``map@k`` do not count documents scored <= 0 as
  retrieved and ``map@k`` is normalised by the relevant documents retrieved in the top k
  (``AP_ret``); ``ndcg@k`` averages the gains of tied documents (``ties='expected'``).
"""

from __future__ import annotations

import re
from typing import Any

from rankwise.errors import RankwiseError

ALL = 10**9
"""A cut-off that keeps every document (``map`` without ``@k`` under the torchmetrics profile)."""

PROFILES: dict[str, dict[str, Any]] = {
    "trec_eval": {},
    "trec_eval9": {"score_precision": "float32"},
    "pytrec_eval": {"score_precision": "float32"},
    "ranx": {"ties": "input", "score_precision": "float64", "gains": "above_level", "missing": "zero"},
    "recbole": {"ties": "input", "score_precision": "float64", "gains": "binary"},
    "elasticsearch": {"ties": "input", "score_precision": "float64"},
    "torchmetrics": {"ties": "input", "score_precision": "float64", "universe": "run"},
}

_TORCHMETRICS = {
    "p": "P(retrieved=positive)", "precision": "P(retrieved=positive)", "r": "R(retrieved=positive)",
    "recall": "R(retrieved=positive)", "map": "AP_ret(retrieved=positive)", "ap": "AP_ret(retrieved=positive)",
    "mrr": "RR(retrieved=positive)", "rr": "RR(retrieved=positive)", "ndcg": "nDCG(ties=expected)",
}
"""What torchmetrics' retrieval metrics compute, in rankwise's syntax (with ``@k`` or without)."""


_RANX_PLAIN = {"precision": "set_P", "recall": "set_recall", "f1": "set_F"}
"""ranx's metrics without a cut-off: over everything the run retrieved."""


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

    >>> metric_of("ranx", "f1", 1)
    'set_F'
    >>> metric_of("recbole", "map@10", 3)
    'ap_min@10'
    >>> metric_of("torchmetrics", "map@10", 1)
    'AP_ret(retrieved=positive)@10'
    >>> metric_of("elasticsearch", "ndcg@10", 3)
    {'dcg': {'k': 10, 'normalize': True}}
    """
    if isinstance(name, str) and profile == "ranx":
        return _RANX_PLAIN.get(name.strip().lower(), name)
    if not isinstance(name, str) or profile not in ("recbole", "elasticsearch", "torchmetrics"):
        return name
    m = re.fullmatch(r"([A-Za-z_]+)@(\d+)", name.strip())
    if profile == "torchmetrics":
        base = (m.group(1) if m else name.strip()).lower()
        if base not in _TORCHMETRICS:
            return name
        if not m and base in ("p", "precision", "r", "recall"):
            raise RankwiseError(f"{name}: under the torchmetrics profile, give a cut-off ({name}@k)")
        if not m and base in ("map", "ap"):
            return _TORCHMETRICS[base] + f"@{ALL}"
        return _TORCHMETRICS[base] + (f"@{m.group(2)}" if m else "")
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
