"""The daily looks of an A/B analysis: every event up to the end of each day analysed, with the
sequential design's boundary and decision at each look."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import InputError, OptionError
from rankwise.experiments.capping import capped
from rankwise.experiments.compare import Comparing, comparison_row
from rankwise.experiments.events import aggregate_units
from rankwise.experiments.metric_table import unit_columns, unit_matrix
from rankwise.experiments.metrics import is_event_quantile
from rankwise.experiments.moments import VariantMoments
from rankwise.stats.sequential import boundaries

if TYPE_CHECKING:
    import pandas as pd

    from rankwise.experiments.metrics import Metric
    from rankwise.experiments.settings import Plan


def cumulative_looks(data: Any, plan: Plan, control: str, arms: Sequence[str], only_units: Any = None,
                     schedule: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per day x metric x arm: the analysis of every event up to the end of that day
    (the cumulative lift and its interval over time; with alpha spending, the boundary of
    each look, whether the z statistic crossed it and the look's repeated confidence interval
    ``rci_lower``/``rci_upper``; with an always-valid method, the running minimum p-value and each
    look's own always-valid interval, never intersected across looks: a look estimates the
    quantity of its own days, which grows when per-unit sums accumulate). ``only_units``: the ids
    (an Arrow array) of the units to analyse, a slice's; default every unit. ``schedule``: the
    looks of the whole experiment, whose information fractions a slice's alpha spending
    follows (a slice is looked at when the experiment is, at the experiment's fraction of its
    planned units). A test that reads unit rows is looked at by its base test; each look caps
    the plan's metrics over its own units.

    >>> import pandas as pd
    >>> from rankwise.experiments.settings import ABSettings, DataSource, plan
    >>> events = pd.DataFrame({"unit": [1, 2, 3, 4, 1, 2, 3, 4], "variant": ["A", "A", "B", "B"] * 2,
    ...                        "x": [1, 2, 2, 3, 1, 1, 1, 1], "time": ["2026-01-01"] * 4 + ["2026-01-02"] * 4})
    >>> looks = cumulative_looks(events, plan(["x"], ABSettings(DataSource(timestamp="time"))), "A", ["A", "B"])
    >>> looks["look"].dt.day.tolist(), looks["difference"].tolist()   # day 1: 2.5 - 1.5; day 2: 3.5 - 2.5
    ([1, 2], [1.0, 1.0])
    """
    import pandas as pd
    import pyarrow as pa

    # a per-event quantile is over the whole experiment's events (its warning says so)
    metrics = {name: m for name, m in plan.metrics.items() if not is_event_quantile(m)}

    table, days = _timed_rows(data, plan, metrics, only_units)
    rows = []
    for day in distinct(days):
        for row in _look(table.filter(pa.array(days <= day)), plan, metrics, control, arms):
            row["look"] = pd.Timestamp(day)
            rows.append(row)
    frame = pd.DataFrame(rows)
    if plan.sequential is not None and len(frame):
        frame = _running(frame) if plan.sequential.always_valid else _spent(frame, plan, schedule)
    return frame


