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
from rankwise.metrics.family import Family, MetricSpec, ProfileName
from rankwise.metrics.registry import all_families

PROFILES: dict[str, dict[str, Any]] = {
    "trec_eval": {},
    "trec_eval9": {"score_precision": "float32"},
    "pytrec_eval": {"score_precision": "float32"},
    "ranx": {"ties": "input", "score_precision": "float64", "gains": "above_level", "missing": "zero"},
    "recbole": {"ties": "input", "score_precision": "float64", "gains": "binary"},
    "elasticsearch": {"ties": "input", "score_precision": "float64"},
    "torchmetrics": {"ties": "input", "score_precision": "float64", "universe": "run"},
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


def metric_of(profile: str | None, name: Any, max_label: int) -> MetricSpec | None:
    """The metric a name means under a profile, read from the families' ``profiles``
    declarations; None when the profile gives the name no meaning of its own.

    >>> metric_of("ranx", "f1", 1).name
    'set_F'
    >>> metric_of("recbole", "map@10", 3).name
    'AP_min'
    >>> s = metric_of("torchmetrics", "map@10", 1); s.name, s.conventions
    ('AP_ret', (('retrieved', 'positive'),))
    >>> s = metric_of("elasticsearch", "ndcg@10", 3); s.name, s.params
    ('es_dcg', (('k', 10), ('normalize', True)))
    """
    if profile is None or not isinstance(name, str):
        return None
    m = re.fullmatch(r"([A-Za-z_0-9]+)(?:@(\d+))?", name.strip())
    if not m:
        return None
    base, k = m.group(1).lower(), m.group(2)
    refused = False
    for family in all_families():
        for meaning in family.profiles:
            if meaning.profile != profile or base not in meaning.names:
                continue
            if k is None and meaning.cutoff in ("required", "only"):
                refused = refused or meaning.cutoff == "required"
                continue
            if k is not None and meaning.cutoff == "none":
                continue
            return _spec(family, meaning, name, None if k is None else int(k), max_label)
    if refused:
        raise RankwiseError(f"{name}: under the {profile} profile, give a cut-off ({name}@k)")
    return None


def _spec(family: Family, meaning: ProfileName, label: str, k: int | None, max_label: int) -> MetricSpec:
    params = dict(meaning.arguments)
    if meaning.cutoff_param is not None and k is not None:
        params[meaning.cutoff_param] = k
    if meaning.max_label is not None:
        params[meaning.max_label] = max_label
    cutoffs: tuple = ()
    if family.cutoff is not None:
        cutoffs = ((k,) if k is not None else (meaning.without_cutoff,) if meaning.without_cutoff
                   else family.cutoff.default)
    order = [p.name for p in family.params]
    values = tuple((key, family.param(key).convert(params[key], label))  # type: ignore[union-attr]
                   for key in sorted(params, key=order.index))
    printable = ",".join(f"{key}={value}" for key, value in values) or None
    return MetricSpec(family, cutoffs, values, printable if family.syntax != "none" else None, label,
                      conventions=tuple(sorted(meaning.conventions)))
