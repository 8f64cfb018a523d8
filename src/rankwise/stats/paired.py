"""Paired tests on per-query values of two systems (same queries, same order).

Every function takes ``a`` and ``b`` (one value per query) and returns a two-sided p-value for
"the mean difference d = b - a is 0". The parametric and rank tests are scipy's; the
randomisation and bootstrap tests are vectorised here (one matrix product per chunk of
resamples, no Python loop per permutation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rankwise.errors import OptionError
from rankwise.params import Declared, Registry
from rankwise.stats.distributions import sign_test_p
from rankwise.stats.resampling import bootstrap_indices

EXACT_LIMIT = 2**16
"""Randomisation tests enumerate every sign flip when there are at most this many."""


def _diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise OptionError(f"expected two 1-D arrays of equal length, got {a.shape} and {b.shape}")
    return b - a


def t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Paired Student t-test: t = mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of freedom.

    >>> # d = 0.1, 0.05, 0.2, 0.05: mean 0.1, sd 0.0707, t = 0.1 / (0.0707 / 2) = 2.83, 3 df
    >>> round(t_test(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.2, 0.25, 0.5, 0.45])), 4)
    0.0663
    """
    from scipy import stats

    d = _diff(a, b)
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_rel(b, a).pvalue)


def wilcoxon_test(a: np.ndarray, b: np.ndarray) -> float:
    """Wilcoxon signed-rank test on d = b - a (zero differences dropped, scipy's default).

    >>> round(wilcoxon_test(np.array([0.1, 0.2, 0.3, 0.4, 0.5]), np.array([0.2, 0.3, 0.5, 0.45, 0.9])), 4)
    0.0625
    """
    from scipy import stats

    d = _diff(a, b)
    if not np.any(d):
        return 1.0
    return float(stats.wilcoxon(d).pvalue)


def sign_test(a: np.ndarray, b: np.ndarray) -> float:
    """Sign test: wins of b among the queries where the systems differ, Binomial(n, 1/2).

    >>> round(sign_test(np.zeros(10), np.array([1] * 8 + [-1] * 2)), 4)   # 8 wins of 10
    0.1094
    """
    d = _diff(a, b)
    return float(sign_test_p(int((d > 0).sum()), int((d < 0).sum())))


def _chunks(total: int, size: int):
    done = 0
    while done < total:
        step = min(size, total - done)
        yield step
        done += step


