"""Readers for TREC run files (``qid Q0 docid rank score tag``) and qrels (``qid iter docid label``).

The fast path hands a regular file (single-space or single-tab separated, no comments) to
Arrow's multithreaded CSV reader, piece by piece (``trec_fast``). Anything irregular (runs of whitespace, ``#`` comment
lines, trailing extra columns) goes through a careful line reader that also produces the
precise error messages: file, line, field and what was expected.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow
from rankwise.data.containers import Qrels, Run
from rankwise.data.trec_fast import read_regular
from rankwise.data.trec_lines import QRELS_FIELDS, RUN_FIELDS, parse_qrels_lines, parse_run_lines
from rankwise.errors import InputError


def check_file(path: str | os.PathLike[str]) -> None:
    """A readable regular file, or an InputError saying what the path is instead."""
    if not os.path.exists(path):
        raise InputError("file not found", source=str(path))
    if os.path.isdir(path):
        raise InputError("expected a file, got a directory", source=str(path))


def read_text(path: str | os.PathLike[str]) -> str:
    r"""A whole UTF-8 text file (``.gz`` decompressed, a byte-order mark dropped) within the
    input limits; bytes that are not UTF-8 raise InputError naming the line and the byte.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as f:
    ...     _ = f.write(b"a,b\n\xff,1\n")
    >>> read_text(f.name)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...:2: invalid UTF-8 (byte 0xff)
    """
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"invalid UTF-8 (byte {raw[error.start]:#04x})", source=str(path),
                         line=raw[:error.start].count(b"\n") + 1) from None


def read_bytes(path: str | os.PathLike[str], lines: bool = True) -> bytes:
    """Read a whole file, decompressing ``.gz`` transparently; missing, unreadable, truncated or
    corrupt files raise InputError, and so does input past the limits of ``data.limits``
    (``lines``: a text of lines, each at most ``max_line_bytes``)."""
    from rankwise.data.limits import current, gunzip_bounded, read_bounded

    check_file(path)
    limits = current()
    try:
        with open(path, "rb") as f:
            data = read_bounded(f, str(path), limits, lines)   # a device or a pipe may never end
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror})", source=str(path)) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gunzip_bounded(data, str(path), limits, lines)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"the gzip data is truncated or corrupt ({exc})", source=str(path)) from None
    if not data.strip():
        raise InputError("the file is empty", source=str(path))
    return data


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _first_line(path: str | os.PathLike[str]) -> bytes:
    opener: Callable[..., Any] = open
    if _is_gzip(path):
        import gzip

        opener = gzip.open
    try:
        with opener(path, "rb") as f:
            return f.readline(2**20 + 1).rstrip(b"\r\n")   # a device may have no line end
    except (EOFError, OSError, zlib.error):
        return b""  # the careful reader says what is wrong


def fast_delimiter(path: str | os.PathLike[str]) -> str | None:
    """The delimiter of a regular file (fields separated by one tab or one space), judged from
    its first line; None sends the file to the careful line reader. Runs of
    whitespace, leading or trailing whitespace and extra fields make Arrow's parse fail, and
    ``trec_fast.read_regular`` catches the rest, which also falls back."""
    first = _first_line(path)
    if not first.strip() or first[:1] in (b"#", b" ", b"\t"):
        return None
    return "\t" if b"\t" in first else " "


RUN_TYPES = {"query": pa.string(), "doc": pa.string(), "score": pa.float64(), "tag": pa.binary()}
"""Arrow types of the run fields the fast path converts. Q0 and rank are only checked (never
empty), not converted: converting them cost an eighth of the parse. The tag is only checked and
reduced to its distinct values, so it is read as bytes. Query ids stay plain strings: a
dictionary costs a hash-table insert per row while parsing, and the join looks each run of
equal ids up once (``engine.align._coded_queries``)."""

QRELS_TYPES = {"query": pa.string(), "doc": pa.string(), "label": pa.int64()}
"""Arrow types of the qrels fields the fast path converts (the iteration field is only checked)."""


def tag_notes(tags: list[str], source: str) -> list[str]:
    if len(tags) <= 1:
        return []
    shown = ", ".join(repr(t) for t in tags[:5]) + (", ..." if len(tags) > 5 else "")
    return [f"{source}: {len(tags)} different run tags ({shown}); the run is named after the tag of "
            f"the last line, {tags[-1]!r}, as trec_eval names it"]


def read_trec_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a TREC run file (optionally gzipped) exactly as trec_eval 10.0 reads it; the tag of
    the last line names the run (a warning lists the tags if they differ).

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False)
    >>> _ = f.write("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"); f.close()
    >>> run = read_trec_run(f.name); os.unlink(f.name)
    >>> run.name, run.score.tolist()
    ('bm25', [2.5, 1.0])
    """
    source = str(path)
    check_file(path)
    delim = fast_delimiter(path)
    if delim is not None:
        cols = read_regular(path, RUN_FIELDS, RUN_TYPES, delim, ("query", "doc", "score"), distinct="tag")
        if cols is not None:
            last = cols.last
            assert last is not None  # a file with rows has a last tag
            tags = [t for t in cols.distinct if t != last] + [last]
            run = Run(cols.column("query"), cols.column("doc"), cols.array("score"),
                      name if name is not None else last, source)
            run.notes.extend(tag_notes(tags, source))
            return run
    lines, tags = parse_run_lines(read_bytes(path), source)
    run = Run(arrow.strings(lines.queries), arrow.strings(lines.docs), np.asarray(lines.values),
              name if name is not None else tags[-1], source, np.asarray(lines.numbers))
    run.notes.extend([*lines.notes(source, "score"), *tag_notes(tags, source)])
    return run


