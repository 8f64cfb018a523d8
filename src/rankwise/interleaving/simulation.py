"""Simulated users comparing two runs: how many impressions A/B testing, each interleaving
method and a counterfactual estimate need to pick the right winner.

Each query both runs answer is one comparison; its true winner is the run with the higher
nDCG@10 on the qrels (``rankwise.evaluate``), queries with a smaller difference than
``min_difference`` are left out. Users come from a click model of ``rankwise.clicks`` whose
attractiveness follows the document's label (``ULTRA``'s parameters: ``pbm``, ``cascade``,
``ubm``; ``dbn`` adds satisfaction equal to attractiveness and continuation 0.9; or an
ULTRA parameter file).

The outcome law of one impression is computed exactly, not sampled: every click pattern of
the top ``depth`` ranks (``2^depth`` of them) gets its probability from the model's
conditional click probabilities, and every list a method can show gets its probability from
``distribution`` (exact for balanced, team-draft and optimized; ``samples`` draws for
probabilistic). So for ``n`` impressions the counts are multinomial draws from exact laws,
and 10^6 impressions cost no more than 10^2:

- **interleaving**: each impression is a win, tie or loss by credit; the verdict after ``n``
  is the sign of wins - losses.
- **A/B**: ``n`` users hash-assigned (``assign``, a new experiment name per repetition), one
  impression each; the verdict is the sign of the difference in clicks per user.
- **counterfactual** (``pbm-ips``): ``n`` impressions logged under team-draft interleaving
  of A and B (a randomised logging policy that shows the top of both); each run's clicks
  per impression estimated from that log by position-based IPS with ``ULTRA``'s PBM
  examination (a document a run ranks but the log did not show counts zero); the verdict is
  the sign of B's estimate minus A's.

A comparison is one query (``queries_per_comparison=1``) or a random set of queries
(``mix``): impressions then draw their query from the set, which adds the between-query
variance of clicks that a real A/B test has and interleaving's paired design removes.

``wrong_winner`` is the rate of verdicts against the winner the method itself converges to
with unlimited impressions (its sampling error: what decides how many impressions it needs;
a tie counts half); ``against_ndcg`` the rate against the run with the higher nDCG@10
(which adds where clicks and the judgments disagree, ``agreement``). Also measured, at
``check_impressions``: the false-positive rate at ``alpha`` when both sides show run A (sign
test for interleaving, Welch for A/B), and the coverage of the 1 - alpha interval of the
true preference (bootstrap of ``delta``) or of the true difference in clicks per user (Welch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog, piece_of
from rankwise.clicks.models import ClickModel
from rankwise.errors import InputError
from rankwise.interleaving.interleave import distribution
from rankwise.interleaving.methods import INTERLEAVING_METHODS
from rankwise.interleaving.simulated_users import SIMULATED_USERS, ULTRA_PBM_EXAM, user_model
from rankwise.stats.distributions import sign_test_p
from rankwise.stats.resampling import multinomial_counts, percentile_interval
from rankwise.stats.twosample import welch_arrays

INTERLEAVING = tuple(INTERLEAVING_METHODS.names())
COMPARED_METHODS = ("ab", *INTERLEAVING, "pbm-ips")


def click_patterns(depth: int) -> np.ndarray:
    """Every 0/1 click pattern of ``depth`` ranks (``2^depth`` x ``depth``), rank 1 first."""
    codes = np.arange(2 ** depth)
    return ((codes[:, None] >> np.arange(depth)[None, :]) & 1).astype(np.int8)


def pattern_probabilities(model: ClickModel, log: ClickLog, pairs: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """P(pattern) for each list (rows of ``pairs``, -1 past a list's end) and pattern:
    the product over ranks of the model's conditional click probabilities."""
    lists, depth = pairs.shape
    count = len(patterns)
    cell_pairs = np.repeat(pairs, count, axis=0)
    mask = cell_pairs >= 0
    tiled = np.tile(patterns, (lists, 1)) > 0
    clicks = (tiled & mask).astype(np.int8)
    piece = piece_of(log, np.repeat(log.pair_query[np.maximum(pairs[:, 0], 0)], count),
                     np.where(mask, log.pair_doc[np.maximum(cell_pairs, 0)], 0), np.maximum(cell_pairs, 0),
                     clicks, mask)
    p = model.conditional_click_probs(piece)
    probs = np.prod(np.where(mask, np.where(clicks > 0, p, 1 - p), 1.0), axis=1)
    probs[(tiled & ~mask).any(axis=1)] = 0.0   # a click past the list's end
    return probs.reshape(lists, count)


@dataclass
class Comparison:
    """One query: the two rankings, the true preference (nDCG@10 of B minus A) and each
    method's law of one impression."""

    query: str
    rankings: list[list[str]]
    difference: float
    outcome: dict[str, np.ndarray]       # interleaving: (p_win_A, p_tie, p_loss_A); also for the A/A check
    clicks: dict[str, np.ndarray]        # A/B: distribution of clicks per impression on A and on B
    ips: tuple[np.ndarray, np.ndarray]   # pbm-ips: per-pattern value of (estimate of B - clicks on A), probability


@dataclass
class SimulationResult:
    """Tables: ``error`` (method, impressions, wrong-winner rate against the method's own
    limit and against nDCG@10), ``checks`` (method,
    false-positive rate, coverage), ``agreement`` (method, share of comparisons whose
    infinite-impression verdict is right), ``ratios`` (impressions A/B needs over each
    method's for ``target_error``)."""

    error: Any
    checks: Any
    agreement: Any
    ratios: Any
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def table(self) -> Any:
        """The main table: ``error``."""
        return self.error

    def to_dict(self) -> dict[str, Any]:
        """Settings and the four tables as lists of rows (JSON-plain)."""
        from rankwise.results import json_plain

        return json_plain({"settings": self.settings, "error": self.error, "checks": self.checks,
                           "agreement": self.agreement, "ratios": self.ratios, "warnings": self.warnings},
                          nan_as_null=False)


def _top_lists(run: Any, depth: int) -> dict[str, list[str]]:
    from rankwise.clicks.simulate import sessions_from_run

    log = sessions_from_run(run, depth)
    return {log.query_ids[q]: [log.doc_ids[d] for d, m in zip(row, mask, strict=True) if m]
            for q, row, mask in zip(log.query.tolist(), log.docs.tolist(), log.mask.tolist(), strict=True)}


def _outcome_law(table: Any, probs: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    law = np.zeros(3)
    for i, p_list in enumerate(table.probabilities):
        credit = table.credits(i, patterns)
        sign = np.sign(credit[:, 0] - credit[:, 1])
        p = probs[i] * p_list
        law += [p[sign > 0].sum(), p[sign == 0].sum(), p[sign < 0].sum()]
    return law / law.sum()


def _compress(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (to 1e-12) with their summed probabilities."""
    keep = probs > 0
    unique, inverse = np.unique(np.round(values[keep], 12), return_inverse=True)
    return unique, np.bincount(inverse, weights=probs[keep], minlength=len(unique))


def _ips_law(table: Any, a: list[str], b: list[str], exam: np.ndarray, probs: np.ndarray, index: dict,
             patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Law of one team-draft-logged impression's position-based IPS estimate of B's clicks
    minus A's: each click at position ``j`` on ``d`` counts ``(exam(rank_B(d)) -
    exam(rank_A(d))) / exam(j)`` (exam 0 for a run that does not rank ``d`` in its top)."""
    rank_a = {d: r for r, d in enumerate(a)}
    rank_b = {d: r for r, d in enumerate(b)}
    values, weights = [], []
    for docs, p_list in zip(table.lists, table.probabilities, strict=True):
        gain = np.array([((exam[rank_b[d]] if d in rank_b else 0.0) - (exam[rank_a[d]] if d in rank_a else 0.0))
                         / exam[j] for j, d in enumerate(docs)])
        values.append(patterns[:, :len(docs)] @ gain)
        weights.append(probs[index[tuple(docs)]] * p_list)
    return _compress(np.concatenate(values), np.concatenate(weights))


def build_comparisons(qrels: Any, run_a: Any, run_b: Any, click_model: str = "pbm", depth: int = 10,
                      min_difference: float = 0.0, samples: int = 200, seed: int = 0,
                      methods: Sequence[str] = COMPARED_METHODS) -> list[Comparison]:
    """Every query's comparison with its exact outcome laws (see the module)."""
    from rankwise.evaluation import evaluate

    lists_a, lists_b = _top_lists(run_a, depth), _top_lists(run_b, depth)
    scores = evaluate(qrels, {"A": run_a, "B": run_b}, ["ndcg@10"]).per_query["ndcg@10"]
    per_run = scores.unstack(level=0)
    queries = [q for q in sorted(set(lists_a) & set(lists_b)) if q in per_run.index]
    if not queries:
        raise InputError("the two runs and the qrels share no query", field="runs")
    base = ClickLog.from_arrays([q for q in queries for _ in (0, 1)],
                                [lst for q in queries for lst in (lists_a[q], lists_b[q])],
                                [[0] * len(lst) for q in queries for lst in (lists_a[q], lists_b[q])])
    model = user_model(click_model, qrels, base)
    pair_of = {(base.query_ids[q], base.doc_ids[d]): i
               for i, (q, d) in enumerate(zip(base.pair_query.tolist(), base.pair_doc.tolist(), strict=True))}
    patterns = click_patterns(depth)
    exam = np.asarray(ULTRA_PBM_EXAM + [ULTRA_PBM_EXAM[-1]] * max(0, depth - len(ULTRA_PBM_EXAM)))[:depth]
    rng = np.random.default_rng(seed)
    comparisons = []
    for q in queries:
        a, b = lists_a[q], lists_b[q]
        difference = float(per_run.loc[q, "B"] - per_run.loc[q, "A"])
        if abs(difference) < min_difference or difference == 0:
            continue
        tables = {m: distribution([a, b], m, samples=samples, rng=rng) for m in INTERLEAVING if m in methods}
        tables["aa"] = distribution([a, a], "team-draft")
        shown = [a, b] + [lst for t in tables.values() for lst in t.lists]
        index: dict[tuple[str, ...], int] = {}
        for lst in shown:
            index.setdefault(tuple(lst), len(index))
        pairs = np.full((len(index), depth), -1, dtype=np.int64)
        for lst, row in index.items():
            pairs[row, :len(lst)] = [pair_of[(q, d)] for d in lst]
        probs = pattern_probabilities(model, base, pairs, patterns)
        outcome = {m: _outcome_law(t, probs[[index[tuple(lst)] for lst in t.lists]], patterns)
                   for m, t in tables.items()}
        counts = patterns.sum(axis=1)
        clicks = {side: np.bincount(counts, weights=probs[index[tuple(lst)]], minlength=depth + 1)
                  for side, lst in (("A", a), ("B", b))}
        ips = _ips_law(tables.get("team-draft") or distribution([a, b], "team-draft"), a, b, exam,
                       probs, index, patterns)
        comparisons.append(Comparison(q, [a, b], difference, outcome, clicks, ips))
    if not comparisons:
        raise InputError(f"no query where the runs' nDCG@10 differ by at least {min_difference}", field="runs")
    return comparisons


def _arm_sizes(impressions: Sequence[int], repetitions: int) -> np.ndarray:
    """Users in arm B among the first n of ``max(impressions)`` hash-assigned users, per
    repetition (experiment ``simulation-<rep>``): repetitions x levels."""
    from rankwise.experiments.hashing import assign

    top = max(impressions)
    users = np.arange(1, top + 1)   # id 0 is not hashable
    out = np.zeros((repetitions, len(impressions)), dtype=np.int64)
    for rep in range(repetitions):
        in_b = np.cumsum(assign(users, f"simulation-{rep}") == 1)
        out[rep] = in_b[np.asarray(impressions) - 1]
    return out


def _ab_draws(rng, law_a, law_b, n_a, n_b):
    k = np.arange(len(law_a))
    counts_a = rng.multinomial(n_a, law_a)
    counts_b = rng.multinomial(n_b, law_b)
    stats = []
    for counts, n in ((counts_a, n_a), (counts_b, n_b)):
        n = np.maximum(n, 1)
        mean = counts @ k / n
        var = (counts @ (k ** 2) - n * mean ** 2) / np.maximum(n - 1, 1)
        stats.append((mean, np.maximum(var, 0), n))
    return stats


def mix(comparisons: Sequence[Comparison], size: int, count: int, seed: int = 0) -> list[Comparison]:
    """``count`` comparisons over random sets of ``size`` queries: each impression's query is
    drawn uniformly from the set, so every law is the set's average and the true winner is
    the run with the higher mean nDCG@10 over the set (sets with a zero mean difference are
    drawn again)."""
    if size <= 1:
        return list(comparisons)
    if size > len(comparisons):
        raise InputError(f"query sets of {size} from {len(comparisons)} queries", field="queries_per_comparison")
    rng = np.random.default_rng(seed)
    out: list[Comparison] = []
    while len(out) < count:
        chosen = [comparisons[i] for i in rng.choice(len(comparisons), size, replace=False)]
        difference = float(np.mean([c.difference for c in chosen]))
        if difference == 0:
            continue
        outcome = {m: np.mean([c.outcome[m] for c in chosen], axis=0) for m in chosen[0].outcome}
        clicks = {side: np.mean([c.clicks[side] for c in chosen], axis=0) for side in ("A", "B")}
        ips = _compress(np.concatenate([c.ips[0] for c in chosen]), np.concatenate([c.ips[1] for c in chosen]) / size)
        out.append(Comparison("+".join(c.query for c in chosen), [], difference, outcome, clicks, ips))
    return out


def run_simulation(comparisons: Sequence[Comparison], impressions: Sequence[int] = (100, 1000, 10_000, 100_000,
                   1_000_000), repetitions: int = 200, check_impressions: int = 10_000, alpha: float = 0.05,
                   target_error: float = 0.05, seed: int = 0, resamples: int = 500,
                   settings: dict[str, Any] | None = None) -> SimulationResult:
    """Error rates against impressions, false-positive rates, coverage and impressions ratios
    over ``comparisons`` (see the module)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    levels = sorted(int(n) for n in impressions)
    arm_b = _arm_sizes(sorted({*levels, check_impressions}), repetitions)
    column = {n: i for i, n in enumerate(sorted({*levels, check_impressions}))}
    methods = [m for m in COMPARED_METHODS if m in ("ab", "pbm-ips") or m in comparisons[0].outcome]
    errors: dict[tuple[str, int], list[Any]] = {(m, n): [] for m in methods for n in levels}
    misses: dict[tuple[str, int], list[Any]] = {(m, n): [] for m in methods for n in levels}
    agree: dict[str, list[float]] = {m: [] for m in methods}
    false_pos: dict[str, list[float]] = {"ab": [], "team-draft": []}
    cover: dict[str, list[float]] = {m: [] for m in methods if m != "pbm-ips"}
    from rankwise.progress import tracked

    for c in tracked(comparisons, "simulating comparisons"):
        truth = np.sign(c.difference)            # +1: B better
        law_a, law_b = c.clicks["A"], c.clicks["B"]
        k = np.arange(len(law_a))
        true_ab = law_b @ k - law_a @ k
        values, law = c.ips
        limit = {"ab": np.sign(true_ab), "pbm-ips": np.sign(values @ law)}
        limit.update({m: np.sign(c.outcome[m][2] - c.outcome[m][0]) for m in methods if m in c.outcome})
        for m in methods:
            agree[m].append(float(limit[m] == truth))

        def record(m: str, n: int, verdict: np.ndarray, limit: dict = limit, truth: float = truth) -> None:
            if limit[m] != 0:   # a method without a preference in the limit has no wrong winner
                errors[(m, n)].append(np.mean(np.where(verdict == 0, 0.5, verdict != limit[m])))
            misses[(m, n)].append(np.mean(np.where(verdict == 0, 0.5, verdict != truth)))
        for n in levels:
            n_b = arm_b[:, column[n]]
            (ma, va, na), (mb, vb, nb) = _ab_draws(rng, law_a, law_b, n - n_b, n_b)
            record("ab", n, np.sign(mb - ma))
            for m in methods:
                if m in c.outcome:
                    draws = rng.multinomial(n, c.outcome[m], size=repetitions)
                    record(m, n, np.sign(draws[:, 2] - draws[:, 0]))
            draws = rng.multinomial(n, law, size=repetitions)
            record("pbm-ips", n, np.sign(draws @ values))
        n = check_impressions
        n_b = arm_b[:, column[n]]
        (ma, va, na), (mb, vb, nb) = _ab_draws(rng, law_a, law_a, n - n_b, n_b)
        p, _ = welch_arrays(ma, va, na, mb, vb, nb, alpha)
        false_pos["ab"].append(np.mean(p < alpha))
        aa = rng.multinomial(n, c.outcome["aa"], size=repetitions)
        false_pos["team-draft"].append(np.mean(sign_test_p(aa[:, 0], aa[:, 2]) < alpha))
        (ma, va, na), (mb, vb, nb) = _ab_draws(rng, law_a, law_b, n - n_b, n_b)
        _, half = welch_arrays(ma, va, na, mb, vb, nb, alpha)
        cover["ab"].append(np.mean(np.abs((mb - ma) - true_ab) <= half))
        for m in methods:
            if m in c.outcome and m in cover:
                pw, pt, pl = c.outcome[m]
                draws = rng.multinomial(n, c.outcome[m], size=repetitions)
                boots = multinomial_counts(draws, resamples, rng)
                delta = (boots[:, :, 0] - boots[:, :, 2]) / (2 * n)
                low, high = percentile_interval(delta, alpha, axis=1)
                cover[m].append(np.mean((low <= (pw - pl) / 2) & ((pw - pl) / 2 <= high)))
    count = len(comparisons)
    error = pd.DataFrame([{"method": m, "impressions": n, "comparisons": len(errors[(m, n)]),
                           "wrong_winner": float(np.mean(errors[(m, n)])) if errors[(m, n)] else float("nan"),
                           "se": float(np.std(errors[(m, n)], ddof=1) / np.sqrt(len(errors[(m, n)])))
                           if len(errors[(m, n)]) > 1 else float("nan"),
                           "against_ndcg": float(np.mean(misses[(m, n)]))}
                          for m in methods for n in levels])
    checks = pd.DataFrame([{"method": m, "impressions": check_impressions,
                            "false_positive_rate": float(np.mean(false_pos[m])) if m in false_pos else float("nan"),
                            "coverage": float(np.mean(cover[m])) if m in cover else float("nan")}
                           for m in methods])
    agreement = pd.DataFrame([{"method": m, "comparisons": count, "right_in_the_limit": float(np.mean(agree[m]))}
                              for m in methods])
    ratios = _ratios(error, methods, target_error)
    info = {**(settings or {}), "comparisons": count, "repetitions": repetitions, "alpha": alpha,
            "target_error": target_error, "seed": seed}
    from rankwise.results import signed

    return SimulationResult(error, checks, agreement, ratios, signed("interleave-simulate", info))


def _impressions_for(curve: Any, target: float) -> float:
    """Impressions at which the error curve first falls to ``target`` (log-linear between
    levels); inf when it never does."""
    n = curve["impressions"].to_numpy(dtype=float)
    e = curve["wrong_winner"].to_numpy()
    if e[0] <= target:
        return float(n[0])
    for i in range(1, len(n)):
        if e[i] <= target:
            frac = (e[i - 1] - target) / (e[i - 1] - e[i])
            return float(10 ** (np.log10(n[i - 1]) + frac * (np.log10(n[i]) - np.log10(n[i - 1]))))
    return float("inf")


def _ratios(error: Any, methods: Sequence[str], target: float) -> Any:
    import pandas as pd

    needed = {m: _impressions_for(error[error["method"] == m], target) for m in methods}
    return pd.DataFrame([{"method": m, "target_error": target, "impressions": needed[m],
                          "ab_over_method": needed["ab"] / needed[m] if np.isfinite(needed[m]) else float("nan")}
                         for m in methods])


def simulate_comparison(qrels: Any, run_a: Any, run_b: Any, click_model: str = "pbm", depth: int = 10,
                        impressions: Sequence[int] = (100, 1000, 10_000, 100_000, 1_000_000), repetitions: int = 200,
                        min_difference: float = 0.0, check_impressions: int = 10_000, alpha: float = 0.05,
                        target_error: float = 0.05, samples: int = 200, seed: int = 0,
                        queries_per_comparison: int = 1, comparisons_count: int = 200) -> SimulationResult:
    """Build every query's comparison and run the experiments (see the module).

    >>> import rankwise.interleaving.simulation as sim
    >>> qrels = {"q": {"d1": 3, "d2": 0, "d3": 1}}
    >>> result = sim.simulate_comparison(qrels, {"q": {"d1": 1, "d2": 2}}, {"q": {"d1": 2, "d3": 1}},
    ...                                  depth=2, impressions=[100, 10_000], repetitions=20)
    >>> result.error.query("method == 'team-draft'")["wrong_winner"].round(2).tolist()   # B is better
    [0.0, 0.0]
    """
    if not str(click_model).endswith(".json"):
        SIMULATED_USERS.parse(click_model)   # an unknown name or parameter, named before any work
    if min(impressions) < 2:
        raise InputError("impressions must be at least 2", field="impressions")
    comparisons = build_comparisons(qrels, run_a, run_b, click_model, depth, min_difference, samples, seed)
    comparisons = mix(comparisons, queries_per_comparison, comparisons_count, seed)
    settings = {"click_model": str(click_model), "depth": depth, "min_difference": min_difference,
                "queries_per_comparison": queries_per_comparison, "qrels": _label(qrels, "qrels"),
                "run_a": _label(run_a, "A"), "run_b": _label(run_b, "B")}
    return run_simulation(comparisons, impressions, repetitions, check_impressions, alpha, target_error, seed,
                          settings=settings)


def _label(source: Any, default: str) -> str:
    """A file's name, a loaded run's or qrels' name, or ``default`` (for titles)."""
    import os

    if isinstance(source, (str, os.PathLike)):
        return os.path.basename(str(source))
    return str(getattr(source, "name", None) or default)


__all__ = ["COMPARED_METHODS", "Comparison", "SimulationResult", "build_comparisons", "click_patterns", "mix",
           "pattern_probabilities", "run_simulation", "simulate_comparison", "user_model"]
