"""Vectorised views of Arrow string columns as integers, for sorting and hashing ids.

A string becomes a row of big-endian 64-bit words (its bytes, zero padded), so that comparing
rows of words lexicographically is exactly ``strcmp`` on the strings (ids hold no NUL bytes).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankwise.data.arrow import offsets
from rankwise.engine.segments import length_classes

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _offsets(arr: pa.Array) -> np.ndarray:
    return offsets(arr).astype(np.int64)


def _values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of ``arr``'s strings counted from its first one (int64), and the bytes from
    its first string to the end of its last: a slice of a large array brings only its own
    bytes, not its whole buffer.

    >>> offs, raw = _values(pa.array(["ab", "c", "de"]).slice(1))
    >>> offs.tolist(), raw.tobytes()
    ([0, 1, 3], b'cde')
    """
    offs = _offsets(arr)
    data = arr.buffers()[2]
    if data is None or len(offs) == 0:
        return offs - (offs[0] if len(offs) else 0), np.zeros(0, np.uint8)
    first, last = int(offs[0]), int(offs[-1])
    offs -= first  # a fresh int64 copy of the buffer's offsets: changed in place
    return offs, np.frombuffer(data, dtype=np.uint8)[first:last]


def _chunk_words(arr: pa.Array, n_words: int, words: np.ndarray, lengths: np.ndarray) -> None:
    """Fill ``words``/``lengths`` (views of the output rows of this chunk)."""
    offsets, data = _values(arr)
    width = 8 * n_words
    padded = np.zeros(len(data) + width, dtype=np.uint8)
    padded[: len(data)] = data
    windows = np.lib.stride_tricks.as_strided(padded, shape=(len(data) + 1, width), strides=(1, 1))
    starts = offsets[:-1]
    lengths[:] = offsets[1:] - starts
    words[:] = windows[starts].view(np.uint64)  # one copy of 8*n_words bytes per string
    del padded, windows
    words.byteswap(inplace=True)  # little-endian machines: now each word compares like its bytes
    for c in range(n_words):
        # zero the bytes past the end of the string: shift them out and back (a shift of 64
        # bits gives 0 in NumPy)
        drop = np.clip(8 * (c + 1) - lengths, 0, 8).astype(np.uint64)
        drop <<= np.uint64(3)
        col = words[:, c]
        col >>= drop
        col <<= drop


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
        return np.zeros((0, 1), np.uint64), np.zeros(0, np.int32)
    max_len = max(int(np.diff(_offsets(c)).max(initial=0)) for c in chunks)
    n_words = max(1, -(-max_len // 8))
    n = sum(len(c) for c in chunks)
    words = np.empty((n, n_words), dtype=np.uint64)
    lengths = np.empty(n, dtype=np.int32)
    at = 0
    for c in chunks:
        _chunk_words(c, n_words, words[at: at + len(c)], lengths[at: at + len(c)])
        at += len(c)
    return words, lengths


def hash_rows(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of words; its high bits mix every input bit.

    Rows are zero-padded strings without NUL bytes, so equal rows mean equal strings. Equal
    strings always get equal hashes; callers confirm equality of colliding rows.

    >>> w, n = string_words(pa.array(["a", "a", "b"]))
    >>> h = hash_rows(w); bool(h[0] == h[1]), bool(h[0] == h[2])
    (True, False)
    """
    with np.errstate(over="ignore"):
        h = words[:, 0] * _MIX
        for col in range(1, words.shape[1]):
            h ^= h >> np.uint64(29)
            h ^= words[:, col]
            h *= _MIX
    return h


_LOW_BYTES = np.array([(1 << (8 * kept)) - 1 for kept in range(9)], dtype=np.uint64)
"""The mask keeping the low ``k`` bytes of a little-endian word, for ``k`` from 0 to 8."""


def _hash_words(offsets: np.ndarray, raw: np.ndarray, rows: np.ndarray | None, width: int) -> np.ndarray:
    """Rows of ``width`` 8-byte words of the strings ``rows`` (None: all) of a chunk given by
    its ``offsets`` and bytes (:func:`_values`), as little-endian loads with the bytes past each
    string's end zeroed: equal strings give equal rows (the byte order inside a word does not
    matter for hashing, only for sorting). Each string's ``8 * width`` bytes are copied as one
    row of a padded copy (gathering a word at a time, shifted into place, took 2.3 times as long
    for 24- to 33-byte ids), or, when every string has one length, the bytes are those rows
    already; a word past the end of every string is zeroed without a mask, one inside every
    string needs none."""
    starts = offsets[:-1] if rows is None else offsets[:-1][rows]
    lengths = np.diff(offsets) if rows is None else (offsets[1:] - offsets[:-1])[rows]
    shortest, longest = (int(lengths.min()), int(lengths.max())) if len(lengths) else (0, 0)
    if rows is None and shortest == longest and longest > 0:   # ids of one length: rows of the bytes
        words = np.zeros((len(starts), 8 * width), dtype=np.uint8)
        words[:, :longest] = raw.reshape(len(starts), longest)
        return words.view("<u8")
    padded = np.zeros(len(raw) + 8 * width, dtype=np.uint8)
    padded[: len(raw)] = raw
    windows = np.lib.stride_tricks.as_strided(padded, shape=(len(raw) + 1, 8 * width), strides=(1, 1))
    words = windows[starts].view("<u8")   # a row of width words per string
    del windows, padded
    for c in range(width):
        if 8 * c >= longest:
            words[:, c] = 0
        elif 8 * (c + 1) > shortest:
            words[:, c] &= _LOW_BYTES[np.clip(lengths - 8 * c, 0, 8)]
    return words


def _loads(raw: np.ndarray, width: int) -> np.ndarray:
    """The 8-byte little-endian word starting at each byte of ``raw``, zero padded so that a
    string's last word (of ``width``) never reads past the copy."""
    padded = np.zeros(len(raw) + 8 * width + 8, dtype=np.uint8)
    padded[: len(raw)] = raw
    return np.ndarray(shape=(len(raw) + 8 * width,), dtype="<u8", buffer=padded, strides=(1,))


def _one_word(arr: pa.Array, lengths: np.ndarray, out: np.ndarray) -> None:
    """``_hash_words(offsets, raw, None, 1)`` into ``out``, for strings of at most 8 bytes:
    each word loaded straight from the array's buffer (no copy of its bytes), only the strings
    that start in its last 7 bytes from a small padded copy.

    >>> arr = pa.array(["ab", "", "abcdefgh", "c"]); out = np.empty(4, dtype=np.uint64)
    >>> _one_word(arr, np.array([2, 0, 8, 1]), out); [hex(int(w)) for w in out]
    ['0x6261', '0x0', '0x6867666564636261', '0x63']
    """
    starts = offsets(arr)[:-1]
    buffer = arr.buffers()[2]
    size = 0 if buffer is None else buffer.size
    if buffer is not None and np.little_endian and buffer.address % 8 == 0:
        whole = int(np.searchsorted(starts, 8 * (size // 8 - 1)))   # starts ascend: both words in the buffer
        if whole > 0:
            _aligned_loads(np.frombuffer(buffer, dtype="<u8", count=size // 8), starts[:whole], out[:whole])
    else:
        whole = int(np.searchsorted(starts, size - 7))   # these load 8 bytes in the buffer
        if whole > 0:
            words = np.ndarray(shape=(size - 7,), dtype="<u8", buffer=buffer, strides=(1,))
            out[:whole] = words[starts[:whole]]
    if whole < len(starts):
        first = int(starts[whole])
        tail = np.zeros(max(size - first, 0) + 8, dtype=np.uint8)
        if size > first:
            tail[: size - first] = np.frombuffer(buffer, dtype=np.uint8)[first:]
        out[whole:] = _loads(tail, 1)[starts[whole:] - first]
    out &= np.take(_LOW_BYTES, lengths)


def _aligned_loads(words: np.ndarray, starts: np.ndarray, out: np.ndarray) -> None:
    """The 8 bytes from each of ``starts`` of an 8-byte aligned little-endian buffer (``words``,
    its whole words), into ``out``: the word a start falls in, shifted down, joined with the next
    one shifted up. NumPy gathers aligned words four times as fast as words at any byte.

    >>> words = np.frombuffer(bytes(range(24)), dtype="<u8"); out = np.empty(2, dtype=np.uint64)
    >>> _aligned_loads(words, np.array([0, 3]), out); [hex(int(w)) for w in out]
    ['0x706050403020100', '0xa09080706050403']
    """
    at = starts.astype(np.int64)
    shift = (at & 7).view(np.uint64)   # 0 to 7: the same bits in either type
    shift <<= np.uint64(3)
    at >>= 3
    np.take(words, at, out=out)
    out >>= shift
    at += 1
    upper = np.take(words, at)
    del at
    np.subtract(np.uint64(64), shift, out=shift)
    upper <<= shift   # a start on a word boundary shifts by 64 bits, which gives 0 in NumPy
    out |= upper


def _word_counts(lengths: np.ndarray) -> np.ndarray:
    """The 8-byte words of strings of these byte lengths (an empty string takes one)."""
    return np.maximum(1, -(-lengths.astype(np.int64) // 8))


def string_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit hash of each string, in time and memory that do not depend on the longest one.

    Strings are grouped by their number of 8-byte words rounded up to a power of two
    (``segments.length_classes``); each group is padded only to its own width and hashed with
    ``hash_rows``. Equal strings have equal lengths, so they fall in the same group and get
    equal hashes; callers confirm equality of colliding rows. (Padding every row to the
    longest id made one 10,000-byte id cost 1,250 words per row.)

    >>> h = string_hashes(pa.chunked_array([["a", "b"], ["a", "a-much-longer-id"]]))
    >>> bool(h[0] == h[2]), bool(h[0] == h[1])
    (True, False)
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    chunks = [c for c in chunks if len(c)]
    out = np.empty(sum(len(c) for c in chunks), dtype=np.uint64)
    at = 0
    for chunk in chunks:
        lengths = np.diff(offsets(chunk))
        if int(lengths.max()) <= 8:  # one word each, hashed in place: the usual document id
            part = out[at: at + len(chunk)]
            _one_word(chunk, lengths, part)
            with np.errstate(over="ignore"):
                part *= _MIX  # hash_rows of one word
        else:
            offs, raw = _values(chunk)
            extremes = length_classes(_word_counts(np.array([lengths.min(), lengths.max()])))
            classes = [(extremes[0][0], None)] if len(extremes) == 1 else length_classes(_word_counts(lengths))
            part = out[at: at + len(chunk)]
            for width, rows in classes:   # one class (ids of similar lengths): no grouping
                part[... if rows is None else rows] = hash_rows(_hash_words(offs, raw, rows, width))
        at += len(chunk)
    return out
