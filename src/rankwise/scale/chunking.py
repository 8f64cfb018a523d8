"""Query-complete chunks of a run read piece by piece: every query's rows in one chunk.

A chunk is cut at the last query boundary once it holds ``chunk_rows`` rows; the rows of the
query that may continue are carried into the next chunk. A query longer than ``chunk_rows``
makes its chunk longer (a query is never split). A finished query that shows up again means
the input is not grouped by query: :class:`NotGrouped` is raised, and the caller partitions
the run by query hash instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankwise.data.containers import Run, as_string_array
from rankwise.data.distinct import distinct, member, union
from rankwise.data.pieces import RunPiece
from rankwise.errors import RankwiseError
from rankwise.scale.hashing import query_hashes

DEFAULT_CHUNK_ROWS = 4_000_000
"""Rows per chunk unless told: about 250 MB of peak memory while a chunk is scored."""


class NotGrouped(RankwiseError):
    """A query's rows are not contiguous in the input (a finished query showed up again)."""


@dataclass
class Rows:
    """Rows of a run with their query hashes, ready to be cut and joined."""

    query: pa.Array
    doc: pa.Array
    score: np.ndarray
    lines: np.ndarray
    hashes: np.ndarray

    @classmethod
    def of(cls, piece: RunPiece, source: str) -> Rows:
        query = _plain(as_string_array(piece.query, keep_dictionary=True, source=source, field="query",
                                       lines=piece.lines))
        doc = _plain(as_string_array(piece.doc, source=source, field="doc", lines=piece.lines))
        return cls(query, doc, piece.score, piece.lines, query_hashes(query))

    def __len__(self) -> int:
        return len(self.score)

    def slice(self, start: int, stop: int) -> Rows:
        return Rows(self.query.slice(start, stop - start), self.doc.slice(start, stop - start),
                    self.score[start:stop], self.lines[start:stop], self.hashes[start:stop])

    def last_query_start(self) -> int:
        """Row where the rows of the last query begin (0 if every row is of that query)."""
        other = np.flatnonzero(self.hashes != self.hashes[-1])
        return int(other[-1]) + 1 if len(other) else 0


def _plain(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array of ``string`` or dictionary-of-``string`` type (a piece is small: combining
    its chunks is cheap)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    return values


def chunk_run(rows: list[Rows], name: str, source: str) -> Run:
    """One Run of the rows of a chunk (ids of mixed encodings are all decoded to strings)."""
    queries = [r.query for r in rows if len(r)]
    if len({q.type for q in queries}) > 1:
        queries = [q.dictionary_decode() if pa.types.is_dictionary(q.type) else q for q in queries]
    return Run(pa.chunked_array(queries), pa.chunked_array([r.doc for r in rows if len(r)], type=pa.string()),
               np.concatenate([r.score for r in rows]), name, source, np.concatenate([r.lines for r in rows]))


class QueryChunks:
    """Split pieces into query-complete lists of rows of about ``chunk_rows`` rows.

    >>> piece = RunPiece(pa.array(["a", "a", "b", "b", "c"]), pa.array(list("vwxyz")),
    ...                  np.arange(5.0), np.arange(1, 6))
    >>> [[r.query.to_pylist() for r in chunk] for chunk in QueryChunks([piece], 3, "<run>")]
    [[['a', 'a', 'b', 'b']], [['c']]]
    >>> again = RunPiece(pa.array(["a", "b", "a"]), pa.array(list("xyz")), np.arange(3.0), np.arange(1, 4))
    >>> list(QueryChunks([again], 1, "<run>"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.scale.chunking.NotGrouped: <run>: the rows of a query are not contiguous (a query seen ... at line 3)
    """

    def __init__(self, pieces: Iterable[RunPiece], chunk_rows: int, source: str) -> None:
        if chunk_rows < 1:
            raise RankwiseError(f"chunk_rows must be at least 1, got {chunk_rows}")
        self.pieces, self.chunk_rows, self.source = pieces, chunk_rows, source
        self.finished = np.empty(0, dtype=np.uint64)

    def __iter__(self) -> Iterator[list[Rows]]:
        held: list[Rows] = []
        count = 0
        for piece in self.pieces:
            if len(piece) == 0:
                continue
            held.append(Rows.of(piece, self.source))
            count += len(piece)
            while count >= self.chunk_rows:
                chunk, held = self._cut(held)
                if not chunk:
                    break  # one query holds every row so far: wait for its end
                count -= sum(len(r) for r in chunk)
                yield self._checked(chunk)
        if held:
            yield self._checked(held)

    def _cut(self, held: list[Rows]) -> tuple[list[Rows], list[Rows]]:
        """Rows before the last query's first row, and the rows from there on."""
        last = held[-1].hashes[-1]
        for i in range(len(held) - 1, -1, -1):
            rows = held[i]
            start = rows.last_query_start() if rows.hashes[-1] == last else len(rows)
            if start > 0:
                chunk, carry = held[:i] + [rows.slice(0, start)], [rows.slice(start, len(rows))] + held[i + 1:]
                return [r for r in chunk if len(r)], [r for r in carry if len(r)]
        return [], held

    def _checked(self, chunk: list[Rows]) -> list[Rows]:
        """The chunk, once none of its queries was finished in an earlier chunk."""
        hashes = distinct(np.concatenate([r.hashes for r in chunk]))
        seen = member(hashes, self.finished, known_sorted=True)   # finished: sorted, distinct
        if seen.any():
            again = hashes[seen][0]
            line = next(int(r.lines[np.flatnonzero(r.hashes == again)[0]]) for r in chunk if (r.hashes == again).any())
            raise NotGrouped(f"{self.source}: the rows of a query are not contiguous (a query seen in an earlier "
                             f"chunk shows up again at line {line})")
        self.finished = union(self.finished, hashes)
        return chunk
