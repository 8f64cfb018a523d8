"""Diversity measures (alpha-nDCG, ERR-IA, NRBP, MAP-IA, P-IA, subtopic recall ...) on padded
batches: ``scores`` [batch, list], ``labels`` [batch, list, subtopics] (a label per item and
subtopic) and ``where`` [batch, list]. The same definitions as ``rankwise.evaluate`` with subtopic
qrels (``rankwise.metrics.ranking.diversity``): each row is one query whose judged documents are
its items; tied scores keep their column order, and the ideal ranking breaks ties toward the
later column. The state is a sum and a count per metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.engine.conventions import Conventions
from rankwise.errors import RankwiseError
from rankwise.state import Metric, MetricInputError, mask_of
from rankwise.streaming.ranking import add_columns, column_means


class DiversityMetrics(Metric):
    """Several diversity metrics over padded batches; ``compute()`` is ``{name: mean}``.

    >>> m = DiversityMetrics(["P_IA@2", "StRecall@1"])
    >>> m.update(predictions=[[0.9, 0.5]], targets=[[[1, 0], [1, 1]]]).compute()   # 3 pairs / (2 x 2); 1 of 2 subtopics
    {'P_IA@2': 0.75, 'StRecall@1': 0.5}
    """

    inputs = ("scores", "labels")

    def __init__(self, metrics: Sequence[str] = ("alpha_nDCG@20",), rel_level: int = 1) -> None:
        from rankwise.metrics.names import parse_metric

        if isinstance(metrics, str):
            metrics = [metrics]
        self._specs = [parse_metric(m) for m in metrics]
        wrong = [s.label for s in self._specs if s.family.judgments != "subtopics"]
        if wrong:
            raise RankwiseError(f"{', '.join(wrong)}: not a diversity metric (they need subtopic labels)")
        super().__init__(metrics=tuple(metrics), rel_level=rel_level)

    def _columns(self) -> list[str]:
        return [c for s in self._specs for c in s.result_columns()]

    def _initial_state(self) -> dict[str, Any]:
        n = len(self._columns())
        return {"total": np.zeros(n), "count": np.zeros(n, dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        from rankwise.metrics.compute import compute_scores
        from rankwise.metrics.ranking.diversity import DiversityLists, Topic

        scores = np.atleast_2d(np.asarray(inputs["scores"], dtype=np.float64))
        labels = np.asarray(inputs["labels"])
        if labels.ndim == 2:
            labels = labels[None]
        if labels.ndim != 3 or labels.shape[:2] != scores.shape:
            raise MetricInputError(f"DiversityMetrics.update: labels must be [batch, list, subtopics] matching "
                                   f"scores {scores.shape}, got {labels.shape}")
        mask = mask_of(inputs.get("where"), scores.shape)
        topics, ids = [], []
        for row in range(len(scores)):
            keep = np.arange(scores.shape[1]) if mask is None else np.flatnonzero(mask[row])
            if not len(keep):
                continue
            order = keep[np.argsort(-scores[row, keep], kind="stable")]
            judged = labels[row, keep].astype(np.int64)
            topics.append(Topic(labels[row, order].astype(np.int64), judged, self.params["rel_level"]))
            ids.append(str(row))
        if not topics:
            return
        lists = DiversityLists(np.asarray(ids, dtype=object), topics, rel_level=self.params["rel_level"])
        conventions = Conventions(rel_level=self.params["rel_level"])
        values = compute_scores(lists, self._specs, conventions).values  # type: ignore[arg-type]  # read as RankedLists
        add_columns(self.state, values, self._columns())

    def compute(self) -> dict[str, float]:
        return column_means(self.state, self._columns(), [s.label for s in self._specs])
