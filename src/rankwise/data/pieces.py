"""A run read piece by piece, for runs larger than memory: TREC text (plain or gzipped), a
Parquet file, or a directory of Parquet files (a dataset).

Each :class:`RunPiece` holds the rows of a few tens of megabytes of input with the file line
(TREC) or row (Parquet, counted from 1) of every row, so that an error found later still names
its place in the file. Pieces come in file order. Nothing is read until the pieces are asked
for, and every iteration reads the input again from its start.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow
from rankwise.data.columns import DOC_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS, TAG_COLUMNS, pick_column
from rankwise.data.containers import Run
from rankwise.data.trec_fast import PIECE_BYTES, _distinct_values, parsed_pieces
from rankwise.data.trec_io import RUN_TYPES, check_file, fast_delimiter, tag_notes
from rankwise.data.trec_lines import RUN_FIELDS, Lines, parse_run_lines
from rankwise.errors import InputError

PARQUET_BATCH_ROWS = 1 << 20
"""Rows of a Parquet input read at a time."""


@dataclass
class RunPiece:
    """Rows of a run, in file order: ids as Arrow strings, scores as float64, and the line
    (TREC) or row (Parquet, from 1) of each row in its file."""

    query: pa.Array | pa.ChunkedArray
    doc: pa.Array | pa.ChunkedArray
    score: np.ndarray
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.score)


@dataclass
class TrecRunPieces:
    """A TREC run file (optionally gzipped) read a piece of about ``piece_bytes`` at a time,
    with trec_eval's rules: regular pieces go through Arrow's CSV parser, any other piece
    through the careful line reader (same values, same errors). ``name`` and ``notes`` (tags,
    lines skipped) are known once every piece has been read.

    >>> import tempfile
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False)
    >>> _ = f.write("q1 Q0 d1 1 2.5 a\\n# note\\nq2 Q0 d1 1 1.0 b\\n"); f.close()
    >>> pieces = TrecRunPieces(f.name, piece_bytes=16)
    >>> [(p.query.to_pylist(), p.lines.tolist()) for p in pieces]
    [(['q1'], [1]), ([], []), (['q2'], [3])]
    >>> pieces.name, len(pieces.notes)
    ('b', 2)
    >>> os.unlink(f.name)
    """

    path: str | os.PathLike[str]
    given_name: str | None = None
    piece_bytes: int = PIECE_BYTES
    tags: list[str] = field(default_factory=list)
    last_tag: str | None = None
    counts: Lines | None = None

    def __post_init__(self) -> None:
        check_file(self.path)
        self.source = str(self.path)

    def __iter__(self) -> Iterator[RunPiece]:
        seen: dict[str, None] = {}
        self.counts = Lines(self.source)
        self.last_tag = None
        delimiter = fast_delimiter(self.path)
        line = 1
        rows = 0
        for piece, table in parsed_pieces(self.path, RUN_FIELDS, RUN_TYPES, delimiter or " ", self.piece_bytes):
            if table is not None and delimiter is not None:
                n = table.num_rows
                for chunk in table.column("tag").chunks:
                    if len(chunk):
                        seen.update(dict.fromkeys(_distinct_values(chunk)))
                        self.last_tag = chunk[-1].as_py().decode("utf-8")
                score = np.concatenate([arrow.to_numpy(c) for c in table.column("score").chunks])
                out = RunPiece(table.column("query"), table.column("doc"), score,
                               np.arange(line, line + n, dtype=np.int64))
            else:
                data = bytes(piece.raw[piece.start: piece.end])
                lines, tags = parse_run_lines(data, self.source, line, require_data=False)
                self._count(lines)
                n = data.count(b"\n")
                if tags:
                    seen.update(dict.fromkeys(tags))
                    self.last_tag = tags[-1]
                out = RunPiece(arrow.strings(lines.queries), arrow.strings(lines.docs),
                               np.asarray(lines.values, dtype=np.float64), np.asarray(lines.numbers, dtype=np.int64))
            rows += len(out)
            line += n
            table = None
            yield out
        if rows == 0:
            raise InputError("the file holds no data lines", source=self.source)
        last = self.last_tag
        self.tags = [t for t in seen if t != last] + ([last] if last is not None else [])

    def _count(self, lines: Lines) -> None:
        """Add a piece's skipped lines to the file's counts (first line and example kept)."""
        assert self.counts is not None
        for what, count in lines.counts.items():
            if what not in self.counts.counts:
                self.counts.first_line[what] = lines.first_line[what]
                self.counts.examples[what] = lines.examples[what]
            self.counts.counts[what] = self.counts.counts.get(what, 0) + count

    @property
    def name(self) -> str:
        """The run's name: the one given, else the tag of the last line (as trec_eval)."""
        if self.given_name is not None:
            return self.given_name
        if self.last_tag is None:
            raise InputError("the run's name is its last line's tag: read the pieces first", source=self.source)
        return self.last_tag

    @property
    def notes(self) -> list[str]:
        """The reader's warnings, as the whole-file reader writes them."""
        counts = self.counts.notes(self.source, "score") if self.counts is not None else []
        return counts + tag_notes(self.tags, self.source)


