"""Deterministic assignment of units to variants, bit-identical to GrowthBook's SDKs.

GrowthBook hashes a unit's id with FNV-1a (32 bits) over its UTF-16 code units (the JavaScript
SDK's ``charCodeAt`` loop; for ids without characters outside the Basic Multilingual Plane
these are the code points):

- version 1: ``n = (fnv1a32(id + seed) % 1000) / 1000``
- version 2: ``n = (fnv1a32(str(fnv1a32(seed + id))) % 10000) / 10000``

The seed is the experiment's key unless a seed is given. Variant ``i`` owns the half-open
bucket range ``[c_i, c_i + coverage * w_i)`` where ``c_i`` is the sum of the weights before it,
so raising coverage or changing later weights never moves a unit that was already assigned.
Numeric ids hash as JavaScript's ``String()`` prints them (``7`` and ``7.0`` both hash "7").
Here every function works on whole arrays at once: one pass per character position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.errors import InputError, OptionError

FNV_OFFSET = np.uint32(0x811C9DC5)
FNV_PRIME = np.uint32(0x01000193)


def code_units(ids: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The UTF-16 code units of every id, flat, with each id's start and length; ids that
    GrowthBook does not hash (empty strings, None, 0, NaN, booleans) get length -1.

    >>> units, starts, lengths = code_units(["ab", "", "é"])
    >>> units.tolist(), starts.tolist(), lengths.tolist()
    ([97, 98, 233], [0, 2, 2], [2, -1, 1])
    """
    strings, hashable = _id_strings(ids)
    data = strings.buffers()[2]
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32, count=len(strings) + 1,
                            offset=strings.offset * 4).astype(np.int64)
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    raw = raw[offsets[0]:offsets[-1]]
    offsets -= offsets[0]
    if not raw.size or int(raw.max()) < 0x80:  # ASCII: one byte, one code unit
        units = raw
        starts = offsets[:-1]
        lengths = np.diff(offsets)
    else:  # decode once; count code units per id from the UTF-8 lead bytes
        units = np.frombuffer(bytes(raw).decode("utf-8").encode("utf-16-le", "surrogatepass"),
                              dtype="<u2")
        lead = (raw & 0xC0) != 0x80
        per_byte = lead.astype(np.int64) + (raw >= 0xF0)  # a 4-byte character is two units
        cumulative = np.concatenate(([0], np.cumsum(per_byte)))
        starts = cumulative[offsets[:-1]]
        lengths = cumulative[offsets[1:]] - starts
    lengths = np.where(hashable, lengths, -1)
    return units, starts, lengths


