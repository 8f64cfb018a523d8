"""The one resampling primitive: bootstrap draws of row indices (for one group or several
resampled independently), multinomial draws of category counts, and the percentile interval
and bootstrap p-value read from the draws.

Every bootstrap in rankwise uses these: ``compare``'s paired bootstrap test, the A/B
bootstrap, the off-policy intervals, the interleaving intervals, the judge-agreement
intervals and the simulations. Draws come in chunks so that memory stays bounded (about
``budget`` indices per chunk). The budget is part of what a seed means (numpy discards the
unused half of a 64-bit draw at the end of each call), so each caller keeps its own budget
and its numbers stay the same from release to release.

>>> rng = np.random.default_rng(0)
>>> [picks[0].shape for picks in bootstrap_indices((5,), 7, rng, budget=15)]   # 3 resamples of 5 per chunk
[(3, 5), (3, 5), (1, 5)]
>>> percentile_interval(np.arange(101.0), alpha=0.1)
(5.0, 95.0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

BUDGET = 20_000_000
"""Indices drawn per chunk by default (160 MB of int64)."""


def seeded(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A generator from any integer seed (negative ones too: numpy takes only seeds >= 0, so a
    seed is read modulo 2^128, which keeps every non-negative seed's own stream), or the
    generator given.

    >>> bool(seeded(-1).integers(0, 10**6) == np.random.default_rng(2**128 - 1).integers(0, 10**6))
    True
    >>> bool(seeded(7).integers(0, 10**6) == np.random.default_rng(7).integers(0, 10**6))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(None if seed is None else int(seed) % 2**128)


def bootstrap_indices(sizes: Sequence[int], resamples: int, rng: np.random.Generator, budget: int = BUDGET,
                      dtype: Any = np.int64) -> Iterator[tuple[np.ndarray, ...]]:
    """Yield, chunk by chunk, one ``(chunk, n_g)`` array of row indices drawn with replacement
    per group of size ``n_g`` (the groups resampled independently, in the order given), until
    ``resamples`` rows are drawn in all.

    >>> rng = np.random.default_rng(1)
    >>> [(a.shape, b.shape) for a, b in bootstrap_indices((2, 3), 4, rng)]
    [((4, 2), (4, 3))]
    """
    from rankwise.progress import step

    chunk = max(1, budget // max(sum(sizes), 1))
    with step("resampling", total=resamples) as advance:   # shown on a terminal, one unit per draw
        for start in range(0, resamples, chunk):
            size = min(chunk, resamples - start)
            yield tuple(rng.integers(0, n, size=(size, n), dtype=dtype) for n in sizes)
            advance(size)


def bootstrap_statistic(values: np.ndarray, statistic: Any, resamples: int, rng: np.random.Generator,
                        budget: int = BUDGET) -> np.ndarray:
    """``statistic(picks)`` for ``resamples`` bootstrap draws of the rows of ``values``
    (``picks`` is a ``(chunk, n)`` index array), concatenated.

    >>> rng = np.random.default_rng(0)
    >>> draws = bootstrap_statistic(np.array([1.0, 1.0]), lambda p: np.ones(len(p)), 5, rng)
    >>> draws.tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0]
    """
    parts = [np.asarray(statistic(picks)) for (picks,) in bootstrap_indices((len(values),), resamples, rng, budget)]
    return np.concatenate(parts) if parts else np.empty(0)


def multinomial_counts(counts: Sequence[float] | np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` bootstrap draws of category counts: multinomial with the observed total
    and the observed shares (the bootstrap of categorical outcomes without index arrays).
    ``counts`` may be 2-D, one row of counts per case: the result is then (cases, resamples,
    categories).

    >>> multinomial_counts([3, 0, 1], 2, np.random.default_rng(0))[:, 1].tolist()
    [0, 0]
    """
    counts = np.asarray(counts)
    if counts.ndim == 1:
        n = int(counts.sum())
        return rng.multinomial(n, counts / n, size=resamples)
    return np.stack([multinomial_counts(row, resamples, rng) for row in counts])


def percentile_interval(draws: np.ndarray, alpha: float = 0.05, axis: int | None = None,
                        ignore_nan: bool = False) -> Any:
    """The percentile interval: the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the draws
    (numpy's linear interpolation); with ``ignore_nan`` draws that are NaN (an undefined
    statistic in that resample) are left out. Floats for 1-D draws, arrays along ``axis``
    otherwise.

    >>> percentile_interval(np.array([1.0, np.nan, 3.0]), 0.5, ignore_nan=True)
    (1.5, 2.5)
    >>> percentile_interval(np.empty(0))   # no resamples drawn: no interval
    (nan, nan)
    """
    if axis is None and np.size(draws) == 0:
        return float("nan"), float("nan")
    quantile = np.nanquantile if ignore_nan else np.quantile
    low, high = quantile(draws, [alpha / 2, 1 - alpha / 2], axis=axis)
    if np.ndim(low) == 0:
        return float(low), float(high)
    return low, high


def bootstrap_p_value(draws: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "the statistic is 0": twice the smaller share of draws
    on either side of 0, at most 1.

    >>> bootstrap_p_value(np.array([-1.0, 1.0, 2.0, 3.0]))   # 2 x 1/4
    0.5
    """
    return min(1.0, 2 * min(float(np.mean(draws <= 0)), float(np.mean(draws >= 0))))


def bootstrap_difference(control: tuple[np.ndarray, np.ndarray | None], treatment: tuple[np.ndarray, np.ndarray | None],
                         alpha: float = 0.05, resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Percentile interval and p-value (``bootstrap_p_value``) of the treatment's statistic
    minus the control's over ``resamples`` seeded resamples of units within each arm. Each arm
    is ``(values, None)`` (the statistic is their mean) or ``(numerators, denominators)`` (the
    ratio of their sums).

    >>> lower, upper, p = bootstrap_difference((np.zeros(30), None), (np.ones(30), None), resamples=200)
    >>> lower, upper, p   # every resample differs by exactly 1
    (1.0, 1.0, 0.0)
    """
    rng = np.random.default_rng(seed)

    def statistic(values: tuple[np.ndarray, np.ndarray | None], picks: np.ndarray) -> np.ndarray:
        num, den = values
        if den is None:
            return np.asarray(num[picks].mean(axis=1))
        return np.asarray(num[picks].sum(axis=1) / den[picks].sum(axis=1))

    draws = np.concatenate([statistic(treatment, picks_t) - statistic(control, picks_c)
                            for picks_c, picks_t in bootstrap_indices((len(control[0]), len(treatment[0])),
                                                                      resamples, rng)])
    lower, upper = percentile_interval(draws, alpha)
    return lower, upper, bootstrap_p_value(draws)
