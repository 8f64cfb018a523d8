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
- ``DCM`` (dependent click): the user continues after a click at ``r`` with probability
  ``lambda_r``, after a skip always. Fitted by counting up to the last click.
- ``SDBN`` (simplified DBN): continues after a click on ``d`` unless satisfied (``sigma_qd``);
  counting up to the last click.

EM and counting use a Beta prior stated as pseudo-counts ``prior = (clicks, impressions)``
added to every parameter's numerator and denominator (default ``(1, 2)``, PyClick's
initialisation). ``fit`` stops when the log-likelihood gains less than ``tolerance`` per
session or after ``iterations``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog

PRIOR = (1.0, 2.0)
FLOOR = 1e-6
TINY = 1e-12


def _ratio(numerator: np.ndarray, denominator: np.ndarray, prior: tuple[float, float]) -> np.ndarray:
    return (numerator + prior[0]) / (denominator + prior[1])


def _pair_sum(log: ClickLog, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` (sessions x ranks) per (query, document) pair over shown cells."""
    shown = log.mask
    return np.bincount(log.pairs[shown], weights=values[shown], minlength=log.n_pairs)


def _log_bernoulli(p: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    p = np.clip(p, TINY, 1 - TINY)
    return np.where(clicks == 1, np.log(p), np.log1p(-p))


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


class ClickModel:
    """Base: ``fit(log)``, ``conditional_log_probs(log)``, ``log_probs(log)``,
    ``relevance(log)``, ``parameters()``."""

    name = "model"

    def __init__(self, prior: tuple[float, float] = PRIOR) -> None:
        self.prior = prior
        self.history: list[dict[str, float]] = []

    # -- predictions ---------------------------------------------------------------------------
    def click_probs(self, log: ClickLog) -> np.ndarray:  # unconditional P(C_r = 1)
        raise NotImplementedError

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:  # P(C_r = 1 | C_<r)
        return self.click_probs(log)

    def log_probs(self, log: ClickLog) -> np.ndarray:
        """Natural-log unconditional click probabilities (sessions x ranks), for ``Perplexity``."""
        return np.log(np.clip(self.click_probs(log), TINY, 1.0))

    def conditional_log_probs(self, log: ClickLog) -> np.ndarray:
        """Natural-log conditional click probabilities, for ``LogLikelihood`` and
        ``ConditionalPerplexity``."""
        return np.log(np.clip(self.conditional_click_probs(log), TINY, 1.0))

    def log_likelihood(self, log: ClickLog) -> float:
        """Mean log-likelihood per session of the observed clicks (conditional)."""
        ll = _log_bernoulli(self.conditional_click_probs(log), log.clicks)
        return float(np.where(log.mask, ll, 0.0).sum() / max(log.sessions, 1))

    def attractiveness(self, log: ClickLog) -> np.ndarray:
        """alpha per cell (sessions x ranks); unseen pairs get the prior mean."""
        alpha = np.append(self.alpha, self.prior[0] / self.prior[1] if self.prior[1] else 0.5)
        index = _pair_index(self, log)
        return alpha[index]

    def relevance_scores(self) -> np.ndarray:
        """A relevance score per fitted (query, document) pair: attractiveness by default."""
        return self.alpha

    def relevance(self, name: str | None = None) -> Any:
        """The fitted pairs' relevance scores as a rankwise ``Run`` (one ranking per query)."""
        import pyarrow as pa

        from rankwise.data.containers import Run

        queries = [self.query_ids[q] for q in self.pair_query]
        docs = [self.doc_ids[d] for d in self.pair_doc]
        return Run(pa.array(queries, pa.string()), pa.array(docs, pa.string()),
                   np.asarray(self.relevance_scores(), dtype=np.float64), name=name or self.name,
                   source=f"<{self.name}>")

    def parameters(self) -> dict[str, Any]:
        """Parameters as DataFrames: per (query, document) pair, and per rank where the model
        has them."""
        import pandas as pd

        out = {"pairs": pd.DataFrame({"query": [self.query_ids[q] for q in self.pair_query],
                                      "doc": [self.doc_ids[d] for d in self.pair_doc], **self._pair_parameters()})}
        out.update(self._rank_parameters())
        return out

    def _pair_parameters(self) -> dict[str, np.ndarray]:
        return {"attractiveness": self.alpha}

    def _rank_parameters(self) -> dict[str, Any]:
        return {}

    def _remember_pairs(self, log: ClickLog) -> None:
        self.query_ids, self.doc_ids = log.query_ids, log.doc_ids
        self.pair_query, self.pair_doc = log.pair_query, log.pair_doc

    def _record(self, iteration: int, log: ClickLog, started: float,
                progress: Callable[[dict[str, float]], None] | None) -> float:
        ll = self.log_likelihood(log)
        entry = {"iteration": iteration, "log_likelihood": ll, "seconds": time.perf_counter() - started}
        self.history.append(entry)
        if progress is not None:
            progress(entry)
        return ll


def _pair_index(model: ClickModel, log: ClickLog) -> np.ndarray:
    """Each cell's index into the model's pairs (len(pairs) for an unseen pair or padding)."""
    fitted = len(model.pair_query)
    if log.query_ids is model.query_ids and log.doc_ids is model.doc_ids and \
            np.array_equal(log.pair_query, model.pair_query) and np.array_equal(log.pair_doc, model.pair_doc):
        return np.where(log.mask, log.pairs, fitted)
    keys = {(model.query_ids[q], model.doc_ids[d]): i
            for i, (q, d) in enumerate(zip(model.pair_query.tolist(), model.pair_doc.tolist(), strict=True))}
    local = np.array([keys.get((log.query_ids[q], log.doc_ids[d]), fitted)
                      for q, d in zip(log.pair_query.tolist(), log.pair_doc.tolist(), strict=True)] + [fitted],
                     dtype=np.int64)
    return np.where(log.mask, local[log.pairs], fitted)


class GlobalCTR(ClickModel):
    """One click probability for every cell."""

    name = "global-ctr"

    def fit(self, log: ClickLog, **_: Any) -> GlobalCTR:
        self._remember_pairs(log)
        self.ctr = float(log.clicks[log.mask].sum() / max(log.mask.sum(), 1))
        self.alpha = np.full(log.n_pairs, self.ctr)
        return self

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return np.full(log.clicks.shape, self.ctr)

    def _rank_parameters(self) -> dict[str, Any]:
        return {"ctr": self.ctr}


class RankCTR(ClickModel):
    """Click probability per rank."""

    name = "rank-ctr"

    def fit(self, log: ClickLog, **_: Any) -> RankCTR:
        self._remember_pairs(log)
        shown = log.mask.sum(axis=0)
        self.ctr = np.divide(log.clicks.sum(axis=0, where=log.mask), shown, out=np.zeros(log.ranks),
                             where=shown > 0)
        self.alpha = _ratio(_pair_sum(log, log.clicks.astype(float)), _pair_sum(log, np.ones(log.clicks.shape)),
                            self.prior)
        return self

    def click_probs(self, log: ClickLog) -> np.ndarray:
        ctr = np.zeros(log.ranks)
        ctr[:min(log.ranks, len(self.ctr))] = self.ctr[:log.ranks]
        return np.broadcast_to(ctr, log.clicks.shape).copy()

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.ctr) + 1), "ctr": self.ctr})}


class DocumentCTR(ClickModel):
    """Click probability per (query, document) pair (with the prior)."""

    name = "document-ctr"

    def fit(self, log: ClickLog, **_: Any) -> DocumentCTR:
        self._remember_pairs(log)
        self.alpha = _ratio(_pair_sum(log, log.clicks.astype(float)), _pair_sum(log, np.ones(log.clicks.shape)),
                            self.prior)
        return self

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self.attractiveness(log)


class PBM(ClickModel):
    """Position-based model, fitted by EM.

    E-step for a cell without a click: ``P(A = 1 | C = 0) = alpha (1 - gamma) / (1 - alpha
    gamma)`` and ``P(E = 1 | C = 0) = gamma (1 - alpha) / (1 - alpha gamma)``; a click sets
    both to 1. M-step: each parameter is the mean of its posteriors (with the prior).
    """

    name = "pbm"

    def fit(self, log: ClickLog, iterations: int = 50, tolerance: float = 1e-6,
            progress: Callable[[dict[str, float]], None] | None = None) -> PBM:
        self._remember_pairs(log)
        self.alpha = np.full(log.n_pairs, 0.5)
        self._start_examination(log)
        started = time.perf_counter()
        previous = -math.inf
        for iteration in range(1, iterations + 1):
            self._step(log)
            ll = self._record(iteration, log, started, progress)
            if ll - previous < tolerance:
                break
            previous = ll
        return self

    def _start_examination(self, log: ClickLog) -> None:
        self.gamma = np.full(log.ranks, 0.5)

    def _examination(self, log: ClickLog) -> np.ndarray:
        return np.broadcast_to(self.gamma[:log.ranks], log.clicks.shape)

    def _step(self, log: ClickLog) -> None:
        a = np.where(log.mask, self.alpha[np.maximum(log.pairs, 0)], 0.0)
        g = self._examination(log)
        clicked = log.clicks == 1
        none = 1 - a * g
        post_a = np.where(clicked, 1.0, a * (1 - g) / none)
        post_e = np.where(clicked, 1.0, g * (1 - a) / none)
        self.alpha = _ratio(_pair_sum(log, post_a), _pair_sum(log, np.ones(a.shape)), self.prior)
        self._update_examination(log, post_e)

    def _update_examination(self, log: ClickLog, post_e: np.ndarray) -> None:
        shown = log.mask.sum(axis=0)
        self.gamma = (np.where(log.mask, post_e, 0.0).sum(axis=0) + self.prior[0]) / (shown + self.prior[1])

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self.attractiveness(log) * np.broadcast_to(self.gamma[:log.ranks], log.clicks.shape)

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.gamma) + 1), "examination": self.gamma})}


class UBM(PBM):
    """User browsing model, fitted by EM: PBM's E-step with examination ``gamma[r, r']``
    indexed by the rank and the rank of the previous click. The unconditional ``P(C_r)``
    marginalises over the previous click by a forward pass over ranks."""

    name = "ubm"

    def _start_examination(self, log: ClickLog) -> None:
        self.gamma_matrix = np.full((log.ranks, log.ranks), 0.5)   # [rank, previous click rank]

    def _examination(self, log: ClickLog) -> np.ndarray:
        ranks = np.broadcast_to(np.arange(log.ranks), log.clicks.shape)
        return self.gamma_matrix[ranks, previous_click(log.clicks)]

    def _update_examination(self, log: ClickLog, post_e: np.ndarray) -> None:
        ranks = np.broadcast_to(np.arange(log.ranks), log.clicks.shape)
        cell = (ranks * log.ranks + previous_click(log.clicks))[log.mask]
        size = log.ranks * log.ranks
        numerator = np.bincount(cell, weights=post_e[log.mask], minlength=size)
        denominator = np.bincount(cell, minlength=size)
        self.gamma_matrix = ((numerator + self.prior[0]) / (denominator + self.prior[1])).reshape(log.ranks,
                                                                                                  log.ranks)

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
    >>> m = CascadeModel(prior=(0, 0)).fit(log)
    >>> m.parameters()["pairs"]["attractiveness"].tolist()   # a: 1 click in 2 views; b: 1 in 1
    [0.5, 1.0]
    """

    name = "cascade"

    def __init__(self, prior: tuple[float, float] = PRIOR, floor: float = FLOOR) -> None:
        super().__init__(prior)
        self.floor = floor

    def fit(self, log: ClickLog, **_: Any) -> CascadeModel:
        self._remember_pairs(log)
        first = _first_click(log.clicks)
        ranks = np.arange(1, log.ranks + 1)
        examined = log.mask & (ranks[None, :] <= np.where(first > 0, first, log.ranks)[:, None])
        clicked = examined & (ranks[None, :] == first[:, None])
        self.alpha = _ratio(_pair_sum(log, clicked.astype(float)), _pair_sum(log, examined.astype(float)),
                            self.prior)
        return self

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


class _ContinueAfterClick(ClickModel):
    """Shared predictions of DCM and SDBN: examination continues after a skip; after a click
    at ``r`` with probability ``continue_after_click`` (per cell)."""

    def _continue(self, log: ClickLog) -> np.ndarray:
        raise NotImplementedError

    def conditional_click_probs(self, log: ClickLog) -> np.ndarray:
        return self._forward(log, conditional=True)

    def click_probs(self, log: ClickLog) -> np.ndarray:
        return self._forward(log, conditional=False)

    def _forward(self, log: ClickLog, conditional: bool) -> np.ndarray:
        """P(examining rank r) times alpha, rank by rank: given the observed clicks above
        (``conditional``), or averaged over them."""
        alpha = self.attractiveness(log)
        keep_going = self._continue(log)
        out = np.zeros(alpha.shape)
        examining = np.ones(log.sessions)
        for r in range(log.ranks):
            out[:, r] = examining * alpha[:, r]
            if conditional:
                skipped = examining * (1 - alpha[:, r]) / np.maximum(1 - examining * alpha[:, r], TINY)
                examining = np.where(log.clicks[:, r] == 1, keep_going[:, r], skipped)
            else:
                examining = examining * (alpha[:, r] * keep_going[:, r] + 1 - alpha[:, r])
        return out


def _up_to_last_click(log: ClickLog) -> tuple[np.ndarray, np.ndarray]:
    last = last_click(log.clicks)
    ranks = np.arange(1, log.ranks + 1)
    examined = log.mask & (ranks[None, :] <= np.where(last > 0, last, log.ranks)[:, None])
    return examined, last


class DCM(_ContinueAfterClick):
    """Dependent click model: alpha by counting the ranks down to the last click, ``lambda_r``
    the share of clicks at rank ``r`` that were followed by another click."""

    name = "dcm"

    def fit(self, log: ClickLog, **_: Any) -> DCM:
        self._remember_pairs(log)
        examined, last = _up_to_last_click(log)
        self.alpha = _ratio(_pair_sum(log, (examined & (log.clicks == 1)).astype(float)),
                            _pair_sum(log, examined.astype(float)), self.prior)
        ranks = np.arange(1, log.ranks + 1)
        clicked = (log.clicks == 1) & log.mask
        not_last = clicked & (ranks[None, :] < last[:, None])
        self.lam = (not_last.sum(axis=0) + self.prior[0]) / (clicked.sum(axis=0) + self.prior[1])
        return self

    def _continue(self, log: ClickLog) -> np.ndarray:
        return np.broadcast_to(self.lam[:log.ranks], log.clicks.shape)

    def _rank_parameters(self) -> dict[str, Any]:
        import pandas as pd

        return {"ranks": pd.DataFrame({"rank": np.arange(1, len(self.lam) + 1), "continuation": self.lam})}


class SDBN(_ContinueAfterClick):
    """Simplified DBN (gamma = 1): alpha by counting the ranks down to the last click;
    satisfaction ``sigma_qd`` the share of clicks on the pair that were the session's last."""

    name = "sdbn"

    def fit(self, log: ClickLog, **_: Any) -> SDBN:
        self._remember_pairs(log)
        examined, last = _up_to_last_click(log)
        clicked = (log.clicks == 1) & log.mask
        self.alpha = _ratio(_pair_sum(log, (examined & clicked).astype(float)),
                            _pair_sum(log, examined.astype(float)), self.prior)
        ranks = np.arange(1, log.ranks + 1)
        final = clicked & (ranks[None, :] == last[:, None])
        self.sigma = _ratio(_pair_sum(log, final.astype(float)), _pair_sum(log, clicked.astype(float)), self.prior)
        return self

    def satisfaction(self, log: ClickLog) -> np.ndarray:
        sigma = np.append(self.sigma, self.prior[0] / self.prior[1] if self.prior[1] else 0.5)
        return sigma[_pair_index(self, log)]

    def _continue(self, log: ClickLog) -> np.ndarray:
        return 1 - self.satisfaction(log)

    def relevance_scores(self) -> np.ndarray:
        return self.alpha * self.sigma

    def _pair_parameters(self) -> dict[str, np.ndarray]:
        return {"attractiveness": self.alpha, "satisfaction": self.sigma}


MODELS: dict[str, type[ClickModel]] = {m.name: m for m in (GlobalCTR, RankCTR, DocumentCTR, PBM, UBM, CascadeModel,
                                                          DCM, SDBN)}
