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

import os
from dataclasses import dataclass
from typing import BinaryIO

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
