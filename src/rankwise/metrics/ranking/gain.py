"""Graded-gain measures: nDCG (full and cut-off), ndcg_rel, Rndcg, G and binG.

Gains default to the label (linear gain, trec_eval's default); ``gains`` maps a label to a
custom gain (trec_eval ``-m ndcg.1=3,2=9``). Discount is 1 / log2(rank + 1). The ideal
ordering uses every judged document of the query with positive gain.

Example used below (see ``_example``): labels by rank 2, -, 0, 1, -; judged labels 2, 1, 1, 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.engine import libm, segments
from rankwise.engine.ranked import RankedLists
from rankwise.errors import RankwiseError
from rankwise.metrics.family import Cutoff, Family, Param, ProfileName, of_lists
from rankwise.metrics.ranking._seq import SparseTerms, safe_divide, seq_sum


def row_gains(labels: np.ndarray, gains: Mapping[int, float] | None) -> np.ndarray:
    """Gain of each retrieved row: the custom gain of its label, else the label (0 if < 0).

    >>> row_gains(np.array([2, -1, 0]), {2: 9.0}).tolist()
    [9.0, 0.0, 0.0]
    """
    out = np.where(labels > 0, labels, 0).astype(np.float64)
    for level, gain in (gains or {}).items():
        out[labels == level] = gain
    return out


@dataclass
class Ideal:
    """The ideal ranking of every query: positive gains in decreasing order, flat with offsets."""

    offsets: np.ndarray
    gains: np.ndarray
    cum_dcg: np.ndarray

    @property
    def n_pos(self) -> np.ndarray:
        return np.diff(self.offsets)

    def dcg_at(self, k: np.ndarray | int) -> np.ndarray:
        return segments.value_at(self.cum_dcg, self.offsets, k)

    def total(self) -> np.ndarray:
        return self.dcg_at(self.n_pos)


def _level_gains(rl: RankedLists, gains: Mapping[int, float] | None) -> np.ndarray:
    return row_gains(rl.level_values, gains) if len(rl.level_values) else np.zeros(0)


def ideal(rl: RankedLists, gains: Mapping[int, float] | None = None) -> Ideal:
    """Build (and cache on ``rl``) the ideal ranking for the given gains."""
    cache = rl.__dict__.setdefault("_ideal_cache", {})
    key = tuple(sorted((gains or {}).items()))
    if key in cache:
        return cache[key]
    lg = _level_gains(rl, gains)
    order = np.argsort(-lg, kind="stable")
    positive = lg[order] > 0
    g = lg[order][positive]
    counts = rl.level_counts[:, order][:, positive] if len(lg) else np.zeros((rl.n_queries, 0), np.int64)
    n_pos = counts.sum(axis=1).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(n_pos))).astype(np.int64)
    flat = np.repeat(np.tile(g, rl.n_queries), counts.ravel())
    pos = segments.positions(offsets)
    terms = flat / libm.log2_of_count(pos + 2)
    result = Ideal(offsets, flat, segments.segment_cumsum(terms, offsets))
    cache[key] = result
    return result


def _gain_rows(rl: RankedLists, gains: Mapping[int, float] | None) -> np.ndarray:
    """Rows whose gain is not zero (labels > 0, or any label given a non-zero custom gain).
    Without custom gains at relevance level 1 they are the relevant rows, already found for the
    other measures (``RankedLists.rel_rows``: no second pass over every row)."""
    if not gains and rl.rel_level == 1 and np.issubdtype(rl.label.dtype, np.integer):
        return rl.rel_rows
    candidate = rl.label > 0
    for level, gain in (gains or {}).items():
        candidate |= rl.label == level if gain != 0 else False
    rows = np.flatnonzero(candidate)
    return rows[row_gains(rl.label[rows], gains) != 0]


def _dcg_sparse(rl: RankedLists, gains: Mapping[int, float] | None) -> SparseTerms:
    """DCG terms gain / log2(rank + 1) of the rows with non-zero gain, in rank order."""
    cache = rl.__dict__.setdefault("_dcg_cache", {})
    key = tuple(sorted((gains or {}).items()))
    if key not in cache and rl.tie_size is not None:  # expected gain at each rank: the tie group's mean
        from rankwise.metrics.ranking import expected

        g = expected.group_mean(rl, row_gains(rl.label, gains))
        cache[key] = SparseTerms.of(g / libm.log2_of_count(rl.rank0 + 2), rl.offsets)
    if key not in cache:
        rows = _gain_rows(rl, gains)
        q = rl.query_of(rows)
        rank0 = rows - rl.offsets[q]
        terms = row_gains(rl.label[rows], gains) / libm.log2_of_count(rank0 + 2)
        counts = np.bincount(q, minlength=rl.n_queries)
        cache[key] = SparseTerms(terms, rank0, np.concatenate(([0], np.cumsum(counts))).astype(np.int64))
    return cache[key]


def _dcg_terms(rl: RankedLists, gains: Mapping[int, float] | None) -> tuple[np.ndarray, np.ndarray]:
    g = row_gains(rl.label, gains)
    terms = np.zeros(len(g), dtype=np.float64)
    nz = np.flatnonzero(g)
    terms[nz] = g[nz] / libm.log2_of_count(rl.rank0[nz] + 2)
    return g, terms


def ndcg(rl: RankedLists, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """nDCG over the whole ranking: DCG / ideal DCG, DCG = sum gain(d) / log2(rank(d) + 1).

    The ideal DCG uses every judged document (not cut at the run's length).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(ndcg(example())[0]), 4)   # (2/log2 2 + 1/log2 5) / (2 + 1/log2 3 + 1/log2 4)
    0.7763
    """
    return safe_divide(_dcg_sparse(rl, gains).total(), ideal(rl, gains).total())


def dcg_at(rl: RankedLists, ks: Sequence[int], gains: Mapping[int, float] | None = None) -> np.ndarray:
    """DCG@k for each cut-off (one column per k).

    >>> from rankwise.metrics.ranking._example import example
    >>> dcg_at(example(), [1]).tolist()
    [[2.0]]
    """
    sparse = _dcg_sparse(rl, gains)
    return np.column_stack([sparse.upto(k) for k in ks])


def mean_dcg_at(rl: RankedLists, k: int, start: int = 1, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """MDCG@k: the mean of DCG@j over the window of cut-offs j = start..k. A document at rank r
    counts in the k - max(r, start) + 1 cut-offs of the window that include it.

    >>> from rankwise.metrics.ranking._example import example
    >>> mean_dcg_at(example(), 4).round(4).tolist()   # DCG@1..4 = 2, 2, 2, 2 + 1/log2 5 -> 8.4307 / 4
    [2.1077]
    >>> mean_dcg_at(example(), 4, start=4).round(4).tolist()   # the window is DCG@4 alone
    [2.4307]
    """
    if not 1 <= start <= k:
        raise ValueError(f"MDCG: the window start must be in [1, k = {k}], got {start}")
    sparse = _dcg_sparse(rl, gains)
    inside = sparse.rank0 < k
    times = np.where(inside, k - np.maximum(sparse.rank0 + 1, start) + 1, 0)
    weighted = SparseTerms(sparse.values * times / (k - start + 1), sparse.rank0, sparse.offsets)
    return weighted.total()


def ndcg_at(rl: RankedLists, ks: Sequence[int], gains: Mapping[int, float] | None = None) -> np.ndarray:
    """nDCG@k (trec_eval ``ndcg_cut``): DCG of the top k / ideal DCG of the top k.

    >>> from rankwise.metrics.ranking._example import example
    >>> ndcg_at(example(), [1, 5]).round(4).tolist()
    [[1.0, 0.7763]]
    """
    dcg = dcg_at(rl, ks, gains)
    ide = ideal(rl, gains)
    return np.column_stack([safe_divide(dcg[:, i], ide.dcg_at(k)) for i, k in enumerate(ks)])


def ndcg_rel(rl: RankedLists, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """nDCG averaged over the relevant (positive-gain) documents (trec_eval ``ndcg_rel``).

    For each retrieved document with positive gain, take DCG / ideal DCG at its rank (the
    ideal stops growing once its positive gains run out); every positive-gain document not
    retrieved contributes DCG / ideal DCG at the end. The sum is divided by the number of
    positive-gain judged documents.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(ndcg_rel(example())[0]), 4)   # (2/2 + 2.4307/3.1309 + 1 * 2.4307/3.1309) / 3
    0.8509
    """
    g, terms = _dcg_terms(rl, gains)
    dcg_cum = segments.segment_cumsum(terms, rl.offsets)
    ide = ideal(rl, gains)
    n_pos = ide.n_pos
    q = rl.qidx
    at = np.minimum(rl.rank0, np.maximum(n_pos[q] - 1, 0))
    ideal_here = ide.cum_dcg[np.minimum(ide.offsets[:-1][q] + at, max(len(ide.cum_dcg) - 1, 0))] \
        if len(ide.cum_dcg) else np.zeros(len(q))
    pos_rows = g > 0
    contrib = np.zeros(len(g), dtype=np.float64)
    contrib[pos_rows] = safe_divide(dcg_cum[pos_rows], ideal_here[pos_rows])
    total = seq_sum(contrib, rl.offsets)
    n_pos_ret = seq_sum(pos_rows.astype(np.int64), rl.offsets)
    dcg_all = seq_sum(terms, rl.offsets)
    # trec_eval: sum += (num_rel - num_rel_ret) * results_dcg / ideal_dcg, left to right
    total = total + safe_divide((n_pos - n_pos_ret) * dcg_all, ide.total())
    return np.where(total > 0, safe_divide(total, n_pos), 0.0)


def rndcg(rl: RankedLists, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """nDCG averaged at the R-levels of the ideal ranking (trec_eval ``Rndcg``).

    The R-levels are the ranks where the ideal gain changes (after all documents of the top
    grade, then of the next, ..., down to gain 0), plus the run's length when the run goes at
    least two documents past the last positive ideal gain. Rndcg is the mean of
    DCG(top min(b, retrieved)) / ideal DCG(top b) over those ranks b; 0 when R = 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(rndcg(example())[0]), 4)   # ranks 1, 3 and 5: mean(2/2, 2/3.1309, 2.4307/3.1309)
    0.805
    """
    _, terms = _dcg_terms(rl, gains)
    dcg_cum = segments.segment_cumsum(terms, rl.offsets)
    ide = ideal(rl, gains)
    lg = _level_gains(rl, gains)
    distinct = segments.distinct(lg[lg > 0])[::-1]
    per_gain = np.column_stack([rl.level_counts[:, lg == v].sum(axis=1) for v in distinct]) \
        if len(distinct) else np.zeros((rl.n_queries, 0), np.int64)
    bounds = np.cumsum(per_gain, axis=1)
    total = np.zeros(rl.n_queries, dtype=np.float64)
    count = np.zeros(rl.n_queries, dtype=np.int64)
    ret = rl.num_ret
    for col in range(per_gain.shape[1]):
        b = bounds[:, col]
        ok = per_gain[:, col] > 0
        idcg = ide.dcg_at(b)
        ok &= idcg > 0
        val = safe_divide(segments.value_at(dcg_cum, rl.offsets, np.minimum(b, ret)), idcg)
        total = np.where(ok, total + val, total)
        count += ok
    n_pos = ide.n_pos
    extra = (n_pos + 1 < ret) & (ide.total() > 0)
    total = np.where(extra, total + safe_divide(segments.value_at(dcg_cum, rl.offsets, ret), ide.total()),
                     total)
    count += extra
    return np.where((rl.num_rel > 0) & (count > 0), safe_divide(total, count), 0.0)


def g_measure(rl: RankedLists, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """G (trec_eval, experimental): gain(d) / log2(2 + ideal cost so far - gain so far), normalised.

    Cost at rank i is max(ideal gain at i, 1); G = sum / total ideal gain.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(g_measure(example())[0]), 4)   # (2/log2(2+2-2) + 1/log2(2+5-3)) / (2+1+1)
    0.625
    """
    g, _ = _dcg_terms(rl, gains)
    ide = ideal(rl, gains)
    q = rl.qidx
    n_pos = ide.n_pos
    inside = rl.rank0 < n_pos[q]
    ideal_here = np.zeros(len(g), dtype=np.float64)
    if inside.any():
        ideal_here[inside] = ide.gains[ide.offsets[:-1][q[inside]] + rl.rank0[inside]]
    cost = np.where(ideal_here >= 1.0, ideal_here, 1.0)
    sum_cost = segments.segment_cumsum(cost, rl.offsets)
    sum_res = segments.segment_cumsum(g, rl.offsets)
    terms = np.zeros(len(g), dtype=np.float64)
    nz = g != 0
    terms[nz] = g[nz] / libm.log2((2 + sum_cost[nz]) - sum_res[nz])
    ideal_sum = seq_sum(ide.gains, ide.offsets)
    return safe_divide(seq_sum(terms, rl.offsets), ideal_sum)


def binary_g(rl: RankedLists) -> np.ndarray:
    """binG = (1/R) sum over relevant retrieved d of 1 / log2(2 + non-relevant ranked above d).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(binary_g(example())[0]), 4)   # (1/log2 2 + 1/log2 4) / 3
    0.5
    """
    rel = rl.is_rel
    terms = np.zeros(len(rl.label), dtype=np.float64)
    terms[rel] = 1.0 / libm.log2_of_count(3 + rl.rank0[rel] - rl.cum_rel[rel])
    out = safe_divide(seq_sum(terms, rl.offsets), rl.num_rel)
    return np.where(rl.num_rel_ret > 0, out, 0.0)


def convention_gains(rl: RankedLists, conv: Any, custom: Mapping[int, float] | None = None
                     ) -> dict[int, float] | None:
    """Per-grade gains under the ``gains`` convention (``labels``, ``binary``, ``above_level``);
    custom per-grade gains win. None means "the labels themselves". On continuous relevance
    the gains are the values, negative ones zeroed (``ndcg_signed`` keeps them).

    >>> from rankwise.metrics.ranking._example import example
    >>> from rankwise.engine.conventions import Conventions
    >>> convention_gains(example(), Conventions(gains="binary"))
    {0: 0.0, 1: 1.0, 2: 1.0}
    """
    if rl.level_gains is not None:  # continuous relevance: the values, negative ones zeroed
        if custom:
            raise RankwiseError("per-grade gains do not apply to continuous relevance: its values are the gains")
        if conv.gains != "labels":
            raise RankwiseError(f"gains={conv.gains!r} needs integer grades; continuous relevance uses its values")
        return {level: max(value, 0.0) for level, value in rl.level_gains.items()}
    if conv.gains == "labels":
        return dict(custom) if custom else None
    out: dict[int, float] = {}
    for level in rl.level_values.tolist():
        if conv.gains == "binary":
            out[level] = 1.0 if level >= rl.rel_level else 0.0
        else:  # above_level
            out[level] = float(level) if level >= rl.rel_level else 0.0
    out.update(custom or {})
    return out


def exponential_gains(rl: RankedLists, conv: Any) -> dict[int, float]:
    """2^label - 1 per grade (Burges et al.); grades the conventions zero out stay 0.

    >>> from rankwise.metrics.ranking._example import example
    >>> from rankwise.engine.conventions import Conventions
    >>> exponential_gains(example(), Conventions())
    {1: 1.0, 2: 3.0}
    """
    base = convention_gains(rl, conv) or {}
    return {int(level): 0.0 if base.get(int(level), 1.0) == 0 else float(2.0 ** level - 1.0)
            for level in rl.level_values if level > 0}


_GAINS = Param("gains", dict, None, "gain per label (1=3,2=9); default: the label")
_CUTS = Cutoff(int, (5, 10, 15, 20, 30, 100, 200, 500, 1000))
_GAIN_VARIANTS = (("dcg", "exp-log2", "ndcg_exp_cut"), ("dcg", "exp", "ndcg_exp_cut"))

BING = Family("binG", of_lists(binary_g), "Binary G: mean over relevant docs of 1 / log2(2 + non-relevant above).",
              trec_eval=True, aliases=("bing",))
G = Family("G", lambda rl, conv, cutoffs, params: g_measure(rl, params["gains"]),
           "G: gain-based measure combining MAP and nDCG (experimental in trec_eval).",
           params=(_GAINS,), syntax="pairs", gain_based=True, trec_eval=True, aliases=("g",))
NDCG = Family("ndcg", lambda rl, conv, cutoffs, params: ndcg(rl, convention_gains(rl, conv, params["gains"])),
              "nDCG over the whole ranking; gains = labels unless set per grade (1=3,2=9).",
              params=(_GAINS,), syntax="pairs", tie_aware=True, gain_based=True, trec_eval=True, canonical="nDCG",
              aliases=("ndcg",), variants=_GAIN_VARIANTS, continuous=True,
              profiles=(ProfileName("torchmetrics", ("ndcg",), "none", conventions=(("ties", "expected"),)),),
              undefined="no_relevant")
NDCG_REL = Family("ndcg_rel", lambda rl, conv, cutoffs, params: ndcg_rel(rl, params["gains"]),
                  "nDCG averaged over the relevant documents.", params=(_GAINS,), syntax="pairs", gain_based=True,
                  trec_eval=True, aliases=("ndcg_rel",), undefined="no_relevant")
RNDCG = Family("Rndcg", lambda rl, conv, cutoffs, params: rndcg(rl, params["gains"]),
               "nDCG averaged at the R-levels of the ideal ranking.", params=(_GAINS,), syntax="pairs",
               gain_based=True, trec_eval=True, aliases=("rndcg",), undefined="no_relevant")
NDCG_CUT = Family("ndcg_cut", lambda rl, conv, ks, params: ndcg_at(rl, ks, convention_gains(rl, conv)),
                  "nDCG at cut-off k (linear gain, log2(rank+1) discount, ideal cut at k).", cutoff=_CUTS,
                  tie_aware=True, gain_based=True, trec_eval=True, canonical="nDCG",
                  cutoff_aliases=("ndcg", "ndcg_cut"), variants=_GAIN_VARIANTS, continuous=True,
                  profiles=(ProfileName("torchmetrics", ("ndcg",), "only", conventions=(("ties", "expected"),)),),
                  undefined="no_relevant")
MDCG = Family("MDCG", lambda rl, conv, ks, params: np.column_stack(
                  [mean_dcg_at(rl, k, min(params["start"], k), convention_gains(rl, conv)) for k in ks]),
              "Mean DCG over a window of cut-offs: the mean of DCG@j for j = start..k.", cutoff=Cutoff(int, (10,)),
              params=(Param("start", int, 1, "first cut-off of the window (a cut-off below it uses k alone)", low=1),),
              gain_based=True, continuous=True, canonical="MDCG", cutoff_aliases=("mdcg",))
DCG_CUT = Family("dcg_cut", lambda rl, conv, ks, params: dcg_at(rl, ks, convention_gains(rl, conv)),
                 "DCG at cut-off k (linear gain, log2(rank+1) discount), not normalised.", cutoff=Cutoff(int, (10,)),
                 tie_aware=True, gain_based=True, continuous=True, canonical="DCG", cutoff_aliases=("dcg",),
                 variants=(("dcg", "exp-log2", "dcg_exp_cut"), ("dcg", "exp", "dcg_exp_cut")),
                 reference="ir_measures DCG@k, ranx dcg@k")
NDCG_EXP_CUT = Family("ndcg_exp_cut", lambda rl, conv, ks, params: ndcg_at(rl, ks, exponential_gains(rl, conv)),
                      "nDCG@k with exponential gain 2^label - 1 (Burges et al.), trec_eval's ideal rule.",
                      cutoff=Cutoff(int, (10,)), tie_aware=True, canonical="nDCG", canonical_args=("dcg='exp-log2'",),
                      cutoff_aliases=("ndcg_burges", "ndcg_exp"),
                      reference="ranx ndcg_burges, ir_measures nDCG(dcg='exp-log2') (gdeval)", undefined="no_relevant")
DCG_EXP_CUT = Family("dcg_exp_cut", lambda rl, conv, ks, params: dcg_at(rl, ks, exponential_gains(rl, conv)),
                     "DCG@k with exponential gain 2^label - 1 (Burges et al.), not normalised.",
                     cutoff=Cutoff(int, (10,)), tie_aware=True, canonical="DCG", canonical_args=("dcg='exp-log2'",),
                     cutoff_aliases=("dcg_burges", "dcg_exp"),
                     reference="ranx dcg_burges, ir_measures DCG(dcg='exp-log2')")
