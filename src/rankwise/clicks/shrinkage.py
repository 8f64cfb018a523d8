"""Beta priors for the per-pair parameters of click models: fixed pseudo-counts, or empirical
Bayes (the prior's hyperparameters fitted to the data by marginal likelihood).

A per-pair parameter (attractiveness, satisfaction) is estimated from ``s_i`` successes in
``n_i`` trials per pair (EM's expected counts, or plain counts). With a Beta(a, b) prior the
estimate is the posterior mean ``(s_i + a) / (n_i + a + b)`` and a pair never seen gets the
prior mean ``a / (a + b)``.

- A **fixed** prior is ``(clicks, impressions)`` pseudo-counts: ``a = clicks``, ``a + b =
  impressions`` (PyClick's start is ``(1, 2)``, a prior mean of 0.5).
- **Empirical Bayes** chooses ``(a, b)`` to maximise the beta-binomial marginal likelihood of
  the pairs' counts, ``sum_i ln B(s_i + a, n_i - s_i + b) - ln B(a, b)`` (Gamma functions, so
  EM's fractional counts are fine), times the weak hyperprior ``(a + b)^(-5/2)``: rare pairs
  shrink to the baseline the data show (a 3% click rate, not 0.5), well-observed pairs keep
  their own rate.

>>> rng = np.random.default_rng(0)     # 2,000 pairs, click rates from Beta(0.5, 15)
>>> n = rng.integers(1, 50, 2000).astype(float)
>>> s = rng.binomial(n.astype(int), rng.beta(0.5, 15.0, 2000)).astype(float)
>>> a, b = beta_hyperparameters(s, n)
>>> round(a / (a + b), 3), round(a + b, 1)     # the truth: mean 0.032, concentration 15.5
(0.032, 13.9)
>>> # 0 in 2 and 2 in 3 shrink to the baseline; 30 in 1,000 keeps its own rate
>>> posterior_mean(np.array([0.0, 2.0, 30.0]), np.array([2.0, 3.0, 1000.0]), (a, b)).round(3).tolist()
[0.028, 0.145, 0.03]
"""

from __future__ import annotations

from typing import Any

import numpy as np

EMPIRICAL = "empirical"
"""The ``prior`` value that fits the hyperparameters to the data."""
HYPERPRIOR = 2.5
"""The exponent of the hyperprior ``p(a, b) ~ (a + b)^(-5/2)`` (Gelman et al., Bayesian Data
Analysis, section 5.3): flat in the mean, a weak pull against an unbounded concentration."""
LIMITS = (1e-3, 1e6)
"""Bounds on ``a`` and ``b``: a concentration above 1e6 is "every pair equal to the mean"."""


def posterior_mean(successes: np.ndarray, trials: np.ndarray, hyper: tuple[float, float]) -> np.ndarray:
    """``(s + a) / (n + a + b)`` per pair for a Beta(a, b) prior (0.5 where ``n + a + b`` is 0).

    >>> posterior_mean(np.array([1.0]), np.array([4.0]), (1.0, 1.0)).tolist()
    [0.3333333333333333]
    """
    a, b = hyper
    denominator = trials + a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, (successes + a) / np.where(denominator > 0, denominator, 1.0), 0.5)


def pseudo_counts(prior: tuple[float, float]) -> tuple[float, float]:
    """A fixed prior ``(clicks, impressions)`` as Beta ``(a, b)``.

    >>> pseudo_counts((1.0, 2.0))
    (1.0, 1.0)
    """
    return float(prior[0]), float(prior[1]) - float(prior[0])


def marginal_log_likelihood(successes: np.ndarray, trials: np.ndarray, hyper: tuple[float, float]) -> float:
    """``sum_i ln B(s_i + a, n_i - s_i + b) - ln B(a, b)`` over pairs with trials.

    >>> round(marginal_log_likelihood(np.array([1.0]), np.array([1.0]), (1.0, 1.0)), 6)   # ln(1/2)
    -0.693147
    """
    from scipy.special import betaln

    a, b = hyper
    seen = trials > 0
    s, n = successes[seen], trials[seen]
    return float((betaln(s + a, n - s + b) - betaln(a, b)).sum())


def trigamma(x: np.ndarray) -> np.ndarray:
    """The trigamma function (second derivative of ln Gamma) for positive ``x``: the
    recurrence ``psi1(x) = psi1(x + 1) + 1 / x^2`` up to 6, then the asymptotic series (within
    1.1e-9 relative of ``scipy.special.polygamma(1, x)``, the worst just above 6;
    ``tests/test_clicks_shrinkage.py`` checks it).

    The values below 6 take the recurrence's six steps at once: the shifted values ``x, x + 1,
    (x + 1) + 1, ...`` and their terms, added in order, so each element gets the bits a
    step-by-step loop gives it (``trigamma_of`` is that loop, for one number).

    >>> from scipy.special import polygamma
    >>> x = np.array([0.01, 0.5, 3.0, 40.0])
    >>> bool(np.allclose(trigamma(x), polygamma(1, x), rtol=1e-10))
    True
    >>> trigamma(x).tolist() == [trigamma_of(float(v)) for v in x]
    True
    """
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1)
    low = flat < _SERIES_FROM
    out = np.empty_like(flat)
    out[~low] = _trigamma_series(flat[~low])
    if low.any():
        out[low] = _trigamma_recurrence(flat[low])
    return out.reshape(x.shape)


