"""What an A/B analysis is asked to do, as three small settings objects (gbstats' and
tea-tasting's shape), and the plan resolved from them.

- ``DataSource``: where the units come from (columns, engine, exposures and their window, the
  event column, whether the data are per-variant statistics);
- ``ExperimentDesign``: how arms are compared and decided (control, test, sequential design,
  alpha, alternative, relative interval, p-value, correction and its scope, the design split,
  resamples, power);
- ``Adjustments``: what changes the per-unit values or adds rows (CUPED covariates, CUPAC,
  caps, slices, guardrails, lower-is-better metrics).

``ABSettings`` holds the three; ``plan`` checks them against the metrics and resolves every
spelling through its registry (the test, the sequential design, the correction, the scope),
once: every stage of ``analyze`` reads the ``Plan``.

>>> p = plan(["ctr=clicks/views"], ABSettings(design=ExperimentDesign(sequential="msprt(mixture_effect=0.2)")))
>>> p.sequential.name, p.sequential_params, p.test.name
('msprt', {'mixture_effect': 0.2}, 'welch')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rankwise.errors import OptionError
from rankwise.experiments.ab_tests import AB_TESTS, ABTest, TestSettings
from rankwise.experiments.definitions import Definition
from rankwise.experiments.metric_table import metric_table, with_covariate
from rankwise.experiments.metrics import is_event_quantile
from rankwise.stats.checks import resample_count, significance_level
from rankwise.stats.corrections import CORRECTION_METHODS
from rankwise.stats.sequential import SEQUENTIAL_DESIGNS, Design
from rankwise.stats.twosample import RELATIVE, Alternative, Relative

if TYPE_CHECKING:
    from rankwise.experiments.event_rows import ConversionWindow
    from rankwise.experiments.events import Mixed
    from rankwise.experiments.metrics import Metric
    from rankwise.experiments.warehouse import AggregationEngine

P_VALUES = ("absolute", "relative")
"""What ``p_value`` (and its correction) tests: the absolute difference, or the relative lift
(GrowthBook's default display, equal to gbstats' relative ``TwoSidedTTest``)."""


@dataclass(frozen=True)
class DataSource:
    """Where the units come from: the ``unit`` and ``variant`` columns (``variants``: the
    variants to keep, in order), the ``event`` type column of an event log, an ``exposures``
    table with its ``window``, the events' ``timestamp`` column (the exposure join, and the
    daily looks unless ``looks`` is False), the ``engine`` that aggregates, ``statistics`` (the
    data are per-variant sums) and what ``mixed`` units get. With exposures, a unit's events count
    from ``delay`` after its first exposure, for ``window``, the end exclusive or inclusive
    (``window_end``), as GrowthBook's conversion windows
    (``rankwise.experiments.event_rows.ConversionWindow``); ``lookback`` (``7d``) counts only
    the events of the analysis' last days (GrowthBook's lookback window), the analysis ending
    ``until`` (a time, or seconds; default the latest event), after which no event counts."""

    unit: str = "unit"
    variant: str = "variant"
    variants: Sequence[str] | None = None
    event: str = "event"
    exposures: Any = None
    window: str | float | None = None
    timestamp: str | None = None
    engine: AggregationEngine = "memory"
    statistics: bool = False
    mixed: Mixed = "exclude"
    looks: bool = True
    delay: str | float | None = None
    window_end: str = "exclusive"
    lookback: str | float | None = None
    until: str | float | None = None


@dataclass(frozen=True)
class ExperimentDesign:
    """How each arm is compared with the ``control`` and decided: the ``test`` and the
    ``sequential`` design wrapping it (spelled with their parameters), the ``planned_units`` of
    alpha spending, ``alpha``, the ``alternative``, the ``relative`` interval, which ``p_value``
    is reported, the ``correction`` and its ``correction_scope``, the design split ``weights``
    of the sample-ratio check, the ``resamples`` and ``seed`` of resampling tests, and the
    ``power`` of each row's minimum detectable effect."""

    control: str | None = None
    test: str = "welch"
    sequential: str | None = None
    planned_units: int | None = None
    alpha: float = 0.05
    alternative: Alternative = "two-sided"
    relative: Relative = "delta"
    p_value: str = "absolute"
    correction: str = "holm"
    correction_scope: str = "slice"
    weights: Sequence[float] | None = None
    resamples: int = 2000
    seed: int = 0
    power: float = 0.8


