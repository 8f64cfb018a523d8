"""Several runs aligned on their (query, document) pairs, for fusion.

Every pair that any run returned is one row, sorted by query (the qrels' order: ids as
strings) then document id (byte order). For each run, a column holds the pair's score and one
its rank in that run (NaN where the run did not return the document), and per query the length
of the run's list. A run's ranks follow a tie rule (``trec``: score descending, then document
id descending, as trec_eval ranks; ``docid_asc``; ``input``: file order), so that rank-based
methods see the ranking an evaluation sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankwise.data import arrow, kernels
from rankwise.data.arrow import to_numpy
from rankwise.data.containers import Run
from rankwise.engine.align import _found_or_minus_one, join_keys
from rankwise.errors import InputError, RankwiseError
from rankwise.fusion.order import ranks_within_query, unique_inverse

TIES = ("trec", "docid_asc", "input")


@dataclass
class PairTable:
    """Runs aligned on (query, document) pairs; arrays of [pairs, runs] unless said otherwise."""

    query_ids: np.ndarray
    """Distinct query ids (object array of str), sorted."""
    doc_ids: pa.Array
    """Distinct document ids, in byte order."""
    query: np.ndarray
    """Each pair's query (index into ``query_ids``); pairs are sorted by it."""
    doc: np.ndarray
    """Each pair's document (index into ``doc_ids``)."""
    score: np.ndarray
    rank: np.ndarray
    lengths: np.ndarray
    """[queries, runs]: how many documents each run returned for each query."""
    runs: list[Run] = field(default_factory=list)
    """The runs aligned (trained methods evaluate them)."""
    labels: np.ndarray | None = None
    """Each pair's label in training qrels (NaN: not judged), for trained methods."""
    trained_queries: np.ndarray | None = None
    """Whether each query has training judgments."""
    train_qrels: Any = None
    """The training qrels as given (trained methods evaluate the runs on them)."""

    @property
    def names(self) -> list[str]:
        """The runs' names, in order."""
        return [r.name for r in self.runs]

    @property
    def starts(self) -> np.ndarray:
        """First pair of each query (queries with no pair do not occur)."""
        return np.searchsorted(self.query, np.arange(len(self.query_ids)))

    def candidates(self) -> np.ndarray:
        """Per query, how many distinct documents the runs returned together."""
        return np.bincount(self.query, minlength=len(self.query_ids))


