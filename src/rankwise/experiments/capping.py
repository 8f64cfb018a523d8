"""Capping (winsorisation) of per-unit values, as GrowthBook caps metrics, and the conventions
of what else a cap reaches (``CAP_CONVENTIONS``).

A rule caps a metric at a number, or at a percentile of every unit's value, both arms pooled
(``cap_value``). Where tools differ is what else the cap reaches:

- ``value`` (the default): the metric's value, a ratio's numerator; a CUPED covariate and a
  ratio's denominator stay as they are;
- ``growthbook``: as GrowthBook's SQL writes it, the CUPED covariate is capped at the metric's
  own cap (the pre-period value never exceeds what the experiment's values may reach), and a
  ratio's denominator is capped too, by the same rule over the denominators (in GrowthBook the
  denominator is a metric with its own cap).

Each convention is one function ``(values, metric, rule, ignore_zeros, **params) -> Capped``
and one registration line; ``capped`` calls the one the plan names, with its parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.events import Units
from rankwise.experiments.metrics import Metric, Ratio
from rankwise.params import Declared, Registry


def cap_value(values: np.ndarray, spec: str | float, ignore_zeros: bool = False) -> float:
    """The cap a rule gives over every unit's values: a number as it is, ``"p99"`` the 99th
    percentile (linear interpolation, SQL's PERCENTILE_CONT, as GrowthBook computes it), of
    the non-zero values with ``ignore_zeros``.

    >>> cap_value(np.arange(101.0), "p99"), cap_value(np.array([0.0, 0.0, 4.0, 8.0]), "p50", True), cap_value([], 5)
    (99.0, 6.0, 5.0)
    """
    import re

    if isinstance(spec, (int, float)) or re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?", str(spec).strip()):
        value = float(spec)
        if not math.isfinite(value):
            raise OptionError(f"a cap must be a finite number or a percentile such as p99, got {spec!r}")
        return value
    match = re.fullmatch(r"p(\d+(?:\.\d+)?)", str(spec).strip().lower())
    if match is None or not 0 < float(match.group(1)) < 100:
        raise OptionError(f"a cap must be a number or a percentile such as p99 (p0 < p < p100), got {spec!r}")
    data = np.asarray(values, dtype=np.float64)
    if ignore_zeros:
        data = data[data != 0]
    return float(np.quantile(data, float(match.group(1)) / 100)) if len(data) else math.nan


def _capped_column(metric: Metric) -> str:
    """The per-unit column a cap applies to: the value, or a ratio's numerator."""
    return metric.numerator if isinstance(metric, Ratio) else metric.column


@dataclass(frozen=True)
class Capped:
    """What a convention did to one metric: the new per-unit columns, the metric reading them,
    and the cap of its value (a ratio's numerator)."""

    columns: dict[str, np.ndarray]
    metric: Metric
    cap: float


CapMetric = Callable[..., Capped]
"""``(values, metric, rule, ignore_zeros, **params) -> Capped``: one metric's columns capped."""


def _capped(values: Mapping[str, np.ndarray], column: str, rule: str | float, ignore_zeros: bool,
            cap: float | None = None) -> tuple[str, np.ndarray, float]:
    """``column`` capped by ``rule`` (or at ``cap`` when given): its new name, values and cap."""
    if cap is None:
        cap = cap_value(values[column], rule, ignore_zeros)
    data = values[column]
    return f"{column} capped at {rule}", np.minimum(data, cap) if math.isfinite(cap) else data, cap


def cap_value_only(values: Mapping[str, np.ndarray], metric: Metric, rule: str | float,
                   ignore_zeros: bool) -> Capped:
    """The metric's value (a ratio's numerator) capped; nothing else.

    >>> from rankwise.experiments.metrics import Mean
    >>> got = cap_value_only({"x": np.array([1.0, 5.0]), "pre": np.array([9.0, 2.0])}, Mean("x", "pre"), 3, False)
    >>> got.columns["x capped at 3"].tolist(), got.metric.covariate, got.cap
    ([1.0, 3.0], 'pre', 3.0)
    """
    name, data, cap = _capped(values, _capped_column(metric), rule, ignore_zeros)
    new = replace(metric, numerator=name) if isinstance(metric, Ratio) else replace(metric, column=name)
    return Capped({name: data}, new, cap)


def cap_like_growthbook(values: Mapping[str, np.ndarray], metric: Metric, rule: str | float,
                        ignore_zeros: bool) -> Capped:
    """The value capped, and as GrowthBook does: the CUPED covariate at the value's own cap, a
    ratio's denominator by the same rule over the denominators (its covariate's denominator at
    the denominator's cap).

    >>> from rankwise.experiments.metrics import Mean
    >>> got = cap_like_growthbook({"x": np.array([1.0, 5.0]), "pre": np.array([9.0, 2.0])}, Mean("x", "pre"), 3,
    ...                           False)
    >>> got.columns["pre capped at 3"].tolist(), got.metric.covariate   # 9 capped at the value's cap
    ([3.0, 2.0], 'pre capped at 3')
    """
    done = cap_value_only(values, metric, rule, ignore_zeros)
    columns, new = dict(done.columns), done.metric
    covariate = metric.covariate_ratio
    den_cap: float | None = None
    if isinstance(new, Ratio):
        name, data, den_cap = _capped(values, new.denominator, rule, ignore_zeros)
        columns[name] = data
        new = replace(new, denominator=name)
    if covariate is not None:
        cov_num, cov_den = covariate
        num_name, num_data, _ = _capped(values, cov_num, rule, ignore_zeros, done.cap)
        columns[num_name] = num_data
        if cov_den is None:
            new = replace(new, covariate=num_name)
        else:   # only a ratio's covariate has a denominator
            assert isinstance(new, Ratio)
            den_name, den_data, _ = _capped(values, cov_den, rule, ignore_zeros, den_cap)
            columns[den_name] = den_data
            new = replace(new, covariate=(num_name, den_name))
    return Capped(columns, new, done.cap)


class CapConvention(Declared[CapMetric]):
    """What a cap reaches besides the metric's value (see the module)."""


CAP_CONVENTIONS: Registry[CapConvention] = Registry("cap convention", (
    CapConvention("value", cap_value_only, "The metric's value (a ratio's numerator) only; covariates and "
                  "denominators as they are.", reference="winsorising the analysed value (Kohavi et al. 2020)"),
    CapConvention("growthbook", cap_like_growthbook, "Also the CUPED covariate (at the value's cap) and a ratio's "
                  "denominator (by the same rule over the denominators).",
                  reference="GrowthBook's capped metrics with regression adjustment"),
))
"""The capping conventions."""


def capped(units: Units, metrics: Mapping[str, Metric], caps: Mapping[str, str | float], ignore_zeros: bool,
           convention: str = "value") -> tuple[Units, dict[str, Metric], dict[str, float]]:
    """The units with each capped metric's columns capped by ``convention`` (spelled with its
    parameters; new columns per metric and cap, so metrics sharing a column keep their own), the
    metrics reading those columns, and each metric's cap."""
    member, params = CAP_CONVENTIONS.parse(convention)
    values = dict(units.values)
    out = dict(metrics)
    applied: dict[str, float] = {}
    for name, spec in caps.items():
        done = member.target(units.values, metrics[name], spec, ignore_zeros, **params)
        values.update(done.columns)
        out[name] = done.metric
        applied[name] = done.cap
    return replace(units, values=values), out, applied
