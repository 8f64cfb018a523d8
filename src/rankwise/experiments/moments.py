"""Per-variant sufficient statistics of per-unit values: a mergeable state.

For each variant ``v`` and value columns ``x_1..x_k`` (one row per unit) the state holds the
number of units ``n_v``, the mean vector and the co-moment matrix
``M_v = sum_i (x_i - mean_v)(x_i - mean_v)^T``, from which every mean, variance, covariance,
ratio (delta method) and CUPED estimate is computed. Two states merge with Chan, Golub and
LeVeque's pairwise formula (``M = M_a + M_b + d d^T n_a n_b / n``, ``d`` the difference of the
means), so shards of units (a file each, or hash partitions) give the one-pass statistics.
The co-moments avoid the cancellation of raw sums of squares. States also come from the raw
sums that gbstats and spotify-confidence take (``n``, sums, sums of squares and products).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rankwise.errors import InputError, RankwiseError


def _products_fit(matrix: np.ndarray) -> bool:
    """Whether every sum of products of two columns fits in int64."""
    if not matrix.size:
        return True
    largest = int(np.abs(matrix).max())
    return largest * largest * len(matrix) < 2**62


@dataclass
class VariantMoments:
    """Count, means and co-moments of ``columns`` for each of ``variants``.

    >>> m = VariantMoments.from_units(["a", "a", "b"], {"x": [1.0, 3.0, 5.0]})
    >>> m.count("a"), m.mean("a", "x"), m.variance("a", "x")   # (1 - 2)^2 + (3 - 2)^2 over n - 1 = 1
    (2, 2.0, 2.0)
    """

    variants: list[str]
    columns: list[str]
    n: np.ndarray  # (variants,) int64
    means: np.ndarray  # (variants, columns)
    comoments: np.ndarray  # (variants, columns, columns)

    @classmethod
    def from_units(cls, variant: Sequence[str] | np.ndarray, values: Mapping[str, Sequence[float] | np.ndarray],
                   variants: Sequence[str] | None = None) -> VariantMoments:
        """The state of a per-unit table: each unit's variant and its value columns."""
        labels = np.asarray(variant).astype(str)
        names = list(variants) if variants is not None else sorted(set(labels.tolist()))
        uniques, inverse = np.unique(labels, return_inverse=True)
        index = {name: i for i, name in enumerate(names)}
        unknown = [u for u in uniques.tolist() if u not in index]
        if unknown:
            raise InputError(f"variant {unknown[0]!r} is not one of {names}", field="variant")
        codes = np.array([index[u] for u in uniques.tolist()], dtype=np.int64)[inverse] if len(labels) \
            else np.zeros(0, np.int64)
        columns = list(values)
        matrix = np.column_stack([np.asarray(values[c], dtype=np.float64) for c in columns]) if columns \
            else np.zeros((len(labels), 0))
        return cls.from_codes(codes, matrix, names, columns)

    @classmethod
    def from_codes(cls, codes: np.ndarray, matrix: np.ndarray, variants: list[str],
                   columns: list[str]) -> VariantMoments:
        """The state of units given as variant codes (index into ``variants``) and a
        (units x columns) matrix.

        An integer matrix (summed counts) gives exact statistics: the sums and cross-products
        are summed in int64 and each co-moment ``(n P - S S^T) / n`` is formed in exact integer
        arithmetic and rounded once, so the state does not depend on the order of the units.

        >>> codes = np.array([0, 0, 1])
        >>> m = VariantMoments.from_codes(codes, np.array([[1], [4], [2]]), ["a", "b"], ["x"])
        >>> m.mean("a", "x"), m.variance("a", "x")   # (1 + 16 - 5^2 / 2) / (2 - 1)
        (2.5, 4.5)
        """
        k = len(columns)
        n = np.bincount(codes, minlength=len(variants)).astype(np.int64)
        means = np.zeros((len(variants), k))
        comoments = np.zeros((len(variants), k, k))
        if np.issubdtype(matrix.dtype, np.integer):
            if _products_fit(matrix):
                return cls._exact(codes, matrix, list(variants), list(columns), n)
            matrix = matrix.astype(np.float64)
        if len(codes) and np.isnan(matrix).any():
            row = int(np.flatnonzero(np.isnan(matrix).any(axis=1))[0])
            raise InputError("NaN value; every unit needs a number", line=row + 1,
                             field=columns[int(np.flatnonzero(np.isnan(matrix[row]))[0])])
        sorted_rows = np.argsort(codes, kind="stable") if len(codes) else codes
        bounds = np.concatenate(([0], np.cumsum(n)))
        for v in range(len(variants)):
            if n[v] == 0:
                continue
            block = matrix[sorted_rows[bounds[v]:bounds[v + 1]]]
            means[v] = block.mean(axis=0)
            centred = block - means[v]
            comoments[v] = centred.T @ centred
        return cls(list(variants), list(columns), n, means, comoments)

    @classmethod
    def _exact(cls, codes: np.ndarray, matrix: np.ndarray, variants: list[str], columns: list[str],
               n: np.ndarray) -> VariantMoments:
        k = len(columns)
        matrix = matrix.astype(np.int64, copy=False)
        sums: list[list[int]] = []
        products: list[list[list[int]]] = []
        for v in range(len(variants)):
            block = matrix[codes == v]
            sums.append([int(x) for x in block.sum(axis=0, dtype=np.int64)])
            products.append([[int(np.dot(block[:, i], block[:, j])) for j in range(k)] for i in range(k)])
        return cls.from_exact_sums(variants, columns, [int(x) for x in n], sums, products)

    @classmethod
    def from_exact_sums(cls, variants: Sequence[str], columns: Sequence[str], n: Sequence[int],
                        sums: Sequence[Sequence[int]], products: Sequence[Sequence[Sequence[int]]]) -> VariantMoments:
        """A state from integer sums and cross-products (Python integers: no overflow), each
        co-moment ``(n P - S S^T) / n`` formed exactly and rounded once, so that any order or
        engine of summation (NumPy, a database) gives the same state bit for bit.

        >>> m = VariantMoments.from_exact_sums(["a"], ["x"], [2], [[4]], [[[10]]])
        >>> m.mean("a", "x"), m.variance("a", "x")   # (2 * 10 - 16) / 2 / (2 - 1)
        (2.0, 2.0)
        """
        k = len(columns)
        means = np.zeros((len(variants), k))
        comoments = np.zeros((len(variants), k, k))
        for v in range(len(variants)):
            count = int(n[v])
            if count == 0:
                continue
            means[v] = [int(x) / count for x in sums[v]]
            for i in range(k):
                for j in range(i, k):
                    product = int(products[v][i][j])
                    comoments[v, i, j] = comoments[v, j, i] = \
                        (count * product - int(sums[v][i]) * int(sums[v][j])) / count
        return cls(list(variants), list(columns), np.asarray([int(x) for x in n], dtype=np.int64), means, comoments)

    @classmethod
    def from_sums(cls, variants: Sequence[str], columns: Sequence[str], n: Sequence[int],
                  sums: np.ndarray, products: np.ndarray) -> VariantMoments:
        """A state from raw sums: ``n[v]``, ``sums[v, i] = sum x_i`` and
        ``products[v, i, j] = sum x_i x_j`` (sums of squares on the diagonal), the way gbstats
        and spotify-confidence take per-variant statistics.

        >>> m = VariantMoments.from_sums(["a"], ["x"], [2], np.array([[4.0]]), np.array([[[10.0]]]))
        >>> m.mean("a", "x"), m.variance("a", "x")   # (10 - 4^2 / 2) / (2 - 1)
        (2.0, 2.0)
        """
        n_arr = np.asarray(n, dtype=np.int64)
        sums = np.asarray(sums, dtype=np.float64).reshape(len(variants), len(columns))
        products = np.asarray(products, dtype=np.float64).reshape(len(variants), len(columns), len(columns))
        if (n_arr < 0).any():
            raise InputError(f"negative unit count {int(n_arr[n_arr < 0][0])}", field="n")
        safe = np.maximum(n_arr, 1)[:, None]
        means = sums / safe
        comoments = products - np.einsum("vi,vj->vij", sums, sums) / safe[:, :, None]
        return cls(list(variants), list(columns), n_arr, means, comoments)

    def merge(self, other: VariantMoments) -> VariantMoments:
        """The statistics of both states' units together (disjoint sets of units).

        >>> a = VariantMoments.from_units(["a", "a"], {"x": [1.0, 3.0]})
        >>> b = VariantMoments.from_units(["a"], {"x": [5.0]})
        >>> a.merge(b).variance("a", "x")   # of 1, 3, 5
        4.0
        """
        if other.columns != self.columns:
            raise RankwiseError(f"cannot merge statistics of columns {other.columns} into {self.columns}")
        variants = list(dict.fromkeys(self.variants + other.variants))
        out = VariantMoments(variants, list(self.columns), np.zeros(len(variants), np.int64),
                             np.zeros((len(variants), len(self.columns))),
                             np.zeros((len(variants), len(self.columns), len(self.columns))))
        for state in (self, other):
            for i, name in enumerate(state.variants):
                v = variants.index(name)
                out._add(v, int(state.n[i]), state.means[i], state.comoments[i])
        return out

    def __add__(self, other: VariantMoments) -> VariantMoments:
        return self.merge(other)

    def empty(self) -> VariantMoments:
        """The state of no units with this state's variants and columns (``merge``'s identity).

        >>> m = VariantMoments.from_units(["a", "b"], {"x": [1.0, 3.0]})
        >>> (m.empty() + m).mean("b", "x"), m.empty().n.tolist()
        (3.0, [0, 0])
        """
        k = len(self.columns)
        return VariantMoments(list(self.variants), list(self.columns), np.zeros(len(self.variants), np.int64),
                              np.zeros((len(self.variants), k)), np.zeros((len(self.variants), k, k)))

    def _add(self, v: int, n_b: int, mean_b: np.ndarray, m_b: np.ndarray) -> None:
        n_a = int(self.n[v])
        total = n_a + n_b
        if n_b == 0:
            return
        delta = mean_b - self.means[v]
        self.means[v] = self.means[v] + delta * (n_b / total)
        self.comoments[v] = self.comoments[v] + m_b + np.outer(delta, delta) * (n_a * n_b / total)
        self.n[v] = total

    def pooled(self, variants: Sequence[str] | None = None) -> VariantMoments:
        """One variant ``"all"`` holding every unit of ``variants`` (all by default)."""
        chosen = list(variants) if variants is not None else self.variants
        out = VariantMoments(["all"], list(self.columns), np.zeros(1, np.int64), np.zeros((1, len(self.columns))),
                             np.zeros((1, len(self.columns), len(self.columns))))
        for name in chosen:
            i = self.variants.index(name)
            out._add(0, int(self.n[i]), self.means[i], self.comoments[i])
        return out

    # -- reading -------------------------------------------------------------------------------
    def _v(self, variant: str) -> int:
        try:
            return self.variants.index(variant)
        except ValueError:
            raise RankwiseError(f"unknown variant {variant!r}; the data has {self.variants}") from None

    def _c(self, column: str) -> int:
        try:
            return self.columns.index(column)
        except ValueError:
            raise RankwiseError(f"unknown column {column!r}; the statistics hold {self.columns}") from None

    def count(self, variant: str) -> int:
        """Units in ``variant``."""
        return int(self.n[self._v(variant)])

    def mean(self, variant: str, column: str) -> float:
        """Mean of ``column`` over the units of ``variant``."""
        return float(self.means[self._v(variant), self._c(column)])

    def covariance(self, variant: str, a: str, b: str) -> float:
        """Sample covariance (n - 1 in the denominator) of two columns in ``variant``."""
        v = self._v(variant)
        n = int(self.n[v])
        return float(self.comoments[v, self._c(a), self._c(b)] / (n - 1)) if n > 1 else float("nan")

    def variance(self, variant: str, column: str) -> float:
        """Sample variance (n - 1 in the denominator) of ``column`` in ``variant``."""
        return self.covariance(variant, column, column)

    def sums(self) -> dict[str, np.ndarray]:
        """The raw sums (``n``, ``sums``, ``products``) that ``from_sums`` takes back."""
        sums = self.means * self.n[:, None]
        products = self.comoments + np.einsum("vi,vj->vij", sums, self.means)
        return {"n": self.n.copy(), "sums": sums, "products": products}
