"""Fusion methods: each turns the aligned runs (normalised scores S and ranks R, [pairs, runs],
NaN where a run did not return the document) into one score per (query, document). With
m = the number of runs that returned the document, w_i the run weights, C the query's candidates
and n_i run i's list length (definitions as in ranx):

| method | fused score |
|---|---|
| ``combsum``, ``combmin``, ``combmax``, ``combmed``, ``combanz`` | sum, min, max, median, mean of the S_i |
| ``combmnz`` / ``combgmnz`` (``gamma``) | sum S_i x m, x m^gamma |
| ``wsum`` (``weights``) | sum w_i S_i |
| ``wmnz`` (``weights``) | (sum S_i) x (sum of the w_i of the runs that returned it) |
| ``mixed`` (``weights``) | (sum w_i S_i) x sqrt(m) |
| ``isr`` / ``log_isr`` / ``logn_isr`` (``sigma``) | (sum 1 / R_i^2) x m, x ln m, x ln(m + sigma) |
| ``rrf`` (``k``, default 60) | sum 1 / (k + R_i) |
| ``rbc`` (``phi``, default 0.8) | sum (1 - phi) phi^(R_i - 1) |
| ``bordafuse``, ``weighted_bordafuse`` (``weights``) | sum (w_i x) points: C - R_i + 1, or (C - n_i + 1) / 2 |
| ``condorcet``, ``weighted_condorcet`` (``weights``) | C - position after sorting by pairwise (weighted) majority |
| ``posfuse`` (trained) | sum P_i(relevant at rank R_i), estimated on the training queries |
| ``mapfuse`` (trained) | sum MAP_i / R_i, MAP_i of run i on the training qrels |
| ``probfuse`` (trained, ``n_segments``) | sum P_i(segment of R_i) / segment number, lists cut in n_segments |
| ``segfuse`` (trained) | sum P_i(segment of R_i) x (S_i + 1), segments 1-5, 6-15, 16-35 ... (doubling) |
| ``slidefuse`` (trained, ``w``) | sum of the mean P_i(relevant at rank) over ranks R_i - w .. R_i + w |
| ``bayesfuse`` (trained) | sum log-odds_i(rank band of R_i), log(0.001 / 0.999) where not returned |

Sums run over the runs that returned the document; Borda gives a run that did not return it
(C - n_i + 1) / 2 points.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import RankwiseError
from rankwise.fusion.table import PairTable
from rankwise.params import Declared, Param, Registry


@dataclass(frozen=True)
class Method(Declared[Callable[..., np.ndarray]]):
    """A fusion method: ``target(S, R, table, **params)`` gives one fused score per pair."""

    ranks: bool = False
    """True if it reads ranks only (the normalisation does not change it, except ``borda``)."""
    trained: bool = False
    """True if it learns from training qrels (``fuse(..., train_qrels=...)``)."""

    @property
    def fuse(self) -> Callable[..., np.ndarray]:
        return self.target


def _present(s: np.ndarray) -> np.ndarray:
    return ~np.isnan(s)


def _sum(s: np.ndarray) -> np.ndarray:
    return np.where(_present(s), s, 0.0).sum(axis=1)


def _count(s: np.ndarray) -> np.ndarray:
    return _present(s).sum(axis=1).astype(np.float64)


def _weights(weights: Any, runs: int) -> np.ndarray:
    w = np.asarray(weights if weights is not None else [1.0] * runs, dtype=np.float64)
    if w.shape != (runs,):
        raise RankwiseError(f"weights: expected {runs} numbers (one per run), got {np.atleast_1d(w).tolist()}")
    return w


def _reduce_present(s: np.ndarray, op: Callable[..., np.ndarray]) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows do not occur: every pair is returned once
        return op(s, axis=1)


def _isr(r: np.ndarray) -> np.ndarray:
    return np.where(_present(r), 1.0 / np.where(_present(r), r, 1.0) ** 2, 0.0).sum(axis=1)


def _borda_points(table: PairTable, r: np.ndarray) -> np.ndarray:
    c = table.candidates().astype(np.float64)[table.query][:, None]
    n = table.lengths.astype(np.float64)[table.query]
    return np.where(_present(r), c - r + 1.0, (c - n + 1.0) / 2.0)


def _trained(table: PairTable) -> tuple[np.ndarray, np.ndarray]:
    labels, queries = table.labels, table.trained_queries
    if labels is None or queries is None:
        raise RankwiseError("this method learns from judgments: give train_qrels=")
    return labels, queries[table.query]


def _posfuse(s: np.ndarray, r: np.ndarray, t: PairTable, rel_level: int) -> np.ndarray:
    """Sum over runs of P(relevant | the run's position), estimated on the training queries:
    the share of them whose document at that position is relevant (label >= rel_level)."""
    fused = np.zeros(len(r))
    for i in range(r.shape[1]):
        probs = _position_probs(r[:, i], t, rel_level)
        present = _present(r[:, i])
        at = r[present, i].astype(np.int64) - 1
        fused[present] += np.where(at < len(probs), probs[np.minimum(at, len(probs) - 1)], 0.0)
    return fused


def _training_rows(r: np.ndarray, t: PairTable, rel_level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """For one run's ranks ``r`` [pairs]: the rows of training queries it returned, their
    0-based positions, whether each is relevant (label >= rel_level), and how many training
    queries the run returned (the estimates' denominator, as ranx's hit lists)."""
    labels, trained = _trained(t)
    seen = _present(r) & trained
    relevant = (np.nan_to_num(labels[seen], nan=-np.inf) >= rel_level).astype(np.float64)
    queries = int(distinct(t.query[seen]).size)
    return seen, r[seen].astype(np.int64) - 1, relevant, queries


@dataclass(frozen=True)
class TrainingCounts:
    """What a trained fusion method learns from one run on the training queries: per segment
    (or position), the sum over training queries of the relevant share, and how many training
    queries there were; the estimates are ``sums / queries``. Counts of disjoint sets of
    training queries merge by addition (``rankwise.merging``), so training can be split.

    >>> a = TrainingCounts(np.array([1.0, 0.5]), 2)
    >>> (a + TrainingCounts(np.array([0.0, 0.5]), 1)).estimates().tolist()   # (1 + 0) / 3, (0.5 + 0.5) / 3
    [0.3333333333333333, 0.3333333333333333]
    """

    sums: np.ndarray
    queries: int

    def merge(self, other: TrainingCounts) -> TrainingCounts:
        if self.sums.shape != other.sums.shape:
            raise RankwiseError(f"cannot merge training counts of {len(self.sums)} and {len(other.sums)} segments")
        return TrainingCounts(self.sums + other.sums, self.queries + other.queries)

    def __add__(self, other: TrainingCounts) -> TrainingCounts:
        return self.merge(other)

    def empty(self) -> TrainingCounts:
        return TrainingCounts(np.zeros_like(self.sums), 0)

    def estimates(self) -> np.ndarray:
        """The mean relevant share per segment over the training queries (0 without any)."""
        return self.sums / max(self.queries, 1)


def segment_counts(position: np.ndarray, relevant: np.ndarray, queries: int, bounds: np.ndarray) -> TrainingCounts:
    """``TrainingCounts`` of fixed segments [bounds[k], bounds[k + 1]) of 0-based positions:
    each row's relevance over its segment's full size (a segment's size counts in full even
    where a list is shorter, as in SegFuse and BayesFuse)."""
    inside = position < bounds[-1]
    segment = np.searchsorted(bounds, position[inside], side="right") - 1
    sizes = np.diff(bounds).astype(np.float64)
    sums = np.bincount(segment, weights=relevant[inside] / sizes[segment], minlength=len(sizes))
    return TrainingCounts(sums, int(queries))


def _segment_probs(r: np.ndarray, t: PairTable, rel_level: int, bounds: np.ndarray) -> np.ndarray:
    """Mean over the training queries of the share of relevant documents in each fixed segment
    [bounds[k], bounds[k + 1]) of positions (``segment_counts``)."""
    _, position, relevant, queries = _training_rows(r, t, rel_level)
    return segment_counts(position, relevant, queries, bounds).estimates()


def _segment_of(r: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``r`` inside the segments, and each one's segment."""
    position = np.where(_present(r), r, np.inf) - 1
    inside = position < bounds[-1]
    return inside, np.searchsorted(bounds, position[inside], side="right") - 1


SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])
"""SegFuse's segments (Shokouhi 2007): positions 1-5, 6-15, 16-35 ... 2556-5115, each about
twice the last."""
BAYESFUSE_BOUNDS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000])
"""BayesFuse's rank bands (as ranx): 1-5, 6-10, 11-15, 16-20, 21-30, 31-100 ... 501-1000."""
BAYESFUSE_FLOOR = float(np.log(0.001 / 0.999))
"""The log-odds of a document a run did not return (or ranked beyond 1000): P(relevant) = 0.001."""


