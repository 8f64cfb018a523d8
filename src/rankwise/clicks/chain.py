"""Chain click models: the user examines ranks top-down and, after each rank, goes on or
stops. They differ only in the probability of going on after a click and after a skip:

- ``DCM`` (dependent click): after a click at ``r`` ``lambda_r``, after a skip 1. Counted
  down to the last click.
- ``SDBN`` (simplified DBN): after a click on ``d`` ``1 - sigma_qd`` (not satisfied), after a
  skip 1. Counted down to the last click.
- ``DBN`` (dynamic Bayesian network, Chapelle and Zhang 2009): after a click
  ``gamma (1 - sigma_qd)``, after a skip ``gamma``. EM by forward-backward over ranks.
- ``CCM`` (click chain model, Guo et al. 2009): after a click ``tau2 (1 - alpha_qd) +
  tau3 alpha_qd`` (the clicked document's relevance is its attractiveness), after a skip
  ``tau1``. EM by forward-backward over ranks.

EM's E-step runs the forward-backward recursions over the ranks of all sessions of a chunk
at once. With ``f_r = P(C_<r, E_r = 1)``, ``b_r = P(C_>=r | E_r = 1)`` and ``z_r`` = 1 when no
click at or below ``r``: the examination posterior is ``f_r b_r / P(C)`` and every other
posterior is local to a rank, so the statistics are exact (the parameters of the clicked
document decide whether the user goes on after it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog
from rankwise.clicks.models import (
    TINY,
    ClickModel,
    _at_cells,
    _evidence,
    _pair_sum,
    _per_cell,
    _ratio,
    last_click,
    weighted,
)
from rankwise.clicks.pooling import POOLINGS, SHARED_CONCENTRATION, check_pooling, choose_pooling, shared_rate
from rankwise.clicks.shrinkage import EMPIRICAL
from rankwise.clicks.structure import DEFAULT_STRUCTURE


class ChainModel(ClickModel):
    """Predictions shared by the chain models: ``continuation(log)`` gives, per cell, the
    probability of going on after a click there and after a skip there."""

    def continuation(self, log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:
        return self._forward(log, conditional=True)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self._forward(log, conditional=False)

    def _forward(self, log: ClickLog, conditional: bool) -> np.ndarray:
        """P(examining rank r) times alpha, rank by rank: given the observed clicks above
        (``conditional``), or averaged over them."""
        alpha = self.attractiveness(log)
        after_click, after_skip = (np.broadcast_to(v, alpha.shape) for v in self.continuation(log))
        out = np.zeros(alpha.shape)
        examining = np.ones(log.sessions)
        for r in range(log.ranks):
            out[:, r] = examining * alpha[:, r]
            if conditional:
                skipped = examining * (1 - alpha[:, r]) / np.maximum(1 - examining * alpha[:, r], TINY)
                examining = np.where(log.clicks[:, r] == 1, after_click[:, r], after_skip[:, r] * skipped)
            else:
                examining = examining * (alpha[:, r] * after_click[:, r] + (1 - alpha[:, r]) * after_skip[:, r])
        return np.where(log.mask, out, 0.0)


def forward_backward(alpha: np.ndarray, after_click: np.ndarray, after_skip: np.ndarray,
                     clicks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``f`` (sessions x R), ``b`` and ``z`` (sessions x R+1) of a chain model (see the module
    docstring); padding needs ``alpha = 0`` there. ``P(C) = b[:, 0]``.

    >>> f, b, z = forward_backward(np.array([[0.5, 0.5]]), np.array([[0.0, 0.0]]),
    ...                            np.array([[1.0, 1.0]]), np.array([[0, 1]]))
    >>> float(b[0, 0])   # skip a (1 - 0.5), go on (1), click b (0.5)
    0.25
    """
    sessions, ranks = clicks.shape
    # rank-major copies, so each step of the recursions reads and writes contiguous rows
    clicked = np.ascontiguousarray((clicks == 1).T)
    emit = np.where(clicked, alpha.T, 1 - alpha.T)
    go_on = np.where(clicked, np.broadcast_to(after_click, alpha.shape).T, np.broadcast_to(after_skip, alpha.shape).T)
    b = np.ones((ranks + 1, sessions))
    z = np.ones((ranks + 1, sessions))
    for r in range(ranks - 1, -1, -1):
        np.multiply(z[r + 1], ~clicked[r], out=z[r])
        b[r] = emit[r] * (go_on[r] * (b[r + 1] - z[r + 1]) + z[r + 1])
    f = np.ones((ranks, sessions))
    for r in range(1, ranks):
        f[r] = f[r - 1] * emit[r - 1] * go_on[r - 1]
    return f.T, b.T, z.T


