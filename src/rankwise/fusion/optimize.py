"""Tuning a fusion method's parameters honestly: every candidate is scored per query once,
then k-fold cross-validation over queries picks, for each fold, the candidate best on the
other folds' queries, and reports the fold's own queries under it. The held-out values (and
the run assembled from the held-out folds) are what a tuned method would get on unseen
queries; the candidate best on all queries is returned for use on new data. Methods that learn
from judgments (ProbFuse, PosFuse ...) learn, in each fold, from the other folds' judgments
only.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data.containers import Qrels, Run
from rankwise.data.distinct import difference, member
from rankwise.errors import RankwiseError
from rankwise.fusion.fuse import aligned, ranked_run
from rankwise.fusion.methods import FUSION_METHODS, method_named, resolved_params
from rankwise.fusion.normalize import norm_name, normalize
from rankwise.fusion.table import attach_labels

DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    m.name: {p.name: list(p.grid) for p in m.params if p.grid}
    for m in FUSION_METHODS.values() if any(p.grid for p in m.params)}
"""The grid searched when none is given, from each method's declared parameters (weights: the
simplex in steps of 0.05 for two runs, 0.1 for more)."""



@dataclass
class FusionSearch:
    """What ``optimize`` found: the candidates and their mean over all queries, the candidate
    each fold chose, the held-out per-query values and run, and the best candidate overall."""

    metric: str
    candidates: list[dict[str, Any]]
    means: np.ndarray
    """Each candidate's mean over every query (optimistic: the queries also chose it)."""
    folds: list[dict[str, Any]]
    """Per fold: its queries, the candidate chosen on the others and its training mean."""
    held_out: dict[str, float]
    """Each query's value under the candidate chosen without it."""
    run: Run
    """The held-out run: each fold's queries fused with the candidate chosen on the other folds."""
    best: dict[str, Any]
    """The candidate best on all queries (what to use on new queries)."""
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """Method, metric, folds, seed, normalisation, ties, depth (the held-out run's signature)."""

    @property
    def held_out_mean(self) -> float:
        """The mean of each query's value under the candidate chosen without it."""
        return float(np.mean(list(self.held_out.values()))) if self.held_out else float("nan")

    @property
    def table(self) -> Any:
        """One row per candidate: its parameters and its mean over every query."""
        import pandas as pd

        return pd.DataFrame({"params": [dict(c) for c in self.candidates], "mean": self.means})

    def to_dict(self) -> dict[str, Any]:
        """The metric, the candidates with their means, the folds, the held-out mean and the best
        candidate (JSON-plain)."""
        from rankwise.results import json_plain

        return json_plain({"metric": self.metric, "best": self.best, "held_out_mean": self.held_out_mean,
                           "candidates": self.table, "folds": self.folds, "held_out": self.held_out,
                           "warnings": self.warnings, "settings": self.settings}, nan_as_null=False)


def _simplex(runs: int) -> list[list[float]]:
    step = 20 if runs == 2 else 10
    out = []
    for parts in itertools.product(range(step + 1), repeat=runs - 1):
        if sum(parts) <= step:
            out.append([p / step for p in parts] + [(step - sum(parts)) / step])
    return out