def _timed_rows(data: Any, plan: Plan, metrics: Mapping[str, Metric], only_units: Any) -> tuple[Any, np.ndarray]:
    """The rows the looks read (one Arrow table; a slice's units only) and each row's day."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankwise.data.tables import tables_of

    unit, variant, timestamp = plan.source.unit, plan.source.variant, plan.source.timestamp
    assert timestamp is not None   # the looks are asked for by their timestamp
    sums, counts, constants = unit_columns(metrics)
    pieces = tables_of(data, list(dict.fromkeys([unit, variant, timestamp, *sums, *counts, *constants])),
                       ids=[unit, variant])
    for name, first, piece in pieces:   # an event without a time would belong to no look
        times = piece.column(timestamp)
        if times.null_count:
            from rankwise.data.tables import location

            at = int(np.flatnonzero(np.asarray(times.is_null().to_numpy(zero_copy_only=False)))[0])
            raise InputError("missing time; the daily looks need every event's time", field=timestamp,
                             **location(name, first, at))
    tables = [t for _, _, t in pieces]
    table = pa.concat_tables([t.cast(tables[0].schema) for t in tables]) if len(tables) > 1 else tables[0]
    if only_units is not None:
        ids = table.column(unit)
        if pa.types.is_dictionary(ids.type):
            ids = ids.dictionary_decode()
        table = table.filter(pc.is_in(ids.cast(only_units.type), value_set=only_units))
    try:
        days = _days(table.column(timestamp))
    except (ValueError, TypeError, OverflowError) as error:   # pandas' parse errors, out-of-bounds dates
        raise _unreadable_time(pieces, timestamp, error) from None
    return table, days.astype("datetime64[us]")   # one resolution whichever engine or reader gave the times


def _days(times: Any) -> np.ndarray:
    """The day of each time: seconds since the epoch, or times (text, timestamps, dates) as
    pandas reads them, each in its own zone's wall-clock date."""
    import pandas as pd
    import pyarrow as pa

    if pa.types.is_integer(times.type) or pa.types.is_floating(times.type):   # seconds since the epoch
        return np.asarray(pd.to_datetime(times.to_pandas(), unit="s").dt.floor("D").to_numpy())
    local = pd.to_datetime(times.to_pandas())
    if local.dt.tz is not None:   # the days of the times' own zone, as wall-clock dates
        local = local.dt.tz_localize(None)
    return np.asarray(local.dt.floor("D").to_numpy())


def _unreadable_time(pieces: Any, timestamp: str, error: BaseException) -> InputError:
    """The error for times the looks cannot read: the first row that does not read as the
    times of its file do (its file, line and value), else the parser's own first line."""
    import warnings

    import pandas as pd

    from rankwise.data.tables import location

    for name, first, piece in pieces:
        times = piece.column(timestamp)
        try:
            _days(times)
            continue
        except (ValueError, TypeError, OverflowError):
            pass
        values = times.to_pandas()
        unit = "s" if values.dtype.kind in "iuf" else None
        with warnings.catch_warnings():   # pandas warns when it guesses each value's format
            warnings.simplefilter("ignore")
            parsed = pd.to_datetime(values, unit=unit, errors="coerce")
        bad = np.flatnonzero(np.asarray(parsed.isna()))
        if len(bad):
            row = int(bad[0])
            value = values.iloc[row]
            value = value.item() if isinstance(value, np.generic) else value
            return InputError(f"expected a time (ISO 8601, such as 2026-03-01 12:00:00, written as the file's other "
                              f"times are, or seconds since 1970), got {value!r}", field=timestamp,
                              **location(name, first, row))
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return InputError(f"the times do not read as times: {message}", field=timestamp, source=pieces[0][0])


def _look(upto: Any, plan: Plan, metrics: Mapping[str, Metric], control: str,
          arms: Sequence[str]) -> list[dict[str, Any]]:
    """The comparisons of one look: the units of every row up to its day (capped over that
    look's units), each arm with at least 2 units against the control's."""
    source, adjust = plan.source, plan.adjustments
    sums, counts, constants = unit_columns(metrics)
    units = aggregate_units(upto, source.unit, source.variant, sums=sums, counts=counts, constants=constants,
                            variants=list(arms), mixed=source.mixed)
    day_metrics = dict(metrics)
    if adjust.caps:   # the cap of each look is taken over that look's units
        units, day_metrics, _ = capped(units, metrics, adjust.caps, adjust.ignore_zeros, adjust.cap_convention)
    matrix, cols = unit_matrix(units, day_metrics)
    m = VariantMoments.from_codes(units.codes, matrix, units.variants, cols)
    how = Comparing.of(plan, at_looks=True)
    return [comparison_row(name, metric, m, control, arm, units, plan.test_settings(name), how)
            for name, metric in day_metrics.items() for arm in arms
            if arm != control and m.count(arm) >= 2 and m.count(control) >= 2]


def _running(frame: pd.DataFrame) -> pd.DataFrame:
    """An always-valid design over looks: the running minimum p-value (valid under the null of
    no difference at every look) and whether any look's |z| reached its boundary. The intervals
    are not intersected: each look estimates its own quantity (a per-unit sum grows day by
    day), and each look's always-valid interval covers it on its own."""
    frame["p_value"] = frame.groupby(["metric", "variant"], sort=False)["p_value"].transform("cummin")
    reached = (frame["statistic"].abs() >= frame["boundary"]).astype(int)
    frame["crossed"] = reached.groupby([frame["metric"], frame["variant"]], sort=False).cummax().astype(bool)
    return frame


