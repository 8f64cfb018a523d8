"""How far the pairs' satisfaction is pooled in DBN and SDBN (``satisfaction_pooling``), and
the choice between the two by held-out likelihood.

A pair's satisfaction is learnt from its clicks that were or were not followed by another
one. In a log where few sessions click twice that evidence is thin, and the differences
between pairs' satisfaction may be noise that still reorders documents ranked by relevance
(attractiveness x satisfaction). In Gelman and Hill's terms (2007, ch. 12):

- ``partial``: each pair its own satisfaction, shrunk to the prior the log supports (the
  empirical Beta, or the fixed pseudo-counts): Chapelle and Zhang's model;
- ``complete``: one satisfaction for every pair, the log's rate (with the per-rank
  parameters' pseudo-counts): relevance then ranks as attractiveness does;
- ``held-out`` (the default): whichever of the two predicts held-out sessions better. The
  first ``SELECTION_SESSIONS`` (50,000) sessions of the log are split, seeded, into a fitting part and a
  held-out tenth; both poolings are fitted to the first and score each held-out session's
  log-likelihood; ``partial`` is kept only when its mean gain per session exceeds one standard
  error of that gain (the one-standard-error rule: the simpler model unless the richer one is
  better beyond noise; Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
  7.10). With fewer than ``MINIMUM_HELD_OUT`` held-out sessions there is no evidence to
  choose by, and the model is the authors' (``partial``). No editorial label is read.

The choice, its gain and standard error are in ``model.selection``; the fit's ``history``
counts its seconds.

>>> POOLINGS
('held-out', 'partial', 'complete')
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

POOLINGS = ("held-out", "partial", "complete")
"""The values of ``satisfaction_pooling``; the first is the default."""
SELECTION_SESSIONS = 50_000
"""The choice reads at most this many sessions (the first of the log): two fits on them, side
by side in two threads."""
HELD_OUT_SHARE = 0.1
"""The share of those sessions held out to score the two poolings."""
MINIMUM_HELD_OUT = 1_000
"""Below this many held-out sessions the choice keeps ``partial`` (the authors' model)."""
SELECTION_SEED = 0
SHARED_CONCENTRATION = 1e6
"""The prior concentration that stands for "every pair at the shared rate" (pairs never seen
take it; its intervals are the rate's)."""


def check_pooling(value: str) -> str:
    """``value`` if it names a pooling.

    >>> check_pooling("complete")
    'complete'
    """
    if value not in POOLINGS:
        raise ValueError(f"satisfaction_pooling must be one of {', '.join(POOLINGS)}, got {value!r}")
    return value


def shared_rate(successes: np.ndarray, trials: np.ndarray, prior: tuple[float, float]) -> float:
    """One rate for every pair: ``(sum s + clicks) / (sum n + impressions)`` with the fixed
    pseudo-counts ``prior`` (those of the per-rank parameters).

    >>> shared_rate(np.array([1.0, 2.0]), np.array([4.0, 4.0]), (1.0, 2.0))   # (3 + 1) / (8 + 2)
    0.4
    """
    return float((float(np.sum(successes)) + prior[0]) / (float(np.sum(trials)) + prior[1]))


def session_log_likelihoods(model: Any, log: Any) -> np.ndarray:
    """Each session's log-likelihood of its observed clicks under ``model`` (conditional on
    the clicks above each rank, as ``held_out_log_likelihood`` sums them).

    >>> from rankwise.clicks.models import DocumentCTR
    >>> from rankwise.clicks.log import ClickLog
    >>> log = ClickLog.from_arrays(["q", "q"], [["a"], ["a"]], [[1], [0]])
    >>> session_log_likelihoods(DocumentCTR(prior=(1, 2)).fit(log), log).round(4).tolist()   # ln 1/2 twice
    [-0.6931, -0.6931]
    """
    from rankwise.clicks.models import TINY

    p = model.conditional_click_probs(log)
    observed = np.clip(np.where(log.clicks == 1, p, 1 - p), TINY, 1.0)
    return np.where(log.mask, np.log(observed), 0.0).sum(axis=1)


def _first_sessions(log: Any, size: int) -> Any:
    """The first ``size`` sessions of a log in memory or stored (read as a range, so a stored
    log's cache of whole passes is left to the fit)."""
    from rankwise.clicks.log import ClickLog

    if isinstance(log, ClickLog):
        return next(iter(log.chunks(size)))
    return next(iter(log.chunks(size, 0, size)))


def _sessions(log: Any, rows: np.ndarray) -> Any:
    from rankwise.clicks.log import piece_of

    docs = None if getattr(log, "docs", None) is None else log.docs[rows]
    return piece_of(log, log.query[rows], docs, log.pairs[rows], log.clicks[rows], log.mask[rows])


def choose_pooling(model: Any, log: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The pooling of ``model``'s satisfaction that predicts held-out sessions of ``log``
    better (see the module), fitted with the fit's ``options``: ``pooling``, and the
    held-out ``sessions``, mean ``gain`` per session of ``partial`` over ``complete`` and its
    ``standard_error``.

    >>> from rankwise.clicks.chain import SDBN
    >>> from rankwise.clicks.log import ClickLog
    >>> log = ClickLog.from_arrays(["q"] * 20, [["a", "b"]] * 20, [[1, 0]] * 20)
    >>> choice = choose_pooling(SDBN(), log, {})   # about 2 held-out sessions: too few to choose by
    >>> choice["pooling"], choice["sessions"] < MINIMUM_HELD_OUT
    ('partial', True)
    """
    from rankwise.stats.resampling import seeded

    size = min(int(log.sessions), SELECTION_SESSIONS)
    held = seeded(SELECTION_SEED).random(size) < HELD_OUT_SHARE
    count = int(held.sum())
    if count < MINIMUM_HELD_OUT:   # decided before a session is read
        return {"pooling": "partial", "sessions": count, "gain": math.nan, "standard_error": math.nan}
    sample = _first_sessions(log, size)
    fitting, held_out = _sessions(sample, np.flatnonzero(~held)), _sessions(sample, np.flatnonzero(held))
    from concurrent.futures import ThreadPoolExecutor

    def scored(pooling: str) -> np.ndarray:
        candidate = copy.copy(model)
        candidate.satisfaction_pooling = candidate.pooling = pooling
        candidate.warnings = []
        candidate.fit(fitting, workers=1, **options)
        return session_log_likelihoods(candidate, held_out)

    with ThreadPoolExecutor(max_workers=2) as pool:   # NumPy lets the two fits share the cores
        partial, complete = pool.map(scored, ("partial", "complete"))
    gain = partial - complete
    mean, error = float(gain.mean()), float(gain.std(ddof=1) / math.sqrt(count))
    return {"pooling": "partial" if mean > error else "complete", "sessions": count, "gain": mean,
            "standard_error": error}


__all__ = ["POOLINGS", "check_pooling", "choose_pooling", "session_log_likelihoods", "shared_rate"]
