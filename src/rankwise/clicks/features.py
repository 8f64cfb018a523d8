"""Feature-based attractiveness for click models (GCM-style, Zhang et al. 2011): a pair's
attractiveness is ``sigmoid(w . x_qd + b)`` of its (query, document) features, fitted in EM's
M-step as a weighted logistic regression on the E-step's expected attractions, so a model
scores pairs it never saw in the log from their features.

Features come from a table keyed by ``query`` and ``doc`` (a DataFrame or any file rankwise
reads) with one numeric column per feature. Columns are standardised with the fitted pairs'
means and deviations; the regression has an L2 penalty ``l2`` on the weights (not the
intercept).

>>> import pandas as pd
>>> table = pd.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "mean_rank": [1.0, 3.0]})
>>> features = PairFeatures.from_table(table)
>>> x, known = features.matrix(["q"], ["a", "b", "c"], np.array([0, 0, 0]), np.array([0, 1, 2]))
>>> x.tolist(), known.tolist()
([[1.0], [3.0], [0.0]], [True, True, False])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.errors import InputError


@dataclass(frozen=True)
class PairFeatures:
    """A numeric feature table keyed by (query, document)."""

    names: tuple[str, ...]
    index: Any          # pandas MultiIndex (query, doc)
    values: np.ndarray  # pairs x features

    @classmethod
    def from_table(cls, table: Any, source: str = "<features>") -> PairFeatures:
        """From a DataFrame or a file with ``query``, ``doc`` and numeric feature columns."""
        import pandas as pd

        if not isinstance(table, pd.DataFrame):
            from rankwise.data.tables import read_table

            source = str(table)
            table = read_table(Path(table), None, ids=("query", "doc")).to_pandas()
        missing = [c for c in ("query", "doc") if c not in table.columns]
        if missing:
            raise InputError(f"features need columns 'query' and 'doc'; missing {', '.join(missing)}", source=source)
        names = tuple(c for c in table.columns if c not in ("query", "doc"))
        if not names:
            raise InputError("features need at least one numeric column besides 'query' and 'doc'", source=source)
        values = np.empty((len(table), len(names)))
        for j, name in enumerate(names):
            column = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=np.float64)
            bad = ~np.isfinite(column)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                value = table[name].iloc[row]
                shown = repr(value) if isinstance(value, str) else str(value)
                raise InputError(f"expected a finite number, got {shown}", source=source, line=row + 2, field=name)
            values[:, j] = column
        index = pd.MultiIndex.from_arrays([table["query"].astype(str), table["doc"].astype(str)])
        if index.has_duplicates:
            q, d = index[index.duplicated()][0]
            raise InputError(f"query {q!r} document {d!r} has two feature rows", source=source)
        return cls(names, index, values)

    def matrix(self, query_ids: Any, doc_ids: Any, pair_query: np.ndarray, pair_doc: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """The feature rows of pairs given by their query and document codes, and which pairs
        have a row (those without get zeros)."""
        import pandas as pd

        keys = pd.MultiIndex.from_arrays([np.asarray(query_ids, dtype=object)[pair_query].astype(str),
                                          np.asarray(doc_ids, dtype=object)[pair_doc].astype(str)])
        at = self.index.get_indexer(keys)
        known = at >= 0
        out = np.zeros((len(at), len(self.names)))
        out[known] = self.values[at[known]]
        return out, known


def fit_logistic(x: np.ndarray, successes: np.ndarray, trials: np.ndarray, l2: float,
                 start: np.ndarray | None = None) -> np.ndarray:
    """Weights ``[w..., b]`` maximising ``sum_i s_i ln p_i + (n_i - s_i) ln(1 - p_i) - l2 |w|^2 / 2``
    with ``p_i = sigmoid(x_i . w + b)`` (L-BFGS, exact gradient; ``start`` warm-starts EM).

    >>> x = np.array([[0.0], [1.0]])
    >>> w = fit_logistic(x, np.array([1.0, 3.0]), np.array([4.0, 4.0]), l2=0.0)
    >>> (1 / (1 + np.exp(-(x @ w[:-1] + w[-1])))).round(4).tolist()     # 1/4 and 3/4
    [0.25, 0.75]
    """
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    keep = trials > 0
    x, s, n = x[keep], np.minimum(successes[keep], trials[keep]), trials[keep]
    total = max(float(n.sum()), 1.0)

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w[:-1] + w[-1]
        value = -(s * log_expit(z) + (n - s) * log_expit(-z)).sum() + 0.5 * l2 * float(w[:-1] @ w[:-1])
        residual = n * expit(z) - s
        grad = np.append(x.T @ residual + l2 * w[:-1], residual.sum())
        return float(value) / total, grad / total

    w0 = np.zeros(x.shape[1] + 1) if start is None else start
    return np.asarray(minimize(objective, w0, jac=True, method="L-BFGS-B").x)


__all__ = ["PairFeatures", "fit_logistic"]
