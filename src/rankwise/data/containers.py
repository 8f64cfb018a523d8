"""The two inputs of every ranking evaluation: relevance judgments (Qrels) and a ranking (Run).

Both are columnar: query ids and document ids are Arrow string arrays, scores and labels are
NumPy arrays, one row per (query, document). Nothing here sorts or joins; that is the engine's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankwise.data import arrow
from rankwise.errors import InputError


def _is_text(typ: pa.DataType, keep_dictionary: bool) -> bool:
    if keep_dictionary and pa.types.is_dictionary(typ):
        typ = typ.value_type
    return pa.types.is_string(typ) or pa.types.is_large_string(typ)


def as_string_array(values: Any, keep_dictionary: bool = False) -> pa.Array | pa.ChunkedArray:
    """Convert ids (list, NumPy/pandas column, Arrow array) to an Arrow string array
    (a chunked array stays chunked, to avoid copying large columns; with ``keep_dictionary``
    a dictionary-encoded column stays encoded).

    >>> as_string_array([1, "b"]).to_pylist()
    ['1', 'b']
    """
    if isinstance(values, (pa.ChunkedArray, pa.Array)) and _is_text(values.type, keep_dictionary):
        return values
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        arr = np.asarray(values, dtype=object)
        values = arrow.strings([v if isinstance(v, str) else str(v) for v in arr])
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.string())
    return values


def _line_of(lines: np.ndarray | None, row: int) -> int:
    return int(lines[row]) if lines is not None else row + 1


def _frame(query: Any, doc: Any, value_name: str, values: np.ndarray) -> Any:
    import pandas as pd

    return pd.DataFrame({"query_id": query.to_pylist(), "doc_id": doc.to_pylist(), value_name: values})


def _nested(query: Any, doc: Any, values: np.ndarray) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for q, d, v in zip(query.to_pylist(), doc.to_pylist(), values.tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


@dataclass
class Qrels:
    """Relevance judgments: one (query, doc, label) per row.

    Labels are integers; a negative label means "judged but unjudgeable" (trec_eval's
    meaning: in the pool, not judged). ``lines`` maps rows to source line numbers for errors.

    >>> q = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}})
    >>> len(q), q.label.tolist()
    (2, [1, 0])
    """

    query: pa.Array
    doc: pa.Array
    label: np.ndarray
    source: str = "<qrels>"
    lines: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.query = as_string_array(self.query)
        self.doc = as_string_array(self.doc)
        self.label = np.asarray(self.label)
        if self.label.dtype.kind == "f":
            bad = ~np.isfinite(self.label) | (self.label != np.round(self.label))
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise InputError(
                    f"expected an integer relevance label, got {self.label[row]!r}",
                    source=self.source, line=_line_of(self.lines, row), field="label",
                )
        elif self.label.dtype.kind not in "iub":
            raise InputError(f"expected integer labels, got dtype {self.label.dtype}", source=self.source)
        self.label = self.label.astype(np.int64)
        if not (len(self.query) == len(self.doc) == len(self.label)):
            raise InputError("query, doc and label columns differ in length", source=self.source)
        if len(self.label) == 0:
            raise InputError("no judgments: the qrels are empty", source=self.source)

    def __len__(self) -> int:
        return len(self.label)

    @classmethod
    def from_dict(cls, judgments: dict[str, dict[str, int]], source: str = "<dict>") -> Qrels:
        """Build from the pytrec_eval/ranx shape ``{qid: {docid: label}}``."""
        queries, docs, labels = [], [], []
        for qid, docmap in judgments.items():
            if not isinstance(docmap, dict):
                raise InputError(
                    f"query {qid!r}: expected a {{docid: label}} dict, got {type(docmap).__name__}",
                    source=source,
                )
            for doc, label in docmap.items():
                queries.append(str(qid))
                docs.append(str(doc))
                labels.append(label)
        try:
            label_arr = np.asarray(labels, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"expected numeric labels ({exc})", source=source, field="label") from None
        return cls(arrow.strings(queries), arrow.strings(docs), label_arr, source)

    @classmethod
    def from_dataframe(cls, frame: Any, source: str = "<DataFrame>") -> Qrels:
        """Build from a pandas DataFrame with query, doc and label columns (common names accepted)."""
        from rankwise.data.columns import DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS, pick_column

        qcol = pick_column(frame.columns, QUERY_COLUMNS, "query id", source)
        dcol = pick_column(frame.columns, DOC_COLUMNS, "document id", source)
        lcol = pick_column(frame.columns, LABEL_COLUMNS, "relevance label", source)
        labels = frame[lcol].to_numpy()
        if labels.dtype == object:
            try:
                labels = labels.astype(np.float64)
            except (TypeError, ValueError):
                raise InputError("expected numeric labels", source=source, field=lcol) from None
        return cls(frame[qcol].to_numpy(), frame[dcol].to_numpy(), labels, source)

    @classmethod
    def from_sets(cls, ground_truth: Any, relevance: Any = None, key: Any = str,
                  source: str = "<sets>") -> Qrels:
        """Judgments from sets of correct items per query (recommender style).

        ``ground_truth`` maps a query (or user) to its correct items, or is a list of such
        collections (queries are then numbered from 0). Items may be any Python objects: ``key``
        turns each into the string that identifies it. ``relevance`` optionally gives graded
        labels: a mapping item -> label per query (same shape as ``ground_truth``); by default
        every correct item has label 1.

        >>> q = Qrels.from_sets({"u1": {("m", 1), ("m", 2)}}, key=repr)
        >>> sorted(q.to_dict()["u1"].items())
        [("('m', 1)", 1), ("('m', 2)", 1)]
        """
        items = ground_truth.items() if isinstance(ground_truth, dict) else enumerate(ground_truth)
        grades = relevance if relevance is not None else {}
        queries, docs, labels = [], [], []
        for qid, truth in items:
            graded = (grades.get(qid) if isinstance(grades, dict) else grades[qid]) if relevance is not None else None
            for item in truth:
                queries.append(str(qid))
                docs.append(key(item))
                labels.append(1 if graded is None else graded[item])
        return cls(arrow.strings(queries), arrow.strings(docs), np.asarray(labels, dtype=np.float64), source)

    def to_dataframe(self) -> Any:
        """Return the judgments as a pandas DataFrame (query_id, doc_id, relevance)."""
        return _frame(self.query, self.doc, "relevance", self.label)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """Return ``{qid: {docid: label}}``."""
        return _nested(self.query, self.doc, self.label)


@dataclass
class Run:
    """A ranking: one (query, doc, score) per row; higher scores rank first.

    The rank column of TREC files is ignored (as trec_eval does); the order comes from scores
    and the tie rule chosen at evaluation time. ``name`` is the run tag.

    >>> r = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.5}}, name="bm25")
    >>> r.name, len(r)
    ('bm25', 2)
    """

    query: pa.Array
    doc: pa.Array
    score: np.ndarray
    name: str = "run"
    source: str = "<run>"
    lines: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.query = as_string_array(self.query, keep_dictionary=True)
        self.doc = as_string_array(self.doc)
        try:
            self.score = np.asarray(self.score, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("expected numeric scores", source=self.source, field="score") from None
        if not (len(self.query) == len(self.doc) == len(self.score)):
            raise InputError("query, doc and score columns differ in length", source=self.source)
        if len(self.score) == 0:
            raise InputError("no rows: the run is empty", source=self.source)
        finite = np.isfinite(self.score)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"expected a finite number, got {self.score[row]!r} "
                f"({int((~finite).sum())} non-finite scores in all)",
                source=self.source, line=_line_of(self.lines, row), field="score",
            )

    def __len__(self) -> int:
        return len(self.score)

    @classmethod
    def from_dict(
        cls, scores: dict[str, dict[str, float]], name: str = "run", source: str = "<dict>"
    ) -> Run:
        """Build from the pytrec_eval/ranx shape ``{qid: {docid: score}}``."""
        queries, docs, values = [], [], []
        for qid, docmap in scores.items():
            if not isinstance(docmap, dict):
                raise InputError(
                    f"query {qid!r}: expected a {{docid: score}} dict, got {type(docmap).__name__}",
                    source=source,
                )
            queries.extend([str(qid)] * len(docmap))
            docs.extend(str(d) for d in docmap)
            values.extend(docmap.values())
        try:
            score_arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"expected numeric scores ({exc})", source=source, field="score") from None
        return cls(arrow.strings(queries), arrow.strings(docs), score_arr, name, source)

    @classmethod
    def from_dataframe(cls, frame: Any, name: str | None = None, source: str = "<DataFrame>",
                       default_name: str = "run") -> Run:
        """Build from a pandas DataFrame with query, doc and score columns (common names accepted);
        the run is ``name``, else the first value of a tag column, else ``default_name``."""
        from rankwise.data.columns import (
            DOC_COLUMNS,
            QUERY_COLUMNS,
            SCORE_COLUMNS,
            TAG_COLUMNS,
            pick_column,
        )

        qcol = pick_column(frame.columns, QUERY_COLUMNS, "query id", source)
        dcol = pick_column(frame.columns, DOC_COLUMNS, "document id", source)
        scol = pick_column(frame.columns, SCORE_COLUMNS, "score", source)
        tcol = pick_column(frame.columns, TAG_COLUMNS, "run tag", source, required=False)
        if name is None:
            name = str(frame[tcol].iloc[0]) if tcol is not None and len(frame) else default_name
        return cls(frame[qcol].to_numpy(), frame[dcol].to_numpy(), frame[scol].to_numpy(), name, source)

    @classmethod
    def from_ranked_lists(cls, lists: Any, key: Any = str, name: str = "run", source: str = "<lists>") -> Run:
        """A run from ranked lists of arbitrary items, best first (recommender style).

        ``lists`` maps a query (or user) to a sequence of items, or is a list of sequences
        (queries numbered from 0). ``key`` turns each item into its identifying string. The
        list order is kept exactly: scores are n, n-1, ..., 1, so no tie rule ever applies.

        >>> r = Run.from_ranked_lists({"u1": [("m", 2), ("m", 1)]}, key=repr)
        >>> r.to_dict()
        {'u1': {"('m', 2)": 2.0, "('m', 1)": 1.0}}
        """
        items = lists.items() if isinstance(lists, dict) else enumerate(lists)
        queries, docs, scores = [], [], []
        for qid, ranked in items:
            ranked = list(ranked)
            queries.extend([str(qid)] * len(ranked))
            docs.extend(key(item) for item in ranked)
            scores.extend(range(len(ranked), 0, -1))
        return cls(arrow.strings(queries), arrow.strings(docs), np.asarray(scores, dtype=np.float64), name, source)

    def to_dataframe(self) -> Any:
        """Return the run as a pandas DataFrame (query_id, doc_id, score)."""
        return _frame(self.query, self.doc, "score", self.score)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{qid: {docid: score}}``."""
        return _nested(self.query, self.doc, self.score)
