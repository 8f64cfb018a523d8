"""Slices of an experiment by a dimension of its units (country, device, new or returning):
each unit's value of the dimension, and the units of one value.

A unit's value is the one on its first row (its first event, or its first exposure when an
exposure table is given); a unit whose rows disagree keeps that first value and is counted in
a warning; a unit without a value is in the slice ``(missing)``. Each slice is analysed as an
experiment of its own, with the same tests; ``CORRECTION_SCOPES`` says which p-values a
multiple-comparison correction runs across.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rankwise.data.tables import tables_of
from rankwise.errors import OptionError
from rankwise.experiments.events import Units
from rankwise.params import Declared, Registry

MISSING = "(missing)"
"""The slice of units without a value of the dimension."""


def _groups_of(key: Any) -> list[np.ndarray]:
    """Row positions of each value of ``key``, in order of first appearance."""
    return [np.flatnonzero((key == value).to_numpy()) for value in dict.fromkeys(key)]


def per_slice(frame: Any) -> list[np.ndarray]:
    """The rows of each slice (the whole experiment's among them)."""
    return _groups_of(frame[["dimension", "slice"]].astype(str).agg("\x1f".join, axis=1))


def per_metric(frame: Any) -> list[np.ndarray]:
    """The rows of each metric, across its slices."""
    return _groups_of(frame["metric"])


def every_row(frame: Any) -> list[np.ndarray]:
    """Every row together."""
    return [np.arange(len(frame))]


Groups = Callable[..., list[np.ndarray]]
"""A scope's target: ``(frame, **params) -> row positions of each group corrected together``."""

@dataclass(frozen=True)
class Scope(Declared[Groups]):
    """A correction scope; ``phrase``: how a report says it (``holm per slice``)."""

    phrase: str = ""


CORRECTION_SCOPES: Registry[Scope] = Registry("correction scope", (
    Scope("slice", per_slice, "Within each slice (and the whole experiment), across its arms x metrics.",
             reference="each slice read as an experiment of its own", phrase="per slice"),
    Scope("metric", per_metric, "Within each metric, across its arms x slices.",
          reference="a family of tests per metric (Eppo's per-metric scope)", phrase="per metric"),
    Scope("all", every_row, "Across every arm x metric x slice, the whole experiment included.",
          reference="the familywise error of the whole table (Holm 1979)", phrase="across all"),
), option="--correction-scope")
"""Which p-values a multiple-comparison correction runs across when the results are sliced."""


def unit_labels(data: Any, unit: str, dimension: str, units: Units) -> tuple[np.ndarray, int]:
    """Each unit's value of ``dimension`` (text, in the order of ``units``), and how many units
    had more than one value.

    >>> from rankwise.experiments.events import aggregate_units
    >>> rows = {"u": [1, 1, 2, 3], "arm": ["a", "a", "b", "b"], "country": ["DE", "FR", "FR", None], "x": [1, 2, 3, 4]}
    >>> units = aggregate_units(rows, "u", "arm", sums=["x"])
    >>> labels, conflicting = unit_labels(rows, "u", "country", units)
    >>> labels.tolist(), conflicting   # unit 1's first row says DE
    (['DE', 'FR', '(missing)'], 1)
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if units.unit_ids is None:
        raise OptionError("slices need the units' ids; this path keeps none")
    kind = units.unit_ids.type
    parts = []
    for _, _, table in tables_of(data, [unit, dimension], ids=[unit]):
        ids = table.column(unit).combine_chunks()
        values = table.column(dimension).combine_chunks()
        if pa.types.is_dictionary(values.type):
            values = values.dictionary_decode()
        parts.append(pa.table({"unit": ids.cast(kind), "value": values.cast(pa.string())}))
    rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    per_unit = rows.group_by("unit", use_threads=False).aggregate(
        [("value", "first"), ("value", "count_distinct", pc.CountOptions(mode="all"))])
    return labels_in_order(per_unit.rename_columns(["unit", "value", "distinct"]), units)


def labels_in_order(per_unit: Any, units: Units) -> tuple[np.ndarray, int]:
    """Each unit's label in the order of ``units`` from a table of one row per unit (``unit``,
    ``value``: the label, null for none; ``distinct``: how many values its rows had, nulls
    counted), and how many units had more than one; what a warehouse engine computes where the
    data lies.

    >>> import pyarrow as pa
    >>> from rankwise.experiments.events import aggregate_units
    >>> units = aggregate_units({"u": [1, 2], "arm": ["a", "b"], "x": [1, 2]}, "u", "arm", sums=["x"])
    >>> per_unit = pa.table({"unit": [2, 1], "value": ["FR", None], "distinct": [2, 1]})
    >>> labels, conflicting = labels_in_order(per_unit, units)
    >>> labels.tolist(), conflicting
    (['(missing)', 'FR'], 1)
    """
    import pyarrow.compute as pc

    if units.unit_ids is None:
        raise OptionError("slices need the units' ids; this path keeps none")
    ids = per_unit.column("unit")
    if ids.type != units.unit_ids.type:
        ids = ids.cast(units.unit_ids.type)
    at = pc.index_in(units.unit_ids, value_set=ids)
    value = per_unit.column("value")
    if value.type != "string":
        value = value.cast("string")
    first = pc.take(value, at)
    labels = np.asarray(pc.fill_null(first, MISSING).to_numpy(zero_copy_only=False), dtype=object)
    distinct = np.asarray(pc.fill_null(pc.take(per_unit.column("distinct"), at), 0).to_numpy(zero_copy_only=False))
    return labels, int((distinct > 1).sum())


def subset(units: Units, keep: np.ndarray) -> Units:
    """The units where ``keep`` is true (without the whole experiment's per-event quantiles,
    which are not the subset's)."""
    import pyarrow as pa

    ids = units.unit_ids.filter(pa.array(keep)) if units.unit_ids is not None else None
    return replace(units, codes=units.codes[keep], values={c: v[keep] for c, v in units.values.items()},
                   unit_ids=ids, mixed=0, event_quantiles={})


def slice_values(labels: np.ndarray) -> list[str]:
    """The dimension's values, in sorted order, the missing ones last."""
    found = sorted({str(v) for v in labels} - {MISSING})
    return found + ([MISSING] if (labels == MISSING).any() else [])


def correction_groups(frame: Any, scope: str) -> list[np.ndarray]:
    """Row positions of each group of p-values corrected together: the groups of ``scope``
    (a spelling of ``CORRECTION_SCOPES``)."""
    member, params = CORRECTION_SCOPES.parse(scope)
    return member.target(frame, **params)


def check_dimensions(dimensions: Sequence[str], unit: str, variant: str) -> list[str]:
    """The dimensions, refused when one is the unit or the variant column, or given twice."""
    out = list(dict.fromkeys(dimensions))
    for name in out:
        if name in (unit, variant):
            raise OptionError(f"slice by {name!r}: that is the {'unit' if name == unit else 'variant'} column")
    return out
