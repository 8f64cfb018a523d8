"""Alignment of a run with qrels into RankedLists: encode ids, join labels, sort under a tie rule.

Query ids are encoded once per qrels (shared by every run evaluated against them). A run's
rows are joined to their labels with one integer key per (query, document), then sorted by one
``argsort`` of a packed (query, score) key; only rows whose score ties a neighbour are ordered
again by document id, as the tie rule asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow, kernels
from rankwise.data.arrow import to_numpy
from rankwise.data.containers import Qrels, Run, line_of
from rankwise.data.distinct import distinct
from rankwise.engine.conventions import Conventions
from rankwise.engine.duplicates import (
    DocumentScanner,
    JudgedFilter,
    LabelLookup,
    block_starts,
    high_half,
    low_half,
    resolve_duplicates,
    table_keys,
)
from rankwise.engine.ranked import NONPOOL, UNJUDGED, RankedLists
from rankwise.engine.strings import string_hashes
from rankwise.errors import InputError, Notice


def join_keys(qcode: np.ndarray, dcode: np.ndarray, n_docs: int) -> np.ndarray:
    """One int64 key per (query code, document code): ``qcode * n_docs + dcode``.

    Computed in int64 whatever the codes' dtype (an int32 product wraps past 2^31: 50,000
    queries x 50,000 documents already do), and refused if even int64 could not hold it.

    >>> join_keys(np.array([50_000], dtype=np.int32), np.array([7], dtype=np.int32), 50_000).tolist()
    [2500000007]
    """
    n_docs = max(int(n_docs), 1)
    n_queries = int(qcode.max()) + 1 if len(qcode) else 0
    if n_queries * n_docs >= 2**63:
        raise InputError(f"{n_queries} queries x {n_docs} documents cannot be indexed with 64-bit keys")
    return qcode.astype(np.int64) * np.int64(n_docs) + dcode.astype(np.int64)


def _narrow_labels(labels: np.ndarray) -> np.ndarray:
    """Labels as int32 when they fit (half the memory per ranked row); wider ones stay int64."""
    if len(labels) and labels.min() >= np.iinfo(np.int32).min and labels.max() <= np.iinfo(np.int32).max:
        return labels.astype(np.int32)
    return labels


BACKGROUND_JUDGMENTS = 50_000
"""Qrels with at least this many judgments build their judged filter on a second thread while
the index is built (a pass over their documents; the thread has the processor the run's read
leaves)."""


class JudgedRows:
    """The judgments in one order (the qrels' own): documents, their byte lengths, query codes
    and labels, and the judged filter over them (:class:`~rankwise.engine.duplicates.JudgedFilter`),
    built on a second thread for ``BACKGROUND_JUDGMENTS`` or more, else when first asked for.

    >>> docs = pa.array(["d1", "a-long-document"])
    >>> rows = JudgedRows.of(docs, np.array([0, 1]), np.array([2, 0]), string_hashes(docs))
    >>> rows.lengths.tolist(), rows.filter().exact
    ([2, 15], True)
    """

    def __init__(self, docs: pa.Array, qcode: np.ndarray, labels: np.ndarray, doc_hashes: np.ndarray) -> None:
        self.docs, self.qcode, self.labels, self.doc_hashes = docs, qcode, labels, doc_hashes
        bounds = arrow.offsets(docs)
        self.lengths = (bounds[1:] - bounds[:-1]).astype(np.int64)
        self._built: JudgedFilter | None = None
        self._pending: Any = None

    @classmethod
    def of(cls, docs: pa.Array, qcode: np.ndarray, labels: np.ndarray, doc_hashes: np.ndarray) -> JudgedRows:
        """The judgments (``doc_hashes``: the documents' :func:`string_hashes`)."""
        rows = cls(docs, qcode, labels, doc_hashes)
        if len(docs) >= BACKGROUND_JUDGMENTS:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankwise-judged")
            rows._pending = pool.submit(rows._build)
            pool.shutdown(wait=False)   # the thread ends with its one task
        return rows

    def _build(self) -> JudgedFilter:
        return JudgedFilter.of(self.doc_hashes, self.qcode)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (an index cached on a Qrels object travels with it to other processes) with
        its filter built: the second thread's pending result does not pickle."""
        self.filter()
        return {**self.__dict__, "_pending": None}

    def filter(self) -> JudgedFilter:
        """The judged filter (waits for the second thread if it is still building it)."""
        if self._built is None:
            self._built = self._pending.result() if self._pending is not None else self._build()
            self._pending = None
        return self._built


def _document_codes(doc: pa.Array, doc_hashes: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """A code per document (int64) and the vocabulary it indexes (each distinct document once,
    in the order of their hashes): documents grouped by their 64-bit hash with one sort, each
    document of a group of several compared byte for byte with the group's first. Should a
    group hold two different documents (a hash collision; "a" and "a\\x00" share one), Arrow's
    dictionary encoding gives the codes instead. (With the hashes at hand, as the index has
    them: 110 ms for 400,000 distinct 27- and 33-byte ids, against 136 ms for Arrow's.)

    >>> codes, vocab = _document_codes(pa.array(["b", "a", "b"]), string_hashes(pa.array(["b", "a", "b"])))
    >>> [vocab[int(c)].as_py() for c in codes]
    ['b', 'a', 'b']
    >>> codes, vocab = _document_codes(pa.array(["a", "a\\x00"]), string_hashes(pa.array(["a", "a\\x00"])))
    >>> codes.tolist(), vocab.to_pylist()      # one hash: the dictionary tells them apart
    ([0, 1], ['a', 'a\\x00'])
    """
    _, first, inverse, counts = np.unique(doc_hashes, return_index=True, return_inverse=True, return_counts=True)
    codes = inverse.astype(np.int64).reshape(-1)
    shared = np.flatnonzero(counts[codes] > 1)
    shared = shared[first[codes[shared]] != shared]   # every row of a group of several but its first
    if len(shared):
        same = kernels.equal(arrow.take_rows(doc, shared), arrow.take_rows(doc, first[codes[shared]]))
        if not bool(to_numpy(same).all()):
            encoded = kernels.dictionary_encode(doc)
            return to_numpy(encoded.indices, np.int64), encoded.dictionary
    return codes, arrow.take_rows(doc, first)


def _refuse_repeated_judgment(qrels: Qrels, keys: np.ndarray, sort: np.ndarray) -> None:
    """Raise for a (query, document) judged twice: of several, the repeat on the earliest line,
    with the line before it of its pair. ``keys``: the sorted join keys; ``sort``: their rows."""
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if len(dup) == 0:
        return
    at = dup[np.argmin(sort[dup + 1])]
    first, second = sort[at], sort[at + 1]
    raise InputError(
        f"document {qrels.doc[int(second)].as_py()!r} is judged twice for query "
        f"{qrels.query[int(second)].as_py()!r} (first at line {line_of(qrels.lines, int(first))}); "
        "expected one judgment per (query, document)",
        source=qrels.source, line=line_of(qrels.lines, int(second)), field="doc",
    )


@dataclass
class QrelsIndex:
    """Qrels encoded for fast joins: sorted query ids, the judgments with their judged filter,
    and, when a lookup by document id needs them, a document vocabulary and sorted join keys."""

    query_ids: np.ndarray
    query_array: pa.Array
    judged: JudgedRows
    """The judgments in the qrels' own order, for the judged filter and :meth:`hashed_labels`."""
    level_values: np.ndarray
    level_counts: np.ndarray
    source: str = "<qrels>"
    notes: list[str] = field(default_factory=list)
    level_gains: dict[int, float] | None = None
    """Continuous relevance: the value of each level code (``Qrels.level_gains``)."""

    @classmethod
    def build(cls, qrels: Qrels) -> QrelsIndex:
        """Encode ``qrels``; a document judged twice for one query is an error (as in trec_eval).
        With many judgments, the judged filter is built on a second thread meanwhile. Whether a
        judgment repeats is asked of the sorted (query, high 32 bits of the document hash) keys
        first; only when two are equal do the join keys, which compare documents exactly, decide."""
        query = qrels.query.combine_chunks() if isinstance(qrels.query, pa.ChunkedArray) else qrels.query
        doc = qrels.doc.combine_chunks() if isinstance(qrels.doc, pa.ChunkedArray) else qrels.doc
        qdict = kernels.dictionary_encode(query)
        uniq_q = np.asarray(qdict.dictionary.to_pylist(), dtype=object)
        order = np.argsort(uniq_q.astype(str), kind="stable")
        query_ids = uniq_q[order]
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = np.arange(len(order))
        qcode = rank_of[to_numpy(qdict.indices)]
        doc_hashes = string_hashes(doc)
        labels = _narrow_labels(qrels.label)
        judged_rows = JudgedRows.of(doc, qcode, labels, doc_hashes)
        judged = labels >= 0
        level_values = distinct(labels[judged])
        level_counts = np.zeros((len(query_ids), len(level_values)), dtype=np.int64)
        if len(level_values):
            lvl = np.searchsorted(level_values, labels[judged])
            np.add.at(level_counts, (qcode[judged], lvl), 1)
        index = cls(query_ids, arrow.strings([str(q) for q in query_ids]), judged_rows, level_values, level_counts,
                    qrels.source, level_gains=qrels.level_gains)
        short_keys = np.sort(table_keys(doc_hashes, qcode))
        if bool((short_keys[1:] == short_keys[:-1]).any()):   # a judgment may repeat: the join decides
            _, keys, _, sort = index._join
            _refuse_repeated_judgment(qrels, keys, sort)
        return index

    @cached_property
    def _join(self) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
        """The document vocabulary, the join keys (query code, document code) in ascending
        order, the labels in that order, and the order (judgment rows by key)."""
        rows = self.judged
        dcode, doc_vocab = _document_codes(rows.docs, rows.doc_hashes)
        keys = join_keys(rows.qcode, dcode, len(doc_vocab))
        sort = np.argsort(keys, kind="stable")
        return doc_vocab, keys[sort], rows.labels[sort], sort

    @property
    def doc_vocab(self) -> pa.Array:
        """Each judged document once (built when first asked for)."""
        return self._join[0]

    @property
    def keys(self) -> np.ndarray:
        """The join keys of the judgments, ascending (:func:`join_keys`)."""
        return self._join[1]

    @property
    def labels(self) -> np.ndarray:
        """The labels of the judgments, in key order."""
        return self._join[2]

    @property
    def label_dtype(self) -> np.dtype:
        """The labels' type (int32 where they fit)."""
        return self.judged.labels.dtype

    @property
    def judgments(self) -> int:
        """The number of judgments."""
        return len(self.judged.labels)

    @cached_property
    def key_query(self) -> np.ndarray:
        """The query code of each join key (sorted, as the keys are)."""
        return self.keys // np.int64(max(len(self.doc_vocab), 1))

    @cached_property
    def python_sorted(self) -> bool:
        """True if ``query_ids`` are in Python's string order, so that a binary search finds them
        (they are unless two ids differ only by trailing NUL characters, which NumPy's sort ignores)."""
        ids = self.query_ids
        return bool(len(ids) < 2 or np.all(ids[1:] > ids[:-1]))

    def query_codes(self, values: pa.Array) -> np.ndarray:
        """Position of each id of ``values`` in ``query_ids`` (int32), -1 for a query without
        judgments. A few ids against many judged queries are found by binary search; otherwise
        by Arrow's hash lookup, which hashes every judged query on each call.

        >>> qrels = Qrels(pa.array(["q1", "q2", "q3"]), pa.array(["d"] * 3), np.ones(3, dtype=np.int64))
        >>> index = QrelsIndex.build(qrels)
        >>> index.query_codes(pa.array(["q3", "q9", "q1"])).tolist()
        [2, -1, 0]
        """
        if 8 * len(values) < len(self.query_ids) and self.python_sorted:
            wanted = np.array(values.to_pylist(), dtype=object)
            pos = np.minimum(np.searchsorted(self.query_ids, wanted), len(self.query_ids) - 1)
            return np.where(self.query_ids[pos] == wanted, pos, -1).astype(np.int32)
        return _found_or_minus_one(kernels.index_in(values, self.query_array, arrow.POOL))

    def _vocabulary_for(self, qcode: np.ndarray) -> tuple[pa.Array, np.ndarray | None]:
        """The documents to look rows up in: the whole vocabulary, or, when the rows' queries
        have far fewer judged documents (a chunk or partition of a large run), only those
        (with their codes in the whole vocabulary)."""
        present = np.flatnonzero(_queries_present(qcode, len(self.query_ids)))
        if 2 * len(present) >= len(self.query_ids):
            return self.doc_vocab, None
        lo = np.searchsorted(self.key_query, present, "left")
        lengths = np.searchsorted(self.key_query, present, "right") - lo
        total = int(lengths.sum())
        if 4 * total >= len(self.doc_vocab):
            return self.doc_vocab, None
        positions = np.arange(total, dtype=np.int64) + np.repeat(lo - (np.cumsum(lengths) - lengths), lengths)
        codes = distinct(self.keys[positions] % np.int64(len(self.doc_vocab)))
        return kernels.take(self.doc_vocab, arrow.indices(codes)), codes

    @property
    def judged_filter(self) -> JudgedFilter:
        """The hash filter and table of the judged (query, document) pairs, in the qrels' order
        (rows that fail the filter need no lookup; the others are found in the table)."""
        return self.judged.filter()

    def hashed_labels(self, qcode: np.ndarray, doc_hashes: np.ndarray, docs: pa.Array | pa.ChunkedArray,
                      rows: np.ndarray) -> np.ndarray:
        """The labels of rows ``rows`` (ascending) of ``docs``, given their query codes and
        document hashes (:func:`~rankwise.engine.strings.string_hashes`), as :meth:`lookup`
        gives them, found in the judged filter's table rather than by document id.

        A row is the judged pair it is found as (same query, same document hash) when its
        document also has the same length in bytes: a document of at most 8 bytes hashes one
        to one (its bytes, zero padded, times an odd constant), so that settles it; a longer one
        is compared byte for byte. When two judged pairs share a hash, the rows are looked up by
        document id (:meth:`document_labels`).

        >>> qrels = Qrels(pa.array(["q", "q"]), pa.array(["d1", "a-long-document"]), np.array([2, -1]))
        >>> index = QrelsIndex.build(qrels)
        >>> docs = pa.array(["a-long-document", "d1", "d2"]); rows = np.arange(3)
        >>> index.hashed_labels(np.zeros(3, dtype=np.int32), string_hashes(docs), docs, rows).tolist()
        [-2, 2, -1]
        """
        table = self.judged_filter
        if not table.exact:
            return self.document_labels(qcode, doc_hashes, docs, rows)
        label = np.full(len(rows), NONPOOL, dtype=self.label_dtype)
        found = table.find(doc_hashes, qcode)
        hit = np.flatnonzero(found >= 0)
        if len(hit) == 0:
            return label
        judged = found[hit]
        length = arrow.value_lengths(docs, rows[hit])
        same = length == self.judged.lengths[judged]
        longer = np.flatnonzero(same & (length > 8))
        if len(longer):   # a hash of several words: the bytes decide
            theirs = kernels.take(self.judged.docs, arrow.indices(judged[longer]))
            ours = arrow.take_rows(docs, rows[hit[longer]], arrow.POOL)
            if ours.type != theirs.type:
                ours = kernels.cast(ours, theirs.type)
            same[longer] = to_numpy(kernels.equal(ours, theirs))
        got = self.judged.labels[judged[same]]
        label[hit[same]] = np.where(got < 0, UNJUDGED, got)
        return label

    def label_lookup(self, judged: JudgedFilter | None) -> LabelLookup:
        """The lookup a document scan with the filter ``judged`` uses: by hash in the filter's
        table, or, without a filter or with one whose table names no single pair, by document
        id (the join keys are then built here, once, before the scanning threads share them)."""
        if judged is not None and judged.exact:
            return self.hashed_labels
        _ = self.key_query
        return self.document_labels

    def document_labels(self, qcode: np.ndarray, doc_hashes: np.ndarray, docs: pa.Array | pa.ChunkedArray,
                        rows: np.ndarray) -> np.ndarray:
        """:meth:`lookup` of rows ``rows`` of ``docs`` (the hashes are not used), with the
        signature of :meth:`hashed_labels`."""
        return self.lookup(qcode, arrow.take_rows(docs, rows, arrow.POOL))

    def lookup(self, qcode: np.ndarray, doc: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Label of each (query code, doc) pair: the judgment, UNJUDGED if negative, else NONPOOL
        (looked up a slice of rows at a time: the temporaries stay small)."""
        label = np.full(len(qcode), NONPOOL, dtype=self.label_dtype)
        if self.judgments == 0:
            return label
        vocabulary, global_codes = self._vocabulary_for(qcode)
        # each call hashes the whole vocabulary: slices of at least 16 rows per judged document
        step = max(SLICE_ROWS, 16 * len(vocabulary))
        for start in range(0, len(qcode), step):
            stop = min(start + step, len(qcode))
            dcode = kernels.index_in(doc.slice(start, stop - start), vocabulary, arrow.POOL)
            found = np.flatnonzero(to_numpy(kernels.is_valid(dcode)) & (qcode[start:stop] >= 0))
            if len(found) == 0:
                continue
            codes = to_numpy(kernels.take(dcode, arrow.indices(found)), np.int64)
            if global_codes is not None:
                codes = global_codes[codes]
            del dcode
            key = join_keys(qcode[start:stop][found], codes, len(self.doc_vocab))
            pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
            hit = self.keys[pos] == key
            got = self.labels[pos[hit]]
            label[start + found[hit]] = np.where(got < 0, UNJUDGED, got)
        return label


SLICE_ROWS = 1 << 18
"""Rows handled at a time by the steps that need large temporaries only per row."""


def _queries_present(qcode: np.ndarray, n_queries: int) -> np.ndarray:
    """Which of ``n_queries`` query codes occur in ``qcode`` (-1: none), a slice of rows at a
    time (a whole-column ``bincount`` would hold an int64 copy of the codes: 8 bytes a row).

    >>> _queries_present(np.array([2, -1, 0, 2], dtype=np.int32), 4).tolist()
    [True, False, True, False]
    """
    present = np.zeros(n_queries, dtype=bool)
    for start in range(0, len(qcode), SLICE_ROWS):
        codes = qcode[start:start + SLICE_ROWS]
        present[codes[codes >= 0]] = True
    return present


PARALLEL_MIN_ROWS = 200_000
"""Runs this large scan their documents on a second thread while the main thread sorts."""


def _found_or_minus_one(codes: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """An ``index_in`` result as int32 codes, -1 where the value was not found."""
    return np.where(to_numpy(kernels.is_valid(codes)), to_numpy(codes, np.int32, raw=True), -1).astype(np.int32)


def _coded_queries(query: pa.Array | pa.ChunkedArray, index: QrelsIndex) -> tuple[np.ndarray, np.ndarray]:
    """The code of each row's query in the qrels' sorted query ids (int32, -1 for a query not
    judged), and the rows where a block of one code begins
    (:func:`~rankwise.engine.duplicates.block_starts` of the codes).

    Each distinct query is looked up once when the column is dictionary-encoded, and each run
    of equal ids when the rows come grouped by query (the usual run file), not once per row.
    The block starts are found chunk by chunk on the threads that code them: where runs of
    equal ids were looked up, a block begins at a run whose code differs from the run before
    (no pass over the codes of every row).

    >>> index = QrelsIndex.build(Qrels(pa.array(["a", "b"]), pa.array(["d", "d"]), np.ones(2, dtype=np.int64)))
    >>> codes, starts = _coded_queries(pa.chunked_array([["b", "x", "y"], ["y", "a", "a"]]), index)
    >>> codes.tolist(), starts.tolist()   # x and y are both unjudged: one block of -1
    ([1, -1, -1, -1, 0, 0], [0, 1, 4])
    """
    chunks = query.chunks if isinstance(query, pa.ChunkedArray) else [query]
    out = np.empty(sum(len(c) for c in chunks), dtype=np.int32)
    bounds = np.concatenate(([0], np.cumsum([len(c) for c in chunks], dtype=np.int64)))
    starts: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(chunks)

    def code(i: int) -> None:
        chunk, part = chunks[i], out[bounds[i]: bounds[i + 1]]
        if pa.types.is_dictionary(chunk.type):
            np.take(index.query_codes(chunk.dictionary), to_numpy(chunk.indices), out=part)
            starts[i] = block_starts(part)
            return
        runs = _run_starts(chunk)
        if 4 * len(runs) <= len(chunk):
            codes = index.query_codes(kernels.take(chunk, arrow.indices(runs)))
            part[:] = np.repeat(codes, np.diff(np.append(runs, len(chunk))))
            starts[i] = runs[np.concatenate(([True], codes[1:] != codes[:-1]))] if len(runs) else runs
        else:
            part[:] = index.query_codes(chunk)
            starts[i] = block_starts(part)

    _each_in_two_threads(code, len(chunks), len(out) >= PARALLEL_MIN_ROWS)
    for i in range(1, len(chunks)):   # a block that goes on from the chunk before does not begin here
        if len(starts[i]) and bounds[i] > 0 and out[bounds[i] - 1] == out[bounds[i]]:
            starts[i] = starts[i][1:]
    return out, np.concatenate([chunk_starts + bounds[i] for i, chunk_starts in enumerate(starts)] or
                               [np.zeros(0, dtype=np.int64)]).astype(np.int64)


def _each_in_two_threads(work: Callable[[int], None], count: int, parallel: bool) -> None:
    """``work(i)`` for ``i`` in ``range(count)``, on two threads when ``parallel`` (the work
    releases the GIL: Arrow kernels and NumPy on large arrays)."""
    if not parallel or count < 2:
        for i in range(count):
            work(i)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        for done in [pool.submit(work, i) for i in range(count)]:
            done.result()


def _run_starts(values: pa.Array) -> np.ndarray:
    """Rows where a run of equal values begins.

    >>> _run_starts(pa.array(["a", "a", "b", "a"])).tolist()
    [0, 2, 3]
    """
    n = len(values)
    if n < 2:
        return np.zeros(n, dtype=np.int64)
    same = to_numpy(kernels.equal(values.slice(0, n - 1), values.slice(1)))
    return np.concatenate(([0], np.flatnonzero(~same) + 1)).astype(np.int64)


def _descending_score_key(score: np.ndarray, precision: str) -> np.ndarray:
    """uint32 key whose ascending order is the descending order of ``score`` as float32
    (computed in place in one float32 copy of the scores).

    >>> _descending_score_key(np.array([2.0, -1.0, 0.0, -0.0, 3.0]), "float32").argsort(kind="stable").tolist()
    [4, 0, 2, 3, 1]
    """
    s32 = score.astype(np.float32)
    s32 += np.float32(0.0)  # -0.0 becomes 0.0
    bits = s32.view(np.uint32)
    # non-negative floats: flip the 31 low bits (larger first); negative: keep (more negative last)
    # non-negative (sign bit 0): xor with 0x7FFFFFFF; negative: keep. The mask is
    # (bits >> 31) - 1 masked to 31 bits: 0x7FFFFFFF for non-negative, 0 for negative, computed
    # in chunks so that no second full-size array is needed
    step = 1 << 20
    for at in range(0, len(bits), step):
        part = bits[at: at + step]
        mask = np.right_shift(part, np.uint32(31))
        mask -= np.uint32(1)
        mask &= np.uint32(0x7FFFFFFF)
        part ^= mask
    return bits


def _sorted_ties(qcode: np.ndarray, key: np.ndarray, descending: bool = False) -> np.ndarray | None:
    """For rows sorted by ``key`` within each query (ascending, or descending with
    ``descending``: the usual run file's scores), which rows tie with the next one (same query,
    same key). None if the rows are not in that order. Queries may come in any order (whether
    each query's rows are contiguous is :func:`_block_order`'s question). The comparisons run a
    slice of rows at a time, so the only full-size array is the result (one byte per row).

    >>> _sorted_ties(np.array([0, 0, 0, 1]), np.array([1, 1, 2, 0], dtype=np.uint32)).tolist()
    [True, False, False]
    >>> _sorted_ties(np.array([0, 0]), np.array([2, 1], dtype=np.uint32)) is None
    True
    >>> _sorted_ties(np.array([0, 0, 1]), np.array([2.0, 2.0, 5.0]), descending=True).tolist()
    [True, False]
    >>> _sorted_ties(np.array([1, 1, 0]), np.array([3.0, 3.0, 5.0]), descending=True).tolist()
    [True, False]
    """
    n = len(qcode)
    same = np.empty(max(n - 1, 0), dtype=bool)
    for start in range(0, n - 1, SLICE_ROWS):
        stop = min(start + SLICE_ROWS, n - 1)
        q0, q1 = qcode[start:stop], qcode[start + 1: stop + 1]
        k0, k1 = key[start:stop], key[start + 1: stop + 1]
        in_query = q1 == q0
        in_order = (k1 <= k0) if descending else (k1 >= k0)
        in_order &= in_query
        in_order |= q1 != q0
        if not bool(in_order.all()):
            return None
        np.equal(k1, k0, out=same[start:stop])
        same[start:stop] &= in_query
    return same


def _block_order(qcode: np.ndarray, starts: np.ndarray | None = None) -> tuple[bool, np.ndarray | None]:
    """Whether each query's rows are contiguous, and if so the row order that puts the blocks
    in ascending query code (None when they already are). A run whose queries come in another
    order than the qrels' sorted ids (numeric ids: "10" sorts before "9") is reordered by block,
    not sorted. ``starts``: :func:`~rankwise.engine.duplicates.block_starts`, if found.

    >>> _block_order(np.array([2, 2, 0, 1, 1]))
    (True, array([2, 3, 4, 0, 1]))
    >>> _block_order(np.array([0, 1, 1]))
    (True, None)
    >>> _block_order(np.array([0, 1, 0]))[0]
    False
    """
    n = len(qcode)
    starts = block_starts(qcode) if starts is None else starts
    codes = qcode[starts]
    if bool(np.all(codes[1:] > codes[:-1])):
        return True, None
    if len(distinct(codes)) != len(codes):
        return False, None
    by = np.argsort(codes, kind="stable")
    lengths = np.diff(np.append(starts, n))[by]
    ends = np.cumsum(lengths)
    order = np.arange(n, dtype=np.int64)
    order += np.repeat(starts[by] - (ends - lengths), lengths)
    return True, order


def _in_rank_order(q: np.ndarray, tied: np.ndarray | None, subset: bool, starts: np.ndarray | None = None,
                   ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """For rows whose scores descend within each query (``tied`` from :func:`_sorted_ties`,
    None if they do not): the ties in rank order and the rank order (None: file order), or
    ``(None, None)`` when the rows must be sorted (a query's rows are not contiguous)."""
    if tied is None:
        return None, None
    contiguous, blocks = _block_order(q, starts)
    if not contiguous:
        return None, None
    if blocks is not None:  # a row ties with the next in rank order as it did in file order
        return np.append(tied, False)[blocks][:-1], blocks
    return tied, (np.arange(len(q)) if subset else None)


def _score_order(run: Run, qcode: np.ndarray, rows: np.ndarray | None, conv: Conventions,
                 starts: np.ndarray | None = None) -> tuple[np.ndarray | None, np.ndarray]:
    """``rows`` (None: every row) ordered by query, then score descending: the order of
    ``rows`` (None: as they come) and, in that order, whether each row ties with the next
    (the tie rule then orders the tied rows: :func:`_tie_rule`). ``starts``: the blocks of
    ``qcode`` (:func:`~rankwise.engine.duplicates.block_starts`), if found."""
    if rows is None:
        score = run.score
    else:
        score = run.score[rows]
    q = qcode if rows is None else qcode[rows]
    blocks = starts if rows is None else None   # a subset of rows has blocks of its own
    local = None
    if conv.score_precision == "float32":
        # float32 scores compare as the key below orders them (-0.0 equals 0.0; runs hold no NaN)
        s32 = score.astype(np.float32)
        tied, local = _in_rank_order(q, _sorted_ties(q, s32, descending=True), rows is not None, blocks)
        if tied is None:  # not in order: sort by one uint64 key, query high, score low
            skey = _descending_score_key(s32, "float32")
            packed = np.empty(len(score), dtype=np.uint64)
            high_half(packed)[:] = q
            low_half(packed)[:] = skey
            local = np.argsort(packed, kind="stable")
            packed.sort(kind="stable")  # in place: the order of packed[local], without a second array
            tied = packed[1:] == packed[:-1]
            del packed, skey
        del s32
    else:
        tied, local = _in_rank_order(q, _sorted_ties(q, score, descending=True), rows is not None, blocks)
        if tied is None:
            local = np.lexsort((-score, q))
            sq, ss = q[local], score[local]
            tied = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
            del sq, ss
    del q
    return local, tied


def _tie_rule(run: Run, rows: np.ndarray | None, local: np.ndarray | None, tied: np.ndarray, conv: Conventions,
              label: np.ndarray | None = None, mixed: tuple[np.ndarray, np.ndarray] | None = None,
              ) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None]:
    """The order of :func:`_score_order` with each group of tied rows ordered by the tie rule
    (document id, in byte order): ``(order, None)`` with the sorted row numbers, or, when the
    rows were already in order except inside runs of tied scores (the usual run file),
    ``(None, (pos, src))``: the file order with position ``pos[i]`` taken by row ``src[i]``.

    With ``label`` (each file row's label), only groups whose labels differ are ordered: in a
    group of one label every order gives the rankings the same labels, so every measure the
    same value (a run's ties are nearly all among unjudged documents). ``mixed``: those
    groups as (first row, size), when already found for every row in file order
    (:func:`_mixed_tie_groups`): no pass over every row then.

    >>> run = Run(["q"] * 4, ["a", "b", "c", "d"], [2.0, 2.0, 1.0, 1.0])
    >>> local, tied = _score_order(run, np.zeros(4, dtype=np.int32), None, Conventions())
    >>> _tie_rule(run, None, local, tied, Conventions())[1]            # b before a, d before c
    (array([0, 1, 2, 3]), array([1, 0, 3, 2]))
    >>> _tie_rule(run, None, local, tied, Conventions(), np.array([1, 0, -1, -1]))[1]   # c, d: one label
    (array([0, 1]), array([1, 0]))
    """
    if conv.ties in ("input", "expected") or not tied.any():
        return _ordered(rows, local), None
    if mixed is not None and rows is None and local is None:
        first, size = mixed
        if len(first) == 0:
            return None, None
        pos = _group_rows(first, size)
        return None, (pos, pos[_by_document(run, pos, np.repeat(np.arange(len(first)), size), conv)])
    # rows inside runs of equal keys: order them by document id (byte order)
    in_group = np.zeros(len(tied) + 1, dtype=bool)
    in_group[1:] |= tied
    in_group[:-1] |= tied
    pos = np.flatnonzero(in_group)
    del in_group
    starts = np.ones(len(pos), dtype=bool)
    starts[1:] = ~tied[pos[1:] - 1]
    group = np.cumsum(starts)
    src = pos if local is None else local[pos]
    tied_rows = src if rows is None else rows[src]
    if label is not None:
        of_row = label[tied_rows]
        differ = np.zeros(int(group[-1]) + 1, dtype=bool)
        differ[group[1:][(of_row[1:] != of_row[:-1]) & ~starts[1:]]] = True
        kept = differ[group]
        if not kept.all():
            pos, group, src, tied_rows = pos[kept], group[kept], src[kept], tied_rows[kept]
        if len(pos) == 0:
            return _ordered(rows, local), None
    perm = _by_document(run, tied_rows, group, conv)
    if local is None:
        return None, (pos, pos[perm])
    local[pos] = src[perm]
    return _ordered(rows, local), None


def _by_document(run: Run, tied_rows: np.ndarray, group: np.ndarray, conv: Conventions) -> np.ndarray:
    """The order of ``tied_rows`` by ``group``, then by document id under the tie rule (Arrow
    compares strings byte by byte, as strcmp does, whatever their length)."""
    docs = arrow.take_rows(run.doc, tied_rows, arrow.POOL)
    direction = "descending" if conv.ties == "trec" else "ascending"
    return to_numpy(kernels.sort_indices(pa.Table.from_arrays([arrow.indices(group), docs], names=["group", "doc"]),
                                         sort_keys=[("group", "ascending"), ("doc", direction)]), np.int64)


def _group_rows(first: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The rows of groups given as (first row, size), group after group.

    >>> _group_rows(np.array([2, 7]), np.array([3, 2])).tolist()
    [2, 3, 4, 7, 8]
    """
    ends = np.cumsum(size)
    return np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) + np.repeat(first - (ends - size), size)


def _file_order_mixed_groups(rows: np.ndarray | None, local: np.ndarray | None, tied: np.ndarray,
                             conv: Conventions, label: np.ndarray, candidates: np.ndarray,
                             ) -> tuple[np.ndarray, np.ndarray] | None:
    """For every row in file order (the usual run file, ``rows`` and ``local`` None): the tied
    groups whose labels differ (:func:`_mixed_tie_groups`), grown from the labelled rows among
    the scan's ``candidates`` (every other row is NONPOOL). None otherwise."""
    if rows is not None or local is not None or conv.ties == "expected":
        return None
    return _mixed_tie_groups(tied, label, candidates[label[candidates] != NONPOOL])


MIXED_GROUP_STEPS = 64
"""Rows a tied group is followed on each side of a labelled row before :func:`_mixed_tie_groups`
gives up (the caller then visits every row)."""


def _mixed_tie_groups(tied: np.ndarray, label: np.ndarray, seeds: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray] | None:
    """The groups of tied rows (in file order, ``tied[i]``: row i ties with row i + 1) whose
    labels differ, as (first row, size) in row order, found from ``seeds``: the rows whose label
    is not NONPOOL (a group of NONPOOL rows alone has one label; a few thousand judged rows in a
    run of millions). Each seed's group is grown along ``tied`` a step at a time; None when a
    group reaches further than ``MIXED_GROUP_STEPS`` rows.

    >>> tied = np.array([True, False, True, True, False])   # groups: rows 0-1, 2-4, 5 alone
    >>> label = np.array([1, -1, 0, 0, -1, 2])
    >>> [part.tolist() for part in _mixed_tie_groups(tied, label, np.array([0, 2, 3, 5]))]
    [[0, 2], [2, 3]]
    """
    lo = seeds.astype(np.int64)
    hi = lo.copy()
    last = len(label) - 1
    for edge, step, limit in ((lo, -1, 0), (hi, 1, last)):
        for taken in range(MIXED_GROUP_STEPS + 1):
            can = np.flatnonzero(edge != limit)
            grow = can[tied[np.minimum(edge[can], edge[can] + step)]]
            if len(grow) == 0:
                break
            if taken == MIXED_GROUP_STEPS:
                return None
            edge[grow] += step
    first, at = np.unique(lo, return_index=True)
    size = hi[at] - first + 1
    first, size = first[size > 1], size[size > 1]
    if len(first) == 0:
        return first, size
    labels = label[_group_rows(first, size)]
    bounds = np.cumsum(size) - size
    differ = np.minimum.reduceat(labels, bounds) != np.maximum.reduceat(labels, bounds)
    return first[differ], size[differ]


def _ordered(rows: np.ndarray | None, local: np.ndarray | None) -> np.ndarray | None:
    """Row numbers of ``rows`` (None: every row) in the order ``local`` (None: as they come).

    >>> _ordered(np.array([4, 7, 9]), np.array([2, 0, 1])).tolist(), _ordered(None, None)
    ([9, 4, 7], None)
    """
    if local is None:
        return rows
    return local if rows is None else rows[local]


def duplicates_notice(run: str, rows: int, policy: str) -> Notice:
    """The warning for duplicate (query, document) rows dropped under ``duplicates=policy``.

    >>> print(duplicates_notice("bm25", 2, "first"))
    bm25: 2 duplicate (query, document) row(s) dropped, keeping the first occurrence
    """
    return Notice(f"{run}: {rows} duplicate (query, document) row(s) dropped, keeping the {policy} occurrence",
                  "duplicates", run=run, count=rows, details={"policy": policy})


def unjudged_notice(run: str, queries: int, rows: int, example: str) -> Notice:
    """The warning for the run's queries that have no judgments (left out).

    >>> print(unjudged_notice("bm25", 2, 7, "q9"))
    bm25: 2 query(ies) of the run have no judgments and were left out (7 rows), e.g. 'q9'
    """
    return Notice(f"{run}: {queries} query(ies) of the run have no judgments and were left out ({rows} rows), "
                  f"e.g. {example!r}", "unjudged_queries", run=run, count=queries,
                  details={"rows": rows, "example": example})


def missing_notice(run: str, queries: int, missing: str) -> Notice:
    """The warning for judged queries absent from the run, scored 0 or left out.

    >>> print(missing_notice("bm25", 3, "zero"))
    bm25: 3 judged query(ies) are absent from the run and were scored as empty rankings (missing='zero')
    """
    what = ("were scored as empty rankings (missing='zero')" if missing == "zero" else
            "were left out (missing='skip'; use missing='zero' to score them 0)")
    return Notice(f"{run}: {queries} judged query(ies) are absent from the run and {what}", "missing_queries",
                  run=run, count=queries, details={"missing": missing})


def align(run: Run, index: QrelsIndex, conv: Conventions) -> tuple[RankedLists, list[str]]:
    """Join ``run`` with the encoded qrels and sort it; returns the lists and warnings.

    Queries of the run absent from the qrels are left out (counted in a warning); queries of
    the qrels absent from the run are left out, or kept as empty rankings with
    ``missing='zero'``.
    """
    warnings: list[str] = list(run.notes)
    qcode, starts = _coded_queries(run.query, index)   # the block starts: found once, for the scan and the order
    known = qcode >= 0
    # duplicates matter only in queries that are evaluated (trec_eval checks those alone). One
    # pass hashes every document: it finds the slices where a pair may repeat and the rows whose
    # (query, document) pair may be judged (a run with fewer rows than there are judgments
    # builds no filter: every row is looked up). The candidates' labels are looked up slice by
    # slice in the same pass, for every row whichever rows are kept. On a large run a second
    # thread starts the pass while this one sorts, then this one helps finish it
    judged = index.judged_filter if len(qcode) >= index.judgments else None
    scanner = DocumentScanner(run.doc, qcode, known, judged, SLICE_ROWS, starts, index.label_lookup(judged),
                              np.empty(len(qcode), dtype=index.label_dtype))
    speculative = None
    if len(qcode) >= PARALLEL_MIN_ROWS:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(scanner.work)
            rows0 = None if bool(known.all()) else np.flatnonzero(known).astype(np.int64)
            speculative = _score_order(run, qcode, rows0, conv, starts)
            scanner.work()
            pending.result()
    else:
        scanner.work()
    scan = scanner.result()
    keep, dropped = resolve_duplicates(run, qcode, conv.duplicates, known, scan.suspects)
    if dropped:
        warnings.append(duplicates_notice(run.name, dropped, conv.duplicates))
    if not known.all():
        unknown = kernels.unique(kernels.filter_values(run.query, arrow.mask(~known)))
        warnings.append(unjudged_notice(run.name, len(unknown), int((~known).sum()), unknown[0].as_py()))
    everything = keep is None and bool(known.all())
    rows = None if everything else np.flatnonzero(known if keep is None else (known & keep)).astype(np.int64)
    label_all = scan.labels
    assert label_all is not None   # the scan was given a lookup
    if speculative is not None and keep is None:  # no duplicate dropped: the sort stands
        local, tied = speculative
    else:
        local, tied = _score_order(run, qcode, rows, conv)
    mixed = _file_order_mixed_groups(rows, local, tied, conv, label_all, scan.candidates)
    order, patch = _tie_rule(run, rows, local, tied, conv, label_all, mixed)
    if order is None:  # every row, in file order but for the tie patch (same query: qcode holds)
        qsorted, label = qcode, label_all
        if patch is not None:
            pos, src = patch
            label[pos] = label_all[src]
        rows = None
    else:
        rows = order
        qsorted, label = qcode[rows], label_all[rows]
    n_q = len(index.query_ids)
    counts = _rows_per_query(qsorted, n_q)
    present = counts > 0
    level_counts = index.level_counts
    if conv.universe == "run":  # only the returned documents exist: count their labels alone
        level_counts = _level_counts(qsorted, label, index.level_values, n_q)
    cut = conv.depth is not None or conv.judged_only or conv.retrieved == "positive"
    if cut:
        if rows is None:
            rows = _patched_rows(len(qcode), patch)
        starts = np.concatenate(([0], np.cumsum(counts)))[:-1]
        rank0 = np.arange(len(rows)) - np.repeat(starts, counts)
        mask = np.ones(len(rows), dtype=bool)
        if conv.depth is not None:
            mask &= rank0 < conv.depth
        if conv.judged_only:
            mask &= label >= 0
        if conv.retrieved == "positive":
            mask &= run.score[rows] > 0
        rows, qsorted, label = rows[mask], qsorted[mask], label[mask]
        counts = _rows_per_query(qsorted, n_q)
    missing = int((~present).sum())
    evaluated = np.arange(n_q) if conv.missing == "zero" else np.flatnonzero(present)
    if missing:
        warnings.append(missing_notice(run.name, missing, conv.missing))
    offsets = np.concatenate(([0], np.cumsum(counts[evaluated]))).astype(np.int64)
    lists = RankedLists(
        query_ids=index.query_ids[evaluated],
        offsets=offsets,
        label=label,
        level_values=index.level_values,
        level_counts=level_counts[evaluated],
        rel_level=conv.rel_level,
        run_name=run.name,
        in_run=present[evaluated],
        judged_only=conv.judged_only,
        level_gains=index.level_gains,
    )
    precision = np.float32 if conv.score_precision == "float32" else np.float64
    # in file order the tie patch only exchanges rows of equal scores (at this precision), so
    # the scores in rank order are the file's scores: no copy
    ranked_scores = run.score if rows is None else run.score[rows]
    if conv.ties == "expected":
        lists.tie_start, lists.tie_size = _tie_groups(ranked_scores.astype(precision, copy=False), offsets)
    else:
        # uncut, the ranked rows are the rows the score order compared: their ties are known
        # (and in file order the groups whose labels differ are the ones the tie rule found)
        lists.tie_spans = _spans_at(*mixed, offsets) if mixed is not None and not cut else \
            _tie_spans(ranked_scores, offsets, label, precision, None if cut else tied)
    del ranked_scores
    return lists, warnings


def empty_rankings(index: QrelsIndex, codes: np.ndarray, conv: Conventions, run_name: str) -> RankedLists:
    """Empty rankings for the qrels queries ``codes`` (positions in ``index.query_ids``, in
    order): what ``align`` builds with ``missing='zero'`` for a judged query the run never
    returned, for engines that learn which queries were absent only after the last piece.

    >>> from rankwise.data.containers import Qrels
    >>> index = QrelsIndex.build(Qrels(["q1", "q2"], ["d1", "d1"], [1, 2]))
    >>> rl = empty_rankings(index, np.array([1]), Conventions(missing="zero"), "run")
    >>> rl.query_ids.tolist(), rl.offsets.tolist(), rl.num_rel.tolist()
    (['q2'], [0, 0], [1])
    """
    codes = np.asarray(codes, dtype=np.int64)
    level_counts = index.level_counts[codes]
    if conv.universe == "run":  # only the returned documents exist: there are none
        level_counts = np.zeros_like(level_counts)
    lists = RankedLists(
        query_ids=index.query_ids[codes],
        offsets=np.zeros(len(codes) + 1, dtype=np.int64),
        label=np.empty(0, dtype=index.label_dtype),
        level_values=index.level_values,
        level_counts=level_counts,
        rel_level=conv.rel_level,
        run_name=run_name,
        in_run=np.zeros(len(codes), dtype=bool),
        judged_only=conv.judged_only,
        level_gains=index.level_gains,
    )
    if conv.ties == "expected":
        lists.tie_start, lists.tie_size = _tie_groups(np.empty(0), lists.offsets)
    else:
        lists.tie_spans = _tie_spans(np.empty(0), lists.offsets, lists.label)
    return lists


def _rows_per_query(qcode: np.ndarray, n_queries: int) -> np.ndarray:
    """How many rows each query code has, for rows in ascending query order (ranked rows come
    query by query): one binary search per query, not a pass over the rows.

    >>> _rows_per_query(np.array([0, 2, 2], dtype=np.int32), 4).tolist()
    [1, 0, 2, 0]
    """
    bounds = np.searchsorted(qcode, np.arange(n_queries + 1, dtype=qcode.dtype))
    return np.diff(bounds).astype(np.int64)


def _patched_rows(n: int, patch: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Row numbers in rank order for rows in file order but for ``patch`` (positions, rows).

    >>> _patched_rows(4, (np.array([1, 2]), np.array([2, 1]))).tolist()
    [0, 2, 1, 3]
    """
    rows = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    if patch is not None:
        rows[patch[0]] = patch[1]
    return rows


def _level_counts(qcode: np.ndarray, label: np.ndarray, level_values: np.ndarray, n_q: int) -> np.ndarray:
    """Per query, how many of these rows carry each judged label (``universe='run'``)."""
    out = np.zeros((n_q, len(level_values)), dtype=np.int64)
    judged = label >= 0
    if len(level_values) and judged.any():
        np.add.at(out, (qcode[judged], np.searchsorted(level_values, label[judged])), 1)
    return out


def _tie_spans(score: np.ndarray, offsets: np.ndarray, label: np.ndarray,
               precision: type = np.float64, tied: np.ndarray | None = None) -> np.ndarray:
    """Groups of two or more tied rows whose labels differ, as rows (query, first rank, size):
    the rows whose order the tie rule decides and where that order can change a value. Scores
    are compared at ``precision``, a slice at a time (no full-size copy), unless ``tied`` says
    already which row ties with the next of its query (:func:`_score_order`); only tied rows
    are visited after that (a few percent of a run).

    >>> _tie_spans(np.array([3.0, 2.0, 2.0, 1.0]), np.array([0, 4]), np.array([1, 0, 1, 0])).tolist()
    [[0, 1, 2]]
    >>> _tie_spans(np.array([1.0, 1.0 + 1e-9]), np.array([0, 2]), np.array([1, 0]), np.float32).tolist()
    [[0, 0, 2]]
    >>> _tie_spans(np.array([3.0, 2.0, 2.0, 1.0]), np.array([0, 4]), np.array([1, 0, 1, 0]),
    ...            tied=np.array([False, True, False])).tolist()
    [[0, 1, 2]]
    """
    n = len(score)
    if n < 2:
        return np.zeros((0, 3), dtype=np.int64)
    if tied is None:
        same = np.empty(n - 1, dtype=bool)
        for start in range(0, n - 1, SLICE_ROWS):
            stop = min(start + SLICE_ROWS, n - 1)
            part: np.ndarray = score[start: stop + 1].astype(precision, copy=False)
            np.equal(part[1:], part[:-1], out=same[start:stop])
        bounds = offsets[1:-1]
        same[bounds[(bounds > 0) & (bounds < n)] - 1] = False  # never across queries
        tied = same
    pairs = np.flatnonzero(tied)  # row i ties with row i + 1
    if len(pairs) == 0:
        return np.zeros((0, 3), dtype=np.int64)
    new_group = np.ones(len(pairs), dtype=bool)
    new_group[1:] = pairs[1:] != pairs[:-1] + 1
    group = np.cumsum(new_group) - 1  # the group of each tied pair
    # a group's labels differ where one of its pairs has two different labels
    mixed = distinct(group[label[pairs] != label[pairs + 1]])
    starts = np.flatnonzero(new_group)
    ends = np.append(starts[1:], len(pairs))  # a group of k pairs holds k + 1 rows
    return _spans_at(pairs[starts[mixed]], ends[mixed] - starts[mixed] + 1, offsets)


def _spans_at(first: np.ndarray, size: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Groups of ranked rows given as (first row, size) as tie spans: (query, first rank, size).

    >>> _spans_at(np.array([1, 5]), np.array([2, 3]), np.array([0, 4, 9])).tolist()
    [[0, 1, 2], [1, 1, 3]]
    """
    q = np.searchsorted(offsets, first, side="right") - 1
    return np.column_stack([q, first - offsets[q], size]).astype(np.int64)


def _tie_groups(score: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per ranked row: the rank where its run of equal scores starts, and its size (scores in
    the precision they are compared at)."""
    n = len(score)
    start = np.ones(n, dtype=bool)
    start[1:] = score[1:] != score[:-1]
    start[offsets[:-1][offsets[:-1] < n]] = True
    first = np.flatnonzero(start)
    sizes = np.diff(np.concatenate((first, [n])))
    gid = np.cumsum(start) - 1
    rank0 = np.arange(n) - np.repeat(offsets[:-1], np.diff(offsets))
    return rank0[first][gid].astype(np.int32), sizes[gid].astype(np.int32)
