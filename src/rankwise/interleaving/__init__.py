"""Interleaving and multileaving: balanced, team-draft, probabilistic and optimized lists, the
credit each list earns from clicks, per-query preferences, and simulations of users (their
click models come from ``rankwise.clicks``) that compare interleaving with an A/B test.

>>> from rankwise import interleaving
>>> shown = interleaving.interleave([["a", "b"], ["b", "c"]], "team-draft", rng=0)
>>> shown.docs, shown.teams.tolist()   # each document's team: the list that contributed it
(['a', 'b'], [0, 1])
>>> shown.credit([0]).tolist()   # a click on the first document credits list 0
[1, 0]
"""

from __future__ import annotations

from rankwise.interleaving.distribution import ListDistribution
from rankwise.interleaving.interleave import Interleaved, distribution, interleave, preferences

__all__ = ["Interleaved", "ListDistribution", "distribution", "interleave", "preferences"]
