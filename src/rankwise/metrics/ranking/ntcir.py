"""NTCIREVAL's graded measures (Sakai) and graded average precision (Robertson et al. 2010).

Gains are the labels themselves (NTCIREVAL run with ``-g 1:2:...:H``): a document judged at
level L gains L, an unjudged or non-relevant one 0. Example used below (see ``_example``):
labels by rank 2, -, 0, 1, -; judged levels 0 x1, 1 x2, 2 x1, so R = 3 and the ideal gains
are 2, 1, 1.

- Q-measure (Sakai 2004): Q = (1/R) sum over relevant ranks r of the blended ratio
  BR(r) = (C(r) + beta cg(r)) / (r + beta cg*(r)), C(r) relevant documents in the top r,
  cg(r) and cg*(r) the run's and the ideal run's cumulative gains at r. Q@k sums the ranks
  r <= k and divides by min(R, k).
- nERR@k (Sakai and Song 2011): ERR@k with the linear stopping probability
  g / (g_max + 1), over the ideal ranking's ERR@k.
- GAP (graded average precision, Robertson, Kanoulas and Yilmaz 2010) with the user's
  relevance threshold uniform over the grades: a document at rank n with grade c_n counts
  (1/n) sum_{m <= n} min(c_m, c_n), the whole divided by the sum of the judged grades. With
  binary labels it is AP.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine import segments
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Cutoff, Family, Param
from rankwise.metrics.ranking._seq import SparseTerms, safe_divide
from rankwise.metrics.ranking.gain import ideal


def _positive_gains(rl: RankedLists) -> np.ndarray:
    return np.where(rl.label > 0, rl.label, 0).astype(np.float64)


def _blended_ratios(rl: RankedLists, beta: float) -> SparseTerms:
    """The blended ratio BR(r) at every relevant retrieved row."""
    cg = segments.segment_cumsum(_positive_gains(rl), rl.offsets)[rl.rel_rows]
    ide = ideal(rl)
    ideal_cum = segments.segment_cumsum(ide.gains, ide.offsets)
    rank = rl.rel_rank0 + 1
    q = rl.rel_qidx
    take = np.minimum(rank, ide.n_pos[q])
    best = np.where(take > 0, ideal_cum[np.clip(ide.offsets[q] + take - 1, 0, max(len(ideal_cum) - 1, 0))]
                    if len(ideal_cum) else 0.0, 0.0)
    ratio = (rl.rel_cum + beta * cg) / (rank + beta * best)
    return SparseTerms(ratio, rl.rel_rank0, rl.rel_offsets)


def q_measure(rl: RankedLists, beta: float = 1.0) -> np.ndarray:
    """Q-measure = (1/R) sum over relevant retrieved ranks r of
    (C(r) + beta cg(r)) / (r + beta cg*(r)); NaN without a relevant judged document.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(q_measure(example())[0]), 4)   # r=1: (1 + 2)/(1 + 2); r=4: (2 + 3)/(4 + 4) -> (1 + 0.625)/3
    0.5417
    """
    return safe_divide(_blended_ratios(rl, beta).total(), rl.num_rel)


def q_measure_at(rl: RankedLists, k: int, beta: float = 1.0) -> np.ndarray:
    """Q@k = the blended ratios of the relevant ranks r <= k / min(R, k) (NTCIREVAL's Q@l).

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(q_measure_at(example(), 2)[0]), 4)   # r=1: 3/3 = 1, over min(3, 2)
    0.5
    """
    return safe_divide(_blended_ratios(rl, beta).upto(k), np.minimum(rl.num_rel, k))


def _cascade(stop: np.ndarray, offsets: np.ndarray, k: int) -> np.ndarray:
    """sum_r stop_r / r prod_{i<r} (1 - stop_i) over the first k rows of every segment."""
    rank0 = segments.positions(offsets)
    inside = rank0 < k
    keep = np.where(inside, 1.0 - stop, 1.0)
    log_keep = np.log(np.maximum(keep, 1e-300))
    before = segments.segment_cumsum(log_keep, offsets) - log_keep
    terms = np.where(inside, stop * np.exp(before) / (rank0 + 1.0), 0.0)
    return segments.segment_sum(terms, offsets)


def normalised_err_at(rl: RankedLists, k: int, max_label: int | None = None) -> np.ndarray:
    """nERR@k = ERR@k / the ideal ranking's ERR@k, with NTCIREVAL's linear stopping probability
    label / (max_label + 1) (max_label defaults to the largest judged label).

    >>> from rankwise.metrics.ranking._example import example
    >>> # run: 2/3 + (1/3)(1/3)/4; ideal: 2/3 + (1/3)(1/3)/2 + (1/3)(2/3)(1/3)/3
    >>> round(float(normalised_err_at(example(), 5)[0]), 4)
    0.9298
    """
    top = max_label if max_label is not None else int(rl.level_values.max(initial=0))
    scale = top + 1.0
    actual = _cascade(np.minimum(_positive_gains(rl) / scale, 1.0), rl.offsets, k)
    ide = ideal(rl)
    best = _cascade(np.minimum(ide.gains / scale, 1.0), ide.offsets, k)
    return safe_divide(actual, best)


def graded_average_precision(rl: RankedLists) -> np.ndarray:
    """GAP = sum_t [sum over ranks n with grade >= t of C_t(n)/n] / sum_t R_t, t over the grades
    1..max, C_t(n) the documents of grade >= t in the top n and R_t those judged (the uniform
    threshold distribution of Robertson et al. 2010); NaN without a relevant judged document.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(graded_average_precision(example())[0]), 4)   # t=1: 1/1 + 2/4; t=2: 1/1 -> 2.5 / (3 + 1)
    0.625
    """
    top = int(rl.level_values.max(initial=0))
    num = np.zeros(rl.n_queries)
    den = np.zeros(rl.n_queries)
    rank = rl.rank0 + 1.0
    for t in range(1, top + 1):
        at_least = rl.label >= t
        counted = segments.segment_cumsum(at_least.astype(np.float64), rl.offsets)
        num += segments.segment_sum(np.where(at_least, counted / rank, 0.0), rl.offsets)
        den += rl.level_counts[:, rl.level_values >= t].sum(axis=1)
    return safe_divide(num, den)


_K = Cutoff(int, (10,))
_BETA = Param("beta", float, 1.0, "weight of the cumulative gain in the blended ratio (0: AP)", low=0.0)
_MAX_LABEL = Param("max_label", int, None, "largest grade (label / (max + 1) is the stopping probability); "
                   "default: the largest judged label", low=1)
_NTCIR = "NTCIREVAL with gains -g 1:2:...:H"

Q = Family("Q", lambda rl, conv, cutoffs, a: q_measure(rl, a["beta"]),
           "Q-measure: mean blended ratio (C(r) + beta cg(r)) / (r + beta cg*(r)) over the relevant documents.",
           params=(_BETA,), canonical="Q", aliases=("q", "q-measure", "q_measure"), reference=_NTCIR,
           undefined="no_relevant", gain_based=True)
Q_CUT = Family("Q_cut", lambda rl, conv, cutoffs, a: np.column_stack([q_measure_at(rl, k, a["beta"])
                                                                       for k in cutoffs]),
               "Q@k: the blended ratios of the relevant documents in the top k over min(R, k).", cutoff=_K,
               params=(_BETA,), canonical="Q", cutoff_aliases=("q", "q-measure", "q_measure"), reference=_NTCIR,
               undefined="no_relevant", gain_based=True)
NERR = Family("nERR", lambda rl, conv, cutoffs, a: np.column_stack([normalised_err_at(rl, k, a["max_label"])
                                                                     for k in cutoffs]),
              "NTCIREVAL's nERR@k: ERR@k with stopping probability label / (max + 1), over the ideal ERR@k.",
              cutoff=_K, params=(_MAX_LABEL,), canonical="nERR", cutoff_aliases=("nerr",), reference=_NTCIR,
              undefined="no_relevant", gain_based=True)
GAP = Family("GAP", lambda rl, conv, cutoffs, a: graded_average_precision(rl),
             "Graded average precision (Robertson et al. 2010), relevance threshold uniform over the grades; AP "
             "on binary labels.", canonical="GAP", aliases=("gap", "graded_ap"), undefined="no_relevant",
             gain_based=True)
