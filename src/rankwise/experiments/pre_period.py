"""CUPED from a metric's own events before the exposure, as GrowthBook's regression adjustment
reads them: each unit's covariate is the same definition (``count(click)``, a ratio's numerator
and denominator) summed over its events in the ``pre_period`` (14 days in GrowthBook) before
its first exposure.

The covariates are a second pass of the same source stage over the same exposed units, with the
window ``[first exposure - pre_period, first exposure)`` (``pre_period_window``); every engine
(memory, DuckDB, Ibis) computes it as it computes the experiment's own window, so their numbers
agree. ``with_pre_period`` then puts each unit's pre-exposure values beside its values and gives
each definition metric its covariate:

- a mean (``count(x)``, ``sum(x)``): its pre-exposure sum;
- a proportion (``any(x)``): whether the unit had such an event before (0 or 1);
- a ratio: its pre-exposure numerator and denominator (the ratio CUPED of gbstats'
  ``RegressionAdjustedRatioStatistic``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from rankwise.errors import OptionError
from rankwise.experiments.definitions import Definition
from rankwise.experiments.event_rows import ConversionWindow, window_seconds
from rankwise.experiments.events import Units
from rankwise.experiments.metrics import Metric, Proportion, Ratio


def pre_period_window(pre_period: str | float) -> ConversionWindow:
    """The window of the pre-exposure events: from ``pre_period`` before each unit's first
    exposure up to it (the exposure itself excluded: its events are the experiment's).

    >>> w = pre_period_window("14d")
    >>> w.opens, w.closes
    (-1209600.0, 0.0)
    >>> w.counted(np.array([-1209601.0, -1209600.0, -1.0, 0.0]), np.zeros(4)).tolist()
    [False, True, True, False]
    """
    seconds = window_seconds(pre_period, "pre_period")
    assert seconds is not None
    return ConversionWindow(delay=-seconds, length=seconds)


def pre_column(column: str) -> str:
    """The name of a column's pre-exposure sum.

    >>> pre_column("count(click)")
    'count(click) before exposure'
    """
    return f"{column} before exposure"


def check_pre_period(metrics: Mapping[str, Metric], definitions: Sequence[Definition], exposures: object,
                     timestamp: str | None, covariates: Mapping[str, str], cupac: Sequence[str]) -> None:
    """The settings a pre-period needs: exposures and their timestamp (the pre-period is
    counted back from each unit's first exposure), metrics defined over events (a per-unit
    column has no "before"), and no other source of covariates."""
    if exposures is None or timestamp is None:
        raise OptionError("pre_period counts each unit's events before its first exposure: give the exposures "
                          "table and the timestamp column (--exposures, --timestamp)")
    defined = {d.name for d in definitions}
    direct = [name for name in metrics if name not in defined]
    if direct:
        raise OptionError(f"pre_period: {', '.join(direct)} read a per-unit column, which has no pre-exposure "
                          "value; define the metric over events (count(...), sum(...), any(...)) or give its "
                          "covariate column instead")
    if covariates or cupac:
        raise OptionError("give pre_period, CUPED covariates or CUPAC features, one source of covariates")


def with_pre_period(units: Units, before: Units, metrics: Mapping[str, Metric],
                    definitions: Sequence[Definition]) -> tuple[Units, dict[str, Metric]]:
    """``units`` with each definition's pre-exposure columns (``before``: the same exposed
    units, summed over the pre-period window) and the metrics reading them as covariates.

    >>> import pyarrow as pa
    >>> from rankwise.experiments.definitions import parse_definition
    >>> d = parse_definition("clicks = count(click)")
    >>> now = Units(["A", "B"], np.array([0, 1]), {"count(click)": np.array([3.0, 5.0])}, pa.array([1, 2]))
    >>> then = Units(["A", "B"], np.array([1, 0]), {"count(click)": np.array([4.0, 2.0])}, pa.array([2, 1]))
    >>> units, table = with_pre_period(now, then, {"clicks": d.metric()}, [d])
    >>> units.values["count(click) before exposure"].tolist(), table["clicks"].covariate
    ([2.0, 4.0], 'count(click) before exposure')
    """
    import pyarrow.compute as pc

    if units.unit_ids is None or before.unit_ids is None:
        raise OptionError("pre_period needs the units' ids; this source keeps none")
    at = np.asarray(pc.index_in(units.unit_ids, value_set=before.unit_ids).fill_null(-1).to_numpy())
    if (at < 0).any() or len(before) != len(units):
        raise OptionError("pre_period: the pre-exposure pass found other units than the experiment's")
    values = dict(units.values)
    table = dict(metrics)
    for definition in definitions:
        metric = table[definition.name]
        for aggregate in definition.aggregates():
            values[pre_column(aggregate.column)] = before.values[aggregate.column][at].astype(np.float64)
        if isinstance(metric, Ratio):
            table[definition.name] = replace(metric, covariate=(pre_column(metric.numerator),
                                                                pre_column(metric.denominator)))
        elif isinstance(metric, Proportion):
            shown = pre_column(metric.column) + " > 0"
            values[shown] = (values[pre_column(metric.column)] > 0).astype(np.float64)
            table[definition.name] = replace(metric, covariate=shown, binary_covariate=True)
        else:
            table[definition.name] = replace(metric, covariate=pre_column(metric.column))
    return replace(units, values=values), table


def covariate_warnings(warnings: Sequence[str], pre_period: str | float) -> list[str]:
    """What the pre-exposure pass left out that the experiment's own pass did not: events
    before the pre-period (its other warnings repeat the experiment's, or name the experiment's
    own events, which are after the pre-period's window).

    >>> covariate_warnings(["3 event(s) before the unit's first exposure were left out",
    ...                     "9 event(s) after the unit's window were left out"], "14d")
    ["3 event(s) before the unit's 14d pre-period were left out of its CUPED covariates"]
    """
    out = []
    for warning in warnings:
        if "before the unit's first exposure" in warning:
            count = warning.split(" ", 1)[0]
            out.append(f"{count} event(s) before the unit's {pre_period} pre-period were left out of its CUPED "
                       "covariates")
    return out
