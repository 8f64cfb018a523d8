"""Novelty and diversity measures of the TREC Web track, as ndeval 4.5 computes them.

Judgments are subtopic qrels (``topic subtopic docno judgment``, binary: label >= the relevance
level). With ``S`` the subtopics that have a relevant document and ``c_ij`` the documents above
rank i relevant to subtopic j, a document's gain is ``sum_j rel_ij (1 - alpha)^c_ij``:

- alpha-DCG@k = sum_{i<=k} gain_i / log2(i + 1), divided by the "ideal ideal" S (1 - alpha)^(i-1)
  / log2(i + 1) summed to k (collection independent; ndeval leaves k = 1 undivided);
- ERR-IA@k: the same with 1 / i in place of 1 / log2(i + 1);
- alpha-nDCG@k, nERR-IA@k: divided by the value of the ideal ranking (built greedily from the
  judged documents; ties go to the larger doc id), 0 when the run gains nothing by k;
- NRBP = (1 - (1 - alpha) beta) / S sum_i gain_i beta^(i-1) over the whole ranking; nNRBP divides
  by the ideal ranking's NRBP;
- MAP-IA: per subtopic AP (relevant documents of the subtopic as R), averaged over S;
- P-IA@k = (relevant (document, subtopic) pairs in the top k) / (k S); StRecall@k = subtopics
  covered by the top k / S.

A query without any relevant judgment scores 0 everywhere (nNRBP: 0 / 0, NaN, as ndeval).
The ideal ranking is greedy and sequential, so the measures are computed per query on small
matrices (documents x subtopics), with ndeval's order of floating-point operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.data.containers import Run
from rankwise.data.prefs import Prefs
from rankwise.engine.conventions import Conventions
from rankwise.errors import RankwiseError
from rankwise.metrics.family import Compute, Cutoff, Family, Param, QueryLists

LN2 = math.log(2.0)


@dataclass
class Topic:
    """One query: subtopic labels of the retrieved documents (rank order) and of the judged ones."""

    run_labels: np.ndarray
    """[retrieved, subtopics] labels of retrieved document i for subtopic j (0 if unjudged)."""
    judged_labels: np.ndarray
    """[judged, subtopics] labels, judged documents in doc-id byte order (the ideal ranking's
    tie order)."""
    rel_level: int = 1
    _ideal: dict[float, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def run_rel(self) -> np.ndarray:
        return self.run_labels >= self.rel_level

    @property
    def judged_rel(self) -> np.ndarray:
        return self.judged_labels >= self.rel_level

    @property
    def per_subtopic(self) -> np.ndarray:
        return self.judged_rel.sum(axis=0)

    @property
    def subtopics(self) -> int:
        """Subtopics with at least one relevant judged document."""
        return int(np.count_nonzero(self.per_subtopic))

    def ideal(self, alpha: float) -> np.ndarray:
        """The judged documents' relevance in ndeval's greedy ideal order."""
        if alpha not in self._ideal:
            self._ideal[alpha] = _greedy(self.judged_rel, alpha)
        return self._ideal[alpha]


@dataclass
class DiversityLists(QueryLists):
    """Per evaluated query, what the diversity families read."""

    topics: list[Topic] = field(default_factory=list)

    def with_rel_level(self, rel_level: int) -> DiversityLists:
        """The same rankings judged at another relevance level."""
        topics = [Topic(t.run_labels, t.judged_labels, rel_level) for t in self.topics]
        return DiversityLists(self.query_ids, topics, run_name=self.run_name, rel_level=rel_level)


def _greedy(rel: np.ndarray, alpha: float) -> np.ndarray:
    """ndeval's ideal ranking: repeatedly take the document with the largest gain under the
    current subtopic weights (ties: the larger doc id, the later row, as rows are in doc-id
    byte order), then discount its subtopics."""
    n, s = rel.shape
    weight = np.ones(s)
    left = np.ones(n, dtype=bool)
    order = np.empty(n, dtype=np.int64)
    for rank in range(n):
        score = np.zeros(n)
        for j in range(s):  # sequential over subtopics, as ndeval adds them
            score = score + np.where(rel[:, j], weight[j], 0.0)
        score[~left] = -1.0
        best = np.flatnonzero(score == score.max())
        pick = int(best[-1])
        order[rank] = pick
        left[pick] = False
        weight = np.where(rel[pick], weight * (1.0 - alpha), weight)
    return rel[order]


def _gains(rel: np.ndarray, alpha: float) -> np.ndarray:
    """Each ranked document's gain: sum over its subtopics of (1 - alpha)^(earlier documents of
    that subtopic), the powers by repeated multiplication and the sum in subtopic order."""
    n, s = rel.shape
    powers = np.cumprod(np.concatenate(([1.0], np.full(max(n, 1), 1.0 - alpha))))
    before = np.cumsum(rel, axis=0) - rel
    score = np.zeros(n)
    for j in range(s):
        score = score + np.where(rel[:, j], powers[before[:, j]], 0.0)
    return score


def _discount(n: int) -> np.ndarray:
    """ndeval's discount: 1 at rank 1, then log(2) / log(i + 1)."""
    i = np.arange(n, dtype=np.float64)
    out = np.array([LN2 / math.log(x + 2.0) for x in i])
    if n:
        out[0] = 1.0
    return out


