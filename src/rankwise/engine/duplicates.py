"""One pass over a run's document ids: repeated (query, document) pairs and judged candidates.

Each document id is hashed once (:func:`rankwise.engine.strings.string_hashes`), a slice of
rows at a time that never splits a query. From the same hashes come two answers:

- the row ranges where a (query, document) pair may repeat (two rows of a query share a hash):
  that query's rows when each query's rows are contiguous, else the slice; the documents' bytes
  then decide (:func:`resolve_duplicates`);
- the rows whose (query, document) pair may be judged (its hash passes :class:`JudgedFilter`);
  only those are looked up in the qrels, so the exact lookup never hashes every row again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankwise.data import arrow, kernels
from rankwise.data.arrow import to_numpy
from rankwise.data.containers import Run, line_of
from rankwise.data.distinct import distinct
from rankwise.engine.ranked import NONPOOL
from rankwise.engine.strings import string_hashes
from rankwise.errors import InputError


def high_half(words: np.ndarray) -> np.ndarray:
    """A uint32 view of the high halves of a uint64 array.

    >>> w = np.array([(7 << 32) | 5], dtype=np.uint64); int(high_half(w)[0]), int(low_half(w)[0])
    (7, 5)
    """
    return words.view(np.uint32)[1::2] if np.little_endian else words.view(np.uint32)[0::2]


def low_half(words: np.ndarray) -> np.ndarray:
    """A uint32 view of the low halves of a uint64 array (see :func:`high_half`)."""
    return words.view(np.uint32)[0::2] if np.little_endian else words.view(np.uint32)[1::2]


_QUERY_MIX = np.uint64(0x9E3779B97F4A7C15)
_PAIR_MIX = np.uint64(0xBF58476D1CE4E5B9)


def pair_hashes(doc_hashes: np.ndarray, qcode: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each (query code, document hash) pair; its high bits mix both.

    >>> h = np.array([5, 5, 6], dtype=np.uint64)
    >>> p = pair_hashes(h, np.array([0, 1, 0])); bool(p[0] != p[1]), bool(p[0] != p[2])
    (True, True)
    """
    mixed = qcode.astype(np.uint64)
    with np.errstate(over="ignore"):   # in place: no temporary per step
        np.multiply(mixed, _QUERY_MIX, out=mixed)
        mixed ^= doc_hashes
        np.multiply(mixed, _PAIR_MIX, out=mixed)
    return mixed


