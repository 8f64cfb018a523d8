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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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


@dataclass
class Estimate(Mapping[str, Any]):
    """One estimate in the one result shape: its named values (``value``, ``ci_low``,
    ``ci_high``, ``se``, ``n`` and the estimator's own diagnostics), read like a dict
    (``estimate(...)["value"]``); ``table`` is the one row.

    >>> out = Estimate({"estimator": "ips", "value": 0.5}, {"resamples": 10})
    >>> out["value"], out.table.to_dict("records"), out.to_dict()["rows"]
    (0.5, [{'estimator': 'ips', 'value': 0.5}], [{'estimator': 'ips', 'value': 0.5}])
    """

    row: dict[str, Any]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        return self.row[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.row)

    def __len__(self) -> int:
        return len(self.row)

    @property
    def table(self) -> Any:
        """The estimate as a one-row DataFrame."""
        import pandas as pd

        return pd.DataFrame([self.row])

    def to_dict(self) -> dict[str, Any]:
        """Settings, the row and the warnings (JSON-plain; NaN stays NaN, an unmeasured value)."""
        document: dict[str, Any] = json_plain({"settings": self.settings, "rows": [self.row],
                                               "warnings": self.warnings}, nan_as_null=False)
        return document


@dataclass
class TableResult:
    """A table in the one result shape, for analyses whose whole answer is one table
    (``estimate_all``, ``preferences``, ``evaluate_model``): the rows, the settings that
    reproduce them and the warnings.

    >>> import pandas as pd
    >>> TableResult(pd.DataFrame({"a": [1]}), {"seed": 0}).to_dict()
    {'settings': {'seed': 0}, 'rows': [{'a': 1}], 'warnings': []}
    """

    table: Any
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Settings, the rows and the warnings (JSON-plain)."""
        document: dict[str, Any] = json_plain({"settings": self.settings, "rows": self.table,
                                               "warnings": self.warnings}, nan_as_null=False)
        return document
