"""The distribution of an interleaving method's lists for fixed rankings, and optimized
interleaving and multileaving.

For a fixed set of rankings each method is a probability distribution over interleaved lists
with a credit per (position, ranking). ``interleaving.distribution(rankings, method)`` builds
it once, with the builder the method declares (``interleaving_methods``):

- ``team-draft``: exactly, by enumerating the order the rankings pick in each round (all
  orders equally likely; identical outcomes merged). Beyond ``limit`` outcomes it is drawn.
- ``balanced``: exactly, the two lists (A leads or B leads), each with probability 1/2.
- ``probabilistic``: drawn (``samples`` impressions, each list weighted by how often it came).
- ``optimized`` (Radlinski & Craswell 2013; multileaving, Schuth et al. 2014): the allowed
  lists are those whose every document is the highest not-yet-shown document of some
  ranking (all of them when at most ``limit``, else ``samples`` distinct ones drawn by
  prefix-constrained sampling). A document's credit for ranking ``x`` is ``1 / rank_x(d)``
  (``credit="inverse"``) or ``-rank_x(d)`` (``"negative"``), with ``rank_x(d) = len(x) + 1``
  when ``x`` lacks ``d``. The probabilities solve the linear program: minimise the expected
  sensitivity ``sum_i p_i sum_x (v_ix - mean_x v_ix)^2`` with ``v_ix = sum_j credit_ijx /
  (j + 1)`` (clicks with probability ``1 / (j + 1)`` at position ``j``, 0-based), subject to
  ``sum_i p_i = 1``, ``0 <= p_i <= 1`` and unbiasedness: for every depth ``k`` the expected
  credit of the top ``k`` is the same for every ranking (under clicks at random, no ranking
  is favoured). Solved with scipy's HiGHS.

``ListDistribution.credits(index, clicks)`` credits click patterns on one list vectorised
(impressions x positions in, impressions x rankings out); ``draw`` picks lists for impressions.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from rankwise.errors import InputError
from rankwise.interleaving.lists import (
    Interleaved,
    balanced_credit_table,
    balanced_list,
    draw_team_draft,
    probabilistic_posterior,
)

CREDIT_FUNCTIONS = ("inverse", "negative")
"""Optimized interleaving's credit of a document for a ranking: ``1 / rank`` or ``-rank``."""


class DrawList(Protocol):
    """An interleaving method's list drawing: one list of at most ``size`` documents."""

    def __call__(self, lists: list[list[Any]], size: int, rng: np.random.Generator,
                 **params: Any) -> Interleaved: ...