def check_parquet_directory(path: str | os.PathLike[str]) -> None:
    """A directory is read as a Parquet dataset: it must hold ``.parquet`` files.

    >>> import tempfile
    >>> check_parquet_directory(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...: expected a file, got a directory with no .parquet file ...
    """
    if next(Path(path).rglob("*.parquet"), None) is None:
        raise InputError("expected a file, got a directory with no .parquet file (a directory is read as a "
                         "Parquet dataset)", source=str(path))


def parquet_row_counts(path: str | os.PathLike[str]) -> list[tuple[str, int]]:
    """Every Parquet file of a file or dataset directory with its row count, read from the
    footers only; a file that is not Parquet (or is cut short) is refused by name, before any
    engine starts reading.

    >>> import tempfile, pyarrow.parquet as pq
    >>> folder = tempfile.mkdtemp()
    >>> good = pa.table({"qid": ["q1"], "docno": ["a"], "score": [2.0]})
    >>> pq.write_table(good, os.path.join(folder, "part-0.parquet"))
    >>> _ = open(os.path.join(folder, "part-1.parquet"), "wb").write(b"PAR1 not parquet")
    >>> parquet_row_counts(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...part-1.parquet: cannot read it as Parquet (...)
    """
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if os.path.isdir(path):
        check_parquet_directory(path)
    try:
        files = ds.dataset(path, format="parquet").files
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"expected a Parquet file or a directory of Parquet files ({exc})", source=str(path)) \
            from None
    out = []
    for file in files:
        try:
            out.append((file, int(pq.read_metadata(file).num_rows)))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read it as Parquet ({exc})", source=file) from None
    return out


def parquet_location(files: list[tuple[str, int]], row: int) -> str:
    """The file and 1-based row of a 0-based row of the dataset the files make, in order.

    >>> parquet_location([("a.parquet", 3), ("b.parquet", 5)], 4)
    'b.parquet (row 2)'
    """
    for file, count in files:
        if row < count:
            return f"{file} (row {row + 1})"
        row -= count
    return f"{files[-1][0]} (row {row + 1})" if files else "?"


