"""What a distributed engine does with one partition of a run: pandas or Arrow rows in, the
RunScores of their queries out (the same code as the in-memory path)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data.columns import DOC_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS, TAG_COLUMNS, pick_column
from rankwise.data.containers import Run
from rankwise.errors import InputError
from rankwise.evaluation import EvaluationPlan
from rankwise.metrics.compute import RunScores

ORDER_COLUMN = "__rankwise_row"
"""Column that keeps each row's place in the input through a shuffle (ties in input order and
``duplicates='first'`` need it)."""


def run_columns(names: list[str], source: str) -> tuple[str, str, str, str | None]:
    """The query, document, score and (optional) tag columns of a frame, by name.

    >>> run_columns(["qid", "docno", "score"], "<frame>")
    ('qid', 'docno', 'score', None)
    """
    return (pick_column(names, QUERY_COLUMNS, "query id", source),
            pick_column(names, DOC_COLUMNS, "document id", source),
            pick_column(names, SCORE_COLUMNS, "score", source),
            pick_column(names, TAG_COLUMNS, "run tag", source, required=False))


def score_frame(plan: EvaluationPlan, frame: Any, columns: tuple[str, str, str], source: str) -> RunScores:
    """Score the rows of one partition (a pandas DataFrame or an Arrow table) holding every row
    of its queries; rows come back to input order first if the frame carries ``ORDER_COLUMN``.

    >>> import pandas as pd
    >>> plan = EvaluationPlan.build({"q1": {"d1": 1}}, ["P@1"], None, {"ties": "input"})
    >>> frame = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d2", "d1"], "score": [1.0, 1.0],
    ...                       ORDER_COLUMN: [1, 0]})
    >>> score_frame(plan, frame, ("qid", "docno", "score"), "<frame>").values["P_1"].tolist()  # d1 came first
    [1.0]
    """
    query, doc, score = columns
    table = arrow_table(frame)
    if ORDER_COLUMN in table.column_names:
        table = table.sort_by(ORDER_COLUMN)
    if table.num_rows == 0:
        return _empty(plan)
    scores = table.column(score)
    values = np.asarray(scores.to_numpy(), dtype=np.float64) if not scores.null_count else None
    if values is None or np.isnan(values).any():   # a partition's row number is no line of the input
        raise InputError(f"expected a number, got {'null' if values is None else 'NaN'} in one of its partitions "
                         "(NaN scores have no order)", source=source, field=score)
    run = Run(table.column(query), table.column(doc), values, "run", source)
    return plan.score(run, "skip")


def arrow_table(frame: Any) -> pa.Table:
    """A partition as an Arrow table: pandas columns become Arrow arrays in one pass each (no
    Python loop over the ids)."""
    if isinstance(frame, pa.Table):
        return frame
    return pa.Table.from_pandas(frame, preserve_index=False)


def _empty(plan: EvaluationPlan) -> RunScores:
    """The scores of a partition with no rows: no query."""
    none = np.empty(0, dtype=np.int64)
    scores = plan.score_absent(none, "run")
    scores.warnings = []
    return scores
