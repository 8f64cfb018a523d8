"""Input limits: no input makes a reader grow without bound.

- ``max_line_bytes`` (1 MiB, ``RANKWISE_MAX_LINE_BYTES``): a line without an end
  (``/dev/zero``, a binary file);
- ``max_input_bytes`` (half the machine's memory, ``RANKWISE_MAX_INPUT_BYTES``): an endless
  stream of lines (a device, a pipe that never closes);
- ``max_gzip_ratio`` (200, ``RANKWISE_MAX_GZIP_RATIO``): a ``.gz`` that expands far beyond
  text (a 3 MB file of 3 GB of zeros).

Text runs and qrels compress 4-15 times; the ratio is checked once 64 MiB have been
decompressed, so small files are never refused. Each limit is read from its environment
variable when a reader starts (``0`` turns it off), and a reader past one stops with an
``InputError`` naming the file, the limit and the variable that raises it.

>>> current().max_line_bytes
1048576
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from rankwise.errors import InputError

RATIO_CHECKED_AFTER = 64 * 2**20


def physical_memory() -> int:
    """The machine's memory in bytes (32 GiB when the system does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 32 * 2**30


def _half_the_memory() -> int:
    return physical_memory() // 2


@dataclass(frozen=True)
class Limits:
    """The limits a reader checks (see the module)."""

    max_line_bytes: int = 2**20
    max_input_bytes: int = 16 * 2**30
    max_gzip_ratio: float = 200.0


