"""Agreement of system rankings: the same runs scored under two qrels (two judges), ranked by
their mean, compared.

- **Kendall's tau** (tau-b, as ``scipy.stats.kendalltau``) and **Spearman's rho**;
- **tau_AP** (Yilmaz, Aslam & Robertson, SIGIR 2008), which weighs swaps near the top more:
  with the systems ordered by judge B's scores, tau_AP = 2 / (N - 1) x sum over i = 2..N of
  C(i) / (i - 1), minus 1, where C(i) counts the systems above position i that judge A also
  puts above the system at position i. It is not symmetric: judge A is the reference.
- **top-k overlap**: the share of judge A's top k systems that are also in judge B's top k.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import RankwiseError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankwise.engine.conventions import ConventionKeywords


def tau_ap(reference: np.ndarray, estimate: np.ndarray) -> float:
    """tau_AP of the ranking by ``estimate`` against the ranking by ``reference`` (higher scores
    rank first; ties in ``estimate`` are not allowed to decide: they are refused).

    >>> tau_ap(np.array([4.0, 3.0, 2.0, 1.0]), np.array([4.0, 3.0, 2.0, 1.0]))
    1.0
    >>> tau_ap(np.array([4.0, 3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0, 4.0]))
    -1.0
    >>> round(tau_ap(np.array([4.0, 3.0, 2.0, 1.0]), np.array([3.0, 4.0, 2.0, 1.0])), 6)   # top pair swapped
    0.333333
    """
    reference, estimate = np.asarray(reference, dtype=np.float64), np.asarray(estimate, dtype=np.float64)
    n = len(estimate)
    if n < 2:
        return float("nan")
    if len(distinct(estimate)) < n:
        raise RankwiseError("tau_AP needs the compared ranking without ties")
    order = np.argsort(-estimate, kind="stable")
    ref = reference[order]
    total = 0.0
    for i in range(1, n):
        total += float((ref[:i] > ref[i]).sum()) / i
    return 2.0 * total / (n - 1) - 1.0


@dataclass
class SystemAgreement:
    """System rankings under two qrels and how far they agree."""

    metric: str
    runs: list[str]
    scores_a: np.ndarray
    scores_b: np.ndarray
    statistics: dict[str, float]
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """The metric and the top-k of the rank statistics."""

    def to_dict(self) -> dict[str, Any]:
        """The metric, one row per run, the ranking statistics and settings."""
        from rankwise.results import json_plain

        return json_plain({"metric": self.metric, "runs": self.table, "statistics": dict(self.statistics),
                           "warnings": self.warnings, "settings": self.settings}, nan_as_null=False)

    @property
    def table(self) -> Any:
        """Per run: its mean under each qrels, the difference and its rank under each."""
        import pandas as pd

        frame = pd.DataFrame({"run": self.runs, "qrels_a": self.scores_a, "qrels_b": self.scores_b})
        frame["difference"] = frame["qrels_b"] - frame["qrels_a"]
        frame["rank_a"] = frame["qrels_a"].rank(ascending=False, method="min").astype(int)
        frame["rank_b"] = frame["qrels_b"].rank(ascending=False, method="min").astype(int)
        return frame


def system_agreement(qrels_a: Any, qrels_b: Any, runs: Any, metric: str = "ndcg@10", top_k: int = 3,
                     **conventions: Unpack[ConventionKeywords]) -> SystemAgreement:
    """Evaluate ``runs`` under both qrels with ``metric`` and compare the system rankings.

    >>> qa = {"q1": {"a": 1, "b": 0}, "q2": {"b": 1}}
    >>> runs = {"x": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 1.0}},
    ...         "y": {"q1": {"b": 2.0, "a": 1.0}, "q2": {"b": 1.0}},
    ...         "z": {"q1": {"b": 2.0}, "q2": {"c": 1.0}}}
    >>> out = system_agreement(qa, qa, runs, "P@1")
    >>> out.statistics["kendall_tau"], out.statistics["tau_ap"]
    (1.0, 1.0)
    """
    from scipy.stats import kendalltau, spearmanr

    from rankwise.evaluation import evaluate

    under_a = evaluate(qrels_a, runs, [metric], **conventions)
    under_b = evaluate(qrels_b, runs, [metric], **conventions)
    a, b = under_a.summary[metric], under_b.summary[metric]
    names = [str(n) for n in a.index]
    if len(names) < 2:
        raise RankwiseError("system agreement needs at least two runs")
    sa, sb = a.to_numpy(np.float64), b.reindex(a.index).to_numpy(np.float64)
    k = min(int(top_k), len(names))
    top_a = set(np.argsort(-sa, kind="stable")[:k].tolist())
    top_b = set(np.argsort(-sb, kind="stable")[:k].tolist())
    stats = {"kendall_tau": float(kendalltau(sa, sb).statistic), "spearman": float(spearmanr(sa, sb).statistic),
             "tau_ap": tau_ap(sa, sb) if len(distinct(sb)) == len(sb) else float("nan"),
             f"top{k}_overlap": len(top_a & top_b) / k}
    warnings = list(dict.fromkeys(under_a.warnings + under_b.warnings))
    return SystemAgreement(metric, names, sa, sb, stats, warnings,
                           {"metric": metric, "top_k": k, "signature": under_a.signatures.get(metric),
                            "conventions": conventions})
