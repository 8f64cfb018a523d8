"""The one shape of every result, and the one helper that makes it JSON.

Every analysis returns an object with

- ``table``: a pandas DataFrame, one row per thing measured (a run, a metric x arm, an
  estimator, a statistic, a fusion candidate ...);
- ``to_dict()``: the plain-Python document the CLI prints with ``--format json``;
- ``warnings``: what the reader or the analysis wants the user to know, as printed;
- ``settings``: everything that, with the inputs, reproduces it (tests, seeds, resamples,
  conventions, signatures).

``tests/test_results.py`` holds every result type to this shape.

>>> json_plain({"p": np.float64("nan"), "n": np.int64(3), "xs": np.array([0.5, 1.0]), "t": (1, 2)})
{'p': None, 'n': 3, 'xs': [0.5, 1.0], 't': [1, 2]}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class ResultShape(Protocol):
    """What every result offers (see the module)."""

    @property
    def table(self) -> Any: ...

    @property
    def warnings(self) -> list[str]: ...

    @property
    def settings(self) -> dict[str, Any]: ...

    def to_dict(self) -> dict[str, Any]: ...


def json_plain(value: Any, nan_as_null: bool = True) -> Any:
    """``value`` as plain Python that ``json.dumps`` writes: NumPy scalars and arrays as
    numbers and lists, tuples as lists, mapping keys as text, DataFrames as lists of row
    dicts, timestamps in ISO 8601; NaN (not measured) as ``None`` unless ``nan_as_null`` is
    false. Infinities (a one-sided bound) stay: ``json.dumps`` writes them as ``Infinity``.

    >>> json_plain([np.inf, np.nan, 1.5]), json_plain([np.nan], nan_as_null=False)
    ([inf, None, 1.5], [nan])
    """
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, str) else k: json_plain(v, nan_as_null) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_plain(v, nan_as_null) for v in value]
    if isinstance(value, np.ndarray):
        return json_plain(value.tolist(), nan_as_null)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return None if nan_as_null and math.isnan(value) else value
    if hasattr(value, "to_dict") and hasattr(value, "columns"):   # a DataFrame
        return json_plain(value.to_dict("records"), nan_as_null)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
