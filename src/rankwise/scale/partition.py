"""One pass over a run that is not grouped by query: rows go to temporary Parquet files by the
hash of their query, so that each file holds every row of its queries (in file order) and can
be scored on its own."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankwise.data.containers import Run
from rankwise.data.pieces import RunPiece
from rankwise.scale.chunking import Rows

BYTES_PER_ROW = 32
"""A TREC run line's usual size, to guess a file's rows from its size (x4 when gzipped)."""


def partition_count(rows: int, chunk_rows: int) -> int:
    """Partitions for about ``chunk_rows / 2`` rows each (hashing spreads queries unevenly).

    >>> partition_count(10_000_000, 4_000_000), partition_count(10, 4_000_000)
    (5, 1)
    """
    return max(1, -(-2 * rows // chunk_rows))


def estimated_rows(path: str | os.PathLike[str]) -> int:
    """Rows of a run file, guessed from its size (a Parquet input knows its rows)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return size * (4 if gzipped else 1) // BYTES_PER_ROW


def partition_by_query(pieces: Iterable[RunPiece], source: str, parts: int, directory: str | os.PathLike[str]
                       ) -> list[Path]:
    """Write the rows of ``pieces`` into ``parts`` Parquet files in ``directory`` by query hash;
    returns the files that received rows. Columns: query, doc, score, line.

    >>> import tempfile
    >>> piece = RunPiece(pa.array(["a", "b", "a"]), pa.array(["x", "y", "z"]), np.arange(3.0), np.arange(1, 4))
    >>> files = partition_by_query([piece], "<run>", 2, tempfile.mkdtemp())
    >>> sorted(pa.parquet.read_table(f).column("line").to_pylist() for f in files)
    [[1, 3], [2]]
    """
    import pyarrow.parquet as pq

    schema = pa.schema([("query", pa.string()), ("doc", pa.string()), ("score", pa.float64()),
                        ("line", pa.int64())])
    directory = Path(directory)
    writers: dict[int, pq.ParquetWriter] = {}
    try:
        for piece in pieces:
            if len(piece) == 0:
                continue
            rows = Rows.of(piece, source)
            bucket = (rows.hashes % np.uint64(parts)).astype(np.int64)
            order = np.argsort(bucket, kind="stable")  # file order kept inside each partition
            query = rows.query.dictionary_decode() if pa.types.is_dictionary(rows.query.type) else rows.query
            table = pa.table([query, rows.doc, pa.array(rows.score), pa.array(rows.lines)], schema=schema)
            table = table.take(pa.array(order))
            bounds = np.searchsorted(bucket[order], np.arange(parts + 1))
            for part in np.flatnonzero(np.diff(bounds)).tolist():
                if part not in writers:
                    writers[part] = pq.ParquetWriter(directory / f"part-{part:05d}.parquet", schema,
                                                     compression="none")
                writers[part].write_table(table.slice(bounds[part], bounds[part + 1] - bounds[part]))
            del table
    finally:
        for writer in writers.values():
            writer.close()
    return [directory / f"part-{part:05d}.parquet" for part in sorted(writers)]


def partition_runs(files: list[Path], name: str, source: str) -> Iterator[Run]:
    """The Run of each partition file (its rows in file order, with their lines)."""
    import pyarrow.parquet as pq

    for path in files:
        table = pq.read_table(path)
        yield Run(table.column("query"), table.column("doc"), table.column("score").to_numpy(), name, source,
                  table.column("line").to_numpy())
        del table
