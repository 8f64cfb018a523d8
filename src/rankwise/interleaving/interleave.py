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
  in that ranking (``tau`` 3 by default). Credit (``teams="marginal"``, the paper's): each
  click credits each ranking the probability that it placed the document, marginalising over
  every team assignment that could have produced the list (``probabilistic_posterior``);
  ``teams="drawn"`` credits the ranking that actually drew it.
- ``optimized`` (Radlinski & Craswell 2013; multileaving, Schuth et al. 2014): a list drawn
  from the distribution over prefix-constrained lists that a linear program makes unbiased
  and most sensitive; a click credits each ranking ``1 / rank`` of the clicked document in
  it (see ``rankwise.interleaving.distribution``). For many impressions of the same rankings,
  build ``distribution(rankings, "optimized")`` once and ``draw`` from it.

An impression's outcome between two rankings is a win, a tie or a loss by credit.
``preferences`` aggregates outcomes: per pair wins, ties, losses, the preference ``delta =
(wins + ties / 2) / n - 0.5``, the binomial sign test over the non-tied impressions, a
bootstrap interval for ``delta`` and Holm's correction across pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankwise.errors import InputError
from rankwise.interleaving.distribution import ListDistribution
from rankwise.interleaving.lists import Interleaved, Teams
from rankwise.interleaving.methods import InterleavingMethod, check_rankings, resolved
from rankwise.results import TableResult, signed


def interleave(rankings: Sequence[Sequence[Any]], method: str = "team-draft", length: int | None = None,
               rng: np.random.Generator | int | None = None, tau: float | None = None,
               teams: Teams | None = None) -> Interleaved:
    """Interleave ``rankings`` (lists of document ids, best first) into one list of at most
    ``length`` documents (default: the shortest ranking's length). ``method`` is a spelling
    with its parameters (``probabilistic(tau=2)``); ``tau`` and ``teams`` join it for a
    method that declares them.

    >>> shown = interleave([["a", "b"], ["c", "d"]], "team-draft", rng=0)
    >>> shown.docs, shown.teams.tolist()   # one pick each per round, in a random order (here A first)
    (['a', 'c'], [0, 1])
    """
    member, values, lists, size, generator = _prepared(rankings, method, length, rng, tau=tau, teams=teams)
    return member.draw(lists, size, generator, values)


def distribution(rankings: Sequence[Sequence[Any]], method: str = "team-draft", length: int | None = None,
                 samples: int = 1000, limit: int = 5000, credit: str | None = None, tau: float | None = None,
                 rng: np.random.Generator | int | None = None, teams: Teams | None = None) -> ListDistribution:
    """The lists ``method`` shows for ``rankings`` and their probabilities, built once for many
    impressions: exact for balanced, team-draft (up to ``limit`` pick orders) and optimized
    (up to ``limit`` allowed lists), else ``samples`` lists drawn (see
    ``rankwise.interleaving.distribution``). ``credit``, ``tau`` and ``teams`` join the
    spelling for a method that declares them.

    >>> table = distribution([[1, 2], [2, 3]], "optimized")   # mpkato/interleaving's case
    >>> {tuple(docs): round(float(p), 6) for docs, p in zip(table.lists, table.probabilities)}
    {(1, 2): 0.428571, (2, 1): 0.371429, (2, 3): 0.2}
    """
    member, values, lists, size, generator = _prepared(rankings, method, length, rng, credit=credit, tau=tau,
                                                       teams=teams)
    return member.distribution(lists, size, samples, limit, generator, values)


def _prepared(rankings: Sequence[Sequence[Any]], method: str, length: int | None,
              rng: np.random.Generator | int | None, **keywords: Any
              ) -> tuple[InterleavingMethod, dict[str, Any], list[list[Any]], int, np.random.Generator]:
    """What ``interleave`` and ``distribution`` both start from: the method and its parameters,
    the checked rankings, the list length (the shortest ranking's by default) and the generator."""
    member, values = resolved(method, **keywords)
    lists = check_rankings(rankings, member)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    size = min(len(r) for r in lists) if length is None else int(length)
    return member, values, lists, size, generator


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
                resamples: int = 2000, seed: int = 0, clicked_only: bool = False) -> TableResult:
    """Wins, ties and losses of each pair of rankings over impressions, the preference
    ``delta = (wins + ties/2) / n - 0.5`` (positive: the first of the pair is preferred), the
    two-sided binomial sign test over non-tied impressions, a percentile bootstrap interval
    of ``delta`` and Holm-corrected p-values across pairs. ``n_unclicked`` counts the
    impressions without a click for either ranker of the pair: ties in ``n`` by default, left
    out with ``clicked_only``. A ``TableResult``: one row per pair in ``table``.

    >>> result = preferences(np.array([[1, 0]] * 8 + [[0, 1]] * 2 + [[0, 0]] * 2), names=["A", "B"])
    >>> row = result.table.iloc[0]
    >>> [int(row[c]) for c in ("wins", "ties", "losses")], float(row["delta"])   # (8 + 2/2) / 12 - 0.5
    ([8, 2, 2], 0.25)
    >>> round(float(row["p_value"]), 4)   # binomial: 8 of 10 non-tied, two-sided
    0.1094
    """
    import pandas as pd

    from rankwise.stats.checks import resample_count, significance_level
    from rankwise.stats.corrections import holm
    from rankwise.stats.distributions import sign_test_p
    from rankwise.stats.resampling import multinomial_counts, percentile_interval

    alpha, resamples = significance_level(alpha), resample_count(resamples)
    credits = np.atleast_2d(np.asarray(credits))
    labels = list(names) if names is not None else [f"ranker {i}" for i in range(credits.shape[1])]
    if len(labels) != credits.shape[1]:
        raise InputError(f"{len(labels)} names for {credits.shape[1]} rankings", field="names")
    rng = np.random.default_rng(seed)
    rows = []
    for (i, j), outcome in outcomes(credits).items():
        unclicked = (credits[:, i] + credits[:, j]) == 0
        clicked = ~unclicked if clicked_only else np.ones(len(outcome), dtype=bool)
        kept = outcome[clicked]
        n = len(kept)
        wins, losses = int((kept > 0).sum()), int((kept < 0).sum())
        ties = n - wins - losses
        delta = (wins + ties / 2) / n - 0.5 if n else float("nan")
        p_value = sign_test_p(wins, losses)
        if n:
            draws = multinomial_counts([wins, ties, losses], resamples, rng)
            boot = (draws[:, 0] + draws[:, 1] / 2) / n - 0.5
            low, high = percentile_interval(boot, alpha)
        else:
            low = high = float("nan")
        rows.append({"a": labels[i], "b": labels[j], "n": n, "n_unclicked": int(unclicked.sum()), "wins": wins,
                     "ties": ties, "losses": losses, "delta": delta, "ci_low": float(low), "ci_high": float(high),
                     "p_value": p_value})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p_value"].to_numpy()) if len(table) else []
    settings = {"rankers": labels, "impressions": int(credits.shape[0]), "alpha": alpha, "resamples": resamples,
                "seed": seed, "clicked_only": clicked_only, "test": "sign", "correction": "holm"}
    return TableResult(table, signed("preferences", settings))