@dataclass(frozen=True)
class JudgedFilter:
    """Which (query, document) pairs may be judged, and which judged pair a row is.

    The filter: one flag per value of the top ``bits`` bits of a pair's hash
    (:func:`pair_hashes`), set for every judged pair. A judged pair always passes; another
    passes with probability (judged pairs) / 2**bits, about 1/64 up to a quarter of a million
    judgments (16 MB of flags at most).

    The table: one key per judged pair, its query code in the high 32 bits and the high 32 bits
    of its document hash in the low ones, in ascending order (``keys``), so that :meth:`find`
    names the judged pair of a row by binary search (the rows of one query search one small
    stretch of the table, which stays in the processor's cache), its whole document hash
    confirmed. ``exact`` is False when two judged pairs share a key (then a key names no single
    pair, and callers look rows up by their document ids).

    >>> docs = string_hashes(pa.array(["d1", "d7", "x"]))
    >>> f = JudgedFilter.of(docs[:2], np.array([0, 3]))      # d1 judged for query 0, d7 for 3
    >>> f.may_be_judged(docs, np.array([0, 3, 0])).tolist()
    [True, True, False]
    >>> f.find(docs, np.array([0, 3, 3])).tolist()            # judged pair 0, pair 1, none
    [0, 1, -1]
    """

    bits: int
    flags: np.ndarray
    keys: np.ndarray
    """The judged pairs' keys (:func:`table_keys`), ascending."""
    order: np.ndarray
    """For each of ``keys``, its position among the judged pairs as given to :meth:`of`."""
    doc_hashes: np.ndarray
    """The judged pairs' document hashes, as given to :meth:`of`."""
    exact: bool

    @classmethod
    def of(cls, doc_hashes: np.ndarray, qcode: np.ndarray) -> JudgedFilter:
        """The filter and table of the judged pairs (query code, hash of the document)."""
        bits = int(np.clip(int(len(doc_hashes)).bit_length() + 6, 16, 24))
        flags = np.zeros(1 << bits, dtype=bool)
        if len(doc_hashes):
            flags[pair_hashes(doc_hashes, qcode) >> np.uint64(64 - bits)] = True
        keys = table_keys(doc_hashes, qcode)
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        exact = not bool((keys[1:] == keys[:-1]).any())
        return cls(bits, flags, keys, order, doc_hashes, exact)

    def may_be_judged(self, doc_hashes: np.ndarray, qcode: np.ndarray) -> np.ndarray:
        """True for each (document hash, query code) pair that may be judged."""
        top = pair_hashes(doc_hashes, qcode)
        top >>= np.uint64(64 - self.bits)
        return np.take(self.flags, top.view(np.int64))   # below 2**24: the same as int64, no conversion

    def find(self, doc_hashes: np.ndarray, qcode: np.ndarray) -> np.ndarray:
        """The position (as given to :meth:`of`) of the judged pair with each row's query code
        (at least 0) and document hash, -1 where there is none (int64). Equal hashes are not yet equal
        documents: the caller compares what the hash cannot tell (:meth:`QrelsIndex.hashed_labels
        <rankwise.engine.align.QrelsIndex.hashed_labels>`). Only for an ``exact`` table."""
        if not self.exact:
            raise ValueError("two judged pairs share a key: look the rows up by their documents")
        found = np.full(len(doc_hashes), -1, dtype=np.int64)
        if len(self.keys) == 0 or len(doc_hashes) == 0:
            return found
        key = table_keys(doc_hashes, qcode)
        at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        where = self.order[at]
        hit = (self.keys[at] == key) & (self.doc_hashes[where] == doc_hashes)
        found[hit] = where[hit]
        return found


def table_keys(doc_hashes: np.ndarray, qcode: np.ndarray) -> np.ndarray:
    """One uint64 per (query code, document hash): the code (at least 0) in the high 32 bits,
    the high 32 bits of the hash in the low ones; equal keys are the same query.

    >>> [hex(int(k)) for k in table_keys(np.array([0xABCD << 32], dtype=np.uint64), np.array([3]))]
    ['0x30000abcd']
    """
    return _pack(qcode, doc_hashes.copy())


@dataclass
class DocumentScan:
    """What one pass over the document ids found: the row ranges where a (query, document)
    pair may repeat, and the rows (ascending) whose pair may be judged."""

    suspects: list[tuple[int, int]]
    candidates: np.ndarray
    labels: np.ndarray | None = None
    """With a lookup: the label of every row (the candidates' looked up while their slice was
    scanned, by the scanning threads, with their documents in the processor's cache; every
    other row ``NONPOOL``)."""


LabelLookup = Callable[[np.ndarray, np.ndarray, pa.Array | pa.ChunkedArray, np.ndarray], np.ndarray]
"""The labels of rows ``rows`` of a slice of documents, given their query codes and document
hashes: ``lookup(qcode, doc_hashes, docs, rows)`` (``QrelsIndex.hashed_labels``, or
``QrelsIndex.document_labels`` without a judged filter)."""