@dataclass
class ListDistribution:
    """Lists an interleaving method shows for fixed rankings, with their probabilities.

    ``credit[i, j, x]`` is the credit ranking ``x`` gets for a click at position ``j`` of list
    ``i`` (for balanced interleaving the credit depends on the lowest click too, so it is
    computed by ``credits``)."""

    method: str
    rankings: list[list[Any]] = field(repr=False)
    lists: list[list[Any]]
    teams: list[np.ndarray] = field(repr=False)
    probabilities: np.ndarray
    credit: np.ndarray = field(repr=False)
    exact: bool = True
    by_lowest_click: bool = False
    """Balanced interleaving: a click's credit depends on the lowest click too, so ``credit``
    is zero and ``credits`` computes it."""

    @property
    def length(self) -> int:
        return self.credit.shape[1]

    def shown(self, index: int) -> Interleaved:
        """List ``index`` as an ``Interleaved``, ready for ``credit``."""
        size = len(self.lists[index])
        table = None if self.by_lowest_click else self.credit[index, :size]
        return Interleaved(list(self.lists[index]), self.teams[index], self.rankings, self.method, table,
                           by_lowest_click=self.by_lowest_click)

    def draw(self, size: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Indices of ``size`` lists drawn by their probabilities."""
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return generator.choice(len(self.lists), size=size, p=self.probabilities)

    def credits(self, index: int, clicks: np.ndarray) -> np.ndarray:
        """Credits (impressions x rankings) of click patterns (impressions x positions, 0/1)
        on list ``index``.

        >>> table = team_draft_distribution([["a", "b"], ["b", "c"]], 2, samples=1000, limit=5000, rng=None)
        >>> table.lists, table.probabilities.tolist()
        ([['a', 'b'], ['b', 'a']], [0.5, 0.5])
        >>> table.credits(0, np.array([[1, 0], [1, 1], [0, 0]])).tolist()
        [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
        """
        clicks = np.asarray(clicks, dtype=np.float64)
        size = len(self.lists[index])
        clicks = clicks[:, :size]
        if not self.by_lowest_click:
            return clicks @ self.credit[index, :size]
        clicked = np.asarray(clicks > 0)
        any_click = np.asarray(clicked.any(axis=1))
        lowest = np.where(any_click, size - 1 - np.argmax(clicked[:, ::-1], axis=1), 0)
        masks = balanced_credit_table(self.lists[index], self.rankings)   # lowest x position x ranking
        out = np.einsum("nj,njx->nx", clicks, masks[lowest])
        return np.where(any_click[:, None], out, 0.0)


def balanced_distribution(lists: list[list[Any]], size: int, samples: int, limit: int,
                          rng: np.random.Generator) -> ListDistribution:
    """Balanced interleaving's two lists (A leads, B leads), a half each; exact."""
    outcomes = [(balanced_list(lists, size, a_first), 0.5) for a_first in (True, False)]
    return _merged("balanced", lists, size, outcomes, exact=True, by_lowest_click=True)


def team_draft_distribution(lists: list[list[Any]], size: int, samples: int, limit: int,
                            rng: np.random.Generator) -> ListDistribution:
    """Team-draft's lists: every sequence of pick orders when there are at most ``limit``,
    else ``samples`` drawn lists."""
    if _team_draft_orders(len(lists), size) > limit:
        return sampled_distribution("team-draft", draw_team_draft, lists, size, samples, rng)
    return _merged("team-draft", lists, size, _team_draft_exact(lists, size), exact=True)


def sampled_distribution(method: str, draw: Callable[..., Interleaved], lists: list[list[Any]], size: int, samples: int,
                         rng: np.random.Generator, **params: Any) -> ListDistribution:
    """``samples`` lists ``draw`` makes, each weighted by how often it came (probabilistic
    interleaving's marginal credit depends on the list only, so its teams are not kept)."""
    draws = [draw(lists, size, rng, **params) for _ in range(samples)]
    tau = draws[0].marginal_tau if draws else None
    outcomes = [((d.docs, [-1] * len(d.docs) if tau is not None else d.teams.tolist()), 1.0 / samples)
                for d in draws]
    return _merged(method, lists, size, outcomes, exact=False, marginal_tau=tau)


def _merged(method: str, lists: list[list[Any]], size: int,
            outcomes: list[tuple[tuple[list[Any], list[int]], float]], exact: bool, by_lowest_click: bool = False,
            marginal_tau: float | None = None) -> ListDistribution:
    """Identical (list, teams) outcomes merged, with each list's credit per position and ranking:
    1 for the team's ranking, or probabilistic interleaving's posterior (``marginal_tau``)."""
    merged: dict[tuple[tuple[Any, ...], tuple[int, ...]], float] = {}
    for (docs, list_teams), p in outcomes:
        key = (tuple(docs), tuple(list_teams))
        merged[key] = merged.get(key, 0.0) + p
    keys = list(merged)
    credit_table = np.zeros((len(keys), size, len(lists)))
    for i, (key_docs, key_teams) in enumerate(keys):
        if marginal_tau is not None:
            credit_table[i, :len(key_docs)] = probabilistic_posterior(list(key_docs), lists, marginal_tau)
            continue
        for j, team in enumerate(key_teams):
            if team >= 0:
                credit_table[i, j, team] = 1.0
    probabilities = np.array([merged[k] for k in keys])
    return ListDistribution(method, lists, [list(k[0]) for k in keys], [np.asarray(k[1], dtype=np.int64) for k in keys],
                            probabilities / probabilities.sum(), credit_table, exact, by_lowest_click)


def _team_draft_orders(rankers: int, size: int) -> float:
    rounds = -(-size // rankers)
    return float(np.prod([float(np.prod(np.arange(1, rankers + 1)))] * rounds))


def _team_draft_exact(lists: list[list[Any]], size: int) -> list[tuple[tuple[list[Any], list[int]], float]]:
    """Every sequence of pick orders, each with its probability (1 / R! per round)."""
    orders = list(itertools.permutations(range(len(lists))))
    results: list[tuple[tuple[list[Any], list[int]], float]] = []

    def extend(docs: list[Any], teams: list[int], next_of: list[int], p: float) -> None:
        if len(docs) >= size:
            results.append(((docs, teams), p))
            return
        progressed = False
        for order in orders:
            d, t, n = list(docs), list(teams), list(next_of)
            added = False
            for team in order:
                ranking = lists[team]
                while n[team] < len(ranking) and ranking[n[team]] in d:
                    n[team] += 1
                if n[team] < len(ranking) and len(d) < size:
                    d.append(ranking[n[team]])
                    t.append(team)
                    added = True
            if added:
                progressed = True
                extend(d, t, n, p / len(orders))
        if not progressed:
            results.append(((docs, teams), p))

    extend([], [], [0] * len(lists), 1.0)
    return results


def _allowed_lists(lists: list[list[Any]], size: int, limit: int) -> list[list[Any]] | None:
    """Every list whose each document is the highest unshown one of some ranking, or None
    when there are more than ``limit``."""
    found: list[list[Any]] = []

    def extend(docs: list[Any]) -> bool:
        candidates = []
        for ranking in lists:
            top = next((d for d in ranking if d not in docs), None)
            if top is not None and top not in candidates:
                candidates.append(top)
        if len(docs) >= size or not candidates:
            found.append(docs)
            return len(found) <= limit
        return all(extend(docs + [doc]) for doc in candidates)

    return found if extend([]) else None


def _prefix_sample(lists: list[list[Any]], size: int, rng: np.random.Generator) -> list[Any]:
    docs: list[Any] = []
    open_teams = list(range(len(lists)))
    while len(docs) < size and open_teams:
        team = open_teams[int(rng.integers(len(open_teams)))]
        top = next((d for d in lists[team] if d not in docs), None)
        if top is None:
            open_teams.remove(team)
        else:
            docs.append(top)
    return docs


def _credit_table(lists: list[list[Any]], allowed: list[list[Any]], size: int, credit: str) -> np.ndarray:
    """``[list, position, ranking]``: the credit of each allowed list's document to each ranking,
    ``1 / rank`` (``inverse``) or ``-rank``, a document a ranking lacks ranked just past its end;
    0 past a list's end."""
    doc_ids: dict[Any, int] = {}
    cells = np.full((len(allowed), size), -1, dtype=np.int64)   # each position's document id
    for i, docs in enumerate(allowed):
        cells[i, :len(docs)] = [doc_ids.setdefault(doc, len(doc_ids)) for doc in docs]
    filled = cells >= 0
    table = np.zeros((len(allowed), size, len(lists)))
    for x, ranking in enumerate(lists):
        rank_of = {d: r + 1 for r, d in enumerate(ranking)}
        ranks = np.array([rank_of.get(doc, len(ranking) + 1) for doc in doc_ids], dtype=np.float64)
        rank = ranks[cells[filled]]
        table[filled, x] = 1.0 / rank if credit == "inverse" else -rank
    return table


def optimized_distribution(lists: list[list[Any]], size: int, samples: int, limit: int, rng: np.random.Generator,
                           credit: str = "inverse") -> ListDistribution:
    """Optimized interleaving's lists and their probabilities from the linear program (see the
    module); the allowed lists all enumerated when at most ``limit``, else ``samples`` drawn."""
    from scipy.optimize import linprog

    if credit not in CREDIT_FUNCTIONS:
        raise InputError(f"unknown credit function {credit!r}; expected one of {', '.join(CREDIT_FUNCTIONS)}",
                         field="credit")
    allowed = _allowed_lists(lists, size, limit)
    exact = allowed is not None
    if allowed is None:
        seen: dict[tuple[Any, ...], None] = {}
        for _ in range(50 * samples):
            seen.setdefault(tuple(_prefix_sample(lists, size, rng)), None)
            if len(seen) >= samples:
                break
        allowed = [list(k) for k in seen]
    table = _credit_table(lists, allowed, size, credit)
    cumulative = np.cumsum(table, axis=1)                               # lists x depth x rankings
    unbiased = np.concatenate([(cumulative[:, :, x] - cumulative[:, :, x + 1]).T for x in range(len(lists) - 1)])
    click_prob = 1.0 / np.arange(1, size + 1)
    value = np.einsum("ijx,j->ix", table, click_prob)
    sensitivity = ((value - value.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    a_eq = np.vstack([np.ones(len(allowed)), unbiased])
    b_eq = np.zeros(len(a_eq))
    b_eq[0] = 1.0
    solution = linprog(sensitivity, A_eq=a_eq, b_eq=b_eq, bounds=[(0, 1)] * len(allowed), method="highs")
    if not solution.success:
        raise InputError(f"no unbiased distribution over the {len(allowed)} allowed lists"
                         + ("" if exact else " drawn; raise samples") + f" ({solution.message})", field="rankings")
    p = np.clip(solution.x, 0, None)
    keep = p > 1e-12
    kept = [docs for docs, k in zip(allowed, keep, strict=True) if k]
    return ListDistribution("optimized", lists, kept, [np.full(len(d), -1, dtype=np.int64) for d in kept],
                            p[keep] / p[keep].sum(), table[keep], exact)


def draw_optimized(lists: list[list[Any]], size: int, rng: np.random.Generator, credit: str = "inverse",
                   samples: int = 1000, limit: int = 5000) -> Interleaved:
    """One list drawn from optimized interleaving's distribution (solved for this one list; for
    many impressions build the distribution once)."""
    table = optimized_distribution(lists, size, samples, limit, rng, credit)
    return table.shown(int(table.draw(1, rng)[0]))


__all__ = ["CREDIT_FUNCTIONS", "DrawList", "ListDistribution", "balanced_distribution", "draw_optimized",
           "optimized_distribution", "sampled_distribution", "team_draft_distribution"]
