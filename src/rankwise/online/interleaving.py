"""Interleaving: show one list mixed from two or more rankings, credit each click to the
ranking that contributed the clicked document, and compare rankings over impressions.

Methods (``interleave(rankings, method)``):

- ``balanced`` (Joachims 2003, two rankings): a coin decides which ranking leads; the lists
  are merged so that every prefix of the result holds the top ``k_a`` of A and the top ``k_b``
  of B with ``|k_a - k_b| <= 1``. Credit: with ``k`` the smaller of the two rankings' ranks of
  the lowest clicked document, each ranking is credited the clicks on its own top ``k``.
- ``team-draft`` (Radlinski et al. 2008; multileaving for more rankings, Schuth et al. 2014):
  in each round the rankings pick in a random order, each adding its highest-ranked
  document not yet shown to its team. Credit: the clicks on each team's documents.
- ``probabilistic`` (Hofmann et al. 2011): each position goes to a uniformly drawn ranking,
  which draws a document not yet shown with probability proportional to ``1 / rank^tau``
  in that ranking (``tau`` 3 by default); the document joins the drawing ranking's team.
  Credit: the clicks on each team's documents.
- ``optimized`` (Radlinski & Craswell 2013; multileaving, Schuth et al. 2014): a list drawn
  from the distribution over prefix-constrained lists that a linear program makes unbiased
  and most sensitive; a click credits each ranking ``1 / rank`` of the clicked document in
  it (see ``rankwise.online.list_distribution``). For many impressions of the same rankings,
  build ``distribution(rankings, "optimized")`` once and ``draw`` from it.

An impression's outcome between two rankings is a win, a tie or a loss by credit.
``preferences`` aggregates outcomes: per pair wins, ties, losses, the preference ``delta =
(wins + ties / 2) / n - 0.5``, the binomial sign test over the non-tied impressions, a
bootstrap interval for ``delta`` and Holm's correction across pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.errors import InputError

METHODS = ("balanced", "team-draft", "probabilistic", "optimized")


@dataclass
class Interleaved:
    """One interleaved list: ``docs`` shown top-down; ``teams[i]`` the ranking credited for
    position ``i`` (-1 when none: balanced interleaving credits by the input rankings,
    optimized interleaving by ``credit_table``, positions x rankings)."""

    docs: list[Any]
    teams: np.ndarray
    rankings: list[list[Any]] = field(repr=False)
    method: str
    credit_table: np.ndarray | None = field(default=None, repr=False)

    def credit(self, clicked: Sequence[int]) -> np.ndarray:
        """Credit per ranking for clicks at the given positions (0-based).

        >>> shown = Interleaved([1, 3, 4], np.array([0, 1, 1]), [[1, 2], [3, 4]], "team-draft")
        >>> shown.credit([0, 2]).tolist()   # position 0 is team A's, position 2 team B's
        [1, 1]
        """
        positions = np.asarray(list(clicked), dtype=np.int64)
        if len(positions) and (positions.min() < 0 or positions.max() >= len(self.docs)):
            raise InputError(f"a click at position {positions.max()} of a list of {len(self.docs)}", field="clicks")
        if self.method == "balanced":
            return _balanced_credit(self, positions)
        if self.credit_table is not None:
            return self.credit_table[positions].sum(axis=0)
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


def check_rankings(rankings: Sequence[Sequence[Any]], method: str, extra: tuple[str, ...] = ()) -> list[list[Any]]:
    """The rankings as lists, after the checks every method needs."""
    lists = [list(r) for r in rankings]
    if method not in METHODS + extra:
        raise InputError(f"unknown interleaving method {method!r}; expected one of {', '.join(METHODS)}",
                         field="method")
    if len(lists) < 2:
        raise InputError("interleaving needs at least two rankings", field="rankings")
    if method == "balanced" and len(lists) != 2:
        raise InputError("balanced interleaving takes exactly two rankings (team-draft, probabilistic and "
                         "optimized multileave more)", field="rankings")
    for i, ranking in enumerate(lists):
        if len(set(ranking)) != len(ranking):
            raise InputError(f"ranking {i} lists a document twice", field="rankings")
    return lists


def interleave(rankings: Sequence[Sequence[Any]], method: str = "team-draft", length: int | None = None,
               rng: np.random.Generator | int | None = None, tau: float = 3.0) -> Interleaved:
    """Interleave ``rankings`` (lists of document ids, best first) into one list of at most
    ``length`` documents (default: the shortest ranking's length).

    >>> shown = interleave([["a", "b"], ["c", "d"]], "team-draft", rng=0)
    >>> shown.docs, shown.teams.tolist()   # one pick each per round, in a random order (here A first)
    (['a', 'c'], [0, 1])
    """
    lists = check_rankings(rankings, method)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    size = min(len(r) for r in lists) if length is None else int(length)
    if method == "optimized":
        from rankwise.online.list_distribution import distribution

        table = distribution(lists, "optimized", size, rng=generator)
        return table.shown(int(table.draw(1, generator)[0]))
    if method == "balanced":
        docs, teams = balanced_list(lists, size, bool(generator.integers(2) == 0))
    elif method == "team-draft":
        docs, teams = _team_draft(lists, size, generator)
    else:
        docs, teams = _probabilistic(lists, size, generator, tau)
    return Interleaved(docs, np.asarray(teams, dtype=np.int64), lists, method)


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


def outcomes(credits: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Per pair of rankings ``(i, j)``, ``i < j``, each impression's outcome: +1 when ``i``
    got more credit, -1 when ``j`` did, 0 for a tie (impressions x rankings credits in).

    >>> outcomes(np.array([[1, 0], [0, 0], [1, 2]]))[(0, 1)].tolist()
    [1, 0, -1]
    """
    credits = np.atleast_2d(np.asarray(credits))
    rankers = credits.shape[1]
    return {(i, j): np.sign(credits[:, i] - credits[:, j]).astype(np.int64)
            for i in range(rankers) for j in range(i + 1, rankers)}


def preferences(credits: np.ndarray, names: Sequence[str] | None = None, alpha: float = 0.05,
                resamples: int = 2000, seed: int = 0, clicked_only: bool = False) -> Any:
    """Wins, ties and losses of each pair of rankings over impressions, the preference
    ``delta = (wins + ties/2) / n - 0.5`` (positive: the first of the pair is preferred), the
    two-sided binomial sign test over non-tied impressions, a percentile bootstrap interval
    of ``delta`` and Holm-corrected p-values across pairs. ``clicked_only`` leaves out
    impressions without a click (counted in ``n_unclicked``).

    >>> table = preferences(np.array([[1, 0]] * 8 + [[0, 1]] * 2 + [[0, 0]] * 2), names=["A", "B"])
    >>> row = table.iloc[0]
    >>> [int(row[c]) for c in ("wins", "ties", "losses")], float(row["delta"])   # (8 + 2/2) / 12 - 0.5
    ([8, 2, 2], 0.25)
    >>> round(float(row["p_value"]), 4)   # binomial: 8 of 10 non-tied, two-sided
    0.1094
    """
    import pandas as pd
    from scipy import stats as scipy_stats

    from rankwise.stats.corrections import holm

    credits = np.atleast_2d(np.asarray(credits))
    labels = list(names) if names is not None else [f"ranker {i}" for i in range(credits.shape[1])]
    if len(labels) != credits.shape[1]:
        raise InputError(f"{len(labels)} names for {credits.shape[1]} rankings", field="names")
    rng = np.random.default_rng(seed)
    rows = []
    for (i, j), outcome in outcomes(credits).items():
        clicked = (credits[:, i] + credits[:, j]) > 0 if clicked_only else np.ones(len(outcome), dtype=bool)
        kept = outcome[clicked]
        n = len(kept)
        wins, losses = int((kept > 0).sum()), int((kept < 0).sum())
        ties = n - wins - losses
        delta = (wins + ties / 2) / n - 0.5 if n else float("nan")
        decided = wins + losses
        p_value = float(scipy_stats.binomtest(wins, decided, 0.5).pvalue) if decided else 1.0
        if n:
            draws = rng.multinomial(n, [wins / n, ties / n, losses / n], size=resamples)
            boot = (draws[:, 0] + draws[:, 1] / 2) / n - 0.5
            low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
        else:
            low = high = float("nan")
        rows.append({"a": labels[i], "b": labels[j], "n": n, "n_unclicked": int((~clicked).sum()), "wins": wins,
                     "ties": ties, "losses": losses, "delta": delta, "ci_low": float(low), "ci_high": float(high),
                     "p_value": p_value})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p_value"].to_numpy()) if len(table) else []
    return table
