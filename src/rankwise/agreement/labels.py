"""Agreement between two sets of relevance judgments (two judges: assessors, an LLM, a noisy
copy) on the (query, document) pairs both judged.

- **Cohen's kappa** = (p_o - p_e) / (1 - p_e) with p_o the weighted observed agreement and p_e
  the agreement expected from each judge's own label distribution; weights over the label
  categories in sorted order: ``unweighted`` (1 if equal), ``linear`` (1 - |i - j| / (K - 1))
  and ``quadratic`` (1 - (i - j)^2 / (K - 1)^2), as ``sklearn.metrics.cohen_kappa_score``.
- **Krippendorff's alpha** = 1 - D_o / D_e from the coincidence matrix of the paired labels,
  with the squared distance ``nominal`` (0 if equal, else 1), ``ordinal`` (the number of
  labels between, by rank: (sum of n_g for g from c to k - (n_c + n_k) / 2)^2) or
  ``interval`` ((c - k)^2), as the ``krippendorff`` package.
- **Binary agreement** at each level l: both judges' labels turned into relevant (>= l) or
  not, then the share of pairs on which they agree and Cohen's kappa.

Intervals come from a bootstrap over queries (seeded): queries are resampled with
replacement, each with all its pairs, and each statistic's percentile interval is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import RankwiseError
from rankwise.results import signed
from rankwise.stats.checks import resample_count, significance_level

Weights = Literal["unweighted", "linear", "quadratic"]
"""Cohen's kappa weights for disagreements: none, linear in the distance, quadratic."""
WEIGHTS: tuple[Weights, ...] = get_args(Weights)
AlphaLevel = Literal["nominal", "ordinal", "interval"]
"""Krippendorff's alpha's level of measurement."""
ALPHA_LEVELS: tuple[AlphaLevel, ...] = get_args(AlphaLevel)


