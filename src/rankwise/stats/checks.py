"""The settings every statistical function reads, checked in one place, so that a command and
a library call refuse the same values with the same words:

- ``significance_level(alpha)``: a number strictly between 0 and 1 (NaN is not one); a level of
  2 would mark every difference significant, a level of 0 none.
- ``resample_count(n)``: a whole number of resamples, at least ``least`` (0: no interval).
"""

from __future__ import annotations

import math
from typing import Any

from rankwise.errors import OptionError


def significance_level(alpha: Any, name: str = "alpha") -> float:
    """``alpha`` as a float, refused unless it lies strictly between 0 and 1.

    >>> significance_level(0.05)
    0.05
    >>> significance_level(2)
    Traceback (most recent call last):
    ...
    rankwise.errors.OptionError: alpha must be between 0 and 1 (exclusive), got 2
    >>> for bad in (0, 1, -0.1, float("nan")):
    ...     try:
    ...         significance_level(bad)
    ...     except OptionError:
    ...         print("refused", bad)
    refused 0
    refused 1
    refused -0.1
    refused nan
    """
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number between 0 and 1 (exclusive), got {alpha!r}") from None
    if not 0.0 < value < 1.0:   # NaN fails every comparison
        raise OptionError(f"{name} must be between 0 and 1 (exclusive), got {alpha}")
    return value


def resample_count(count: Any, name: str = "resamples", least: int = 0) -> int:
    """``count`` as an int, refused unless it is a whole number of at least ``least``.

    >>> resample_count(2000), resample_count(0)
    (2000, 0)
    >>> resample_count(-5)
    Traceback (most recent call last):
    ...
    rankwise.errors.OptionError: resamples must be a whole number of at least 0, got -5
    """
    whole = isinstance(count, (int, float)) and not isinstance(count, bool) and math.isfinite(count) \
        and float(count) == int(count)
    if not whole or int(count) < least:
        raise OptionError(f"{name} must be a whole number of at least {least}, got {count}")
    return int(count)
