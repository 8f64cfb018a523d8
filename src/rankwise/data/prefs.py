"""Preference judgments (trec_eval ``-R prefs``, ``-R qrels_prefs``) and qrels with judgment
groups (``-R qrels_jg``).

A prefs file has lines ``qid ujg ujsubg docno rel_level``: within a judgment sub-group (JSG)
every document is preferred to every document with a lower ``rel_level``; the JSGs of one
judgment group (JG) combine, transitively, into that JG's preferences; different JGs (users)
may disagree. A qrels file read as prefs takes its second field as the JG and one JSG per JG.
With ``qrels_jg`` each JG of a query is a complete set of relevance judgments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.data.trec_io import read_bytes
from rankwise.data.trec_lines import Lines, _decode, _lines, c_atof, c_atol
from rankwise.errors import InputError

PREFS_FIELDS = ("query", "group", "subgroup", "doc", "level")
QRELS_GROUP_FIELDS = ("query", "group", "doc", "label")


@dataclass
class Prefs:
    """Judgments with groups: one row per line, in file order.

    ``kind`` is ``prefs`` (levels are preferences within sub-groups), ``qrels_prefs`` (a qrels
    file read as preferences), ``qrels_jg`` (integer labels; each group a full set of qrels) or
    ``subtopics`` (integer labels per subtopic, the group).

    >>> p = Prefs.from_rows([("q1", "u1", "s1", "d1", 2.0), ("q1", "u1", "s1", "d2", 0.0)])
    >>> p.query.tolist(), p.level.tolist()
    (['q1', 'q1'], [2.0, 0.0])
    """

    query: np.ndarray
    group: np.ndarray
    subgroup: np.ndarray
    doc: np.ndarray
    level: np.ndarray
    kind: str = "prefs"
    source: str = "<prefs>"
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_rows(cls, rows: list[tuple[Any, ...]], kind: str = "prefs", source: str = "<prefs>") -> Prefs:
        """Build from ``(query, group, subgroup, doc, level)`` tuples."""
        cols: list[Any] = list(zip(*rows, strict=True)) if rows else [(), (), (), (), ()]
        query, group, subgroup, doc = (np.asarray(c, dtype=object) for c in cols[:4])
        return cls(query, group, subgroup, doc, np.asarray(cols[4], dtype=np.float64), kind, source)

    def __len__(self) -> int:
        return len(self.query)


def _parse(data: bytes, source: str, n_fields: int, names: tuple[str, ...],
           integer: bool) -> tuple[list[tuple[Any, ...]], Lines]:
    """Split lines as trec_eval does (C whitespace, ``#`` comment lines, exactly ``n_fields``)."""
    out = Lines(source)
    rows: list[tuple[Any, ...]] = []
    for lineno, raw in enumerate(_lines(data, source), start=1):
        if raw.startswith(b"#"):
            out.note("comment", lineno)
            continue
        parts = raw.split()
        if len(parts) != n_fields:
            what = "a blank line" if not parts else f"{len(parts)} field(s)"
            raise InputError(f"malformed line: expected exactly {n_fields} fields separated by spaces or tabs "
                             f"({' '.join(names)}), found {what} (trec_eval: 'Malformed line')",
                             source=source, line=lineno)
        value, exact = c_atol(parts[-1]) if integer else c_atof(parts[-1])
        if not exact:
            out.note("inexact", lineno, parts[-1])
        if not integer and value != value:
            raise InputError("expected a number, got NaN", source=source, line=lineno, field=names[-1])
        texts = [_decode(p, source, lineno, name) for p, name in zip(parts[:-1], names, strict=False)]
        rows.append((*texts, value))
        out.numbers.append(lineno)  # type: ignore[union-attr]
    if not rows:
        raise InputError("the file holds no data lines", source=source)
    return rows, out


def read_prefs(path: str | os.PathLike[str]) -> Prefs:
    """Read a trec_eval prefs file (``qid ujg ujsubg docno rel_level``).

    >>> import tempfile
    >>> f = tempfile.NamedTemporaryFile("w", delete=False); _ = f.write("q1 u1 s1 d1 2\\nq1 u1 s1 d2 0\\n"); f.close()
    >>> read_prefs(f.name).doc.tolist()
    ['d1', 'd2']
    """
    source = str(path)
    rows, lines = _parse(read_bytes(path), source, 5, PREFS_FIELDS, integer=False)
    prefs = Prefs.from_rows(rows, "prefs", source)
    prefs.notes = [*lines.notes(source, "level")]
    return prefs


def read_qrels_prefs(path: str | os.PathLike[str]) -> Prefs:
    """Read a qrels file as preferences (trec_eval ``-R qrels_prefs``): the iteration field is
    the judgment group, with one sub-group; labels are read with C's ``atof``."""
    source = str(path)
    rows, lines = _parse(read_bytes(path), source, 4, QRELS_GROUP_FIELDS, integer=False)
    prefs = Prefs.from_rows([(q, g, "0", d, v) for q, g, d, v in rows], "qrels_prefs", source)
    prefs.notes = [*lines.notes(source, "label")]
    return prefs


def read_qrels_jg(path: str | os.PathLike[str]) -> Prefs:
    """Read qrels whose iteration field names a judgment group (trec_eval ``-R qrels_jg``);
    a document judged twice in one group of a query is an error."""
    source = str(path)
    rows, lines = _parse(read_bytes(path), source, 4, QRELS_GROUP_FIELDS, integer=True)
    seen: dict[tuple[str, str, str], int] = {}
    for i, (q, g, d, _) in enumerate(rows):
        key = (q, g, d)
        if key in seen:
            raise InputError(f"document {d!r} is judged twice for query {q!r} in judgment group {g!r} (first at "
                             f"line {lines.numbers[seen[key]]})", source=source, line=int(lines.numbers[i]),
                             field="doc")
        seen[key] = i
    prefs = Prefs.from_rows([(q, g, "0", d, v) for q, g, d, v in rows], "qrels_jg", source)
    prefs.notes = [*lines.notes(source, "label")]
    return prefs


def read_subtopics(path: str | os.PathLike[str]) -> Prefs:
    """Read subtopic qrels (``topic subtopic docno judgment``: the TREC Web track's diversity
    qrels, ir_measures' iteration field as the subtopic)."""
    source = str(path)
    rows, lines = _parse(read_bytes(path), source, 4, ("query", "subtopic", "doc", "label"), integer=True)
    judgments = Prefs.from_rows([(q, st, "", d, v) for q, st, d, v in rows], "subtopics", source)
    judgments.notes = [*lines.notes(source, "label")]
    return judgments


def load_prefs(path: str | os.PathLike[str], kind: str = "prefs") -> Prefs:
    """Read judgments with groups: ``kind`` is ``prefs`` (trec_eval ``-R prefs``),
    ``qrels_prefs`` (qrels read as preferences), ``qrels_jg`` (qrels in judgment groups) or
    ``subtopics`` (diversity qrels: ``topic subtopic docno judgment``).

    >>> import tempfile
    >>> f = tempfile.NamedTemporaryFile("w", delete=False); _ = f.write("q1 0 d1 1\\nq1 0 d2 0\\n"); f.close()
    >>> load_prefs(f.name, "qrels_prefs").group.tolist()
    ['0', '0']
    """
    readers = {"prefs": read_prefs, "qrels_prefs": read_qrels_prefs, "qrels_jg": read_qrels_jg,
               "subtopics": read_subtopics}
    if kind not in readers:
        raise InputError(f"unknown judgments kind {kind!r}; expected one of {', '.join(readers)}", source=str(path))
    return readers[kind](path)