def read_trec_qrels(path: str | os.PathLike[str], continuous: bool = False) -> Qrels:
    """Read a TREC qrels file ``qid iter docid label`` exactly as trec_eval 10.0 reads it (the
    second column is ignored); ``continuous``: the labels are continuous relevance values
    (any finite number, :meth:`Qrels.from_values`), each line checked.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    >>> _ = f.write("q1 0 d1 2\\nq1 0 d2 -1\\n"); f.close()
    >>> qrels = read_trec_qrels(f.name); os.unlink(f.name)
    >>> qrels.label.tolist()
    [2, -1]
    """
    source = str(path)
    check_file(path)
    if continuous:
        return _read_trec_values(path, source)
    delim = fast_delimiter(path)
    if delim is not None:
        cols = read_regular(path, QRELS_FIELDS, QRELS_TYPES, delim, ("query", "doc", "label"))
        if cols is not None:
            return Qrels(cols.column("query"), cols.column("doc"), cols.array("label"), source)
    lines = parse_qrels_lines(read_bytes(path), source)
    qrels = Qrels(arrow.strings(lines.queries), arrow.strings(lines.docs), np.asarray(lines.values), source,
                  np.asarray(lines.numbers))
    qrels.notes = [*lines.notes(source, "label")]
    return qrels


def _read_trec_values(path: str | os.PathLike[str], source: str) -> Qrels:
    """TREC qrels lines whose fourth field is a continuous relevance value."""
    queries, docs, values, numbers = [], [], [], []
    for number, raw in enumerate(read_bytes(path).decode("utf-8", errors="replace").splitlines(), start=1):
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(f"expected 4 fields 'qid iter docid value', got {len(fields)}", source=source,
                             line=number)
        try:
            value = float(fields[3])
        except ValueError:
            raise InputError(f"expected a number (continuous relevance), got {fields[3]!r}", source=source,
                             line=number, field="label") from None
        queries.append(fields[0])
        docs.append(fields[2])
        values.append(value)
        numbers.append(number)
    if not queries:
        raise InputError("no judgments: the qrels are empty", source=source)
    return Qrels.from_values(arrow.strings(queries), arrow.strings(docs), values, source, np.asarray(numbers))


def write_trec_run(run: Run, path: str | os.PathLike[str]) -> None:
    """Write a run in TREC format, ranks numbered by descending score."""
    from rankwise.data.atomic import atomic_open
    from rankwise.data.trec_write import write_trec_text

    with atomic_open(path, "wb") as out:
        write_trec_text(run, out)


def trec_run_lines(run: Run) -> Iterator[str]:
    """The run's TREC lines (``qid Q0 docid rank score tag``): queries in order, documents by
    descending score (rows of equal scores keep their order in the run), every digit of the score.

    >>> list(trec_run_lines(Run.from_dict({"q1": {"a": 0.5, "b": 2.0}}, name="bm25")))
    ['q1 Q0 b 1 2.0 bm25\\n', 'q1 Q0 a 2 0.5 bm25\\n']
    """
    from rankwise.data.trec_write import trec_run_pieces

    for piece in trec_run_pieces(run):
        for line in bytes(piece).decode("utf-8").split("\n")[:-1]:  # each piece ends with a newline
            yield line + "\n"
