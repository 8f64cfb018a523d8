"""Experiment data in: event logs (one row per event) or per-unit tables, from files
(Parquet, CSV, TSV, JSONL, each optionally gzipped; many files or a directory), pandas
DataFrames, Arrow tables or dicts of arrays; summed per unit with Arrow's hash aggregation.

A unit seen in two variants is counted and left out (or refused with ``mixed="error"``).
Bad values (missing unit or variant, a non-number, NaN, a negative count) are errors that
name the file, the line (the row for Parquet) and the column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from rankwise.data.tables import location, number_column, refuse_blank
from rankwise.errors import InputError, OptionError

Mixed = Literal["exclude", "error"]
"""What a unit seen in two variants gets: left out (counted in a warning) or an error."""
MIXED: tuple[Mixed, ...] = get_args(Mixed)


@dataclass
class Units:
    """One row per unit: its variant code (index into ``variants``) and summed value columns;
    ``mixed``: units seen in more than one variant, left out; ``sources``: what was read."""

    variants: list[str]
    codes: np.ndarray
    values: dict[str, np.ndarray]
    unit_ids: Any = None
    mixed: int = 0
    events: int = 0
    sources: list[str] = field(default_factory=list)
    event_quantiles: dict[str, list[Any]] = field(default_factory=dict)
    """Per-event quantile metrics (by spelling) to their estimate in each variant, computed over
    the whole experiment (``rankwise.experiments.event_quantiles``)."""

    def __len__(self) -> int:
        return len(self.codes)



def _labels(name: str, first: int, column: Any, field_name: str) -> Any:
    import pyarrow as pa

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError(f"missing {field_name}", field=field_name, **location(name, first, row))
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return refuse_blank(name, first, column.cast(pa.string()), field_name)


def _unit_ids(name: str, first: int, column: Any, field_name: str) -> Any:
    """Unit ids: integers stay integers (no strings built for 100M ids), anything else text."""
    import pyarrow as pa

    if pa.types.is_integer(column.type):
        if column.null_count:
            return _labels(name, first, column, field_name)
        return column
    return _labels(name, first, column, field_name)


def aggregate_units(data: Any, unit: str, variant: str, sums: Sequence[str] = (), counts: Sequence[str] = (),
                    constants: Sequence[str] = (), variants: Sequence[str] | None = None,
                    mixed: Mixed = "exclude", ordered: bool = False) -> Units:
    """Sum ``sums`` per unit (``counts`` are sums that must not be negative; ``constants`` are
    per-unit values such as a pre-experiment covariate, which must not change within a unit).

    ``variants`` lists the variants the design has (others are an error naming the row);
    by default the variants found, in sorted order.

    The data is read piece by piece (``batches_of``: a Parquet file is decoded as it is
    summed) in one pass. Integer unit ids in a range not much wider than the number of events
    are summed by counting into arrays indexed by the id (units in id order). Other ids go
    through Arrow's hash group-by: on every core when every value column holds integers (exact
    int64 sums; units then come in no fixed order, ``ordered=True`` sorts them by id for a
    seeded resampling), on one thread for float columns, so their sums never change from run
    to run. Integer columns give integer per-unit sums either way.

    >>> u = aggregate_units({"user": ["a", "a", "b"], "arm": ["x", "x", "y"], "clicks": [1, 2, 0]},
    ...                     unit="user", variant="arm", counts=["clicks"], ordered=True)
    >>> u.variants, u.codes.tolist(), u.values["clicks"].tolist()
    (['x', 'y'], [0, 1], [3, 0])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankwise.data.tables import batches_of
    from rankwise.progress import step, tracked

    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")
    value_columns = list(dict.fromkeys([*sums, *counts, *constants]))
    columns = list(dict.fromkeys([unit, variant, *value_columns]))
    pieces = batches_of(data, columns, ids=[unit, variant])   # bounded temporaries
    events = pieces.rows
    if events == 0:
        raise InputError("no events", source=", ".join(dict.fromkeys(n for n, _, _ in pieces)) or "<input>")
    summed = [c for c in value_columns if c not in constants]
    names = list(variants) if variants is not None else []   # found: in the order met, sorted at the end
    dense: _DenseSums | None = _DenseSums(summed, constants, events)
    parts: list[dict[str, Any]] = []   # for the hash group-by, once the ids are not dense integers
    sources: dict[str, None] = {}
    for name, first, table in tracked(pieces, "reading events"):
        sources[name] = None
        values = _variant_labels(name, first, table.column(variant).combine_chunks(), variant)
        ids = _unit_ids(name, first, table.column(unit).combine_chunks(), unit)
        if variants is None:
            names += [label for label in _distinct(values) if label not in names]
        codes = _codes(values, names)
        if codes.null_count:
            row = int(np.flatnonzero(np.asarray(codes.is_null().to_numpy(zero_copy_only=False)))[0])
            raise InputError(f"unknown variant {_label_at(values, row)!r}; the design has {names}", field=variant,
                             **location(name, first, row))
        part = {"unit": ids, "variant": codes}
        for c in value_columns:
            column = table.column(c).combine_chunks()
            if pa.types.is_boolean(column.type) and not column.null_count and c not in constants:
                part[c] = np.asarray(column.to_numpy(zero_copy_only=False), dtype=bool)   # counted, not summed
            else:
                part[c] = number_column(name, first, column, c, c in counts)
        if dense is not None and not dense.add(part):
            if dense.span:   # what was counted so far, one row per unit (and variant)
                parts.append(dense.as_part())
            dense = None
        if dense is None:
            parts.append(part)
    with step(f"summing {events:,} events per unit"):
        if dense is not None:
            grouped = dense.result()
        else:
            text = not all(pa.types.is_integer(part["unit"].type) for part in parts)
            parts = [dict(part, unit=part["unit"].cast(pa.string() if text else pa.int64())) for part in parts]
            grouped = _hash_group(parts, value_columns, summed, constants, events, ordered)
    low, both, uniques, out = grouped
    if variants is None:   # the variants in sorted order, the codes with them
        order = sorted(names)
        low = np.array([order.index(n) for n in names], dtype=np.int64)[low] if len(low) else low
        names = order
    if both.any() and mixed == "error":
        first_unit = pc.min(uniques.filter(pa.array(both))).as_py()
        raise InputError(f"unit {first_unit!r} appears in more than one variant ({int(both.sum())} such units); "
                         "pass mixed='exclude' (--mixed exclude) to leave them out", field=unit)
    keep = ~both
    if both.any():
        return Units(names, low[keep], {c: v[keep] for c, v in out.items()}, uniques.filter(pa.array(keep)),
                     int(both.sum()), events, list(sources))
    return Units(names, low, out, uniques, 0, events, list(sources))