def _next_shown(mask: np.ndarray) -> np.ndarray:
    """True where the rank below is shown: a go-on decision there is observable."""
    out = np.zeros_like(mask)
    out[:, :-1] = mask[:, 1:] & mask[:, :-1]
    return out


def _shift_up(values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(values)
    out[:, :-1] = values[:, 1:]
    return out


class _EMChain(ChainModel):
    """Forward-backward E-step shared by DBN and CCM."""

    iterative = True
    alpha: np.ndarray
    """Attractiveness per (query, document) pair, set by the fit."""

    def _posteriors(self, chunk: ClickLog) -> dict[str, Any]:
        alpha = _at_cells(self.alpha, chunk)
        extra = self._chunk_parameters(chunk)
        after_click, after_skip = (np.broadcast_to(v, alpha.shape) for v in self._chunk_continuation(alpha, extra))
        f, b, z = forward_backward(alpha, after_click, after_skip, chunk.clicks)
        total = np.maximum(b[:, :1], TINY)
        examined = np.clip(f * b[:, :-1] / total, 0.0, 1.0)
        clicked = (chunk.clicks == 1) & chunk.mask
        return {"alpha": alpha, "examined": examined, "clicked": clicked, "next_b": b[:, 1:], "next_z": z[:, 1:],
                "after_click": after_click, "decides": _next_shown(chunk.mask),
                "ll": float(np.log(total).sum()), **extra}

    def _chunk_parameters(self, chunk: ClickLog) -> dict[str, np.ndarray]:
        """Per-cell parameters besides attractiveness (chunks run in threads: nothing is
        kept on the model)."""
        return {}

    def _chunk_continuation(self, alpha: np.ndarray, extra: dict[str, np.ndarray]) -> tuple[Any, Any]:
        raise NotImplementedError


class DBN(_EMChain):
    """Dynamic Bayesian network by EM: attractiveness and satisfaction per pair, one
    continuation ``gamma``.

    E-step: an unclicked cell was attractive with probability ``alpha (1 - P(E_r | C))``; a
    click was the satisfying one with ``sigma z_{r+1} / (k b_{r+1} + (1 - k) z_{r+1})``,
    ``k = gamma (1 - sigma)``; ``gamma`` is the expected number of ranks examined after a
    go-on decision over the expected number of decisions (ranks examined and not
    satisfied, with a rank below).
    """

    name = "dbn"
    pair_fields = {"attractiveness": "alpha", "satisfaction": "sigma"}
    fields: Mapping[str, tuple[int | None, ...]] = {"gamma": ()}

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL, prior_structure: str = DEFAULT_STRUCTURE,
                 satisfaction_pooling: str = POOLINGS[0]) -> None:
        super().__init__(prior, prior_structure)
        self.satisfaction_pooling = check_pooling(satisfaction_pooling)
        """``held-out``, ``partial`` or ``complete`` (``rankwise.clicks.pooling``)."""
        self.pooling = "partial" if satisfaction_pooling == "held-out" else satisfaction_pooling
        """The pooling the last fit used."""
        self.selection: dict[str, Any] | None = None
        """The held-out choice of the last fit (``held-out`` only): pooling, sessions, gain, standard error."""

    def _before_fit(self, log: Any, options: dict[str, Any]) -> None:
        if self.satisfaction_pooling == "held-out":
            self.selection = choose_pooling(self, log, options)
            self.pooling = self.selection["pooling"]

    def _satisfaction(self, successes: np.ndarray, trials: np.ndarray,
                      evidence: tuple[np.ndarray, np.ndarray] | None = None, flipped: bool = False) -> np.ndarray:
        """Each pair's satisfaction under the pooling in use: its own (``partial``), or the
        log's one rate (``complete``; pairs never seen take it too)."""
        if self.pooling != "complete":
            return self._pair_estimate("sigma", successes, trials, evidence, flipped)
        a, b = self.fixed_prior[0], self.fixed_prior[1] - self.fixed_prior[0]
        rate = shared_rate(successes, trials, self.fixed_prior)
        self.hyper["sigma"] = (rate * SHARED_CONCENTRATION, (1 - rate) * SHARED_CONCENTRATION)
        satisfied, total, pairs = float(np.sum(successes)), float(np.sum(trials)), len(successes)
        self.posterior["sigma"] = (np.full(pairs, satisfied + a), np.full(pairs, total - satisfied + b))
        return np.full(pairs, rate)

    def _start(self, log: Any) -> None:
        self.alpha = np.full(log.n_pairs, 0.5)
        self.sigma = np.full(log.n_pairs, 0.5)
        self.gamma = 0.5

    def continuation(self, log: ClickLog) -> tuple[np.ndarray, Any]:
        return self.gamma * (1 - _per_cell(self, log, self.sigma, "sigma")), self.gamma

    def _chunk_parameters(self, chunk: ClickLog) -> dict[str, np.ndarray]:
        return {"sigma": _at_cells(self.sigma, chunk)}

    def _chunk_continuation(self, alpha: np.ndarray, extra: dict[str, np.ndarray]) -> tuple[Any, Any]:
        return self.gamma * (1 - extra["sigma"]), self.gamma

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        p = self._posteriors(chunk)
        sigma, clicked = p["sigma"], p["clicked"]
        go_on = p["after_click"] * p["next_b"] + (1 - p["after_click"]) * p["next_z"]
        satisfied = np.where(clicked, sigma * p["next_z"] / np.maximum(go_on, TINY), 0.0)
        attracted = np.where(clicked, 1.0, p["alpha"] * (1 - p["examined"]))
        decides = p["decides"]
        statistics = {"alpha": _pair_sum(chunk, attracted), "sigma": _pair_sum(chunk, satisfied),
                      "gamma": np.array([weighted(chunk, _shift_up(p["examined"]))[decides].sum()]),
                      "decisions": np.array([weighted(chunk, p["examined"] - satisfied)[decides].sum()])}
        if self._first_pass:
            statistics.update(shown=_pair_sum(chunk, chunk.mask), clicks=_pair_sum(chunk, clicked))
        statistics.update(self._evidence_statistics(chunk, p, satisfied))
        return statistics, p["ll"]

    def _evidence_statistics(self, chunk: ClickLog, p: dict[str, Any], satisfied: np.ndarray) -> dict[str, Any]:
        """For the empirical prior: examinations behind each pair's clicks (attractiveness), and
        the clicks followed by another click over the expected clicks whose user went on and
        would click again (satisfaction's complement; ``w = gamma P(a click below | E_r+1)``)."""
        clicked = p["clicked"]
        later = clicked & (p["next_z"] == 0)
        # P(a click below | E_{r+1} = 1) is 1 - b_{r+1} where no click follows (b is then P(none below))
        would_click = self.gamma * np.where(p["decides"], 1 - p["next_b"], 0.0)
        # P(went on | no later click) = w sigma / (1 - (1 - sigma) w) = w x P(satisfied | C)
        unsatisfied = np.where(later, 1.0, np.where(clicked, would_click * satisfied, 0.0))
        out = {"examined": _pair_sum(chunk, p["examined"]), "went_on": _pair_sum(chunk, unsatisfied)}
        if self._first_pass:
            out["clicked_again"] = _pair_sum(chunk, later)
        return out

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["alpha"], totals["shown"], _evidence(totals))
        self.sigma = self._satisfaction(totals["sigma"], totals["clicks"],
                                        (totals["clicked_again"], totals["went_on"]) if "went_on" in totals else None,
                                        flipped=True)
        self.gamma = float(_ratio(totals["gamma"], totals["decisions"], self.fixed_prior)[0])

    def relevance_scores(self, values: dict[str, np.ndarray] | None = None) -> np.ndarray:
        values = values or {"alpha": self.alpha, "sigma": self.sigma}
        return values["alpha"] * values["sigma"]

    def _rank_parameters(self) -> dict[str, Any]:
        return {"continuation": self.gamma}


