"""The interleaving and multileaving methods, declared once: each draws one list
(``target``) and builds the distribution of its lists for fixed rankings (``lists``), with
its typed parameters. ``interleave`` and ``distribution`` (``interleaving``) call them.

>>> member, values = resolved("probabilistic(tau=2)")
>>> member.name, values
('probabilistic', {'tau': 2.0, 'teams': 'marginal'})
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, get_args

import numpy as np

from rankwise.errors import InputError
from rankwise.interleaving.distribution import (
    CREDIT_FUNCTIONS,
    ListDistribution,
    balanced_distribution,
    draw_optimized,
    optimized_distribution,
    sampled_distribution,
    team_draft_distribution,
)
from rankwise.interleaving.lists import Interleaved, Teams, draw_balanced, draw_probabilistic, draw_team_draft
from rankwise.params import Declared, Param, Registry


class BuildLists(Protocol):
    """An interleaving method's list distribution for fixed rankings: exact where it can be
    enumerated, else ``samples`` lists drawn; ``limit`` caps an enumeration."""

    def __call__(self, lists: list[list[Any]], size: int, samples: int, limit: int, rng: np.random.Generator,
                 **params: Any) -> ListDistribution: ...


def sampled(method: str, draw: Callable[..., Interleaved]) -> BuildLists:
    """The distribution of ``samples`` lists ``draw`` makes: the builder of a method whose
    lists are not enumerated."""
    def build(lists: list[list[Any]], size: int, samples: int, limit: int, rng: np.random.Generator,
              **params: Any) -> ListDistribution:
        return sampled_distribution(method, draw, lists, size, samples, rng, **params)
    return build


@dataclass(frozen=True)
class InterleavingMethod(Declared[Callable[..., Interleaved]]):
    """An interleaving method: ``target(lists, size, rng, **params)`` draws one list
    (``DrawList``), ``lists(lists, size, samples, limit, rng, **params)`` builds the
    distribution of its lists (``BuildLists``; default: drawn); ``max_rankings`` is 2 for a
    method that cannot multileave."""

    lists: Callable[..., ListDistribution] | None = None
    """A ``BuildLists``: the method's own distribution builder (exact where it can be)."""
    max_rankings: int | None = None

    def draw(self, lists: list[list[Any]], size: int, rng: np.random.Generator, values: dict[str, Any]) -> Interleaved:
        """One list with the resolved parameter ``values``."""
        return self.target(lists, size, rng, **values)

    def distribution(self, lists: list[list[Any]], size: int, samples: int, limit: int, rng: np.random.Generator,
                     values: dict[str, Any]) -> ListDistribution:
        """The distribution of the method's lists with the resolved parameter ``values``."""
        build = self.lists or sampled(self.name, self.target)
        return build(lists, size, samples, limit, rng, **values)


TAU = Param("tau", float, 3.0, "probabilistic: a ranking draws rank r with probability proportional to 1 / r^tau",
            low=0)
TEAMS = Param("teams", str, "marginal", "probabilistic: credit each click by the probability that each ranking "
              "placed it, over every team assignment that could have made the list (marginal, Hofmann et al. "
              "2011), or to the ranking that drew it (drawn)", choices=get_args(Teams))
CREDIT = Param("credit", str, "inverse", "optimized: a document's credit for a ranking, 1 / rank (inverse) or "
               "-rank (negative)", choices=CREDIT_FUNCTIONS)

INTERLEAVING_METHODS: Registry[InterleavingMethod] = Registry("interleaving method", (
    InterleavingMethod("balanced", draw_balanced, "Merge so every prefix holds the top k_a of A and k_b of B, "
                       "|k_a - k_b| <= 1; credit the clicks in each ranking's top k.", lists=balanced_distribution,
                       max_rankings=2, reference="Joachims 2003"),
    InterleavingMethod("team-draft", draw_team_draft, "Rankings pick in a random order each round; credit the "
                       "clicks on each team's documents (multileaves more than two).", aliases=("td",),
                       lists=team_draft_distribution, reference="Radlinski et al. 2008; Schuth et al. 2014"),
    InterleavingMethod("probabilistic", draw_probabilistic, "Each position goes to a random ranking, which draws a "
                       "document with probability proportional to 1 / rank^tau; a click credits each ranking the "
                       "probability that it placed the document.", (TAU, TEAMS), aliases=("pi",),
                       reference="Hofmann et al. 2011"),
    InterleavingMethod("optimized", draw_optimized, "A list from the unbiased, most sensitive distribution a linear "
                       "program gives; a click credits 1 / rank in each ranking.", (CREDIT,), aliases=("oi",),
                       lists=optimized_distribution, reference="Radlinski & Craswell 2013; Schuth et al. 2014"),
), option="--method")
"""The interleaving and multileaving methods."""


def resolved(method: str, **keywords: Any) -> tuple[InterleavingMethod, dict[str, Any]]:
    """The method a spelling names (``probabilistic(tau=2)``) and its parameters' values;
    keywords (``tau=``, ``teams=``, ``credit=``) join them for a method that declares them."""
    return INTERLEAVING_METHODS.parse_with_keywords(method, **keywords)


def check_rankings(rankings: Sequence[Sequence[Any]], method: InterleavingMethod) -> list[list[Any]]:
    """The rankings as lists, after the checks every method needs."""
    lists = [list(r) for r in rankings]
    if len(lists) < 2:
        raise InputError("interleaving needs at least two rankings", field="rankings")
    if method.max_rankings is not None and len(lists) > method.max_rankings:
        most = "exactly" if method.max_rankings == 2 else "at most"
        raise InputError(f"{method.name} interleaving takes {most} {method.max_rankings} rankings (team-draft, "
                         "probabilistic and optimized multileave more)", field="rankings")
    for i, ranking in enumerate(lists):
        if len(set(ranking)) != len(ranking):
            raise InputError(f"ranking {i} lists a document twice", field="rankings")
    return lists


__all__ = ["CREDIT", "INTERLEAVING_METHODS", "TAU", "TEAMS", "BuildLists", "InterleavingMethod",
           "check_rankings", "resolved", "sampled"]
