"""Gather the scores of a run's parts (chunks, partitions) into the RunScores the in-memory
path would give: queries in the same order, absent queries scored under ``missing='zero'``,
and the warnings of the parts added up into the whole run's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankwise.data.distinct import difference, distinct
from rankwise.engine.align import duplicates_notice, missing_notice, unjudged_notice
from rankwise.errors import Notice, RankwiseError
from rankwise.evaluation import EvaluationPlan, Result
from rankwise.metrics.compute import RunScores, straddling_notice


def query_codes(plan: EvaluationPlan, query_ids: np.ndarray) -> np.ndarray:
    """Position of each query id among the qrels' queries (the in-memory order)."""
    return np.searchsorted(plan.query_order, np.asarray(query_ids).astype(str))


def gather_scores(plan: EvaluationPlan, parts: Sequence[RunScores], name: str, source: str) -> RunScores:
    """One run's scores from the scores of its parts (each query in exactly one part).

    >>> from rankwise.data.load import load_run
    >>> plan = EvaluationPlan.build({"q1": {"d": 1}, "q2": {"d": 1}, "q3": {"d": 1}}, ["P@1"], None,
    ...                             {"missing": "zero"})
    >>> parts = [plan.score(load_run({"q3": {"d": 1.0}}), "skip"), plan.score(load_run({"q1": {"x": 1.0}}), "skip")]
    >>> scores = gather_scores(plan, parts, "run", "<run>")
    >>> scores.query_ids.tolist(), scores.values["P_1"].tolist()
    (['q1', 'q2', 'q3'], [0.0, 0.0, 1.0])
    """
    part_notices = [n for p in parts for n in p.warnings]
    parts = [p for p in parts if len(p.query_ids)]
    codes = [query_codes(plan, p.query_ids) for p in parts]
    present = np.concatenate(codes) if codes else np.empty(0, dtype=np.int64)
    absent = difference(np.arange(len(plan.index.query_ids)), present)
    if len(present) != len(distinct(present)):
        raise RankwiseError(f"{name}: a query was scored in two parts of the run (its rows were split)")
    missing = plan.conventions.missing
    if missing == "zero" and len(absent):
        parts.append(plan.score_absent(absent, name))
        codes.append(absent)
    if not parts:
        raise RankwiseError(f"{name}: no query has both a ranking and judgments (run {source}, "
                            f"qrels {plan.qrels.source})")
    order = np.argsort(np.concatenate(codes), kind="stable")
    first = parts[0]
    values = {col: np.concatenate([p.values[col] for p in parts])[order] for col in first.values}
    details = {metric: {key: np.concatenate([np.asarray(p.details[metric][key]) for p in parts])[order]
                        for key in fields}
               for metric, fields in first.details.items()}
    for spec in plan.specs:  # the run's name is known once its last row is read
        if spec.family.value_kind == "runid":
            for col in spec.result_columns():
                values[col] = np.full(len(order), name, dtype=object)
    notices = gather_notices(part_notices, name, _metric_order(plan))
    if len(absent):
        notices.insert(_before_tie_notices(notices), missing_notice(name, len(absent), missing))
    return RunScores(name, np.concatenate([p.query_ids for p in parts])[order], values, dict(first.kinds),
                     dict(first.summary_rule), notices, details)


def _before_tie_notices(notices: list[str]) -> int:
    """Where the missing-queries warning goes: after duplicates and unjudged queries (as in
    the in-memory order), before the tie warnings."""
    kinds = [getattr(n, "kind", "note") for n in notices]
    return next((i for i, k in enumerate(kinds) if k == "tie_straddling"), len(notices))


def _metric_order(plan: EvaluationPlan) -> dict[str, int]:
    """The order in which ``compute_scores`` visits the metrics (and writes their warnings)."""
    from rankwise.metrics.registry import ORDER

    labels = [s.label for group in plan.groups.values()
              for s in sorted(group, key=lambda s: ORDER.get(s.name, len(ORDER)))]
    return {label: i for i, label in reversed(list(enumerate(labels)))}