class DocumentScanner:
    """One pass over the documents of the ``known`` rows, ``slice_rows`` rows at a time
    (never splitting a query when each query's rows are contiguous, the usual run file); with
    no ``judged`` filter every known row is a candidate. With a ``lookup`` and a ``labels``
    array (one entry per row), the candidates' labels are looked up slice by slice and every
    other row's entry is ``NONPOOL``. Any number of threads may call :meth:`work` at once: each
    takes the next slice not yet taken, so a thread that finished its own task helps finish
    the scan; :meth:`result` gathers it.

    >>> qcode = np.array([0, 0, 0, 1, 1]); known = np.ones(5, dtype=bool)
    >>> doc = pa.array(["a", "b", "a", "a", "c"])
    >>> judged = JudgedFilter.of(string_hashes(pa.array(["c", "a"])), np.array([1, 1]))
    >>> scanner = DocumentScanner(doc, qcode, known, judged, 3)
    >>> scanner.work(); scan = scanner.result()
    >>> scan.suspects, scan.candidates.tolist()   # query 0 repeats 'a'; query 1 judges 'a', 'c'
    ([(0, 3)], [3, 4])
    """

    def __init__(self, doc: pa.Array | pa.ChunkedArray, qcode: np.ndarray, known: np.ndarray,
                 judged: JudgedFilter | None, slice_rows: int, starts: np.ndarray | None = None,
                 lookup: LabelLookup | None = None, labels: np.ndarray | None = None) -> None:
        import threading

        self.doc, self.qcode, self.known, self.judged = doc, qcode, known, judged
        if (lookup is None) != (labels is None):
            raise ValueError("a lookup and a labels array go together")
        self.lookup, self.labels = lookup, labels
        self.starts = block_starts(qcode) if starts is None else starts
        self.slices = query_slices(qcode, slice_rows, self.starts) or [(0, len(qcode))]
        self.suspect: list[list[tuple[int, int]]] = [[] for _ in self.slices]
        self.candidates: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(self.slices)
        self._next = 0
        self._lock = threading.Lock()

    def work(self) -> None:
        """Scan slices until none is left."""
        while True:
            with self._lock:
                i = self._next
                self._next += 1
            if i >= len(self.slices):
                return
            self._scan(i)

    def _scan(self, i: int) -> None:
        start, stop = self.slices[i]
        docs = self.doc.slice(start, stop - start)
        hashes = string_hashes(docs)
        keep = self.known[start:stop]
        q = self.qcode[start:stop]
        may = keep.copy() if self.judged is None else self.judged.may_be_judged(hashes, q)
        may &= keep
        local = np.flatnonzero(may).astype(np.int64)
        del may
        self.candidates[i] = local + start
        if self.lookup is not None and self.labels is not None:
            part = self.labels[start:stop]
            part.fill(NONPOOL)
            if len(local):
                part[local] = self.lookup(q[local], hashes[local], docs, local)
        if keep.all():   # the slice's blocks, as found for the whole run
            found = self.starts[np.searchsorted(self.starts, start): np.searchsorted(self.starts, stop)] - start
            self.suspect[i] = [(start + a, start + b) for a, b in _repeated_blocks(hashes, q, found)]
        elif _repeated_blocks(hashes[keep], q[keep]):   # ranges of the known rows alone: the slice
            self.suspect[i] = [(start, stop)]

    def result(self) -> DocumentScan:
        """The suspect row ranges and candidate rows, once every slice is scanned."""
        suspects = [block for found in self.suspect for block in found]
        return DocumentScan(suspects, np.concatenate(self.candidates), self.labels)


def block_starts(qcode: np.ndarray) -> np.ndarray:
    """The rows where a block of rows of one query code begins (int64; none for no rows). Found
    once per alignment and handed to each step that needs them.

    >>> block_starts(np.array([4, 4, 2, 4])).tolist(), block_starts(np.array([], dtype=np.int32)).tolist()
    ([0, 2, 3], [])
    """
    if len(qcode) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate(([0], np.flatnonzero(qcode[1:] != qcode[:-1]) + 1)).astype(np.int64)


