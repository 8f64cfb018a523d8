"""Click-model metrics on [batch, ranks] inputs, per rank and overall (CLAX's definitions), and
click-through-rate calibration per rank.

Inputs are natural-log click probabilities: ``conditional_log_probs`` (P(click at rank r | the
clicks above), for the log-likelihood and conditional perplexity) or ``log_probs`` (unconditional
P(click at r), for perplexity), ``clicks`` (0/1) and ``where`` (padding). The likelihood of one
cell is ``log p`` for a click and ``log(1 - p)`` otherwise, computed in log space with a stable
``log1mexp``; a cell is chosen with ``where``, never multiplied by 0, so log-probability 0 or
-inf gives no NaN (an impossible observation gives -inf and perplexity inf, as it should).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.state import Metric, MetricInputError, mask_of

LN2 = float(np.log(2.0))


def log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate near 0 and for very negative x (Mächler 2012):
    log(-expm1(x)) when x > -ln 2, else log1p(-exp(x)).

    >>> log1mexp(np.array([0.0, -1e-10, -np.log(2), -50.0, -np.inf])).round(6).tolist()
    [-inf, -23.025851, -0.693147, -0.0, -0.0]
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        near = x > -LN2
        out = np.empty_like(x)
        out[near] = np.log(-np.expm1(x[near]))
        out[~near] = np.log1p(-np.exp(x[~near]))
    return out


class _PerRank(Metric):
    """Sums and counts per rank of a per-cell log-likelihood."""

    inputs = ("conditional_log_probs", "clicks")

    def __init__(self, positions: int = 10) -> None:
        super().__init__(positions=positions)

    @property
    def log_input(self) -> str:
        return self.inputs[0]

    def _initial_state(self) -> dict[str, Any]:
        n = self.params["positions"]
        return {"total": np.zeros(n), "count": np.zeros(n, dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        logp = np.atleast_2d(inputs[self.log_input].astype(np.float64))
        clicks = np.atleast_2d(inputs["clicks"])
        name = type(self).__name__
        if logp.shape != clicks.shape:
            raise MetricInputError(f"{name}.update: {self.log_input} {logp.shape} and clicks {clicks.shape} differ")
        if logp.shape[1] > self.params["positions"]:
            raise MetricInputError(f"{name}.update: {logp.shape[1]} ranks, but the metric has positions="
                                   f"{self.params['positions']}")
        if np.isnan(logp).any() or (logp > 0).any():
            raise MetricInputError(f"{name}.update: {self.log_input} must be log-probabilities (<= 0, not NaN)")
        if not np.isin(clicks, (0, 1)).all():
            raise MetricInputError(f"{name}.update: clicks must be 0 or 1")
        mask = mask_of(inputs.get("where"), logp.shape)
        keep = np.ones(logp.shape, dtype=bool) if mask is None else mask
        ll = np.where(clicks.astype(bool), logp, log1mexp(logp))
        ranks = logp.shape[1]
        self.state["total"][:ranks] += np.where(keep, ll, 0.0).sum(axis=0)
        self.state["count"][:ranks] += keep.sum(axis=0)

    def _mean_per_rank(self, observed_only: bool = False) -> np.ndarray:
        count = self.state["count"]
        mean = np.divide(self.state["total"], count, out=np.full(len(count), np.nan), where=count > 0)
        return mean[count > 0] if observed_only else mean


class LogLikelihood(_PerRank):
    """Mean log-likelihood of the observed clicks (natural log); ``compute()`` pools every cell,
    ``compute_per_rank()`` averages per rank.

    >>> m = LogLikelihood(positions=3).update(conditional_log_probs=[[-0.01, -10.0, -0.7]], clicks=[[1, 0, 1]])
    >>> m.compute_per_rank().round(6).tolist(), round(m.compute(), 6)   # log(1 - e^-10) = -4.5e-5
    ([-0.01, -4.5e-05, -0.7], -0.236682)
    """

    def compute(self) -> float:
        n = int(self.state["count"].sum())
        return float(self.state["total"].sum()) / n if n else float("nan")

    def compute_per_rank(self, observed_only: bool = False) -> np.ndarray:
        """The value at each rank (index = rank - 1), NaN at ranks no session reached;
        ``observed_only=True`` leaves those out, as CLAX's ``compute_per_rank`` does (the
        array is then shorter and its index no longer the rank)."""
        return self._mean_per_rank(observed_only)


class ConditionalPerplexity(_PerRank):
    """Perplexity per rank of conditional click probabilities: 2^(-mean log2-likelihood at r);
    ``compute()`` is the mean over ranks (ranks without data left out).

    >>> m = ConditionalPerplexity(positions=3).update(conditional_log_probs=[[-0.01, -10.0, -0.7]],
    ...                                               clicks=[[1, 0, 1]])
    >>> m.compute_per_rank().round(6).tolist(), round(m.compute(), 6)   # e^0.01, e^4.5e-5, e^0.7
    ([1.01005, 1.000045, 2.013753], 1.341283)
    """

    def compute_per_rank(self, observed_only: bool = False) -> np.ndarray:
        """Perplexity at each rank, NaN at ranks without data (``observed_only=True``: left
        out, CLAX's form)."""
        return np.exp2(-self._mean_per_rank(observed_only) / LN2)

    def compute(self) -> float:
        per_rank = self.compute_per_rank()
        per_rank = per_rank[~np.isnan(per_rank)]
        return float(per_rank.mean()) if len(per_rank) else float("nan")


class Perplexity(ConditionalPerplexity):
    """Perplexity per rank of unconditional click probabilities (``log_probs``), as
    ``ConditionalPerplexity``.

    >>> round(Perplexity(positions=1).update(log_probs=[[np.log(0.5)], [np.log(0.5)]], clicks=[[1], [0]]).compute(), 6)
    2.0
    """

    inputs = ("log_probs", "clicks")


class CTRCalibration(Metric):
    """Predicted against observed click-through rate per rank: ``compute_per_rank()`` gives
    (mean predicted P(click), observed CTR, impressions) per rank; ``compute()`` the
    impression-weighted mean absolute gap.

    >>> m = CTRCalibration(positions=2).update(predictions=[[0.5, 0.1], [0.3, 0.1]], clicks=[[1, 0], [0, 1]])
    >>> [a.round(3).tolist() for a in m.compute_per_rank()], round(m.compute(), 6)
    ([[0.4, 0.1], [0.5, 0.5], [2, 2]], 0.25)
    """

    inputs = ("probabilities", "clicks")

    def __init__(self, positions: int = 10) -> None:
        super().__init__(positions=positions)

    def _initial_state(self) -> dict[str, Any]:
        n = self.params["positions"]
        return {"predicted": np.zeros(n), "clicks": np.zeros(n), "count": np.zeros(n, dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        p = np.atleast_2d(inputs["probabilities"].astype(np.float64))
        clicks = np.atleast_2d(inputs["clicks"]).astype(np.float64)
        if p.shape != clicks.shape or p.shape[1] > self.params["positions"]:
            raise MetricInputError(f"CTRCalibration.update: probabilities {p.shape} and clicks {clicks.shape} must "
                                   f"match, with at most {self.params['positions']} ranks")
        mask = mask_of(inputs.get("where"), p.shape)
        keep = np.ones(p.shape, dtype=bool) if mask is None else mask
        r = p.shape[1]
        self.state["predicted"][:r] += np.where(keep, p, 0).sum(axis=0)
        self.state["clicks"][:r] += np.where(keep, clicks, 0).sum(axis=0)
        self.state["count"][:r] += keep.sum(axis=0)

    def compute_per_rank(self, observed_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.state["count"]
        nan = np.full(len(n), np.nan)
        out = (np.divide(self.state["predicted"], n, out=nan.copy(), where=n > 0),
               np.divide(self.state["clicks"], n, out=nan.copy(), where=n > 0), n.copy())
        return tuple(a[n > 0] for a in out) if observed_only else out  # type: ignore[return-value]

    def compute(self) -> float:
        predicted, observed, n = self.compute_per_rank()
        keep = n > 0
        return float((np.abs(predicted - observed)[keep] * n[keep]).sum() / n.sum()) if n.sum() else float("nan")
