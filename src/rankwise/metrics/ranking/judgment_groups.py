"""Measures averaged over judgment groups (trec_eval ``-R qrels_jg``): each group of a query's
qrels (the iteration field names it) is a full set of judgments, the run is scored against each
group as against ordinary qrels, and the query's value is the mean over its groups (summed in
group-name order, divided only when there are several, as trec_eval does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.data.containers import Qrels, Run
from rankwise.data.prefs import Prefs
from rankwise.engine.align import QrelsIndex, align
from rankwise.engine.conventions import Conventions
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Cutoff, Family, QueryLists
from rankwise.metrics.ranking.average_precision import average_precision
from rankwise.metrics.ranking.precision import precision_at, r_precision_mult


@dataclass
class GroupedLists(QueryLists):
    """Rankings scored once per (query, judgment group): ``ranked`` holds one list per pair,
    ``first``/``count`` where each query's groups start in it (in group-name order)."""

    ranked: RankedLists | None = None
    order: np.ndarray | None = None
    """Rows of ``ranked`` sorted by (query, group name)."""
    first: np.ndarray | None = None
    count: np.ndarray | None = None

    def ties_straddling(self, k: int) -> int:
        """(query, group) lists where tied documents of different labels straddle cut-off k."""
        assert self.ranked is not None, "built by group_lists"
        return self.ranked.ties_straddling(k)

    def average(self, values: np.ndarray) -> np.ndarray:
        """Per query: the sum over its groups (sequential, group-name order), divided by their
        number when there are several.

        >>> g = GroupedLists(np.array(["q"]), None, np.array([1, 0]), np.array([0]), np.array([2]))
        >>> g.average(np.array([0.25, 0.5])).tolist()
        [0.375]
        """
        assert self.order is not None and self.first is not None and self.count is not None, "built by group_lists"
        first, count = self.first, self.count
        v = np.asarray(values, dtype=np.float64)
        v = v.reshape(len(v), -1)[self.order]
        out = np.zeros((self.n_queries, v.shape[1]))
        for step in range(int(count.max(initial=0))):  # few groups per query: a loop over groups
            has = count > step
            out[has] += v[first[has] + step]
        out = np.where((count > 1)[:, None], out / np.maximum(count, 1)[:, None], out)
        return out[:, 0] if out.shape[1] == 1 else out


_J: dict[str, Any] = {"judgments": "qrels_jg", "trec_eval": True, "nicknames": ("qrels_jg",)}

MAP_AVGJG = Family("map_avgjg", lambda g, conv, ks, a: g.average(average_precision(g.ranked)),
                   "AP against each judgment group of the query, averaged over the groups.", **_J)
P_AVGJG = Family("P_avgjg",
                 lambda g, conv, ks, a: g.average(np.column_stack([precision_at(g.ranked, k) for k in ks])),
                 "P@k against each judgment group, averaged over the groups.",
                 cutoff=Cutoff(int, (5, 10, 15, 20, 30, 100, 200, 500, 1000)), **_J)
RPREC_MULT_AVGJG = Family(
    "Rprec_mult_avgjg",
    lambda g, conv, ks, a: g.average(np.column_stack([r_precision_mult(g.ranked, x) for x in ks])),
    "Precision at int(x * R + 0.9) against each judgment group, averaged over the groups.",
    cutoff=Cutoff(float, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), "multiple of R"),
    cutoff_sensitive=False, **_J)


def grouped_lists(groups: Prefs, run: Run, conventions: Conventions) -> tuple[GroupedLists, list[str]]:
    """Align the run with each judgment group of each query (qrels ``groups`` of kind
    ``qrels_jg``): one ranked list per (query, group), under the same conventions.

    >>> from rankwise.data.containers import Run
    >>> g = Prefs.from_rows([("q", "a", "0", "d1", 1), ("q", "b", "0", "d2", 1)], "qrels_jg")
    >>> lists, _ = grouped_lists(g, Run.from_dict({"q": {"d1": 2.0, "d2": 1.0}}), Conventions())
    >>> lists.average(average_precision(lists.ranked)).tolist()   # group a: 1/1, group b: (1/2) / 1
    [0.75]
    """
    pairs = sorted({(q, g) for q, g in zip(groups.query.tolist(), groups.group.tolist(), strict=True)},
                   key=lambda p: (p[0].encode(), p[1].encode()))
    pseudo = {pair: f"{i}" for i, pair in enumerate(pairs)}
    judgments: dict[str, dict[str, int]] = {}
    for q, g, d, v in zip(groups.query.tolist(), groups.group.tolist(), groups.doc.tolist(),
                          groups.level.tolist(), strict=True):
        judgments.setdefault(pseudo[(q, g)], {})[d] = int(v)
    ranked = run.to_dict()
    expanded = {pseudo[(q, g)]: ranked[q] for q, g in pairs if q in ranked}
    rl, notes = align(Run.from_dict(expanded, name=run.name), QrelsIndex.build(Qrels.from_dict(judgments)),
                      conventions)
    back = {v: k for k, v in pseudo.items()}
    keys = [back[str(p)] for p in rl.query_ids.tolist()]
    order = np.asarray(sorted(range(len(keys)), key=lambda i: (keys[i][0].encode(), keys[i][1].encode())),
                       dtype=np.int64)
    queries = [keys[i][0] for i in order]
    ids: list[str] = []
    first: list[int] = []
    count: list[int] = []
    for i, q in enumerate(queries):
        if not ids or ids[-1] != q:
            ids.append(q)
            first.append(i)
            count.append(0)
        count[-1] += 1
    lists = GroupedLists(np.asarray(ids, dtype=object), rl, order, np.asarray(first, dtype=np.int64),
                         np.asarray(count, dtype=np.int64), run_name=run.name, rel_level=rl.rel_level)
    extra = len(set(ranked) - {q for q, _ in pairs})
    if extra:
        notes.append(f"{run.source}: {extra} query(ies) of the run have no judgments; they are left out")
    return lists, notes
