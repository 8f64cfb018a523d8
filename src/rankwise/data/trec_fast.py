"""The fast path for regular TREC files: Arrow's multithreaded CSV parser, piece by piece.

A regular file has its fields separated by exactly one space (or one tab), no comment lines, no
empty fields, no other whitespace byte. The file is read in pieces of whole lines; each piece is
parsed by Arrow on every core, checked, and only the columns an evaluation needs are kept (the
``Q0`` and rank fields are never converted: a byte scan, one piece ahead on its own thread,
checks that none is empty; the next piece is parsed while the caller takes in the one before;
the run tags go once reduced to their distinct values; ids are parsed as bytes and become text
by one ASCII check per piece, or a UTF-8 check when a piece holds other bytes). Memory stays
near the size of the kept columns, not of the file, and the file's pages never count in the
process.

Anything irregular makes :func:`read_regular` return None; the caller then reads the file with
the careful line reader, which also writes the precise error messages.
"""

from __future__ import annotations

import itertools
import mmap
import os
import zlib
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rankwise.data import arrow
from rankwise.data.arrow import offsets as value_offsets
from rankwise.data.arrow import to_numpy

PIECE_BYTES = 1 << 25
"""Bytes of whole lines parsed at a time (Arrow splits each piece into blocks for its threads)."""
_BLOCK_BYTES = 1 << 22
FIRST_PIECE_BYTES = 1 << 20
"""Bytes of the first piece of a mapped file (:func:`_mapped_pieces`)."""



class _ReadsInto(Protocol):
    """A binary stream that fills a buffer (a file, a gzip stream)."""

    def readinto(self, buffer: memoryview, /) -> int: ...