def _env(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{name}={text!r}: expected a number (0 turns the limit off)") from None
    return float("inf") if value == 0 else value


def current() -> Limits:
    """The limits in force (the environment's, else the defaults)."""
    base = Limits()
    return Limits(int(min(_env("RANKWISE_MAX_LINE_BYTES", base.max_line_bytes), 2**62)),
                  int(min(_env("RANKWISE_MAX_INPUT_BYTES", _half_the_memory()), 2**62)),
                  _env("RANKWISE_MAX_GZIP_RATIO", base.max_gzip_ratio))


def line_too_long(source: str, limit: int) -> InputError:
    return InputError(f"a line longer than {limit} bytes without a line end: not a text file of lines (raise "
                      "RANKWISE_MAX_LINE_BYTES if it really is one)", source=source)


def check_size(source: str, decompressed: int, compressed: int | None, limits: Limits) -> None:
    """Refuse input past ``max_input_bytes``, or a gzip stream expanding past ``max_gzip_ratio``.

    >>> check_size("bomb.gz", 3 * 2**30, 3 * 2**20, Limits())
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: bomb.gz: the gzip data expands more than 200 times (3221225472 bytes from \
3145728 so far); not a text file (raise RANKWISE_MAX_GZIP_RATIO if it really is one)
    """
    if decompressed > limits.max_input_bytes:
        raise InputError(f"more than {limits.max_input_bytes} bytes of input (an endless stream?); raise "
                         "RANKWISE_MAX_INPUT_BYTES to read more", source=source)
    if compressed and decompressed > RATIO_CHECKED_AFTER and decompressed > limits.max_gzip_ratio * compressed:
        raise InputError(f"the gzip data expands more than {limits.max_gzip_ratio:g} times ({decompressed} bytes "
                         f"from {compressed} so far); not a text file (raise RANKWISE_MAX_GZIP_RATIO if it really "
                         "is one)", source=source)


class LineWatch:
    """Follows the length of the line being read across chunks of a stream."""

    def __init__(self, source: str, limit: int) -> None:
        self.source, self.limit, self.open = source, limit, 0

    def see(self, chunk: bytes) -> None:
        if self.limit >= 2**62:
            return
        import numpy as np

        ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        if not len(ends):
            self.open += len(chunk)
        else:
            longest = max(self.open + int(ends[0]), int(np.diff(ends).max()) - 1 if len(ends) > 1 else 0)
            self.open = len(chunk) - int(ends[-1]) - 1
            if longest > self.limit:
                raise line_too_long(self.source, self.limit)
        if self.open > self.limit:
            raise line_too_long(self.source, self.limit)


def read_bounded(f: BinaryIO, source: str, limits: Limits | None = None, lines: bool = True) -> bytes:
    """All of ``f`` (a file, a device, a pipe), stopping past ``max_input_bytes`` or at a line
    longer than ``max_line_bytes`` (``/dev/zero`` stops after 1 MiB).

    >>> with open("/dev/zero", "rb") as f:
    ...     read_bounded(f, "/dev/zero")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: /dev/zero: a line longer than 1048576 bytes without a line end: ...
    """
    limits = limits or current()
    chunks: list[bytes] = []
    total = 0
    watch = LineWatch(source, limits.max_line_bytes if lines else 2**62)
    while True:
        chunk = f.read(min(4 * 2**20, limits.max_input_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        check_size(source, total, None, limits)
        watch.see(chunk)


def gunzip_bounded(data: bytes, source: str, limits: Limits | None = None, lines: bool = True) -> bytes:
    """``gzip.decompress(data)`` (every member), stopping past the size or ratio limit."""
    import zlib

    limits = limits or current()
    step = 4 * 2**20
    out: list[bytes] = []
    total = 0
    watch = LineWatch(source, limits.max_line_bytes if lines else 2**62)
    rest = data
    while rest:
        engine = zlib.decompressobj(16 + zlib.MAX_WBITS)
        before = len(data) - len(rest)       # compressed bytes of the earlier members
        tail = rest
        while True:
            piece = engine.decompress(tail, step)
            out.append(piece)
            total += len(piece)
            check_size(source, total, before + len(rest) - len(engine.unconsumed_tail), limits)
            watch.see(piece)
            tail = engine.unconsumed_tail
            if engine.eof or (not piece and not tail):
                break
        if not engine.eof:
            raise EOFError("Compressed file ended before the end-of-stream marker was reached")
        rest = engine.unused_data.lstrip(b"\x00")   # gzip allows padding between members
    return b"".join(out)


__all__ = ["Limits", "check_size", "current", "gunzip_bounded", "line_too_long", "read_bounded"]


class CheckedStream:
    """A file opened by ``open_source``: reads as the file object it wraps, and a gzip stream
    that ends early or is corrupt, or that decompresses past the size or ratio limit, raises an
    ``InputError`` naming the file (never ``EOFError`` or ``zlib.error``)."""

    def __init__(self, handle: Any, raw: Any, source: str, gzipped: bool) -> None:
        self._handle, self._raw, self.source, self.gzipped = handle, raw, source, gzipped
        self._limits = current()
        self._out = 0

    def _checked(self, call: Callable[[], Any]) -> Any:
        import zlib

        try:
            got = call()
        except (EOFError, zlib.error) as exc:
            raise InputError(f"the gzip data is truncated or corrupt ({exc})", source=self.source) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid UTF-8 (byte {exc.object[exc.start]:#04x}); expected UTF-8 text",
                             source=self.source) from None
        except OSError as exc:   # gzip.BadGzipFile, and a read error of the file itself
            if self.gzipped and not isinstance(exc, (FileNotFoundError, PermissionError)):
                raise InputError(f"the gzip data is truncated or corrupt ({exc})", source=self.source) from None
            raise InputError(f"cannot read the file ({exc.strerror or exc})", source=self.source) from None
        if self.gzipped and got:
            self._out += got if isinstance(got, int) else sum(map(len, got)) if isinstance(got, list) else len(got)
            check_size(self.source, self._out, self._raw.tell(), self._limits)
        return got

    def read(self, size: int = -1) -> Any:
        return self._checked(lambda: self._handle.read(size))

    def readline(self, size: int = -1) -> Any:
        return self._checked(lambda: self._handle.readline(size))

    def readinto(self, buffer: Any) -> int:
        return int(self._checked(lambda: self._handle.readinto(buffer)))

    def __iter__(self) -> Iterator[Any]:
        lines = iter(self._handle)
        while True:   # the wrapped file's own line iterator, its errors and size checked per 4,096 lines
            chunk = self._checked(lambda: list(itertools.islice(lines, 4096)))
            if not chunk:
                return
            yield from chunk

    def close(self) -> None:
        self._handle.close()
        self._raw.close()

    def __enter__(self) -> CheckedStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(path: str | os.PathLike[str], text: bool = False, encoding: str = "utf-8",
                newline: str | None = None, errors: str = "strict") -> CheckedStream:
    """The one door for reading a file as a stream: gunzipped when its first bytes say gzip
    (whatever its name), in binary or text; missing, unreadable, truncated, corrupt or bomb
    input is an ``InputError`` naming the file (see ``CheckedStream``).

    >>> import gzip, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.gz")
    >>> _ = open(path, "wb").write(gzip.compress(b"q1 Q0 d1 1 2.0 x\\n" * 1000)[:60])
    >>> with open_source(path) as f:
    ...     _ = f.read()
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...run.gz: the gzip data is truncated or corrupt (...)
    """
    import io

    source = os.fspath(path)
    try:
        raw = open(source, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", source=source) from None
    gzipped = raw.read(2) == b"\x1f\x8b"
    raw.seek(0)
    handle: Any = raw
    if gzipped:
        import gzip

        handle = gzip.GzipFile(fileobj=raw, mode="rb")
    if text:
        handle = io.TextIOWrapper(handle if gzipped else raw, encoding=encoding, newline=newline, errors=errors)
    return CheckedStream(handle, raw, source, gzipped)


def check_whole_gzip(path: str | os.PathLike[str]) -> None:
    """Read a gzip file through once (in 16 MiB pieces, under the limits) so that a truncated,
    corrupt or bomb file is an ``InputError`` naming it before an engine that reads it in its
    own workers (Dask, Spark) starts; a file that is not gzip is left alone.

    >>> import gzip, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.gz")
    >>> _ = open(path, "wb").write(gzip.compress(b"q1 Q0 d1 1 2.0 x\\n" * 1000)[:60])
    >>> check_whole_gzip(path)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...run.gz: the gzip data is truncated or corrupt (...)
    """
    with open_source(path) as stream:
        if not stream.gzipped:
            return
        while stream.read(1 << 24):
            pass