def randomization_test(a: np.ndarray, b: np.ndarray, permutations: int = 10_000, seed: int = 0,
                       progress: Callable[[int], None] | None = None) -> float:
    """Fisher/Pitman randomisation test: under the null each query's difference keeps or flips
    its sign with probability 1/2. p = P(|mean of flipped d| >= |mean d|).

    With at most ``EXACT_LIMIT`` sign patterns (2^n, n = queries with d != 0) every pattern is
    enumerated and p is exact; otherwise ``permutations`` random patterns are drawn from
    ``seed`` and p = (hits + 1) / (permutations + 1).

    >>> randomization_test(np.zeros(3), np.array([1.0, 2.0, 3.0]))   # 1 of 8 patterns each side
    0.25
    """
    d = _diff(a, b)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    # sums equal up to rounding count as "as extreme": tolerance relative to the data's scale
    observed = abs(d.sum()) - 1e-9 * np.abs(d).sum()
    if 2**n <= EXACT_LIMIT:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1.0
        sums = np.abs(patterns @ d)
        return float((sums >= observed).mean())
    rng = np.random.default_rng(seed)
    total = d.sum()
    words = -(-n // 64)
    hits = 0
    for step in _chunks(permutations, max(1, 2**23 // max(n, 1))):
        # one random bit per query: flipped queries (bit 1) change the sum by -2 d
        raw = rng.integers(0, 2**64, size=(step, words), dtype=np.uint64, endpoint=False)
        bits = np.unpackbits(raw.view(np.uint8), axis=1, count=n, bitorder="little")
        flipped = bits.astype(np.float64) @ d
        hits += int((np.abs(total - 2.0 * flipped) >= observed).sum())
        if progress:
            progress(step)
    return (hits + 1) / (permutations + 1)


def bootstrap_test(a: np.ndarray, b: np.ndarray, resamples: int = 10_000, seed: int = 0,
                   progress: Callable[[int], None] | None = None) -> float:
    """Paired bootstrap test (shift method): resample queries with replacement from the
    differences centred on 0; p = (hits + 1) / (resamples + 1) with hits the resampled means
    at least as far from 0 as the observed mean.

    >>> round(bootstrap_test(np.zeros(20), np.ones(20) * 0.1 + np.arange(20) * 0.001), 4)
    0.0001
    """
    d = _diff(a, b)
    n = len(d)
    if n == 0 or not np.any(d):
        return 1.0
    centred = d - d.mean()
    observed = abs(d.mean()) - 1e-9 * np.abs(d).mean()
    rng = np.random.default_rng(seed)
    hits = 0
    for (idx,) in bootstrap_indices((n,), resamples, rng, budget=2**23, dtype=np.int32):
        hits += int((np.abs(centred[idx].mean(axis=1)) >= observed).sum())
        if progress:
            progress(len(idx))
    return (hits + 1) / (resamples + 1)


class PairedTestFunction(Protocol):
    """What a paired test's ``target`` is called with: the two runs' per-query values, the
    resamples and seed (a test that does not resample ignores them), a progress callback
    counting resamples, and the member's own declared parameters."""

    def __call__(self, a: np.ndarray, b: np.ndarray, /, *, resamples: int, seed: int,
                 progress: Callable[[int], None] | None, **params: Any) -> float: ...


@dataclass(frozen=True)
class ComparisonTest(Declared[Callable[..., Any]]):
    """A test of ``compare``: per pair of runs (``target`` a ``PairedTestFunction``), or over
    all systems at once (``over_all_systems``: ``target(matrix, **params) -> (p matrix,
    omnibus p or None)``, the family-wise error controlled by the test itself). ``resampled``
    tests count their resamples on the progress bar."""

    resampled: bool = False
    over_all_systems: bool = False


def _exact(test: Callable[[np.ndarray, np.ndarray], float]) -> PairedTestFunction:
    def call(a: np.ndarray, b: np.ndarray, /, *, resamples: int = 0, seed: int = 0,
             progress: Callable[[int], None] | None = None, **declared: Any) -> float:
        return test(a, b)   # declared: none (the registry refused any parameter it does not declare)

    call.__doc__ = test.__doc__
    return call


def _drawn(test: Callable[..., float]) -> PairedTestFunction:
    def call(a: np.ndarray, b: np.ndarray, /, *, resamples: int = 10_000, seed: int = 0,
             progress: Callable[[int], None] | None = None, **declared: Any) -> float:
        return test(a, b, resamples, seed, progress)

    call.__doc__ = test.__doc__
    return call


def p_value(test: str, a: np.ndarray, b: np.ndarray, permutations: int = 10_000, seed: int = 0,
            progress: Callable[[int], None] | None = None) -> float:
    """The p-value of one of ``PAIRED_TESTS``, spelled with its parameters if it has any: the
    member is looked up and called with the resamples, the seed and what the spelling gives.

    >>> p_value("sign", np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.3, 0.4]))   # 3 of 3 one way: 2 x 1/8
    0.25
    """
    member, params = PAIRED_TESTS.parse(test)
    target: PairedTestFunction = member.target
    return target(a, b, resamples=permutations, seed=seed, progress=progress, **params)


PAIRED_TESTS: Registry[ComparisonTest] = Registry("test", (
    ComparisonTest("t", _exact(t_test), "Paired t-test on the per-query differences.", aliases=("t-test", "ttest"),
                   reference="scipy.stats.ttest_rel; trec_eval users' default"),
    ComparisonTest("wilcoxon", _exact(wilcoxon_test), "Wilcoxon signed-rank test on the per-query differences.",
                   reference="scipy.stats.wilcoxon"),
    ComparisonTest("sign", _exact(sign_test), "Sign test: the binomial test of wins against losses (ties left "
                   "out).", reference="scipy.stats.binomtest"),
    ComparisonTest("randomization", _drawn(randomization_test), "Fisher/Pitman randomization test of the mean "
                   "difference (exact below 2^16 sign patterns).", aliases=("permutation",),
                   reference="Smucker et al. 2007", resampled=True),
    ComparisonTest("bootstrap", _drawn(bootstrap_test), "Paired bootstrap test (shift method).",
                   reference="Sakai 2006", resampled=True),
), option="--test")
"""The paired significance tests of ``compare`` (per-query values of two runs)."""