class CCM(_EMChain):
    """Click chain model by EM: attractiveness per pair (also the clicked document's
    relevance), continuation ``tau1`` after a skip, ``tau2`` after a click on an irrelevant
    and ``tau3`` after a click on a relevant document.

    E-step: the relevance behind a click is a second Bernoulli(alpha) draw, so its posterior
    ``alpha (tau3 b' + (1 - tau3) z') / (k b' + (1 - k) z')`` adds to alpha's counts; the taus
    are expected go-ons over expected decisions of their kind.
    """

    name = "ccm"
    fields = {"tau": (3,)}

    def _start(self, log: Any) -> None:
        self.alpha = np.full(log.n_pairs, 0.5)
        self.tau = np.array([0.5, 0.5, 0.5])

    def continuation(self, log: ClickLog) -> tuple[np.ndarray, Any]:
        alpha = self.attractiveness(log)
        return self.tau[1] * (1 - alpha) + self.tau[2] * alpha, self.tau[0]

    def _chunk_continuation(self, alpha: np.ndarray, extra: dict[str, np.ndarray]) -> tuple[Any, Any]:
        return self.tau[1] * (1 - alpha) + self.tau[2] * alpha, self.tau[0]

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        p = self._posteriors(chunk)
        alpha, clicked, decides = p["alpha"], p["clicked"], p["decides"]
        nb, nz = p["next_b"], p["next_z"]
        tau1, tau2, tau3 = self.tau
        relevant = alpha * (tau3 * nb + (1 - tau3) * nz)
        irrelevant = (1 - alpha) * (tau2 * nb + (1 - tau2) * nz)
        norm = np.maximum(relevant + irrelevant, TINY)
        judged = clicked & decides                     # a click with a go-on decision after it
        skipped = decides & ~clicked & chunk.mask
        relevance = np.where(judged, relevant / norm, 0.0)
        attracted = np.where(clicked, 1.0, alpha * (1 - p["examined"])) + relevance
        on = weighted(chunk, _shift_up(p["examined"]))
        statistics = {"alpha": _pair_sum(chunk, attracted),
                      "tau": np.array([on[skipped].sum(), weighted(chunk, (1 - alpha) * tau2 * nb / norm)[judged].sum(),
                                       weighted(chunk, alpha * tau3 * nb / norm)[judged].sum()]),
                      "decisions": np.array([weighted(chunk, p["examined"])[skipped].sum(),
                                             weighted(chunk, 1 - relevance)[judged].sum(),
                                             weighted(chunk, relevance)[judged].sum()])}
        if self._first_pass:   # impressions, plus one relevance draw per click with a decision after it
            statistics["shown"] = _pair_sum(chunk, chunk.mask.astype(float) + judged)
            statistics["clicks"] = _pair_sum(chunk, clicked)
        statistics["examined"] = _pair_sum(chunk, p["examined"])
        return statistics, p["ll"]

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        self.alpha = self._pair_estimate("alpha", totals["alpha"], totals["shown"], _evidence(totals))
        self.tau = _ratio(totals["tau"], totals["decisions"], self.fixed_prior)

    def _rank_parameters(self) -> dict[str, Any]:
        return {"continuation": {"after_skip": float(self.tau[0]), "after_irrelevant_click": float(self.tau[1]),
                                 "after_relevant_click": float(self.tau[2])}}


