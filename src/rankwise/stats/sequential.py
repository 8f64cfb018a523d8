"""Tests that stay valid when you look at the data more than once.

Two families:

- **Always valid** (``always-valid``): the asymptotic confidence sequence of Waudby-Smith et
  al. (2023, eq. 9 and 155, arXiv 2103.06476), as gbstats computes it. With ``N`` units in the
  two arms, ``s^2 = N se^2`` and ``rho^2 = (-2 log alpha + log(-2 log alpha + 1)) / n*``
  (``n*`` the tuning sample size, 5000 by default), the interval is

      diff +/- s sqrt(2 (N rho^2 + 1) log(sqrt(N rho^2 + 1) / alpha) / (N rho)^2)

  and the p-value ``min(1, 1 / e)`` with ``e = exp(rho^2 z^2 / (2 (N rho^2 + 1))) / sqrt(N rho^2 + 1)``
  and ``z^2 = diff^2 / se^2``. Look as often as you like; the error stays below alpha.
- **mSPRT** (``msprt``): the mixture sequential probability ratio test of Johari, Pekelis and
  Walsh (2017), with a normal mixture ``N(0, tau^2)`` over the true difference. With
  ``V = se^2`` the likelihood ratio is

      Lambda = sqrt(V / (V + tau^2)) exp(tau^2 diff^2 / (2 V (V + tau^2)))

  the always-valid p-value ``min(1, 1 / Lambda)`` and the interval
  ``diff +/- sqrt(V (V + tau^2) / tau^2 (2 log(1 / alpha) + log((V + tau^2) / V)))``.
  ``tau`` is given as a standardised effect: ``tau = effect * sigma`` with ``sigma^2`` the
  per-unit variance pooled over the two arms, so one setting serves every metric. The
  confidence sequence above is the same normal mixture with ``tau^2 = rho^2 N se^2``; the two
  differ only in how the mixture is tuned.

  Over looks (``rankwise ab --timestamp``), both always-valid methods report the running
  minimum of the p-value (valid under the null of no difference at every look) and each look's
  own interval. The intervals are not intersected: the intersection is valid only for one
  fixed quantity, and a look estimates the quantity of its own days (a per-unit sum that
  accumulates day by day grows from look to look).
- **Group sequential** (``obrien-fleming``, ``pocock``): Lan-DeMets alpha spending over
  planned looks at information fractions ``t_1 < ... < t_K = 1``: O'Brien-Fleming-type
  ``alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``, Pocock-type
  ``alpha(t) = alpha log(1 + (e - 1) t)``. The two-sided boundaries ``c_k`` solve
  ``P(|Z_j| < c_j for j < k, |Z_k| >= c_k) = alpha(t_k) - alpha(t_{k-1})`` under the null,
  with ``corr(Z_i, Z_j) = sqrt(t_i / t_j)``, by numerical integration of the score process
  on a grid (Armitage, McPherson and Rowe 1969; Jennison and Turnbull 2000, ch. 19).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.params import Declared, Param, Registry
from rankwise.stats.distributions import NORMAL

if TYPE_CHECKING:
    from rankwise.stats.twosample import Arm, Difference

TUNING_SAMPLE_SIZE = 5000
MIXTURE_EFFECT = 0.1


def msprt(difference: float, se: float, unit_variance: float, alpha: float = 0.05,
          effect: float = MIXTURE_EFFECT) -> tuple[float, float, float]:
    """Interval and always-valid p-value of the normal-mixture SPRT at one look (see the
    module): mixture sd ``tau = effect * sqrt(unit_variance)``.

    >>> lower, upper, p = msprt(0.1, 0.02, 4.0, effect=0.1)   # tau^2 = 0.04, V = 0.0004
    >>> round(lower, 4), round(upper, 4), round(p, 8)   # width sqrt(0.000404 (2 log 20 + log 101))
    (0.0345, 0.1655, 4.239e-05)
    """
    variance = se * se
    tau2 = effect * effect * unit_variance
    if not (variance > 0 and tau2 > 0) or math.isnan(difference):
        return math.nan, math.nan, math.nan
    log_lambda = 0.5 * math.log(variance / (variance + tau2)) + \
        tau2 * difference * difference / (2 * variance * (variance + tau2))
    p = 1.0 if log_lambda <= 0 else min(1.0, math.exp(-log_lambda))
    width = math.sqrt(variance * (variance + tau2) / tau2
                      * (2 * math.log(1 / alpha) + math.log((variance + tau2) / variance)))
    return difference - width, difference + width, p


def always_valid(difference: float, se: float, n_total: int, alpha: float = 0.05,
                 tuning: float = TUNING_SAMPLE_SIZE) -> tuple[float, float, float]:
    """Interval and p-value of the asymptotic confidence sequence (see the module).

    >>> lower, upper, p = always_valid(0.1, 0.02, 20_000)
    >>> round(lower, 4), round(upper, 4), round(p, 6)
    (0.0375, 0.1625, 3.1e-05)
    """
    if n_total <= 0 or se <= 0:
        return math.nan, math.nan, math.nan
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuning
    big = n_total * rho2 + 1
    s = se * math.sqrt(n_total)
    width = s * math.sqrt(2 * big * math.log(math.sqrt(big) / alpha) / (n_total * n_total * rho2))
    z2 = difference * difference / (se * se)
    log_e = rho2 * n_total * z2 / (2 * big) - 0.5 * math.log(big)
    p = 1.0 if log_e <= 0 else min(1.0, math.exp(-log_e))
    return difference - width, difference + width, p


def msprt_boundary(se: float, unit_variance: float, alpha: float = 0.05, effect: float = MIXTURE_EFFECT) -> float:
    """The |z| = |difference| / se at which the mSPRT's p-value reaches ``alpha`` at this look:
    ``Lambda = 1 / alpha`` solved for z, ``z^2 = 2 (V + tau^2) / tau^2 (log(1 / alpha) +
    log((V + tau^2) / V) / 2)``.

    >>> round(msprt_boundary(0.02, 4.0), 4)   # V = 0.0004, tau^2 = 0.04: sqrt(2.02 (log 20 + log(101) / 2))
    3.273
    """
    variance, tau2 = se * se, effect * effect * unit_variance
    if not (variance > 0 and tau2 > 0):
        return math.nan
    evidence = math.log(1 / alpha) + 0.5 * math.log((variance + tau2) / variance)
    return math.sqrt(2 * (variance + tau2) / tau2 * evidence)


def always_valid_boundary(n_total: int, alpha: float = 0.05, tuning: float = TUNING_SAMPLE_SIZE) -> float:
    """The |z| at which the confidence sequence's p-value reaches ``alpha`` with ``n_total``
    units: ``e = 1 / alpha`` solved for z, ``z^2 = 2 (N rho^2 + 1) / (N rho^2) (log(1 / alpha) +
    log(N rho^2 + 1) / 2)``.

    >>> round(always_valid_boundary(20_000), 4)   # rho^2 = 0.0015872, N rho^2 + 1 = 32.745
    3.1271
    """
    if n_total <= 0:
        return math.nan
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuning
    big = n_total * rho2 + 1
    return math.sqrt(2 * big / (n_total * rho2) * (math.log(1 / alpha) + 0.5 * math.log(big)))


def obrien_fleming_spent(fraction: np.ndarray, alpha: float) -> np.ndarray:
    """Cumulative alpha spent at information ``fraction``, O'Brien-Fleming-type (two-sided):
    ``2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``.

    >>> obrien_fleming_spent(np.array([0.5, 1.0]), 0.05).round(5).tolist()
    [0.00557, 0.05]
    """
    t = np.clip(np.asarray(fraction, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        out = 2 - 2 * NORMAL.cdf(NORMAL.ppf(1 - alpha / 2) / np.sqrt(t))
    return np.where(t > 0, out, 0.0)


def pocock_spent(fraction: np.ndarray, alpha: float) -> np.ndarray:
    """Cumulative alpha spent at information ``fraction``, Pocock-type: ``alpha log(1 + (e - 1) t)``.

    >>> pocock_spent(np.array([0.5, 1.0]), 0.05).round(5).tolist()
    [0.03101, 0.05]
    """
    t = np.clip(np.asarray(fraction, dtype=np.float64), 0.0, 1.0)
    return np.asarray(alpha * np.log(1 + (math.e - 1) * t))


def spent(fraction: np.ndarray | float, alpha: float, spending: str) -> np.ndarray:
    """Cumulative alpha spent at information ``fraction`` by the alpha-spending design
    ``spending`` (a name of ``SEQUENTIAL_DESIGNS``).

    >>> spent(np.array([0.5, 1.0]), 0.05, "obrien-fleming").round(5).tolist()
    [0.00557, 0.05]
    """
    design = SEQUENTIAL_DESIGNS.get(spending)
    if design.always_valid:
        raise OptionError(f"{design.name} is always valid: it spends no alpha over planned looks")
    return np.asarray(design.target(np.asarray(fraction, dtype=np.float64), alpha))


def boundaries(fractions: Sequence[float] | np.ndarray, alpha: float = 0.05, spending: str = "obrien-fleming",
               grid: int = 1201) -> np.ndarray:
    """Two-sided critical values ``c_k`` for |z| at looks with information ``fractions``
    (increasing, the last 1 for the planned end); a look beyond the plan (fraction > 1) spends
    nothing more.

    >>> boundaries([0.5, 1.0]).round(3).tolist()   # O'Brien-Fleming-type, two looks
    [2.772, 1.979]
    >>> boundaries([1.0]).round(4).tolist()        # one look: the fixed-horizon z
    [1.96]

    The boundaries of one schedule are computed once and kept (every metric of an arm has the
    same looks and units, so the same schedule).
    """
    return np.array(_boundaries(tuple(float(f) for f in fractions), float(alpha), spending, int(grid)))


@functools.lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float, spending: str, grid: int) -> tuple[float, ...]:
    t = np.asarray(fractions, dtype=np.float64)
    if len(t) == 0 or (t <= 0).any() or (np.diff(t) <= 0).any():
        raise OptionError(f"information fractions must be positive and increasing, got {list(t)}")
    cumulative = spent(np.minimum(t, 1.0), alpha, spending)
    increments = np.diff(np.concatenate(([0.0], cumulative)))
    bounds = np.empty(len(t))
    # density of the score S_k = Z_k sqrt(t_k) among paths that have not stopped, on a grid
    previous_t = 0.0
    grid_s: np.ndarray | None = None
    density: np.ndarray | None = None
    weights: np.ndarray | None = None
    for k, (tk, spend) in enumerate(zip(t, increments, strict=True)):
        step = tk - previous_t
        if spend <= 0:
            bounds[k] = math.inf
        else:
            from scipy.optimize import brentq

            bounds[k] = brentq(_overspent, 0.0, 40.0, args=(tk, step, grid_s, density, weights, spend),
                               xtol=1e-12)
        # continue the density over the continuation region |S_k| < c_k sqrt(t_k)
        edge = (bounds[k] if math.isfinite(bounds[k]) else 12.0) * math.sqrt(tk)
        new_s = np.linspace(-edge, edge, grid)
        new_w = _simpson_weights(grid, new_s[1] - new_s[0])
        if grid_s is None:
            new_density = NORMAL.pdf(new_s / math.sqrt(tk)) / math.sqrt(tk)
        else:
            assert weights is not None and density is not None  # set with grid_s on the first look
            sd = math.sqrt(step)
            kernel = NORMAL.pdf((new_s[:, None] - grid_s[None, :]) / sd) / sd
            new_density = kernel @ (weights * density)
        grid_s, density, weights = new_s, new_density, new_w
        previous_t = tk
    return tuple(bounds.tolist())


def _crossing(c: float, tk: float, step: float, grid_s: np.ndarray | None, density: np.ndarray | None,
              weights: np.ndarray | None) -> float:
    """Null probability of reaching look k (not stopped before) and crossing |Z_k| >= c."""
    if grid_s is None:
        return float(2 * NORMAL.sf(c))
    assert weights is not None and density is not None  # set with grid_s on the first look
    edge = c * math.sqrt(tk)
    sd = math.sqrt(step)
    beyond = NORMAL.sf((edge - grid_s) / sd) + NORMAL.cdf((-edge - grid_s) / sd)
    return float(np.sum(weights * density * beyond))


def _overspent(c: float, tk: float, step: float, grid_s: np.ndarray | None, density: np.ndarray | None,
               weights: np.ndarray | None, spend: float) -> float:
    return _crossing(c, tk, step, grid_s, density, weights) - spend


def _simpson_weights(points: int, h: float) -> np.ndarray:
    w = np.ones(points)
    w[1:-1:2] = 4
    w[2:-1:2] = 2
    return w * h / 3


def confidence_sequence_look(control: Arm, treatment: Arm, d: Difference, alpha: float,
                             tuning: float = TUNING_SAMPLE_SIZE) -> dict[str, float]:
    """One look of the confidence sequence: the always-valid interval of the difference and of
    the relative difference, the p-value and the |z| boundary, from ``n_c + n_t`` units.

    >>> from rankwise.stats.twosample import Arm, compare_arms
    >>> c, t = Arm(10.0, 4.0, 10_000), Arm(10.1, 4.0, 10_000)
    >>> look = confidence_sequence_look(c, t, compare_arms(c, t, "z"), 0.05)
    >>> round(look["ci_lower"], 4), round(look["boundary"], 4)   # always_valid(0.1, 0.02828, 20000)
    (0.0116, 3.1271)
    """
    n = control.n + treatment.n
    lower, upper, p = always_valid(d.difference, d.se, n, alpha, tuning)
    rel_lower, rel_upper, _ = always_valid(d.relative, d.relative_se, n, alpha, tuning)
    return {"ci_lower": lower, "ci_upper": upper, "p_value": p, "relative_lower": rel_lower,
            "relative_upper": rel_upper, "boundary": always_valid_boundary(n, alpha, tuning)}


def msprt_look(control: Arm, treatment: Arm, d: Difference, alpha: float,
               mixture_effect: float = MIXTURE_EFFECT) -> dict[str, float]:
    """One look of the mSPRT: the interval and p-value at the per-unit variance pooled over the
    arms, the relative difference's at that variance over the control's squared mean, and the
    |z| boundary.

    >>> from rankwise.stats.twosample import Arm, compare_arms
    >>> c, t = Arm(10.0, 4.0, 10_000), Arm(10.1, 4.0, 10_000)
    >>> # V = se^2 = 0.0008, tau^2 = 0.1^2 x 4: sqrt(2 x 0.0408 / 0.04 x (log 20 + log(0.0408 / 0.0008) / 2))
    >>> round(msprt_look(c, t, compare_arms(c, t, "z"), 0.05)["boundary"], 4)
    3.1815
    """
    pooled = (control.n * control.variance + treatment.n * treatment.variance) / max(control.n + treatment.n, 1)
    lower, upper, p = msprt(d.difference, d.se, pooled, alpha, mixture_effect)
    scale = abs(control.mean) if control.mean else math.nan   # the relative difference's per-unit sd
    rel_lower, rel_upper, _ = msprt(d.relative, d.relative_se, pooled / (scale * scale), alpha, mixture_effect)
    return {"ci_lower": lower, "ci_upper": upper, "p_value": p, "relative_lower": rel_lower,
            "relative_upper": rel_upper, "boundary": msprt_boundary(d.se, pooled, alpha, mixture_effect)}


@dataclass(frozen=True)
class Design(Declared[Callable[..., Any]]):
    """A sequential design, wrapping the analysis' test. ``always_valid``: its ``target`` turns
    the test's difference at one look into an interval and p-value valid at every look
    (``(control, treatment, difference, alpha, **params) -> columns``); otherwise the design
    spends alpha over planned daily looks and its ``target`` is the spending function
    (``(fraction, alpha) -> cumulative alpha``). Adding a design is one function and one entry
    here (docs/architecture.md, "How to add a sequential design")."""

    always_valid: bool = False

    def at_look(self, control: Arm, treatment: Arm, d: Difference, alpha: float,
                params: Mapping[str, Any]) -> dict[str, float]:
        """The columns an always-valid design sets at one look (none for an alpha-spending one:
        its decision needs every look)."""
        return dict(self.target(control, treatment, d, alpha, **params)) if self.always_valid else {}


SEQUENTIAL_DESIGNS: Registry[Design] = Registry("sequential design", (
    Design("always-valid", confidence_sequence_look,
           "Confidence sequence: an interval valid at every look, however often.",
           (Param("tuning", float, float(TUNING_SAMPLE_SIZE), "the sample size the sequence is tightest at",
                  low=1),), always_valid=True, reference="Howard et al. 2021; gbstats sequential testing"),
    Design("msprt", msprt_look, "Normal-mixture sequential probability ratio test (always valid).",
           (Param("mixture_effect", float, MIXTURE_EFFECT, "mixture sd of the effect, in per-unit standard "
                  "deviations", low=0),), always_valid=True, reference="Johari et al. 2017 (Optimizely)"),
    Design("obrien-fleming", obrien_fleming_spent,
           "Alpha spending with O'Brien-Fleming-type boundaries over daily looks.",
           aliases=("obf",), reference="Lan & DeMets 1983; spotify-confidence"),
    Design("pocock", pocock_spent, "Alpha spending with Pocock-type boundaries over daily looks.",
           reference="Lan & DeMets 1983; spotify-confidence"),
), option="--sequential")
"""The sequential designs of an A/B analysis."""
