"""The two inputs of every ranking evaluation: relevance judgments (Qrels) and a ranking (Run).

Both are columnar: query ids and document ids are Arrow string arrays, scores and labels are
NumPy arrays, one row per (query, document). Nothing here sorts or joins; that is the engine's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow, kernels
from rankwise.data.distinct import distinct
from rankwise.errors import InputError


def _is_text(typ: pa.DataType, keep_dictionary: bool) -> bool:
    if keep_dictionary and pa.types.is_dictionary(typ):
        typ = typ.value_type
    return bool(pa.types.is_string(typ) or pa.types.is_large_string(typ))


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and value != value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def as_string_array(values: Any, keep_dictionary: bool = False, source: str = "<input>",
                    field: str = "id", lines: np.ndarray | None = None) -> pa.Array | pa.ChunkedArray:
    """Convert ids (list, NumPy/pandas column, Arrow array) to an Arrow string array
    (a chunked array stays chunked, to avoid copying large columns; with ``keep_dictionary``
    a dictionary-encoded column stays encoded). A missing id (None, NaN, null) is an error
    naming its row: it would otherwise become the id ``'nan'``.

    >>> as_string_array([1, "b"]).to_pylist()
    ['1', 'b']
    >>> as_string_array(["a", None], field="doc")
    Traceback (most recent call last):
    rankwise.errors.InputError: <input>:2: field 'doc': expected an id, got None
    """
    if isinstance(values, (pa.ChunkedArray, pa.Array)):
        if values.null_count:
            valid = kernels.is_valid(values)
            row = int(np.flatnonzero(~np.asarray(valid.to_numpy(zero_copy_only=False)))[0])
            raise InputError(f"expected an id, got a null ({values.null_count} in all)", source=source,
                             line=line_of(lines, row), field=field)
        if _is_text(values.type, keep_dictionary):
            return _small_offsets(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        arr = np.asarray(values, dtype=object)
        texts = []
        for row, v in enumerate(arr.tolist()):
            if isinstance(v, str):
                texts.append(v)
            elif _missing(v):
                raise InputError(f"expected an id, got {v!r}", source=source, line=line_of(lines, row),
                                 field=field)
            else:
                texts.append(str(v))
        values = arrow.strings(texts)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = kernels.cast(values, pa.string())
    return _small_offsets(values)


_SMALL_OFFSETS_BYTES = 2**31 - 1
"""The most text bytes one ``pa.string()`` array (32-bit offsets) holds."""


def _small_offsets(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Ids of one Arrow type whatever the source gave: ``large_string`` (Parquet written by
    pandas, Polars, Arrow IPC) as ``string`` when every chunk's text fits 32-bit offsets, so
    ids from two sources combine (a Parquet run fused with a TREC run); larger chunks stay
    large. A dictionary keeps its indices, its values narrowed alike.

    >>> _small_offsets(pa.array(["a", "bc"], type=pa.large_string())).type
    DataType(string)
    >>> _small_offsets(pa.array(["a"]).dictionary_encode().cast(pa.dictionary(pa.int32(), pa.large_string()))).type
    DictionaryType(dictionary<values=string, indices=int32, ordered=0>)
    """
    typ = values.type
    if pa.types.is_dictionary(typ) and pa.types.is_large_string(typ.value_type):
        narrow = pa.dictionary(typ.index_type, pa.string(), typ.ordered)
        return values.cast(narrow) if _fits(values, lambda c: c.dictionary) else values
    if pa.types.is_large_string(typ) and _fits(values, lambda c: c):
        return kernels.cast(values, pa.string())
    return values


