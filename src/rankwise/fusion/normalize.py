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

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.fusion.table import PairTable

NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda")
ALIASES = {"minmax": "min-max", "min_max": "min-max", "z-score": "zmuv", "zscore": "zmuv", "z_score": "zmuv"}
FLOOR = 1e-9


def norm_name(norm: str | None) -> str | None:
    """The canonical name of a normalisation (``None``/``"none"``: no normalisation)."""
    if norm is None or str(norm).lower() == "none":
        return None
    name = ALIASES.get(str(norm).lower(), str(norm).lower())
    if name not in NORMS:
        raise RankwiseError(f"unknown normalisation {norm!r}: expected one of {', '.join(NORMS)} or none")
    return name


def _per_query(table: PairTable, values: np.ndarray, op: np.ufunc) -> np.ndarray:
    """``op`` reduced over each query's pairs (NaN where a run has none), one row per query."""
    return op.reduceat(values, table.starts, axis=0)


def normalize(table: PairTable, norm: str | None, constant: float | None = None) -> np.ndarray:
    """The table's scores [pairs, runs] normalised per query and run (NaN: not returned).

    >>> from rankwise.data.containers import Run
    >>> from rankwise.fusion.table import pair_table
    >>> t = pair_table([Run.from_dict({"q": {"a": 3.0, "b": 1.0}}), Run.from_dict({"q": {"b": 2.0, "c": 2.0}})])
    >>> normalize(t, "min-max").tolist()   # run 2 is constant: (2 - 2) / 1e-9 = 0
    [[1.0, nan], [0.0, 0.0], [nan, 0.0]]
    """
    name = norm_name(norm)
    s = table.score
    present = ~np.isnan(s)
    if name is None:
        return s.copy()
    q = table.query
    n = table.lengths.astype(np.float64)[q]  # each pair's run list length, [pairs, runs]
    if name in ("rank", "borda"):
        if name == "rank":
            return np.where(present, 1.0 - (table.rank - 1.0) / np.where(n > 0, n, 1.0), np.nan)
        c = table.candidates().astype(np.float64)[q][:, None]
        return np.where(present, 1.0 - (table.rank - 1.0) / c, 0.5 - (n - 1.0) / (2.0 * c))
    if name in ("max", "min-max"):  # fmin / fmax skip NaN (not returned); [queries, runs]
        high = _per_query(table, s, np.fmax)
        if name == "max":
            return s / np.maximum(high, FLOOR)[q]
        low = _per_query(table, s, np.fmin)
        out = s - low[q]  # NaN stays NaN
        out /= np.maximum(high - low, FLOOR)[q]
        if constant is not None:
            out[(high == low)[q] & present] = constant
        return out
    total = _per_query(table, np.where(present, s, 0.0), np.add)[q]
    if name == "sum":
        low = _per_query(table, s, np.fmin)[q]
        return np.where(present, (s - low) / np.maximum(total - low * n, FLOOR), np.nan)
    mean = total / np.where(n > 0, n, 1.0)
    spread = _per_query(table, np.where(present, (s - mean) ** 2, 0.0), np.add)[q]
    std = np.sqrt(spread / np.where(n > 0, n, 1.0))
    return np.where(present, (s - mean) / np.maximum(std, FLOOR), np.nan)