KIND_ORDER = {"duplicates": 0, "unjudged_queries": 1, "tie_straddling": 3}
"""Where each kind of warning comes in a run's warnings (reader notes first, missing queries 2)."""


def gather_notices(notices: Sequence[str], name: str, metric_order: dict[str, int] | None = None) -> list[str]:
    """The parts' warnings as one run's: counts added up by kind (and metric and cut-off), the
    first example kept, written again with the run's name; others once each. The
    missing-queries warnings of the parts are left out (the whole run's is written after).

    >>> parts = [duplicates_notice("r", 2, "first"), duplicates_notice("r", 3, "first"),
    ...          unjudged_notice("r", 1, 4, "q7"), unjudged_notice("r", 2, 5, "q9")]
    >>> [str(n) for n in gather_notices(parts, "bm25")]  # doctest: +NORMALIZE_WHITESPACE
    ['bm25: 5 duplicate (query, document) row(s) dropped, keeping the first occurrence',
     "bm25: 3 query(ies) of the run have no judgments and were left out (9 rows), e.g. 'q7'"]
    """
    totals: dict[tuple, list] = {}
    for notice in notices:
        kind = getattr(notice, "kind", "note")
        if kind == "missing_queries":
            continue
        details = getattr(notice, "details", {})
        if kind == "duplicates":
            key: tuple = (kind, details["policy"])
        elif kind == "unjudged_queries":
            key = (kind,)
        elif kind == "tie_straddling":
            key = (kind, getattr(notice, "metric", None), details["k"], details["ties"])
        else:
            key = ("as is", str(notice))
        entry = totals.setdefault(key, [notice, 0, 0])
        entry[1] += (notice.count or 0) if isinstance(notice, Notice) else 0
        entry[2] += details.get("rows", 0)
    out: list[str] = []
    metric_order = metric_order or {}

    def place(key: tuple) -> tuple:
        if key[0] == "tie_straddling":
            return (KIND_ORDER[key[0]], metric_order.get(key[1], len(metric_order)), key[2])
        return (KIND_ORDER.get(key[0], -1), 0, 0)

    for key in sorted(totals, key=place):
        notice, count, rows = totals[key]
        if key[0] == "duplicates":
            out.append(duplicates_notice(name, count, key[1]))
        elif key[0] == "unjudged_queries":
            out.append(unjudged_notice(name, count, rows, notice.details["example"]))
        elif key[0] == "tie_straddling":
            out.append(straddling_notice(name, key[1], count, key[2], key[3]))
        else:
            out.append(notice)
    return out


class _Named:
    """What ``_unique_names`` reads and renames: a run's name and source."""

    def __init__(self, name: str, source: str) -> None:
        self.name, self.source = name, source


def _renamed(notice: str, old: str, new: str) -> str:
    """A run's warning written for its new name."""
    text = str(notice).replace(f"{old}: ", f"{new}: ", 1)
    if isinstance(notice, Notice):
        return Notice(text, notice.kind, new if notice.run == old else notice.run, notice.metric, notice.count,
                      notice.details)
    return text


def named_result(plan: EvaluationPlan, scored: list[tuple[RunScores, str]]) -> Result:
    """The Result of runs scored by an engine, given with their sources: runs sharing a name
    are renamed as the in-memory path renames them (with the same warnings)."""
    from rankwise.evaluation import _unique_names

    warnings: list[str] = list(plan.notes)
    named = [_Named(scores.name, source) for scores, source in scored]
    _unique_names(named, warnings)  # type: ignore[arg-type]  # reads and sets .name only
    for (scores, _), entry in zip(scored, named, strict=True):
        if entry.name != scores.name:
            scores.warnings = [_renamed(n, scores.name, entry.name) for n in scores.warnings]
            scores.name = entry.name
        warnings.extend(n for n in scores.warnings if n not in warnings)
    return plan.result([scores for scores, _ in scored], warnings)
