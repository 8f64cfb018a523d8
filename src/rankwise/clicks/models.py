"""Click models fitted by counting or by vectorised EM over all sessions at once.

Notation: a session shows documents at ranks ``r = 1..R``; ``C_r`` is a click, ``E_r``
examination, ``A_r`` attractiveness. ``alpha`` is per (query, document) pair, ``gamma`` per
rank (or rank and previous click).

- ``GlobalCTR``, ``RankCTR``, ``DocumentCTR``: ``P(C_r) =`` the click rate overall, at rank
  ``r``, or of the (query, document) pair.
- ``PBM`` (position-based): ``P(C_r) = alpha_qd gamma_r``, clicks independent.
- ``UBM`` (user browsing): ``P(C_r | C_<r) = alpha_qd gamma_{r, r'}``, ``r'`` the rank of the
  previous click (0 when none).
- ``CascadeModel`` (CM): the user examines top-down and stops at the first click:
  ``P(C_r | no click above) = alpha_qd``; after the first click the model gives every cell
  ``floor`` (PyClick uses 1e-6; CLAX clips log-probabilities at log 1e-8; conditional
  perplexities after the first click depend entirely on it).
- The chain models (DCM, SDBN, DBN, CCM) are in ``rankwise.clicks.chain``.

Every per-pair parameter has a Beta prior (``rankwise.clicks.shrinkage``): ``prior =
"empirical"`` (the default) fits its hyperparameters to the data by marginal likelihood at
every M-step, one Beta per parameter family (attractiveness, satisfaction), so rare and unseen
pairs get the baseline the log shows; ``prior = (clicks, impressions)`` adds fixed
pseudo-counts to every parameter's numerator and denominator (``(1, 2)`` is PyClick's
initialisation). Per-rank and global parameters, observed in every session, take the fixed
prior (``(1, 2)`` under ``"empirical"``). ``fit`` stops when the log-likelihood gains less than ``tolerance`` per
session or after ``iterations``, and adds up its statistics chunk by chunk.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.clicks.acceleration import DEFAULT_ACCELERATION, PlainEM, accelerator_for
from rankwise.clicks.log import ClickLog
from rankwise.clicks.shrinkage import EMPIRICAL, beta_hyperparameters, posterior_mean, pseudo_counts
from rankwise.clicks.structure import DEFAULT_STRUCTURE, PRIOR_STRUCTURES, ranking_rule, structure_of
from rankwise.errors import InputError, OptionError

PRIOR = (1.0, 2.0)
"""The fixed prior: pseudo-counts (clicks, impressions)."""
FLOOR = 1e-6
TINY = 1e-12


FEATURE_FIELDS = ("alpha", "sigma")
STRUCTURE_KEY = "structure:"
"""The prefix of the statistics a fit's first pass adds up for the prior structure."""
"""The per-pair parameters ``use_features`` makes functions of (query, document) features:
attractiveness, and satisfaction where the model has it (DBN, SDBN)."""


def _feature_spelling(fit: Mapping[str, Any]) -> str:
    """Features as a user named them: the table's columns and the hashed ids."""
    parts = [*fit["names"], *(f"hashed {name} ({fit['buckets']} buckets)" for name in fit.get("hashed", ()))]
    return ", ".join(parts) or "none"

def _ratio(numerator: np.ndarray, denominator: np.ndarray, prior: tuple[float, float]) -> np.ndarray:
    return (numerator + prior[0]) / (denominator + prior[1])


def weighted(log: ClickLog, values: np.ndarray) -> np.ndarray:
    """``values`` (sessions x ranks) times each session's weight when the log carries weights
    (``log.cache["weight"]``: a mixture's responsibilities), else ``values`` unchanged. Every
    statistic a model adds up goes through it, so a weighted E-step needs nothing else.

    >>> log = ClickLog.from_arrays(["q", "q"], [["a"], ["a"]], [[1], [0]])
    >>> log.cache["weight"] = np.array([0.25, 1.0])
    >>> weighted(log, np.array([[1.0], [1.0]])).tolist()
    [[0.25], [1.0]]
    """
    weight = log.cache.get("weight")
    return values if weight is None else values * weight[:, None]