def confusion(a: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Counts of (label of judge A, label of judge B) over ``categories`` x ``categories``.

    >>> confusion(np.array([0, 1, 1]), np.array([0, 1, 0]), np.array([0, 1])).tolist()
    [[1, 0], [1, 1]]
    """
    i, j = np.searchsorted(categories, a), np.searchsorted(categories, b)
    k = len(categories)
    return np.bincount(i * k + j, minlength=k * k).reshape(k, k)


def cohen_kappa(matrix: np.ndarray, weights: Weights = "unweighted") -> float:
    """Cohen's kappa of a confusion matrix (categories in order; see the module's definition).

    >>> round(cohen_kappa(np.array([[20, 5], [10, 15]])), 6)   # p_o = .7, p_e = .5: (.7 - .5) / .5
    0.4
    """
    if weights not in WEIGHTS:
        raise RankwiseError(f"weights={weights!r}: expected one of {', '.join(WEIGHTS)}")
    m = np.asarray(matrix, dtype=np.float64)
    n = m.sum()
    k = len(m)
    if n == 0:
        return float("nan")
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    if weights == "unweighted":
        disagreement = 1.0 - np.eye(k)
    else:
        gap = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
        disagreement = gap if weights == "linear" else gap**2
    den = (disagreement * expected).sum()
    return float(1.0 - (disagreement * m).sum() / den) if den > 0 else float("nan")


def krippendorff_alpha(a: np.ndarray, b: np.ndarray, level: AlphaLevel = "nominal") -> float:
    """Krippendorff's alpha of two judges' labels on the same items.

    >>> round(krippendorff_alpha(np.array([1, 2, 3, 3]), np.array([1, 2, 3, 4]), "interval"), 6)
    0.888889

    (n_1 = 2, n_2 = 2, n_3 = 3, n_4 = 1, n = 8; D_o = 2 x 1 / 8 = 0.25; D_e = 126 / 56 = 2.25;
    alpha = 1 - 0.25 / 2.25.)
    """
    if level not in ALPHA_LEVELS:
        raise RankwiseError(f"level={level!r}: expected one of {', '.join(ALPHA_LEVELS)}")
    values = distinct(np.concatenate([a, b]))
    if len(values) < 2:
        return float("nan")
    # coincidences: each item gives (a, b) and (b, a), each weighted 1 / (2 - 1)
    o = confusion(a, b, values) + confusion(b, a, values)
    o = o.astype(np.float64)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    elif level == "interval":
        delta = np.subtract.outer(values, values).astype(np.float64) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo, hi = np.minimum.outer(np.arange(len(values)), np.arange(len(values))), \
            np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
        between = cum[hi + 1] - cum[lo]  # sum of n_g for g from c to k
        delta = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    d_o = (o * delta).sum() / n
    d_e = (np.outer(n_c, n_c) * delta).sum() / (n * (n - 1))
    return float(1.0 - d_o / d_e) if d_e > 0 else float("nan")


@dataclass
class LabelAgreement:
    """Agreement of two qrels on the pairs both judged, with bootstrap intervals over queries."""

    categories: np.ndarray
    confusion: np.ndarray
    statistics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    shared_pairs: int
    only_a: int
    only_b: int
    queries: int
    warnings: list[str] = field(default_factory=list)
    """What reading the labels left out or changed (every result's one word for it)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Levels, resamples, confidence and seed."""

    @property
    def table(self) -> Any:
        """The statistics with their intervals as a DataFrame (one row per statistic)."""
        import pandas as pd

        return pd.DataFrame([{"statistic": k, "value": v, "low": self.intervals[k][0], "high": self.intervals[k][1]}
                             for k, v in self.statistics.items()])

    def to_dict(self) -> dict[str, Any]:
        """Pairs compared, each statistic with its interval, the confusion matrix, warnings, settings.

        >>> out = LabelAgreement(np.array([0, 1]), np.eye(2), {"agreement": 1.0}, {"agreement": (1.0, 1.0)}, 2, 0, 0, 1)
        >>> out.to_dict()["confusion"]
        {'categories': [0, 1], 'counts': [[1.0, 0.0], [0.0, 1.0]]}
        """
        from rankwise.results import json_plain

        return json_plain({
            "shared_pairs": self.shared_pairs, "only_a": self.only_a, "only_b": self.only_b, "queries": self.queries,
            "statistics": {k: {"value": v, "low": self.intervals[k][0], "high": self.intervals[k][1]}
                           for k, v in self.statistics.items()},
            "confusion": {"categories": self.categories, "counts": self.confusion},
            "warnings": list(self.warnings), "settings": self.settings}, nan_as_null=False)


def _statistics(a: np.ndarray, b: np.ndarray, categories: np.ndarray, levels: list[int]) -> dict[str, float]:
    m = confusion(a, b, categories)
    out = {f"kappa_{w}": cohen_kappa(m, w) for w in WEIGHTS}
    out.update({f"alpha_{lv}": krippendorff_alpha(a, b, lv) for lv in ALPHA_LEVELS})
    out["agreement"] = float((a == b).mean()) if len(a) else float("nan")
    for level in levels:
        ba, bb = (a >= level).astype(np.int64), (b >= level).astype(np.int64)
        out[f"agreement@{level}"] = float((ba == bb).mean()) if len(a) else float("nan")
        out[f"kappa@{level}"] = cohen_kappa(confusion(ba, bb, np.array([0, 1])))
    return out


def label_agreement(qrels_a: Any, qrels_b: Any, levels: list[int] | None = None, resamples: int = 1000,
                    confidence: float = 0.95, seed: int = 0) -> LabelAgreement:
    """How far two qrels agree on the (query, document) pairs both judged (see the module's
    definitions); pairs judged by one side only are counted, not compared. ``levels``: the
    binarisation levels (default every positive label seen).

    >>> a = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1, "d4": 0}}
    >>> b = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d1": 1, "d5": 3}}
    >>> out = label_agreement(a, b, resamples=0)
    >>> out.shared_pairs, out.only_a, out.only_b, out.statistics["agreement"]   # 3 of the 4 shared agree
    (4, 1, 1, 0.75)
    """
    import pandas as pd

    from rankwise.data.load import load_qrels
    from rankwise.engine.align import QrelsIndex

    resamples, confidence = resample_count(resamples), significance_level(confidence, "confidence")

    frames = []
    notes: list[str] = []
    for qrels in (qrels_a, qrels_b):
        q = load_qrels(qrels)
        QrelsIndex.build(q)   # a document judged twice (two labels for one pair) is an error, as in evaluate
        notes += [f"{q.source}: {note}" for note in q.notes]
        frames.append(pd.DataFrame({"query": q.query.to_pylist(), "doc": q.doc.to_pylist(),
                                    "label": np.asarray(q.label, dtype=np.int64)}))
    both = frames[0].merge(frames[1], on=["query", "doc"], how="outer", suffixes=("_a", "_b"), indicator=True)
    shared = both[both["_merge"] == "both"]
    if shared.empty:
        raise RankwiseError("the two qrels share no judged (query, document) pair")
    a, b = shared["label_a"].to_numpy(np.int64), shared["label_b"].to_numpy(np.int64)
    categories = distinct(np.concatenate([a, b]))
    levels = sorted(int(v) for v in categories if v > 0) if levels is None else [int(v) for v in levels]
    stats = _statistics(a, b, categories, levels)
    intervals = {k: (float("nan"), float("nan")) for k in stats}
    if resamples:
        codes, uniques = pd.factorize(shared["query"])
        order = np.argsort(codes, kind="stable")
        starts = np.searchsorted(codes[order], np.arange(len(uniques)))
        ends = np.append(starts[1:], len(order))
        rng = np.random.default_rng(seed)
        draws: dict[str, list[float]] = {k: [] for k in stats}
        from rankwise.progress import step
        from rankwise.stats.resampling import bootstrap_indices, percentile_interval

        with step("resampling queries", total=int(resamples)) as advance:
            for (picks,) in bootstrap_indices((len(uniques),), int(resamples), rng, budget=len(uniques)):
                picked = picks[0]
                rows = np.concatenate([order[starts[p]: ends[p]] for p in picked])
                for k, v in _statistics(a[rows], b[rows], categories, levels).items():
                    draws[k].append(v)
                advance()
        intervals = {k: percentile_interval(np.asarray(v), 1.0 - confidence, ignore_nan=True)
                     for k, v in draws.items()}
    return LabelAgreement(categories, confusion(a, b, categories), stats, intervals, len(shared),
                          int((both["_merge"] == "left_only").sum()), int((both["_merge"] == "right_only").sum()),
                          int(shared["query"].nunique()), notes,
                          signed("agree-labels", {"levels": levels, "resamples": resamples,
                                                  "confidence": confidence, "seed": seed}))
