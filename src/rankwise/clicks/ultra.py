"""Click models given by relevance labels: ULTRA's parameter files (``click_prob`` per
label, ``exam_prob`` per rank, or per rank and previous click for UBM) turned into rankwise
models over a log's (query, document) pairs, so ``simulate`` draws users from them.

ULTRA's definitions: a document with label ``l`` (negative and unjudged: 0; above the
table: its last entry) is attractive with ``click_prob[l]``. ``position_biased_model``:
examined at rank ``r`` with ``exam_prob[r]`` (the last entry below the table).
``user_browsing_model``: with ``exam_prob[r][d - 1]``, ``d`` the distance to the previous
click (to rank 0 when none). ``cascade_model``: top-down, stopping at the first click.
``click_matrix_model``: ``click_prob[l][r]``. ``trust_biased_model``: ``exam_prob[r] (c
eps+_r + (1 - c) eps-_r)`` with ``eps+_r = 1 - (r + 2)/100`` and ``eps-_r =
epsilon_1_neg / (r + 1)`` (ranks from 0).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog
from rankwise.clicks.models import PBM, UBM, CascadeModel, ClickModel, _per_cell
from rankwise.clicks.shrinkage import EMPIRICAL
from rankwise.errors import InputError


class LabelRankModel(ClickModel):
    """Independent clicks with probability ``table[label, rank]`` for a pair's label."""

    name = "label-rank"
    pair_fields = {"label": "label"}
    fields = {"table": (None, None)}
    label: np.ndarray
    """The editorial label of each (query, document) pair."""
    table: np.ndarray
    """Click probability by [label, rank]."""

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL) -> None:
        super().__init__(prior, "flat")   # made from labels, not fitted: no prior structure

    def click_probs(self, log: ClickLog) -> np.ndarray:
        label = _per_cell(self, log, self.label).astype(np.int64)
        label = np.clip(label, 0, self.table.shape[0] - 1)
        rank = np.minimum(np.arange(log.ranks), self.table.shape[1] - 1)
        return np.where(log.mask, self.table[label, rank[None, :]], 0.0)

    def relevance_scores(self, values: dict[str, np.ndarray] | None = None) -> np.ndarray:
        return np.asarray((values or {"label": self.label})["label"], dtype=np.float64)

    def _unseen_parameters(self, bound: str, level: float) -> dict[str, np.ndarray]:
        """A pair without a label scores 0."""
        return {"label": np.array([0.0])}


def _labels(qrels: Any, log: ClickLog) -> np.ndarray:
    """The label of each of the log's pairs (0 when unjudged or negative)."""
    import pandas as pd

    from rankwise.data.load import load_qrels

    judged = load_qrels(qrels)
    table = pd.DataFrame({"query": judged.query.to_pylist(), "doc": judged.doc.to_pylist(),
                          "label": judged.label}).drop_duplicates(["query", "doc"], keep="last")
    pairs = pd.DataFrame({"query": np.asarray(log.query_ids, dtype=object)[log.pair_query],
                          "doc": np.asarray(log.doc_ids, dtype=object)[log.pair_doc]})
    merged = pairs.merge(table, on=["query", "doc"], how="left")
    return np.maximum(merged["label"].fillna(0).to_numpy(dtype=np.float64), 0)


def from_ultra(path: str | os.PathLike[str] | dict[str, Any], qrels: Any, log: ClickLog) -> ClickModel:
    """The model of an ULTRA parameter file (or its parsed dict) over the pairs of ``log``,
    with each pair's attractiveness from its label in ``qrels`` (anything
    ``rankwise.load_qrels`` takes).

    >>> log = ClickLog.from_arrays(["q"], [["a", "b"]], [[0, 0]])
    >>> import tempfile, json, os
    >>> path = os.path.join(tempfile.mkdtemp(), "pbm.json")
    >>> _ = open(path, "w").write(json.dumps({"model_name": "position_biased_model", "eta": 1.0,
    ...     "click_prob": [0.1, 1.0], "exam_prob": [1.0, 0.5]}))
    >>> from_ultra(path, {"q": {"a": 1}}, log).click_probs(log).tolist()   # a: 1.0 x 1.0; b: 0.1 x 0.5
    [[1.0, 0.05]]
    """
    if isinstance(path, dict):
        spec, path = path, "<parameters>"
    else:
        from rankwise.clicks.persist import read_json

        spec = read_json(path)
    for key in ("model_name", "click_prob", "exam_prob"):
        if key not in spec:
            raise InputError(f"an ULTRA click model file needs {key!r}", source=str(path), field=key)
    kind = spec["model_name"]
    label = _labels(qrels, log)
    click_prob = spec["click_prob"]
    model: ClickModel
    if kind == "click_matrix_model":
        by_label = LabelRankModel()
        by_label.table = np.asarray(click_prob, dtype=np.float64)
        model = by_label
    else:
        attract = np.asarray(click_prob, dtype=np.float64)
        alpha = attract[np.minimum(label.astype(np.int64), len(attract) - 1)]
        if kind == "position_biased_model":
            model = PBM()
            exam = np.asarray(spec["exam_prob"], dtype=np.float64)
            model.gamma = exam[np.minimum(np.arange(log.ranks), len(exam) - 1)]
        elif kind == "cascade_model":
            model = CascadeModel(floor=0.0)
        elif kind == "user_browsing_model":
            rows = spec["exam_prob"]
            if log.ranks > len(rows):
                raise InputError(f"the file gives examination for {len(rows)} ranks; the rankings have {log.ranks}",
                                 source=str(path), field="exam_prob")
            model = UBM()
            model.gamma_matrix = np.zeros((log.ranks, log.ranks))
            for r in range(log.ranks):
                for previous in range(r + 1):   # previous click rank, 1-based; 0 when none
                    model.gamma_matrix[r, previous] = rows[r][r - previous]
        elif kind == "trust_biased_model":
            exam = np.asarray(spec["exam_prob"], dtype=np.float64)
            ranks = np.arange(log.ranks)
            plus = 1 - (ranks + 2) / 100
            minus = float(spec.get("extra", {}).get("epsilon_1_neg", 0.0)) / (ranks + 1)
            trusting = LabelRankModel()
            trust = attract[:, None] * plus + (1 - attract[:, None]) * minus
            trusting.table = exam[np.minimum(ranks, len(exam) - 1)] * trust
            model = trusting
        else:
            raise InputError(f"unknown ULTRA model {kind!r}", source=str(path), field="model_name")
        model.alpha = alpha
    model.query_ids, model.doc_ids, model.pair_query, model.pair_doc = (log.query_ids, log.doc_ids, log.pair_query,
                                                                        log.pair_doc)
    if isinstance(model, LabelRankModel):
        model.label = label
    return model
