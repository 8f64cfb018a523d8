"""Feature-based attractiveness for click models (GCM-style, Zhang et al. 2011): a pair's
attractiveness is ``sigmoid(w . x_qd + b)`` of its (query, document) features, fitted in EM's
M-step as a weighted logistic regression on the E-step's expected attractions, so a model
scores pairs it never saw in the log from their features.

Features come from a table keyed by ``query`` and ``doc`` (a DataFrame or any file rankwise
reads) with one numeric column per feature, and/or from the ids themselves, hashed: with
``hashed=("doc",)`` each document id falls in one of ``buckets`` buckets (CRC-32 of its UTF-8
bytes, the same on every machine) and each bucket has a weight of its own, so a document's
attractiveness learnt under one query carries to the queries where it was never shown (CLAX's
hashed embeddings, as one weight per bucket). Numeric columns are standardised with the fitted
pairs' means and deviations; hashed columns are 0/1 and stored sparse. The regression has an
L2 penalty ``l2`` on the weights (not the intercept).

>>> import pandas as pd
>>> table = pd.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "mean_rank": [1.0, 3.0]})
>>> features = PairFeatures.from_table(table)
>>> x, known = features.matrix(["q"], ["a", "b", "c"], np.array([0, 0, 0]), np.array([0, 1, 2]))
>>> x.tolist(), known.tolist()
([[1.0], [3.0], [0.0]], [True, True, False])
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.errors import InputError, OptionError

HASHABLE = ("query", "doc")
"""The ids that can be hashed into features."""


def bucket_of(ids: Any, buckets: int) -> np.ndarray:
    """Each id's bucket: CRC-32 of its UTF-8 bytes modulo ``buckets``.

    >>> bucket_of(["a", "b"], 16).tolist()   # crc32(b"a") = 0xe8b7be43, crc32(b"b") = 0x71beeff9
    [3, 9]
    """
    return np.fromiter((zlib.crc32(str(i).encode("utf-8")) % buckets for i in ids), dtype=np.int64,
                       count=len(ids))


@dataclass(frozen=True)
class PairFeatures:
    """Features keyed by (query, document): a numeric table (``names``, ``index``,
    ``values``; empty when only ids are hashed) and the ids hashed into ``buckets``."""

    names: tuple[str, ...]
    index: Any          # pandas MultiIndex (query, doc), None without a table
    values: np.ndarray  # pairs x features
    hashed: tuple[str, ...] = ()
    buckets: int = 0

    @classmethod
    def ids_only(cls, hashed: tuple[str, ...], buckets: int) -> PairFeatures:
        """Only hashed ids, no table: every pair has features."""
        return cls((), None, np.zeros((0, 0)), *_hash_spec(hashed, buckets))

    def with_hashed(self, hashed: tuple[str, ...], buckets: int) -> PairFeatures:
        """These features with ``hashed`` ids added."""
        return PairFeatures(self.names, self.index, self.values, *_hash_spec(hashed, buckets))

    @property
    def width(self) -> int:
        """Columns of the design matrix: the numeric features, then the hashed buckets."""
        return len(self.names) + len(self.hashed) * self.buckets

    def hashed_matrix(self, query_ids: Any, doc_ids: Any, pair_query: np.ndarray, pair_doc: np.ndarray) -> Any:
        """The pairs' hashed ids as a sparse 0/1 matrix (pairs x buckets per hashed id)."""
        from scipy import sparse

        codes = {"query": (query_ids, pair_query), "doc": (doc_ids, pair_doc)}
        blocks = []
        for name in self.hashed:
            ids, pair_code = codes[name]
            column = bucket_of(ids, self.buckets)[pair_code]
            blocks.append(sparse.csr_matrix((np.ones(len(column)), (np.arange(len(column)), column)),
                                            shape=(len(column), self.buckets)))
        return sparse.hstack(blocks, format="csr")

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
        """The numeric feature rows of pairs given by their query and document codes, and which
        pairs have features (with a table: a row, those without get zeros; hashed ids only:
        every pair)."""
        import pandas as pd

        if self.index is None:
            return np.zeros((len(pair_query), 0)), np.ones(len(pair_query), dtype=bool)
        keys = pd.MultiIndex.from_arrays([np.asarray(query_ids, dtype=object)[pair_query].astype(str),
                                          np.asarray(doc_ids, dtype=object)[pair_doc].astype(str)])
        at = self.index.get_indexer(keys)
        known = at >= 0
        out = np.zeros((len(at), len(self.names)))
        out[known] = self.values[at[known]]
        return out, known


PLACEMENT = "placement"
"""The ``--features`` word for :func:`placement_features` of the log at hand."""


