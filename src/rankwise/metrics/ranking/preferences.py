"""trec_eval's preference measures (``-R prefs`` / ``-R qrels_prefs``), counted as trec_eval 10.0
counts them.

Per query, the documents named in the judgments get internal ranks: the retrieved ones in run
order (score descending, ties by doc id ascending, as trec_eval's preference code sorts them),
then the others by doc id. Per judgment group (JG):

- one sub-group: equivalence classes by level; every document of a higher class is preferred
  to every document of a lower class;
- several sub-groups: a preference matrix (a document preferred to every lower-level document
  of its sub-group), closed transitively; a cycle is an error.

A preference A > B is *fulfilled* when A ranks above B; *retrieved* when both were retrieved,
*implied* when exactly one was, *not occurring* when neither was. Documents with level > 0 are
relevant, level 0 non-relevant. Judgment sets are small (tens to hundreds of documents per
query), so the counting runs per query on small matrices, exactly as trec_eval does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.data.containers import Run
from rankwise.data.prefs import Prefs
from rankwise.errors import RankwiseError
from rankwise.metrics.family import Compute, Family, QueryLists, of_lists


@dataclass
class JudgmentGroup:
    """The counts of one JG of one query (trec_eval's ``JG``)."""

    fulfilled_ret: int = 0
    possible_ret: int = 0
    fulfilled_imp: int = 0
    possible_imp: int = 0
    possible_notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    classes: list[tuple[float, np.ndarray]] | None = None
    """Equivalence classes (level, sorted internal ranks), best first; None for a matrix JG."""
    matrix: np.ndarray | None = None
    levels: np.ndarray | None = None
    """Matrix JG: the level of each internal rank in this JG (-1 if not in it)."""


@dataclass
class QueryPrefs:
    """Everything the measures need for one query."""

    groups: list[JudgmentGroup]
    num_judged: int
    num_judged_ret: int
    counts: np.ndarray
    """counts[i, j]: how many JGs prefer internal rank i to internal rank j."""


@dataclass
class PrefsLists(QueryLists):
    """The run's preference counts per evaluated query (the "lists" preference families read)."""

    queries: list[QueryPrefs] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _internal_ranks(run_docs: list[str], run_scores: np.ndarray, judged: list[str], depth: int | None
                    ) -> tuple[dict[str, int], int]:
    """Internal rank of every judged document and the number retrieved (see the module doc)."""
    order = sorted(range(len(run_docs)), key=lambda i: (-run_scores[i], run_docs[i].encode()))
    if depth is not None:
        order = order[:depth]
    judged_set = set(judged)
    ranks: dict[str, int] = {}
    for i in order:
        if run_docs[i] in judged_set:
            ranks[run_docs[i]] = len(ranks)
    retrieved = len(ranks)
    for doc in sorted(judged_set - set(ranks), key=str.encode):
        ranks[doc] = len(ranks)
    return ranks, retrieved


def _classes_group(rows: list[tuple[str, float, int]], njr: int, counts: np.ndarray, query: str) -> JudgmentGroup:
    """One sub-group: equivalence classes by level (rows sorted by level descending, rank)."""
    classes: list[tuple[float, list[int]]] = []
    for _, level, rank in rows:
        if not classes or classes[-1][0] != level:
            classes.append((level, []))
        classes[-1][1].append(rank)
    arrays = [(lvl, np.asarray(r, dtype=np.int64)) for lvl, r in classes]
    jg = JudgmentGroup(classes=arrays)
    for i, (level, ranks) in enumerate(arrays):
        retrieved = int(np.count_nonzero(ranks < njr))
        if level > 0.0:
            jg.num_rel_ret += retrieved
            jg.num_rel += len(ranks)
        else:
            jg.num_nonrel_ret += retrieved
            jg.num_nonrel += len(ranks)
        for _, lower in arrays[i + 1:]:
            a, b = np.broadcast_arrays(ranks[:, None], lower[None, :])
            if np.any(a == b):
                raise RankwiseError(f"query {query}: a document has two levels in one judgment sub-group")
            np.add.at(counts, (a.ravel(), b.ravel()), 1)
            ahead = a < b
            jg.fulfilled_ret += int(np.count_nonzero(ahead & (b < njr)))
            jg.fulfilled_imp += int(np.count_nonzero(ahead & (b >= njr) & (a < njr)))
            jg.possible_notoccur += int(np.count_nonzero(ahead & (a >= njr)))
            jg.possible_ret += int(np.count_nonzero(~ahead & (a < njr)))
            jg.possible_imp += int(np.count_nonzero(~ahead & (a >= njr) & (b < njr)))
            jg.possible_notoccur += int(np.count_nonzero(~ahead & (a >= njr) & (b >= njr)))
    jg.possible_ret += jg.fulfilled_ret
    jg.possible_imp += jg.fulfilled_imp
    return jg


def _closure(matrix: np.ndarray) -> np.ndarray:
    """Reflexive-transitive closure by repeated multiplication, as trec_eval computes it."""
    reach = matrix.copy()
    np.fill_diagonal(reach, True)
    while True:
        step = (reach.astype(np.int32) @ reach.astype(np.int32)) > 0
        if np.array_equal(step, reach):
            return reach
        reach = step


def _matrix_group(rows: list[tuple[str, float, int]], nj: int, njr: int, counts: np.ndarray,
                  query: str, docs: dict[int, str]) -> JudgmentGroup:
    """Several sub-groups: a preference matrix, closed transitively (rows sorted by sub-group,
    level descending, rank)."""
    pa = np.zeros((nj, nj), dtype=bool)
    levels = np.full(nj, -1.0)
    for i, (jsg, level, rank) in enumerate(rows):
        if (levels[rank] > 0.0 and level == 0.0) or (levels[rank] == 0.0 and level > 0.0):
            raise RankwiseError(f"query {query}: document {docs[rank]!r} has both 0 and non-0 levels in one "
                                "judgment group")
        levels[rank] = level
        for jsg2, level2, rank2 in rows[i + 1:]:
            if jsg2 != jsg:
                break
            if level2 != level:
                pa[rank, rank2] = True
    pa = _closure(pa)
    np.fill_diagonal(pa, False)
    conflict = pa & pa.T
    if conflict.any():
        i, j = (int(x) for x in np.argwhere(conflict)[0])
        raise RankwiseError(f"query {query}: inconsistent preferences in one judgment group: {docs[i]!r} and "
                            f"{docs[j]!r} are each preferred to the other")
    jg = JudgmentGroup(matrix=pa, levels=levels)
    jg.num_rel_ret = int(np.count_nonzero(levels[:njr] > 0.0))
    jg.num_nonrel_ret = int(np.count_nonzero(levels[:njr] == 0.0))
    jg.num_rel = int(np.count_nonzero(levels > 0.0))
    jg.num_nonrel = int(np.count_nonzero(levels == 0.0))
    counts += pa
    ret = np.arange(nj) < njr
    upper = np.triu(np.ones((nj, nj), dtype=bool), 1)
    both = ret[:, None] & ret[None, :]
    jg.fulfilled_ret = int(np.count_nonzero(pa & both & upper))
    jg.possible_ret = int(np.count_nonzero(pa & both & ~upper)) + jg.fulfilled_ret
    jg.fulfilled_imp = int(np.count_nonzero(pa & ret[:, None] & ~ret[None, :]))
    jg.possible_imp = int(np.count_nonzero(pa & ~ret[:, None] & ret[None, :])) + jg.fulfilled_imp
    jg.possible_notoccur = int(np.count_nonzero(pa & ~ret[:, None] & ~ret[None, :]))
    return jg


def query_prefs(query: str, run_docs: list[str], run_scores: np.ndarray,
                judgments: list[tuple[str, str, str, float]], depth: int | None = None) -> QueryPrefs:
    """The preference counts of one query: ``judgments`` are (group, sub-group, doc, level).

    >>> qp = query_prefs("q", ["a", "b"], np.array([2.0, 1.0]), [("u", "s", "a", 1.0), ("u", "s", "b", 2.0)])
    >>> g = qp.groups[0]; (g.fulfilled_ret, g.possible_ret)   # b > a is wanted; a ranks above b
    (0, 1)
    """
    if len(set(run_docs)) != len(run_docs):
        dup = next(d for d in run_docs if run_docs.count(d) > 1)
        raise RankwiseError(f"query {query}: document {dup!r} is retrieved twice")
    ranks, njr = _internal_ranks(run_docs, run_scores, [d for _, _, d, _ in judgments], depth)
    nj = len(ranks)
    counts = np.zeros((nj, nj), dtype=np.int64)
    docs = {r: d for d, r in ranks.items()}
    by_group: dict[str, list[tuple[str, float, int]]] = {}
    for group, sub, doc, level in judgments:
        by_group.setdefault(group, []).append((sub, level, ranks[doc]))
    groups = []
    for group in sorted(by_group, key=str.encode):
        rows = sorted(by_group[group], key=lambda r: (r[0].encode(), -r[1], r[2]))
        if len({r[0] for r in rows}) > 1:
            groups.append(_matrix_group(rows, nj, njr, counts, query, docs))
        else:
            groups.append(_classes_group(rows, njr, counts, query))
    return QueryPrefs(groups, nj, njr, counts)


# --- the measures -------------------------------------------------------------------------


def _per_query(fn: Callable[[QueryPrefs], float]) -> Compute:
    return of_lists(lambda lists: np.array([fn(q) for q in lists.queries], dtype=np.float64))


def _total(q: QueryPrefs, parts: tuple[str, ...]) -> int:
    return sum(_total_of(g, parts) for g in q.groups)


_FUL = ("fulfilled_ret", "fulfilled_imp")
_POSS = ("possible_ret", "possible_imp", "possible_notoccur")


def _ratio(q: QueryPrefs, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
    p = _total(q, poss)
    return _total(q, ful) / p if p else 0.0


def _avg_groups(q: QueryPrefs, ful: tuple[str, ...], poss: tuple[str, ...]) -> float:
    terms = []
    for g in q.groups:
        p = _total_of(g, poss)
        if p:
            terms.append(_total_of(g, ful) / p)
    total = float(np.cumsum(terms)[-1]) if terms else 0.0
    return total / len(q.groups) if total > 0.0 else 0.0


def _pairs(q: QueryPrefs, blocks: tuple[str, ...]) -> float:
    """Average over document pairs of the share of JGs the run agrees with (trec_eval's loop
    order: retrieved pairs, retrieved x not retrieved, then pairs of unretrieved documents)."""
    c, njr, nj = q.counts, q.num_judged_ret, q.num_judged
    terms: list[np.ndarray] = []
    pairs = 0
    for block in blocks:
        if block == "ret":
            i, j = np.triu_indices(njr, 1)
        elif block == "imp":
            i, j = (x.ravel() for x in np.meshgrid(np.arange(njr), np.arange(njr, nj), indexing="ij"))
        else:
            i, j = np.triu_indices(nj - njr, 1)
            i, j = i + njr, j + njr
        ij, ji = c[i, j], c[j, i]
        seen = (ij > 0) | (ji > 0)
        pairs += int(np.count_nonzero(seen))
        if block != "none":
            terms.append(ij[seen] / (ij[seen] + ji[seen]))
    flat = np.concatenate(terms) if terms else np.zeros(0)
    total = float(np.cumsum(flat)[-1]) if len(flat) else 0.0
    return total / pairs if pairs else 0.0


def _rnonrel(q: QueryPrefs, retrieved_only: bool) -> float:
    """prefs_avgjg_Rnonrel(_ret): count as if each JG had as many non-relevant documents as
    relevant ones (trec_eval's code, including the counts its recalculation uses)."""
    njr = q.num_judged_ret
    terms = []
    for g in q.groups:
        big_r = g.num_rel_ret if retrieved_only else g.num_rel
        n = g.num_nonrel_ret if retrieved_only else g.num_nonrel
        if big_r >= n:
            if retrieved_only:
                ful, poss = g.fulfilled_ret, g.possible_ret
            else:
                ful, poss = _total_of(g, _FUL), _total_of(g, _POSS)
            ful += g.num_rel_ret * (big_r - n)
            poss += g.num_rel * (big_r - n)
        else:
            ful, poss = _recount(g, njr, retrieved_only)
        terms.append(_c_divide(ful, poss))
    total = float(np.cumsum(terms)[-1]) if terms else 0.0
    return total / len(q.groups) if total > 0.0 else 0.0


def _c_divide(a: int, b: int) -> float:
    """a / b as C divides doubles: 0 / 0 is NaN (which then fails trec_eval's ``sum > 0`` test)."""
    if b == 0:
        return float("nan") if a == 0 else math.copysign(float("inf"), a)
    return a / b


def _total_of(g: JudgmentGroup, parts: tuple[str, ...]) -> int:
    return sum(getattr(g, p) for p in parts)


def _recount(g: JudgmentGroup, njr: int, retrieved_only: bool) -> tuple[int, int]:
    ful = poss = 0
    if g.classes is not None:
        classes = [r[r < njr] if retrieved_only else r for _, r in g.classes]
        keep = g.num_rel_ret if retrieved_only else g.num_rel
        last = g.classes[-1][1][:keep]
        new_nonrel = last[last < njr] if retrieved_only else last
        pairs = [(classes[a], classes[b]) for a in range(len(classes)) for b in range(a + 1, len(classes) - 1)]
        pairs += [(classes[a], new_nonrel) for a in range(len(classes))]
        for x, y in pairs:
            a, b = np.broadcast_arrays(x[:, None], y[None, :])
            good = (a < b) if retrieved_only else (a < b) & (a < njr)
            ful += int(np.count_nonzero(good))
            poss += int(np.count_nonzero(~good))
        return ful, poss + ful
    pa, levels = g.matrix, g.levels
    assert pa is not None and levels is not None, "a judgment group has classes or a matrix"
    nj = len(levels)
    seen = np.cumsum(levels[: njr if retrieved_only else nj] == 0.0)
    over = np.flatnonzero(seen == g.num_rel + 1)
    first_discarded = int(over[0]) if len(over) else (njr if retrieved_only else nj)
    idx = np.arange(nj)
    kept = ~((idx >= first_discarded) & (levels == 0.0))
    ret = idx < njr
    rows = kept & ret
    cols = kept
    m = pa & rows[:, None] & cols[None, :]
    upper = idx[None, :] > idx[:, None]
    ful = int(np.count_nonzero(m & upper & ret[None, :])) + (
        0 if retrieved_only else int(np.count_nonzero(m & ~ret[None, :])))
    poss = int(np.count_nonzero(m & ~upper & ret[None, :] & (idx[None, :] != idx[:, None])))
    if not retrieved_only:
        m2 = pa & (kept & ~ret)[:, None] & cols[None, :]
        poss += int(np.count_nonzero(m2))
    return ful, poss + ful


_P: dict[str, Any] = {"judgments": "prefs", "trec_eval": True}
_COUNT: dict[str, Any] = {**_P, "summary": "sum", "value_kind": "int", "nicknames": ("all_prefs", "prefs")}

PREFS_NUM_PREFS_POSS = Family("prefs_num_prefs_poss", _per_query(lambda q: _total(q, _POSS)),
                              "Preferences possible, retrieved or not.", higher_is_better=None, **_COUNT)
PREFS_NUM_PREFS_FUL = Family("prefs_num_prefs_ful", _per_query(lambda q: _total(q, _FUL)),
                             "Preferences fulfilled, implied ones (one document retrieved) included.", **_COUNT)
PREFS_NUM_PREFS_FUL_RET = Family("prefs_num_prefs_ful_ret", _per_query(lambda q: _total(q, ("fulfilled_ret",))),
                                 "Preferences fulfilled among retrieved documents.", **_COUNT)
PREFS_SIMP = Family("prefs_simp", _per_query(lambda q: _ratio(q, _FUL, _POSS)),
                    "Preferences fulfilled / possible (a pair neither document of which is retrieved fails).",
                    nicknames=("all_prefs", "prefs"), **_P)
PREFS_PAIR = Family("prefs_pair", _per_query(lambda q: _pairs(q, ("ret", "imp", "none"))),
                    "Mean over document pairs of the share of judgment groups whose preference the run keeps.",
                    nicknames=("all_prefs", "prefs"), **_P)
PREFS_AVGJG = Family("prefs_avgjg", _per_query(lambda q: _avg_groups(q, _FUL, _POSS)),
                     "prefs_simp per judgment group, averaged over groups.", nicknames=("all_prefs", "prefs"), **_P)
PREFS_AVGJG_RNONREL = Family("prefs_avgjg_Rnonrel", _per_query(lambda q: _rnonrel(q, False)),
                             "prefs_avgjg with each group's non-relevant documents set to its relevant count R.",
                             nicknames=("all_prefs",), **_P)
PREFS_SIMP_RET = Family("prefs_simp_ret", _per_query(lambda q: _ratio(q, ("fulfilled_ret",), ("possible_ret",))),
                        "prefs_simp over pairs whose documents were both retrieved.", nicknames=("all_prefs",), **_P)
PREFS_PAIR_RET = Family("prefs_pair_ret", _per_query(lambda q: _pairs(q, ("ret",))),
                        "prefs_pair over pairs whose documents were both retrieved.", nicknames=("all_prefs",), **_P)
PREFS_AVGJG_RET = Family("prefs_avgjg_ret", _per_query(lambda q: _avg_groups(q, ("fulfilled_ret",), ("possible_ret",))),
                         "prefs_avgjg over pairs whose documents were both retrieved.", nicknames=("all_prefs",), **_P)
PREFS_AVGJG_RNONREL_RET = Family("prefs_avgjg_Rnonrel_ret", _per_query(lambda q: _rnonrel(q, True)),
                                 "prefs_avgjg_Rnonrel over retrieved documents.", nicknames=("all_prefs",), **_P)
PREFS_SIMP_IMP = Family("prefs_simp_imp", _per_query(lambda q: _ratio(q, _FUL, ("possible_ret", "possible_imp"))),
                        "prefs_simp ignoring pairs neither document of which is retrieved.",
                        nicknames=("all_prefs",), **_P)
PREFS_PAIR_IMP = Family("prefs_pair_imp", _per_query(lambda q: _pairs(q, ("ret", "imp"))),
                        "prefs_pair ignoring pairs neither document of which is retrieved.",
                        nicknames=("all_prefs",), **_P)
PREFS_AVGJG_IMP = Family("prefs_avgjg_imp",
                         _per_query(lambda q: _avg_groups(q, _FUL, ("possible_ret", "possible_imp"))),
                         "prefs_avgjg ignoring pairs neither document of which is retrieved.",
                         nicknames=("all_prefs",), **_P)


def prefs_lists(prefs: Prefs, run: Run, depth: int | None = None, missing: str = "skip",
                score_precision: str = "float64") -> PrefsLists:
    """The run's preference counts for every query with both judgments and a ranking (and,
    with ``missing="zero"``, an empty entry scoring 0 for every judged query the run lacks),
    in query-id byte order as trec_eval evaluates them.

    >>> from rankwise.data.containers import Run
    >>> p = Prefs.from_rows([("q1", "u", "s", "a", 1.0), ("q1", "u", "s", "b", 0.0)])
    >>> lists = prefs_lists(p, Run.from_dict({"q1": {"a": 0.5, "b": 0.9}}))
    >>> lists.queries[0].groups[0].possible_ret, lists.queries[0].groups[0].fulfilled_ret
    (1, 0)
    """
    judged: dict[str, list[tuple[str, str, str, float]]] = {}
    for q, g, s, d, v in zip(prefs.query.tolist(), prefs.group.tolist(), prefs.subgroup.tolist(),
                             prefs.doc.tolist(), prefs.level.tolist(), strict=True):
        judged.setdefault(q, []).append((g, s, d, v))
    ranked = run.to_dict()
    dtype = np.float32 if score_precision == "float32" else np.float64
    ids, queries = [], []
    for q in sorted(judged, key=str.encode):
        if q in ranked:
            docs = list(ranked[q])
            scores = np.asarray(list(ranked[q].values()), dtype=dtype).astype(np.float64)
            queries.append(query_prefs(q, docs, scores, judged[q], depth))
        elif missing == "zero":
            queries.append(QueryPrefs([], 0, 0, np.zeros((0, 0), dtype=np.int64)))
        else:
            continue
        ids.append(q)
    notes = [f"{run.source}: {n} query(ies) of the run have no preference judgments; they are left out"
             for n in [len(set(ranked) - set(judged))] if n]
    return PrefsLists(np.asarray(ids, dtype=object), queries, notes, run_name=run.name)
