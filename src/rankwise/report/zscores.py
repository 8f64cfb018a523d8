"""trec_eval's ``-Z``: per-query values as z-scores against reference means and deviations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankwise.errors import InputError
from rankwise.metrics.compute import RunScores

if TYPE_CHECKING:   # pathlib (with urllib.parse) is left out of trec-eval's start-up
    from pathlib import Path

MISSING_ZSCORE_VALUE = 0.0
"""What a value becomes when the reference has no mean/deviation for its query and measure."""


def read_zscores(path: str | Path) -> dict[tuple[str, str], tuple[float, float]]:
    """Read ``qid measure mean stddev`` lines (trec_eval's z-score file).

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", delete=False); _ = f.write("301 map 0.2 0.1\\n"); f.close()
    >>> read_zscores(f.name); os.unlink(f.name)
    {('301', 'map'): (0.2, 0.1)}
    """
    from rankwise.data.trec_io import read_text

    table: dict[tuple[str, str], tuple[float, float]] = {}
    # the one whole-file door: missing, empty, binary, truncated or bomb gzip are errors naming the file
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 4 fields (qid measure mean stddev), found {len(parts)}",
                             source=str(path), line=lineno)
        try:
            table[(parts[0], parts[1])] = (float(parts[2]), float(parts[3]))
        except ValueError:
            raise InputError("expected numbers for mean and stddev", source=str(path), line=lineno) from None
    return table


def to_zscores(scores: RunScores, table: dict[tuple[str, str], tuple[float, float]]) -> RunScores:
    """A copy of ``scores`` whose numeric columns hold z-scores (same column names).

    z = (value - mean) / stddev; with stddev 0 it is 0 when value == mean, else missing; a
    query or measure absent from the table is missing (trec_eval's convention: 0).
    """
    values, kinds, rules = {}, {}, {}
    qids = [str(q) for q in scores.query_ids]
    for col, vals in scores.values.items():
        if scores.kinds[col] == "string":
            values[col], kinds[col], rules[col] = vals, "string", scores.summary_rule[col]
            continue
        out = np.empty(len(qids), dtype=np.float64)
        for i, qid in enumerate(qids):
            ref = table.get((qid, col))
            v = float(vals[i])
            if ref is None:
                out[i] = MISSING_ZSCORE_VALUE
            elif ref[1]:
                out[i] = (v - ref[0]) / ref[1]
            else:
                out[i] = 0.0 if v == ref[0] else MISSING_ZSCORE_VALUE
        values[col], kinds[col], rules[col] = out, "float", scores.summary_rule[col]
    return RunScores(scores.name, scores.query_ids, values, kinds, rules)
