"""Ranking metrics on padded batches: ``scores`` and ``labels`` of shape [batch, list_size],
``where`` marking real items. Every metric of the catalogue, several cut-offs in one pass,
computed by the same metric functions as ``rankwise.evaluate`` on the engine's RankedLists
(one definition per metric). The state is a sum and a count per column.

Conventions: tied scores keep their column order (``ties='input'``) or are averaged over their
orders (``ties='expected'``); a label >= ``rel_level`` is relevant; the judged documents are the
list's items. A row whose mask is all False is padding and left out; a row without a relevant
item scores 0 (``missing='zero'``, trec_eval and torchmetrics' default) or is left out
(``missing='skip'``; ``empty`` is the deprecated name). ERR needs ``max_label`` (its
R = (2^label - 1) / 2^max_label must not change from batch to batch).

Flat batches, as torchmetrics' retrieval metrics take them: ``update(predictions, targets,
indexes=...)`` with one row per document and ``indexes`` the query of each row. Rows are kept
(the state grows with them) and grouped by query across every batch and merge when
``compute()`` is called; within a query, rows keep their order for ties. A flat batch without
``indexes`` is refused (it would be one query). ``empty_target_action`` (torchmetrics' name)
is taken: ``neg`` is ``missing='zero'``, ``skip`` is ``missing='skip'``, ``pos`` scores a query
without a relevant row 1, ``error`` refuses it. ``continuous=True``
takes labels that are continuous relevance values (watch time, percentages, signed values):
the gain-based measures (nDCG, DCG, MDCG, nDCG_signed) use them as gains, as
``rankwise.evaluate`` does on ``load_qrels(..., continuous=True)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from rankwise.engine.conventions import Conventions, Gains, Missing, Ties
from rankwise.engine.padded import ranked_from_padded
from rankwise.errors import RankwiseError
from rankwise.state import Metric, MetricInputError, mask_of


class RankingMetrics(Metric):
    """Several ranking metrics (any names ``rankwise.evaluate`` takes) over padded batches;
    ``compute()`` returns ``{name: mean over queries}``.

    >>> m = RankingMetrics(["ndcg@3", "mrr", "P@2"])
    >>> m.update(predictions=[[0.2, 0.9, 0.5], [0.1, 0.3, 0.0]], targets=[[1, 0, 2], [0, 1, 0]],
    ...          where=[[1, 1, 1], [1, 1, 0]]).compute()["mrr"]   # (1/2 + 1/1) / 2
    0.75
    """

    inputs = ("scores", "labels")
    optional_inputs = ("where", "indexes")
    growing_state = ("flat_indexes", "flat_scores", "flat_labels")

    def __init__(self, metrics: Sequence[str] = ("ndcg@10",), ties: Ties = "input", rel_level: int = 1,
                 missing: Missing = "zero", gains: Gains = "labels", max_label: int | None = None,
                 continuous: bool = False, **deprecated: Any) -> None:
        from dataclasses import replace

        from rankwise.metrics.names import parse_metric

        missing = _renamed_missing(missing, deprecated, type(self).__name__)
        if isinstance(metrics, str):
            metrics = [metrics]
        if missing not in MISSING:
            raise RankwiseError(f"missing={missing!r}: expected {', '.join(MISSING)}")
        self._specs = []
        for m in metrics:
            spec = parse_metric(m)
            grade = spec.family.param("max_label")
            if grade is not None and spec.arguments()["max_label"] is None:
                # a normaliser taken from the data (2^max) must not change from batch to batch
                if max_label is None:
                    raise RankwiseError(f"{m}: on batches this metric needs max_label (the largest grade), so "
                                        "that every batch uses the same one")
                spec = replace(spec, params=spec.params + (("max_label", int(max_label)),))
            self._specs.append(spec)
        for spec in self._specs:
            if spec.family.value_kind not in ("float", "int"):
                raise RankwiseError(f"{spec.label}: not a per-query number; it cannot be averaged over batches")
        if continuous:
            from rankwise.metrics.compute import check_continuous

            check_continuous(self._specs)
        self._conv = Conventions(ties=ties, rel_level=rel_level, gains=gains, score_precision="float64")
        super().__init__(metrics=tuple(metrics), ties=ties, rel_level=rel_level, missing=missing, gains=gains,
                         max_label=max_label, continuous=continuous)

    def columns(self) -> list[str]:
        return [c for spec in self._specs for c in spec.result_columns()]

    def _initial_state(self) -> dict[str, Any]:
        n = len(self.columns())
        return {"total": np.zeros(n), "count": np.zeros(n, dtype=np.int64), "queries": np.zeros((), dtype=np.int64),
                "flat_indexes": [], "flat_scores": [], "flat_labels": []}

    def _merge(self, other: dict[str, Any]) -> None:
        if (self.state["flat_indexes"] and other["queries"]) or (other["flat_indexes"] and self.state["queries"]):
            raise MetricInputError(f"{type(self).__name__}: cannot merge a state of flat rows (indexes=) with one "
                                   "of padded lists")
        for key, value in other.items():
            grows = key in self.growing_state
            self.state[key] = [*self.state[key], *value] if grows else self.state[key] + value

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        if "indexes" in inputs:
            self._keep_rows(inputs)
            return
        if np.ndim(inputs["scores"]) == 1 and np.ndim(inputs["labels"]) == 1 and np.size(inputs["scores"]) > 1:
            raise MetricInputError(f"{type(self).__name__}.update: a flat batch (1-D predictions, one row per "
                                   "document) needs indexes= (the query of each row, as torchmetrics' retrieval "
                                   "metrics take it); one list is shape [1, documents]")
        if self.state["flat_indexes"]:
            raise MetricInputError(f"{type(self).__name__}.update: this metric holds flat rows (indexes=); give "
                                   "every batch with indexes=")
        self._fold_padded(inputs, shared)

    def _keep_rows(self, inputs: dict[str, Any]) -> None:
        """A flat batch: rows (query, score, label) appended to the state, grouped at compute."""
        name = type(self).__name__
        scores, labels, indexes = (np.asarray(inputs[k]).reshape(-1) for k in ("scores", "labels", "indexes"))
        shapes = {k: np.shape(inputs[k]) for k in ("scores", "labels", "indexes")}
        if len(set(shapes.values())) != 1:
            raise MetricInputError(f"{name}.update: predictions, targets and indexes must have one shape, got "
                                   + ", ".join(f"{k} {v}" for k, v in shapes.items()))
        if not np.issubdtype(indexes.dtype, np.integer):
            if not (np.issubdtype(indexes.dtype, np.floating) and np.all(np.mod(indexes, 1) == 0)):
                raise MetricInputError(f"{name}.update: indexes must be whole numbers (a query id per row), got "
                                       f"{indexes.dtype}")
        if self.state["queries"] or self.state["count"].any():
            raise MetricInputError(f"{name}.update: this metric holds padded lists; give indexes= with every batch "
                                   "or with none")
        keep = np.ones(len(scores), dtype=bool)
        if inputs.get("where") is not None:
            keep = np.asarray(mask_of(inputs["where"], np.shape(inputs["scores"]))).reshape(-1)
        self.state["flat_indexes"].append(indexes[keep].astype(np.int64))
        self.state["flat_scores"].append(scores[keep].astype(np.float64))
        self.state["flat_labels"].append(labels[keep].astype(np.float64))

    def _grouped(self) -> dict[str, Any]:
        """The state with its flat rows folded in as padded lists, one per query."""
        if not self.state["flat_indexes"]:
            return self.state
        from rankwise.engine.padded import padded_groups

        scores, labels, where = padded_groups(*(np.concatenate(self.state[k]) for k in self.growing_state))
        folded = cast(RankingMetrics, self.empty())
        folded._fold_padded({"scores": scores, "labels": labels, "where": where}, {})
        return folded.state

    def _fold_padded(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        scores = np.atleast_2d(inputs["scores"])
        labels = np.atleast_2d(inputs["labels"])
        mask = mask_of(inputs.get("where"), scores.shape)
        continuous = bool(self.params.get("continuous"))
        key = ("padded", id(inputs["scores"]), id(inputs["labels"]), id(inputs.get("where")), self.params["ties"],
               self.params["rel_level"], continuous)
        if key not in shared:
            try:
                shared[key] = ranked_from_padded(scores, labels, None if mask is None else np.asarray(mask),
                                                 self.params["ties"], self.params["rel_level"], continuous)[0]
            except RankwiseError as err:
                raise MetricInputError(f"{type(self).__name__}.update: {err}") from None
        rl = shared[key]
        if rl.n_queries == 0:
            return
        from rankwise.metrics.compute import compute_scores

        values = compute_scores(rl, self._specs, self._conv).values
        keep = np.ones(rl.n_queries, dtype=bool)
        empty = rl.num_rel == 0
        if self.params["missing"] == "skip":
            keep = ~empty
        elif self.params["missing"] == "error" and empty.any():
            raise MetricInputError(f"{type(self).__name__}: {int(empty.sum())} list(s) without a relevant item "
                                   "(missing='error', empty_target_action='error')")
        elif self.params["missing"] == "one" and empty.any():
            values = {c: np.where(empty, 1.0, np.asarray(v, dtype=np.float64)) for c, v in values.items()}
        add_columns(self.state, values, self.columns(), keep)
        self.state["queries"] += int(keep.sum())

    def compute(self) -> dict[str, float]:
        return column_means(self._grouped(), self.columns(), [s.label for s in self._specs])


def per_row(metrics: str | Sequence[str], predictions: Any, targets: Any, where: Any = None, ties: Ties = "input",
            rel_level: int = 1, continuous: bool = False) -> dict[str, np.ndarray]:
    """Each metric's value on every row of one padded batch (no averaging): ``{column:
    [batch]}``; a row without a valid item is NaN. The values ``RankingMetrics`` averages.

    >>> per_row(["P@1", "ndcg@2"], [[0.9, 0.5, 0.1], [0.2, 0.8, 0.4]], [[0, 1, 1], [0, 1, 0]])["P_1"].tolist()
    [0.0, 1.0]
    """
    from rankwise.metrics.compute import compute_scores
    from rankwise.state import as_array

    metric = RankingMetrics([metrics] if isinstance(metrics, str) else list(metrics), ties, rel_level,
                            continuous=continuous)
    scores, labels = np.atleast_2d(as_array(predictions)), np.atleast_2d(as_array(targets))
    mask = mask_of(where, scores.shape)
    try:
        rl, kept = ranked_from_padded(scores, labels, None if mask is None else np.asarray(mask), ties, rel_level,
                                      continuous)
    except RankwiseError as err:
        raise MetricInputError(f"per_row: {err}") from None
    values = compute_scores(rl, metric._specs, metric._conv).values
    out = {}
    for column in metric.columns():
        full = np.full(len(scores), np.nan)
        full[kept] = np.asarray(values[column], dtype=np.float64)
        out[column] = full
    return out


def average_precision_at_ks(predictions: Any, targets: Any, ks: Sequence[int], where: Any = None) -> np.ndarray:
    """AP@k of every row for each k in ``ks``, shape [batch, len(ks)] (metrax's
    ``AveragePrecisionAtK.average_precision_at_ks``): the precision at each relevant rank
    within k, summed and divided by all relevant items of the row (trec_eval's map_cut);
    ties keep their column order.

    >>> # k = 1: 0; k = 2: (1/2) / 2; k = 3: (1/2 + 2/3) / 2
    >>> average_precision_at_ks([[0.9, 0.5, 0.1]], [[0, 1, 1]], [1, 2, 3]).round(4).tolist()
    [[0.0, 0.25, 0.5833]]
    """
    values = per_row([f"map@{int(k)}" for k in ks], predictions, targets, where)
    return np.column_stack(list(values.values()))


def add_columns(state: dict[str, Any], values: dict[str, Any], columns: list[str], keep: np.ndarray | None = None
                ) -> None:
    """Add per-query values into a state's ``total`` and ``count`` per column (NaN left out)."""
    for i, col in enumerate(columns):
        v = np.asarray(values[col], dtype=np.float64)
        v = v if keep is None else v[keep]
        finite = ~np.isnan(v)
        state["total"][i] += v[finite].sum()
        state["count"][i] += int(finite.sum())


def column_means(state: dict[str, Any], columns: list[str], labels: list[str]) -> dict[str, float]:
    """``{name: mean}``: the names the caller wrote when each gave one column, else the columns.

    >>> column_means({"total": np.array([1.0, 0.0]), "count": np.array([2, 0])}, ["a", "b"], ["A", "B"])
    {'A': 0.5, 'B': nan}
    """
    count = state["count"]
    means = np.divide(state["total"], count, out=np.full(len(count), np.nan), where=count > 0)
    names = labels if len(columns) == len(labels) else columns
    return {name: float(v) for name, v in zip(names, means, strict=True)}


MISSING = ("zero", "skip", "one", "error")
"""What a list without a relevant item scores: 0, nothing (left out), 1, or an error."""
EMPTY_TARGET_ACTION = {"neg": "zero", "skip": "skip", "pos": "one", "error": "error"}
"""torchmetrics' ``empty_target_action`` values and the ``missing`` each means."""


def _renamed_missing(missing: Any, deprecated: dict[str, Any], where: str) -> Any:
    """``missing``, or the deprecated ``empty`` with a warning, or torchmetrics'
    ``empty_target_action`` (the only other keywords taken)."""
    from rankwise.errors import renamed

    options = dict(deprecated)
    if "empty_target_action" in options:
        action = options.pop("empty_target_action")
        if missing != "zero":
            raise RankwiseError(f"{where}: give missing or empty_target_action, not both")
        if action not in EMPTY_TARGET_ACTION:
            raise RankwiseError(f"{where}: empty_target_action={action!r}: expected "
                                f"{', '.join(EMPTY_TARGET_ACTION)}")
        missing = EMPTY_TARGET_ACTION[action]
    if "empty" in options:
        if missing != "zero":
            raise RankwiseError(f"{where}: give missing only (empty is its deprecated spelling)")
        renamed(options, "empty", "missing", where)
        missing = options.pop("missing")
    if options:
        raise RankwiseError(f"{where}: unknown argument(s) {', '.join(sorted(options))}")
    return missing


class _AtK(RankingMetrics):
    """One family at a cut-off ``k`` (None: the whole list, like the batch name), or at several
    (a list of cut-offs); ``compute()`` is a float for one ``k``, a ``{k: value}`` dict for a list."""

    family = ""
    full_depth = ""
    """The batch name of the family without a cut-off (``ndcg``, ``recip_rank``, ``map``), if any."""

    def __init__(self, k: int | Sequence[int] | None = None, ties: Ties = "input", rel_level: int = 1,
                 missing: Missing = "zero", continuous: bool = False, **deprecated: Any) -> None:
        from rankwise.errors import renamed
        from rankwise.metrics.family import ALL

        where = type(self).__name__
        options = dict(deprecated)
        renamed(options, "ks", "k", where)
        k = options.pop("k", k)
        missing = _renamed_missing(missing, options, where)
        self.many = k is not None and not isinstance(k, (int, np.integer, float, np.floating, str, bool))
        ks: list[Any] = list(cast(Sequence[int], k)) if self.many else [ALL if k is None else k]
        whole = [c for c in ks if isinstance(c, (int, np.integer)) and not isinstance(c, bool)
                 or isinstance(c, (float, np.floating)) and float(c).is_integer()]
        if not ks or len(whole) != len(ks) or any(int(c) <= 0 for c in ks):   # 2.5 is no cut-off, never 2
            raise RankwiseError(f"{where}: k expects positive whole cut-offs (or None for the whole list), got {k!r}")
        self.ks = [int(c) for c in ks]
        names = [self.full_depth if c == ALL and self.full_depth else f"{self.family}@{c}" for c in self.ks]
        super().__init__(names, ties, rel_level, missing, continuous=continuous)
        self.params = {"k": tuple(self.ks) if self.many else (None if k is None else self.ks[0]), "ties": ties,
                       "rel_level": rel_level, "missing": missing}
        if continuous:  # a saved state of the integer form keeps its parameters
            self.params["continuous"] = True

    def compute(self) -> Any:
        values = list(super().compute().values())
        return dict(zip(self.ks, values, strict=True)) if self.many else values[0]


class NDCG(_AtK):
    """nDCG@k (linear gains, trec_eval's ideal list cut at k) per query, averaged;
    ``continuous=True`` takes continuous relevance (negative values count 0).

    >>> m = NDCG(k=2, continuous=True).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0.0, 0.5, 2.5]])
    >>> round(m.compute(), 6)   # (0.5 / log2 3) / (2.5 + 0.5 / log2 3)
    0.112047

    >>> NDCG(k=2).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()   # (1/log2 3) / (1 + 1/log2 3)
    0.38685280723454163
    """

    family = "ndcg"
    full_depth = "ndcg"


class MRR(_AtK):
    """Reciprocal rank of the first relevant item within k, averaged.

    >>> MRR(k=[1, 3]).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()
    {1: 0.0, 3: 0.5}
    """

    family = "mrr"
    full_depth = "recip_rank"


class MAP(_AtK):
    """AP@k (trec_eval's map_cut: divided by all relevant items of the list), averaged.

    >>> MAP(k=3).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()   # (1/2 + 2/3) / 2
    0.5833333333333333
    """

    family = "map"
    full_depth = "map"


class PrecisionAtK(_AtK):
    """Relevant items in the top k / k, averaged.

    >>> PrecisionAtK(k=2).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()
    0.5
    """

    family = "P"
    full_depth = "set_P"


class RecallAtK(_AtK):
    """Relevant items in the top k / relevant items of the list, averaged.

    >>> RecallAtK(k=2).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()
    0.5
    """

    family = "recall"
    full_depth = "set_recall"


class HitRate(_AtK):
    """1 if a relevant item is in the top k, else 0, averaged.

    >>> HitRate(k=1).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).compute()
    0.0
    """

    family = "success"