def _id_strings(ids: Any) -> tuple[Any, np.ndarray]:
    """Ids as an Arrow string array (numbers printed as JavaScript's ``String()`` prints them)
    and a mask of the ids GrowthBook hashes."""
    import pyarrow as pa

    if isinstance(ids, (pa.ChunkedArray,)):
        ids = ids.combine_chunks()
    if not isinstance(ids, pa.Array):
        values = np.asarray(ids) if not isinstance(ids, (list, tuple)) else None
        if values is not None and values.dtype.kind in "iuf":
            return _numeric_strings(values)
        try:
            ids = pa.array(ids if values is None or values.dtype.kind != "O" else list(values), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(f"ids must be strings or numbers ({exc})", field="id") from None
    if pa.types.is_dictionary(ids.type):
        ids = ids.dictionary_decode()
    if pa.types.is_integer(ids.type) or pa.types.is_floating(ids.type):
        return _numeric_strings(ids.to_numpy(zero_copy_only=False))
    if pa.types.is_null(ids.type):
        ids = ids.cast(pa.string())
    if pa.types.is_large_string(ids.type) or pa.types.is_string_view(ids.type):
        ids = ids.cast(pa.string())
    if not pa.types.is_string(ids.type):
        raise InputError(f"ids must be strings or numbers, got {ids.type}", field="id")
    valid = ~np.asarray(ids.is_null().to_numpy(zero_copy_only=False))
    ids = ids.fill_null("")
    lengths = np.diff(np.frombuffer(ids.buffers()[1], dtype=np.int32, count=len(ids) + 1, offset=ids.offset * 4))
    return ids, valid & (lengths > 0)


def _whole_numbers(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Numeric ids as int64 and the mask of those GrowthBook hashes (finite, non-zero); a
    fractional id is an error (its JavaScript spelling is not rebuilt here)."""
    values = np.asarray(values)
    if values.dtype.kind != "f":
        values = values.astype(np.int64, copy=False)
        return values, values != 0
    finite = np.isfinite(values)
    integral = finite & (values == np.round(values)) & (np.abs(values) < 2.0 ** 53)
    if not integral[finite].all():
        bad = int(np.flatnonzero(finite & ~integral)[0])
        raise InputError(f"id {values[bad]!r} is not a whole number; give fractional ids as strings "
                         "(their JavaScript spelling)", line=bad + 1, field="id")
    hashable = finite & (values != 0)
    return np.where(hashable, values, 0).astype(np.int64), hashable


def _numeric_strings(values: np.ndarray) -> tuple[Any, np.ndarray]:
    import pyarrow as pa

    whole, hashable = _whole_numbers(values)
    return pa.array(whole).cast(pa.string()), hashable


def fnv1a32(ids: Any, prefix: str = "", suffix: str = "") -> np.ndarray:
    """FNV-1a 32-bit hash of ``prefix + id + suffix`` for every id (uint32), over UTF-16 code
    units as GrowthBook's SDKs hash; 0 for ids GrowthBook does not hash.

    >>> fnv1a32(["a", ""]).tolist()   # 0x811c9dc5 ^ 97, times 16777619, modulo 2**32
    [3826002220, 0]
    """
    units, starts, lengths = code_units(ids)
    return _fnv_units(units, starts, lengths, prefix, suffix)


def _fnv_units(units: np.ndarray, starts: np.ndarray, lengths: np.ndarray, prefix: str,
               suffix: str) -> np.ndarray:
    """FNV-1a over ``prefix``, then each id's units, then ``suffix``: one vector step per
    character position, over the ids at least that long (ids sorted by length once, so the
    active ids are always a prefix; ids of one length read their units as matrix columns).
    Every step works in place: fresh 10M-element temporaries cost more in page faults than
    the arithmetic."""
    n = len(lengths)
    h = np.full(n, _fnv_scalar(FNV_OFFSET, prefix), dtype=np.uint32)
    if n == 0:
        return h
    longest = int(lengths.max())
    if int(lengths.min()) == longest and np.array_equal(starts, np.arange(n) * longest):
        matrix = units[:n * longest].reshape(n, longest)
        for j in range(longest):
            np.bitwise_xor(h, matrix[:, j], out=h, casting="unsafe")
            np.multiply(h, FNV_PRIME, out=h)
    elif longest > 0:
        order = np.argsort(-lengths, kind="stable")
        sorted_starts = starts[order]
        counts = np.searchsorted(-lengths[order], -np.arange(longest), side="left")
        index = np.empty(n, dtype=np.int64)
        unit = np.empty(n, dtype=units.dtype)
        for j in range(longest):
            c = int(counts[j])
            np.add(sorted_starts[:c], j, out=index[:c])
            np.take(units, index[:c], out=unit[:c])
            np.bitwise_xor(h[:c], unit[:c], out=h[:c], casting="unsafe")
            np.multiply(h[:c], FNV_PRIME, out=h[:c])
        unsorted = np.empty_like(h)
        unsorted[order] = h
        h = unsorted
    _fnv_suffix(h, suffix)
    h[lengths < 0] = 0
    return h


def _fnv_suffix(h: np.ndarray, suffix: str) -> None:
    for unit in _units_of(suffix):
        np.bitwise_xor(h, np.uint32(unit), out=h)
        np.multiply(h, FNV_PRIME, out=h)


def _fnv_decimal(values: np.ndarray, h: np.ndarray | None = None) -> np.ndarray:
    """Continue FNV-1a states ``h`` (a fresh hash when None) over each integer's decimal
    spelling (``str(n)``: a minus sign, no leading zeros), in place, without building strings.

    >>> _fnv_decimal(np.array([7, -12])).tolist() == [int(fnv1a32(["7"])[0]), int(fnv1a32(["-12"])[0])]
    True
    """
    values = np.asarray(values)
    if h is None:
        h = np.full(len(values), FNV_OFFSET, dtype=np.uint32)
    if values.dtype.kind == "i" and (values < 0).any():
        negative = values < 0
        h[negative] = (h[negative] ^ np.uint32(45)) * FNV_PRIME  # "-"
    kind = np.uint32 if values.dtype.itemsize <= 4 and values.dtype.kind == "u" else np.uint64
    magnitude = np.abs(values).astype(kind) if values.dtype.kind == "i" else values.astype(kind, copy=False)
    if not len(values):
        return h
    top = len(str(int(magnitude.max())))
    quotient = np.empty_like(magnitude)
    tens = np.empty_like(magnitude)
    active = np.empty(len(values), dtype=bool)
    for position in range(top - 1, -1, -1):
        divisor = kind(10 ** position)
        np.floor_divide(magnitude, divisor, out=quotient)
        np.floor_divide(quotient, kind(10), out=tens)
        np.multiply(tens, kind(10), out=tens)
        np.subtract(quotient, tens, out=quotient)  # the digit
        np.add(quotient, kind(48), out=quotient)
        np.bitwise_xor(h, quotient, out=tens, casting="unsafe")
        np.multiply(tens, kind(FNV_PRIME), out=tens)
        if position == 0:  # every number has a units digit
            np.copyto(h, tens, casting="unsafe")
        else:
            np.greater_equal(magnitude, divisor, out=active)
            np.copyto(h, tens, where=active, casting="unsafe")
    return h


def _units_of(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def _fnv_scalar(state: np.uint32, text: str) -> np.uint32:
    value = int(state)
    for unit in _units_of(text):
        value = ((value ^ unit) * 0x01000193) & 0xFFFFFFFF
    return np.uint32(value)


def gbhash(ids: Any, seed: str, version: int = 2) -> np.ndarray:
    """GrowthBook's bucket number in [0, 1) for every id (NaN for ids it does not hash).

    Version 1: ``(fnv1a32(id + seed) % 1000) / 1000``; version 2:
    ``(fnv1a32(str(fnv1a32(seed + id))) % 10000) / 10000``.

    >>> gbhash(["a", "b", ""], "seed", 2).tolist()
    [0.0505, 0.2696, nan]
    """
    if version not in (1, 2):
        raise OptionError(f"hash_version must be 1 or 2, got {version!r}")
    integers = _integer_ids(ids)
    if integers is not None:  # numbers hash their decimal spelling: no strings built
        values, hashable = integers
        if version == 1:
            n = _fnv_decimal(values)
            _fnv_suffix(n, seed)
        else:
            n = _fnv_decimal(_fnv_decimal(values, np.full(len(values), _fnv_scalar(FNV_OFFSET, seed), np.uint32)))
    else:
        units, starts, lengths = code_units(ids)
        hashable = lengths >= 0
        if version == 1:
            n = _fnv_units(units, starts, lengths, "", seed)
        else:
            n = _fnv_decimal(_fnv_units(units, starts, lengths, seed, ""))
    out = (n % 1000) / 1000 if version == 1 else (n % 10000) / 10000
    out[~hashable] = np.nan
    return out


def _integer_ids(ids: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Whole-number ids as int64 with the mask of those GrowthBook hashes (non-zero); None
    for string ids."""
    import pyarrow as pa

    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if isinstance(ids, pa.Array):
        if not (pa.types.is_integer(ids.type) or pa.types.is_floating(ids.type)) or ids.null_count:
            return None
        values = ids.to_numpy(zero_copy_only=False)
    elif isinstance(ids, (list, tuple)):
        return None
    else:
        values = np.asarray(ids)
    if values.dtype.kind not in "iuf":
        return None
    if values.dtype.kind == "u" and values.dtype.itemsize == 8 and len(values) and values.max() >= 2 ** 63:
        return None
    return _whole_numbers(values)


def bucket_ranges(variants: int, coverage: float = 1.0,
                  weights: Sequence[float] | None = None) -> list[tuple[float, float]]:
    """Each variant's half-open bucket range ``[start, start + coverage * weight)``, starts at
    the running sum of the weights (GrowthBook's ``getBucketRanges``: coverage is clipped to
    [0, 1]; weights that are not one finite non-negative number per variant summing to
    1 +/- 0.01 are replaced by equal weights there, refused here).

    >>> bucket_ranges(2, 0.5)
    [(0, 0.25), (0.5, 0.75)]
    """
    weights = check_weights(variants, weights)
    coverage = min(max(float(coverage), 0.0), 1.0)
    ranges = []
    cumulative: float = 0
    for w in weights:
        start = cumulative
        cumulative += w
        ranges.append((start, start + coverage * w))
    return ranges


def check_weights(variants: int, weights: Sequence[float] | None) -> list[float]:
    """The design weights: equal when not given; otherwise one finite non-negative number per
    variant summing to 1 (within GrowthBook's 0.99..1.01).

    >>> check_weights(3, None)
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    if variants < 1:
        raise OptionError(f"an experiment needs at least one variant, got {variants}")
    if weights is None:
        return [1 / variants for _ in range(variants)]
    weights = [float(w) for w in weights]
    if len(weights) != variants:
        raise OptionError(f"weights: expected {variants} numbers (one per variant), got {len(weights)}")
    if not all(np.isfinite(w) and w >= 0 for w in weights) or not 0.99 <= sum(weights) <= 1.01:
        raise OptionError(f"weights must be non-negative and sum to 1, got {weights}")
    return weights


def assign(ids: Any, experiment: str, weights: Sequence[float] | None = None, coverage: float = 1.0,
           hash_version: int = 2, *, variants: int | None = None, seed: str | None = None,
           namespace: tuple[str, float, float] | None = None,
           filters: Sequence[dict[str, Any]] | None = None) -> np.ndarray:
    """The variant index of every id (``-1``: not in the experiment), as GrowthBook's SDK
    assigns it: the id's bucket ``gbhash(id, seed or experiment, hash_version)`` falls in one
    variant's range of ``bucket_ranges`` or in none (coverage below 1, outside the namespace
    or the filters, or an id GrowthBook does not hash: empty, None, 0).

    ``hash_version`` is 2 by default (GrowthBook's recommendation for new experiments); the
    SDKs' ``Experiment()`` defaults to 1, so pass ``hash_version=1`` to match an assignment an
    SDK made without ``hashVersion`` (about a third of the units differ between the two).
    ``variants`` defaults to the number of weights (2 without weights). ``namespace`` is
    ``(id, start, end)``: a unit takes part when ``gbhash(unit, "__" + id, 1)`` is in
    ``[start, end)``. ``filters`` are GrowthBook's filters: each a dict with ``seed``,
    ``ranges`` and optionally ``hash_version`` (default 2); a unit takes part when its hash
    under every filter falls in one of that filter's ranges.

    >>> assign(["u1", "u2", "u3", "u4", ""], "exp-1").tolist()
    [1, 1, 0, 0, -1]
    >>> assign(["u1", "u2", "u3", "u4"], "exp-1", coverage=0.5).tolist()  # ramping keeps variants
    [-1, 1, 0, -1]
    """
    if variants is None:
        variants = len(weights) if weights is not None else 2
    ranges = bucket_ranges(variants, coverage, weights)
    n = gbhash(ids, seed or experiment, hash_version)
    out = np.full(len(n), -1, dtype=np.int64)
    for index, (start, end) in enumerate(ranges):
        out[(n >= start) & (n < end) & (out < 0)] = index
    keep = in_namespace(ids, namespace) if namespace is not None else None
    for spec in filters or ():
        inside = _in_ranges(gbhash(ids, spec.get("seed", ""), spec.get("hash_version", spec.get("hashVersion", 2))),
                            spec["ranges"])
        keep = inside if keep is None else keep & inside
    if keep is not None:
        out[~keep] = -1
    return out


def in_namespace(ids: Any, namespace: tuple[str, float, float]) -> np.ndarray:
    """Whether each unit is inside ``namespace = (id, start, end)``: GrowthBook's
    ``inNamespace``, ``start <= gbhash(unit, "__" + id, 1) < end``. Experiments whose ranges
    in one namespace do not overlap never share a unit.

    >>> in_namespace(["u1", "u2", "u3"], ("search", 0, 0.3)).tolist()   # buckets 0.125, 0.48, 0.311
    [True, False, False]
    """
    name, start, end = namespace
    return _in_ranges(gbhash(ids, "__" + name, 1), [(start, end)])


def _in_ranges(n: np.ndarray, ranges: Sequence[Sequence[float]]) -> np.ndarray:
    inside = np.zeros(len(n), dtype=bool)
    for start, end in ranges:
        inside |= (n >= start) & (n < end)
    return inside
