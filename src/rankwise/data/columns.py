"""Accepted column names for tabular inputs (DataFrames, Parquet, JSONL)."""

from __future__ import annotations

from collections.abc import Iterable

from rankwise.errors import InputError

QUERY_COLUMNS = ("query_id", "qid", "q_id", "query", "topic")
DOC_COLUMNS = ("doc_id", "docid", "docno", "doc", "item", "item_id")
SCORE_COLUMNS = ("score", "sim", "prediction", "rank_score")
LABEL_COLUMNS = ("relevance", "label", "rel", "rating", "judgment")
TAG_COLUMNS = ("run_id", "tag", "run", "name")


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
