"""Hashes of string columns: the one-word path (ids of at most 8 bytes, loaded straight from
the Arrow buffer) and the wider path agree with the definition, whatever the slicing."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.engine.strings import _MIX, string_hashes

IDS = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), max_size=12)


def _definition(value: str) -> int:
    # the one-word hash: the id's UTF-8 bytes as a little-endian integer, times the odd mixer,
    # modulo 2**64 (ids of at most 8 bytes)
    return int.from_bytes(value.encode(), "little") * int(_MIX) % 2**64


@settings(max_examples=200, deadline=None)
@given(st.lists(IDS, min_size=1, max_size=60), st.integers(0, 59), st.integers(1, 7))
def test_hashes_do_not_depend_on_slicing_or_chunking(values: list[str], offset: int, pieces: int) -> None:
    whole = string_hashes(pa.array(values))
    start = min(offset, len(values) - 1)
    assert string_hashes(pa.array(values).slice(start)).tolist() == whole[start:].tolist()
    cuts = sorted({0, len(values), *np.linspace(0, len(values), pieces + 1).astype(int).tolist()})
    parts = [values[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True) if b > a]
    chunked = pa.chunked_array(parts, type=pa.string())
    assert string_hashes(chunked).tolist() == whole.tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=8), min_size=1,
                max_size=60))
def test_ids_of_at_most_eight_bytes_hash_by_the_definition_and_never_collide(values: list[str]) -> None:
    # the last ids of a buffer start in its final 7 bytes: they come from the padded tail
    hashes = string_hashes(pa.array(values)).tolist()
    assert hashes == [_definition(v) for v in values]
    # an odd multiplier is invertible modulo 2**64: distinct ids (no NUL byte) never collide
    assert len(set(hashes)) == len(set(values))


def test_empty_ids_hash_to_zero_beside_others() -> None:
    empty = pa.array(["", ""])
    assert string_hashes(empty).tolist() == [0, 0]
    assert string_hashes(pa.array(["", "a", "", "abcdefgh"])).tolist() == [
        0, 0x61 * int(_MIX) % 2**64, 0, _definition("abcdefgh")]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x7F), max_size=8), min_size=1,
                max_size=60), st.integers(1, 7))
def test_ids_in_a_buffer_at_any_address_hash_by_the_definition(values: list[str], shift: int) -> None:
    # Arrow's own buffers start on 8-byte boundaries (words are gathered aligned); one that
    # starts elsewhere (a view into a larger block) takes the byte-by-byte loads
    data = "".join(values).encode()
    lengths = np.array([len(v.encode()) for v in values])
    bounds = pa.py_buffer(np.concatenate(([0], np.cumsum(lengths))).astype(np.int32).tobytes())
    moved = pa.py_buffer(b"\xff" * shift + data + b"\xff" * 9).slice(shift, len(data))
    assert moved.address % 8 == shift % 8
    arr = pa.Array.from_buffers(pa.string(), len(values), [None, bounds, moved])
    assert string_hashes(arr).tolist() == [_definition(v) for v in values]


def _wide_definition(value: str) -> int:
    # the wider hash: the UTF-8 bytes in little-endian words, zero padded to a power-of-two
    # number of words (one class per width), folded as h = w0 * MIX, then for each next word
    # h = ((h ^ (h >> 29)) ^ w) * MIX, all modulo 2**64
    data = value.encode()
    width = 1 << max(0, (max(1, -(-len(data) // 8)) - 1).bit_length())
    words = [int.from_bytes(data[8 * c: 8 * c + 8], "little") for c in range(width)]
    h = words[0] * int(_MIX) % 2**64
    for w in words[1:]:
        h ^= h >> 29
        h = ((h ^ w) * int(_MIX)) % 2**64
    return h


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), min_size=0, max_size=40),
                min_size=1, max_size=40))
def test_longer_ids_hash_by_the_definition(values: list[str]) -> None:
    # a chunk holding an id of more than 8 bytes hashes every id by word classes, each id's
    # bytes copied as one zero-padded row
    values = [*values, "an id longer than eight bytes"]
    assert string_hashes(pa.array(values)).tolist() == [_wide_definition(v) for v in values]


@settings(max_examples=100, deadline=None)
@given(st.integers(9, 70), st.lists(st.integers(0, 25), min_size=1, max_size=30), st.integers(0, 5))
def test_ids_of_one_length_hash_by_the_definition(length: int, seeds: list[int], offset: int) -> None:
    # ids all of one length (ClueWeb's, for one) are rows of the chunk's bytes already: no
    # gather. A slice of a longer array starts its bytes part-way into the buffer
    values = [(chr(97 + s) * length)[: length - 2] + f"{s:02d}" for s in seeds]
    arr = pa.array(["x" * length] * offset + values).slice(offset)
    assert string_hashes(arr).tolist() == [_wide_definition(v) for v in values]
