"""Runs and qrels as CSV or TSV (``.csv``, ``.tsv``, optionally ``.gz``), with or without a
header line.

- **Delimiter**: detected from the first line (a tab, else a comma, else a semicolon), else
  the suffix's (``.tsv``: tab, ``.csv``: comma).
- **Header**: a first line naming the columns the DataFrame readers accept (``qid``,
  ``query_id``, ``docno``, ``doc_id``, ``score``, ``label``, ``relevance`` ...; see
  ``rankwise.data.columns``). Without a header the columns go by position: a run has 6 (TREC's
  ``query Q0 doc rank score tag``) or 3 (``query doc score``); qrels have 4 (``query iter doc
  label``) or 3 (``query doc label``).
- Every value is read as text first, so ids keep their leading zeros; scores and labels are
  then checked, and a bad one names its file, line and field.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.csv")
>>> _ = open(path, "w").write("qid,docno,score\\nq1,d1,2.5\\nq1,d2,1.0\\n")
>>> read_delimited_run(path).to_dict()
{'q1': {'d1': 2.5, 'd2': 1.0}}
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rankwise.data.containers import Qrels, Run
from rankwise.errors import InputError

DELIMITED_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz")
RUN_POSITIONS = {6: ("query", None, "doc", None, "score", "tag"), 3: ("query", "doc", "score")}
QRELS_POSITIONS = {4: ("query", None, "doc", "label"), 3: ("query", "doc", "label")}


def _delimiter(first: str, path: str) -> str:
    for candidate in ("\t", ",", ";"):
        if candidate in first:
            return candidate
    return "\t" if path.lower().endswith((".tsv", ".tsv.gz")) else ","


def _has_header(fields: list[str]) -> bool:
    from rankwise.data.columns import DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS, TAG_COLUMNS

    known = {*QUERY_COLUMNS, *DOC_COLUMNS, *SCORE_COLUMNS, *LABEL_COLUMNS, *TAG_COLUMNS}
    return any(f.strip().strip('"').lower() in known for f in fields)


def _table(path: str) -> tuple[Any, bool, int]:
    """(pandas frame of text, has a header, line of the first data row)."""
    import io

    import pandas as pd

    from rankwise.data.trec_io import read_text

    text = read_text(path)
    lines = text.splitlines()
    first = next((line for line in lines if line.strip()), "")
    delimiter = _delimiter(first, path)
    header = _has_header(first.split(delimiter))
    while lines and not lines[-1].strip():
        lines.pop()
    blank = next((number for number, line in enumerate(lines, 1) if not line.strip()), None)
    if blank is not None:   # it would shift every line number after it
        raise InputError("an empty line inside the table", source=path, line=blank)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, header=0 if header else None, dtype=str,
                            keep_default_na=False, skip_blank_lines=True, engine="c")
    except pd.errors.ParserError as error:
        raise InputError(f"not a {'tab' if delimiter == chr(9) else repr(delimiter)}-separated table: {error}",
                         source=path) from None
    return frame, header, 2 if header else 1


def _columns(frame: Any, header: bool, positions: dict[int, tuple[str | None, ...]], kind: str, path: str,
             roles: dict[str, tuple[str, ...]], optional: tuple[str, ...] = ("tag",)) -> dict[str, Any]:
    """The role -> column of text values (the ``optional`` roles may be missing)."""
    from rankwise.data.columns import pick_column

    if header:
        out = {}
        for role, accepted in roles.items():
            column = pick_column(frame.columns, accepted, role, path, required=role not in optional)
            if column is not None:
                out[role] = frame[column]
        return out
    layout = positions.get(frame.shape[1])
    if layout is None:
        shapes = " or ".join(f"{n} ({' '.join(r or '-' for r in names)})" for n, names in positions.items())
        raise InputError(f"{frame.shape[1]} columns without a header; a {kind} without a header has {shapes} "
                         "columns (or give a header line naming them)", source=path)
    return {role: frame.iloc[:, i] for i, role in enumerate(layout) if role is not None}


def _numbers(values: Any, path: str, first_line: int, field: str, integer: bool) -> np.ndarray:
    import pandas as pd

    parsed = pd.to_numeric(values.str.strip(), errors="coerce")
    bad = np.flatnonzero(parsed.isna().to_numpy() | ~np.isfinite(parsed.to_numpy(dtype=np.float64)))
    if len(bad):
        raise InputError(f"expected {'an integer' if integer else 'a number'}, got {values.iloc[bad[0]]!r}",
                         source=path, line=first_line + int(bad[0]), field=field)
    array = parsed.to_numpy(dtype=np.float64)
    if integer:
        fractional = np.flatnonzero(array != np.round(array))
        if len(fractional):
            raise InputError(f"expected an integer label, got {values.iloc[fractional[0]]!r}", source=path,
                             line=first_line + int(fractional[0]), field=field)
        return array.astype(np.int64)
    return array


def read_delimited_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """A run from a CSV or TSV file (see the module)."""
    from rankwise.data.columns import DOC_COLUMNS, QUERY_COLUMNS, RANK_COLUMNS, SCORE_COLUMNS, TAG_COLUMNS

    path = os.fspath(path)
    frame, header, first = _table(path)
    cols = _columns(frame, header, RUN_POSITIONS, "run", path, {"query id": QUERY_COLUMNS, "document id": DOC_COLUMNS,
                                                                "score": SCORE_COLUMNS, "rank": RANK_COLUMNS,
                                                                "tag": TAG_COLUMNS}, optional=("score", "rank", "tag"))
    cols = {{"query id": "query", "document id": "doc"}.get(k, k): v for k, v in cols.items()}
    if "score" in cols:
        scores = _numbers(cols["score"], path, first, "score", integer=False)
    elif "rank" in cols:   # a top-k list without scores: rank 1 first
        scores = -_numbers(cols["rank"], path, first, "rank", integer=False)
    else:
        raise InputError(f"no score or rank column; expected one of {', '.join(SCORE_COLUMNS + RANK_COLUMNS)} "
                         f"(found {', '.join(map(str, frame.columns))})", source=path, line=1)
    lines = np.arange(first, first + len(frame), dtype=np.int64)
    if name is None:
        name = str(cols["tag"].iloc[-1]) if "tag" in cols and len(frame) else os.path.basename(path).split(".")[0]
    return Run(cols["query"].to_numpy(dtype=object), cols["doc"].to_numpy(dtype=object), scores, name, path, lines)


def read_delimited_qrels(path: str | os.PathLike[str], continuous: bool = False) -> Qrels:
    """Qrels from a CSV or TSV file (see the module); ``continuous``: the labels are continuous
    relevance values (:meth:`Qrels.from_values`)."""
    from rankwise.data.columns import DOC_COLUMNS, LABEL_COLUMNS, QUERY_COLUMNS

    path = os.fspath(path)
    frame, header, first = _table(path)
    cols = _columns(frame, header, QRELS_POSITIONS, "qrels file", path,
                    {"query id": QUERY_COLUMNS, "document id": DOC_COLUMNS, "label": LABEL_COLUMNS},
                    optional=("label",))
    cols = {{"query id": "query", "document id": "doc"}.get(k, k): v for k, v in cols.items()}
    lines = np.arange(first, first + len(frame), dtype=np.int64)
    if "label" in cols and continuous:
        values = _numbers(cols["label"], path, first, "label", integer=False)
        return Qrels.from_values(cols["query"].to_numpy(dtype=object), cols["doc"].to_numpy(dtype=object), values,
                                 path, lines)
    if "label" in cols:
        labels = _numbers(cols["label"], path, first, "label", integer=True)
        return Qrels(cols["query"].to_numpy(dtype=object), cols["doc"].to_numpy(dtype=object), labels, path, lines)
    # held-out interactions (implicit feedback): every row relevant, a repeated one counted once
    queries, docs = cols["query"].to_numpy(dtype=object), cols["doc"].to_numpy(dtype=object)
    import pandas as pd

    first_seen = ~pd.DataFrame({"q": queries, "d": docs}).duplicated().to_numpy()
    note = f"{path}: no label column: every row is an interaction, a relevant item (label 1)"
    if (~first_seen).any():
        note += f"; {int((~first_seen).sum())} repeated (user, item) interaction(s) counted once"
    return Qrels(queries[first_seen], docs[first_seen], np.ones(int(first_seen.sum()), dtype=np.int64), path,
                 lines[first_seen], notes=[note])


__all__ = ["DELIMITED_SUFFIXES", "read_delimited_qrels", "read_delimited_run"]
