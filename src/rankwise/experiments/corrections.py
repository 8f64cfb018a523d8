"""The decision stage of an A/B analysis: p-values corrected across the comparisons (in the
scope the slices ask for), guardrails' non-inferiority tests, and the slices' rows."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.experiments.events import Units
from rankwise.experiments.metric_table import unit_matrix
from rankwise.experiments.metrics import Metric
from rankwise.experiments.moments import VariantMoments

if TYPE_CHECKING:
    import pandas as pd

    from rankwise.experiments.settings import Plan


def corrected(p_values: np.ndarray, correction: str, alpha: float) -> np.ndarray:
    """The corrected p-values of the comparisons that were made (NaN for those that were not:
    they are no members of the family)."""
    from rankwise.stats.corrections import correct

    out = np.full(len(p_values), np.nan)
    made = np.isfinite(p_values)
    out[made] = correct(p_values[made], correction, alpha)
    return out


def guardrail_columns(frame: pd.DataFrame, guardrails: Mapping[str, float], lower_is_better: Sequence[str],
                      alpha: float, posterior: bool = False) -> pd.DataFrame:
    """Each guardrail row's non-inferiority test on the relative difference ``r`` with its
    standard error ``s`` (delta method) and margin ``m``: ``p = 1 - Phi((r + m) / s)`` (``r``'s
    sign flipped where lower is better), one-sided, not corrected (each guardrail is a
    decision of its own). ``guardrail`` is ``passed`` when ``p < alpha`` (no worse than the
    margin), ``failed`` when the metric is significantly worse than the control (one-sided,
    ``1 - Phi(-r / s) < alpha``), else ``inconclusive``.

    With a ``posterior`` (a Bayesian test's rows) ``r`` is the posterior mean of the relative
    effect and ``s`` its posterior standard deviation (from the credible interval, at
    ``1 - alpha``): ``guardrail_p`` is then the posterior probability that the metric is worse
    than the margin, and ``failed`` means the posterior probability that it is no worse than
    the control is below alpha (with a flat prior the numbers equal the frequentist ones).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"metric": ["x"], "relative": [0.01], "relative_se": [0.01]})
    >>> row = guardrail_columns(frame, {"x": 0.02}, [], 0.05).iloc[0]
    >>> round(float(row["guardrail_p"]), 6), row["guardrail"]   # 1 - Phi((0.01 + 0.02) / 0.01) = 1 - Phi(3)
    (0.00135, 'passed')
    """
    from rankwise.stats.noninferiority import non_inferiority

    frame = frame.copy()
    sign = np.where(frame["metric"].isin(list(lower_is_better)), -1.0, 1.0)
    margin = frame["metric"].map({k: float(v) for k, v in guardrails.items()})
    guarded = margin.notna().to_numpy()
    if posterior:   # the posterior's sd, from its two-sided 1 - alpha credible interval
        from rankwise.stats.distributions import NORMAL

        width = (frame["relative_upper"] - frame["relative_lower"]).to_numpy(float)
        se = width / (2 * float(NORMAL.ppf(1 - alpha / 2)))
    else:
        se = frame["relative_se"].to_numpy(float)
    p, decision = non_inferiority((sign * frame["relative"]).to_numpy(float), se, margin.to_numpy(float), alpha)
    frame["margin"] = margin
    frame["guardrail_p"] = np.where(guarded, p, np.nan)
    frame["guardrail"] = np.where(guarded, decision, "")
    return frame


def sliced_rows(comparisons: Any, labels_of: Any, dimensions: Sequence[str], units: Units,
            table: Mapping[str, Metric], warnings: list[str],
            rule: str) -> tuple[list[dict[str, Any]], list[tuple[str, str, Any]]]:
    """The rows of every slice of every dimension (``rankwise.experiments.slices``), and each
    slice's ``(dimension, value, unit ids)``. ``comparisons(moments, units, (dimension, value))``
    compares the arms of one slice. ``labels_of(dimension)``: each unit's label and
    how many units had several, taken by ``rule`` (said in the warning)."""
    from rankwise.experiments.slices import slice_values, subset

    rows = []
    members = []
    for dimension in dimensions:
        labels, conflicting = labels_of(dimension)
        blank = np.array([isinstance(v, str) and not v.strip() for v in labels], dtype=bool)
        if blank.any():   # an empty value is a missing one: no slice named ''
            from rankwise.experiments.slices import MISSING

            labels = np.where(blank, MISSING, labels)
            warnings.append(f"{int(blank.sum())} unit(s) have an empty {dimension!r}: they are in the slice "
                            f"{MISSING!r}")
        if conflicting:
            warnings.append(f"{conflicting} unit(s) had more than one {dimension!r}; each is in the slice of {rule}")
        for value in slice_values(labels):
            part = subset(units, labels == value)
            members.append((dimension, value, part.unit_ids))
            matrix, columns = unit_matrix(part, table)
            moments = VariantMoments.from_codes(part.codes, matrix, part.variants, columns)
            rows += [{"dimension": dimension, "slice": value, **row}
                     for row in comparisons(moments, part, (dimension, value))]
    return rows, members


def correct(frame: pd.DataFrame, plan: Plan) -> None:
    """``p_corrected`` and ``significant`` of every row, in place: the p-values corrected
    together within each group of the plan's scope when sliced, all together otherwise."""
    alpha = plan.design.alpha
    if plan.slices:
        from rankwise.experiments.slices import correction_groups

        frame["p_corrected"] = np.nan
        for group in correction_groups(frame, plan.correction_scope):
            frame.loc[frame.index[group], "p_corrected"] = corrected(frame["p_value"].to_numpy()[group],
                                                                     plan.correction, alpha)
    else:
        frame["p_corrected"] = corrected(frame["p_value"].to_numpy(), plan.correction, alpha)
    frame["significant"] = frame["p_corrected"] < alpha


def decided(rows: list[dict[str, Any]], plan: Plan) -> pd.DataFrame:
    """The comparisons as a table with their decisions: the relative lift's p where asked for
    (GrowthBook's display; the difference's kept as ``absolute_p_value``), corrected p-values,
    guardrails, and a posterior test's decision by the chance to win (GrowthBook's threshold
    ``1 - alpha``)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    if plan.design.p_value == "relative" and "relative_p_value" in frame:
        frame["absolute_p_value"] = frame["p_value"]
        frame["p_value"] = frame["relative_p_value"]
    correct(frame, plan)
    alpha, adjust = plan.design.alpha, plan.adjustments
    if adjust.guardrails:
        frame = guardrail_columns(frame, adjust.guardrails, adjust.lower_is_better, alpha, plan.test.posterior)
    if plan.test.posterior:
        for column in ("chance_to_win", "risk_control", "risk_treatment"):
            if column not in frame:   # no row could be compared: every posterior column is missing
                frame[column] = math.nan
        frame["significant"] = (frame["chance_to_win"] >= 1 - alpha) | (frame["chance_to_win"] <= alpha)
    return frame
