"""Power, sample size and minimum detectable effect of a two-arm comparison (normal
approximation, two-sided unless told): with per-unit standard deviation ``sd``, ``n`` control
units and ``ratio * n`` treatment units,

    power = Phi(|delta| / se - z_{1 - alpha/2}) + Phi(-|delta| / se - z_{1 - alpha/2}),
    se = sd sqrt(1 / n + 1 / (ratio n)),

which is statsmodels' ``NormalIndPower`` with effect size ``delta / sd``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rankwise.errors import OptionError
from rankwise.stats.checks import significance_level
from rankwise.stats.distributions import NORMAL

if TYPE_CHECKING:
    from rankwise.stats.twosample import Alternative


def _z(q: float) -> float:
    return float(NORMAL.ppf(q))


def _check(alpha: float, power: float | None = None) -> None:
    significance_level(alpha)
    if power is not None and not 0 < power < 1:
        raise OptionError(f"power must be between 0 and 1, got {power}")


def power(effect: float, sd: float, n: float, alpha: float = 0.05, ratio: float = 1.0,
          alternative: Alternative = "two-sided") -> float:
    """Probability of a significant result when the true difference is ``effect``.

    >>> round(power(0.2, 1.0, 393), 4)   # the textbook 80% at d = 0.2, 393 per arm
    0.8006
    """
    _check(alpha)
    se = sd * math.sqrt(1 / n + 1 / (ratio * n))
    shift = abs(effect) / se
    if alternative == "two-sided":
        z = _z(1 - alpha / 2)
        return float(NORMAL.cdf(shift - z) + NORMAL.cdf(-shift - z))
    return float(NORMAL.cdf(shift - _z(1 - alpha)))


def sample_size(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8, ratio: float = 1.0,
                alternative: Alternative = "two-sided") -> int:
    """Control units needed (treatment: ``ratio`` times as many) to detect ``effect`` with
    ``power``; rounded up. Uses ``n = (z_{1-alpha/2} + z_power)^2 sd^2 (1 + 1/ratio) / effect^2``
    and then checks the exact two-sided power.

    >>> sample_size(0.2, 1.0)
    393
    """
    _check(alpha, power)
    if effect == 0:
        raise OptionError("effect must be non-zero")
    z_alpha = _z(1 - alpha / 2) if alternative == "two-sided" else _z(1 - alpha)
    n = math.ceil((z_alpha + _z(power)) ** 2 * sd * sd * (1 + 1 / ratio) / (effect * effect))
    while globals()["power"](effect, sd, n, alpha, ratio, alternative) < power:
        n += 1
    return n


def detectable_multiplier(alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "two-sided") -> float:
    """``z_{1-alpha/2} + z_power``: the minimum detectable effect in standard errors.

    >>> round(detectable_multiplier(), 4)
    2.8016
    """
    _check(alpha, power)
    return (_z(1 - alpha / 2) if alternative == "two-sided" else _z(1 - alpha)) + _z(power)


def minimum_detectable_effect(sd: float, n: float, alpha: float = 0.05, power: float = 0.8,
                              ratio: float = 1.0, alternative: Alternative = "two-sided") -> float:
    """Smallest absolute difference detected with ``power`` given ``n`` control units:
    ``(z_{1-alpha/2} + z_power) sd sqrt(1/n + 1/(ratio n))`` (ignoring the far tail).

    >>> round(minimum_detectable_effect(1.0, 393), 4)
    0.1999
    """
    _check(alpha, power)
    z_alpha = _z(1 - alpha / 2) if alternative == "two-sided" else _z(1 - alpha)
    return (z_alpha + _z(power)) * sd * math.sqrt(1 / n + 1 / (ratio * n))