def _up_to_last_click(log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
    last = last_click(log.clicks)
    ranks = np.arange(1, log.ranks + 1)
    examined = log.mask & (ranks[None, :] <= np.where(last > 0, last, log.ranks)[:, None])
    return examined, last


FIT_METHODS = ("em", "counting")
"""How DCM and SDBN are fitted: ``em`` maximises the exact likelihood (forward-backward over
ranks); ``counting`` is the fast one-pass approximation (PyClick's), which reads "no later
click" as "the user stopped"."""


def _method(method: str) -> str:
    if method not in FIT_METHODS:
        raise ValueError(f"method must be em or counting, got {method!r}")
    return method


class DCM(_EMChain):
    """Dependent click model: after a click at rank ``r`` the user goes on with ``lambda_r``,
    after a skip always.

    ``method="em"`` (default) fits the exact likelihood: forward-backward gives each cell's
    examination posterior, an unclicked cell was attractive with ``alpha (1 - P(E_r | C))``,
    and a click with ranks below was followed by going on with ``lambda_r b_{r+1} /
    (lambda_r b_{r+1} + (1 - lambda_r) z_{r+1})`` (1 when a later click shows it).
    ``method="counting"``: alpha by counting the ranks down to the last click, ``lambda_r``
    the share of clicks at ``r`` followed by another click (biased low: a user who went on
    and clicked nothing looks like one who stopped).
    """

    name = "dcm"
    pair_fields = {"attractiveness": "alpha"}
    fields = {"lam": (None,)}

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL, method: str = "em",
                 prior_structure: str = DEFAULT_STRUCTURE) -> None:
        super().__init__(prior, prior_structure)
        self.method = _method(method)
        self.iterative = method == "em"

    def _start(self, log: Any) -> None:
        self.alpha = np.full(log.n_pairs, 0.5)
        self.lam = np.full(log.ranks, 0.5)

    def _chunk_continuation(self, alpha: np.ndarray, extra: dict[str, np.ndarray]) -> tuple[Any, Any]:
        return np.broadcast_to(self._lambda(alpha.shape[1]), alpha.shape), 1.0

    def _lambda(self, ranks: int) -> np.ndarray:
        lam = np.ones(ranks)
        lam[:min(ranks, len(self.lam))] = self.lam[:ranks]
        return lam

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        if self.method == "counting":
            examined, last = _up_to_last_click(chunk)
            clicked = (chunk.clicks == 1) & chunk.mask
            ranks = np.arange(1, chunk.ranks + 1)
            not_last = clicked & (ranks[None, :] < last[:, None])
            return {"clicks": _pair_sum(chunk, examined & clicked), "examined": _pair_sum(chunk, examined),
                    "followed": weighted(chunk, not_last).sum(axis=0),
                    "rank_clicks": weighted(chunk, clicked).sum(axis=0)}, 0.0
        p = self._posteriors(chunk)
        clicked, decides = p["clicked"], p["decides"]
        lam = p["after_click"]
        went_on = lam * p["next_b"]
        judged = clicked & decides
        on = np.where(judged, went_on / np.maximum(went_on + (1 - lam) * p["next_z"], TINY), 0.0)
        statistics = {"alpha": _pair_sum(chunk, np.where(clicked, 1.0, p["alpha"] * (1 - p["examined"]))),
                      "followed": weighted(chunk, on).sum(axis=0)}
        if self._first_pass:
            statistics.update(shown=_pair_sum(chunk, chunk.mask), clicks=_pair_sum(chunk, clicked),
                              rank_clicks=weighted(chunk, judged).sum(axis=0))
        statistics["examined"] = _pair_sum(chunk, p["examined"])
        return statistics, p["ll"]

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        if self.method == "counting":
            self.alpha = self._pair_estimate("alpha", totals["clicks"], totals["examined"])
        else:
            self.alpha = self._pair_estimate("alpha", totals["alpha"], totals["shown"], _evidence(totals))
        self.lam = _ratio(totals["followed"], totals["rank_clicks"], self.fixed_prior)

    def continuation(self, log: ClickLog) -> tuple[np.ndarray, Any]:
        return np.broadcast_to(self._lambda(log.ranks), log.clicks.shape), 1.0

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.lam) + 1), "continuation": self.lam})}


