"""Readers for TREC run files (``qid Q0 docid rank score tag``) and qrels (``qid iter docid label``).

The fast path hands a regular file (single-space or single-tab separated, no comments) to
Arrow's multithreaded CSV reader. Anything irregular (runs of whitespace, ``#`` comment
lines, trailing extra columns) goes through a careful line reader that also produces the
precise error messages: file, line, field and what was expected.
"""

from __future__ import annotations

import gzip
import math
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rankwise.data import arrow
from rankwise.data.arrow import to_numpy
from rankwise.data.containers import Qrels, Run
from rankwise.errors import InputError

RUN_FIELDS = ("query", "q0", "doc", "rank", "score", "tag")
QRELS_FIELDS = ("query", "iteration", "doc", "label")


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file, decompressing ``.gz`` transparently; missing files raise InputError."""
    p = Path(path)
    if not p.exists():
        raise InputError("file not found", source=str(path))
    if p.is_dir():
        raise InputError("expected a file, got a directory", source=str(path))
    data = p.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if not data.strip():
        raise InputError("the file is empty", source=str(path))
    return data


def _is_gzip(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _first_line(path: str | os.PathLike[str]) -> bytes:
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as f:
        return f.readline().rstrip(b"\r\n")


def _fast_delimiter(path: str | os.PathLike[str]) -> tuple[str | None, bytes]:
    """The delimiter of a regular file (fields separated by one tab or one space), judged from
    its first line, and that line; None sends the file to the careful line reader. Runs of
    whitespace, leading or trailing whitespace and extra fields make Arrow's parse fail, and
    ``_irregular`` catches the rest, which also falls back."""
    first = _first_line(path)
    if not first.strip() or first[:1] in (b"#", b" ", b"\t"):
        return None, first
    return ("\t" if b"\t" in first else " "), first


def _strings_of(column: pa.ChunkedArray) -> list[pa.Array]:
    """The distinct-enough string arrays to check: a dictionary column's dictionaries only."""
    out = []
    for chunk in column.chunks:
        out.append(chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk)
    return out


def _irregular(table: pa.Table, delim: str, columns: tuple[str, ...]) -> bool:
    """True if the fast parse cannot be trusted: a line starts with '#' (a comment for trec_eval
    10.0) or a field holds the other whitespace character (mixed separators)."""
    other = "\t" if delim == " " else " "
    for arr in _strings_of(table.column(columns[0])):
        if pc.any(pc.starts_with(arr, "#")).as_py():
            return True
    for name in columns:
        for arr in _strings_of(table.column(name)):
            if pc.any(pc.match_substring(arr, other)).as_py():
                return True
    return False


def _fast_table(path: str | os.PathLike[str], names: tuple[str, ...], types: dict[str, pa.DataType],
                delim: str, include: list[str]) -> pa.Table | None:
    """Parse with Arrow's multithreaded streaming reader; None when the file is irregular."""
    try:
        with pa.input_stream(str(path), compression="gzip" if _is_gzip(path) else None) as stream:
            return pacsv.read_csv(
                stream,
                read_options=pacsv.ReadOptions(column_names=list(names), use_threads=True, block_size=1 << 22),
                parse_options=pacsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False,
                                                 ignore_empty_lines=False),
                convert_options=pacsv.ConvertOptions(column_types=types, include_columns=include,
                                                     strings_can_be_null=False,
                                                     quoted_strings_can_be_null=False, null_values=[]),
            )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def _numeric(column: pa.ChunkedArray) -> np.ndarray:
    """A numeric Arrow column as one NumPy array (chunk by chunk: much faster than to_numpy)."""
    if column.num_chunks > 1:  # one Arrow concatenation (its pool reuses the parser's memory)
        column = pa.chunked_array([pa.concat_arrays(column.chunks)])
    return to_numpy(column)


def _split_lines(data: bytes, source: str, n_fields: int, names: tuple[str, ...], allow_extra: bool):
    """Slow path: split every line on whitespace; returns columns, line numbers and counters."""
    text = data.decode("utf-8", errors="strict") if isinstance(data, bytes) else data
    cols: list[list[str]] = [[] for _ in range(n_fields)]
    lines: list[int] = []
    comments = extra = blank = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            blank += 1
            continue
        if stripped.startswith("#"):
            comments += 1
            continue
        parts = stripped.split()
        if len(parts) < n_fields or (len(parts) > n_fields and not allow_extra):
            missing = names[len(parts)] if len(parts) < n_fields else None
            detail = f"(missing field '{missing}')" if missing else "(too many fields)"
            raise InputError(
                f"expected {n_fields} whitespace-separated fields ({' '.join(names)}), "
                f"found {len(parts)} {detail}",
                source=source, line=lineno,
            )
        if len(parts) > n_fields:
            extra += 1
        for i in range(n_fields):
            cols[i].append(parts[i])
        lines.append(lineno)
    if not lines:
        raise InputError("the file holds no data lines", source=source)
    return cols, np.asarray(lines, dtype=np.int64), {"comments": comments, "extra": extra, "blank": blank}


