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

from rankwise._version import __version__


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


def _field(value: Any) -> str:
    """A setting's value as a signature writes it: numbers in their shortest form, lists joined
    by commas, None as ``none``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_field(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(_field(v) for v in value)
    return str(value)


PIPE = "%7C"
"""How a ``|`` inside a signature's value is written (``|`` separates the fields)."""


@dataclass(frozen=True)
class Signature:
    """What produced a number, in one line (sacrebleu's idea): the measure or analysis as
    spelled (its declared member with its parameters), every setting and convention that can
    change the value, and the rankwise version::

        nDCG@10|gain=linear|ties=trec|rel=1|judged=all|missing=skip|depth=all|scores=float64|rankwise-0.1.0

    Every result's ``settings`` carries one (``signature``, or ``signatures`` per measure),
    stored in its JSON; ``Signature.parse`` reads one back.

    >>> text = str(Signature.of("ope", estimator="ips(clip=1.5)", alpha=0.05, resamples=2000))
    >>> text.rsplit("|", 1)[0]
    'ope|estimator=ips(clip=1.5)|alpha=0.05|resamples=2000'
    >>> Signature.parse(text).value("alpha")
    '0.05'
    """

    head: str
    fields: tuple[tuple[str, str], ...] = ()
    version: str = __version__

    @classmethod
    def of(cls, head: str, **settings: Any) -> Signature:
        """The signature of ``head`` (an analysis or a spelled member) with ``settings`` in
        their order; values are written by ``_field``, a ``|`` in one as ``%7C``."""
        return cls(head.replace("|", PIPE), tuple((key, _field(value).replace("|", PIPE))
                                                 for key, value in settings.items()))

    @classmethod
    def parse(cls, text: str) -> Signature:
        """A signature from its text (``str(signature)``); text that is not one is refused."""
        parts = str(text).split("|")
        if len(parts) < 2 or not parts[-1].startswith("rankwise-"):
            raise ValueError(f"not a rankwise signature (no trailing rankwise-VERSION): {text!r}")
        fields = []
        for part in parts[1:-1]:
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"signature field {part!r} is not key=value: {text!r}")
            fields.append((key, value))
        return cls(parts[0], tuple(fields), parts[-1].removeprefix("rankwise-"))

    def value(self, key: str) -> str | None:
        """The value of field ``key`` as it was given (``%7C`` read as ``|``), None if absent."""
        found = dict(self.fields).get(key)
        return None if found is None else found.replace(PIPE, "|")

    def __str__(self) -> str:
        return "|".join([self.head, *(f"{k}={v}" for k, v in self.fields), f"rankwise-{self.version}"])


def signed(head: str, settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with their ``signature``: ``head`` (the analysis) and every setting, in order.

    >>> signed("preferences", {"alpha": 0.05, "seed": 0})["signature"].rsplit("|", 1)[0]
    'preferences|alpha=0.05|seed=0'
    """
    plain = {k: v for k, v in settings.items() if k not in ("signature", "signatures")}
    return {**settings, "signature": str(Signature.of(head, **plain))}