def _fits(values: pa.Array | pa.ChunkedArray, text: Any) -> bool:
    """Whether the text of every chunk (``text``: the chunk's strings) fits 32-bit offsets."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    return all(text(c).nbytes <= _SMALL_OFFSETS_BYTES for c in chunks)


def line_of(lines: np.ndarray | None, row: int) -> int:
    """The file line of ``row`` (0-based), from the container's ``lines``; rows count from 1
    when there are none.

    >>> line_of(np.array([3, 7]), 1), line_of(None, 1)
    (7, 2)
    """
    return int(lines[row]) if lines is not None else row + 1


_INT64 = np.iinfo(np.int64)


def integer_labels(values: Any, source: str, lines: np.ndarray | None = None) -> np.ndarray:
    """Relevance labels as int64, refusing (with the row's line) anything that is not an integer
    that int64 holds exactly: fractions, NaN, infinities, strings, None, |label| >= 2^63.

    >>> integer_labels([1, 2.0, -1, 2**40], "<dict>").tolist()
    [1, 2, -1, 1099511627776]
    >>> integer_labels([np.int64(2), np.float32(1.0), 0], "<dict>").tolist()
    [2, 1, 0]
    >>> integer_labels([1, 2**63], "<dict>")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    rankwise.errors.InputError: <dict>:2: field 'label': expected an integer between ..., got 9223372036854775808
    """
    arr = np.asarray(values, dtype=object) if isinstance(values, (list, tuple)) else np.asarray(values)
    if arr.dtype.kind in "iu":
        if arr.dtype.kind == "u" and len(arr) and arr.max() > _INT64.max:
            row = int(np.argmax(arr > _INT64.max))
            raise _label_error(arr[row], source, lines, row)
        return arr.astype(np.int64)
    if arr.dtype.kind == "b":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr)) | (arr >= 2.0**63) | (arr < -(2.0**63))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise _label_error(arr[row], source, lines, row)
        return arr.astype(np.int64)
    out = np.empty(len(arr), dtype=np.int64)
    for row, value in enumerate(arr.tolist()):
        if isinstance(value, np.generic):  # a list of NumPy scalars (list(frame.label))
            value = value.item()
        if isinstance(value, (bool, int)) and _INT64.min <= value <= _INT64.max:
            out[row] = value
        elif isinstance(value, float) and value.is_integer() and -(2.0**63) <= value < 2.0**63:
            out[row] = int(value)
        else:
            raise _label_error(value, source, lines, row)
    return out


def _label_error(value: Any, source: str, lines: np.ndarray | None, row: int) -> InputError:
    value = value.item() if isinstance(value, np.generic) else value
    hint = ""
    if isinstance(value, float) and np.isfinite(value):
        hint = ("; for continuous relevance (watch time, percentages) read the qrels with continuous=True "
                "(rankwise evaluate --continuous)")
    return InputError(f"expected an integer between -2^63 and 2^63 - 1, got {value!r}{hint}",
                      source=source, line=line_of(lines, row), field="label")


def relevance_values(values: Any, source: str, lines: np.ndarray | None = None
                     ) -> tuple[np.ndarray, dict[int, float]]:
    """Continuous relevance (any finite number) as integer level codes and each code's value.

    Code 0 is the value 0 (judged, no gain); the other distinct values get codes 1, 2, ... in
    increasing order, negative values included (a negative value is a negative gain, not
    trec_eval's "unjudged"). The gain-based measures read each code's value as its gain.

    >>> codes, table = relevance_values([0.5, 0.0, 12.25, 0.5, -1.0], "<dict>")
    >>> codes.tolist(), table
    ([2, 0, 3, 2, 1], {0: 0.0, 1: -1.0, 2: 0.5, 3: 12.25})
    >>> relevance_values([0.5, "1.5"], "<dict>")
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: <dict>:2: field 'label': expected a number (continuous relevance), got '1.5'
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":   # text, None, booleans: named, never converted
        for row, value in enumerate(np.asarray(values, dtype=object).tolist()):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"expected a number (continuous relevance), got {value!r}", source=source,
                                 line=line_of(lines, row), field="label")
    arr = arr.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise InputError(f"expected a finite number (continuous relevance), got {arr[bad[0]]!r}", source=source,
                         line=line_of(lines, int(bad[0])), field="label")
    values = distinct(arr[arr != 0])
    codes = np.zeros(len(arr), dtype=np.int64)
    nonzero = arr != 0
    codes[nonzero] = np.searchsorted(values, arr[nonzero]) + 1
    table = {0: 0.0}
    table.update({i + 1: float(v) for i, v in enumerate(values.tolist())})
    return codes, table


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
    notes: list[str] = field(default_factory=list)
    """What the reader skipped or read differently (comment lines, non-numeric labels)."""
    level_gains: dict[int, float] | None = None
    """Continuous relevance: ``label`` holds level codes and this maps each code to its value
    (see :func:`relevance_values`); None for trec_eval's integer grades."""

    def __post_init__(self) -> None:
        self.query = as_string_array(self.query, source=self.source, field="query", lines=self.lines)
        self.doc = as_string_array(self.doc, source=self.source, field="doc", lines=self.lines)
        self.label = integer_labels(self.label, self.source, self.lines)
        if not (len(self.query) == len(self.doc) == len(self.label)):
            raise InputError("query, doc and label columns differ in length", source=self.source)
        if len(self.label) == 0:
            raise InputError("no judgments: the qrels are empty", source=self.source)

    def __len__(self) -> int:
        return len(self.label)

    @property
    def continuous(self) -> bool:
        """True when the labels are continuous relevance values (``level_gains`` is set)."""
        return self.level_gains is not None

    @property
    def values(self) -> np.ndarray:
        """Each judgment's relevance value: the label, or the continuous value it encodes."""
        if self.level_gains is None:
            return self.label
        table = np.array([self.level_gains[c] for c in range(len(self.level_gains))], dtype=np.float64)
        values: np.ndarray = table[self.label]
        return values

    @classmethod
    def from_values(cls, query: Any, doc: Any, values: Any, source: str = "<values>",
                    lines: np.ndarray | None = None, notes: list[str] | None = None) -> Qrels:
        """Continuous relevance (watch time, a percentage, a signed grade): any finite number.

        The gain-based measures (nDCG, DCG, MDCG, signed nDCG) use the values as gains; the
        measures of integer grades refuse such qrels.

        >>> q = Qrels.from_values(["q1", "q1", "q1"], ["a", "b", "c"], [0.75, 0.0, 31.5])
        >>> q.continuous, q.values.tolist()
        (True, [0.75, 0.0, 31.5])
        """
        codes, table = relevance_values(values, source, lines)
        return cls(query, doc, codes, source, lines, list(notes or []), table)

    @classmethod
    def from_dict(cls, judgments: dict[str, dict[str, Any]], source: str = "<dict>",
                  continuous: bool = False) -> Qrels:
        """Build from the pytrec_eval/ranx shape ``{qid: {docid: label}}``; with
        ``continuous=True`` the labels are continuous relevance values (:meth:`from_values`).

        >>> Qrels.from_dict({"q1": {"d1": 0.25, "d2": 3.5}}, continuous=True).values.tolist()
        [0.25, 3.5]
        """
        queries, docs, labels = [], [], []
        for qid, docmap in judgments.items():
            if not isinstance(docmap, dict):
                raise InputError(
                    f"query {qid!r}: expected a {{docid: label}} dict, got {type(docmap).__name__}",
                    source=source,
                )
            for doc, label in docmap.items():
                queries.append(qid)
                docs.append(doc)
                labels.append(label)
        if continuous:
            return cls.from_values(queries, docs, labels, source)
        return cls(queries, docs, np.asarray(labels, dtype=object), source)

    @classmethod
    def from_dataframe(cls, frame: Any, source: str = "<DataFrame>", continuous: bool = False) -> Qrels:
        """Build from a pandas DataFrame with query, doc and label columns (common names accepted).

        Without a label column the rows are implicit feedback (held-out interactions, as
        recommender data comes): every (query, doc) row is relevant with label 1, an item a
        user interacted with more than once counts once, and a note says so.

        >>> import pandas as pd
        >>> q = Qrels.from_dataframe(pd.DataFrame({"user_id": ["u", "u", "u"], "item_id": ["a", "b", "a"]}))
        >>> q.to_dict()
        {'u': {'a': 1, 'b': 1}}
        >>> q.notes[0].split("; ")[1]
        '1 repeated (user, item) interaction(s) counted once'
        """
        from rankwise.data.columns import DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS, pick_column

        qcol = pick_column(frame.columns, QUERY_COLUMNS, "query id", source)
        dcol = pick_column(frame.columns, DOC_COLUMNS, "document id", source)
        lcol = pick_column(frame.columns, LABEL_COLUMNS, "relevance label", source, required=False)
        if lcol is not None and continuous:
            return cls.from_values(frame[qcol].to_numpy(), frame[dcol].to_numpy(), frame[lcol].to_numpy(), source)
        if lcol is not None:
            return cls(frame[qcol].to_numpy(), frame[dcol].to_numpy(), frame[lcol].to_numpy(), source)
        pairs = frame[[qcol, dcol]]
        repeated = int(pairs.duplicated().sum())
        pairs = pairs.drop_duplicates()
        note = f"{source}: no label column: every row is an interaction, a relevant item (label 1)"
        if repeated:
            note += f"; {repeated} repeated (user, item) interaction(s) counted once"
        return cls(pairs[qcol].to_numpy(), pairs[dcol].to_numpy(), np.ones(len(pairs), dtype=np.int64), source,
                   notes=[note])

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
        return _frame(self.query, self.doc, "relevance", self.values)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Return ``{qid: {docid: label}}`` (continuous relevance: the values)."""
        return _nested(self.query, self.doc, self.values)


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
        self.query = as_string_array(self.query, keep_dictionary=True, source=self.source, field="query",
                                     lines=self.lines)
        self.doc = as_string_array(self.doc, source=self.source, field="doc", lines=self.lines)
        try:
            self.score = np.asarray(self.score, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            for row, value in enumerate(np.asarray(self.score, dtype=object).tolist()):
                try:
                    float(value)
                except (TypeError, ValueError, OverflowError):
                    raise InputError(f"expected a number, got {value!r}", source=self.source,
                                     line=line_of(self.lines, row), field="score") from None
            raise
        if not (len(self.query) == len(self.doc) == len(self.score)):
            raise InputError("query, doc and score columns differ in length", source=self.source)
        if len(self.score) == 0:
            raise InputError("no rows: the run is empty", source=self.source)
        nan = np.isnan(self.score)
        if nan.any():  # +-inf order like any number (trec_eval's atof reads them); NaN has no order
            row = int(np.flatnonzero(nan)[0])
            raise InputError(
                f"expected a number, got NaN ({int(nan.sum())} NaN score(s) in all): NaN scores have no order",
                source=self.source, line=line_of(self.lines, row), field="score",
            )

    def __len__(self) -> int:
        return len(self.score)

    @classmethod
    def from_dict(
        cls, scores: dict[str, dict[str, float]], name: str = "run", source: str = "<dict>"
    ) -> Run:
        """Build from the pytrec_eval/ranx shape ``{qid: {docid: score}}``."""
        queries: list[str] = []
        docs: list[str] = []
        values: list[float] = []
        for qid, docmap in scores.items():
            if not isinstance(docmap, dict):
                raise InputError(
                    f"query {qid!r}: expected a {{docid: score}} dict, got {type(docmap).__name__}",
                    source=source,
                )
            queries.extend([qid] * len(docmap))
            docs.extend(docmap)
            values.extend(docmap.values())
        return cls(queries, docs, np.asarray(values, dtype=object), name, source)

    @classmethod
    def from_dataframe(cls, frame: Any, name: str | None = None, source: str = "<DataFrame>",
                       default_name: str = "run") -> Run:
        """Build from a pandas DataFrame with query, doc and score columns (common names accepted);
        the run is ``name``, else the first value of a tag column, else ``default_name``. A
        top-k list with a rank column (``rank``, ``position``, ``pos``) and no score is ranked by
        it, rank 1 first (its score is minus the rank).

        >>> import pandas as pd
        >>> Run.from_dataframe(pd.DataFrame({"user_id": ["u", "u"], "item_id": ["a", "b"], "rank": [2, 1]})).to_dict()
        {'u': {'a': -2.0, 'b': -1.0}}
        """
        from rankwise.data.columns import (
            DOC_COLUMNS,
            QUERY_COLUMNS,
            RANK_COLUMNS,
            SCORE_COLUMNS,
            TAG_COLUMNS,
            pick_column,
        )

        qcol = pick_column(frame.columns, QUERY_COLUMNS, "query id", source)
        dcol = pick_column(frame.columns, DOC_COLUMNS, "document id", source)
        scol = pick_column(frame.columns, SCORE_COLUMNS, "score", source, required=False)
        tcol = pick_column(frame.columns, TAG_COLUMNS, "run tag", source, required=False)
        if name is None:
            name = str(frame[tcol].iloc[0]) if tcol is not None and len(frame) else default_name
        if scol is not None:
            return cls(frame[qcol].to_numpy(), frame[dcol].to_numpy(), frame[scol].to_numpy(), name, source)
        # a top-k list without scores (recommender output): ranked by its rank column, 1 first
        rcol = pick_column(frame.columns, RANK_COLUMNS, "score or rank", source, required=False)
        if rcol is None:
            raise InputError(f"no score or rank column; expected one of {', '.join(SCORE_COLUMNS + RANK_COLUMNS)} "
                             f"(found {', '.join(map(str, frame.columns))})", source=source)
        try:
            ranks = np.asarray(frame[rcol].to_numpy(), dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"column {rcol!r}: expected numeric ranks", source=source, field=str(rcol)) from None
        if not np.isfinite(ranks).all():
            raise InputError(f"column {rcol!r}: expected finite ranks", source=source, field=str(rcol))
        return cls(frame[qcol].to_numpy(), frame[dcol].to_numpy(), -ranks, name, source)

    @classmethod
    def from_ranked_lists(cls, lists: Any, key: Any = str, name: str = "run", source: str = "<lists>",
                          scores: Any = None) -> Run:
        """A run from ranked lists of arbitrary items, best first (recommender style).

        ``lists`` maps a query (or user) to a sequence of items, or is a list of sequences
        (queries numbered from 0). ``key`` turns each item into its identifying string. The
        list order is kept exactly: scores are n, n-1, ..., 1, so no tie rule ever applies.

        ``scores`` (the same shape as ``lists``: per query a sequence as long as its list)
        carries the system's own scores instead, for score-based fusion and exports. They must
        not increase along a list (the list order is the ranking; an increase is refused with
        the query and position); tied scores are then ranked by the evaluation's tie rule.

        >>> r = Run.from_ranked_lists({"u1": [("m", 2), ("m", 1)]}, key=repr)
        >>> r.to_dict()
        {'u1': {"('m', 2)": 2.0, "('m', 1)": 1.0}}
        >>> Run.from_ranked_lists({"u1": ["a", "b"]}, scores={"u1": [0.9, 0.4]}).to_dict()
        {'u1': {'a': 0.9, 'b': 0.4}}
        """
        from rankwise.errors import InputError

        items = list(lists.items()) if isinstance(lists, dict) else list(enumerate(lists))
        given = None if scores is None else (dict(scores) if isinstance(scores, dict) else dict(enumerate(scores)))
        if given is not None and set(map(str, given)) != {str(q) for q, _ in items}:
            missing = sorted({str(q) for q, _ in items} ^ set(map(str, given)))[:3]
            raise InputError(f"scores must name the same queries as the lists; these differ: {', '.join(missing)}",
                             field="scores")
        by_name = None if given is None else {str(q): v for q, v in given.items()}
        queries: list[str] = []
        docs: list[str] = []
        values: list[float] = []
        for qid, ranked in items:
            ranked = list(ranked)
            queries.extend([str(qid)] * len(ranked))
            docs.extend(key(item) for item in ranked)
            if by_name is None:
                values.extend(range(len(ranked), 0, -1))
                continue
            own = np.asarray(list(by_name[str(qid)]), dtype=np.float64)
            if own.shape != (len(ranked),):
                raise InputError(f"query {qid}: {len(ranked)} items but {own.size} scores", field="scores")
            if not np.isfinite(own).all():
                raise InputError(f"query {qid}: scores must be finite, got {own[~np.isfinite(own)][0]}",
                                 field="scores")
            rising = np.flatnonzero(np.diff(own) > 0)
            if len(rising):
                at = int(rising[0]) + 2
                raise InputError(f"query {qid}: the score at position {at} ({own[at - 1]:g}) is above the one before "
                                 f"it ({own[at - 2]:g}); lists are best first, so scores must not increase",
                                 field="scores")
            values.extend(own.tolist())
        return cls(arrow.strings(queries), arrow.strings(docs), np.asarray(values, dtype=np.float64), name, source)

    def to_dataframe(self) -> Any:
        """Return the run as a pandas DataFrame (query_id, doc_id, score)."""
        return _frame(self.query, self.doc, "score", self.score)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{qid: {docid: score}}``."""
        return _nested(self.query, self.doc, self.score)
