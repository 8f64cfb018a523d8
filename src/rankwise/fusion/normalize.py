"""Score normalisations for fusion, per query and per run, over the documents the run returned
(ranx's definitions; ``d = max(denominator, 1e-9)`` keeps a constant list from dividing by 0):

- ``min-max``: (s - min) / d(max - min);  ``max``: s / d(max);
- ``sum``: (s - min) / d(sum - n min);  ``zmuv`` (``z-score``): (s - mean) / d(std), std over n;
- ``rank``: 1 - (rank - 1) / n;
- ``borda``: 1 - (rank - 1) / C for a returned document, and 0.5 - (n - 1) / (2 C) for a
  candidate the run did not return (C: the documents all runs returned for the query), so that
  every run then scores every candidate;

where n is the length of the run's list for the query. ``None`` keeps the scores. ``constant``
overrides what a list whose scores are all equal normalises to under ``min-max`` (the formula
gives 0; Pyserini's ``normalize`` gives 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from rankwise.fusion.table import PairTable
from rankwise.params import Declared, Param, Registry, split_call

FLOOR = 1e-9


def _per_query(table: PairTable, values: np.ndarray, op: np.ufunc) -> np.ndarray:
    """``op`` reduced over each query's pairs (NaN where a run has none), one row per query."""
    return op.reduceat(values, table.starts, axis=0)


def _lengths(table: PairTable) -> np.ndarray:
    """Each pair's run list length, [pairs, runs]."""
    return table.lengths.astype(np.float64)[table.query]


def _rank(table: PairTable) -> np.ndarray:
    n = _lengths(table)
    return np.where(~np.isnan(table.score), 1.0 - (table.rank - 1.0) / np.where(n > 0, n, 1.0), np.nan)


def _borda(table: PairTable) -> np.ndarray:
    n = _lengths(table)
    c = table.candidates().astype(np.float64)[table.query][:, None]
    return np.where(~np.isnan(table.score), 1.0 - (table.rank - 1.0) / c, 0.5 - (n - 1.0) / (2.0 * c))


def _max(table: PairTable) -> np.ndarray:
    high = _per_query(table, table.score, np.fmax)   # fmax skips NaN (not returned); [queries, runs]
    return table.score / np.maximum(high, FLOOR)[table.query]


def _min_max(table: PairTable, constant: float | None = None) -> np.ndarray:
    s, q = table.score, table.query
    high = _per_query(table, s, np.fmax)
    low = _per_query(table, s, np.fmin)
    out = s - low[q]  # NaN stays NaN
    out /= np.maximum(high - low, FLOOR)[q]
    if constant is not None:
        out[(high == low)[q] & ~np.isnan(s)] = constant
    return out


def _sum(table: PairTable) -> np.ndarray:
    s, q, n = table.score, table.query, _lengths(table)
    present = ~np.isnan(s)
    total = _per_query(table, np.where(present, s, 0.0), np.add)[q]
    low = _per_query(table, s, np.fmin)[q]
    return np.where(present, (s - low) / np.maximum(total - low * n, FLOOR), np.nan)


def _zmuv(table: PairTable) -> np.ndarray:
    s, q, n = table.score, table.query, _lengths(table)
    present = ~np.isnan(s)
    total = _per_query(table, np.where(present, s, 0.0), np.add)[q]
    mean = total / np.where(n > 0, n, 1.0)
    spread = _per_query(table, np.where(present, (s - mean) ** 2, 0.0), np.add)[q]
    std = np.sqrt(spread / np.where(n > 0, n, 1.0))
    return np.where(present, (s - mean) / np.maximum(std, FLOOR), np.nan)


class Normaliser(Protocol):
    """What a normalisation's ``target`` is: the table's scores [pairs, runs] normalised per
    query and run, from the table and the member's declared parameters."""

    def __call__(self, table: PairTable, /, **params: Any) -> np.ndarray: ...


CONSTANT = Param("constant", float, None, "the value of every score of a run that is constant within a query "
                 "(default: 0, as (s - min) / max(max - min, 1e-9) gives)")

NORMALISATIONS: Registry[Declared[Callable[..., np.ndarray]]] = Registry("normalisation", (
    Declared("min-max", _min_max, "(s - min) / (max - min) per query and run.", (CONSTANT,), aliases=("minmax",),
             reference="ranx min-max"),
    Declared("max", _max, "s / max per query and run.", reference="ranx max"),
    Declared("sum", _sum, "(s - min) / (sum - n min) per query and run.", reference="ranx sum"),
    Declared("zmuv", _zmuv, "(s - mean) / std per query and run (std over n).", aliases=("z-score", "zscore"),
             reference="ranx zmuv"),
    Declared("rank", _rank, "1 - (rank - 1) / n.", reference="ranx rank"),
    Declared("borda", _borda, "1 - (rank - 1) / C; a candidate the run did not return 0.5 - (n - 1) / (2 C).",
             reference="ranx borda"),
    Declared("none", lambda table: table.score.copy(), "The scores as they are.", reference="-"),
), option="--norm")
"""The score normalisations of fusion."""

NORMS = tuple(name for name in NORMALISATIONS.names() if name != "none")


def norm_name(norm: str | None) -> str | None:
    """The canonical name of a normalisation (``None``/``"none"``: no normalisation)."""
    if norm is None:
        return None
    name = NORMALISATIONS.get(str(norm)).name
    return None if name == "none" else name


def normalize(table: PairTable, norm: str | None, constant: float | None = None) -> np.ndarray:
    """The table's scores [pairs, runs] normalised per query and run (NaN: not returned).

    >>> from rankwise.data.containers import Run
    >>> from rankwise.fusion.table import pair_table
    >>> t = pair_table([Run.from_dict({"q": {"a": 3.0, "b": 1.0}}), Run.from_dict({"q": {"b": 2.0, "c": 2.0}})])
    >>> normalize(t, "min-max").tolist()   # run 2 is constant: (2 - 2) / 1e-9 = 0
    [[1.0, nan], [0.0, 0.0], [nan, 0.0]]
    """
    member, params = resolve_norm(norm, constant)
    target: Normaliser = member.target
    return target(table, **params)


def resolve_norm(norm: str | None, constant: float | None = None) -> tuple[Declared, dict[str, Any]]:
    """The normalisation a spelling names (``min-max``, ``min-max(constant=0.5)``) and its
    parameters; ``constant`` (a fusion profile's) joins them for the members that declare it.

    >>> member, params = resolve_norm("min-max(constant=0.5)")
    >>> member.name, params
    ('min-max', {'constant': 0.5})
    >>> resolve_norm("zmuv", constant=0.5)[1]   # zmuv has no constant: the profile's is not its
    {}
    """
    text = "none" if norm is None else str(norm)
    member = NORMALISATIONS.get(split_call(text)[0])
    takes = constant is not None and any(p.name == "constant" for p in member.params)
    inline = split_call(text)[1]
    return NORMALISATIONS.parse(text, **({"constant": constant} if takes and "constant" not in inline else {}))
