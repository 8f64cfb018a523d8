"""The metrics of an A/B analysis as per-unit columns: the metric spellings (``NAME=COL``,
``NAME=NUM/DEN``, ``p90(COL)``, definitions over events), the columns each reads, the per-unit
matrix the moments are built from, and the columns a per-variant state must hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.definitions import Definition
from rankwise.experiments.events import Units
from rankwise.experiments.metrics import Mean, Metric, Proportion, Quantile, Ratio, indicator, is_event_quantile
from rankwise.experiments.moments import VariantMoments

QUANTILE_FLAGS = ("ignore_zeros", "per_event")
"""The options of a quantile metric, ``p99(COL, OPTION, ...)``: leave out the values that are 0;
take the quantile of every event's value rather than of each unit's sum."""


def parse_metric(spec: str) -> tuple[str, Metric]:
    """``NAME=COL`` (mean per unit), ``NAME=COL>0`` (proportion of units), ``NAME=NUM/DEN``
    (ratio of sums), ``NAME=p90(COL)`` (a quantile of the units' values; ``p90(COL, ignore_zeros)``
    over the units whose value is not 0); the name defaults to
    the expression.

    >>> parse_metric("ctr=clicks/views")
    ('ctr', Ratio(numerator='clicks', denominator='views', covariate=None))
    >>> parse_metric("bought>0")
    ('bought>0', Proportion(column='bought', covariate=None))
    >>> parse_metric("p90=p90(revenue)")
    ('p90', Quantile(column='revenue', covariate=None, q=0.9, ignore_zeros=False, per_event=False))
    >>> parse_metric("p50(spend, ignore_zeros)")[1].ignore_zeros
    True
    >>> parse_metric("p99(latency, per_event)")[1].per_event   # every event's value, not the unit's sum
    True
    """
    name, _, expression = spec.partition("=") if "=" in spec else (spec, "", spec)
    expression = expression.strip()
    name = name.strip()
    if not expression or not name:
        raise OptionError(f"metric {spec!r}: expected NAME=COLUMN, NAME=COLUMN>0, NAME=NUMERATOR/DENOMINATOR or "
                          "NAME=p90(COLUMN)")
    import re

    quantile = re.fullmatch(r"p(\d+(?:\.\d+)?)\(([^,]+?)((?:\s*,\s*[A-Za-z_]+)*)\s*\)", expression)
    if quantile:
        flags = [f.strip() for f in quantile.group(3).split(",") if f.strip()]
        unknown = [f for f in flags if f not in QUANTILE_FLAGS]
        if unknown:
            raise OptionError(f"metric {spec!r}: unknown quantile option {unknown[0]!r}; expected "
                              f"{' or '.join(QUANTILE_FLAGS)}")
        return name, Quantile(quantile.group(2).strip(), q=float(quantile.group(1)) / 100,
                              ignore_zeros="ignore_zeros" in flags, per_event="per_event" in flags)
    if "/" in expression:
        num, _, den = expression.partition("/")
        return name, Ratio(num.strip(), den.strip())
    if expression.endswith(">0"):
        return name, Proportion(expression[:-2].strip())
    return name, Mean(expression)


def with_covariate(metric: Metric, covariate: str) -> Metric:
    if isinstance(metric, Ratio):
        if "/" in covariate:
            num, _, den = covariate.partition("/")
            return replace(metric, covariate=(num.strip(), den.strip()))
        return replace(metric, covariate=covariate)
    return replace(metric, covariate=covariate)


def metric_table(metrics: Mapping[str, Any] | Sequence[Any] | str) -> tuple[dict[str, Metric], list[Definition]]:
    """The metrics by name, and the event-log definitions among them (their metrics read the
    columns ``rankwise.experiments.event_rows`` derives)."""
    from rankwise.experiments.definitions import is_definition, parse_definition

    if isinstance(metrics, (str, Definition)):
        metrics = [metrics]
    items = list(metrics.items()) if isinstance(metrics, Mapping) else [(None, m) for m in metrics]
    out: dict[str, Metric] = {}
    definitions: list[Definition] = []
    for name, m in items:
        if isinstance(m, str) and is_definition(m if name is None else f"x={m}"):
            m = parse_definition(m, name=name)
        if isinstance(m, Definition):
            definition = m if name is None else Definition(str(name), m.numerator, m.denominator)
            if definition.name in out:
                raise OptionError(f"two metrics are named {definition.name!r}")
            definitions.append(definition)
            out[definition.name] = definition.metric()
        elif isinstance(m, str):
            key, metric = parse_metric(m if name is None else f"{name}={m}")
            out[key] = metric
        else:
            out[str(name) if name is not None else m.describe()] = m
    return out, definitions


def unit_columns(metrics: Mapping[str, Metric]) -> tuple[list[str], list[str], list[str]]:
    """(sums, counts, constants): columns summed per unit, those that must be >= 0, and
    per-unit covariates."""
    sums: list[str] = []
    counts: list[str] = []
    constants: list[str] = []
    for m in metrics.values():
        if isinstance(m, Ratio):
            counts += [m.numerator, m.denominator]
        elif isinstance(m, Proportion):
            counts.append(m.column)
        elif not is_event_quantile(m):   # an event quantile reads the events themselves
            sums.append(m.column)
        constants += [c for c in (m.covariate_ratio or ()) if c]
    return list(dict.fromkeys(sums)), list(dict.fromkeys(counts)), list(dict.fromkeys(constants))


def unit_matrix(units: Units, metrics: Mapping[str, Metric]) -> tuple[np.ndarray, list[str]]:
    columns: dict[str, np.ndarray] = {}
    for m in metrics.values():
        if isinstance(m, Proportion):
            values = units.values[m.column]
            columns[indicator(m.column)] = (values > 0).astype(values.dtype)
        for c in m.columns():
            if c in units.values:
                columns[c] = units.values[c]
    names = list(columns)
    matrix = np.column_stack([columns[c] for c in names]) if names else np.zeros((len(units), 0))
    return matrix, names


def state_columns(metrics: Mapping[str, Metric]) -> tuple[list[str], list[tuple[str, str]]]:
    """The per-unit columns the metrics read from a state, and the pairs whose co-moments they
    need (each metric combines its own columns).

    >>> state_columns({"ctr": Ratio("clicks", "views")})
    (['clicks', 'views'], [('clicks', 'clicks'), ('clicks', 'views'), ('views', 'views')])
    """
    columns: list[str] = []
    pairs: list[tuple[str, str]] = []
    for metric in metrics.values():
        own = list(dict.fromkeys(metric.columns()))
        columns += own
        pairs += [(a, b) for i, a in enumerate(own) for b in own[i:]]
    return list(dict.fromkeys(columns)), list(dict.fromkeys(pairs))


def check_state(moments: VariantMoments, columns: Sequence[str], pairs: Sequence[tuple[str, str]]) -> None:
    missing = [c for c in columns if c not in moments.columns]
    if missing:
        raise OptionError(f"the statistics have no column {missing[0]!r} (they hold {', '.join(moments.columns)})")
    for a, b in pairs:
        i, j = moments.columns.index(a), moments.columns.index(b)
        if np.isnan(moments.comoments[:, i, j]).any():
            raise OptionError(f"the statistics have no sum({a}*{b}), which the metrics need")


def matrix_columns(metrics: Mapping[str, Metric]) -> list[tuple[str, str, bool]]:
    """The moment columns ``_unit_matrix`` makes, as ``(name, summed column, indicator)``."""
    out: dict[str, tuple[str, str, bool]] = {}
    for m in metrics.values():
        if isinstance(m, Proportion):
            out.setdefault(indicator(m.column), (indicator(m.column), m.column, True))
        for c in m.columns():
            if not (isinstance(m, Proportion) and c == m.numerator):
                out.setdefault(c, (c, c, False))
    return list(out.values())
