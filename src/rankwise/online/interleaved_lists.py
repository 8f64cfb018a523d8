"""Interleaved lists: the list type with its credit, the checks on rankings, and the list
drawing of balanced, team-draft and probabilistic interleaving (see ``interleaving``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from rankwise.errors import InputError
from rankwise.params import Declared, Param, Registry

TAU = Param("tau", float, 3.0, "probabilistic: a ranking draws rank r with probability proportional to 1 / r^tau",
            low=0)
Teams = Literal["marginal", "drawn"]
"""Probabilistic interleaving's credit: the posterior over team assignments, or the drawing ranking."""
TEAMS = Param("teams", str, "marginal", "probabilistic: credit each click by the probability that each ranking "
              "placed it, over every team assignment that could have made the list (marginal, Hofmann et al. "
              "2011), or to the ranking that drew it (drawn)", choices=get_args(Teams))


@dataclass(frozen=True)
class InterleavingMethod(Declared):
    """An interleaving method: ``target(lists, size, rng, **params)`` draws one list's
    documents and teams (``None`` for ``optimized``, drawn from its list distribution);
    ``max_rankings`` is 2 for a method that cannot multileave."""

    max_rankings: int | None = None


def _draw_balanced(lists: list[list[Any]], size: int, rng: np.random.Generator) -> tuple[list[Any], list[int]]:
    return balanced_list(lists, size, bool(rng.integers(2) == 0))


def _draw_team_draft(lists: list[list[Any]], size: int, rng: np.random.Generator) -> tuple[list[Any], list[int]]:
    return _team_draft(lists, size, rng)


def _draw_probabilistic(lists: list[list[Any]], size: int, rng: np.random.Generator,
                        tau: float = 3.0) -> tuple[list[Any], list[int]]:
    return _probabilistic(lists, size, rng, tau)


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
    position = [{d: i for i, d in enumerate(r)} for r in lists]
    left = [np.ones(len(r), dtype=bool) for r in lists]
    out = np.zeros((len(docs), len(lists)))
    for row, doc in enumerate(docs):
        likelihood = np.zeros(len(lists))
        for t in range(len(lists)):
            if not left[t].any():
                continue   # a ranking with nothing left is not drawn
            at = position[t].get(doc)
            if at is not None and left[t][at]:
                likelihood[t] = weights[t][at] / weights[t][left[t]].sum()
        total = likelihood.sum()
        if total > 0:
            out[row] = likelihood / total
        for t in range(len(lists)):
            at = position[t].get(doc)
            if at is not None:
                left[t][at] = False
    return out


INTERLEAVING_METHODS: Registry[InterleavingMethod] = Registry("interleaving method", (
    InterleavingMethod("balanced", _draw_balanced, "Merge so every prefix holds the top k_a of A and k_b of B, "
                       "|k_a - k_b| <= 1; credit the clicks in each ranking's top k.", max_rankings=2,
                       reference="Joachims 2003"),
    InterleavingMethod("team-draft", _draw_team_draft, "Rankings pick in a random order each round; credit the "
                       "clicks on each team's documents (multileaves more than two).", aliases=("td",),
                       reference="Radlinski et al. 2008; Schuth et al. 2014"),
    InterleavingMethod("probabilistic", _draw_probabilistic, "Each position goes to a random ranking, which draws a "
                       "document with probability proportional to 1 / rank^tau; a click credits each ranking the "
                       "probability that it placed the document.", (TAU, TEAMS), aliases=("pi",),
                       reference="Hofmann et al. 2011"),
    InterleavingMethod("optimized", None, "A list from the unbiased, most sensitive distribution a linear program "
                       "gives; a click credits 1 / rank in each ranking.", aliases=("oi",),
                       reference="Radlinski & Craswell 2013; Schuth et al. 2014"),
), option="--method")
"""The interleaving and multileaving methods."""

METHODS = tuple(INTERLEAVING_METHODS.names())


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
        if self.method == "balanced":
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


def method_spelled(method: str, tau: float = 3.0) -> tuple[str, float]:
    """The method a spelling names (``probabilistic``, ``probabilistic(tau=2)``) and its ``tau``:
    the spelling's own, else the keyword's.

    >>> method_spelled("probabilistic(tau=2)"), method_spelled("team-draft", 5.0)
    (('probabilistic', 2.0), ('team-draft', 5.0))
    """
    from rankwise.params import split_call

    declared, values = INTERLEAVING_METHODS.parse(method)
    return declared.name, float(values["tau"]) if "tau" in split_call(method)[1] else tau


def check_rankings(rankings: Sequence[Sequence[Any]], method: str) -> list[list[Any]]:
    """The rankings as lists, after the checks every method needs."""
    lists = [list(r) for r in rankings]
    declared = INTERLEAVING_METHODS.get(method_spelled(method)[0])
    if len(lists) < 2:
        raise InputError("interleaving needs at least two rankings", field="rankings")
    if declared.max_rankings is not None and len(lists) > declared.max_rankings:
        raise InputError("balanced interleaving takes exactly two rankings (team-draft, probabilistic and "
                         "optimized multileave more)", field="rankings")
    for i, ranking in enumerate(lists):
        if len(set(ranking)) != len(ranking):
            raise InputError(f"ranking {i} lists a document twice", field="rankings")
    return lists


def draw_list(lists: list[list[Any]], method: str, size: int, rng: np.random.Generator,
              tau: float = 3.0, teams: Teams = "marginal") -> Interleaved:
    """One list of balanced, team-draft or probabilistic interleaving (``teams``: how
    probabilistic interleaving credits a click, see ``TEAMS``)."""
    declared = INTERLEAVING_METHODS.get(method)
    if declared.target is None:
        raise InputError(f"{declared.name} interleaving draws from its list distribution: use interleave()",
                         field="method")
    docs, drawn = declared.target(lists, size, rng, **({"tau": tau} if declared.params else {}))
    method = declared.name
    marginal = method == "probabilistic" and TEAMS.convert(teams, method) == "marginal"
    return Interleaved(docs, np.asarray(drawn, dtype=np.int64), lists, method, None, tau if marginal else None)


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
    weights = [1.0 / np.arange(1, len(r) + 1) ** tau for r in lists]
    left = [np.ones(len(r), dtype=bool) for r in lists]
    position = [{d: i for i, d in enumerate(r)} for r in lists]
    docs: list[Any] = []
    teams: list[int] = []
    while len(docs) < size:
        open_teams = [t for t in range(len(lists)) if left[t].any()]
        if not open_teams:
            break
        team = open_teams[int(rng.integers(len(open_teams)))]
        p = np.where(left[team], weights[team], 0.0)
        pick = int(rng.choice(len(p), p=p / p.sum()))
        doc = lists[team][pick]
        docs.append(doc)
        teams.append(team)
        for t in range(len(lists)):
            at = position[t].get(doc)
            if at is not None:
                left[t][at] = False
    return docs, teams