def _spent(frame: pd.DataFrame, plan: Plan, schedule: pd.DataFrame | None) -> pd.DataFrame:
    """An alpha-spending design over looks: each look's information fraction (of the planned
    units, or the whole experiment's ``schedule`` for a slice), its boundary, whether |z|
    crossed it, and the look's repeated confidence interval on the test's own scale."""
    import pandas as pd
    from scipy.special import ndtr, stdtrit

    planned, design = plan.design.planned_units, plan.sequential
    assert design is not None
    if planned is None:
        raise OptionError(f"sequential={design.name!r} needs the planned number of units (planned_units, "
                          "--planned-units) to know the information fraction of each look")
    out = []
    for _, group in frame.groupby(["metric", "variant"], sort=False):
        group = group.sort_values("look").copy()
        fractions = ((group["n"] + group["n_control"]) / planned).to_numpy()
        if schedule is not None:
            whole = schedule.set_index(["metric", "variant", "look"])["fraction"]
            at = whole.reindex(list(zip(group["metric"], group["variant"], group["look"], strict=True)))
            fractions = np.where(at.notna(), at.to_numpy(float), fractions)
        fractions = np.maximum.accumulate(fractions)
        keep = np.concatenate(([True], np.diff(fractions) > 0))
        bounds = np.full(len(group), np.nan)
        bounds[keep] = boundaries(fractions[keep], plan.design.alpha, design.name)
        group["fraction"] = fractions
        group["boundary"] = pd.Series(bounds, index=group.index).ffill().to_numpy()
        group["crossed"] = np.maximum.accumulate(np.abs(group["statistic"].to_numpy()) >= group["boundary"])
        # the repeated confidence interval of each look: its own estimate, the look's boundary
        # (on the test's own scale: a t test's boundary is the t quantile of the same tail)
        tail = ndtr(group["boundary"].to_numpy(float))
        df = group["df"].to_numpy(float) if "df" in group else np.full(len(group), np.inf)
        critical = np.where(np.isfinite(df), stdtrit(np.where(np.isfinite(df), df, 1.0), tail),
                            group["boundary"].to_numpy(float))
        group["rci_lower"] = group["difference"] - critical * group["se"]
        group["rci_upper"] = group["difference"] + critical * group["se"]
        out.append(group)
    return pd.concat(out)


def sequential_columns(frame: pd.DataFrame, looks: pd.DataFrame, plan: Plan, by: list[str]) -> bool:
    """The comparisons' columns from their looks, in place: the number of looks, the first look
    that crossed, the last look's boundary; an always-valid design's running values of the last
    look (True: the p-values must be corrected again), an alpha-spending design's decision and
    repeated confidence interval."""
    design = plan.sequential
    assert design is not None
    keys = list(zip(*[frame[c] for c in by], strict=True))
    at_last = looks.groupby(by, sort=False).tail(1).set_index(by).reindex(keys)   # no looks: blank
    frame["looks"] = [int(n) for n in looks.groupby(by, sort=False).size().reindex(keys).fillna(0)]
    first = looks[looks["crossed"].eq(True)].groupby(by)["look"].min()
    frame["first_crossing"] = [str(first[k].date()) if k in first.index else "" for k in keys]
    frame["boundary"] = at_last["boundary"].to_numpy()
    if design.always_valid:
        for column in ("ci_lower", "ci_upper", "relative_lower", "relative_upper", "p_value"):
            frame[column] = np.where(at_last[column].notna(), at_last[column].to_numpy(), frame[column].to_numpy(float))
        return True
    frame["significant"] = at_last["crossed"].eq(True).to_numpy()
    # the repeated confidence interval (Jennison and Turnbull): valid at any look
    frame["rci_lower"] = frame["difference"] - frame["boundary"] * frame["se"]
    frame["rci_upper"] = frame["difference"] + frame["boundary"] * frame["se"]
    return False