def _codes(values: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Codes of ``values`` in their sorted (byte order) distinct values, and those values."""
    encoded: Any = kernels.dictionary_encode(values)
    chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    dictionary = chunks[0].dictionary if chunks else pa.array([], pa.string())
    if any(not c.dictionary.equals(dictionary) for c in chunks[1:]):  # one dictionary per chunk
        encoded = kernels.dictionary_encode(values.combine_chunks() if isinstance(values, pa.ChunkedArray)
                                            else values)
        chunks, dictionary = [encoded], encoded.dictionary
    order = to_numpy(kernels.sort_indices(pa.table({"v": dictionary}), [("v", "ascending")]), np.int64)
    rank_of = np.empty(len(order), dtype=np.int64)
    rank_of[order] = np.arange(len(order))
    codes = np.concatenate([to_numpy(c.indices, np.int64) for c in chunks]) if chunks else np.zeros(0, np.int64)
    return rank_of[codes], kernels.take(dictionary, arrow.indices(order))


def _block_codes(values: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """``_codes`` for values that come in runs of equal values (a run's query ids): only the
    first value of each run of equal values is encoded, then repeated.

    >>> codes, vocab = _block_codes(pa.chunked_array([["q2", "q2", "q1"], ["q1", "q2"]]))
    >>> codes.tolist(), vocab.to_pylist()
    ([1, 1, 0, 0, 1], ['q1', 'q2'])
    """
    firsts, lengths = [], []
    for chunk in _chunks(values):
        n = len(chunk)
        if n == 0:
            continue
        same = to_numpy(kernels.equal(chunk.slice(1), chunk.slice(0, n - 1)), bool) if n > 1 else np.zeros(0, bool)
        starts = np.flatnonzero(np.concatenate([[True], ~same]))
        firsts.append(kernels.take(chunk, arrow.indices(starts)))
        lengths.append(np.diff(np.append(starts, n)))
    if not firsts:
        return _codes(values)
    codes, vocab = _codes(pa.chunked_array(firsts, type=values.type))
    return np.repeat(codes, np.concatenate(lengths)), vocab


def pair_table(runs: list[Run], ties: str = "trec", given_ranks: list[np.ndarray | None] | None = None,
               input_depth: int | None = None) -> PairTable:
    """Align ``runs`` on their (query, document) pairs; a run listing a document twice for one
    query is an error naming the run's file and line. ``given_ranks`` replaces a run's ranks
    (e.g. its file's rank column); ``input_depth`` keeps each run's first ranks only.

    >>> a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="a")
    >>> b = Run.from_dict({"q1": {"d2": 5.0, "d3": 4.0}}, name="b")
    >>> t = pair_table([a, b])
    >>> t.doc_ids.to_pylist(), t.rank.tolist()
    (['d1', 'd2', 'd3'], [[1.0, nan], [2.0, 1.0], [nan, 2.0]])
    """
    if ties not in TIES:
        raise RankwiseError(f"ties={ties!r}: expected one of {', '.join(TIES)}")
    if len(runs) < 2:
        raise RankwiseError(f"fusion needs at least two runs, got {len(runs)}")
    queries = pa.chunked_array([c for r in runs for c in _chunks(r.query)], type=pa.string())
    docs = pa.chunked_array([c for r in runs for c in _chunks(r.doc)], type=pa.string())
    qcode, query_vocab = _block_codes(queries)
    dcode, doc_vocab = _codes(docs)
    bounds = np.cumsum([0] + [len(r) for r in runs])
    ranks = []
    for i, run in enumerate(runs):
        q, d = qcode[bounds[i]: bounds[i + 1]], dcode[bounds[i]: bounds[i + 1]]
        given = None if given_ranks is None else given_ranks[i]
        if given is not None:
            ranks.append(np.asarray(given, dtype=np.float64))
            continue
        ranks.append(ranks_within_query(q, run.score, -d if ties == "trec" else d, ties == "input"))
    kept = None if input_depth is None else np.concatenate(ranks) <= input_depth
    keys = join_keys(qcode, dcode, len(doc_vocab))
    every_key, row_pair = unique_inverse(keys)
    del keys
    for i, run in enumerate(runs):  # a repeated pair within a run: an error, before anything is dropped
        _refuse_duplicates(run, row_pair[bounds[i]: bounds[i + 1]], len(every_key))
    if kept is not None:  # pairs no run keeps any more go
        used = np.zeros(len(every_key), dtype=bool)
        used[row_pair[kept]] = True
        renumber = np.cumsum(used) - 1
        every_key, row_pair = every_key[used], np.where(kept, renumber[row_pair], -1)
    pair_keys = every_key
    n_docs = max(len(doc_vocab), 1)
    n_pairs, n_runs = len(pair_keys), len(runs)
    score = np.full((n_pairs, n_runs), np.nan)
    rank = np.full((n_pairs, n_runs), np.nan)
    lengths = np.zeros((len(query_vocab), n_runs), dtype=np.int64)
    for i, run in enumerate(runs):
        part = slice(bounds[i], bounds[i + 1])
        use = slice(None) if kept is None else kept[part]
        rows = row_pair[part][use]
        score[rows, i] = run.score[use]
        rank[rows, i] = ranks[i][use]
        lengths[:, i] = np.bincount(qcode[part][use], minlength=len(query_vocab))
    query_ids = np.asarray(query_vocab.to_pylist(), dtype=object)
    return PairTable(query_ids, doc_vocab, pair_keys // n_docs, pair_keys % n_docs, score, rank, lengths,
                     list(runs))


def attach_labels(table: PairTable, qrels: Any) -> None:
    """Set ``table.labels`` (each pair's label in ``qrels``, NaN where not judged),
    ``table.trained_queries`` (queries with judgments) and ``table.train_qrels``, for methods
    trained on qrels.

    >>> t = pair_table([Run.from_dict({"q1": {"a": 2.0}, "q2": {"b": 1.0}}), Run.from_dict({"q1": {"b": 1.0}})])
    >>> attach_labels(t, {"q1": {"b": 2}})
    >>> t.labels.tolist(), t.trained_queries.tolist()
    ([nan, 2.0, nan], [True, False])
    """
    from rankwise.data.load import load_qrels

    judged = load_qrels(qrels)
    position = {q: i for i, q in enumerate(table.query_ids.tolist())}
    qcode = np.array([position.get(q, -1) for q in judged.query.to_pylist()], dtype=np.int64)
    dcode = _found_or_minus_one(kernels.index_in(judged.doc, table.doc_ids)).astype(np.int64)
    trained = np.zeros(len(table.query_ids), dtype=bool)
    trained[qcode[qcode >= 0]] = True
    n_docs = max(len(table.doc_ids), 1)
    pair_keys = table.query * n_docs + table.doc
    ok = (qcode >= 0) & (dcode >= 0)
    keys = qcode[ok] * n_docs + dcode[ok]
    at = np.searchsorted(pair_keys, keys)
    found = (at < len(pair_keys)) & (pair_keys[np.minimum(at, len(pair_keys) - 1)] == keys)
    labels = np.full(len(pair_keys), np.nan)
    labels[at[found]] = np.asarray(judged.label, dtype=np.float64)[ok][found]
    table.labels, table.trained_queries, table.train_qrels = labels, trained, qrels



def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    return [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c for c in chunks]


def _refuse_duplicates(run: Run, pairs: np.ndarray, n_pairs: int) -> None:
    """An error naming the first row of ``run`` whose (query, document) pair (``pairs``: one
    pair number per row) an earlier row already had."""
    if not len(pairs) or int(np.bincount(pairs, minlength=n_pairs).max()) < 2:
        return
    seen = np.zeros(n_pairs, dtype=np.int64) - 1
    for row, pair in enumerate(pairs.tolist()):  # only when a pair repeats: find the first one
        if seen[pair] >= 0:
            first, second = int(seen[pair]), row
            break
        seen[pair] = row
    line = int(run.lines[second]) if run.lines is not None else second + 1
    first_line = int(run.lines[first]) if run.lines is not None else first + 1
    raise InputError(f"document {run.doc[second].as_py()!r} is listed twice for query "
                     f"{run.query[second].as_py()!r} (first at line {first_line}); fusion needs one score "
                     "per (query, document)", source=run.source, line=line, field="doc")