def query_slices(qcode: np.ndarray, size: int, starts: np.ndarray | None = None) -> list[tuple[int, int]] | None:
    """Row ranges of about ``size`` rows that never split a query, when each query's rows are
    contiguous (the usual run file); None otherwise. ``starts``: :func:`block_starts`, if found.

    >>> query_slices(np.array([0, 0, 1, 1, 1, 2]), 3)
    [(0, 5), (5, 6)]
    >>> query_slices(np.array([0, 1, 0]), 3) is None
    True
    """
    n = len(qcode)
    if n == 0:
        return None
    starts = block_starts(qcode) if starts is None else starts
    if len(distinct(qcode[starts])) != len(starts):
        return None
    cuts = distinct(starts[np.minimum(np.searchsorted(starts, np.arange(size, n, size)), len(starts) - 1)])
    edges = [0] + [int(c) for c in cuts if 0 < c < n] + [n]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


def _pack(qcode: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """(query, high 32 bits of the document hash) packed into one uint64 per row (``hashes``
    becomes the result: no temporary)."""
    hashes >>= np.uint64(32)
    high_half(hashes)[:] = qcode
    return hashes


def _repeated_blocks(hashes: np.ndarray, qcode: np.ndarray, starts: np.ndarray | None = None
                     ) -> list[tuple[int, int]]:
    """The row ranges where two rows of one query share the high 32 bits of their document
    hash (``hashes`` is consumed; ``starts``: :func:`block_starts`, if found). When each query's
    rows are contiguous (the usual run file) the query's block becomes a row of a matrix of
    32-bit keys, sorted row by row, and each block with a shared key is a range (a false alarm,
    one query in about 8,600 of 1,000 rows, costs the check of that query's rows alone);
    otherwise rows are sorted by (query, key) packed in 64 bits and the range is every row.

    >>> h = np.array([1 << 32, 2 << 32, 1 << 32, 1 << 32, 3 << 32], dtype=np.uint64)
    >>> _repeated_blocks(h.copy(), np.array([0, 0, 0, 1, 1])), _repeated_blocks(h.copy(), np.array([0, 1, 0, 1, 1]))
    ([(0, 3)], [(0, 5)])
    """
    n = len(hashes)
    if n < 2:
        return []
    starts = block_starts(qcode) if starts is None else starts
    lengths = np.diff(np.concatenate((starts, [n])))
    width = int(lengths.max())
    contiguous = len(distinct(qcode[starts])) == len(starts)
    if not (contiguous and width * len(starts) <= 2 * n):
        packed = _pack(qcode, hashes)
        packed.sort(kind="stable")
        return [(0, n)] if bool((packed[1:] == packed[:-1]).any()) else []
    keys = high_half(hashes)
    if width * len(starts) == n:  # every query has the same depth: a free reshape
        matrix = keys.copy().reshape(len(starts), width)
    else:  # short queries are padded with the largest key, which no hash is given
        empty = np.iinfo(np.uint32).max
        np.minimum(keys, np.uint32(empty - 1), out=keys)
        matrix = np.full((len(starts), width), empty, dtype=np.uint32)
        dest = np.arange(n, dtype=np.int64)
        dest += np.repeat(np.arange(len(starts), dtype=np.int64) * width - starts, lengths)
        matrix.ravel()[dest] = keys
        del dest
    del hashes, keys
    matrix.sort(axis=1)
    equal = matrix[:, 1:] == matrix[:, :-1]
    if width * len(starts) != n:
        equal &= matrix[:, 1:] != np.iinfo(np.uint32).max
    ends = np.append(starts[1:], n)
    return [(int(starts[r]), int(ends[r])) for r in np.flatnonzero(equal.any(axis=1))]


def _repeated_rows(run: Run, qcode: np.ndarray, known: np.ndarray, start: int, stop: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``start:stop`` of known queries whose (query, document) pair repeats, sorted by
    query, document (byte order), then row; and which of them repeat the pair of the row before.
    Rows are first narrowed down by a 32-bit hash of the document; the documents' bytes decide."""
    if known[start:stop].all():
        rows = np.arange(start, stop, dtype=np.int64)
        packed = _pack(qcode[start:stop], string_hashes(run.doc.slice(start, stop - start)))
    else:
        rows = np.flatnonzero(known[start:stop]).astype(np.int64) + start
        packed = _pack(qcode[rows], string_hashes(arrow.take_rows(run.doc, rows)))
    local = np.argsort(packed, kind="stable")
    hs = packed[local]
    del packed
    same_key = hs[1:] == hs[:-1]
    involved = np.zeros(len(hs), dtype=bool)
    involved[1:] |= same_key
    involved[:-1] |= same_key
    cand = rows[local[involved]]
    table = pa.Table.from_arrays([arrow.indices(qcode[cand]), arrow.take_rows(run.doc, cand), arrow.indices(cand)],
                                 names=["query", "doc", "row"])
    perm = to_numpy(kernels.sort_indices(table, [("query", "ascending"), ("doc", "ascending"),
                                                 ("row", "ascending")]), np.int64)
    ordered = cand[perm]
    docs = arrow.take_rows(run.doc, ordered)
    repeats = np.zeros(len(ordered), dtype=bool)
    if len(ordered) > 1:
        repeats[1:] = (qcode[ordered[1:]] == qcode[ordered[:-1]]) & to_numpy(
            kernels.equal(docs.slice(1), docs.slice(0, len(ordered) - 1)))
    return ordered, repeats


def earliest_repeat(ordered: np.ndarray, repeats: np.ndarray) -> tuple[int, int]:
    """The earliest row that repeats a pair, and the first row of that pair.

    >>> earliest_repeat(np.array([2, 9, 4, 5]), np.array([False, True, False, True]))
    (5, 4)
    """
    group_start = np.maximum.accumulate(np.where(repeats, 0, np.arange(len(repeats))))
    at = np.flatnonzero(repeats)
    i = int(at[np.argmin(ordered[at])])
    return int(ordered[i]), int(ordered[group_start[i]])


def resolve_duplicates(run: Run, qcode: np.ndarray, policy: str, known: np.ndarray,
                       suspects: list[tuple[int, int]]) -> tuple[np.ndarray | None, int]:
    """A keep-mask (None if no (query, document) pair repeats) and the number of rows dropped,
    under ``policy`` (``error``, ``first`` or ``best``).

    Only rows of ``known`` queries are checked, and only in the ``suspects`` row ranges (from
    :class:`DocumentScanner`). Under ``policy='error'`` the first repeated row of the file is named.

    >>> run = Run(["q", "q", "q"], ["a", "b", "a"], [3.0, 2.0, 5.0])
    >>> known = np.ones(3, dtype=bool); qcode = np.zeros(3, dtype=np.int32)
    >>> keep, dropped = resolve_duplicates(run, qcode, "best", known, [(0, 3)])
    >>> keep.tolist(), dropped   # 'a' keeps its best score (row 2)
    ([False, True, True], 1)
    """
    found = [_repeated_rows(run, qcode, known, a, b) for a, b in suspects]
    found = [(ordered, repeats) for ordered, repeats in found if repeats.any()]
    if not found:
        return None, 0
    if policy == "error":
        total = sum(int(repeats.sum()) for _, repeats in found)
        row, first = min(earliest_repeat(ordered, repeats) for ordered, repeats in found)
        raise InputError(
            f"document {run.doc[row].as_py()!r} is listed twice for query {run.query[row].as_py()!r} "
            f"(first at line {line_of(run.lines, first)}; {total} duplicate row(s) in all); "
            "trec_eval refuses this. Pass duplicates='first' or 'best' to keep one occurrence",
            source=run.source, line=line_of(run.lines, row), field="doc",
        )
    keep = np.ones(len(qcode), dtype=bool)
    for ordered, repeats in found:
        if policy == "first":  # rows are in row order within a pair's group: later ones go
            keep[ordered[repeats]] = False
        else:  # best: highest score, then the earliest row
            group = np.cumsum(~repeats)
            best = np.lexsort((ordered, -run.score[ordered], group))
            first_of = np.ones(len(best), dtype=bool)
            first_of[1:] = group[best][1:] != group[best][:-1]
            keep[ordered[best[~first_of]]] = False
    return keep, int((~keep).sum())