class SDBN(DBN):
    """Simplified DBN: DBN with ``gamma = 1`` (after a click the user goes on unless
    satisfied, after a skip always).

    ``method="em"`` (default) fits the exact likelihood with DBN's forward-backward E-step and
    gamma held at 1. ``method="counting"``: alpha by counting the ranks down to the last
    click, satisfaction the share of the pair's clicks that were the session's last (biased
    high: a user who went on and clicked nothing looks satisfied).
    """

    name = "sdbn"
    fields: Mapping[str, tuple[int | None, ...]] = {}

    def __init__(self, prior: tuple[float, float] | str = EMPIRICAL, method: str = "em",
                 prior_structure: str = DEFAULT_STRUCTURE, satisfaction_pooling: str = POOLINGS[0]) -> None:
        super().__init__(prior, prior_structure, satisfaction_pooling)
        self.method = _method(method)
        self.iterative = method == "em"
        self.gamma = 1.0

    def _start(self, log: Any) -> None:
        super()._start(log)
        self.gamma = 1.0

    def _statistics(self, chunk: ClickLog) -> tuple[dict[str, np.ndarray], float]:
        if self.method == "em":
            return super()._statistics(chunk)
        examined, last = _up_to_last_click(chunk)
        clicked = (chunk.clicks == 1) & chunk.mask
        ranks = np.arange(1, chunk.ranks + 1)
        final = clicked & (ranks[None, :] == last[:, None])
        return {"clicks": _pair_sum(chunk, examined & clicked), "examined": _pair_sum(chunk, examined),
                "final": _pair_sum(chunk, final), "all_clicks": _pair_sum(chunk, clicked)}, 0.0

    def _maximise(self, totals: dict[str, np.ndarray]) -> None:
        if self.method == "em":
            super()._maximise(totals)
            self.gamma = 1.0
            return
        self.alpha = self._pair_estimate("alpha", totals["clicks"], totals["examined"])
        self.sigma = self._satisfaction(totals["final"], totals["all_clicks"])

    def satisfaction(self, log: ClickLog) -> np.ndarray:
        return _per_cell(self, log, self.sigma, "sigma")

    def _rank_parameters(self) -> dict[str, Any]:
        return {}

