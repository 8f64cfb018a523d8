"""Stored click logs: a directory of fixed-width binary columns that a fit streams chunk by
chunk, so a log larger than memory can be fitted with memory bounded by the chunk size.

Layout (all little-endian): ``query.i32`` (sessions), ``pairs.i32`` (sessions x ranks, -1 for
padding), ``clicks.i8`` (sessions x ranks), ``pair_query.i32`` and ``pair_doc.i32`` (one per
(query, document) pair, sorted by query then document code), and ``log.json`` with the
sizes, the query and document ids and the reader's notes.

>>> import tempfile
>>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b", "a"]], [[1, 0], [0, 0]])
>>> folder = tempfile.mkdtemp()
>>> save_log(log, folder)
>>> stored = open_log(folder)
>>> stored.sessions, stored.ranks, stored.load().clicks.tolist()
(2, 2, [[1, 0], [0, 0]])
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog, piece_of
from rankwise.data.distinct import union
from rankwise.errors import InputError

FORMAT = "rankwise-click-log"
SHIFT = np.int64(1 << 32)


class _Discarded(Exception):
    """Ends a writer's temporary directory without moving it into place (``LogWriter.discard``)."""


class LogWriter:
    """Appends click logs (each with its own vocabularies) to a stored log; ``close()``
    numbers the (query, document) pairs in one more pass over the written sessions.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with LogWriter(folder, ranks=2) as writer:
    ...     writer.append(ClickLog.from_arrays(["q"], [["a", "b"]], [[0, 1]]))
    ...     writer.append(ClickLog.from_arrays(["r"], [["a"]], [[1]]))
    >>> open_log(folder).n_pairs
    3
    """

    def __init__(self, directory: str | os.PathLike[str], ranks: int) -> None:
        from contextlib import ExitStack

        from rankwise.data.atomic import atomic_directory
        from rankwise.errors import OutputError

        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise OutputError(f"{self.directory}: exists and is not a directory; a stored log is a directory (or give "
                              "the output a .parquet, .csv or .tsv suffix)")
        self._stack = ExitStack()   # the log is written beside its place and moved there whole by close()
        self._building = self._stack.enter_context(atomic_directory(self.directory, "log.json", "stored click log"))
        self.ranks = int(ranks)
        self.query_ids: list[str] = []
        self.doc_ids: list[str] = []
        self._query_code: dict[str, int] = {}
        self._doc_code: dict[str, int] = {}
        self.sessions = 0
        self.notes: list[str] = []
        self._files = {name: open(self._building / name, "wb") for name in ("query.i32", "keys.tmp", "clicks.i8")}

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.close()
        else:   # an error while appending: nothing is left, the directory stays as it was
            self._drop(exc[1])

    def discard(self) -> None:
        """Drop what was written: the directory is left as it was."""
        self._drop(_Discarded("the log was discarded"))

    def _drop(self, error: BaseException) -> None:
        for handle in self._files.values():
            handle.close()
        self._stack.__exit__(type(error), error, error.__traceback__)   # the temporary directory goes

    def _map(self, ids: list[str], codes: dict[str, int], into: list[str]) -> np.ndarray:
        out = np.empty(len(ids), dtype=np.int64)
        for i, name in enumerate(ids):
            code = codes.get(name)
            if code is None:
                code = codes[name] = len(into)
                into.append(name)
            out[i] = code
        return out

    def append(self, log: ClickLog) -> None:
        """Add the sessions of ``log`` (at most ``ranks`` wide)."""
        if log.ranks > self.ranks:
            raise InputError(f"a log of {log.ranks} ranks does not fit a stored log of {self.ranks}", field="ranks")
        query = self._map(log.query_ids, self._query_code, self.query_ids)
        doc = self._map(log.doc_ids, self._doc_code, self.doc_ids)
        pair_key = np.append(query[log.pair_query] * SHIFT + doc[log.pair_doc], -1)
        keys = np.full((log.sessions, self.ranks), -1, dtype=np.int64)
        keys[:, :log.ranks] = np.where(log.mask, pair_key[log.pairs], -1)
        clicks = np.zeros((log.sessions, self.ranks), dtype=np.int8)
        clicks[:, :log.ranks] = log.clicks
        self._files["query.i32"].write(query[log.query].astype("<i4").tobytes())
        self._files["keys.tmp"].write(keys.astype("<i8").tobytes())
        self._files["clicks.i8"].write(clicks.tobytes())
        self.sessions += log.sessions
        self.notes.extend(log.notes)

    def close(self, chunk_size: int = 1_000_000) -> None:
        """Number the pairs, write ``pairs.i32``, ``pair_query.i32``, ``pair_doc.i32`` and
        ``log.json``, and move the log to its directory, whole (an error leaves none)."""
        if self._files["query.i32"].closed:
            return
        for handle in self._files.values():
            handle.close()
        try:
            self._finish(self._building, chunk_size)
        except BaseException as error:
            self._drop(error)
            raise
        self._stack.close()

    def _finish(self, folder: Path, chunk_size: int) -> None:
        keys_path = folder / "keys.tmp"
        unique = np.empty(0, dtype=np.int64)
        for keys in _read_rows(keys_path, "<i8", self.ranks, self.sessions, chunk_size):
            unique = union(unique, keys[keys >= 0])
        if len(unique) >= 2**31:
            raise InputError("more than 2^31 (query, document) pairs", field="pairs")
        with open(folder / "pairs.i32", "wb") as out:
            for keys in _read_rows(keys_path, "<i8", self.ranks, self.sessions, chunk_size):
                pairs = np.where(keys >= 0, np.searchsorted(unique, keys), -1)
                out.write(pairs.astype("<i4").tobytes())
        keys_path.unlink()
        (unique // SHIFT).astype("<i4").tofile(folder / "pair_query.i32")
        (unique % SHIFT).astype("<i4").tofile(folder / "pair_doc.i32")
        meta = {"format": FORMAT, "version": 1, "sessions": self.sessions, "ranks": self.ranks,
                "pairs": int(len(unique)), "query_ids": self.query_ids, "doc_ids": self.doc_ids, "notes": self.notes}
        (folder / "log.json").write_text(json.dumps(meta))


def _read_rows(path: Path, dtype: str, width: int, rows: int, chunk_size: int,
               start: int = 0, stop: int | None = None) -> Iterator[np.ndarray]:
    """Rows ``start:stop`` of a fixed-width binary file, ``chunk_size`` rows at a time (read,
    not memory-mapped, so only the chunk is resident)."""
    item = np.dtype(dtype).itemsize * width
    stop = rows if stop is None else stop
    with open(path, "rb") as handle:
        for first in range(start, stop, max(int(chunk_size), 1)):
            count = min(int(chunk_size), stop - first)
            handle.seek(first * item)
            yield np.fromfile(handle, dtype=dtype, count=count * width).reshape(count, width) if width > 1 \
                else np.fromfile(handle, dtype=dtype, count=count)


def save_log(log: ClickLog, directory: str | os.PathLike[str]) -> None:
    """Write ``log`` as a stored log in ``directory``."""
    with LogWriter(directory, ranks=log.ranks) as writer:
        writer.append(log)


def write_log(logs: Iterable[ClickLog], directory: str | os.PathLike[str], ranks: int) -> StoredClickLog:
    """Write a stream of logs (say, simulated or read piece by piece) as one stored log."""
    with LogWriter(directory, ranks=ranks) as writer:
        for log in logs:
            writer.append(log)
    return open_log(directory)


class StoredClickLog:
    """A stored log: sizes and vocabularies in memory, sessions read chunk by chunk."""

    def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
        self.directory = directory
        self.sessions = int(meta["sessions"])
        self.ranks = int(meta["ranks"])
        self.query_ids: list[str] = meta["query_ids"]
        self.doc_ids: list[str] = meta["doc_ids"]
        self.notes: list[str] = list(meta.get("notes", []))
        self.pair_query = np.fromfile(directory / "pair_query.i32", dtype="<i4").astype(np.int64)
        self.pair_doc = np.fromfile(directory / "pair_doc.i32", dtype="<i4").astype(np.int64)
        if len(self.pair_query) != int(meta["pairs"]):
            raise InputError(f"expected {meta['pairs']} pairs, the file has {len(self.pair_query)}",
                             source=str(directory / "pair_query.i32"))

    @property
    def n_pairs(self) -> int:
        return int(len(self.pair_query))

    @property
    def nbytes(self) -> int:
        """The bytes of the stored columns (query, pairs and clicks of every session)."""
        return self.sessions * (4 + 5 * self.ranks)

    keep_in_memory: bool | None = None
    """Whether ``chunks`` keeps what it read for the next pass over the whole log (EM reads the
    log once per iteration): None decides by size, keeping a log whose columns take at most an
    eighth of the machine's memory; False always reads from disk (memory bounded by the chunk)."""

    def _keeps(self) -> bool:
        if self.keep_in_memory is not None:
            return self.keep_in_memory
        from rankwise.data.limits import physical_memory

        return self.nbytes <= physical_memory() // 8

    def chunks(self, size: int, start: int = 0, stop: int | None = None) -> Iterator[ClickLog]:
        """Sessions ``start:stop`` as logs of at most ``size`` sessions (no ``docs`` array).
        A pass over the whole log is read from disk once and then from memory when the log
        is kept (``keep_in_memory``)."""
        whole = start == 0 and stop is None and self._keeps()
        cache = getattr(self, "_kept", None)
        if whole and cache is not None and cache[0] == size:
            reads: Any = iter(cache[1])
        else:
            reads = zip(_read_rows(self.directory / "query.i32", "<i4", 1, self.sessions, size, start, stop),
                        _read_rows(self.directory / "pairs.i32", "<i4", self.ranks, self.sessions, size, start, stop),
                        _read_rows(self.directory / "clicks.i8", "<i1", self.ranks, self.sessions, size, start, stop),
                        strict=True)
            if whole:
                kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
                reads = _keeping(reads, kept, lambda: setattr(self, "_kept", (size, kept)))
        first = start
        for query, pairs, clicks in reads:
            self._check(query, pairs, clicks, first)
            first += len(query)
            yield piece_of(self, query.astype(np.int64), None, pairs, clicks, pairs >= 0)

    def _check(self, query: np.ndarray, pairs: np.ndarray, clicks: np.ndarray, first: int) -> None:
        """Every stored value in range: clicks 0 or 1, query and pair codes among those stored."""
        checks = (("clicks.i8", (clicks != 0) & (clicks != 1), clicks, "a click of 0 or 1"),
                  ("query.i32", ((query < 0) | (query >= len(self.query_ids))).reshape(len(query), -1), query,
                   f"a query code in [0, {len(self.query_ids)})"),
                  ("pairs.i32", (pairs < -1) | (pairs >= self.n_pairs), pairs, f"a pair code in [-1, {self.n_pairs})"))
        for name, bad, values, expected in checks:
            if bad.any():
                row, column = (int(i[0]) for i in np.nonzero(bad))
                value = values.reshape(bad.shape)[row, column]
                raise InputError(f"session {first + row + 1}, rank {column + 1}: {int(value)}; expected {expected}",
                                 source=str(self.directory / name))

    def load(self) -> ClickLog:
        """The whole log in memory (with ``docs``)."""
        pieces = list(self.chunks(max(self.sessions, 1)))
        query, pairs, clicks = (np.concatenate([getattr(p, a) for p in pieces]) for a in ("query", "pairs", "clicks"))
        pairs = pairs.astype(np.int64)
        docs = np.append(self.pair_doc, -1)[pairs]
        log = piece_of(self, query, docs, pairs, clicks, pairs >= 0)   # the stored pair numbering, kept
        log.notes = list(self.notes)
        return log


def _keeping(reads: Iterator[Any], kept: list[Any], done: Any) -> Iterator[Any]:
    """``reads`` passed on and kept; ``done()`` once the pass is complete (a pass stopped
    halfway keeps nothing)."""
    for item in reads:
        kept.append(item)
        yield item
    done()


def open_log(directory: str | os.PathLike[str]) -> StoredClickLog:
    """A stored log written by ``save_log``, ``write_log`` or ``rankwise clicks convert``."""
    directory = Path(directory)
    meta_path = directory / "log.json"
    if not meta_path.exists():
        raise InputError("not a stored click log (no log.json)", source=str(directory))
    from rankwise.data.documents import read_document

    meta = read_document(meta_path)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"expected format {FORMAT!r}, got {meta.get('format') if isinstance(meta, dict) else meta!r}",
                         source=str(meta_path), field="format")
    for key, kind in (("sessions", int), ("ranks", int), ("pairs", int), ("query_ids", list), ("doc_ids", list)):
        if not isinstance(meta.get(key), kind) or (kind is int and meta[key] < 0):
            raise InputError(f"expected {'a count' if kind is int else 'a list'}, got {meta.get(key)!r}",
                             source=str(meta_path), field=key)
    return StoredClickLog(directory, meta)
