"""Interleaved lists: the list type with its credit and the list drawing of balanced,
team-draft and probabilistic interleaving (see ``interleaving``; the methods are declared in
``interleaving_methods``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rankwise.errors import InputError

Teams = Literal["marginal", "drawn"]
"""Probabilistic interleaving's credit: the posterior over team assignments, or the drawing ranking."""


def probabilistic_posterior(docs: Sequence[Any], lists: Sequence[Sequence[Any]], tau: float = 3.0) -> np.ndarray:
    """``[r, t]``: the probability that ranking ``t`` placed the document at position ``r`` of a
    probabilistic interleaving, given the list (Hofmann et al. 2011). A list's probability
    under a team assignment is the product over positions of ``1 / open`` (the position's
    ranking drawn among those with documents left) times that ranking's probability of drawing
    the document among its documents not yet shown; the documents shown before a position do
    not depend on who showed them, so the posterior factorises over positions:
    ``P(t | position r) = P_t(doc_r | shown before r) / sum over open rankings u of P_u(...)``.

    >>> probabilistic_posterior(["a", "b"], [["a", "b"], ["b", "a"]], tau=1.0).round(6).tolist()
    [[0.666667, 0.333333], [0.5, 0.5]]
    """
    weights = [1.0 / np.arange(1, len(r) + 1) ** tau for r in lists]
    shown = _Shown(lists)
    out = np.zeros((len(docs), len(lists)))
    for row, doc in enumerate(docs):
        likelihood = np.zeros(len(lists))
        for t, at in enumerate(shown.places(doc)):
            # a ranking with nothing left is not drawn, and one that showed the document cannot
            if at is not None and shown.left[t][at]:
                likelihood[t] = weights[t][at] / weights[t][shown.left[t]].sum()
        total = likelihood.sum()
        if total > 0:
            out[row] = likelihood / total
        shown.add(doc)
    return out


class _Shown:
    """The documents each ranking has left to show, as a list is drawn top-down: ``left[t]``
    marks ranking ``t``'s positions not yet shown (by any ranking), ``remaining[t]`` counts them."""

    def __init__(self, lists: Sequence[Sequence[Any]]) -> None:
        self.position = [{d: i for i, d in enumerate(r)} for r in lists]
        self.left = [np.ones(len(r), dtype=bool) for r in lists]
        self.remaining = [len(r) for r in lists]

    def places(self, doc: Any) -> list[int | None]:
        """The document's position in each ranking (None where absent)."""
        return [position.get(doc) for position in self.position]

    def add(self, doc: Any) -> list[tuple[int, int]]:
        """The document is shown: no ranking may show it again. Returns the (ranking, position)
        pairs it closed."""
        closed = [(t, at) for t, at in enumerate(self.places(doc)) if at is not None and self.left[t][at]]
        for t, at in closed:
            self.left[t][at] = False
            self.remaining[t] -= 1
        return closed