def _cumulative(per_rank: np.ndarray, ideal_ideal: np.ndarray) -> np.ndarray:
    """Running sums divided (from rank 2 on) by the ideal-ideal running sums."""
    out = np.cumsum(per_rank)
    norm = np.cumsum(ideal_ideal)
    out[1:] = out[1:] / norm[1:]
    return out


def _profile(rel: np.ndarray, subtopics: int, alpha: float, depth: int, kind: str) -> np.ndarray:
    """alpha-DCG (``dcg``) or ERR-IA (``err``) at ranks 1..depth."""
    score = np.zeros(depth)
    n = min(depth, len(rel))
    score[:n] = _gains(rel[:n], alpha)
    weight = np.cumprod(np.concatenate(([float(subtopics)], np.full(depth - 1, 1.0 - alpha))))[:depth]
    if kind == "dcg":
        disc = _discount(depth)
        return _cumulative(score * disc, weight * disc)
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    return _cumulative(score / ranks, weight / ranks)


def _at(values: np.ndarray, k: int) -> float:
    return float(values[k - 1])


def alpha_dcg(t: Topic, k: int, alpha: float = 0.5) -> float:
    """alpha-DCG@k (ideal-ideal normalisation).

    >>> t = topic([[1, 0], [1, 1]], [[1, 0], [1, 1], [0, 0]])
    >>> round(alpha_dcg(t, 2), 6)   # gains 1, 0.5 + 1: (1 + 1.5/log2 3) / (2 + 2 * 0.5/log2 3)
    0.739812
    """
    return _at(_profile(t.run_rel, t.subtopics, alpha, k, "dcg"), k) if t.subtopics else 0.0


def alpha_ndcg(t: Topic, k: int, alpha: float = 0.5) -> float:
    """alpha-nDCG@k: alpha-DCG@k over the ideal ranking's.

    >>> t = topic([[1, 0], [1, 1]], [[1, 0], [1, 1], [0, 0]])
    >>> round(alpha_ndcg(t, 2), 6)   # ideal: b (gain 2), a (0.5): (1 + 1.5/log2 3) / (2 + 0.5/log2 3)
    0.840606
    """
    if not t.subtopics:
        return 0.0
    ours = _at(_profile(t.run_rel, t.subtopics, alpha, k, "dcg"), k)
    return ours / _at(_profile(t.ideal(alpha), t.subtopics, alpha, k, "dcg"), k) if ours else 0.0


def err_ia(t: Topic, k: int, alpha: float = 0.5) -> float:
    """ERR-IA@k (ideal-ideal normalisation)."""
    return _at(_profile(t.run_rel, t.subtopics, alpha, k, "err"), k) if t.subtopics else 0.0


def nerr_ia(t: Topic, k: int, alpha: float = 0.5) -> float:
    """nERR-IA@k: ERR-IA@k over the ideal ranking's (0 when the run gains nothing by k)."""
    if not t.subtopics or not _at(_profile(t.run_rel, t.subtopics, alpha, k, "dcg"), k):
        return 0.0
    ours = _at(_profile(t.run_rel, t.subtopics, alpha, k, "err"), k)
    return ours / _at(_profile(t.ideal(alpha), t.subtopics, alpha, k, "err"), k)


def _nrbp(rel: np.ndarray, subtopics: int, alpha: float, beta: float) -> float:
    if not subtopics:
        return 0.0
    decay = np.cumprod(np.concatenate(([1.0], np.full(max(len(rel) - 1, 0), beta))))[:len(rel)]
    total = float(np.cumsum(_gains(rel, alpha) * decay)[-1]) if len(rel) else 0.0
    return total * ((1.0 - (1.0 - alpha) * beta) / subtopics)


def nrbp(t: Topic, alpha: float = 0.5, beta: float = 0.5) -> float:
    """NRBP over the whole ranking."""
    return _nrbp(t.run_rel, t.subtopics, alpha, beta)