def placement_features(*logs: Any, chunk_size: int = 250_000) -> Any:
    """Where the engine placed each (query, document) pair: ``mean_log_rank``, the mean of
    log2(rank + 1) over the pair's impressions in ``logs`` (clicks are not read). The
    engine's placement is known wherever the model is used (it is the input of a result page,
    not its outcome), and it is the strongest evidence a click log carries about a pair seen a
    few times: as a feature (``model.use_features(placement_features(log))``, ``--features
    placement``) rare pairs shrink to the attractiveness of their usual rank, not to one
    baseline for all.

    >>> from rankwise.clicks.log import ClickLog
    >>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b", "a"]], [[1, 0], [0, 0]])
    >>> placement_features(log).round(4).to_dict("records")   # a and b: ranks 1 and 2 once each
    [{'query': 'q', 'doc': 'a', 'mean_log_rank': 1.2925}, {'query': 'q', 'doc': 'b', 'mean_log_rank': 1.2925}]
    """
    import pandas as pd

    frames = []
    for log in logs:
        impressions = np.zeros(log.n_pairs)
        total = np.zeros(log.n_pairs)
        for chunk in log.chunks(chunk_size):
            sums = placement_sums(chunk)
            impressions += sums["impressions"]
            total += sums["placed"]
        seen = impressions > 0
        frames.append(pd.DataFrame({"query": np.asarray(log.query_ids, dtype=object)[log.pair_query][seen],
                                    "doc": np.asarray(log.doc_ids, dtype=object)[log.pair_doc][seen],
                                    "impressions": impressions[seen], "total": total[seen]}))
    if not frames:
        raise OptionError("placement_features needs at least one click log")
    both = pd.concat(frames).groupby(["query", "doc"], sort=False, as_index=False)[["impressions", "total"]].sum()
    return pd.DataFrame({"query": both["query"], "doc": both["doc"],
                         "mean_log_rank": both["total"] / both["impressions"]})


def placement_sums(chunk: Any) -> dict[str, np.ndarray]:
    """Per (query, document) pair of ``chunk``: its impressions and the sum of log2(rank + 1)
    over them (what ``placement_features`` divides).

    >>> from rankwise.clicks.log import ClickLog
    >>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b"]], [[1, 0], [0]])
    >>> {k: v.round(4).tolist() for k, v in placement_sums(log).items()}   # b: log2(3) + log2(2)
    {'impressions': [1.0, 2.0], 'placed': [1.0, 2.585]}
    """
    rank = np.broadcast_to(np.arange(1, chunk.pairs.shape[1] + 1), chunk.pairs.shape)
    shown = chunk.mask
    return {"impressions": np.bincount(chunk.pairs[shown], minlength=chunk.n_pairs).astype(np.float64),
            "placed": np.bincount(chunk.pairs[shown], weights=np.log2(rank[shown] + 1.0), minlength=chunk.n_pairs)}


def fit_logistic(x: np.ndarray, successes: np.ndarray, trials: np.ndarray, l2: float,
                 start: np.ndarray | None = None) -> np.ndarray:
    """Weights ``[w..., b]`` maximising ``sum_i s_i ln p_i + (n_i - s_i) ln(1 - p_i) - l2 |w|^2 / 2``
    with ``p_i = sigmoid(x_i . w + b)``. A few dense features (the placement): Newton's method
    with the exact Hessian, to the optimum within rounding (a fit is then the same however its
    statistics were added up); hashed ids (sparse, many columns): L-BFGS with the exact
    gradient. ``start`` warm-starts EM.

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

    w0 = np.zeros(x.shape[1] + 1) if start is None else np.asarray(start, dtype=np.float64)
    if isinstance(x, np.ndarray) and x.shape[1] <= NEWTON_WIDTH:
        settled = _newton_logistic(x, s, n, l2, w0, objective)
        if settled is not None:
            return settled
    return np.asarray(minimize(objective, w0, jac=True, method="L-BFGS-B").x)


NEWTON_WIDTH = 64
"""Up to this many dense features ``fit_logistic`` takes Newton steps (a Hessian of that size is cheap)."""


def _newton_logistic(x: np.ndarray, s: np.ndarray, n: np.ndarray, l2: float, w: np.ndarray,
                     objective: Any) -> np.ndarray | None:
    """Newton's method with step halving for ``fit_logistic`` from ``w``: the weights where the
    gradient vanishes (steps below 1e-12), or None if 100 steps do not get there."""
    from scipy.special import expit

    design = np.column_stack([x, np.ones(len(x))])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    value, gradient = objective(w)
    total = max(float(n.sum()), 1.0)
    for _ in range(100):
        p = expit(design @ w)
        hessian = (design * (n * p * (1 - p))[:, None]).T @ design / total + np.diag(penalty) / total
        try:
            step = -np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            return None
        scale = 1.0
        for _ in range(40):
            trial = w + scale * step
            trial_value, trial_gradient = objective(trial)
            if trial_value <= value + 1e-15 * abs(value):
                break
            scale /= 2
        else:
            return w if float(np.abs(gradient).max()) < 1e-10 else None
        w, value, gradient = trial, trial_value, trial_gradient
        if float(np.abs(scale * step).max()) < 1e-12:
            return w
    return None


def _hash_spec(hashed: tuple[str, ...], buckets: int) -> tuple[tuple[str, ...], int]:
    hashed = tuple(dict.fromkeys(hashed))
    unknown = [h for h in hashed if h not in HASHABLE]
    if unknown:
        raise OptionError(f"--hash-ids: hashed ids must be among {', '.join(HASHABLE)}, got {', '.join(unknown)}")
    if hashed and not 1 <= buckets <= 2**24:
        raise OptionError(f"--buckets: expected 1 to 2^24 buckets, got {buckets}")
    return hashed, int(buckets) if hashed else 0


__all__ = ["HASHABLE", "PLACEMENT", "PairFeatures", "bucket_of", "fit_logistic", "placement_features", "placement_sums"]