@dataclass(frozen=True)
class Adjustments:
    """What changes the per-unit values or adds rows: CUPED ``covariates`` (metric ->
    pre-experiment column or NUM/DEN), ``cupac`` features and ``cupac_model``, ``caps`` (metric
    -> number or percentile; ``ignore_zeros`` for the percentile), ``slices`` (dimension
    columns), ``guardrails`` (metric -> margin) and the metrics where ``lower_is_better``;
    ``pre_period`` (``14d``): CUPED from each metric's own events in that span before the unit's
    first exposure (``rankwise.experiments.pre_period``); ``cap_convention``: what a cap reaches
    besides the value (``rankwise.experiments.capping.CAP_CONVENTIONS``)."""

    covariates: Mapping[str, str] = field(default_factory=dict)
    cupac: Sequence[str] = ()
    cupac_model: Any = "linear"
    caps: Mapping[str, str | float] = field(default_factory=dict)
    ignore_zeros: bool = False
    slices: Sequence[str] = ()
    guardrails: Mapping[str, float] = field(default_factory=dict)
    lower_is_better: Sequence[str] = ()
    pre_period: str | float | None = None
    cap_convention: str = "value"


@dataclass(frozen=True)
class ABSettings:
    """The whole request: a ``DataSource``, an ``ExperimentDesign`` and ``Adjustments``."""

    source: DataSource = field(default_factory=DataSource)
    design: ExperimentDesign = field(default_factory=ExperimentDesign)
    adjustments: Adjustments = field(default_factory=Adjustments)


@dataclass(frozen=True)
class Plan:
    """The settings checked and resolved: the metrics by name (covariates attached) and the
    event-log definitions among them, the test and the sequential design with their
    parameters, the correction and scope as written the one way, the slices and CUPAC features
    without repeats."""

    settings: ABSettings
    metrics: dict[str, Metric]
    definitions: list[Definition]
    test: ABTest
    test_params: dict[str, Any]
    sequential: Design | None
    sequential_params: dict[str, Any]
    correction: str
    correction_scope: str
    slices: list[str]
    cupac: list[str]
    window_override: ConversionWindow | None = None

    @property
    def source(self) -> DataSource:
        return self.settings.source

    @property
    def design(self) -> ExperimentDesign:
        return self.settings.design

    @property
    def adjustments(self) -> Adjustments:
        return self.settings.adjustments

    @property
    def window(self) -> ConversionWindow | None:
        """The exposures' conversion window (None: every event from the first exposure on)."""
        from rankwise.experiments.event_rows import conversion_window

        if self.window_override is not None:
            return self.window_override
        return conversion_window(self.source.window, self.source.delay, self.source.window_end)

    def pre_period_pass(self) -> Plan | None:
        """The plan of the pre-exposure pass (None without a pre-period): the definitions alone,
        counted in the pre-period window, with no looks, caps, slices or covariates."""
        from rankwise.experiments.pre_period import pre_period_window

        pre = self.adjustments.pre_period
        if pre is None:
            return None
        settings = ABSettings(replace(self.source, looks=False), self.design, Adjustments())
        table = {d.name: d.metric() for d in self.definitions}
        return replace(self, settings=settings, metrics=table, slices=[], cupac=[],
                       window_override=pre_period_window(pre))

    @property
    def daily_looks(self) -> bool:
        """Whether the analysis reads the daily looks (a timestamp, looks not turned off)."""
        return self.source.timestamp is not None and self.source.looks

    @property
    def spending(self) -> bool:
        """Whether the sequential design spends alpha over planned daily looks."""
        return self.sequential is not None and not self.sequential.always_valid

    def test_settings(self, metric: str) -> TestSettings:
        """What the test reads when it compares ``metric``."""
        design = self.design
        return TestSettings(design.relative, design.alpha, design.alternative, design.resamples, design.seed,
                            metric in self.adjustments.lower_is_better)


