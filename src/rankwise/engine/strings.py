"""Vectorised views of Arrow string columns as integers, for sorting and hashing ids.

A string becomes a row of big-endian 64-bit words (its bytes, zero padded), so that comparing
rows of words lexicographically is exactly ``strcmp`` on the strings (ids hold no NUL bytes).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _offsets(arr: pa.Array) -> np.ndarray:
    bufs = arr.buffers()
    off_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    return np.frombuffer(bufs[1], dtype=off_type)[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)


def _chunk_words(arr: pa.Array, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    offsets = _offsets(arr)
    data = arr.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    width = 8 * n_words
    padded = np.zeros(len(data) + width, dtype=np.uint8)
    padded[: len(data)] = data
    windows = np.lib.stride_tricks.as_strided(padded, shape=(len(data) + 1, width), strides=(1, 1))
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    raw = windows[starts]  # one 8*n_words-byte copy per string
    if n_words * 8 > 0:
        raw[np.arange(width)[None, :] >= lengths[:, None]] = 0
    words = raw.view(">u8").astype(np.uint64).reshape(len(arr), n_words)
    return words, lengths


def string_words(values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Return (words[n, w], lengths[n]) for a string column; rows compare like ``strcmp``.

    >>> w, n = string_words(pa.array(["b", "ab", "abcdefghi"]))
    >>> w.shape, n.tolist()
    ((3, 2), [1, 2, 9])
    >>> np.lexsort(w.T[::-1]).tolist()   # byte order: ab, abcdefghi, b
    [1, 2, 0]
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    chunks = [c for c in chunks if len(c)]
    if not chunks:
        return np.zeros((0, 1), np.uint64), np.zeros(0, np.int64)
    max_len = max(int(np.diff(_offsets(c)).max(initial=0)) for c in chunks)
    n_words = max(1, -(-max_len // 8))
    parts = [_chunk_words(c, n_words) for c in chunks]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def hash_rows(words: np.ndarray, lengths: np.ndarray, salt: np.ndarray | None = None) -> np.ndarray:
    """A 64-bit hash of each row of words (plus length and an optional per-row salt).

    Equal strings always get equal hashes; callers confirm equality of colliding rows.
    """
    h = lengths.astype(np.uint64) * _MIX
    with np.errstate(over="ignore"):
        for col in range(words.shape[1]):
            h = (h ^ words[:, col]) * _MIX
            h ^= h >> np.uint64(29)
        if salt is not None:
            h = (h ^ salt.astype(np.uint64)) * _MIX
            h ^= h >> np.uint64(31)
    return h
