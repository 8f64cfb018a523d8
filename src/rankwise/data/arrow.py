"""Arrow to NumPy without detours: ChunkedArray.to_numpy and copying conversions go through
pandas (slow to import, slow to run); zero-copy views of each chunk do not."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def _pool() -> pa.MemoryPool:
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow build without jemalloc
        return pa.default_memory_pool()


POOL = _pool()
"""The Arrow memory pool of rankwise's large reads and joins: jemalloc, which hands large freed
blocks back to the system (mimalloc, Arrow's default, keeps them in the process)."""


def release_unused() -> None:
    """Return memory the Arrow pool keeps cached to the operating system (lowers peak memory
    when large temporary buffers were just freed)."""
    POOL.release_unused()

NUMPY_TYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def _chunk_to_numpy(chunk: pa.Array, raw: bool = False) -> np.ndarray:
    """A view of one chunk's data buffer (pyarrow's own to_numpy imports pandas)."""
    if chunk.null_count and not raw:
        raise ValueError("cannot convert an Arrow array with nulls")
    buf = chunk.buffers()[1]
    n, off = len(chunk), chunk.offset
    if pa.types.is_boolean(chunk.type):
        if buf is None:
            return np.zeros(0, dtype=bool)
        bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
        return bits[off: off + n].astype(bool)
    dtype = NUMPY_TYPES.get(chunk.type)
    if dtype is None:
        from rankwise.data.kernels import cast

        as_float: Any = cast(chunk, pa.float64())
        return as_float.to_numpy(zero_copy_only=True)
    if buf is None:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype)[off: off + n]


def to_numpy(values: pa.Array | pa.ChunkedArray, dtype: type | None = None, raw: bool = False) -> np.ndarray:
    """Concatenate the chunks of an Arrow array (booleans and numbers, no nulls) into NumPy.

    ``raw=True`` accepts nulls and returns whatever the data buffer holds in their slots
    (combine with ``is_valid``).

    >>> to_numpy(pa.chunked_array([[1, 2], [3]])).tolist()
    [1, 2, 3]
    >>> to_numpy(pa.array([True, False])).tolist()
    [True, False]
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    parts = [_chunk_to_numpy(c, raw) for c in chunks]
    if not parts:
        return np.zeros(0, dtype=dtype or np.float64)
    out = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return out.astype(dtype, copy=False) if dtype is not None else out


def offsets(values: pa.Array) -> np.ndarray:
    """The value offsets of a string or binary array, as a view of its buffer (``len + 1``
    entries; value ``i`` is ``data[offsets[i]:offsets[i + 1]]``).

    >>> offsets(pa.array(["a", "bc", ""])).tolist()
    [0, 1, 3, 3]
    """
    large = pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type)
    raw = np.frombuffer(values.buffers()[1], dtype=np.int64 if large else np.int32)
    return raw[values.offset: values.offset + len(values) + 1]


def strings(values: list[str]) -> pa.Array:
    """An Arrow string array from Python strings (built from buffers: ``pa.array`` imports pandas).

    >>> strings(["a", "bé", ""]).to_pylist()
    ['a', 'bé', '']
    """
    encoded = [v.encode("utf-8") for v in values]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    large = offsets[-1] >= 2**31
    typ = pa.large_string() if large else pa.string()
    offs = offsets if large else offsets.astype(np.int32)
    return pa.Array.from_buffers(typ, len(encoded), [None, pa.py_buffer(offs), pa.py_buffer(b"".join(encoded))])


def indices(values: np.ndarray) -> pa.Array:
    """An Arrow int64 array viewing a NumPy integer array (for ``take``).

    >>> indices(np.array([2, 0])).to_pylist()
    [2, 0]
    """
    arr = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(arr), [None, pa.py_buffer(arr)])


def mask(values: np.ndarray) -> pa.Array:
    """An Arrow boolean array from a NumPy boolean array (for ``filter``).

    >>> mask(np.array([True, False, True])).to_pylist()
    [True, False, True]
    """
    arr = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(arr), [None, pa.py_buffer(np.packbits(arr, bitorder="little"))])


def take_rows(values: pa.Array | pa.ChunkedArray, rows: np.ndarray, pool: pa.MemoryPool | None = None) -> pa.Array:
    """``values[rows]`` as one array, taken chunk by chunk: Arrow's ``take`` on a chunked array
    first concatenates its chunks (a copy of the whole column, 80 MB for 7M document ids) when
    only a few rows are wanted.

    >>> col = pa.chunked_array([["a", "b"], ["c", "d", "e"]])
    >>> take_rows(col, np.array([4, 0, 3])).to_pylist()
    ['e', 'a', 'd']
    """
    from rankwise.data import kernels

    if not isinstance(values, pa.ChunkedArray):
        return kernels.take(values, indices(rows), pool)
    rows = np.asarray(rows, dtype=np.int64)
    ascending = bool((rows[1:] >= rows[:-1]).all())
    order = None if ascending else np.argsort(rows, kind="stable")
    wanted = rows if order is None else rows[order]
    ends = np.cumsum([len(c) for c in values.chunks])
    starts = ends - [len(c) for c in values.chunks]
    cuts = np.searchsorted(wanted, ends)
    pieces, at = [], 0
    for chunk, first, stop in zip(values.chunks, starts, cuts, strict=True):
        if stop > at:
            pieces.append(kernels.take(chunk, indices(wanted[at:stop] - first), pool))
        at = stop
    taken = pa.concat_arrays(pieces, memory_pool=pool) if pieces else pa.array([], type=values.type)
    if order is None:
        return taken
    back = np.empty_like(order)
    back[order] = np.arange(len(order))
    return kernels.take(taken, indices(back), pool)


def value_lengths(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """The byte length of each of ``rows`` (ascending) of a string or binary column, read from
    the offsets of the chunks they fall in: nothing is copied but the lengths (int64).

    >>> value_lengths(pa.chunked_array([["a", "bcd"], ["", "éf"]]), np.array([1, 2, 3])).tolist()
    [3, 0, 3]
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty(len(rows), dtype=np.int64)
    ends = np.cumsum([len(c) for c in chunks], dtype=np.int64)
    cuts = np.searchsorted(rows, ends)
    at = 0
    for chunk, end, stop in zip(chunks, ends, cuts, strict=True):
        if stop > at:
            local = rows[at:stop] - (end - len(chunk))
            bounds = offsets(chunk)
            out[at:stop] = bounds[local + 1] - bounds[local]
        at = stop
    return out
