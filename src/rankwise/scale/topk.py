"""The no-shuffle top-k combiner: where a run is not partitioned by query and every measure
reads only the top k documents of each ranking (``ndcg@10``, ``P@10``, ``recall@100`` ...),
each partition keeps, per query, the rows that can still be in the top k, and the driver
scores what the partitions kept, instead of shuffling the whole run by query.

A row can be in a query's top k only if fewer than k rows of its own partition score above
it: the partition keeps every row whose score rank within its query (ties sharing the lowest
rank) is at most k. Every tie rule (trec_eval's, input order, doc id ascending) picks its
top k among rows scoring at least the k-th best score, so the kept rows hold each query's
top k under any of them, and the documents tied with the k-th (what the tie-straddling
warning reports). Scores are ranked in the precision the conventions compare them in
(float32 under ``score_precision='float32'``). Rows keep their place in the input (a
partition and row key), so ties in input order come out as in the whole run.

What the combiner cannot see: a document listed twice for one query in two different
partitions, where neither copy is among its partition's kept rows. Within a partition every
duplicate is kept (so ``duplicates='error'`` fails as in memory). The combiner therefore runs
only under ``duplicates='error'`` (the default), where a run with duplicates is an error
anyway, and never under ``first`` or ``best``, whose values depend on copies it drops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.engine.align import unjudged_notice
from rankwise.errors import Notice
from rankwise.evaluation import EvaluationPlan
from rankwise.metrics.compute import RunScores
from rankwise.metrics.family import ALL
from rankwise.scale.frames import score_frame
from rankwise.scale.gather import gather_scores

NOT_TOP_K = frozenset({"recall_at_precision"})
"""Families whose cut-off is a rank but whose value also reads documents below it."""


def top_k_needed(plan: EvaluationPlan) -> int | None:
    """How many documents per query every measure of ``plan`` reads at most, or None where some
    measure (or convention) reads whole rankings, so the combiner does not apply.

    The conventions must keep the ranking a function of the top k alone: every retrieved
    document in the universe and the ranking (``universe='qrels'``, ``retrieved='all'``),
    no judged-only filter, ``duplicates='error'`` and no expected-value ties.

    >>> top_k_needed(EvaluationPlan.build({"q": {"d": 1}}, ["ndcg@10", "P@5", "recall@100"], None, {}))
    100
    >>> top_k_needed(EvaluationPlan.build({"q": {"d": 1}}, ["ndcg@10", "map"], None, {})) is None
    True
    """
    conv = plan.conventions
    if (conv.duplicates != "error" or conv.judged_only or conv.universe != "qrels" or conv.retrieved != "all"
            or conv.ties == "expected"):
        return None
    deepest = 0
    for spec in plan.specs:
        if any(key not in ("depth", "gains", "zero_division") for key, _ in spec.conventions):
            return None
        k = _spec_depth(spec)
        if k is None:
            return None
        deepest = max(deepest, k)
    if conv.depth is not None:
        deepest = min(deepest, conv.depth)
    return deepest or None


def _spec_depth(spec: Any) -> int | None:
    """The rank cut-off a measure reads up to (``MetricSpec.depth``: its largest integer
    cut-off, or Elasticsearch's ``k``), or None if it reads whole rankings."""
    if spec.family.judgments != "qrels" or spec.family.name in NOT_TOP_K:
        return None
    depth = spec.depth()
    return None if depth is None or depth >= ALL else depth


def keep_top_rows(frame: Any, columns: tuple[str, str, str], k: int, score_precision: str = "float64"
                  ) -> tuple[Any, Any]:
    """The rows of one partition (pandas) that can be among their query's top ``k``: score rank
    within the query at most ``k`` (ties share the lowest rank), plus every row whose score is
    not a number, every row of a (query, document) pair listed twice and each query's first row,
    so that the driver reports them and meets the queries in the order the whole run would;
    and how many rows of each query it dropped (a pandas
    Series), which the warning about unjudged queries counts.

    >>> import pandas as pd
    >>> part = pd.DataFrame({"q": ["a", "a", "a", "a", "a", "b"], "d": ["0", "1", "2", "3", "4", "1"],
    ...                      "s": [0.05, 0.9, 0.5, 0.5, 0.1, 0.3]})
    >>> kept, dropped = keep_top_rows(part, ("q", "d", "s"), 2)
    >>> kept["d"].tolist(), dropped.to_dict()   # 0.5 ties the 2nd: both kept; "0" is a's first row
    (['0', '1', '2', '3', '1'], {'a': 1})
    """
    query, doc, score = columns
    if len(frame) == 0:
        return frame, frame[query].value_counts()
    values = frame[score].to_numpy(dtype=np.float64)
    if score_precision == "float32":
        values = values.astype(np.float32)
    ranks = frame.assign(**{score: values}).groupby(query, sort=False)[score].rank(method="min", ascending=False)
    keep = (ranks <= k).to_numpy() | np.isnan(values)
    keep |= frame.duplicated(subset=[query, doc], keep=False).to_numpy()
    keep |= ~frame.duplicated(subset=[query]).to_numpy()  # each query's first row: where it appears
    return frame[keep], frame[query][~keep].value_counts()


def score_kept(plan: EvaluationPlan, parts: list[tuple[Any, Any]], columns: tuple[str, str, str], name: str,
               source: str) -> RunScores:
    """One run's scores from what ``keep_top_rows`` returned for each partition: the rows kept
    (pandas frames carrying ``ORDER_COLUMN``, so that they come back in input order) and the
    counts of rows dropped, added to the rows the unjudged-queries warning counts.

    >>> import pandas as pd
    >>> from rankwise.scale.frames import ORDER_COLUMN
    >>> plan = EvaluationPlan.build({"a": {"1": 1, "3": 1}}, ["P@1"], None, {})
    >>> parts = [pd.DataFrame({"q": ["a", "a"], "d": ["1", "2"], "s": [0.2, 0.1], ORDER_COLUMN: [0, 1]}),
    ...          pd.DataFrame({"q": ["a"], "d": ["3"], "s": [0.9], ORDER_COLUMN: [2]})]
    >>> kept = [keep_top_rows(p, ("q", "d", "s"), 1) for p in parts]
    >>> score_kept(plan, kept, ("q", "d", "s"), "run", "<frame>").values["P_1"].tolist()   # doc 3 is first
    [1.0]
    """
    import pandas as pd

    frame = pd.concat([rows for rows, _ in parts], ignore_index=True)
    scores = gather_scores(plan, [score_frame(plan, frame, columns, source)], name, source)
    dropped = pd.concat([counts for _, counts in parts])
    unjudged = int(dropped[~dropped.index.astype(str).isin(plan.query_order)].sum()) if len(dropped) else 0
    if unjudged:
        scores.warnings = [unjudged_notice(name, n.count or 0, n.details["rows"] + unjudged, n.details["example"])
                           if isinstance(n, Notice) and n.kind == "unjudged_queries" else n for n in scores.warnings]
    return scores