def plan(metrics: Mapping[str, Any] | Sequence[Any] | str, settings: ABSettings,
         tuning: float | None = None, mixture_effect: float | None = None) -> Plan:
    """``settings`` checked against ``metrics`` and resolved (see the module); ``tuning`` and
    ``mixture_effect`` are the old keywords of two designs' parameters, joining the design that
    declares them."""
    from rankwise.experiments.slices import CORRECTION_SCOPES, check_dimensions

    source, design, adjust = settings.source, settings.design, settings.adjustments
    scope = CORRECTION_SCOPES.canonical(design.correction_scope)
    slices = check_dimensions(adjust.slices, source.unit, source.variant)
    test, test_params = AB_TESTS.parse(design.test)
    if design.relative not in RELATIVE:
        raise OptionError(f"unknown relative interval {design.relative!r}; expected one of {', '.join(RELATIVE)}")
    sequential: Design | None = None
    sequential_params: dict[str, Any] = {}
    if design.sequential is not None:
        sequential, sequential_params = SEQUENTIAL_DESIGNS.parse_with_keywords(
            design.sequential, tuning=tuning, mixture_effect=mixture_effect)
    _check_design(design, test, sequential)
    correction = CORRECTION_METHODS.canonical(design.correction)
    significance_level(design.alpha)
    resample_count(design.resamples)
    table, definitions = metric_table(metrics)
    if not table:
        raise OptionError("give at least one metric (NAME=COL, NAME=COL>0, NAME=NUM/DEN or a definition over "
                          "events such as NAME=count(click)/count(impression))")
    for name, column in adjust.covariates.items():
        _known(table, name, "covariate")
        table[name] = with_covariate(table[name], column)
    _check_adjustments(adjust, table)
    if source.exposures is not None and any(is_event_quantile(m) for m in table.values()):
        raise OptionError("per-event quantiles read the events' own variant: give the log without --exposures, "
                          "or a quantile of the units' values (p99(COL))")
    if adjust.pre_period is not None:
        from rankwise.experiments.pre_period import check_pre_period, pre_period_window

        check_pre_period(table, definitions, source.exposures, source.timestamp, adjust.covariates, adjust.cupac)
        pre_period_window(adjust.pre_period)   # a duration
    if (source.lookback is not None or source.until is not None) and source.exposures is None:
        raise OptionError("lookback and until bound the events of exposed units: give the exposures table "
                          "(--exposures) and its timestamp")
    if source.lookback is not None:
        from rankwise.experiments.event_rows import window_seconds

        window_seconds(source.lookback, "lookback")
    if sequential is not None and not sequential.always_valid and (source.timestamp is None or not source.looks):
        raise OptionError(f"sequential={sequential.name!r} analyses daily looks: give the timestamp column (and "
                          "keep the looks)")
    return Plan(settings, table, definitions, test, test_params, sequential, sequential_params, correction, scope,
                slices, list(dict.fromkeys(adjust.cupac)))


def _check_design(design: ExperimentDesign, test: ABTest, sequential: Design | None) -> None:
    if design.p_value not in P_VALUES:
        raise OptionError(f"p_value={design.p_value!r}: expected {' or '.join(P_VALUES)} (the difference's test, or "
                          "the relative lift's)")
    if design.p_value == "relative" and (not test.relative_p or sequential is not None):
        raise OptionError(f"p_value='relative' is the t or z test of the relative lift; the "
                          f"{sequential.name if sequential is not None else test.name} p-value has no relative form")
    if design.planned_units is not None and not design.planned_units >= 1:
        raise OptionError(f"planned_units={design.planned_units}: the planned number of units is a positive count "
                          "(--planned-units N)")


def _known(table: Mapping[str, Metric], name: str, kind: str) -> None:
    if name not in table:
        raise OptionError(f"{kind} for unknown metric {name!r}; the metrics are {', '.join(table)}")


def _check_adjustments(adjust: Adjustments, table: Mapping[str, Metric]) -> None:
    from rankwise.experiments.capping import CAP_CONVENTIONS

    CAP_CONVENTIONS.parse(adjust.cap_convention)   # a known convention, its parameters checked
    if adjust.cupac and adjust.covariates:
        raise OptionError("give CUPED covariates or CUPAC features, not both: CUPAC predicts each metric's covariate")
    for name in adjust.caps:
        _known(table, name, "cap")
    for kind, given in (("guardrail", adjust.guardrails), ("lower_is_better", adjust.lower_is_better)):
        for name in given:
            _known(table, name, kind)
    for name, margin in adjust.guardrails.items():
        if not (0 <= float(margin) < 1):
            raise OptionError(f"guardrail {name!r}: the margin is a relative worsening in [0, 1) (0.02 for 2%), "
                              f"got {margin}")