class GrowingArray:
    """A NumPy array filled chunk by chunk. Its capacity is a generous estimate: pages never
    written are never part of the process, so the slack costs nothing; past it, it grows.

    >>> g = GrowingArray(np.float64, 2)
    >>> g.extend(pa.chunked_array([[1.0, 2.0], [3.0]])); g.values().tolist()
    [1.0, 2.0, 3.0]
    """

    def __init__(self, dtype: type, capacity: int) -> None:
        self._data: np.ndarray = np.empty(max(capacity, 1), dtype=dtype)
        self._size = 0

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` values in all (copying what is there if needed)."""
        if capacity > len(self._data):
            grown = np.empty(capacity, dtype=self._data.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown

    def extend(self, column: pa.ChunkedArray) -> None:
        needed = self._size + len(column)
        if needed > len(self._data):
            self.reserve(needed * 3 // 2)
        for chunk in column.chunks:
            self._data[self._size: self._size + len(chunk)] = to_numpy(chunk)
            self._size += len(chunk)

    def values(self) -> np.ndarray:
        return self._data[: self._size]


@dataclass
class RegularColumns:
    """The kept columns of a regular file, as Arrow chunks per column, and the distinct values
    of the dropped ``distinct`` column in order of first appearance (the run tags)."""

    chunks: dict[str, list[pa.Array]]
    numbers: dict[str, GrowingArray] = field(default_factory=dict)
    """Numeric kept columns, copied into NumPy piece by piece (Arrow's memory is reused)."""
    distinct: list[str] = field(default_factory=list)
    last: str | None = None
    """The value of the ``distinct`` column on the last line."""

    def column(self, name: str) -> pa.ChunkedArray:
        return pa.chunked_array(self.chunks[name], type=self.chunks[name][0].type)

    def array(self, name: str) -> np.ndarray:
        """A numeric column as one NumPy array (the pieces are released as it is built)."""
        return self.numbers.pop(name).values()


@dataclass
class Piece:
    """Whole lines of a file: ``data`` (for Arrow) is ``raw[start:end]`` (for byte searches)."""

    data: pa.Buffer
    raw: mmap.mmap | bytearray
    start: int
    end: int

    def release(self) -> None:
        """Drop a mapped piece's pages from the process once it is parsed (they stay in the
        system's page cache), so the file never counts in its memory."""
        if isinstance(self.raw, mmap.mmap):
            page = self.start - self.start % mmap.PAGESIZE
            size = self.end - page
            self.raw.madvise(mmap.MADV_DONTNEED, page, size - size % mmap.PAGESIZE)


def _pieces(path: str | os.PathLike[str], size: int) -> Generator[Piece, None, None]:
    """The file (gunzipped if needed) in pieces of about ``size`` bytes that end at a line end;
    a piece is valid until the next one is asked for."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
        if not gzipped:
            if os.fstat(f.fileno()).st_size:
                yield from _mapped_pieces(f.fileno(), size)
            return
    from rankwise.data.limits import current, open_source

    with open_source(path) as g:   # truncated, corrupt or bomb gzip: an InputError naming the file
        yield from _read_pieces(g, size, str(path), current().max_line_bytes)


def _mapped_pieces(fileno: int, size: int) -> Iterator[Piece]:
    """Pieces of a mapped file (the caller drops each one's pages once parsed: ``Piece.release``);
    any number of them stay valid until the next file is read. In a file of more than one
    piece the first pieces are smaller (``FIRST_PIECE_BYTES``, then twice as large each time,
    up to ``size``): the parse starts after the byte scan of a small piece, and each later piece
    is scanned while the one before is parsed. A smaller file is one piece (a parse call each
    would cost more than the scan it waits for)."""
    mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
    try:
        whole = pa.py_buffer(mapped)
        start, total = 0, len(mapped)
        step = min(size, FIRST_PIECE_BYTES) if total > size else size
        while start < total:
            end = total if start + step >= total else mapped.rfind(b"\n", start, start + step) + 1
            if end <= start:  # a line longer than a piece
                end = mapped.find(b"\n", start + step) + 1 or total
            yield Piece(whole.slice(start, end - start), mapped, start, end)
            start = end
            step = min(2 * step, size)
        del whole
    finally:
        try:
            mapped.close()
        except BufferError:
            pass  # a buffer still views the mapping: it closes when the last one goes


def _read_pieces(f: _ReadsInto, size: int, source: str = "<input>", max_line: int | None = None) -> Iterator[Piece]:
    """Pieces read from a stream into one reused buffer (no fresh pages for each piece); a line
    longer than ``max_line`` bytes stops the reader (an endless stream without line ends)."""
    buffer = bytearray(size)
    view = memoryview(buffer)
    carry = 0
    while True:
        if max_line is not None and carry > max_line:
            from rankwise.data.limits import line_too_long

            raise line_too_long(source, max_line)
        if carry == len(buffer):  # one line longer than the buffer: a larger one (earlier
            # pieces may still view the old one, so it is replaced, not resized)
            buffer = buffer + bytes(len(buffer))
            view = memoryview(buffer)
        got = f.readinto(view[carry:])
        filled = carry + got
        if got == 0:
            if filled:
                yield Piece(pa.py_buffer(buffer)[:filled], buffer, 0, filled)
            return
        end = buffer.rfind(b"\n", 0, filled) + 1
        if end == 0:
            carry = filled
            continue
        yield Piece(pa.py_buffer(buffer)[:end], buffer, 0, end)
        carry = filled - end
        buffer[:carry] = buffer[end:filled]


_CHECKED_BYTES = 1 << 18
"""Bytes searched for every irregular byte in turn: the searches after the first find them in
the processor's cache (searching the whole piece for each byte in turn took twice as long)."""


def _scan_bytes(piece: Piece, delimiter: str, doubled: bool = False) -> tuple[bool, bool]:
    """Two answers from one pass over the piece, a cache-sized block at a time: whether it
    holds a byte trec_eval reads as a separator where Arrow does not (the other delimiter,
    ``\\v``, ``\\f``, a ``\\r`` that does not end a line) or a NUL byte, or, with ``doubled``,
    two delimiters in a row (an empty field); and whether it holds a ``#`` anywhere (only then
    can a line be a comment, and the first fields are checked).

    >>> raw = b"q1 Q0 d1 1 2.5 bm25\\n" * 20_000
    >>> _scan_bytes(Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ", doubled=True)
    (False, False)
    >>> raw = raw[:-9] + b"\\x0cbm#25\\n"     # a form feed and a # in the last line
    >>> _scan_bytes(Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ")
    (True, True)
    >>> raw = b"q1 Q0 d1 1 2.5 bm25\\n" * 20_000 + b"q1 Q0 d1  2.5 bm25\\n"   # an empty rank
    >>> _scan_bytes(Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ", doubled=True)
    (True, True)
    """
    data, start, n = piece.raw, piece.start, piece.end
    other = b"\t" if delimiter == " " else b" "
    separators = (other, b"\x0b", b"\x0c", b"\x00")
    values = np.frombuffer(data, dtype=np.uint8) if doubled else None
    code = ord(delimiter)
    carriage_return = hash_sign = False
    for block in range(start, n, _CHECKED_BYTES):
        end = min(block + _CHECKED_BYTES, n)
        if any(data.find(byte, block, end) >= 0 for byte in separators):
            return True, True
        if values is not None:   # a delimiter followed by a delimiter (blocks overlap by one byte)
            is_delimiter = values[block: min(end + 1, n)] == code
            if bool((is_delimiter[1:] & is_delimiter[:-1]).any()):
                return True, True
        carriage_return = carriage_return or data.find(b"\r", block, end) >= 0
        hash_sign = hash_sign or data.find(b"#", block, end) >= 0
    del values
    if not carriage_return:
        return False, hash_sign
    text = bytes(data[start:n])  # a file with \r: count them in a copy
    return text.count(b"\r") != text.count(b"\r\n"), hash_sign


def _starts_with_hash(arr: pa.Array) -> bool:
    """True if a value of a (dictionary) string array starts with ``#`` (a comment line)."""
    values = arr.dictionary if pa.types.is_dictionary(arr.type) else arr
    if not len(values) or values.buffers()[2] is None:
        return False
    offsets = value_offsets(values)
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)
    starts = offsets[:-1][offsets[1:] > offsets[:-1]]
    return bool((data[starts] == ord("#")).any())


def _distinct_values(arr: pa.Array) -> list[str]:
    """Distinct values of a binary array in order of first appearance (one memory comparison
    when every value is the same, the usual run tag).

    >>> _distinct_values(pa.array([b"a", b"b", b"a"])), _distinct_values(pa.array([b"bm25"] * 3))
    (['a', 'b'], ['bm25'])
    """
    offsets = value_offsets(arr)
    first = arr[0].as_py()
    if bool((np.diff(offsets) == len(first)).all()):
        data = arr.buffers()[2][int(offsets[0]): int(offsets[-1])]
        if data.equals(pa.py_buffer(first * len(arr))):
            return [first.decode("utf-8")]
    return list(dict.fromkeys(value.decode("utf-8") for value in arr.to_pylist()))


def read_regular(path: str | os.PathLike[str], names: tuple[str, ...], types: dict[str, pa.DataType],
                 delimiter: str, keep: tuple[str, ...], distinct: str | None = None,
                 piece_bytes: int = PIECE_BYTES) -> RegularColumns | None:
    """Parse a regular TREC file; None as soon as anything is irregular (or unreadable).

    ``types`` gives the Arrow type of each converted column (a column that is only checked is
    best read as ``binary``: no dictionary, no UTF-8 check; a middle field left out of ``types``
    is only checked, never converted: :func:`parsed_pieces`); ``keep`` names the columns
    returned; the values of column ``distinct`` are reduced to their distinct values in order.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("wb", suffix=".trec", delete=False)
    >>> _ = f.write(b"q1 Q0 d1 1 2.5 bm25\\nq1 Q0 d2 2 1.0 bm25\\n"); f.close()
    >>> names = ("query", "q0", "doc", "rank", "score", "tag")
    >>> types = {"query": pa.string(), "doc": pa.string(), "score": pa.float64(), "tag": pa.binary()}
    >>> cols = read_regular(f.name, names, types, " ", ("query", "doc", "score"), distinct="tag")
    >>> cols.column("doc").to_pylist(), cols.distinct
    (['d1', 'd2'], ['bm25'])
    >>> with open(f.name, "ab") as g: _ = g.write(b"q1 Q0 d3  0.5 bm25\\n")   # an empty rank
    >>> read_regular(f.name, names, types, " ", ("query", "doc", "score")) is None
    True
    >>> os.unlink(f.name)
    """
    numeric = {n for n, t in types.items() if pa.types.is_integer(t) or pa.types.is_floating(t)}
    out = RegularColumns({name: [] for name in keep if name not in numeric})
    seen: dict[str, None] = {}
    rows = 0
    total = os.path.getsize(path)
    pool = arrow.POOL
    pieces = parsed_pieces(path, names, types, delimiter, piece_bytes)
    try:
        for piece, table in pieces:
            if table is None:
                return None
            rows += table.num_rows
            for name in keep:
                if name in numeric:
                    if name not in out.numbers:  # rows of the file, estimated from the first piece
                        estimate = table.num_rows * (total // max(piece.end - piece.start, 1) + 1) * 5 // 4
                        out.numbers[name] = GrowingArray(arrow.NUMPY_TYPES[types[name]], estimate)
                    out.numbers[name].extend(table.column(name))
                else:
                    out.chunks[name].extend(c for c in table.column(name).chunks if len(c))
            if distinct is not None:
                for chunk in table.column(distinct).chunks:
                    if len(chunk):
                        seen.update(dict.fromkeys(_distinct_values(chunk)))
                        out.last = chunk[-1].as_py().decode("utf-8")
            del table  # its pages serve the next piece's parse
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, EOFError, OSError, zlib.error):
        return None  # the careful reader says what is wrong
    finally:
        piece = None  # type: ignore[assignment]  # the last piece's buffers go
        pieces.close()
        pool.release_unused()  # the last piece's scratch memory goes back to the system
    if rows == 0:
        return None
    out.distinct = list(seen)
    return out


def parsed_pieces(path: str | os.PathLike[str], names: tuple[str, ...], types: dict[str, pa.DataType],
                  delimiter: str, piece_bytes: int = PIECE_BYTES,
                  ) -> Generator[tuple[Piece, pa.Table | None], None, None]:
    """Each piece of whole lines of the file with its parsed table, or None for a piece that is
    not regular (the caller reads that piece with the careful line reader). A piece is valid
    until the next one is asked for; the tables own their memory.

    ``types`` gives the Arrow type of each column the table holds; a field of ``names`` not in
    ``types`` is only checked (it must not be empty) and never converted, which is most of the
    cost of a column: such fields must lie between the first and the last, where an empty one
    shows as two delimiters in a row.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("wb", suffix=".trec", delete=False)
    >>> _ = f.write(b"q1 0 d1 1\\nq1 0 d2 0\\n"); f.close()
    >>> [(p.end, t.column_names) for p, t in parsed_pieces(f.name, ("query", "it", "doc", "label"),
    ...     {"query": pa.string(), "doc": pa.string(), "label": pa.int64()}, " ")]
    [(20, ['query', 'doc', 'label'])]
    >>> os.unlink(f.name)
    """
    read_options = pacsv.ReadOptions(column_names=list(names), use_threads=True, block_size=_BLOCK_BYTES)
    parse_options = pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                       ignore_empty_lines=False)
    # an empty number is read as null, which Arrow counts as it converts; an empty string is
    # found from its offsets (:func:`_regular_table`: letting strings be null costs Arrow a
    # null-value test per string, a tenth of the parse). The file then goes to the careful reader
    # ids are parsed as bytes and checked as text per piece (:func:`_as_text`)
    text = [name for name, kind in types.items() if pa.types.is_string(kind)]
    convert_options = pacsv.ConvertOptions(column_types={n: pa.binary() if n in text else t for n, t in types.items()},
                                           strings_can_be_null=False, null_values=[""],
                                           include_columns=[n for n in names if n in types])
    doubled = len(types) < len(names)
    if names[0] not in types or names[-1] not in types:
        raise ValueError("only fields between the first and the last can be left unconverted")

    def parse(piece: Piece, irregular: bool, hash_sign: bool) -> pa.Table | None:
        if irregular:
            return None
        try:
            table = pacsv.read_csv(pa.BufferReader(piece.data), read_options=read_options,
                                   parse_options=parse_options, convert_options=convert_options,
                                   memory_pool=arrow.POOL)
            if not _regular_table(table, names[0], hash_sign):
                return None
            return _as_text(table, text)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
            return None

    pieces = _scanned(_pieces(path, piece_bytes), delimiter, doubled)
    try:
        yield from _parsed_ahead(pieces, parse)
    finally:
        pieces.close()


def _parsed_ahead(pieces: Iterator[tuple[Piece, tuple[bool, bool]]],
                  parse: Callable[[Piece, bool, bool], pa.Table | None],
                  ) -> Generator[tuple[Piece, pa.Table | None], None, None]:
    """Each piece with ``parse(piece, *scan)``, the next piece of a mapped file parsed while the
    caller takes in the one before (Arrow's threads would otherwise wait for it, and each parse
    call ends on one thread: on a 7-million-row run, 20 runs of each in turn, the median
    ``trec-eval`` fell from 0.99 s to 0.95 s, for 22 MB more at the peak); each piece is
    released once the caller is done with it.

    >>> raw = b"q1 Q0 d1 1 2.5 bm25\\n"
    >>> one = iter([(Piece(pa.py_buffer(raw), raw, 0, len(raw)), (False, False))])
    >>> [table for _, table in _parsed_ahead(one, lambda piece, irregular, hash_sign: piece.end)]
    [20]
    """
    for (piece, _), table in _each_worked(pieces, lambda item: parse(item[0], *item[1]),
                                             lambda item: item[0], "rankwise-parse"):
        yield piece, table
        piece.release()


Item = TypeVar("Item")
Result = TypeVar("Result")


def _each_worked(items: Iterator[Item], work: Callable[[Item], Result], piece_of: Callable[[Item], Piece],
                 thread: str) -> Generator[tuple[Item, Result], None, None]:
    """Each item with ``work(item)``. When the items hold pieces of a mapped file, the next
    item's work runs on a second thread (named ``thread``) while the caller takes in the one
    before, and a caller that stops early waits for it (the mapping must outlive it); pieces
    read into one reused buffer (a gzip stream) are worked in turn, as the next read overwrites
    the one before.

    >>> list(_each_worked(iter([]), len, lambda item: item, "demo"))
    []
    """
    first = next(items, None)
    if first is None or not isinstance(piece_of(first).raw, mmap.mmap):
        for item in itertools.chain([first] if first is not None else [], items):
            yield item, work(item)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread) as pool:
        current: Item | None = first
        done: Future[Result] | None = pool.submit(work, first)
        while current is not None and done is not None:
            following = next(items, None)
            ahead = None if following is None else pool.submit(work, following)
            yield current, done.result()
            current, done = following, ahead


def _scanned(pieces: Generator[Piece, None, None], delimiter: str, doubled: bool
             ) -> Generator[tuple[Piece, tuple[bool, bool]], None, None]:
    """Each piece with its :func:`_scan_bytes`. The pieces of a mapped file are scanned one
    ahead, on a second thread, while the caller parses the one before (the scan otherwise
    leaves a processor idle: an eighth of the read); the caller releases each piece once it is
    parsed (:func:`_parsed_ahead`). Pieces read into one reused buffer (a gzip stream) are
    scanned in turn.

    >>> raw = b"q1 Q0 d1 1 2.5 bm25\\n" * 3
    >>> one = (p for p in [Piece(pa.py_buffer(raw), raw, 0, len(raw))])
    >>> [scan for _, scan in _scanned(one, " ", True)]
    [(False, False)]
    """
    try:
        yield from _each_worked(pieces, lambda piece: _scan_bytes(piece, delimiter, doubled), lambda piece: piece,
                                "rankwise-scan")
    finally:
        pieces.close()  # the file is closed now, not when the generator is collected


def _regular_table(table: pa.Table, first: str, hash_sign: bool) -> bool:
    """No empty field (an empty number is read as null, an empty string has two equal offsets)
    and, if the piece holds a ``#`` (``hash_sign``), no comment line (a first field starting
    with ``#``).

    >>> _regular_table(pa.table({"query": ["q1", "q2"], "score": [1.0, 2.0]}), "query", False)
    True
    >>> _regular_table(pa.table({"query": ["q1", ""], "score": [1.0, 2.0]}), "query", False)
    False
    >>> _regular_table(pa.table({"query": ["q1", "#x"], "score": [1.0, None]}), "query", True)
    False
    """
    for column in table.columns:
        if column.null_count or (pa.types.is_string(column.type) or pa.types.is_binary(column.type)) \
                and any(_has_empty(chunk) for chunk in column.chunks):
            return False
    return not (hash_sign and any(_starts_with_hash(c) for c in table.column(first).chunks))


def _as_text(table: pa.Table, names: list[str]) -> pa.Table:
    """``table`` with its binary columns ``names`` as strings: a chunk of ASCII bytes is viewed
    as one (ASCII is UTF-8), any other is cast, which checks its UTF-8 (``ArrowInvalid`` if
    not). Arrow's parser checks UTF-8 value by value; one pass over the bytes is an eighth of
    that, and ids are nearly always ASCII.

    >>> table = pa.table({"doc": pa.array([b"d1", "d\\u00e9".encode()]), "n": [1, 2]})
    >>> _as_text(table, ["doc"]).column("doc").to_pylist() == ["d1", "d\\u00e9"]
    True
    >>> _as_text(pa.table({"doc": pa.array([b"\\xff"])}), ["doc"])
    Traceback (most recent call last):
    pyarrow.lib.ArrowInvalid: Invalid UTF8 payload
    """
    for name in names:
        column = table.column(name)
        chunks = [chunk.view(pa.string()) if _ascii(chunk) else chunk.cast(pa.string()) for chunk in column.chunks]
        table = table.set_column(table.schema.get_field_index(name), name, pa.chunked_array(chunks, pa.string()))
    return table


def _ascii(arr: pa.Array) -> bool:
    """True if the values of a binary array hold no byte above 0x7F.

    >>> beyond = pa.array([b"q1", b"d\\x80"])
    >>> _ascii(pa.array([b"q1", b"d\\x7f"])), _ascii(beyond), _ascii(beyond.slice(0, 1))
    (True, False, True)
    """
    data = arr.buffers()[2]
    if data is None:
        return True
    bounds = value_offsets(arr)
    first, last = int(bounds[0]), int(bounds[-1])
    return int(np.bitwise_or.reduce(np.frombuffer(data, dtype=np.uint8)[first:last])) < 0x80


def _has_empty(arr: pa.Array) -> bool:
    """True if a string or binary array holds an empty value (two equal offsets in a row)."""
    bounds = value_offsets(arr)
    return bool((bounds[1:] == bounds[:-1]).any())
