"""Readers for TREC run files (``qid Q0 docid rank score tag``) and qrels (``qid iter docid label``).

The fast path hands a regular file (single-space or single-tab separated, no comments) to
Arrow's multithreaded CSV reader. Anything irregular (runs of whitespace, ``#`` comment
lines, trailing extra columns) goes through a careful line reader that also produces the
precise error messages: file, line, field and what was expected.
"""

from __future__ import annotations

import gzip
import math
import mmap
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
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


def _open_bytes(path: str | os.PathLike[str]):
    """The file's bytes without copying (a read-only mmap), decompressed when gzipped."""
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return gzip.decompress(Path(path).read_bytes())
        if os.fstat(f.fileno()).st_size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def _fast_delimiter(data) -> str | None:
    """The delimiter of a regular file (one tab or one space between fields, no comment lines),
    or None to send the file to the careful line reader. Cheap byte scans only; runs of spaces,
    leading or trailing whitespace and extra fields make Arrow's parse fail, which also falls back.
    """
    first = data[: data.find(b"\n")] if data.find(b"\n") >= 0 else data[:]
    if not bytes(first).strip() or first[:1] in (b"#", b" ", b"\t"):
        return None
    delim = b"\t" if b"\t" in first else b" "
    other = b" " if delim == b"\t" else b"\t"
    if data.find(other) >= 0:
        return None
    if data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0):
        return None
    return delim.decode()


def _fast_table(data, names: tuple[str, ...], types: dict[str, pa.DataType], delim: str,
                include: list[str]) -> pa.Table | None:
    """Parse with Arrow's multithreaded reader; None when the file is irregular."""
    try:
        return pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
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
    data = _open_bytes(path)
    delim = _fast_delimiter(data) if len(data) else None
    table = None
    if delim is not None:
        types = {"query": pa.string(), "q0": pa.string(), "doc": pa.string(), "rank": pa.string(),
                 "score": pa.float64(), "tag": pa.string()}
        table = _fast_table(data, RUN_FIELDS, types, delim, ["query", "doc", "score"])
    if table is not None and table.num_rows:
        first = bytes(data[: data.find(b"\n")]).split()
        tag = first[5].decode("utf-8", errors="replace")
        return Run(table.column("query"), table.column("doc"), _numeric(table.column("score")),
                   name if name is not None else tag, source)
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
    data = _open_bytes(path)
    delim = _fast_delimiter(data) if len(data) else None
    table = None
    if delim is not None:
        types = {"query": pa.string(), "iteration": pa.string(), "doc": pa.string(), "label": pa.int64()}
        table = _fast_table(data, QRELS_FIELDS, types, delim, ["query", "doc", "label"])
    if table is not None and table.num_rows:
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