def nnrbp(t: Topic, alpha: float = 0.5, beta: float = 0.5) -> float:
    """NRBP over the ideal ranking's NRBP (NaN without relevant judgments, as ndeval)."""
    ideal = _nrbp(t.ideal(alpha), t.subtopics, alpha, beta) if t.subtopics else 0.0
    ours = nrbp(t, alpha, beta)
    return ours / ideal if ideal else float("nan")


def map_ia(t: Topic) -> float:
    """MAP-IA: AP per subtopic (over its relevant judged documents), averaged over subtopics.

    >>> t = topic([[1, 0], [1, 1]], [[1, 0], [1, 1], [0, 0]])
    >>> map_ia(t)   # subtopic 1: (1/1 + 2/2) / 2 = 1; subtopic 2: (1/2) / 1 -> (1 + 0.5) / 2
    0.75
    """
    if not t.subtopics:
        return 0.0
    rel = t.run_rel
    ranks = np.arange(1, len(rel) + 1, dtype=np.float64)
    per = t.per_subtopic
    total = 0.0
    for j in range(rel.shape[1]):
        if per[j]:
            hits = rel[:, j]
            terms = np.cumsum(hits)[hits] / ranks[hits]
            total += (float(np.cumsum(terms)[-1]) if len(terms) else 0.0) / float(per[j])
    return float(total / t.subtopics)


def p_ia(t: Topic, k: int) -> float:
    """P-IA@k: relevant (document, subtopic) pairs in the top k / (k S)."""
    if not t.subtopics:
        return 0.0
    return float(np.count_nonzero(t.run_rel[:k])) / (k * t.subtopics)


def subtopic_recall(t: Topic, k: int) -> float:
    """Subtopics covered by the top k / S."""
    if not t.subtopics:
        return 0.0
    return float(np.count_nonzero(t.run_rel[:k].any(axis=0))) / t.subtopics


def topic(run_labels: list, judged_labels: list) -> Topic:
    """A Topic from plain lists (examples and tests); judged rows in doc-id order."""
    return Topic(np.asarray(run_labels, dtype=np.int64).reshape(len(run_labels), -1),
                 np.asarray(judged_labels, dtype=np.int64).reshape(len(judged_labels), -1))


def ranked_docs(docs: list[str], scores: np.ndarray, ties: str) -> list[int]:
    """Positions of ``docs`` in rank order: score descending, ties by doc id descending
    (``trec``, ndeval's ``-traditional``), ascending (``docid_asc``) or input order (``input``).

    >>> ranked_docs(["a", "b", "c"], np.array([1.0, 2.0, 1.0]), "trec")
    [1, 2, 0]
    """
    order = list(range(len(docs)))
    if ties in ("trec", "docid_asc"):
        order.sort(key=lambda i: docs[i].encode(), reverse=ties == "trec")
    elif ties != "input":
        raise RankwiseError(f"ties={ties!r}: diversity measures take ties='trec', 'docid_asc' or 'input'")
    order.sort(key=lambda i: -scores[i])
    return order


def diversity_lists(subtopics: Prefs, run: Run, conventions: Conventions) -> tuple[DiversityLists, list[str]]:
    """Subtopic judgments (kind ``subtopics``: query, subtopic, doc, label) and a run, per query,
    ranked under the conventions (ties, depth, judged_only, score precision, missing queries).

    >>> from rankwise.data.containers import Run
    >>> j = Prefs.from_rows([("q", "1", "", "a", 1), ("q", "2", "", "b", 1)], "subtopics")
    >>> lists, _ = diversity_lists(j, Run.from_dict({"q": {"b": 2.0, "a": 1.0}}), Conventions())
    >>> lists.topics[0].run_labels.tolist()   # b covers subtopic 2, then a subtopic 1
    [[0, 1], [1, 0]]
    """
    judged: dict[str, list[tuple[str, str, int]]] = {}
    for q, st, d, v in zip(subtopics.query.tolist(), subtopics.group.tolist(), subtopics.doc.tolist(),
                           subtopics.level.tolist(), strict=True):
        judged.setdefault(q, []).append((st, d, int(v)))
    names = list(dict.fromkeys(subtopics.group.tolist()))  # first-seen order, as pyndeval numbers them
    column = {n: i for i, n in enumerate(names)}
    ranked = run.to_dict()
    dtype = np.float32 if conventions.score_precision == "float32" else np.float64
    ids, topics = [], []
    for q in sorted(judged, key=str.encode):
        if q not in ranked and conventions.missing != "zero":
            continue
        docs = sorted({d for _, d, _ in judged[q]}, key=str.encode)
        row = {d: i for i, d in enumerate(docs)}
        labels = np.zeros((len(docs), len(names)), dtype=np.int64)
        for st, d, v in judged[q]:
            labels[row[d], column[st]] = v
        run_docs = list(ranked.get(q, {}))
        scores = np.asarray(list(ranked.get(q, {}).values()), dtype=dtype).astype(np.float64)
        order = ranked_docs(run_docs, scores, conventions.ties)
        if conventions.judged_only:
            order = [i for i in order if run_docs[i] in row]
        if conventions.depth is not None:
            order = order[:conventions.depth]
        run_labels = np.zeros((len(order), len(names)), dtype=np.int64)
        for r, i in enumerate(order):
            if run_docs[i] in row:
                run_labels[r] = labels[row[run_docs[i]]]
        ids.append(q)
        topics.append(Topic(run_labels, labels, conventions.rel_level))
    extra = len(set(ranked) - set(judged))
    notes = [f"{run.source}: {extra} query(ies) of the run have no subtopic judgments; they are left out"
             ] if extra else []
    lists = DiversityLists(np.asarray(ids, dtype=object), topics, run_name=run.name, rel_level=conventions.rel_level)
    return lists, notes


