"""Accepted column names for tabular inputs (DataFrames, Parquet, JSONL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, overload

from rankwise.errors import InputError

# rankwise, ir_measures, PyTerrier (qid, docno, label / score), ranx (q_id, doc_id, score), pandas and
# recommender spellings; a qrels frame without a label column may carry its labels as ``score`` (ranx)
QUERY_COLUMNS = ("query_id", "qid", "q_id", "query", "topic", "topic_id", "user_id", "user")
DOC_COLUMNS = ("doc_id", "docid", "docno", "doc", "item", "item_id", "document_id", "pid")
SCORE_COLUMNS = ("score", "sim", "prediction", "rank_score")
LABEL_COLUMNS = ("relevance", "label", "rel", "rating", "judgment", "grade", "score")
TAG_COLUMNS = ("run_id", "run", "tag", "system", "name")
RANK_COLUMNS = ("rank", "position", "pos", "ranking")


@overload
def pick_column(names: Iterable[str], accepted: tuple[str, ...], role: str, source: str,
                required: Literal[True] = True) -> str: ...
@overload
def pick_column(names: Iterable[str], accepted: tuple[str, ...], role: str, source: str,
                required: bool) -> str | None: ...
def pick_column(
    names: Iterable[str], accepted: tuple[str, ...], role: str, source: str, required: bool = True
) -> str | None:
    """Return the first column of ``names`` that is one of ``accepted`` (case-insensitive).

    >>> pick_column(["qid", "docno", "score"], QUERY_COLUMNS, "query id", "x")
    'qid'
    """
    lowered = {str(n).lower(): str(n) for n in names}
    for candidate in accepted:
        if candidate in lowered:
            return lowered[candidate]
    if required:
        raise InputError(
            f"no {role} column; expected one of {', '.join(accepted)} (found {', '.join(map(str, names))})",
            source=source,
        )
    return None