@dataclass
class ParquetRunPieces:
    """A Parquet file, or a directory of Parquet files read as one dataset (files in name
    order), ``batch_rows`` rows at a time; columns are found by name as for a DataFrame
    (``query_id``/``qid``/``q_id`` ..., ``doc_id``/``docno`` ..., ``score`` ...). The run is
    ``name``, else the first value of a tag column, else the file or directory name.

    >>> import tempfile, pyarrow.parquet as pq
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "a"],
    ...                          "score": [2.0, 1.0, 3.0]}), os.path.join(d, "part-0.parquet"))
    >>> pieces = ParquetRunPieces(d, batch_rows=2)
    >>> [p.lines.tolist() for p in pieces], pieces.name == os.path.basename(d)
    ([[1, 2], [3]], True)
    """

    path: str | os.PathLike[str]
    given_name: str | None = None
    batch_rows: int = PARQUET_BATCH_ROWS
    notes: list[str] = field(default_factory=list)
    first_tag: str | None = None

    def __post_init__(self) -> None:
        import pyarrow.dataset as ds

        self.source = str(self.path)
        if not os.path.exists(self.path):
            raise InputError("file not found", source=self.source)
        self.files = parquet_row_counts(self.path)   # every footer read: a corrupt file is named now
        self.dataset = ds.dataset(self.path, format="parquet")
        names = self.dataset.schema.names
        self.columns = [pick_column(names, QUERY_COLUMNS, "query id", self.source),
                        pick_column(names, DOC_COLUMNS, "document id", self.source),
                        pick_column(names, SCORE_COLUMNS, "score", self.source)]
        self.tag_column = pick_column(names, TAG_COLUMNS, "run tag", self.source, required=False)

    def count_rows(self) -> int:
        """Rows in all (from the files' metadata)."""
        return int(self.dataset.count_rows())

    def __iter__(self) -> Iterator[RunPiece]:
        columns = self.columns + ([self.tag_column] if self.tag_column and self.given_name is None else [])
        row = 1
        for batch in self._batches(columns):
            n = batch.num_rows
            if n == 0:
                continue
            lines = np.arange(row, row + n, dtype=np.int64)
            if self.first_tag is None and len(columns) == 4:
                self.first_tag = str(batch.column(3)[0].as_py())
            score = _scores(batch.column(2), self.source, lines, self.columns[2], self.files)
            yield RunPiece(batch.column(0), batch.column(1), score, lines)
            row += n
        if row == 1:
            raise InputError("no rows: the run is empty", source=self.source)

    def _batches(self, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """The dataset's record batches, file by file, read only when asked for. (The dataset
        scanner's own ``to_batches`` keeps decoding files on background threads while the
        caller works, about 1 GB ahead of it whatever its readahead options say.)"""
        import pyarrow.parquet as pq

        for path in self.dataset.files:
            try:
                with pq.ParquetFile(self.dataset.filesystem.open_input_file(path)) as parquet:
                    yield from parquet.iter_batches(batch_size=self.batch_rows, columns=columns, use_threads=True)
            except (OSError, ValueError) as exc:   # a page that does not decode
                raise InputError(f"cannot read it as Parquet ({exc})", source=path) from None

    def whole(self) -> Run:
        """The whole run as one Run (what ``load_run`` reads from Parquet).

        >>> import tempfile, pyarrow.parquet as pq
        >>> path = os.path.join(tempfile.mkdtemp(), "bm25.parquet")
        >>> pq.write_table(pa.table({"qid": ["q1"], "docno": ["a"], "score": [2]}), path)
        >>> run = ParquetRunPieces(path).whole(); run.name, run.score.tolist()
        ('bm25', [2.0])
        """
        columns = self.columns + ([self.tag_column] if self.tag_column and self.given_name is None else [])
        try:
            table = self.dataset.to_table(columns=columns)
        except (OSError, ValueError) as exc:   # a page that does not decode
            raise InputError(f"cannot read it as Parquet ({exc})", source=self.source) from None
        if table.num_rows == 0:
            raise InputError("no rows: the run is empty", source=self.source)
        if len(columns) == 4:
            self.first_tag = str(table.column(3)[0].as_py())
        score = _scores(table.column(2), self.source, None, self.columns[2], self.files)
        return Run(table.column(0), table.column(1), score, self.name, self.source)

    @property
    def name(self) -> str:
        if self.given_name is not None:
            return self.given_name
        if self.first_tag is not None:
            return self.first_tag
        return Path(self.source.rstrip("/\\")).name.split(".")[0]


def _scores(column: pa.Array | pa.ChunkedArray, source: str, lines: np.ndarray | None, name: str,
            files: list[tuple[str, int]] | None = None) -> np.ndarray:
    """A Parquet score column as float64; a null, NaN or non-numeric value names its file and
    row (``lines``: the dataset rows of the column, 1-based; None: the column is the dataset)."""
    if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
        raise InputError(f"expected a numeric column, got {column.type}", source=source, field=name)
    values = np.asarray(column.to_numpy(), dtype=np.float64) if not column.null_count else None
    bad = arrow.to_numpy(column.is_null()) if values is None else np.isnan(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        dataset_row = int(lines[row]) - 1 if lines is not None else row
        where = parquet_location(files, dataset_row) if files else f"{source} (row {dataset_row + 1})"
        raise InputError(f"expected a number, got {'null' if values is None else 'NaN'}", source=where, field=name)
    assert values is not None
    return values


def run_pieces(obj: Any, name: str | None = None) -> TrecRunPieces | ParquetRunPieces:
    """The pieces of a run given as a path: a Parquet file or dataset directory, else TREC
    text (optionally gzipped).

    >>> run_pieces("no-such-run.trec")
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: no-such-run.trec: file not found
    """
    if isinstance(obj, Run) or not isinstance(obj, (str, os.PathLike)):
        raise InputError(f"cannot read a {type(obj).__name__} piece by piece; expected the path of a TREC "
                         "file, a Parquet file or a directory of Parquet files")
    path = os.fspath(obj)
    if os.path.isdir(path) or path.endswith(".parquet"):
        return ParquetRunPieces(path, name)
    return TrecRunPieces(path, name)
