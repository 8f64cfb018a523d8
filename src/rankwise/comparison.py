"""compare(qrels, runs, metrics, ...) -> Comparison: paired tests between systems on per-query values."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise._version import __version__
from rankwise.errors import Notice, OptionError, RankwiseError, notice_dicts
from rankwise.evaluation import Result, evaluate
from rankwise.params import Registry
from rankwise.results import json_plain
from rankwise.stats import checks, corrections, intervals, many, paired


def _tukey(matrix: np.ndarray) -> tuple[np.ndarray, float | None]:
    return many.tukey_hsd(matrix), None


def _nemenyi(matrix: np.ndarray) -> tuple[np.ndarray, float | None]:
    """Nemenyi's p-values, and Friedman's omnibus p when there are three systems or more."""
    return many.nemenyi(matrix), many.friedman(matrix) if matrix.shape[1] >= 3 else None


COMPARISON_TESTS: Registry[paired.ComparisonTest] = Registry("test", (
    *paired.PAIRED_TESTS.values(),
    paired.ComparisonTest("tukey", _tukey, "Tukey's HSD over all systems (family-wise error controlled).",
                          reference="Carterette 2012; statsmodels pairwise_tukeyhsd", over_all_systems=True),
    paired.ComparisonTest("nemenyi", _nemenyi, "Nemenyi's post-hoc test after Friedman over all systems.",
                          reference="Demsar 2006; scikit-posthocs posthoc_nemenyi_friedman", over_all_systems=True),
), option="--test")
"""The tests ``compare`` runs: the paired ones per pair of runs, and the two over all systems."""


if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankwise.engine.conventions import ConventionKeywords


@dataclass
class Comparison:
    """Pairwise comparisons of systems, one row per (metric, system a, system b).

    Columns of ``table``: metric, a, b, n (queries compared), mean_a, mean_b, diff (b - a),
    ci_low, ci_high (t interval), boot_low, boot_high (bootstrap interval, if asked), effect
    (Cohen's d for paired data), wins, ties, losses (queries where b beats / equals / loses to a),
    p_value, p_corrected, significant (p_corrected < alpha).
    """

    table: Any
    evaluation: Result
    test: str
    correction: str
    alpha: float
    seed: int
    permutations: int
    confidence: float
    bootstrap_ci: str | None
    n_queries: dict[str, int]
    warnings: list[str] = field(default_factory=list)
    omnibus: dict[str, float] = field(default_factory=dict)
    """Friedman test p-value per metric (with ``test="nemenyi"``): do the systems differ at all."""

    @property
    def settings(self) -> dict[str, Any]:
        """Everything needed to reproduce the comparison."""
        from rankwise.results import signed

        return signed("compare", {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                                  "seed": self.seed, "permutations": self.permutations, "confidence": self.confidence,
                                  "bootstrap_ci": self.bootstrap_ci})

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: rankwise version, metric signatures, settings, queries compared, rows."""
        rows = []
        for rec in self.table.to_dict("records"):
            rows.append(json_plain(rec, nan_as_null=False))
        return {"rankwise": __version__,
                "metrics": {m: {"signature": self.evaluation.signatures[m]} for m in self.n_queries},
                "comparison": self.settings, "queries_compared": self.n_queries,
                "summary": self.evaluation.to_dict()["runs"], "pairs": rows, "friedman_p": self.omnibus,
                "warnings": self.warnings, "notices": notice_dicts(self.warnings)}

    def significant_pairs(self, metric: str) -> set[tuple[str, str]]:
        """(winner, loser) pairs that differ significantly on ``metric``."""
        t = self.table[(self.table["metric"] == metric) & self.table["significant"]]
        return {(r.b, r.a) if r.diff > 0 else (r.a, r.b) for r in t.itertuples()}


def _matched(result: Result, metric: str, missing: str) -> tuple[Any, list[Notice]]:
    """Per-query values of every run on the queries all runs were evaluated on."""
    frame = result.per_query[metric].unstack("run")
    frame = frame[[rs.name for rs in result.runs]]
    notes = []
    if missing == "skip":
        incomplete = frame.isna().any(axis=1)
        if incomplete.any():
            notes.append(Notice(f"{metric}: {int(incomplete.sum())} query(ies) are not in every run and were "
                                "left out of the comparison (missing='skip'; missing='zero' scores them 0)",
                                "incomplete_queries", metric=metric, count=int(incomplete.sum())))
        frame = frame[~incomplete]
    return frame, notes


def compare(
    qrels: Any,
    runs: Any,
    metrics: str | Sequence[str],
    *,
    baseline: str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    permutations: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    bootstrap_ci: str | None = None,
    progress: bool = False,
    **conventions: Unpack[ConventionKeywords],
) -> Comparison:
    """Compare every pair of runs (or every run against ``baseline``) on each metric.

    ``test``: ``t`` (paired t-test), ``wilcoxon``, ``sign``, ``randomization`` (Fisher/Pitman,
    ``permutations`` draws from ``seed``; exact below 2^16 sign patterns), ``bootstrap``
    (paired, shift method), ``tukey`` (Tukey HSD over all systems) or ``nemenyi`` (Friedman
    post-hoc). ``correction`` (``holm``, ``bonferroni``, ``bh``, ``none``) is applied within each
    metric's family of comparisons; Tukey and Nemenyi control the family-wise error themselves.
    ``bootstrap_ci``: ``percentile`` or ``BCa`` adds a bootstrap interval of the mean difference.
    Queries missing from a run follow ``missing`` (see ``evaluate``): left out for every run, or 0.

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> runs = {"x": {"q1": {"a": 1.0, "z": 2.0}, "q2": {"b": 1.0, "z": 2.0}, "q3": {"c": 1.0, "z": 2.0}},
    ...         "y": {"q1": {"a": 2.0, "z": 1.0}, "q2": {"b": 2.0, "z": 1.0}, "q3": {"c": 2.0, "z": 1.0}}}
    >>> c = compare(qrels, runs, "recip_rank", test="randomization")
    >>> c.table[["a", "b", "diff", "wins", "p_value"]].to_dict("records")   # 3 wins of 3: p = 2/8
    [{'a': 'x', 'b': 'y', 'diff': 0.5, 'wins': 3, 'p_value': 0.25}]
    """
    import pandas as pd

    member, test_params = COMPARISON_TESTS.parse(test)
    correction = corrections.CORRECTION_METHODS.canonical(correction)
    alpha = checks.significance_level(alpha)
    permutations = checks.resample_count(permutations, least=1 if member.resampled else 0)
    if bootstrap_ci not in (None, "percentile", "BCa", "bca"):
        raise OptionError(f"bootstrap_ci={bootstrap_ci!r}: expected percentile, BCa or None")
    result = evaluate(qrels, runs, metrics, **conventions)
    names = [rs.name for rs in result.runs]
    if len(names) < 2:
        raise RankwiseError("compare needs at least two runs")
    if baseline is not None and baseline not in names:
        raise OptionError(f"baseline {baseline!r} is not one of the runs: {', '.join(names)}")
    pairs = ([(baseline, n) for n in names if n != baseline] if baseline is not None
             else list(itertools.combinations(names, 2)))
    missing = result.conventions.missing
    columns = list(result.summary.columns)
    rows, warnings, n_queries, omnibus = [], list(result.warnings), {}, {}
    bar = _progress(progress, len(columns) * len(pairs) * (permutations if member.resampled else 1))
    for metric in columns:
        frame, notes = _matched(result, metric, missing)
        warnings.extend(notes)
        n_queries[metric] = len(frame)
        matrix = frame.to_numpy(dtype=np.float64)
        family_p = None
        if member.over_all_systems:
            family_p, whole = member.target(matrix, **test_params)
            if whole is not None:
                omnibus[metric] = whole
        metric_rows = []
        for a, b in pairs:
            va, vb = frame[a].to_numpy(dtype=np.float64), frame[b].to_numpy(dtype=np.float64)
            d = vb - va
            if family_p is not None:
                p = float(family_p[names.index(a), names.index(b)])
                if bar:
                    bar(1)
            else:
                p = member.target(va, vb, resamples=permutations, seed=seed, progress=bar, **test_params)
                if bar and not member.resampled:
                    bar(1)
            low, high = intervals.t_interval(d, confidence)
            row = {"metric": metric, "a": a, "b": b, "n": len(d), "mean_a": float(va.mean()),
                   "mean_b": float(vb.mean()), "diff": float(d.mean()), "ci_low": low, "ci_high": high}
            if bootstrap_ci:
                method = "BCa" if bootstrap_ci.lower() == "bca" else "percentile"
                row["boot_low"], row["boot_high"] = intervals.bootstrap_interval(d, confidence, method,
                                                                                  permutations, seed)
            w, t, lo = intervals.wins_ties_losses(d)
            row.update(effect=intervals.cohens_d(d), wins=w, ties=t, losses=lo, p_value=p)
            metric_rows.append(row)
        raw = np.array([r["p_value"] for r in metric_rows])
        adjusted = raw if family_p is not None else corrections.correct(raw, correction, alpha)
        for r, pc in zip(metric_rows, adjusted, strict=True):
            r["p_corrected"] = float(pc)
            r["significant"] = bool(pc < alpha)
        rows.extend(metric_rows)
    if bar:
        bar(None)
    return Comparison(pd.DataFrame(rows), result, member.spelled(test_params),
                      "none" if member.over_all_systems else correction,
                      alpha, seed, permutations, confidence, bootstrap_ci, n_queries, warnings, omnibus)


def _progress(enabled: bool, total: int) -> Callable[[int | None], None] | None:
    """A callable advancing a rich progress bar (None when disabled); call with None to stop."""
    if not enabled:
        return None
    from rich.progress import Progress

    prog = Progress(transient=True)
    task = prog.add_task("comparing", total=total)
    prog.start()

    def advance(step: int | None) -> None:
        if step is None:
            prog.stop()
        else:
            prog.advance(task, step)

    return advance