def _parse_floats(values: list[str], lines: np.ndarray, source: str, field: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.float64)
    except ValueError:
        for i, v in enumerate(values):
            try:
                x = float(v)
            except ValueError:
                raise InputError(f"expected a number, got {v!r}", source=source,
                                 line=int(lines[i]), field=field) from None
            if not math.isfinite(x):
                break
        raise


def _parse_ints(values: list[str], lines: np.ndarray, source: str, field: str) -> np.ndarray:
    try:
        return np.asarray(values, dtype=np.int64)
    except (ValueError, OverflowError):
        for i, v in enumerate(values):
            try:
                int(v)
            except ValueError:
                raise InputError(f"expected an integer, got {v!r}", source=source,
                                 line=int(lines[i]), field=field) from None
        raise


def _notes(counts: dict[str, int], what: str) -> list[str]:
    notes = []
    if counts.get("comments"):
        notes.append(f"{counts['comments']} comment line(s) starting with '#' skipped in {what}")
    if counts.get("blank"):
        notes.append(f"{counts['blank']} blank line(s) skipped in {what}")
    if counts.get("extra"):
        notes.append(f"{counts['extra']} line(s) of {what} had fields after the 6th; they were ignored")
    return notes


def read_trec_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a TREC run file (optionally gzipped); the tag of the first line names the run.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False)
    >>> _ = f.write("q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"); f.close()
    >>> run = read_trec_run(f.name); os.unlink(f.name)
    >>> run.name, run.score.tolist()
    ('bm25', [2.5, 1.0])
    """
    source = str(path)
    if not Path(path).exists():
        raise InputError("file not found", source=source)
    delim, first_line = _fast_delimiter(path)
    table = None
    if delim is not None:
        # query ids repeat on every line of their ranking: keep them dictionary-encoded
        types = {"query": pa.dictionary(pa.int32(), pa.string()), "q0": pa.string(), "doc": pa.string(),
                 "rank": pa.string(), "score": pa.float64(), "tag": pa.string()}
        include = ["query", "doc", "score"] + (["tag"] if delim == "\t" else [])
        table = _fast_table(path, RUN_FIELDS, types, delim, include)
    if table is not None and table.num_rows and not _irregular(table, delim, tuple(c for c in include
                                                                                   if c != "score")):
        first = first_line.split()
        tag = first[5].decode("utf-8", errors="replace")
        run = Run(table.column("query"), table.column("doc"), _numeric(table.column("score")),
                  name if name is not None else tag, source)
        del table
        arrow.release_unused()  # the parser's scratch memory goes back to the system
        return run
    data = read_bytes(path)
    cols, lines, counts = _split_lines(data, source, 6, RUN_FIELDS, allow_extra=True)
    score = _parse_floats(cols[4], lines, source, "score")
    run = Run(arrow.strings(cols[0]), arrow.strings(cols[2]), score,
              name if name is not None else cols[5][0], source, lines)
    run.notes.extend(_notes(counts, source))
    return run


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file ``qid iter docid label`` (the second column is ignored).

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    >>> _ = f.write("q1 0 d1 2\\nq1 0 d2 -1\\n"); f.close()
    >>> qrels = read_trec_qrels(f.name); os.unlink(f.name)
    >>> qrels.label.tolist()
    [2, -1]
    """
    source = str(path)
    if not Path(path).exists():
        raise InputError("file not found", source=source)
    delim, _ = _fast_delimiter(path)
    table = None
    if delim is not None:
        types = {"query": pa.string(), "iteration": pa.string(), "doc": pa.string(), "label": pa.int64()}
        table = _fast_table(path, QRELS_FIELDS, types, delim, ["query", "doc", "label"])
    if table is not None and table.num_rows and not _irregular(table, delim, ("query", "doc")):
        return Qrels(table.column("query"), table.column("doc"), _numeric(table.column("label")), source)
    data = read_bytes(path)
    cols, lines, counts = _split_lines(data, source, 4, QRELS_FIELDS, allow_extra=False)
    labels = _parse_ints(cols[3], lines, source, "label")
    return Qrels(arrow.strings(cols[0]), arrow.strings(cols[2]), labels, source, lines)


def write_trec_run(run: Run, path: str | os.PathLike[str]) -> None:
    """Write a run in TREC format, ranks numbered by descending score."""
    frame = run.to_dataframe().sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    frame["rank"] = frame.groupby("query_id").cumcount() + 1
    with open(path, "w", encoding="utf-8") as out:
        for q, d, r, s in zip(frame["query_id"], frame["doc_id"], frame["rank"], frame["score"], strict=False):
            out.write(f"{q} Q0 {d} {r} {s!r} {run.name}\n")
