"""Signed-gain nDCG: negative gains (spam, harmful results, a negative rating) count against
the ranking instead of being zeroed.

Plain nDCG maps a negative grade to 0 (trec_eval reads a negative label as "not judged"), so
putting a harmful document first costs nothing more than an irrelevant one. With signed gains
DCG@k can be negative; two normalisations bound it:

- ``normalise='signed'`` (the default): DCG@k / ideal DCG@k when DCG@k >= 0, else
  DCG@k / |worst DCG@k|, in [-1, 1]: 1 is the ideal ranking, -1 the worst (the most negative
  documents first), 0 a ranking of only neutral documents.
- ``normalise='min_max'`` (Gienapp et al. 2020): (DCG@k - worst) / (ideal - worst), in [0, 1].

Negative gains come from continuous relevance (``load_qrels(..., continuous=True)``: a value
-1.5 is a gain of -1.5) or from per-grade gains on integer qrels (``ndcg_signed(0=-1,1=1,2=3)@10``
makes judged non-relevant documents cost 1). The ideal and the worst rankings use the judged
documents only; unjudged documents gain 0.

Example used below (see ``_example``): labels by rank 2, -, 0, 1, -; judged labels 2, 1, 1, 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.errors import RankwiseError
from rankwise.metrics.family import Cutoff, Family, Param
from rankwise.metrics.ranking._seq import safe_divide
from rankwise.metrics.ranking.gain import convention_gains, dcg_at, ideal, row_gains

SIGNED_NORMALISATIONS = ("signed", "min_max")


def signed_ndcg_at(rl: RankedLists, ks: Sequence[int], gains: Mapping[int, float] | None = None,
                   normalise: str = "signed") -> np.ndarray:
    """Signed-gain nDCG@k for each cut-off (one column per k); see the module.

    >>> from rankwise.metrics.ranking._example import example
    >>> # gains 0=-1: ranks 1-3 hold labels 2, unjudged, 0 -> DCG@3 = 2 - 1/log2(4) = 1.5;
    >>> # ideal 2, 1, 1 -> 2 + 1/log2(3) + 1/2 = 3.1309; worst: the one 0-label first -> -1
    >>> signed_ndcg_at(example(), [3], {0: -1.0}).round(4).tolist()
    [[0.4791]]
    >>> signed_ndcg_at(example(), [3], {0: -1.0}, "min_max").round(4).tolist()   # (1.5 + 1) / (3.1309 + 1)
    [[0.6052]]
    """
    if normalise not in SIGNED_NORMALISATIONS:
        raise ValueError(f"normalise must be one of {SIGNED_NORMALISATIONS}, got {normalise!r}")
    table = dict(gains or {})
    levels = rl.level_values.tolist()
    values = row_gains(np.asarray(levels, dtype=np.int64), table) if levels else np.zeros(0)
    signed = {int(level): float(v) for level, v in zip(levels, values.tolist(), strict=True)}
    negated = {level: -v for level, v in signed.items()}
    dcg = dcg_at(rl, ks, signed)
    best, worst_negated = ideal(rl, signed), ideal(rl, negated)
    columns = []
    for i, k in enumerate(ks):
        top, bottom = best.dcg_at(k), -worst_negated.dcg_at(k)
        if normalise == "signed":
            columns.append(np.where(dcg[:, i] >= 0, safe_divide(dcg[:, i], top),
                                    safe_divide(dcg[:, i], np.abs(bottom))))
        else:
            columns.append(safe_divide(dcg[:, i] - bottom, top - bottom))
    return np.column_stack(columns)


def _signed_gains(rl: RankedLists, conv: object, custom: Mapping[int, float] | None) -> dict[int, float] | None:
    """Continuous qrels: every value, negative ones kept, a value named in ``custom`` mapped to
    its gain; otherwise the convention's gains. Integer qrels fold negative labels into
    "unjudged" (trec_eval), so gains for a negative label are refused there, with the way to
    keep them (``continuous=True``)."""
    if rl.level_gains is not None:
        table = dict(custom or {})
        return {code: float(table.get(int(value), value)) if float(value).is_integer() else float(value)
                for code, value in rl.level_gains.items()}
    negative = sorted(label for label in (custom or {}) if label < 0)
    if negative:
        raise RankwiseError(f"ndcg_signed: gains for negative label(s) {', '.join(map(str, negative))}: integer qrels "
                            "read a negative label as unjudged (trec_eval); read them with continuous=True "
                            "(--continuous) to keep negative grades, and the gains apply to them")
    return convention_gains(rl, conv, custom)


NDCG_SIGNED = Family(
    "ndcg_signed",
    lambda rl, conv, ks, a: signed_ndcg_at(rl, ks, _signed_gains(rl, conv, a["gains"]), a["normalise"]),
    "nDCG@k with signed gains: DCG / ideal DCG when DCG >= 0, else DCG / |worst DCG| (in [-1, 1]); "
    "min_max: (DCG - worst) / (ideal - worst).",
    cutoff=Cutoff(int, (10,)),
    params=(Param("gains", dict, None, "gain per label, negative allowed (0=-1,1=1,2=3); default: the label"),
            Param("normalise", str, "signed", "signed: [-1, 1]; min_max: [0, 1] (Gienapp et al. 2020)",
                  choices=SIGNED_NORMALISATIONS)),
    syntax="pairs", gain_based=True, continuous=True, canonical="nDCG_signed",
    cutoff_aliases=("ndcg_signed", "signed_ndcg"), undefined=None)

__all__ = ["NDCG_SIGNED", "signed_ndcg_at"]