def read_credits(data: Any, rankers: Sequence[str] = ()) -> tuple[np.ndarray, list[str]]:
    """Per-impression credits (impressions x rankers) from files or tables with one column
    per ranker (``rankers``; by default every numeric column), with the column names.

    >>> read_credits({"A": [1, 0], "B": [0, 2], "query": ["q1", "q2"]})
    (array([[1., 0.],
           [0., 2.]]), ['A', 'B'])
    """
    import pyarrow as pa

    from rankwise.data.tables import tables_of
    from rankwise.experiments.events import number_column

    pieces = tables_of(data, list(rankers) or None)
    names = list(rankers) or [f.name for f in pieces[0][2].schema
                              if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    if len(names) < 2:
        header = pieces[0][2].column_names
        hint = ""
        if any(";" in c for c in header):
            hint = "; the header holds ';': rankwise reads comma-separated CSV or tab-separated TSV"
        elif not list(rankers):
            hint = f"; name the rankers' columns with --ranker (it has {', '.join(map(repr, header))})"
        raise InputError(f"credits for at least two rankers are needed; found the numeric columns {names}{hint}",
                         source=pieces[0][0], field="rankers")
    columns = [np.concatenate([np.asarray(number_column(name, first, table.column(c).combine_chunks(), c),
                                          dtype=np.float64) for name, first, table in pieces]) for c in names]
    return np.column_stack(columns), names