def draw_index(p: np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn with probability proportional to ``p`` (non-negative, not all 0), consuming
    one uniform from ``rng``: what ``rng.choice(len(p), p=p / p.sum())`` draws, bit for bit,
    without its checks (numpy's inverse CDF: cumulative sum, renormalised, searched to the
    right).

    >>> p = np.array([0.5, 0.0, 2.0, 1.5])
    >>> ours = [draw_index(p, np.random.default_rng(seed)) for seed in range(6)]
    >>> ours == [int(np.random.default_rng(seed).choice(4, p=p / p.sum())) for seed in range(6)]
    True
    """
    cdf = np.cumsum(p / p.sum())
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))


@dataclass
class Interleaved:
    """One interleaved list: ``docs`` shown top-down; ``teams[i]`` the ranking credited for
    position ``i`` (-1 when none: balanced interleaving credits by the input rankings,
    optimized and probabilistic interleaving by ``credit_table``, positions x rankings)."""

    docs: list[Any]
    teams: np.ndarray
    rankings: list[list[Any]] = field(repr=False)
    method: str
    credit_table: np.ndarray | None = field(default=None, repr=False)
    marginal_tau: float | None = field(default=None, repr=False)
    """Probabilistic interleaving with marginal credit: the ``tau`` its posterior is computed
    with, the first time a click is credited (drawing a list costs no posterior)."""
    by_lowest_click: bool = field(default=False, repr=False)
    """Balanced interleaving's credit: each ranking's clicks within its top ``k``, ``k`` set by
    the lowest click (``balanced_credit_table``)."""

    def credit_rows(self) -> np.ndarray | None:
        """The credit of a click at each position, per ranking (positions x rankings), where it
        is not the team's 1 (optimized; probabilistic with marginal credit); None otherwise."""
        if self.credit_table is None and self.marginal_tau is not None:
            self.credit_table = probabilistic_posterior(self.docs, self.rankings, self.marginal_tau)
        return self.credit_table

    def credit(self, clicked: Sequence[int]) -> np.ndarray:
        """Credit per ranking for clicks at the given positions (0-based): counts, or expected
        counts where the teams are uncertain (probabilistic interleaving's marginal credit).

        >>> shown = Interleaved([1, 3, 4], np.array([0, 1, 1]), [[1, 2], [3, 4]], "team-draft")
        >>> shown.credit([0, 2]).tolist()   # position 0 is team A's, position 2 team B's
        [1, 1]
        """
        positions = np.asarray(list(clicked), dtype=np.int64)
        if len(positions) and (positions.min() < 0 or positions.max() >= len(self.docs)):
            raise InputError(f"a click at position {positions.max()} of a list of {len(self.docs)}", field="clicks")
        if self.by_lowest_click:
            return _balanced_credit(self, positions)
        table = self.credit_rows()
        if table is not None:
            return table[positions].sum(axis=0)
        return np.bincount(self.teams[positions], minlength=len(self.rankings)).astype(np.int64)


def _balanced_credit(shown: Interleaved, positions: np.ndarray) -> np.ndarray:
    if not len(positions):
        return np.zeros(2, dtype=np.int64)
    masks = balanced_credit_table(shown.docs, shown.rankings)[int(positions.max())]
    return masks[positions].sum(axis=0).astype(np.int64)


def balanced_credit_table(docs: Sequence[Any], rankings: Sequence[Sequence[Any]]) -> np.ndarray:
    """Balanced interleaving's credit masks: ``[l, j, x]`` is 1 when, with the lowest click
    at position ``l``, a click at ``j`` counts for ranking ``x`` (its document is in the top
    ``k`` of ``x``, ``k`` the smaller of the two rankings' ranks of the document at ``l``).

    >>> balanced_credit_table([2, 1, 3], [[1, 2], [2, 3]])[0].tolist()   # lowest click on 2: k = 1
    [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
    """
    a, b = (list(r) for r in rankings)
    rank_a = {d: i for i, d in enumerate(a)}
    rank_b = {d: i for i, d in enumerate(b)}
    masks = np.zeros((len(docs), len(docs), 2))
    for lowest, doc in enumerate(docs):
        k = min(rank_a.get(doc, len(a)), rank_b.get(doc, len(b))) + 1
        tops = (set(a[:k]), set(b[:k]))
        for j, other in enumerate(docs):
            for x in (0, 1):
                masks[lowest, j, x] = float(other in tops[x])
    return masks


def draw_balanced(lists: list[list[Any]], size: int, rng: np.random.Generator) -> Interleaved:
    """Balanced interleaving's list: a coin decides which ranking leads (``balanced_list``)."""
    docs, teams = balanced_list(lists, size, bool(rng.integers(2) == 0))
    return Interleaved(docs, np.asarray(teams, dtype=np.int64), lists, "balanced", by_lowest_click=True)


def draw_team_draft(lists: list[list[Any]], size: int, rng: np.random.Generator) -> Interleaved:
    """Team-draft's list: each round the rankings pick in a random order."""
    docs, teams = _team_draft(lists, size, rng)
    return Interleaved(docs, np.asarray(teams, dtype=np.int64), lists, "team-draft")


def draw_probabilistic(lists: list[list[Any]], size: int, rng: np.random.Generator, tau: float = 3.0,
                       teams: Teams = "marginal") -> Interleaved:
    """Probabilistic interleaving's list; with ``teams="marginal"`` a click's credit is the
    posterior over team assignments (``probabilistic_posterior``), computed on first use."""
    docs, drawn = _probabilistic(lists, size, rng, tau)
    return Interleaved(docs, np.asarray(drawn, dtype=np.int64), lists, "probabilistic", None,
                       tau if teams == "marginal" else None)


def balanced_list(lists: list[list[Any]], size: int, a_first: bool) -> tuple[list[Any], list[int]]:
    """Balanced interleaving's list when A leads (``a_first``) or B does; teams all -1."""
    a, b = lists
    docs: list[Any] = []
    seen: set[Any] = set()
    k_a = k_b = 0
    while k_a < len(a) and k_b < len(b) and len(docs) < size:
        if k_a < k_b or (k_a == k_b and a_first):
            doc, k_a = a[k_a], k_a + 1
        else:
            doc, k_b = b[k_b], k_b + 1
        if doc not in seen:
            seen.add(doc)
            docs.append(doc)
    return docs, [-1] * len(docs)


def _team_draft(lists: list[list[Any]], size: int, rng: np.random.Generator) -> tuple[list[Any], list[int]]:
    docs: list[Any] = []
    teams: list[int] = []
    seen: set[Any] = set()
    next_of = [0] * len(lists)
    while len(docs) < size:
        added = False
        for team in rng.permutation(len(lists)).tolist():
            ranking = lists[team]
            while next_of[team] < len(ranking) and ranking[next_of[team]] in seen:
                next_of[team] += 1
            if next_of[team] < len(ranking) and len(docs) < size:
                doc = ranking[next_of[team]]
                seen.add(doc)
                docs.append(doc)
                teams.append(team)
                added = True
        if not added:
            break
    return docs, teams


def _probabilistic(lists: list[list[Any]], size: int, rng: np.random.Generator,
                   tau: float) -> tuple[list[Any], list[int]]:
    weights_left = [1.0 / np.arange(1, len(r) + 1) ** tau for r in lists]   # 0 once shown
    shown = _Shown(lists)
    docs: list[Any] = []
    teams: list[int] = []
    while len(docs) < size:
        open_teams = [t for t, count in enumerate(shown.remaining) if count]
        if not open_teams:
            break
        team = open_teams[int(rng.integers(len(open_teams)))]
        doc = lists[team][draw_index(weights_left[team], rng)]
        docs.append(doc)
        teams.append(team)
        for t, at in shown.add(doc):
            weights_left[t][at] = 0.0
    return docs, teams
