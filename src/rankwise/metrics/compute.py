"""Compute parsed metrics on one aligned run: the single dispatcher that ``evaluate``,
``rankwise trec-eval`` and the streaming states share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.engine.conventions import Conventions
from rankwise.engine.ranked import RankedLists
from rankwise.errors import Notice, RankwiseError
from rankwise.metrics.family import MetricSpec
from rankwise.metrics.ranking.average_precision import geometric_mean
from rankwise.metrics.registry import ORDER, all_families


@dataclass
class RunScores:
    """Per-query values of one run: column name -> array aligned with ``query_ids``."""

    name: str
    query_ids: np.ndarray
    values: dict[str, Any]
    kinds: dict[str, str]
    summary_rule: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-query details of metrics that have them (Elasticsearch's metric_details)."""

    def summary(self, column: str) -> Any:
        """The summary of a column over queries: mean, sum, geometric mean or None."""
        rule = self.summary_rule[column]
        vals = self.values[column]
        if rule == "sum":
            if self.kinds[column] in ("int", "num_q"):
                return int(np.sum(vals))
            v = np.asarray(vals, dtype=np.float64)
            return float(np.cumsum(v)[-1]) if len(v) else 0.0
        if rule == "mean":
            v = np.asarray(vals, dtype=np.float64)
            return float(np.cumsum(v)[-1] / len(v)) if len(v) else 0.0
        if rule == "nanmean":  # queries where the value is undefined (NaN) are left out
            v = np.asarray(vals, dtype=np.float64)
            v = v[~np.isnan(v)]
            return float(np.cumsum(v)[-1] / len(v)) if len(v) else float("nan")
        if rule == "gmean":
            return geometric_mean(np.asarray(vals, dtype=np.float64))
        return None


def straddling_notice(run: str, metric: str, queries: int, k: int, ties: str) -> Notice:
    """The warning for queries where tied documents with different labels straddle cut-off
    ``k``, so that the tie rule decides the value.

    >>> straddling_notice("bm25", "P@2", 1, 2, "trec").startswith("bm25: P@2: in 1 query(ies)")
    True
    """
    return Notice(f"{run}: {metric}: in {queries} query(ies) documents with different labels tie across "
                  f"cut-off {k}, so the tie rule (ties={ties!r}) decides the value; ties='expected' averages "
                  "over orders", "tie_straddling", run=run, metric=metric, count=queries,
                  details={"k": k, "ties": ties})


def _tie_aware_names() -> str:
    return ", ".join(f.canonical or f.name for f in all_families() if f.tie_aware and f.value_kind == "float")


def continuous_families() -> str:
    """The families defined on continuous relevance, for messages."""
    return ", ".join(dict.fromkeys(f.canonical or f.name for f in all_families() if f.continuous))


def check_continuous(specs: Sequence[MetricSpec]) -> None:
    """Refuse, before any work, a metric that needs integer grades on continuous relevance.

    >>> from rankwise.metrics.names import parse_metric
    >>> check_continuous([parse_metric("ndcg@10"), parse_metric("ndcg_signed@5")])
    >>> check_continuous([parse_metric("P@10")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.RankwiseError: P@10 needs integer relevance grades; continuous relevance feeds nDCG, ...
    """
    for spec in specs:
        if not spec.family.continuous or spec.rel is not None:
            raise RankwiseError(f"{spec.label} needs integer relevance grades; continuous relevance feeds "
                                f"{continuous_families()} (their gains are the values)")


def compute_scores(rl: RankedLists, specs: Sequence[MetricSpec], conv: Conventions) -> RunScores:
    """Compute every requested column on one aligned run, each family once per parameter set.

    >>> from rankwise.metrics.names import parse_metric
    >>> from rankwise.metrics.ranking._example import example
    >>> compute_scores(example(), [parse_metric("P@2"), parse_metric("map")], Conventions()).values
    {'map': array([0.5]), 'P_2': array([0.5])}
    """
    values: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    rules: dict[str, str] = {}
    notes: list[str] = []
    details: dict[str, dict[str, Any]] = {}
    done: set[tuple] = set()
    if getattr(rl, "level_gains", None) is not None:
        check_continuous(specs)
    for spec in sorted(specs, key=lambda s: ORDER.get(s.name, len(ORDER))):
        if spec.key() in done:
            continue
        done.add(spec.key())
        fam = spec.family
        cols = spec.result_columns()
        if rl.tie_size is not None and not fam.tie_aware:
            raise RankwiseError(f"{spec.label}: no tie-aware form; ties='expected' supports {_tie_aware_names()}")
        lists = rl if spec.rel is None or spec.rel == rl.rel_level else rl.with_rel_level(spec.rel)
        out = spec.compute(lists, conv)
        if fam.details is not None:
            details[spec.label] = fam.details(lists, spec.arguments(), spec.cutoffs)
        watch = fam.cutoff is not None and fam.cutoff.type is int and fam.cutoff_sensitive
        if watch and hasattr(rl, "ties_straddling"):
            for k in spec.cutoffs:
                straddling = rl.ties_straddling(int(k))
                if straddling:
                    notes.append(straddling_notice(rl.run_name, spec.label, straddling, int(k), conv.ties))
        if fam.undefined is not None and conv.zero_division != "0" and isinstance(lists, RankedLists):
            count = {"no_relevant": lists.num_rel, "no_retrieved": lists.num_ret,
                     "no_nonrelevant": lists.num_judged_nonrel}[fam.undefined]
            empty = count == 0
            out = np.array(out, dtype=np.float64)
            out[empty] = conv.undefined_value
        if fam.value_kind in ("string", "runid"):
            values[cols[0]] = out
        else:
            arr = np.asarray(out)
            if arr.ndim == 1:
                arr = arr.reshape(-1, 1)
            for i, col in enumerate(cols):
                values[col] = arr[:, i]
        for col in cols:
            kinds[col] = {"runid": "string", "num_q": "int"}.get(fam.value_kind, fam.value_kind)
            undefined_left_out = fam.undefined is not None and conv.zero_division == "nan" and fam.summary == "mean"
            rules[col] = "nanmean" if undefined_left_out else fam.summary
    return RunScores(rl.run_name, rl.query_ids, values, kinds, rules, notes, details)