GroupedUnits = tuple[np.ndarray, np.ndarray, Any, dict[str, np.ndarray]]
"""(variant code, in-two-variants mask, unit ids (Arrow), per-unit columns), one row per unit."""


def _not_constant(c: str, unit_id: Any) -> InputError:
    return InputError(f"unit {unit_id!r} has different values of the per-unit column; a covariate "
                      "is one pre-experiment value per unit", field=c)


class _DenseSums:
    """Per-unit sums by counting into arrays indexed by the unit id, piece by piece: for
    integer ids in a range not much wider than the number of events (no hash table; units in
    id order). Integer sums stay exact (totals below 2^53); float sums add in row order, so
    they never change from run to run. ``add`` refuses a piece (False) whose ids are text, or
    would make the range too sparse or an integer total too large: the caller goes on with
    ``as_part`` and the hash group-by."""

    def __init__(self, summed: Sequence[str], constants: Sequence[str], events: int) -> None:
        self.summed, self.constants, self.events = list(summed), list(constants), events
        self.lowest, self.span = 0, 0   # the arrays: bin 0 is id ``lowest``
        self.low_id, self.high_id = 0, -1   # the ids met
        self.count = np.zeros(0, np.int64)
        self.code_sum = np.zeros(0)
        self.code_squares: np.ndarray | None = None   # kept once a code above 1 is met
        self.sums = {c: np.zeros(0) for c in self.summed}
        self.integer = dict.fromkeys(self.summed, True)
        self.largest = dict.fromkeys(self.summed, 0)
        self.ones: dict[str, np.ndarray] = {}
        self.bits = 0
        self.packing: list[tuple[list[str], np.ndarray]] = []   # flags counting together as digits

    def add(self, part: dict[str, Any]) -> bool:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not pa.types.is_integer(part["unit"].type):
            return False
        if len(part["unit"]):
            bounds = pc.min_max(part["unit"])
            low, high = int(bounds["min"].as_py()), int(bounds["max"].as_py())
            if self.span:   # the ids met so far, whatever room the arrays have
                low, high = min(low, self.low_id), max(high, self.high_id)
            if high - low + 1 > 2 * self.events + 1_000_000:
                return False
            for c in self.summed:
                values = part[c]
                if values.dtype.kind in "iu" and len(values):
                    self.largest[c] = max(self.largest[c], abs(int(values.min())), abs(int(values.max())))
                elif values.dtype == bool:
                    self.largest[c] = max(self.largest[c], 1)
                if self.largest[c] * self.events >= 2**53:
                    return False
            self._cover(low, high)
            self.low_id, self.high_id = low, high
        for c in self.summed:
            self.integer[c] = self.integer[c] and part[c].dtype.kind in "iub"
        index = _offsets(part["unit"], self.lowest)
        codes = np.asarray(part["variant"].to_numpy())
        if self.code_squares is None and len(codes) and int(codes.max()) > 1:
            self._unpack()
            self.code_squares = self.code_sum.copy()   # codes so far were 0 and 1: each its own square
        rows = np.bincount(index, minlength=self.span)
        self.count += rows
        flags: list[tuple[str, np.ndarray]] = []
        if self.code_squares is None:   # codes 0 and 1: their sum counts the rows in variant 1
            flags.append(("code", codes == 1))
        else:
            weights = codes.astype(np.float64)
            self.code_sum += np.bincount(index, weights=weights, minlength=self.span)
            self.code_squares += np.bincount(index, weights=weights * weights, minlength=self.span)
        flags += [(c, part[c]) for c in self.summed if part[c].dtype == bool]
        if flags:
            self._count(index, flags)
        for c in self.summed:
            if part[c].dtype != bool:
                _sum_into(self.sums[c], index, part[c])
        for c in self.constants:
            self._constant(c, index, part[c], rows)
        return True

    def _count(self, index: np.ndarray, flags: list[tuple[str, np.ndarray]]) -> None:
        """Count the flags per unit: as many as fit count together as the digits of one
        float64 sum (``_packed``), taken apart only when the flags change or a unit's count
        could outgrow a digit (at the end otherwise): one weighted pass over the rows and no
        per-unit work for each piece."""
        names = [name for name, _ in flags]
        largest = int(self.count.max()) if self.span else 0   # no unit counts more of a flag than rows
        if names != [n for group, _ in self.packing for n in group] or largest >= 2 ** self.bits:
            self._unpack()
            self.bits = max(1, largest.bit_length() + 1)   # room for the unit's count to double
            together = max(1, 52 // self.bits)
            self.packing = [(names[at:at + together], np.zeros(self.span))
                            for at in range(0, len(names), together)]
        flag_of = dict(flags)
        for group, total in self.packing:
            total += np.bincount(index, weights=_packed([flag_of[n] for n in group], self.bits),
                                 minlength=self.span)

    def _unpack(self) -> None:
        """Take the packed counts apart into per-flag counts (the variant-1 rows into the
        code sums, a boolean column's into its sums)."""
        for group, total in self.packing:
            for name, counted in zip(group, _digits(total, self.bits, len(group)), strict=True):
                if name == "code":
                    self.code_sum += counted
                else:
                    self.sums[name] += counted
        self.packing = []

    def _cover(self, low: int, high: int) -> None:
        """Grow the arrays to hold ids ``low`` to ``high`` (counted from id 0 when the ids
        start near it: they index the bins without a shifted copy)."""
        lowest = 0 if 0 <= low <= high - low + 1 else low
        if self.span and lowest > self.lowest:
            lowest = self.lowest
        span = high - lowest + 1
        if self.span and lowest == self.lowest and span <= self.span:
            return
        if self.span:   # room to grow into: ids that come in order grow the arrays a few times, not every piece
            span = max(span, (self.lowest - lowest) + self.span + self.span // 4)
        at = self.lowest - lowest if self.span else 0

        def grown(values: np.ndarray) -> np.ndarray:
            out = np.zeros(span, dtype=values.dtype)
            out[at:at + len(values)] = values
            return out

        self.count, self.code_sum = grown(self.count), grown(self.code_sum)
        if self.code_squares is not None:
            self.code_squares = grown(self.code_squares)
        self.sums = {c: grown(v) for c, v in self.sums.items()}
        self.ones = {c: grown(v) for c, v in self.ones.items()}
        self.packing = [(group, grown(total)) for group, total in self.packing]
        self.lowest, self.span = lowest, span

    def _constant(self, c: str, index: np.ndarray, values: np.ndarray, rows: np.ndarray) -> None:
        """Keep each unit's per-unit value; every row must equal the one kept (within this
        piece and from the pieces before)."""
        if c not in self.ones:
            self.ones[c] = np.zeros(self.span, dtype=values.dtype)
        elif np.result_type(self.ones[c].dtype, values.dtype) != self.ones[c].dtype:
            self.ones[c] = self.ones[c].astype(np.result_type(self.ones[c].dtype, values.dtype))
        one = self.ones[c]
        seen = (self.count - rows)[index] > 0   # units with rows in earlier pieces
        differs = np.flatnonzero(seen & (values != one[index]))
        if len(differs):
            raise _not_constant(c, int(index[differs[0]]) + self.lowest)
        one[index] = values
        differs = np.flatnonzero(values != one[index])
        if len(differs):
            raise _not_constant(c, int(index[differs[0]]) + self.lowest)

    def result(self) -> GroupedUnits:
        import pyarrow as pa

        self._unpack()
        present = np.flatnonzero(self.count)
        count, code_sum = self.count[present], self.code_sum[present]
        if self.code_squares is None:   # codes 0 and 1: a unit is in one variant when its codes sum to 0 or n
            both = (code_sum != 0) & (code_sum != count)
        else:                           # n sum c^2 = (sum c)^2 exactly when every code is the same
            both = count * self.code_squares[present] != code_sum * code_sum
        low = (code_sum // np.maximum(count, 1)).astype(np.int64)
        out: dict[str, np.ndarray] = {}
        for c in self.summed:
            out[c] = self.sums[c][present].astype(np.int64) if self.integer[c] else self.sums[c][present]
        for c in self.constants:
            out[c] = self.ones[c][present]
        return low, both, pa.array(present.astype(np.int64) + self.lowest), out

    def as_part(self) -> dict[str, Any]:
        """What was counted, as rows for the hash group-by: one per unit, and a second with
        another variant code for a unit seen in two (the group-by finds it in both again)."""
        import pyarrow as pa

        low, both, ids, out = self.result()
        mixed = np.flatnonzero(both)
        part: dict[str, Any] = {"unit": pa.concat_arrays([ids, ids.take(pa.array(mixed))]),
                                "variant": pa.array(np.concatenate([low, low[mixed] + 1]).astype(np.int32))}
        for c, values in out.items():
            extra = values[mixed] if c in self.constants else np.zeros(len(mixed), dtype=values.dtype)
            part[c] = np.concatenate([values, extra])
        return part


def _packed(flags: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Boolean flags as the digits of one float64 weight per row, ``f0 + f1 B + f2 B^2 + ...``
    with ``B = 2^bits``: one weighted ``bincount`` then counts every flag per unit, exactly
    while each count stays below ``B`` and the total below 2^53 (``_digits`` takes them apart).

    >>> _packed([np.array([True, False]), np.array([True, True])], 4).tolist()
    [17.0, 16.0]
    """
    weights = flags[0].astype(np.float64)
    if len(flags) > 1:
        scratch = np.empty(len(weights))
        for digit, flag in enumerate(flags[1:], start=1):
            np.multiply(flag, float(2 ** (bits * digit)), out=scratch)
            weights += scratch
    return weights


def _digits(total: np.ndarray, bits: int, count: int) -> list[np.ndarray]:
    """The ``count`` digits of sums of ``_packed`` weights, lowest first.

    >>> [d.tolist() for d in _digits(np.array([17.0 + 2 * 16, 16.0]), 4, 2)]
    [[1.0, 0.0], [3.0, 1.0]]
    """
    out = []
    total = total.copy()
    for digit in range(count - 1, 0, -1):   # the highest digit first, each taken off
        place = float(2 ** (bits * digit))
        high = np.floor(total / place)
        out.append(high)
        total -= high * place
    return [total, *reversed(out)]


def _sum_into(total: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """Add ``values`` per unit into ``total``; when most values are 0 (a sum of one event type)
    only the others are read (the same sums: a float sum never changes by adding 0.0)."""
    nonzero = np.flatnonzero(values)
    if len(nonzero) * 4 < len(values):
        total += np.bincount(index[nonzero], weights=values[nonzero], minlength=len(total))
    else:
        total += np.bincount(index, weights=values, minlength=len(total))


def _offsets(ids: Any, lowest: int) -> np.ndarray:
    values = np.asarray(ids.to_numpy(), dtype=np.int64)
    return values - lowest if lowest else values


def _hash_group(parts: list[dict[str, Any]], value_columns: Sequence[str], summed: Sequence[str],
                constants: Sequence[str], events: int, ordered: bool) -> GroupedUnits:
    """Per-unit sums by Arrow's hash group-by (text ids, or sparse integer ids)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = [pa.table({k: v if isinstance(v, (pa.Array, pa.ChunkedArray))
                        else pa.array(v.view(np.int8) if v.dtype == bool else v)   # counts add as integers
                        for k, v in part.items()}) for part in parts]
    # pieces of several files may hold one column as integers in one and floats in another
    table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    exact = _exact_sums(table, value_columns, summed, events)
    aggregations = [("variant", "min"), ("variant", "max")]
    aggregations += [(c, "min") for c in constants] + [(c, "max") for c in constants]
    aggregations += [(c, "sum") for c in summed]
    grouped = table.group_by("unit", use_threads=exact).aggregate(aggregations)
    if ordered:   # by id, as DuckDB and Ibis return them: a seeded resampling draws the same units
        grouped = grouped.take(pc.sort_indices(grouped.column("unit")))
    low = np.asarray(grouped.column("variant_min").to_numpy(), dtype=np.int64)
    both = low != np.asarray(grouped.column("variant_max").to_numpy(), dtype=np.int64)
    uniques = grouped.column("unit")
    out: dict[str, np.ndarray] = {}
    kind = np.int64 if exact else np.float64
    for c in constants:
        lo = np.asarray(grouped.column(f"{c}_min").to_numpy(), dtype=kind)
        differs = np.flatnonzero(lo != np.asarray(grouped.column(f"{c}_max").to_numpy(), dtype=kind))
        if len(differs):
            raise _not_constant(c, uniques[int(differs[0])].as_py())
        out[c] = lo
    for c in summed:
        out[c] = np.asarray(grouped.column(f"{c}_sum").to_numpy(), dtype=kind)
    return low, both, uniques, out


def _exact_sums(table: Any, columns: Sequence[str], summed: Sequence[str], events: int) -> bool:
    """Whether every value column is integer and the per-unit sums of ``summed`` are exact
    int64 sums (their total cannot overflow)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not summed or not all(pa.types.is_integer(table.schema.field(c).type) for c in columns):
        return False
    for c in summed:
        bounds = pc.min_max(table.column(c))
        largest = max(abs(bounds["min"].as_py() or 0), abs(bounds["max"].as_py() or 0))
        if largest * max(events, 1) >= 2**62:
            return False
    return True


def _variant_labels(name: str, first: int, column: Any, field_name: str) -> Any:
    """Variant labels as text, or as a dictionary array of text (kept encoded: a 100M-row
    column of a few labels is never decoded)."""
    import pyarrow as pa

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError(f"missing {field_name}", field=field_name, **location(name, first, row))
    if pa.types.is_dictionary(column.type):
        column = pa.DictionaryArray.from_arrays(column.indices, column.dictionary.cast(pa.string()))
        return refuse_blank(name, first, column, field_name)
    return refuse_blank(name, first, column.cast(pa.string()), field_name)


def _distinct(values: Any) -> list[str]:
    import pyarrow as pa

    if pa.types.is_dictionary(values.type):
        indices = np.asarray(values.indices.to_numpy(zero_copy_only=False))
        used = np.flatnonzero(np.bincount(indices, minlength=len(values.dictionary)))
        return [values.dictionary[int(i)].as_py() for i in used]
    return values.unique().to_pylist()


def _label_at(values: Any, row: int) -> str:
    return values[row].as_py() if not hasattr(values, "dictionary") else values.dictionary[
        int(values.indices[row].as_py())].as_py()


def _codes(labels: Any, names: list[str]) -> Any:
    """Index of each label in ``names`` (null where it is not there), int8/int32 Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    value_set = pa.array(names, pa.string())
    if pa.types.is_dictionary(labels.type):
        return pc.take(pc.index_in(labels.dictionary, value_set=value_set), labels.indices)
    return pc.index_in(labels, value_set=value_set)
