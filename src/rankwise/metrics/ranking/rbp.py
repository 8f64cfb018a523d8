"""Rank-biased precision (Moffat & Zobel, TOIS 2008) and its residual."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Family, Param
from rankwise.metrics.ranking._seq import seq_sum


def _powers(p: float, n: int) -> np.ndarray:
    """p**0 .. p**(n-1) by repeated multiplication (as a sequential loop computes them)."""
    steps = np.full(n, p, dtype=np.float64)
    if n:
        steps[0] = 1.0
    return np.cumprod(steps)


def _normalised_gains(rl: RankedLists, gains: Mapping[int, float] | None) -> np.ndarray:
    """Gain of each row, scaled per query as trec_eval does: when any gain level of the query
    (labels 0..max judged label, with custom gains applied, plus every custom gain) lies
    outside [0, 1], every gain becomes (g - min) / (max - min)."""
    custom = dict(gains or {})
    label = rl.label
    g = np.where(label > 0, label, 0).astype(np.float64)
    for level, gain in custom.items():
        g[label == level] = gain
    if len(rl.level_values):
        present = np.where(rl.level_counts > 0, rl.level_values[None, :], -1)
        max_level = present.max(axis=1)
    else:
        max_level = np.full(rl.n_queries, -1, dtype=np.int64)
    lo = np.zeros(rl.n_queries)
    hi = np.zeros(rl.n_queries)
    for m in distinct(max_level).tolist():
        levels = {lvl: float(lvl) for lvl in range(0, m + 1)}
        levels.update({lvl: float(v) for lvl, v in custom.items()})
        values = list(levels.values()) or [0.0]
        rows = max_level == m
        lo[rows] = min(values)
        hi[rows] = max(values)
    scale = ((lo < 0) | (hi > 1)) & (hi > lo)
    q = rl.qidx
    span = np.where(scale, hi - lo, 1.0)
    return np.where(scale[q], (g - lo[q]) / span[q], g)


def rbp(rl: RankedLists, p: float = 0.9, gains: Mapping[int, float] | None = None) -> np.ndarray:
    """RBP = (1 - p) * sum_i gain(d_i) * p**(i-1), with gains scaled into [0, 1].

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(rbp(example())[0]), 4)   # 0.1 * (2/2 * 1 + 1/2 * 0.9**3)
    0.1364
    """
    pw = _powers(p, int(rl.num_ret.max()) if rl.n_queries and len(rl.label) else 0)
    g = _normalised_gains(rl, gains)
    terms = g * pw[rl.rank0] if len(g) else g
    return (1.0 - p) * seq_sum(terms, rl.offsets)


def rbp_residual(rl: RankedLists, p: float = 0.9) -> np.ndarray:
    """RBP residual: the most RBP could rise if every unjudged retrieved document had gain 1
    and the ranking continued with relevant documents: p**n + (1 - p) * sum over unjudged
    p**(i-1). trec_eval reports 0 when no retrieved document is unjudged.

    >>> from rankwise.metrics.ranking._example import example
    >>> round(float(rbp_residual(example())[0]), 4)   # 0.9**5 + 0.1 * (0.9 + 0.9**4)
    0.7461
    """
    n = int(rl.num_ret.max()) if rl.n_queries and len(rl.label) else 0
    pw = _powers(p, n + 1)
    unj = rl.label < 0
    terms = np.where(unj, pw[rl.rank0], 0.0) if len(unj) else np.zeros(0)
    total = seq_sum(terms, rl.offsets)
    any_unj = seq_sum(unj.astype(np.int64), rl.offsets) > 0
    return np.where(any_unj, pw[rl.num_ret] + (1.0 - p) * total, 0.0)


def relstring(rl: RankedLists, length: int = 10) -> list[str]:
    """The labels of the first ``length`` documents as a string: 0-9 as is, '>' above 9,
    '-' not in the pool, '.' in the pool but unjudged.

    >>> from rankwise.metrics.ranking._example import example
    >>> relstring(example())
    ['2-01.']
    """
    keep = rl.rank0 < length
    chars = np.full(len(rl.label), "<", dtype="<U1")
    lab = rl.label
    digits = (lab >= 0) & (lab <= 9)
    chars[digits] = lab[digits].astype(str)
    chars[lab > 9] = ">"
    chars[lab == -1] = "-"
    chars[lab == -2] = "."
    kept = chars[keep]
    counts = np.minimum(rl.num_ret, max(length, 0))
    ends = np.cumsum(counts)
    joined = "".join(kept.tolist())
    starts = ends - counts
    return [joined[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=False)]



_P = Param("p", float, 0.9, "persistence: chance of looking at the next document", low=0.0, high=1.0, in_name=True)

RELSTRING = Family("relstring", lambda rl, conv, cutoffs, params: relstring(rl, params["length"]),
                   "Labels of the first N documents as a string (per query only).",
                   params=(Param("length", int, 10, "documents shown", low=0),), syntax="positional",
                   summary="none", value_kind="string", trec_eval=True, higher_is_better=None, aliases=("relstring",))
RBP = Family("rbp", lambda rl, conv, cutoffs, params: rbp(rl, params["p"], params["gains"]),
             "Rank-biased precision with persistence p (default 0.9): (1-p) sum gain_i p^(i-1).",
             params=(_P, Param("gains", dict, None, "gain per label (1=0.5,2=1); default: the label")),
             syntax="pairs", gain_based=True, trec_eval=True, canonical="RBP", aliases=("rbp",), digits_param="p")
RBP_RESID = Family("rbp_resid", lambda rl, conv, cutoffs, params: rbp_residual(rl, params["p"]),
                   "RBP residual: how much RBP could rise if unjudged retrieved docs were relevant.",
                   params=(_P,), syntax="pairs", trec_eval=True, aliases=("rbp_resid",), higher_is_better=False)