def _trigamma_recurrence(x: np.ndarray) -> np.ndarray:
    """``trigamma`` of values below 6 (1-D): the six shifts as rows, each term where its shift is
    still below 6, added row by row; the series at the first shift past 6."""
    shifted = np.empty((_RECURRENCE + 1, len(x)))
    shifted[0] = x
    for k in range(_RECURRENCE):
        np.add(shifted[k], 1.0, out=shifted[k + 1])
    below = shifted[:_RECURRENCE] < _SERIES_FROM
    terms = np.where(below, 1.0 / (shifted[:_RECURRENCE] * shifted[:_RECURRENCE]), 0.0)
    out = terms[0].copy()
    for k in range(1, _RECURRENCE):
        out += terms[k]          # in the loop's order (a sum over the rows might pair them)
    return out + _trigamma_series(shifted[below.sum(axis=0), np.arange(len(x))])


_RECURRENCE = 6
_SERIES_FROM = 6.0


def _trigamma_series(x: Any) -> Any:
    """The asymptotic series of trigamma at ``x >= 6`` (an array or a float, the same bits)."""
    inverse = 1.0 / x
    square = inverse * inverse
    return inverse + square / 2 + inverse * square * (1 / 6 - square * (1 / 30 - square * (1 / 42 - square / 30)))


def trigamma_of(x: float) -> float:
    """``trigamma`` of one positive number, in plain floats (the same operations in the same order,
    so the same bits, without an array's overhead).

    >>> round(trigamma_of(1.0), 9)    # pi^2 / 6 = 1.6449340668..., to the series' 1.2e-10 relative
    1.644934067
    """
    out = 0.0
    for _ in range(_RECURRENCE):
        if x >= _SERIES_FROM:
            break
        square = x * x
        out += 1.0 / square if square else float("inf")   # as numpy's 1 / 0 (x below 1e-154)
        x += 1.0
    return float(out + _trigamma_series(x))


