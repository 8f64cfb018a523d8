"""Per-variant sufficient statistics as a table: one row per variant (or per variant and
shard), the way gbstats and spotify-confidence take them.

Columns: the variant, ``n`` (units), ``sum(x)`` for each per-unit column ``x`` and
``sum(x*y)`` for each pair a metric combines (``sum(x*x)``: the sum of squares). A mean of
``x`` needs ``sum(x)`` and ``sum(x*x)``; a ratio ``x / y`` also ``sum(y)``, ``sum(y*y)`` and
``sum(x*y)``; a proportion of ``x > 0`` reads the column ``x>0`` (its square is itself, so
``sum(x>0*x>0)`` may be left out); a CUPED covariate ``z`` adds ``sum(z)``, ``sum(z*z)`` and
its products with the metric's columns. Rows of the same variant are added up, which is
exact (raw sums merge by addition) when the rows hold disjoint sets of units: shards by hash
of the unit id, not by day (a user active on two days has one per-unit sum, whose square is
not the sum of the two days' squares).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.errors import InputError
from rankwise.experiments.moments import VariantMoments


def sum_column(a: str, b: str | None = None) -> str:
    """The column name of ``sum(a)`` or ``sum(a*b)``.

    >>> sum_column("clicks"), sum_column("clicks", "views")
    ('sum(clicks)', 'sum(clicks*views)')
    """
    return f"sum({a})" if b is None else f"sum({a}*{b})"


def statistics_table(moments: VariantMoments, variant: str = "variant") -> Any:
    """The state as a DataFrame in the layout :func:`read_statistics` reads (the variant in
    column ``variant``).

    >>> m = VariantMoments.from_units(["a", "a", "b"], {"x": [1.0, 3.0, 2.0]})
    >>> statistics_table(m).to_dict("records")[0]
    {'variant': 'a', 'n': 2, 'sum(x)': 4.0, 'sum(x*x)': 10.0}
    """
    import pandas as pd

    raw = moments.sums()
    out: dict[str, Any] = {variant: list(moments.variants), "n": [int(x) for x in raw["n"]]}
    for i, a in enumerate(moments.columns):
        out[sum_column(a)] = raw["sums"][:, i]
    for i, a in enumerate(moments.columns):
        for j in range(i, len(moments.columns)):
            out[sum_column(a, moments.columns[j])] = raw["products"][:, i, j]
    return pd.DataFrame(out)


def read_statistics(data: Any, columns: Sequence[str], pairs: Sequence[tuple[str, str]],
                    variant: str = "variant", variants: Sequence[str] | None = None) -> VariantMoments:
    """Per-variant statistics from files (CSV, TSV, Parquet, JSONL; many files or a
    directory, added up by variant), a DataFrame or a dict: ``sum(c)`` for each of
    ``columns`` and ``sum(a*b)`` (or ``sum(b*a)``) for each of ``pairs`` (squares included).
    Products no pair needs are left unknown (NaN).

    >>> table = {"variant": ["A", "B", "A"], "n": [2, 3, 1], "sum(x)": [4, 6, 1],
    ...          "sum(x*x)": [10, 14, 1]}
    >>> m = read_statistics(table, ["x"], [("x", "x")])
    >>> m.count("A"), round(m.mean("A", "x"), 12), round(m.variance("A", "x"), 12)   # (11 - 25/3) / 2
    (3, 1.666666666667, 1.333333333333)
    """
    from rankwise.data.tables import location, tables_of

    index = {c: i for i, c in enumerate(columns)}
    found: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
    read: list[str] = []
    for name, first, table in tables_of(data, None, ids=[variant]):   # "01" and "1" are two variants
        read.append(name)
        names = table.column_names
        wanted: list[tuple[str, tuple[int, int] | None]] = [(variant, None), ("n", None)]
        wanted += [(sum_column(c), (index[c], -1)) for c in columns]
        squares_of_indicators: list[int] = []
        for a, b in dict.fromkeys(pairs):
            spelled = sum_column(a, b) if sum_column(a, b) in names else sum_column(b, a)
            if spelled not in names and a == b and a.endswith(">0"):
                squares_of_indicators.append(index[a])
                continue
            wanted.append((spelled if spelled in names else sum_column(a, b), (index[a], index[b])))
        missing = [w for w, _ in wanted if w not in names]
        if missing:
            raise InputError(f"missing column(s) {', '.join(map(repr, missing))} of per-variant statistics; it has "
                             f"{', '.join(map(repr, names))}", source=name)
        labels = table.column(variant).to_pylist()
        counts = table.column("n").to_pylist()
        cells = {w: table.column(w).to_pylist() for w, place in wanted if place is not None}
        for row, label in enumerate(labels):
            where = location(name, first, row)
            if label is None or label == "":
                raise InputError(f"missing {variant}", field=variant, **where)
            n = _number(counts[row], "n", where)
            if n < 0 or n != int(n) or n >= 2**62:   # units are counted in int64
                raise InputError(f"expected a whole number of units from 0 to 2^62, got {counts[row]!r}", field="n",
                                 **where)
            sums = np.zeros(len(columns))
            products = np.full((len(columns), len(columns)), math.nan)
            for w, place in wanted:
                if place is None:
                    continue
                value = _number(cells[w][row], w, where)
                i, j = place
                if j < 0:
                    sums[i] = value
                else:
                    products[i, j] = products[j, i] = value
            for i in squares_of_indicators:
                products[i, i] = sums[i]
            for i, c in enumerate(columns):
                if n > 0 and products[i, i] < sums[i] * sums[i] / n * (1 - 1e-12) - 1e-9:
                    raise InputError(f"{sum_column(c, c)} = {products[i, i]:g} is below {sum_column(c)}^2 / n = "
                                     f"{sums[i] * sums[i] / n:g}: not the sums of one set of units",
                                     field=sum_column(c, c), **where)
            key = str(label)
            if key in found:
                n0, s0, p0 = found[key]
                if n0 + int(n) >= 2**62:
                    raise InputError(f"the units of variant {key!r} add up past 2^62", field="n", **where)
                found[key] = (n0 + int(n), s0 + sums, p0 + products)
            else:
                found[key] = (int(n), sums, products)
    if not found:
        raise InputError("no per-variant statistics: expected one row per variant", source=", ".join(read) or "<input>")
    names_out = list(variants) if variants is not None else sorted(found)
    unknown = [v for v in found if v not in names_out]
    if unknown:
        raise InputError(f"unknown variant {unknown[0]!r}; the design has {names_out}", field=variant)
    empty = (0, np.zeros(len(columns)), np.zeros((len(columns), len(columns))))
    rows = [found.get(v, empty) for v in names_out]
    return VariantMoments.from_sums(names_out, list(columns), [r[0] for r in rows],
                                    np.array([r[1] for r in rows]), np.array([r[2] for r in rows]))


def _number(value: Any, field_name: str, where: dict[str, Any]) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"expected a number, got {value!r}", field=field_name, **where) from None
    if not math.isfinite(number):
        raise InputError(f"expected a finite number, got {value!r}", field=field_name, **where)
    return number
