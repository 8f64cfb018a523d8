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

from rankwise.data.tables import location, number_column, tables_of
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

    def __len__(self) -> int:
        return len(self.codes)


SLICE_ROWS = 4_000_000


def _labels(name: str, first: int, column: Any, field_name: str) -> Any:
    import pyarrow as pa

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError(f"missing {field_name}", field=field_name, **location(name, first, row))
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    return _refuse_blank(name, first, column.cast(pa.string()), field_name)


def _refuse_blank(name: str, first: int, column: Any, field_name: str) -> Any:
    """``column`` (text, or a dictionary of text), refused when a row is empty or blank: empty
    unit ids would merge into one unit, an empty variant would become an arm named ''."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = column.dictionary if pa.types.is_dictionary(column.type) else column
    blank = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0)
    if pc.any(blank).as_py():
        rows = np.asarray(blank.to_numpy(zero_copy_only=False))
        if pa.types.is_dictionary(column.type):
            rows = np.isin(np.asarray(column.indices.to_numpy(zero_copy_only=False)), np.flatnonzero(rows))
        if rows.any():
            raise InputError(f"empty {field_name}; every row needs one", field=field_name,
                             **location(name, first, int(np.flatnonzero(rows)[0])))
    return column


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

    Integer unit ids in a range not much wider than the number of events are summed by
    counting into arrays indexed by the id (units in id order). Other ids go through Arrow's
    hash group-by: on every core when every value column holds integers (exact int64 sums;
    units then come in no fixed order, ``ordered=True`` sorts them by id for a seeded
    resampling), on one thread for float columns, so their sums never change from run to run.
    Integer columns give integer per-unit sums either way.

    >>> u = aggregate_units({"user": ["a", "a", "b"], "arm": ["x", "x", "y"], "clicks": [1, 2, 0]},
    ...                     unit="user", variant="arm", counts=["clicks"], ordered=True)
    >>> u.variants, u.codes.tolist(), u.values["clicks"].tolist()
    (['x', 'y'], [0, 1], [3, 0])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if mixed not in MIXED:
        raise OptionError(f"mixed must be one of {', '.join(MIXED)}, got {mixed!r}")
    value_columns = list(dict.fromkeys([*sums, *counts, *constants]))
    columns = list(dict.fromkeys([unit, variant, *value_columns]))
    pieces = [(name, first + start, table.slice(start, SLICE_ROWS))
              for name, first, table in tables_of(data, columns, ids=[unit, variant])
              for start in range(0, max(len(table), 1), SLICE_ROWS)]   # zero-copy slices bound the temporaries
    events = sum(len(t) for _, _, t in pieces)
    if events == 0:
        raise InputError("no events", source=", ".join(n for n, _, _ in pieces) or "<input>")
    labels = [_variant_labels(name, first, table.column(variant).combine_chunks(), variant)
              for name, first, table in pieces]
    if variants is None:
        found: dict[str, None] = {}
        for values in labels:
            found.update(dict.fromkeys(_distinct(values)))
        names = sorted(found)
    else:
        names = list(variants)
    parts = []
    unit_ids = [_unit_ids(name, first, table.column(unit).combine_chunks(), unit) for name, first, table in pieces]
    unit_type = pa.int64() if all(pa.types.is_integer(a.type) for a in unit_ids) else pa.string()
    from rankwise.progress import step, tracked

    for (name, first, table), values, ids in tracked(list(zip(pieces, labels, unit_ids, strict=True)),
                                                     "reading events"):
        codes = _codes(values, names)
        if codes.null_count:
            row = int(np.flatnonzero(np.asarray(codes.is_null().to_numpy(zero_copy_only=False)))[0])
            raise InputError(f"unknown variant {_label_at(values, row)!r}; the design has {names}", field=variant,
                             **location(name, first, row))
        part = {"unit": ids.cast(unit_type), "variant": codes}
        for c in value_columns:
            column = table.column(c).combine_chunks()
            if pa.types.is_boolean(column.type) and not column.null_count and c not in constants:
                part[c] = np.asarray(column.to_numpy(zero_copy_only=False), dtype=bool)   # counted, not summed
            else:
                part[c] = number_column(name, first, column, c, c in counts)
        parts.append(part)
    summed = [c for c in value_columns if c not in constants]
    with step(f"summing {events:,} events per unit"):
        grouped = _dense_group(parts, summed, constants) if unit_type == pa.int64() else None
        if grouped is None:
            grouped = _hash_group(parts, value_columns, summed, constants, events, ordered)
    low, both, uniques, out = grouped
    if both.any() and mixed == "error":
        first_unit = pc.min(uniques.filter(pa.array(both))).as_py()
        raise InputError(f"unit {first_unit!r} appears in more than one variant ({int(both.sum())} such units); "
                         "pass mixed='exclude' (--mixed exclude) to leave them out", field=unit)
    keep = ~both
    if both.any():
        return Units(names, low[keep], {c: v[keep] for c, v in out.items()}, uniques.filter(pa.array(keep)),
                     int(both.sum()), events, list(dict.fromkeys(n for n, _, _ in pieces)))
    return Units(names, low, out, uniques, 0, events, list(dict.fromkeys(n for n, _, _ in pieces)))


GroupedUnits = tuple[np.ndarray, np.ndarray, Any, dict[str, np.ndarray]]
"""(variant code, in-two-variants mask, unit ids (Arrow), per-unit columns), one row per unit."""


def _not_constant(c: str, unit_id: Any) -> InputError:
    return InputError(f"unit {unit_id!r} has different values of the per-unit column; a covariate "
                      "is one pre-experiment value per unit", field=c)


def _dense_group(parts: list[dict[str, Any]], summed: Sequence[str], constants: Sequence[str]) -> GroupedUnits | None:
    """Per-unit sums by counting into an array indexed by the unit id: for integer ids in a
    range not much wider than the number of events (one pass, no hash table; units in id
    order). Integer sums stay exact (totals below 2^53); float sums add in row order, so
    they never change from run to run. None when the ids are too sparse or integer totals too
    large."""
    import pyarrow as pa
    import pyarrow.compute as pc

    events = sum(len(part["variant"]) for part in parts)
    bounds = [pc.min_max(part["unit"]) for part in parts]
    lowest = min(int(b["min"].as_py()) for b in bounds)
    span = max(int(b["max"].as_py()) for b in bounds) - lowest + 1
    if span > 2 * events + 1_000_000:
        return None
    if 0 <= lowest <= span:   # count from id 0: the ids index the bins without a shifted copy
        span += lowest
        lowest = 0
    for c in summed:
        largest = max(max(abs(int(part[c].min())), abs(int(part[c].max())))
                      if part[c].dtype.kind in "iu" and len(part[c]) else 1 if part[c].dtype == bool else 0
                      for part in parts)
        if largest * events >= 2**53:
            return None
    several = max(int(pc.max(part["variant"]).as_py()) for part in parts) > 1
    count = np.zeros(span, np.int64)
    code_sum = np.zeros(span)
    code_squares = np.zeros(span) if several else None
    sums = {c: np.zeros(span) for c in summed}
    # counts below 2^24 per unit (fewer events than that) pack two to a float64 weight, exactly:
    # one pass over the ids counts two things (the rows and variant 1's; two event types)
    packed = events < PACKED
    for part in parts:   # one pass per column over each file: nothing of event size is concatenated
        index = _offsets(part["unit"], lowest)
        flags: list[tuple[str, np.ndarray | None]] = [("count", None)]
        if code_squares is None:   # codes 0 and 1: their sum counts the rows in variant 1
            flags.append(("code", np.asarray(part["variant"].to_numpy()) == 1))
        else:
            codes = np.asarray(part["variant"].to_numpy(), dtype=np.float64)
            code_sum += np.bincount(index, weights=codes, minlength=span)
            code_squares += np.bincount(index, weights=codes * codes, minlength=span)
        flags += [(c, part[c]) for c in summed if part[c].dtype == bool]
        totals = _count_flags(index, flags, span, packed)
        count += totals.pop("count").astype(np.int64)
        if "code" in totals:
            code_sum += totals.pop("code")
        for c, total in totals.items():
            sums[c] += total
        for c in summed:
            if part[c].dtype != bool:
                sums[c] += np.bincount(index, weights=part[c], minlength=span)
    present = np.flatnonzero(count)
    count, code_sum = count[present], code_sum[present]
    if code_squares is None:   # codes 0 and 1: a unit is in one variant when its codes sum to 0 or n
        both = (code_sum != 0) & (code_sum != count)
    else:                      # n sum c^2 = (sum c)^2 exactly when every code is the same
        both = count * code_squares[present] != code_sum * code_sum
    low = (code_sum // np.maximum(count, 1)).astype(np.int64)
    out: dict[str, np.ndarray] = {}
    for c in summed:
        integer = all(part[c].dtype.kind in "iub" for part in parts)
        out[c] = sums[c][present].astype(np.int64) if integer else sums[c][present]
    for c in constants:
        kind = np.result_type(*[part[c].dtype for part in parts])
        one = np.zeros(span, dtype=kind)
        for part in parts:
            one[_offsets(part["unit"], lowest)] = part[c]
        for part in parts:   # any one of the unit's values was kept: all must equal it
            index = _offsets(part["unit"], lowest)
            differs = np.flatnonzero(part[c] != one[index])
            if len(differs):
                raise _not_constant(c, int(index[differs[0]]) + lowest)
        out[c] = one[present]
    return low, both, pa.array(present.astype(np.int64) + lowest), out


PACKED = 2 ** 24
"""Per-unit counts below this pack two to one float64 bincount weight (exact below 2^53)."""


def _count_flags(index: np.ndarray, flags: list[tuple[str, np.ndarray | None]], span: int,
                 packed: bool) -> dict[str, np.ndarray]:
    """Per-unit counts of each flag (``None``: every row), two flags per pass when ``packed``.

    >>> index = np.array([0, 1, 1, 2])
    >>> {k: v.tolist() for k, v in _count_flags(index, [("rows", None), ("odd", index % 2 == 1)], 3, True).items()}
    {'rows': [1.0, 2.0, 1.0], 'odd': [0.0, 2.0, 0.0]}
    """
    out: dict[str, np.ndarray] = {}
    step = 2 if packed else 1
    for at in range(0, len(flags), step):
        pair = flags[at:at + step]
        if len(pair) == 1:
            name, flag = pair[0]
            out[name] = np.bincount(index if flag is None else index[flag], minlength=span).astype(np.float64)
            continue
        (low_name, low), (high_name, high) = pair
        weights = np.ones(len(index)) if low is None else low.astype(np.float64)
        weights += (np.ones(len(index)) if high is None else high.astype(np.float64)) * PACKED
        total = np.bincount(index, weights=weights, minlength=span)
        high_count = np.floor(total / PACKED)
        out[low_name], out[high_name] = total - high_count * PACKED, high_count
    return out


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
        return _refuse_blank(name, first, column, field_name)
    return _refuse_blank(name, first, column.cast(pa.string()), field_name)


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