def beta_hyperparameters(successes: np.ndarray, trials: np.ndarray,
                         start: tuple[float, float] | None = None) -> tuple[float, float]:
    """The Beta ``(a, b)`` that maximise the marginal likelihood of ``successes`` out of
    ``trials`` per pair, with the hyperprior ``(a + b)^(-5/2)``, within ``LIMITS``.

    On ``ln a, ln b``: L-BFGS-B with the exact gradient from a cold start, then Newton's
    method with the exact Hessian (digamma and trigamma) to the optimum; ``start``
    warm-starts Newton directly (EM passes the previous iteration's: two or three steps).

    Pairs without trials carry no information and are left out. With no pair seen, the
    uniform Beta(1, 1).

    >>> a, b = beta_hyperparameters(np.array([2.0, 8.0, 5.0]), np.array([10.0, 10.0, 10.0]))
    >>> round(a / (a + b), 2)
    0.5
    """
    from scipy.optimize import minimize
    from scipy.special import betaln, digamma

    seen = trials > 0
    s = np.minimum(np.asarray(successes, dtype=np.float64)[seen], np.asarray(trials, dtype=np.float64)[seen])
    n = np.asarray(trials, dtype=np.float64)[seen]
    if not len(n):
        return 1.0, 1.0
    failures = n - s
    count = len(n)
    low, high = np.log(LIMITS[0]), np.log(LIMITS[1])

    def value(x: np.ndarray) -> float:
        a, b = np.exp(x)
        return float(betaln(s + a, failures + b).sum() - count * betaln(a, b) - HYPERPRIOR * np.log(a + b))

    def derivatives(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian of ``value`` in ``ln a, ln b``."""
        a, b = np.exp(x)
        both, total = a + b, n + a + b
        psi_total = digamma(total)
        da = (digamma(s + a) - psi_total).sum() + count * (digamma(both) - digamma(a)) - HYPERPRIOR / both
        db = (digamma(failures + b) - psi_total).sum() + count * (digamma(both) - digamma(b)) - HYPERPRIOR / both
        shared = -trigamma(total).sum() + count * trigamma_of(float(both)) + HYPERPRIOR / both ** 2
        daa = trigamma(s + a).sum() - count * trigamma_of(float(a)) + shared
        dbb = trigamma(failures + b).sum() - count * trigamma_of(float(b)) + shared
        gradient = np.array([a * da, b * db])
        hessian = np.array([[a * da + a * a * daa, a * b * shared], [a * b * shared, b * db + b * b * dbb]])
        return gradient, hessian

    if start is None:
        mean = min(max(s.sum() / n.sum(), 1e-3), 1 - 1e-3)
        x0 = np.log([mean * 2.0, (1 - mean) * 2.0])

        def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
            return -value(x) / count, -derivatives(x)[0] / count

        x = np.asarray(minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=[(low, high)] * 2).x)
    else:
        x = np.clip(np.log(np.asarray(start, dtype=np.float64)), low, high)
    current = value(x)
    for _ in range(50):
        gradient, hessian = derivatives(x)
        if not np.all(np.linalg.eigvalsh(hessian) < 0):
            # far from the optimum: a gradient step scaled by the curvature's size
            step = gradient / max(float(np.abs(hessian).max()), 1e-12)
        else:
            step = -np.linalg.solve(hessian, gradient)
        scale = 1.0
        for _ in range(40):
            trial = np.clip(x + scale * step, low, high)
            trial_value = value(trial)
            if trial_value >= current:
                break
            scale /= 2
        else:
            break
        moved = float(np.abs(trial - x).max())
        x, current = trial, trial_value
        if moved < 1e-10:
            break
    a, b = np.exp(x)
    return float(a), float(b)


def concentration(successes: np.ndarray, trials: np.ndarray, means: np.ndarray, start: float | None = None) -> float:
    """The ``kappa`` maximising ``sum_i ln B(s_i + kappa m_i, n_i - s_i + kappa (1 - m_i)) -
    ln B(kappa m_i, kappa (1 - m_i))`` with the hyperprior ``kappa^(-5/2)``: how far pairs
    spread around their own prior means ``m_i`` (a feature model's predictions).

    A bounded search on ``ln kappa`` from a cold start; ``start`` (EM passes the previous
    iteration's) warm-starts Newton's method with the exact derivatives instead (digamma and
    trigamma: two or three steps), falling back to the search if Newton does not settle.

    >>> rng = np.random.default_rng(1)
    >>> m = rng.uniform(0.05, 0.5, 3000)
    >>> n = rng.integers(5, 60, 3000).astype(float)
    >>> s = rng.binomial(n.astype(int), rng.beta(20 * m, 20 * (1 - m))).astype(float)
    >>> round(concentration(s, n, m))     # the truth: 20
    19
    >>> # Newton, warm: the same maximum (the bounded search stops within its tolerance, ~1e-6 here)
    >>> bool(abs(concentration(s, n, m, start=5.0) / concentration(s, n, m) - 1) < 1e-5)
    True
    """
    from scipy.optimize import minimize_scalar
    from scipy.special import betaln

    seen = trials > 0
    s = np.minimum(successes[seen], trials[seen])
    n, m = trials[seen], np.clip(means[seen], 1e-9, 1 - 1e-9)
    if not len(n):
        return 2.0

    def objective(log_kappa: float) -> float:
        kappa = np.exp(log_kappa)
        a, b = kappa * m, kappa * (1 - m)
        return -float((betaln(s + a, n - s + b) - betaln(a, b)).sum() - HYPERPRIOR * log_kappa) / len(n)

    bounds = (np.log(LIMITS[0]), np.log(LIMITS[1]))
    if start is not None:
        settled = _newton_concentration(s, n, m, float(np.clip(np.log(start), *bounds)), bounds)
        if settled is not None:
            return settled
    result = minimize_scalar(objective, bounds=bounds, method="bounded", options={"xatol": 1e-9})
    return float(np.exp(result.x))


def _newton_concentration(s: np.ndarray, n: np.ndarray, m: np.ndarray, t: float,
                          bounds: tuple[float, float]) -> float | None:
    """Newton's method on ``t = ln kappa`` for ``concentration`` from ``t``: the kappa where the
    derivative vanishes, or None when a step leaves the bounds, the curvature is not negative or
    it has not settled in 30 steps."""
    from scipy.special import digamma

    f = 1 - m
    for _ in range(30):
        kappa = float(np.exp(t))
        a, b = kappa * m, kappa * f
        first = float((m * (digamma(s + a) - digamma(a)) + f * (digamma(n - s + b) - digamma(b))
                       - digamma(n + kappa) + digamma(kappa)).sum())
        second = float((m * m * (trigamma(s + a) - trigamma(a)) + f * f * (trigamma(n - s + b) - trigamma(b))
                        - trigamma(n + kappa) + trigamma_of(kappa)).sum())
        slope = kappa * first - HYPERPRIOR
        curvature = kappa * first + kappa * kappa * second
        if not curvature < 0:
            return None
        step = -slope / curvature
        t += step
        if not bounds[0] < t < bounds[1]:
            return None
        if abs(step) < 1e-10:
            return float(np.exp(t))
    return None


__all__ = ["EMPIRICAL", "beta_hyperparameters", "concentration", "marginal_log_likelihood", "posterior_mean",
           "pseudo_counts", "trigamma", "trigamma_of"]