def candidates_for(method: str, runs: int, grid: dict[str, list[Any]] | None, trials: int | None, seed: int,
                   fixed: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The parameter sets to try: the grid's product, or ``trials`` random draws from it
    (weights: Dirichlet draws on the simplex). A parameter with a default and no grid keeps
    ``fixed``'s value, else its default.

    >>> candidates_for("rrf", 2, {"k": [10, 60]}, None, 0)
    [{'k': 10}, {'k': 60}]
    >>> len(candidates_for("wsum", 2, None, None, 0))   # alpha = 0, 0.05, ..., 1
    21
    >>> candidates_for("probfuse", 2, {"n_segments": [5]}, None, 0, {"rel_level": 2})
    [{'n_segments': 5, 'rel_level': 2}]
    """
    chosen = method_named(method)
    names = [p.name for p in chosen.params]
    given = set(grid or {})
    grid = dict(grid or {})
    for p in chosen.params:
        name, default = p.name, p.default
        if name not in grid:
            if name == "weights":
                grid[name] = _simplex(runs)
            elif p.grid:
                grid[name] = list(p.grid)
            elif name in (fixed or {}) or default is not None:
                grid[name] = [(fixed or {}).get(name, default)]
            else:
                raise RankwiseError(f"{chosen.name}: give a grid for {name}")
    unknown = sorted(set(grid) - set(names))
    if unknown:
        takes = f"it takes {', '.join(names)}" if names else "it takes no parameters"
        raise RankwiseError(f"{chosen.name}: no parameter {unknown[0]!r} to search ({takes})")
    product = [dict(zip(names, values, strict=True)) for values in itertools.product(*(grid[n] for n in names))]
    if trials is None or trials >= len(product):
        return product
    rng = np.random.default_rng(seed)
    picked = []
    for _ in range(int(trials)):
        one = {n: grid[n][int(rng.integers(len(grid[n])))] for n in names}
        if "weights" in names and "weights" not in given:
            one["weights"] = rng.dirichlet(np.ones(runs)).round(4).tolist()
        picked.append(one)
    return picked


def optimize(qrels: Any, runs: Any, method: str = "wsum", metric: str = "ndcg@10", *, grid: dict | None = None,
             trials: int | None = None, folds: int = 5, seed: int = 0, train_qrels: Any = None,
             norm: str | None = "auto", ties: str = "trec", depth: int | None = None,
             **conventions: Any) -> FusionSearch:  # evaluate's conventions but ties and depth (fusion's own)
    """Search ``method``'s parameters (``grid``: ``{param: [values]}``, default grids for
    ``weights``, ``k``, ``phi``, ``gamma``, ``sigma``; ``trials``: random draws instead of the
    whole grid) for the best mean ``metric``, with ``folds``-fold cross-validation over the
    qrels' queries (seeded); or, with ``train_qrels``, choose on those and report ``qrels``.
    ``conventions`` go to ``rankwise.evaluate`` (``rel_level=2`` ...).

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 1}}
    >>> left = {q: {"a": 2.0, "b": 1.0, "c": 0.5, "d": 0.2} for q in qrels}
    >>> right = {q: {"d": 2.0, "c": 1.0, "b": 0.5, "a": 0.1} for q in qrels}
    >>> found = optimize(qrels, [left, right], "wsum", "recip_rank", folds=2, grid={"weights": [[1, 0], [0, 1]]})
    >>> found.best, float(found.means[0])   # both rank orders have mean RR (1 + 1/2 + 1/3 + 1/4) / 4
    ({'weights': [1, 0]}, 0.5208333333333333)
    >>> [f["params"]["weights"] for f in found.folds], found.held_out_mean   # each fold picks what fails it
    ([[0, 1], [1, 0]], 0.375)
    """
    from rankwise.data.load import load_qrels
    from rankwise.evaluation import evaluate

    qrels = load_qrels(qrels)  # read once: every candidate, and every fold of a trained method, uses it
    train_qrels = None if train_qrels is None else load_qrels(train_qrels)
    chosen = method_named(method)
    spelled = (None if chosen.ranks else "min-max") if norm == "auto" else norm
    norm = norm_name(spelled)   # the name the settings carry; its parameters reach the scores
    table = aligned(runs, ties)
    scores = normalize(table, spelled)
    tried = candidates_for(chosen.name, len(table.names), grid, trials, seed,
                           {"rel_level": conventions["rel_level"]} if "rel_level" in conventions else None)

    def every_candidate(trained_on: Any) -> tuple[list[Run], list[str], np.ndarray]:
        """Each candidate's fused run, and its per-query metric on ``qrels`` [candidates, queries]."""
        if chosen.trained:
            attach_labels(table, trained_on)
        fused_runs = [ranked_run(table, chosen.fuse(scores, table.rank, table, **resolved_params(chosen, params)),
                                 ties, depth, chosen.name, "candidate") for params in tried]
        values = [_per_query(evaluate(qrels, run, [metric], missing="zero", **conventions), metric)
                  for run in fused_runs]
        names = sorted(values[0])
        return fused_runs, names, np.array([[v[q] for q in names] for v in values])

    fused_runs, queries, matrix = every_candidate(train_qrels if train_qrels is not None else qrels)
    means = matrix.mean(axis=1)  # trained methods: trained on every query (the model to keep, not a score to report)
    if train_qrels is not None:
        train = [_per_query(evaluate(train_qrels, r, [metric], missing="zero", **conventions), metric)
                 for r in fused_runs]
        train_means = np.array([np.mean(list(t.values())) for t in train])
        plan = [(list(range(len(queries))), int(np.argmax(train_means)), float(train_means.max()), fused_runs,
                 matrix)]
    else:
        if not 2 <= folds <= len(queries):
            raise RankwiseError(f"folds must be between 2 and the number of queries ({len(queries)}), got {folds}")
        order = np.random.default_rng(seed).permutation(len(queries))
        plan = []
        for part in np.array_split(order, folds):
            train_rows = difference(order, part)
            fold_runs, fold_matrix = fused_runs, matrix
            if chosen.trained:  # learn from the other folds' judgments only
                fold_runs, _, fold_matrix = every_candidate(_judgments_of(qrels, [queries[i] for i in train_rows]))
            train_means = fold_matrix[:, train_rows].mean(axis=1)
            pick = int(np.argmax(train_means))
            plan.append((sorted(part.tolist()), pick, float(train_means.max()), fold_runs, fold_matrix))
    held_out, pieces, fold_info = {}, [], []
    for rows, pick, train_mean, fold_runs, fold_matrix in plan:
        names = [queries[i] for i in rows]
        for i in rows:
            held_out[queries[i]] = float(fold_matrix[pick, i])
        pieces.append(_rows_of(fold_runs[pick], set(names)))
        fold_info.append({"queries": names, "params": tried[pick], "train_mean": train_mean})
    best = tried[int(np.argmax(means))]
    from rankwise.results import Signature

    signature_of = Signature.of(f"fusion={chosen.name}", tuned=metric,
                                folds=folds if train_qrels is None else "train_qrels", seed=seed, norm=norm or "none",
                                ties=ties, depth=depth or "all")
    signature = str(signature_of).rsplit("|", 1)[0]   # the run's source: without the version, as fuse writes it
    run = Run(pa.concat_arrays([p.query for p in pieces]), pa.concat_arrays([p.doc for p in pieces]),
              np.concatenate([p.score for p in pieces]), f"{chosen.name}-cv", signature)
    settings = {"method": chosen.name, "metric": metric, "folds": folds if train_qrels is None else "train_qrels",
                "seed": seed, "norm": norm or "none", "ties": ties, "depth": depth, "signature": str(signature_of)}
    return FusionSearch(metric, tried, means, fold_info, held_out, run, best, [], settings)


def _judgments_of(judged: Qrels, queries: list[str]) -> Qrels:
    """The judgments of ``queries`` only."""
    from rankwise.data import arrow

    wanted = np.asarray(list(queries), dtype=object)
    keep = np.flatnonzero(member(np.asarray(judged.query.to_pylist(), dtype=object), wanted))
    return Qrels(arrow.take_rows(judged.query, keep), arrow.take_rows(judged.doc, keep), judged.label[keep],
                 judged.source)


def _per_query(result: Any, metric: str) -> dict[str, float]:
    frame = result.per_query.reset_index()
    return dict(zip(frame["query"].astype(str), frame[metric].astype(float), strict=True))


def _rows_of(run: Run, queries: set[str]) -> Run:
    from rankwise.data import arrow

    wanted = np.asarray(list(queries), dtype=object)
    keep = np.flatnonzero(member(np.asarray(run.query.to_pylist(), dtype=object), wanted))
    return Run(arrow.take_rows(run.query, keep), arrow.take_rows(run.doc, keep), run.score[keep], run.name)