def _pair_sum(log: ClickLog, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` (sessions x ranks) per (query, document) pair over shown cells (each
    session's cells times its weight, when the log carries weights)."""
    values = weighted(log, values)
    weights = values if values.dtype == np.float64 else values.astype(np.float64)
    if _all_shown(log):
        return np.bincount(log.pairs.ravel(), weights=weights.ravel(), minlength=log.n_pairs)
    shown = log.mask
    return np.bincount(log.pairs[shown], weights=weights[shown], minlength=log.n_pairs)


def _all_shown(log: ClickLog) -> bool:
    """True when no cell is padding (checked once per chunk)."""
    cached = log.cache.get("all_shown")
    if cached is None:
        cached = bool(log.mask.all())
        log.cache["all_shown"] = cached
    return cached


def _log_likelihood_sum(p_click: np.ndarray, log: ClickLog) -> float:
    """Sum over shown cells of log P(observed click) for click probabilities ``p_click``."""
    observed = np.where(log.clicks == 1, p_click, 1 - p_click)
    np.clip(observed, TINY, 1.0, out=observed)
    logs = np.log(observed)
    return float(logs.sum() if _all_shown(log) else logs[log.mask].sum())


def previous_click(clicks: np.ndarray) -> np.ndarray:
    """For each cell, the rank (1-based) of the latest click above it, 0 when none.

    >>> previous_click(np.array([[0, 1, 0, 1, 0]])).tolist()
    [[0, 0, 2, 2, 4]]
    """
    ranks = np.arange(1, clicks.shape[1] + 1)
    at = np.where(clicks == 1, ranks, 0)
    running = np.maximum.accumulate(at, axis=1)
    out = np.zeros_like(running)
    out[:, 1:] = running[:, :-1]
    return out


def last_click(clicks: np.ndarray) -> np.ndarray:
    """Rank (1-based) of each session's last click, 0 when none."""
    ranks = np.arange(1, clicks.shape[1] + 1)
    return np.where(clicks == 1, ranks, 0).max(axis=1, initial=0)


CHUNK = 250_000


def _over_chunks(work: Callable[[Any], Any], chunks: Any, workers: int | None) -> Any:
    """``work`` on each chunk, ``workers`` at a time in threads (NumPy releases the GIL in its
    array loops), results in chunk order; at most ``workers`` chunks are read ahead."""
    import itertools
    import os
    from concurrent.futures import ThreadPoolExecutor

    count = workers or min(os.cpu_count() or 1, 4)
    if count <= 1:
        yield from map(work, chunks)
        return
    with ThreadPoolExecutor(count) as pool:
        while batch := list(itertools.islice(chunks, count)):
            yield from pool.map(work, batch)


@dataclass(frozen=True)
class SufficientStatistics:
    """One E-step's statistics of some sessions: per-pair and per-rank sums (clicks, expected
    examinations, ...) and the log-likelihood sum; the statistics of disjoint chunks merge by
    adding (``rankwise.merging``). Unpacks as ``(sums, log_likelihood)``.

    >>> a = SufficientStatistics({"shown": np.array([1.0, 2.0])}, -0.5)
    >>> a + SufficientStatistics({"shown": np.array([3.0, 0.0])}, -1.0)
    SufficientStatistics(sums={'shown': array([4., 2.])}, log_likelihood=-1.5)
    >>> (a.empty() + a).sums["shown"].tolist()
    [1.0, 2.0]
    """

    sums: dict[str, np.ndarray]
    log_likelihood: float = 0.0

    def merge(self, other: SufficientStatistics | tuple[dict[str, np.ndarray], float]) -> SufficientStatistics:
        """The statistics of both inputs' sessions; a sum one side lacks is taken from the
        other (neither input changes)."""
        sums, ll = other
        totals = dict(self.sums)
        for key, value in sums.items():
            totals[key] = totals[key] + value if key in totals else value
        return SufficientStatistics(totals, self.log_likelihood + ll)

    def __add__(self, other: SufficientStatistics) -> SufficientStatistics:
        return self.merge(other)

    def empty(self) -> SufficientStatistics:
        """No sessions: no sums and a log-likelihood of 0 (``merge``'s identity)."""
        return SufficientStatistics({}, 0.0)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.sums, self.log_likelihood))


def add_statistics(*parts: SufficientStatistics | tuple[dict[str, np.ndarray], float]) -> SufficientStatistics:
    """The statistics of several chunks (each ``SufficientStatistics`` or a ``(sums,
    log-likelihood)`` pair) merged in the order given.

    >>> add_statistics(({"shown": np.array([1.0, 2.0])}, -0.5), ({"shown": np.array([3.0, 0.0])}, -1.0))
    SufficientStatistics(sums={'shown': array([4., 2.])}, log_likelihood=-1.5)
    """
    out = SufficientStatistics({}, 0.0)
    for part in parts:
        out = out.merge(part)
    return out


@dataclass(frozen=True)
class CompressedCells:
    """A chunk's shown cells as distinct (pair, examination cell, clicked) with their counts:
    PBM's and UBM's E-step depends on a cell only through these, so from the second pass on a
    fit reads these (often a tenth of the cells or fewer) instead of the log."""

    pair: np.ndarray
    cell: np.ndarray
    clicked: np.ndarray
    count: np.ndarray
    cells: int = 0
    """How many shown cells they stand for."""


def pool_cells(parts: list[CompressedCells]) -> CompressedCells:
    """Several chunks' distinct cells as one (equal keys' counts added).

    >>> a = CompressedCells(np.array([0, 1]), np.array([0, 0]), np.array([True, False]), np.array([2.0, 1.0]), 3)
    >>> pool_cells([a, a]).count.tolist()
    [4.0, 2.0]
    """
    pair = np.concatenate([p.pair for p in parts])
    cell = np.concatenate([p.cell for p in parts])
    width = int(cell.max()) + 1 if cell.size else 1
    key = (pair * width + cell) * 2 + np.concatenate([p.clicked for p in parts])
    unique, inverse = np.unique(key, return_inverse=True)
    count = np.bincount(inverse, weights=np.concatenate([p.count for p in parts]), minlength=len(unique))
    return CompressedCells(unique // 2 // width, (unique // 2) % width, (unique % 2).astype(bool), count,
                           sum(p.cells for p in parts))


class _PooledCells:
    """The first pass's chunks' distinct cells, pooled into one ``CompressedCells`` for the
    whole log when that holds at most half as many entries as the log has shown cells (later
    passes then read it, not the log); otherwise pooling stops and every pass reads the log."""

    def __init__(self, active: bool, cells: int) -> None:
        import threading

        self.active = active
        self.limit = max(cells // 2, 1)
        """At most this many distinct cells (half the log's cells)."""
        self.lock = threading.Lock()   # chunks arrive from worker threads
        self.parts: list[CompressedCells] = []
        self.entries = 0
        self.pooled = 0
        self.cells = 0
        self.whole: CompressedCells | None = None

    def add(self, part: CompressedCells) -> CompressedCells:
        with self.lock:
            if not self.active:
                return part
            self.parts.append(part)
            self.entries += len(part.count)
            self.cells += part.cells
            if self.entries > max(2_000_000, 2 * self.pooled):   # pool as we go: memory stays near the result
                self.parts = [pool_cells(self.parts)]
                self.entries = self.pooled = len(self.parts[0].count)
                if self.entries > self.limit:   # it will not halve the log: every pass reads the log
                    self.active, self.parts = False, []
        return part

    def finish(self) -> None:
        if self.active and self.parts:
            whole = pool_cells(self.parts)
            self.whole = whole if len(whole.count) * 2 <= max(whole.cells, 1) else None
        self.active, self.parts = False, []


def check_prior(prior: Any, model: str = "model") -> tuple[float, float]:
    """A fixed prior as pseudo-counts (clicks, impressions) added to every estimate: finite, with
    0 < clicks < impressions, so that (clicks seen + a) / (impressions seen + b) is always a
    probability strictly between 0 and 1 (a Beta(a, b - a) prior).

    >>> check_prior((1, 2))
    (1.0, 2.0)
    >>> check_prior((5, 1), "dbn")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.ParameterError: dbn: prior (5.0, 1.0): expected pseudo-counts CLICKS,IMPRESSIONS with ...
    """
    import math

    from rankwise.errors import ParameterError

    try:
        a, b = (float(v) for v in prior)
    except (TypeError, ValueError):
        raise ParameterError(f"{model}: prior {prior!r}: expected two numbers CLICKS,IMPRESSIONS") from None
    if not (math.isfinite(a) and math.isfinite(b) and 0 < a < b):
        raise ParameterError(f"{model}: prior ({a}, {b}): expected pseudo-counts CLICKS,IMPRESSIONS with 0 < CLICKS "
                             "< IMPRESSIONS, both finite (a Beta prior), or 'empirical'")
    return a, b


PARAMETER_TOLERANCE = 1e-4
"""EM has converged when no probability is further than this from EM's limit, as the shrinking
moves of the last two passes tell it (``_distance_to_limit``), and the log-likelihood per session
changes by less than its tolerance; each pass's largest move and that distance are in
``history`` (``parameter_change``, ``parameter_distance``). ``inf`` lets the log-likelihood
alone decide."""

ITERATION_CAP = 1000
"""EM's guard: a fit stopped here, not converged, says so in its warnings."""


def _distance_to_limit(move: float, last_move: float) -> float:
    """How far the parameters still are from EM's limit, as a linearly converging sequence's
    moves tell it: with the rate ``r = move / last_move`` the moves to come add up to
    ``move r / (1 - r)`` (infinite while the moves do not shrink).

    >>> _distance_to_limit(0.001, 0.002), _distance_to_limit(1e-4, 1.01e-4) > 0.009, _distance_to_limit(0.1, 0.05)
    (0.001, True, inf)
    """
    if move == 0:
        return 0.0
    if not (math.isfinite(last_move) and last_move > 0):
        return math.inf
    return _distance_at_rate(move, move / last_move)


def _cap_warning(name: str, iterations: int, gain: tuple[float, float], distance: tuple[float, float]) -> str:
    """What a fit stopped by its iteration cap says: the last log-likelihood change and the
    parameters' distance from EM's limit, each with its tolerance."""
    moving = f", a parameter is still {distance[0]:.2g} from its limit (tolerance {distance[1]:g})" \
        if math.isfinite(distance[1]) else ""
    return (f"{name}: EM stopped at the iteration cap ({iterations}) before converging: the log-likelihood per "
            f"session still changed by {gain[0]:.2g} (tolerance {gain[1]:g}){moving}; raise iterations "
            f"(--iterations) for a converged fit")


def _distance_at_rate(move: float, rate: float) -> float:
    """``_distance_to_limit`` with EM's rate measured elsewhere (SQUAREM's plain passes).

    >>> _distance_at_rate(0.001, 0.5), _distance_at_rate(0.001, 1.0)
    (0.001, inf)
    """
    if move == 0:
        return 0.0
    return move * rate / (1 - rate) if rate < 1 else math.inf


def _largest_change(before: np.ndarray | None, after: np.ndarray) -> float:
    """The largest change of one parameter between two passes (infinite after the first)."""
    if before is None or before.shape != after.shape:
        return math.inf
    if not len(after):
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.abs(after - before)))


class ClickModel:
    """Base: ``fit(log)``, ``conditional_log_probs(log)``, ``log_probs(log)``,
    ``relevance()``, ``parameters()``.

    A fit makes passes over the log chunk by chunk (``chunk_size`` sessions at a time): each
    pass adds up the model's statistics (counts, or EM's expected counts at the current
    parameters) and the log-likelihood, then sets the parameters from the totals. Counting
    models need one pass; EM models repeat until the log-likelihood per session gains less
    than ``tolerance`` or after ``iterations``. Memory follows the chunk, not the log.
    """

    name = "model"
    iterative = False
    parameter_tolerance: float = PARAMETER_TOLERANCE
    """EM's default distance of the parameters from its limit at which a fit stops (``fit``'s
    ``parameter_tolerance`` when not given)."""
    pair_fields: dict[str, str] = {"attractiveness": "alpha"}   # column -> attribute, per pair
    alpha: np.ndarray
    """Attractiveness per fitted (query, document) pair (set by the fit)."""
    fields: Mapping[str, tuple[int | None, ...]] = {}
    """Other fitted attributes that ``save_model`` writes, each with its shape (``()`` a
    number, ``(None,)`` one value per rank, ``(3,)`` exactly three, ``(None, None)`` a square
    matrix over ranks); loading checks them."""
    constant_statistics: tuple[str, ...] = ("shown", "rank_shown", "cell_shown", "clicks", "clicked_again",
                                                 "rank_clicks")
    _first_pass = True
    accelerated = True
    """False for a model whose passes ``acceleration`` must not jump between (a mixture)."""
    per_pair = True
    """False for a model whose estimate is the same for every pair (one global click rate)."""

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL, prior_structure: str = DEFAULT_STRUCTURE) -> None:
        if isinstance(prior, str):
            if prior != EMPIRICAL:
                raise ValueError(f"prior must be {EMPIRICAL!r} or (clicks, impressions), got {prior!r}")
        else:
            prior = check_prior(prior, type(self).name)
        self.prior: tuple[float, float] | str = prior
        self.prior_structure = PRIOR_STRUCTURES.canonical(prior_structure)
        """What the empirical prior's mean follows (``rankwise.clicks.structure``)."""
        self.structured_by: str | None = None
        """The structure whose features the fitted prior follows (None: features of one's own, or none)."""
        self._design: tuple[Any, np.ndarray] | None = None
        self._own_features = False
        self._pending_structure: str | None = None
        self.warnings: list[str] = []
        """What the last fit must tell its caller (EM stopped by the iteration cap, not converged)."""
        self.hyper: dict[str, tuple[float, float]] = {}
        """The fitted Beta (a, b) of each per-pair parameter (``alpha``, ``sigma``) under the
        empirical prior."""
        self.posterior: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """Each per-pair parameter's posterior Beta (a, b) per pair, from the last M-step."""
        self.features: Any = None
        self.feature_fit: dict[str, Any] | None = None
        """With features: their names and standardisation, and attractiveness's logistic
        weights and concentration ``kappa`` around the pairs' feature-based means; a model
        with satisfaction (DBN, SDBN) also has ``feature_fit["sigma"]``, its own weights and
        ``kappa`` over the same features."""
        self.history: list[dict[str, float]] = []

    @property
    def featured_fields(self) -> tuple[str, ...]:
        """The per-pair parameters whose prior follows features: the structure's, or both
        attractiveness and satisfaction with features of one's own."""
        if self.structured_by is not None:
            return structure_of(self.structured_by)[0].fields
        return FEATURE_FIELDS

    def _apply_structure(self) -> None:
        """Before a fit: whether its first pass reads what the prior structure needs (not under
        a fixed prior, with features of one's own, or for a model without per-pair parameters)."""
        self._pending_structure = None
        if self._own_features:
            self.structured_by = None
            return
        self.features, self.structured_by = None, None   # a refit reads the new log's placement
        member = structure_of(self.prior_structure)[0]
        if self.prior == EMPIRICAL and self.per_pair and self.pair_fields and member.from_sums is not None:
            self._pending_structure = self.prior_structure

    def structure_statistics(self, chunk: ClickLog) -> dict[str, np.ndarray]:
        """In a fit's first pass, what the prior structure adds up over ``chunk`` (keys prefixed
        ``structure:``); nothing afterwards."""
        if not (self._first_pass and self._pending_structure):
            return {}
        member, params = structure_of(self._pending_structure)
        return {f"{STRUCTURE_KEY}{key}": value for key, value in member.sums(chunk, **params).items()}

    def _structure_from(self, totals: dict[str, np.ndarray]) -> None:
        """After the first pass: the structure's features of the fitted pairs from its sums."""
        sums = {key[len(STRUCTURE_KEY):]: totals.pop(key) for key in list(totals) if key.startswith(STRUCTURE_KEY)}
        if self._pending_structure is None:
            return
        member, params = structure_of(self._pending_structure)
        assert member.from_sums is not None
        self.features, self.l2 = member.from_sums(self, sums, **params), 1.0
        self.structured_by, self._pending_structure = self._pending_structure, None

    def _features_for(self, log: Any) -> Any:
        """The features of ``log``'s pairs: one's own table, or the structure's features of that
        log (where the engine placed them there)."""
        if self.structured_by is not None and log is not None:
            member, params = structure_of(self.structured_by)
            return member.target(log, **params)
        if self.features is None:
            raise InputError(f"{self.name}: the model scores pairs it never saw from their features; give it the "
                             f"feature table (model.use_features(table), or --features)")
        return self.features

    @property
    def fixed_prior(self) -> tuple[float, float]:
        """The pseudo-counts for per-rank and global parameters (and per-pair ones when the
        prior is fixed)."""
        return PRIOR if isinstance(self.prior, str) else self.prior

    def _pair_estimate(self, field: str, successes: np.ndarray, trials: np.ndarray,
                       evidence: tuple[np.ndarray, np.ndarray] | None = None, flipped: bool = False) -> np.ndarray:
        """A per-pair parameter from its (expected) successes and trials: the posterior mean
        under the fixed prior, or under the Beta fitted by marginal likelihood (kept in
        ``hyper[field]``).

        The Beta is fitted to ``evidence``: observed successes (clicks) over expected
        exposures (examinations), not to EM's imputed successes, which carry the current
        estimate back in and would make every pair look alike (the fit would shrink them all
        to one value). ``flipped``: the evidence counts the complement (a satisfaction's
        evidence is the clicks followed by another click, the unsatisfied ones)."""
        observed, exposed = evidence if evidence is not None else (successes, trials)
        if self.prior == EMPIRICAL:
            start = self.hyper.get(field)
            a, b = beta_hyperparameters(observed, exposed, start=start[::-1] if flipped and start else start)
            self.hyper[field] = (b, a) if flipped else (a, b)
        a, b = self._prior_beta(field)
        # the posterior for intervals counts observed successes over expected exposures: an
        # impression at a rank rarely examined is worth a fraction of a trial
        others = np.maximum(exposed - observed, 0.0)
        self.posterior[field] = (others + a, observed + b) if flipped else (observed + a, others + b)
        estimate = _ratio(successes, trials, self.fixed_prior) if self.prior != EMPIRICAL else posterior_mean(
            successes, trials, self.hyper[field])
        if field in self.featured_fields and self.features is not None:
            if flipped:   # the regression reads the satisfied share, not its complement
                observed = np.maximum(exposed - observed, 0.0)
            return self._feature_estimate(field, estimate, successes, trials, observed, exposed)
        return estimate

    def use_features(self, features: Any = None, l2: float = 1.0, hashed: Sequence[str] = (),
                     buckets: int = 4096) -> ClickModel:
        """Attractiveness from (query, document) features (``rankwise.clicks.features``): each
        pair's prior mean is ``sigmoid(w . x_qd + b)``, fitted at every M-step as a weighted
        logistic regression of the pairs' clicks on their expected examinations, with the
        pairs spread around it by a fitted concentration ``kappa``. Rare pairs shrink to their
        features' prediction, not to one baseline, and pairs the log never showed (a held-out
        query) are scored from their features. Pairs without a feature row take the usual
        prior. Call before ``fit`` (or after ``load_model``, to score unseen pairs).

        ``hashed=("doc",)`` (and/or ``"query"``) adds the ids, hashed into ``buckets`` buckets
        with a weight each, with or without a table: a document's attractiveness carries to the
        queries where it was never shown.

        >>> import pandas as pd
        >>> log = ClickLog.from_arrays(["q"] * 4, [["a", "b"]] * 4, [[1, 0], [1, 0], [0, 1], [1, 0]])
        >>> table = pd.DataFrame({"query": ["q", "q", "q"], "doc": ["a", "b", "new"], "rank": [1.0, 2.0, 1.0]})
        >>> model = PBM().use_features(table).fit(log, iterations=5)
        >>> sorted(model.feature_fit)
        ['kappa', 'mean', 'names', 'scale', 'weights']
        """
        from rankwise.clicks.features import PairFeatures

        fitted = self.feature_fit
        if not hashed and fitted is not None and fitted.get("hashed"):   # a loaded model keeps its hashing
            hashed, buckets = tuple(fitted["hashed"]), int(fitted["buckets"])
        if features is None and not hashed:
            raise OptionError("use_features needs a feature table, hashed ids, or both")
        if features is None:
            chosen = PairFeatures.ids_only(tuple(hashed), buckets)
        else:
            chosen = features if isinstance(features, PairFeatures) else PairFeatures.from_table(features)
            if hashed:
                chosen = chosen.with_hashed(tuple(hashed), buckets)
        if not l2 >= 0:
            raise ValueError(f"l2 must be non-negative, got {l2}")
        if fitted is not None and (tuple(fitted["names"]) != chosen.names or tuple(fitted.get("hashed", ())) !=
                                   chosen.hashed or int(fitted.get("buckets", 0)) != chosen.buckets):
            given = {"names": chosen.names, "hashed": chosen.hashed, "buckets": chosen.buckets}
            raise InputError(f"the model was fitted with features {_feature_spelling(fitted)}; these are "
                             f"{_feature_spelling(given)}")
        self.features, self._own_features = chosen, True
        self.l2 = float(l2)
        return self

    def _feature_matrix(self, query_ids: Any, doc_ids: Any, pair_query: np.ndarray, pair_doc: np.ndarray,
                        features: Any = None) -> tuple[np.ndarray, np.ndarray]:
        features = self.features if features is None else features
        x, known = features.matrix(query_ids, doc_ids, pair_query, pair_doc)
        fit = self.feature_fit
        assert fit is not None
        x = (x - fit["mean"]) / fit["scale"]
        if not features.hashed:
            return x, known
        from scipy import sparse

        ids = features.hashed_matrix(query_ids, doc_ids, pair_query, pair_doc)
        return sparse.hstack([sparse.csr_matrix(x), ids], format="csr"), known

    def _feature_slot(self, field: str) -> dict[str, Any]:
        """The logistic weights and ``kappa`` of one per-pair parameter (attractiveness's sit
        at the top of ``feature_fit``, satisfaction's under ``"sigma"``)."""
        assert self.feature_fit is not None
        if field == "alpha":
            return self.feature_fit
        return self.feature_fit.setdefault(field, {"weights": None, "kappa": None})

    def _feature_means(self, x: np.ndarray, field: str = "alpha") -> np.ndarray:
        from scipy.special import expit

        weights = self._feature_slot(field)["weights"]
        return np.asarray(expit(x @ weights[:-1] + weights[-1]))

    def _feature_estimate(self, field: str, estimate: np.ndarray, successes: np.ndarray, trials: np.ndarray,
                          observed: np.ndarray, exposed: np.ndarray) -> np.ndarray:
        """A per-pair parameter (attractiveness, satisfaction) of the pairs with features: their
        logistic prior mean ``m`` refitted, the concentration ``kappa`` by marginal likelihood,
        then ``(s + kappa m) / (n + kappa)``."""
        from rankwise.clicks.features import fit_logistic
        from rankwise.clicks.shrinkage import concentration

        if self.feature_fit is None:
            raw, known = self.features.matrix(self.query_ids, self.doc_ids, self.pair_query, self.pair_doc)
            mean = raw[known].mean(axis=0) if known.any() else np.zeros(raw.shape[1])
            scale = raw[known].std(axis=0) if known.any() else np.ones(raw.shape[1])
            self.feature_fit = {"names": list(self.features.names), "mean": mean,
                                "scale": np.where(scale > 0, scale, 1.0), "weights": None, "kappa": None}
            if self.features.hashed:
                self.feature_fit.update(hashed=list(self.features.hashed), buckets=self.features.buckets)
            if self.structured_by is not None:
                self.feature_fit["structure"] = self.structured_by
        fit = self._feature_slot(field)
        if self._design is None:   # the fitted pairs' design matrix: the same at every M-step
            self._design = self._feature_matrix(self.query_ids, self.doc_ids, self.pair_query, self.pair_doc)
        x, known = self._design
        if not known.any():
            return estimate
        fit["weights"] = fit_logistic(x[known], observed[known], exposed[known], self.l2, start=fit["weights"])
        m = self._feature_means(x[known], field)
        fit["kappa"] = concentration(observed[known], exposed[known], m, start=fit["kappa"]) \
            if self.prior == EMPIRICAL else float(self.fixed_prior[1])
        kappa = fit["kappa"]
        out = estimate.copy()
        out[known] = (successes[known] + kappa * m) / (trials[known] + kappa)
        a, b = self.posterior[field]
        a, b = a.copy(), b.copy()
        a[known] = observed[known] + kappa * m
        b[known] = np.maximum(exposed[known] - observed[known], 0.0) + kappa * (1 - m)
        self.posterior[field] = (a, b)
        return out

    def _unseen_alpha(self, query_ids: Any, doc_ids: Any, pair_query: np.ndarray, pair_doc: np.ndarray,
                      field: str = "alpha", log: Any = None) -> np.ndarray:
        """A per-pair parameter (attractiveness by default) of pairs the model never saw: their
        features' prediction, or the prior mean for pairs without a feature row."""
        fallback = _fallback(self, field)
        if self.feature_fit is None or self._feature_slot(field).get("weights") is None:
            return np.full(len(pair_query), fallback)
        x, known = self._feature_matrix(query_ids, doc_ids, pair_query, pair_doc, self._features_for(log))
        return np.where(known, self._feature_means(x, field), fallback)

    def _unseen_values(self, log: Any, unseen: np.ndarray, field: str, bound: str, level: float) -> np.ndarray:
        """A per-pair parameter of the pairs of ``log`` the fit never saw: with features, their
        prior Beta(kappa m, kappa (1 - m)) around the features' mean ``m`` (its mean, or its
        lower credible bound at ``level``); without, the prior's."""
        from scipy.stats import beta

        count = int(unseen.sum())
        slot = self._feature_slot(field) if field in self.featured_fields else {}
        if slot.get("weights") is None:
            if bound == "lower":
                return np.full(count, float(beta.ppf((1 - level) / 2, *self._prior_beta(field))))
            return np.full(count, _fallback(self, field))
        x, known = self._feature_matrix(log.query_ids, log.doc_ids, log.pair_query[unseen], log.pair_doc[unseen],
                                        self._features_for(log))
        means = self._feature_means(x, field)
        if bound == "mean":
            return np.where(known, means, _fallback(self, field))
        kappa = float(slot["kappa"])
        lower = beta.ppf((1 - level) / 2, kappa * means, kappa * (1 - means))
        return np.where(known, lower, float(beta.ppf((1 - level) / 2, *self._prior_beta(field))))

    def _prior_beta(self, field: str) -> tuple[float, float]:
        """The Beta (a, b) of a per-pair parameter's prior: fitted, or the fixed pseudo-counts."""
        return self.hyper.get(field) or pseudo_counts(self.fixed_prior)

    def intervals(self, level: float = 0.95) -> Any:
        """Equal-tailed credible intervals of every per-pair parameter: a DataFrame with
        ``query``, ``doc`` and, per parameter, its estimate and ``_low`` / ``_high`` bounds.

        The posterior of a pair's parameter is Beta(s + a, n - s + b): its prior (fitted or
        fixed) updated with the last M-step's counts (EM's expected successes ``s`` out of
        ``n``). With EM's counts standing in for observed ones it is the usual approximate
        posterior of an EM fit; it narrows as a pair gets impressions and, for a pair seen a
        few times, stays as wide as the prior.

        >>> log = ClickLog.from_arrays(["q"] * 4, [["a", "b"]] * 4, [[1, 0], [1, 0], [0, 0], [1, 0]])
        >>> table = DocumentCTR(prior=(1, 2)).fit(log).intervals(0.9)
        >>> table[["doc", "attractiveness"]].values.tolist()     # (3 + 1) / (4 + 2), (0 + 1) / (4 + 2)
        [['a', 0.6666666666666666], ['b', 0.16666666666666666]]
        >>> bool((table["attractiveness_low"] < table["attractiveness"]).all())
        True
        """
        from scipy.stats import beta

        from rankwise.errors import OptionError

        if not self.per_pair:
            raise OptionError(f"{self.name}: one click rate for every pair, so every document ties and there is no "
                              "per-pair interval (rank by the mean: --bound mean)")
        if not self.posterior:
            raise OptionError(f"{self.name}: no posterior counts (fit the model first; a model loaded from a file "
                              "saved before intervals existed has none)")
        frame = self.parameters()["pairs"]
        tail = (1 - level) / 2
        for column, attribute in self.pair_fields.items():
            a, b = self.posterior[attribute]
            frame[f"{column}_low"] = beta.ppf(tail, a, b)
            frame[f"{column}_high"] = beta.isf(tail, a, b)
        return frame

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, log: Any, iterations: int = ITERATION_CAP, tolerance: float = 1e-6, chunk_size: int = CHUNK,
            progress: Callable[[dict[str, float]], None] | None = None, workers: int | None = None,
            validation: Any = None, patience: int = 3, parameter_tolerance: float | None = None,
            acceleration: str = DEFAULT_ACCELERATION) -> Any:
        """Fit to ``log`` (a ``ClickLog`` or a stored log from ``clicks.open_log``).

        EM stops when it has converged: the log-likelihood per session changes by less than
        ``tolerance`` and no probability is further than ``parameter_tolerance`` from EM's limit
        (the distance the last two passes' shrinking moves give);
        ``iterations`` is a guard, and a fit it stops says so in ``warnings``.
        ``acceleration`` (``rankwise.clicks.acceleration``): ``squarem`` jumps along pairs of
        EM passes to the same limit in fewer passes; ``none`` is plain EM.

        ``workers`` chunks are processed at once in threads (default: one per CPU core, at
        most 4); their statistics are added in chunk order, so the result does not depend on
        ``workers``. Memory is about ``workers`` chunks' worth of temporaries.

        ``history`` gets one entry per pass: iteration, the mean log-likelihood per session
        of the parameters that pass started from, and the seconds so far.

        ``validation`` (a log held out from ``log``): after every EM iteration the model
        scores it (``validation_log_likelihood`` in ``history``); the fit stops when that has
        not improved for ``patience`` iterations and keeps the parameters of the best one
        (``best_iteration``).
        """
        pooled = _PooledCells(self.compressible, int(log.sessions) * int(log.ranks))

        def work(chunk: Any) -> Any:
            cells = pooled.add(self._compress(chunk)) if pooled.active else None
            statistics, ll = self._statistics(chunk) if cells is None else self._compressed_statistics(cells)
            return {**statistics, **self.structure_statistics(chunk)}, ll

        def local_totals() -> SufficientStatistics:
            if pooled.whole is not None:   # after the first pass: the whole log's distinct cells, no log read
                return add_statistics(self._compressed_statistics(pooled.whole))
            totals = add_statistics(*_over_chunks(work, log.chunks(chunk_size), workers))
            pooled.finish()
            return totals

        return self.fit_passes(log, local_totals, iterations, tolerance, progress, validation, patience, chunk_size,
                               parameter_tolerance, acceleration)

    def held_out_log_likelihood(self, log: Any, chunk_size: int = CHUNK) -> float:
        """Mean log-likelihood per session of ``log`` (a ``ClickLog`` or a stored log), chunk
        by chunk; pairs the model never saw take its prior means."""
        total = sum(_log_likelihood_sum(self.conditional_click_probs(chunk), chunk) for chunk in log.chunks(chunk_size))
        return total / max(log.sessions, 1)

    def parameter_vector(self) -> np.ndarray:
        """Every fitted probability (per pair and per rank) as one vector: what EM's parameter
        change is measured on."""
        names = [*self.pair_fields.values(), *self.fields]
        parts = [np.ravel(np.asarray(getattr(self, n), dtype=np.float64)) for n in names if hasattr(self, n)]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _snapshot(self) -> dict[str, Any]:
        import copy

        names = [*self.pair_fields.values(), *self.fields, "hyper", "posterior", "feature_fit"]
        return {name: copy.deepcopy(getattr(self, name)) for name in names if hasattr(self, name)}

    def fit_passes(self, log: Any, pass_totals: Callable[[], SufficientStatistics],
                   iterations: int = ITERATION_CAP, tolerance: float = 1e-6,
                   progress: Callable[[dict[str, float]], None] | None = None, validation: Any = None,
                   patience: int = 3, chunk_size: int = CHUNK,
                   parameter_tolerance: float | None = None, acceleration: str = DEFAULT_ACCELERATION) -> Any:
        """The fit's loop, with each pass's totals from ``pass_totals()``: the model's
        statistics over the whole log at the current parameters, and the log-likelihood sum.
        ``fit`` adds them up chunk by chunk here; ``rankwise.scale.states.fit_click_model``
        on a Dask cluster."""
        if patience < 1:
            raise ValueError(f"patience must be at least 1, got {patience}")
        if not log.sessions:
            from rankwise.errors import InputError

            raise InputError("the click log has no sessions: nothing to fit", source=str(getattr(log, "source", "")
                                                                                         or "<log>"))
        self._fit_started = time.perf_counter()
        self._before_fit(log, {"iterations": iterations, "tolerance": tolerance, "chunk_size": chunk_size,
                               "parameter_tolerance": parameter_tolerance, "acceleration": acceleration})
        accelerator = accelerator_for(self, acceleration) if self.accelerated else PlainEM(self)
        self._remember_pairs(log)
        self.hyper, self.posterior = {}, {}
        self.feature_fit, self._design = None, None
        self._apply_structure()
        self._start(log)
        self.history = []
        self.best_iteration: int | None = None
        from rankwise.progress import step

        with step(f"fitting {self.name}", total=iterations if self.iterative else None) as advance:
            stopping = self.parameter_tolerance if parameter_tolerance is None else parameter_tolerance
            self._passes(log, pass_totals, iterations, (tolerance, stopping), progress, validation,
                         patience, chunk_size, advance, accelerator)
        return self

    def _before_fit(self, log: Any, options: dict[str, Any]) -> None:
        """What a model settles on ``log`` before its passes, fitting with ``options`` (DBN and
        SDBN: how far satisfaction is pooled, ``rankwise.clicks.pooling``)."""

    def _passes(self, log: Any, pass_totals: Callable[[], SufficientStatistics], iterations: int,
                tolerances: tuple[float, float], progress: Callable[[dict[str, float]], None] | None,
                validation: Any, patience: int, chunk_size: int, advance: Callable[..., None],
                accelerator: Any) -> None:
        """The passes of ``fit_passes`` (``advance`` reports each one; ``tolerances``: of the
        log-likelihood per session and of the parameters; ``accelerator`` sees every pass)."""
        tolerance, parameter_tolerance = tolerances
        moved = remaining = math.inf
        before: np.ndarray | None = None   # the parameters the pass starts from (none before the first)
        started = self._fit_started   # what the fit chose before its passes counts
        previous = -math.inf
        constants: dict[str, np.ndarray] = {}
        best: tuple[float, int, dict[str, Any]] | None = None
        self.warnings = []
        converged = not self.iterative
        gain = math.inf
        for iteration in range(1, (iterations if self.iterative else 1) + 1):
            self._first_pass = iteration == 1   # statistics that do not change are added up once
            totals, ll = pass_totals()
            if iteration == 1:
                self._structure_from(totals)
                constants = {key: totals[key] for key in self.constant_statistics if key in totals}
            totals = {**constants, **totals}
            self._maximise(totals)
            if not self.iterative:
                break
            ll /= max(log.sessions, 1)
            after = self.parameter_vector()
            moved, last_move = _largest_change(before, after), moved
            remaining = _distance_to_limit(moved, last_move) if math.isnan(accelerator.rate) else \
                _distance_at_rate(moved, accelerator.rate)
            step = accelerator.after_pass(before, after, ll) if before is not None else "plain"
            before = self.parameter_vector() if step != "plain" else after
            entry = {"iteration": iteration, "log_likelihood": ll, "parameter_change": moved,
                     "parameter_distance": math.inf if step == "undone" else remaining,
                     "seconds": time.perf_counter() - started}
            stale = False
            if validation is not None:
                best = self._score_validation(validation, chunk_size, entry, best)
                stale = iteration - best[1] >= patience
            self.history.append(entry)
            advance(1, f"fitting {self.name}: log-likelihood {ll:.6f}")
            if progress is not None:
                progress(entry)
            # a fitted prior moves with the parameters, so the log-likelihood need not rise at
            # every pass: those fits stop when it changes by less than the tolerance
            gain = abs(ll - previous) if self.prior == EMPIRICAL else ll - previous
            near = gain < tolerance and remaining < parameter_tolerance and step != "undone"
            if (near and accelerator.confirms_limit()) or stale:
                converged = True
                break
            previous = ll
        accelerator.settle()
        if not converged:   # the cap is a guard: a fit it stops may not be the maximum yet
            self.warnings.append(_cap_warning(self.name, iterations, (gain, tolerance),
                                              (remaining, parameter_tolerance)))
        if best is not None:
            for name, value in best[2].items():
                setattr(self, name, value)
            self.best_iteration = best[1]

    def _score_validation(self, validation: Any, chunk_size: int, entry: dict[str, float],
                          best: tuple[float, int, dict[str, Any]] | None) -> tuple[float, int, dict[str, Any]]:
        """The validation log's log-likelihood at this pass (into ``entry``), and the best pass
        so far: (its log-likelihood, its iteration, the model then)."""
        held = self.held_out_log_likelihood(validation, chunk_size)
        entry["validation_log_likelihood"] = held
        return (held, int(entry["iteration"]), self._snapshot()) if best is None or held > best[0] else best

    compressible = False
    """The E-step reads a cell only through its (pair, examination cell, click): see ``CompressedCells``."""

    def _start(self, log: Any) -> None:
        """Starting parameters (EM models)."""

    def _compress(self, chunk: ClickLog) -> CompressedCells:
        """The chunk's ``CompressedCells``."""
        cells = self._examination_cells(chunk)
        shown = chunk.mask
        width = int(cells.max()) + 1 if cells.size else 1
        key = (chunk.pairs[shown].astype(np.int64) * width + cells[shown]) * 2 + (chunk.clicks[shown] == 1)
        unique, counts = np.unique(key, return_counts=True)
        return CompressedCells(unique // 2 // width, (unique // 2) % width, (unique % 2).astype(bool),
                               counts.astype(np.float64), int(key.size))

    def _examination_cells(self, chunk: ClickLog) -> np.ndarray:
        raise NotImplementedError

    def _compressed_statistics(self, cells: CompressedCells) -> tuple[dict[str, np.ndarray], float]:
        raise NotImplementedError

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        raise NotImplementedError

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        raise NotImplementedError

    # -- predictions ---------------------------------------------------------------------------
    def click_probs(self, log: ClickLog) -> np.ndarray:  # unconditional P(C_r = 1)
        raise NotImplementedError

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:  # P(C_r = 1 | C_<r)
        return self.click_probs(log)

    saved_ranks: int | None = None
    """The ranks a loaded model's per-rank parameters cover (``rankwise.clicks.persist``)."""

    def check_depth(self, log: Any) -> None:
        """An ``InputError`` when ``log`` shows more ranks than a loaded model's per-rank
        parameters cover (it would be scored with parameters that do not exist)."""
        ranks = int(getattr(log, "ranks", 0) or 0)
        if self.saved_ranks is not None and ranks > self.saved_ranks:
            raise InputError(f"the log shows {ranks} ranks and the {self.name} model's per-rank parameters cover "
                             f"{self.saved_ranks}: fit it on a log as deep, or keep the top {self.saved_ranks}",
                             field="ranks")

    def log_probs(self, log: ClickLog) -> np.ndarray:
        """Natural-log unconditional click probabilities (sessions x ranks), for ``Perplexity``."""
        self.check_depth(log)
        return np.log(np.clip(self.click_probs(log), TINY, 1.0))

    def conditional_log_probs(self, log: ClickLog) -> np.ndarray:
        """Natural-log conditional click probabilities, for ``LogLikelihood`` and
        ``ConditionalPerplexity``."""
        self.check_depth(log)
        return np.log(np.clip(self.conditional_click_probs(log), TINY, 1.0))

    def log_likelihood(self, log: ClickLog) -> float:
        """Mean log-likelihood per session of the observed clicks (conditional)."""
        self.check_depth(log)
        return _log_likelihood_sum(self.conditional_click_probs(log), log) / max(log.sessions, 1)

    def attractiveness(self, log: ClickLog) -> np.ndarray:
        """alpha per cell (sessions x ranks); unseen pairs get the prior mean."""
        return _per_cell(self, log, self.alpha, "alpha")

    def relevance_scores(self, values: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """A relevance score per fitted (query, document) pair from its parameters
        (``values``: per-pair arrays by attribute, the fitted ones by default): attractiveness
        by default, attractiveness x satisfaction for DBN and SDBN."""
        return (values or {"alpha": self.alpha})["alpha"]

    def unseen_relevance(self, bound: str = "mean", level: float = 0.95) -> float:
        """The relevance score of a pair the model never saw: every pair parameter at its
        prior mean (``bound="lower"``: at its prior's lower credible bound)."""
        return float(self.relevance_scores(self._unseen_parameters(bound, level))[0])

    def _unseen_parameters(self, bound: str, level: float) -> dict[str, np.ndarray]:
        """Each per-pair parameter of a pair never seen, as a one-value array: its prior mean or
        its prior's lower credible bound."""
        if bound == "lower":
            from scipy.stats import beta

            return {f: np.array([beta.ppf((1 - level) / 2, *self._prior_beta(f))]) for f in self.pair_fields.values()}
        return {f: np.array([_fallback(self, f)]) for f in self.pair_fields.values()}

    def relevance(self, name: str | None = None, log: Any = None, bound: str = "mean", level: float = 0.95,
                  by: str = "relevance") -> Any:
        """Relevance scores as a rankwise ``Run`` (one ranking per query): of the fitted
        pairs, or of the (query, document) pairs of ``log`` (pairs the model never saw get the
        score of their prior: its mean, or with a prior structure, its mean for where ``log``
        placed them).

        ``bound="lower"`` scores each pair by its parameters' lower credible bounds at
        ``level`` (``intervals``): a pair with two clicks in three impressions no longer
        outranks one with 300 in 500, which a ranking against editorial labels rewards.
        ``by`` names the ranking rule (``rankwise.clicks.structure.RANKINGS``): ``relevance``
        (the model's authors' definition), ``attractiveness`` or ``satisfaction``.
        """
        import pyarrow as pa

        from rankwise.data.containers import Run

        if bound not in ("mean", "lower"):
            raise ValueError(f"bound must be mean or lower, got {bound!r}")
        rule = ranking_rule(by)
        if bound == "lower":
            lows = self.intervals(level)
            values = {attribute: lows[f"{column}_low"].to_numpy() for column, attribute in self.pair_fields.items()}
        else:
            values = {attribute: getattr(self, attribute) for attribute in self.pair_fields.values()}
        scores = rule(self, values)
        source = log if log is not None else self
        if log is not None:
            matched = _match_pairs(self, log)
            scores = np.append(scores, rule(self, self._unseen_parameters(bound, level)))[matched]
            unseen = matched == len(self.pair_query)
            if unseen.any() and self.feature_fit is not None:
                values = {f: self._unseen_values(log, unseen, f, bound, level) for f in self.pair_fields.values()}
                scores[unseen] = rule(self, values)
        queries = np.asarray(source.query_ids, dtype=object)[source.pair_query]
        docs = np.asarray(source.doc_ids, dtype=object)[source.pair_doc]
        return Run(pa.array(queries, pa.string()), pa.array(docs, pa.string()), scores, name=name or self.name,
                   source=f"<{self.name}>")

    def parameters(self) -> dict[str, Any]:
        """Parameters as DataFrames: per (query, document) pair, and per rank where the model
        has them."""
        import pandas as pd

        out = {"pairs": pd.DataFrame({"query": np.asarray(self.query_ids, dtype=object)[self.pair_query],
                                      "doc": np.asarray(self.doc_ids, dtype=object)[self.pair_doc],
                                      **self._pair_parameters()})}
        out.update(self._rank_parameters())
        return out

    def _pair_parameters(self) -> dict[str, np.ndarray]:
        return {column: getattr(self, attribute) for column, attribute in self.pair_fields.items()}

    def _rank_parameters(self) -> dict[str, Any]:
        return {}

    def _remember_pairs(self, log: Any) -> None:
        self.query_ids, self.doc_ids = log.query_ids, log.doc_ids
        self.pair_query, self.pair_doc = log.pair_query, log.pair_doc


def _evidence(totals: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """Attractiveness's evidence for the empirical prior: clicks over expected examinations."""
    return (totals["clicks"], totals["examined"]) if "examined" in totals else None


def _pair_index(model: ClickModel, log: ClickLog) -> np.ndarray:
    """Each cell's index into the model's pairs (len(pairs) for an unseen pair or padding).
    Kept on the log for the model's vocabulary: a log's pairs and mask do not change (the
    simulator asks again at every rank)."""
    cached = log.cache.get("model_index")
    if cached is not None and cached[0] is model.pair_query:
        return cached[1]
    fitted = len(model.pair_query)
    if log.query_ids is model.query_ids and log.doc_ids is model.doc_ids and log.pair_query is model.pair_query:
        index = np.where(log.mask, log.pairs, fitted)
    else:
        local = np.append(_match_pairs(model, log), fitted)
        index = np.where(log.mask, local[log.pairs], fitted)
    log.cache["model_index"] = (model.pair_query, index)
    return index


def _match_pairs(model: ClickModel, log: Any) -> np.ndarray:
    """Each of the log's pairs' index into the model's pairs (len(pairs) when unseen), matched
    by query and document id with vectorised lookups."""
    import pandas as pd

    fitted = len(model.pair_query)
    if fitted == 0:
        return np.zeros(len(log.pair_query), dtype=np.int64)
    width = max(len(model.doc_ids), 1)
    query = pd.Index(model.query_ids).get_indexer(log.query_ids)
    doc = pd.Index(model.doc_ids).get_indexer(log.doc_ids)
    q, d = query[log.pair_query], doc[log.pair_doc]
    key = np.where((q >= 0) & (d >= 0), q.astype(np.int64) * width + d, -1)
    keys = model.pair_query.astype(np.int64) * width + model.pair_doc   # ascending, as ClickLog numbers pairs
    at = np.minimum(np.searchsorted(keys, key), fitted - 1)
    return np.where((key >= 0) & (keys[at] == key), at, fitted)


def _fallback(model: ClickModel, field: str = "alpha") -> float:
    """The prior mean of a per-pair parameter: its value for a pair the model never saw."""
    hyper = getattr(model, "hyper", {}).get(field)
    if hyper is not None:
        return hyper[0] / (hyper[0] + hyper[1])
    prior = model.fixed_prior
    return prior[0] / prior[1] if prior[1] else 0.5


def _per_cell(model: ClickModel, log: ClickLog, values: np.ndarray, field: str = "alpha") -> np.ndarray:
    """A per-pair parameter at each cell; unseen pairs and padding get its prior mean (a
    feature model's attractiveness: its features' prediction)."""
    index = _pair_index(model, log)
    out = np.append(values, _fallback(model, field))[index]
    if field in model.featured_fields and getattr(model, "feature_fit", None) is not None:
        unseen = (index == len(values)) & log.mask
        if unseen.any():
            out[unseen] = _unseen_by_log_pair(model, log, field)[log.pairs[unseen]]
    return out


def _unseen_by_log_pair(model: ClickModel, log: ClickLog, field: str = "alpha") -> np.ndarray:
    """A feature model's per-pair parameter for every pair of ``log`` as if unseen (kept on the
    log for the model's feature fit: the simulator asks at every rank)."""
    key = f"feature_{field}"
    cached = log.cache.get(key)
    if cached is not None and cached[0] is model.feature_fit:
        return cached[1]
    values = model._unseen_alpha(log.query_ids, log.doc_ids, log.pair_query, log.pair_doc, field, log)
    log.cache[key] = (model.feature_fit, values)
    return values


def _at_cells(values: np.ndarray, chunk: ClickLog, fill: float = 0.0) -> np.ndarray:
    """A per-pair parameter at each cell of a chunk of the fitted log (``fill`` on padding)."""
    return np.append(values, fill)[chunk.pairs]


class DocumentCTR(ClickModel):
    """Click probability per (query, document) pair (with the prior)."""

    name = "document-ctr"

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        return {"clicks": _pair_sum(chunk, chunk.clicks), "shown": _pair_sum(chunk, chunk.mask)}, 0.0

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["clicks"], totals["shown"])

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self.attractiveness(log)


class GlobalCTR(DocumentCTR):
    """One click probability for every cell (the pairs' clicks and impressions pooled)."""

    name = "global-ctr"
    fields = {"ctr": ()}
    per_pair = False

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL) -> None:
        super().__init__(prior, "flat")   # one rate for every pair: no per-pair prior to structure

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.ctr = float(totals["clicks"].sum() / max(totals["shown"].sum(), 1))
        self.alpha = np.full(len(totals["shown"]), self.ctr)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return np.where(log.mask, self.ctr, 0.0)

    def _unseen_parameters(self, bound: str, level: float) -> dict[str, np.ndarray]:
        """Every pair, seen or not, scores the one click rate (all tied)."""
        return {"alpha": np.array([float(self.ctr)])}

    def _rank_parameters(self) -> dict[str, Any]:
        return {"ctr": self.ctr}


class RankCTR(DocumentCTR):
    """Click probability per rank (its pairs' relevance is their click rate)."""

    name = "rank-ctr"
    fields = {"ctr": (None,)}

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        statistics, _ = super()._statistics(chunk)
        statistics["rank_clicks"] = weighted(chunk, chunk.clicks * chunk.mask).sum(axis=0)
        statistics["rank_shown"] = weighted(chunk, chunk.mask).sum(axis=0)
        return statistics, 0.0

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        super()._maximise(totals)
        self.ctr = totals["rank_clicks"] / np.maximum(totals["rank_shown"], 1)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        ctr = np.zeros(log.ranks)
        ctr[:min(log.ranks, len(self.ctr))] = self.ctr[:log.ranks]
        return np.where(log.mask, ctr, 0.0)

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.ctr) + 1), "ctr": self.ctr})}


class PBM(ClickModel):
    """Position-based model, fitted by EM.

    E-step for a cell without a click: ``P(A = 1 | C = 0) = alpha (1 - gamma) / (1 - alpha
    gamma)`` and ``P(E = 1 | C = 0) = gamma (1 - alpha) / (1 - alpha gamma)``; a click sets
    both to 1. M-step: each parameter is the mean of its posteriors (with the prior).
    """

    name = "pbm"
    iterative = True
    fields = {"gamma": (None,)}

    def _start(self, log: Any) -> None:
        self.alpha = np.full(log.n_pairs, 0.5)
        self.gamma = np.full(log.ranks, 0.5)

    compressible = True

    def _examination(self, log: ClickLog) -> np.ndarray:
        return np.broadcast_to(self.gamma[:log.ranks], log.clicks.shape)

    def _examination_cells(self, chunk: ClickLog) -> np.ndarray:
        return np.broadcast_to(np.arange(chunk.ranks), chunk.clicks.shape)

    def _examination_of_cells(self, cell: np.ndarray) -> np.ndarray:
        return self.gamma[cell]

    def _compressed_statistics(self, cells: CompressedCells) -> tuple[dict[str, np.ndarray], float]:
        """The E-step of ``_statistics`` on distinct (pair, cell, click) weighted by their counts."""
        a = self.alpha[cells.pair]
        g = self._examination_of_cells(cells.cell)
        clicked, count = cells.clicked, cells.count
        click = a * g
        none = np.maximum(1 - click, TINY)
        ll = float((count * np.log(np.where(clicked, click, none))).sum())
        post_a = np.where(clicked, 1.0, a * (1 - g) / none)
        skip = np.where(clicked, 0.0, (1 - a) / none)
        n = len(self.alpha)
        statistics = {"alpha": np.bincount(cells.pair, weights=count * post_a, minlength=n)}
        if self._first_pass:
            statistics["shown"] = np.bincount(cells.pair, weights=count, minlength=n)
            statistics["clicks"] = np.bincount(cells.pair, weights=count * clicked, minlength=n)
        statistics["examined"] = np.bincount(cells.pair, weights=count * np.where(clicked, 1.0, g * skip),
                                             minlength=n)
        statistics.update(self._compressed_examination(cells, g, skip))
        return statistics, ll

    def _compressed_examination(self, cells: CompressedCells, g: np.ndarray,
                                skip: np.ndarray) -> dict[str, np.ndarray]:
        ranks = len(self.gamma)
        clicks = np.bincount(cells.cell, weights=cells.count * cells.clicked, minlength=ranks)
        skipped = np.bincount(cells.cell, weights=cells.count * skip, minlength=ranks)
        out: dict[str, np.ndarray] = {"gamma": clicks + self.gamma * skipped}
        if self._first_pass:
            out["rank_shown"] = np.bincount(cells.cell, weights=cells.count, minlength=ranks)
        return out

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        a = _at_cells(self.alpha, chunk)
        g = self._examination(chunk)
        clicked = chunk.clicks == 1
        click = a * g
        none = np.maximum(1 - click, TINY)
        observed = np.where(clicked, click, none)
        ll = float(np.log(observed, out=observed).sum() if _all_shown(chunk) else np.log(observed)[chunk.mask].sum())
        post_a = np.where(clicked, 1.0, a * (1 - g) / none)
        # P(E = 1 | no click) = gamma x skip, skip = (1 - alpha) / (1 - alpha gamma); 0 on clicks
        skip = np.where(clicked, 0.0, (1 - a) / none)
        statistics = {"alpha": _pair_sum(chunk, post_a)}
        if self._first_pass:
            statistics["shown"] = _pair_sum(chunk, chunk.mask)
            statistics["clicks"] = _pair_sum(chunk, clicked)
        # P(E = 1 | C): 1 on a click, gamma x skip otherwise (the evidence for intervals and the prior)
        statistics["examined"] = _pair_sum(chunk, np.where(clicked, 1.0, g * skip))
        statistics.update(self._examination_statistics(chunk, clicked, g, skip))
        return statistics, ll

    def _examination_statistics(self, chunk: ClickLog, clicked: np.ndarray, g: np.ndarray,
                                skip: np.ndarray) -> dict[str, np.ndarray]:
        clicked, skip = weighted(chunk, clicked), weighted(chunk, skip)
        shown_clicks = clicked.sum(axis=0) if _all_shown(chunk) else np.where(chunk.mask, clicked, 0).sum(axis=0)
        skipped = skip.sum(axis=0) if _all_shown(chunk) else np.where(chunk.mask, skip, 0.0).sum(axis=0)
        out = {"gamma": shown_clicks + self.gamma[:chunk.ranks] * skipped}
        if self._first_pass:
            out["rank_shown"] = weighted(chunk, chunk.mask).sum(axis=0)
        return out

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["alpha"], totals["shown"], _evidence(totals))
        self.gamma = _ratio(totals["gamma"], totals["rank_shown"], self.fixed_prior)
        if self.prior == EMPIRICAL:   # the top rank is always examined: fixes alpha's scale for the prior
            self.gamma[0] = 1.0

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self.attractiveness(log) * np.broadcast_to(self.gamma[:log.ranks], log.clicks.shape)

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.gamma) + 1), "examination": self.gamma})}


def _browsing_cell(log: ClickLog) -> np.ndarray:
    """Each cell's index ``rank * R + previous click rank`` into the flattened examination
    matrix (kept on a chunk for the length of one E-step, whose clicks do not change)."""
    cached = log.cache.get("browsing_cell")
    return cached if cached is not None else np.arange(log.ranks) * log.ranks + previous_click(log.clicks)


class UBM(PBM):
    """User browsing model, fitted by EM: PBM's E-step with examination ``gamma[r, r']``
    indexed by the rank and the rank of the previous click. The unconditional ``P(C_r)``
    marginalises over the previous click by a forward pass over ranks."""

    name = "ubm"
    fields = {"gamma_matrix": (None, None)}

    def _start(self, log: Any) -> None:
        self.alpha = np.full(log.n_pairs, 0.5)
        self.gamma_matrix = np.full((log.ranks, log.ranks), 0.5)   # [rank, previous click rank]

    def _examination(self, log: ClickLog) -> np.ndarray:
        return self.gamma_matrix.ravel()[_browsing_cell(log)]

    def _examination_cells(self, chunk: ClickLog) -> np.ndarray:
        return _browsing_cell(chunk)

    def _examination_of_cells(self, cell: np.ndarray) -> np.ndarray:
        return self.gamma_matrix.ravel()[cell]

    def _compressed_examination(self, cells: CompressedCells, g: np.ndarray,
                                skip: np.ndarray) -> dict[str, np.ndarray]:
        size = self.gamma_matrix.size
        post_e = cells.clicked + g * skip
        out = {"gamma": np.bincount(cells.cell, weights=cells.count * post_e, minlength=size)}
        if self._first_pass:
            out["cell_shown"] = np.bincount(cells.cell, weights=cells.count, minlength=size)
        return out

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        chunk.cache["browsing_cell"] = _browsing_cell(chunk)
        try:
            return super()._statistics(chunk)
        finally:
            chunk.cache["browsing_cell"] = None

    def _examination_statistics(self, chunk: ClickLog, clicked: np.ndarray, g: np.ndarray,
                                skip: np.ndarray) -> dict[str, np.ndarray]:
        post_e = weighted(chunk, clicked + g * skip)
        cell = _browsing_cell(chunk)
        size = chunk.ranks * chunk.ranks
        if _all_shown(chunk):
            out = {"gamma": np.bincount(cell.ravel(), weights=post_e.ravel(), minlength=size)}
        else:
            out = {"gamma": np.bincount(cell[chunk.mask], weights=post_e[chunk.mask], minlength=size)}
        if self._first_pass:
            shown = weighted(chunk, chunk.mask)
            out["cell_shown"] = np.bincount(cell[chunk.mask], weights=None if shown is chunk.mask
                                            else shown[chunk.mask], minlength=size)
        return out

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["alpha"], totals["shown"], _evidence(totals))
        ranks = self.gamma_matrix.shape[0]
        self.gamma_matrix = _ratio(totals["gamma"], totals["cell_shown"], self.fixed_prior).reshape(ranks, ranks)
        if self.prior == EMPIRICAL:
            self.gamma_matrix[0, 0] = 1.0

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:
        return self.attractiveness(log) * self._examination(log)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        alpha = self.attractiveness(log)
        sessions, ranks = log.clicks.shape
        last = np.zeros((sessions, ranks + 1))   # P(previous click at rank j), j = 0 (none) .. R
        last[:, 0] = 1.0
        out = np.zeros((sessions, ranks))
        for r in range(ranks):
            click = alpha[:, r, None] * self.gamma_matrix[r, None, :ranks] * last[:, :ranks]
            out[:, r] = click.sum(axis=1)
            last[:, :ranks] -= click
            last[:, r + 1] = out[:, r]
        return out

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        r, p = np.meshgrid(np.arange(self.gamma_matrix.shape[0]), np.arange(self.gamma_matrix.shape[1]),
                           indexing="ij")
        keep = p <= r
        return {"ranks": pd.DataFrame({"rank": r[keep] + 1, "previous_click": p[keep],
                                       "examination": self.gamma_matrix[keep]})}


class CascadeModel(ClickModel):
    """Cascade model, fitted by counting the ranks down to the first click.

    >>> log = ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["a", "b"]], [[0, 1], [1, 0]])
    >>> m = CascadeModel(prior=(1, 2)).fit(log)
    >>> m.parameters()["pairs"]["attractiveness"].round(4).tolist()   # a: (1 + 1) / (2 + 2); b: (1 + 1) / (1 + 2)
    [0.5, 0.6667]
    """

    name = "cascade"

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL, floor: float = FLOOR,
                 prior_structure: str = DEFAULT_STRUCTURE) -> None:
        super().__init__(prior, prior_structure)
        self.floor = floor

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        first = _first_click(chunk.clicks)
        ranks = np.arange(1, chunk.ranks + 1)
        examined = chunk.mask & (ranks[None, :] <= np.where(first > 0, first, chunk.ranks)[:, None])
        clicked = examined & (ranks[None, :] == first[:, None])
        return {"clicks": _pair_sum(chunk, clicked), "examined": _pair_sum(chunk, examined)}, 0.0

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["clicks"], totals["examined"])

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:
        before = previous_click(log.clicks) == 0
        return np.where(before, self.attractiveness(log), self.floor)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        alpha = self.attractiveness(log)
        reach = np.cumprod(np.concatenate([np.ones((log.sessions, 1)), 1 - alpha[:, :-1]], axis=1), axis=1)
        return alpha * reach


def _first_click(clicks: np.ndarray) -> np.ndarray:
    has = clicks.any(axis=1)
    return np.where(has, clicks.argmax(axis=1) + 1, 0)