def _probfuse(s: np.ndarray, r: np.ndarray, t: PairTable, n_segments: int, rel_level: int) -> np.ndarray:
    """ProbFuse (Lillis et al. 2006): each query's list of N is cut into ``n_segments`` segments
    of ceil(N / n_segments) positions; P_k, the mean over training queries of the share of
    relevant documents in segment k (of the segment's actual size), and a document in segment k
    scores P_k / k (k from 1), summed over runs."""
    n_segments = int(n_segments)
    if n_segments < 1:
        raise RankwiseError(f"probfuse: n_segments must be at least 1, got {n_segments}")
    fused = np.zeros(len(r))
    for i in range(r.shape[1]):
        n = t.lengths[:, i][t.query]
        size = -(-n // n_segments)  # ceil(N / n_segments)
        seen, position, relevant, queries = _training_rows(r[:, i], t, rel_level)
        size_seen, n_seen = size[seen], n[seen]
        segment = position // size_seen
        actual = np.minimum(size_seen, n_seen - segment * size_seen).astype(np.float64)
        probs = np.bincount(segment, weights=relevant / actual, minlength=n_segments) / max(queries, 1)
        present = _present(r[:, i])
        at = (r[present, i].astype(np.int64) - 1) // size[present]
        fused[present] += probs[at] / (at + 1)
    return fused


def _segfuse(s: np.ndarray, r: np.ndarray, t: PairTable, rel_level: int) -> np.ndarray:
    """SegFuse (Shokouhi 2007): P_k, the mean share of relevant documents in segment k of
    ``SEGFUSE_BOUNDS`` over the training queries, and a document in segment k scores
    P_k x (normalised score + 1), summed over runs; beyond position 5115 it scores 0."""
    fused = np.zeros(len(r))
    for i in range(r.shape[1]):
        probs = _segment_probs(r[:, i], t, rel_level, SEGFUSE_BOUNDS)
        inside, segment = _segment_of(r[:, i], SEGFUSE_BOUNDS)
        fused[inside] += probs[segment] * (s[inside, i] + 1.0)
    return fused


def _bayesfuse(s: np.ndarray, r: np.ndarray, t: PairTable, rel_level: int) -> np.ndarray:
    """BayesFuse (Aslam & Montague 2001), with ranx's estimate: per rank band of
    ``BAYESFUSE_BOUNDS``, p = the mean share of relevant documents over the training queries
    (0.001 if none; 1 - p likewise), a document in the band scores log(p / (1 - p)), and the
    fused score is the sum over runs, ``BAYESFUSE_FLOOR`` where a run did not return it."""
    fused = np.zeros(len(r))
    for i in range(r.shape[1]):
        p = _segment_probs(r[:, i], t, rel_level, BAYESFUSE_BOUNDS)
        p = np.where(p == 0, 0.001, p)
        q = 1.0 - p
        odds = np.log(p / np.where(q == 0, 0.001, q))
        inside, band = _segment_of(r[:, i], BAYESFUSE_BOUNDS)
        column = np.full(len(r), BAYESFUSE_FLOOR)
        column[inside] = odds[band]
        fused += column
    return fused


def _position_probs(r: np.ndarray, t: PairTable, rel_level: int) -> np.ndarray:
    """P(relevant | position): the share of training queries whose document at each position is
    relevant, among those whose list reaches it (PosFuse and SlideFuse)."""
    _, position, relevant, _ = _training_rows(r, t, rel_level)
    hits = np.bincount(position, weights=relevant)
    shown = np.bincount(position)
    return np.divide(hits, shown, out=np.zeros(len(hits)), where=shown > 0)


def _slidefuse(s: np.ndarray, r: np.ndarray, t: PairTable, w: int, rel_level: int) -> np.ndarray:
    """SlideFuse (Lillis et al. 2008): a document at position p of a list of N scores the mean
    of P(relevant | position) over the window [max(p - w, 1), min(p + w, N)] (positions the
    training lists never reached count 0), summed over runs."""
    w = int(w)
    if w < 0:
        raise RankwiseError(f"slidefuse: w must be at least 0, got {w}")
    fused = np.zeros(len(r))
    for i in range(r.shape[1]):
        probs = _position_probs(r[:, i], t, rel_level)
        cumulative = np.concatenate([[0.0], np.cumsum(probs)])
        present = _present(r[:, i])
        p = r[present, i].astype(np.int64) - 1
        n = t.lengths[:, i][t.query[present]]
        a, b = np.maximum(p - w, 0), np.minimum(p + w, n - 1)
        top = len(probs)
        fused[present] += (cumulative[np.minimum(b + 1, top)] - cumulative[np.minimum(a, top)]) / (b - a + 1)
    return fused


def _condorcet(s: np.ndarray, r: np.ndarray, t: PairTable, weights: Any = None) -> np.ndarray:
    """Condorcet fusion (Montague & Aslam 2002): each query's candidates sorted by pairwise
    majority (document x before y when the runs ranking x above y outweigh those ranking y
    above x; a run ranks the documents it returned above those it did not, and has no
    preference between two it did not return), by a stable merge sort that starts from document
    id order, so that ties and cycles resolve the same way every time. The fused score is the
    number of candidates minus the position (C for the first)."""
    w = _weights(weights, r.shape[1])
    fused = np.zeros(len(r))
    starts = np.append(t.starts, len(r))
    for a, b in zip(starts[:-1], starts[1:], strict=True):
        ranks = np.where(_present(r[a:b]), r[a:b], np.inf)  # [candidates, runs]; pairs are in document id order
        order = _majority_order(_majority(ranks, w))
        fused[a + order] = (b - a) - np.arange(b - a)
    return fused


def _majority(ranks: np.ndarray, w: np.ndarray) -> np.ndarray:
    """[x, y]: -1 when x goes before y (the runs ranking x above y outweigh the others), 1 after,
    0 a draw."""
    margin = np.zeros((len(ranks), len(ranks)))
    for i in range(ranks.shape[1]):
        column = ranks[:, i]
        margin += w[i] * (column[:, None] < column[None, :])
    return np.sign(margin.T - margin).astype(np.int8)


def _majority_order(majority: np.ndarray) -> np.ndarray:
    """The candidates (in document id order) sorted by ``majority`` with a stable merge sort.
    When the majority is a weak order (candidates ranked by their number of wins, each beating
    every candidate with fewer and drawing with those with as many) that is the order by wins,
    found without comparing one pair at a time; otherwise (cycles) Python's merge sort decides.

    >>> _majority_order(np.array([[0, 1, 1], [-1, 0, 0], [-1, 0, 0]], dtype=np.int8)).tolist()
    [1, 2, 0]
    """
    wins = (majority == -1).sum(axis=1)
    order = np.argsort(-wins, kind="stable")
    ordered, by = majority[np.ix_(order, order)], wins[order]
    expected = np.where(by[:, None] == by[None, :], 0, -1)
    upper = np.triu_indices(len(order), 1)
    if bool((ordered[upper] == expected[upper]).all()):
        return order
    from functools import cmp_to_key

    def majority_order(x: int, y: int) -> int:
        return int(majority[x, y])

    return np.asarray(sorted(range(len(majority)), key=cmp_to_key(majority_order)), dtype=np.int64)


def _mapfuse(s: np.ndarray, r: np.ndarray, t: PairTable, rel_level: int) -> np.ndarray:
    """Sum over runs of MAP(run on the training qrels) / rank."""
    from rankwise.evaluation import evaluate

    _trained(t)
    weights = [float(evaluate(t.train_qrels, run, ["map"], rel_level=rel_level).summary["map"].iloc[0])
               for run in t.runs]
    return np.where(_present(r), np.asarray(weights) / np.where(_present(r), r, 1.0), 0.0).sum(axis=1)


WEIGHTS = Param("weights", tuple, None, "one weight per run (default: 1 each)", low=None)
REL_LEVEL = Param("rel_level", int, 1, "the lowest training label that counts as relevant")


def _p(name: str, default: Any, description: str, kind: type = float, grid: tuple = (), **limits: Any) -> Param:
    return Param(name, kind, default, description, required=default is None, grid=grid, **limits)


FUSION_METHODS: Registry[Method] = Registry("fusion method", (
    Method("combsum", lambda s, r, t: _sum(s), "Sum of the normalised scores.", aliases=("sum",),
           reference="Fox & Shaw 1994; ranx comb_sum"),
    Method("combmin", lambda s, r, t: _reduce_present(s, np.nanmin), "Smallest normalised score.",
           aliases=("min",), reference="Fox & Shaw 1994; ranx comb_min"),
    Method("combmax", lambda s, r, t: _reduce_present(s, np.nanmax), "Largest normalised score.",
           aliases=("max",), reference="Fox & Shaw 1994; ranx comb_max"),
    Method("combmed", lambda s, r, t: _reduce_present(s, np.nanmedian), "Median normalised score.",
           aliases=("med",), reference="Fox & Shaw 1994; ranx comb_med"),
    Method("combanz", lambda s, r, t: _sum(s) / _count(s), "Mean score over the runs that returned it.",
           aliases=("anz",), reference="Fox & Shaw 1994; ranx comb_anz"),
    Method("combmnz", lambda s, r, t: _sum(s) * _count(s), "Sum of scores times the number of runs that returned it.",
           aliases=("mnz",), reference="Fox & Shaw 1994; ranx comb_mnz"),
    Method("combgmnz", lambda s, r, t, gamma: _sum(s) * _count(s) ** gamma,
           "Sum of scores times the count of runs to the power gamma.",
           (_p("gamma", None, "the exponent of the count", grid=(0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)),),
           aliases=("gmnz",), reference="Joon Ho Lee 1997; ranx comb_gmnz"),
    Method("wsum", lambda s, r, t, weights: np.where(_present(s), s * _weights(weights, s.shape[1]), 0.0).sum(axis=1),
           "Weighted sum of the normalised scores.", (WEIGHTS,), aliases=("weighted_sum",), reference="ranx wsum"),
    Method("wmnz", lambda s, r, t, weights: _sum(s) * np.where(_present(s), _weights(weights, s.shape[1]), 0.0)
           .sum(axis=1), "Sum of scores times the summed weights of the runs that returned it.", (WEIGHTS,),
           reference="Wu 2012; ranx wmnz"),
    Method("mixed", lambda s, r, t, weights: np.where(_present(s), s * _weights(weights, s.shape[1]), 0.0)
           .sum(axis=1) * np.sqrt(_count(s)), "Weighted sum times the square root of the count.", (WEIGHTS,),
           reference="Wu 2012; ranx mixed"),
    Method("isr", lambda s, r, t: _isr(r) * _count(r), "Inverse square rank: sum 1/R^2 times the count.",
           ranks=True, reference="Mourao et al. 2014; ranx isr"),
    Method("log_isr", lambda s, r, t: _isr(r) * np.log(_count(r)), "Inverse square rank times ln(count).",
           ranks=True, reference="Mourao et al. 2014; ranx log_isr"),
    Method("logn_isr", lambda s, r, t, sigma: _isr(r) * np.log(_count(r) + sigma),
           "Inverse square rank times ln(count + sigma).",
           (_p("sigma", 0.01, "added to the count", grid=(0.001, 0.01, 0.1, 0.5, 1.0)),), ranks=True,
           reference="Mourao et al. 2014; ranx logn_isr"),
    Method("rrf", lambda s, r, t, k: np.where(_present(r), 1.0 / (k + np.where(_present(r), r, 0.0)), 0.0)
           .sum(axis=1), "Reciprocal rank fusion: sum 1/(k + R).",
           (_p("k", 60, "the rank constant", low=0, grid=(1, 5, 10, 20, 40, 60, 80, 100)),), ranks=True,
           reference="Cormack et al. 2009; ranx rrf"),
    Method("rbc", lambda s, r, t, phi: np.where(_present(r), (1 - phi) * phi ** (np.where(_present(r), r, 1.0) - 1),
                                               0.0).sum(axis=1), "Rank-biased centroids: sum (1 - phi) phi^(R - 1).",
           (_p("phi", 0.8, "persistence", low=0, high=1, grid=(0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)),), ranks=True,
           reference="Bailey et al. 2017; ranx rbc"),
    Method("bordafuse", lambda s, r, t: _borda_points(t, r).sum(axis=1), "Borda count: sum C - R + 1 points.",
           ranks=True, aliases=("borda",), reference="Aslam & Montague 2001; ranx bordafuse"),
    Method("weighted_bordafuse", lambda s, r, t, weights: (_borda_points(t, r) * _weights(weights, r.shape[1]))
           .sum(axis=1), "Weighted Borda count.", (WEIGHTS,), ranks=True, aliases=("w_bordafuse",),
           reference="Aslam & Montague 2001; ranx w_bordafuse"),
    Method("condorcet", lambda s, r, t: _condorcet(s, r, t), "Order by pairwise majority of the runs.", ranks=True,
           reference="Montague & Aslam 2002; ranx condorcet"),
    Method("weighted_condorcet", _condorcet, "Order by weighted pairwise majority.", (WEIGHTS,), ranks=True,
           aliases=("w_condorcet",), reference="Montague & Aslam 2002; ranx w_condorcet"),
    Method("posfuse", _posfuse, "Sum of P(relevant | position), learnt on training queries.", (REL_LEVEL,),
           ranks=True, trained=True, reference="Lillis et al. 2010; ranx posfuse"),
    Method("mapfuse", _mapfuse, "Sum of MAP(run) / R, MAP on the training queries.", (REL_LEVEL,), ranks=True,
           trained=True, reference="Lillis et al. 2010; ranx mapfuse"),
    Method("probfuse", _probfuse, "Sum of P(relevant | segment) / segment number, learnt on training queries.",
           (_p("n_segments", None, "segments per list", int, grid=(2, 5, 10, 25, 50, 100), low=1), REL_LEVEL),
           ranks=True, trained=True, reference="Lillis et al. 2006; ranx probfuse"),
    Method("segfuse", _segfuse, "Sum of P(relevant | segment) x (S + 1), doubling segments.", (REL_LEVEL,),
           trained=True, reference="Shokouhi 2007; ranx segfuse"),
    Method("slidefuse", _slidefuse, "Sum of the mean P(relevant) over a window of ranks around R.",
           (_p("w", None, "the window's half-width in ranks", int, grid=(0, 1, 2, 3, 5, 10, 20, 50)), REL_LEVEL),
           ranks=True, trained=True, reference="Lillis et al. 2008; ranx slidefuse"),
    Method("bayesfuse", _bayesfuse, "Sum of log-odds of relevance per rank band, learnt on training queries.",
           (REL_LEVEL,), ranks=True, trained=True, reference="Aslam & Montague 2001; ranx bayesfuse"),
), option="--method")


def method_named(name: str) -> Method:
    """A method by its name or one of ranx's (``sum``, ``mnz``, ``w_bordafuse`` ...).

    >>> method_named("mnz").name, method_named("rrf").resolve()
    ('combmnz', {'k': 60})
    """
    return FUSION_METHODS.get(name)


def resolved_params(method: Method, given: dict[str, Any]) -> dict[str, Any]:
    """The method's parameters: the ones given, else the defaults; unknown or missing ones refused."""
    return method.resolve(given)