def _per_topic_cut(fn: Callable[..., float]) -> Compute:
    def compute(lists: DiversityLists, conv: Any, ks: tuple, params: Mapping[str, Any]) -> np.ndarray:
        extra = {k: v for k, v in params.items() if k in ("alpha",)}
        return np.array([[fn(t, int(k), **extra) for k in ks] for t in lists.topics], dtype=np.float64)
    return compute


def _per_topic(fn: Callable[..., float]) -> Compute:
    def compute(lists: DiversityLists, conv: Any, ks: tuple, params: Mapping[str, Any]) -> np.ndarray:
        return np.array([fn(t, **params) for t in lists.topics], dtype=np.float64)
    return compute


_ALPHA = Param("alpha", float, 0.5, "redundancy intolerance: a subtopic's gain shrinks by 1 - alpha each time",
               low=0.0, high=1.0)
_BETA = Param("beta", float, 0.5, "patience of NRBP's user", low=0.0, high=1.0)
_CUTS = Cutoff(int, (5, 10, 20))
_D: dict[str, Any] = {"judgments": "subtopics", "reference": "ndeval 4.5 (pyndeval), ir_measures"}

ALPHA_DCG = Family("alpha_DCG", _per_topic_cut(alpha_dcg), "alpha-DCG@k with ideal-ideal normalisation.",
                   cutoff=_CUTS, params=(_ALPHA,), syntax="pairs", canonical="alpha_DCG",
                   cutoff_aliases=("alpha-dcg", "alpha_dcg"), **_D)
ALPHA_NDCG = Family("alpha_nDCG", _per_topic_cut(alpha_ndcg), "alpha-nDCG@k: alpha-DCG@k / the ideal ranking's.",
                    cutoff=_CUTS, params=(_ALPHA,), syntax="pairs", canonical="alpha_nDCG",
                    cutoff_aliases=("alpha-ndcg", "alpha_ndcg"), **_D)
ERR_IA = Family("ERR_IA", _per_topic_cut(err_ia), "Intent-aware ERR@k with ideal-ideal normalisation.",
                cutoff=_CUTS, params=(_ALPHA,), syntax="pairs", canonical="ERR_IA",
                cutoff_aliases=("err-ia", "err_ia"), **_D)
NERR_IA = Family("nERR_IA", _per_topic_cut(nerr_ia), "ERR-IA@k / the ideal ranking's.", cutoff=_CUTS,
                 params=(_ALPHA,), syntax="pairs", canonical="nERR_IA", cutoff_aliases=("nerr-ia", "nerr_ia"), **_D)
NRBP = Family("NRBP", _per_topic(nrbp), "Novelty- and rank-biased precision over the whole ranking.",
              params=(_ALPHA, _BETA), syntax="pairs", canonical="NRBP", aliases=("nrbp",), **_D)
NNRBP = Family("nNRBP", _per_topic(nnrbp), "NRBP / the ideal ranking's NRBP.", params=(_ALPHA, _BETA),
               syntax="pairs", canonical="nNRBP", aliases=("nnrbp",), **_D)
MAP_IA = Family("MAP_IA", _per_topic(map_ia), "Intent-aware MAP: AP per subtopic averaged over subtopics.",
                canonical="AP_IA", aliases=("map-ia", "map_ia", "ap_ia"), **_D)
P_IA = Family("P_IA", _per_topic_cut(p_ia), "Intent-aware precision@k.", cutoff=_CUTS, canonical="P_IA",
              cutoff_aliases=("p-ia", "p_ia"), **_D)
STRECALL = Family("strec", _per_topic_cut(subtopic_recall), "Subtopic recall@k: subtopics covered / subtopics.",
                  cutoff=_CUTS, canonical="StRecall", cutoff_aliases=("strec", "st_recall"), **_D)
