"""The one merge protocol every accumulating state follows.

A state (a streaming metric, a ``MultiMetric``, the A/B ``VariantMoments``, a click model's
``SufficientStatistics``, a JAX metric state) summarises the rows it has seen so that the state
of two disjoint sets of rows is a function of their two states:

- ``a.merge(b)`` (and ``a + b``) returns a **new** state of both inputs; ``a`` and ``b`` are
  left as they were;
- ``a.empty()`` is a state of no rows, with ``a``'s configuration: the identity of ``merge``;
- the order of merges changes nothing beyond floating-point rounding.

Where a peer's API works in place (torchmetrics' ``merge_state``), the state offers that name
as well, documented as in place. ``tests/test_merging.py`` checks every registered
state against these three rules.

>>> from rankwise.streaming import MeanSquaredError
>>> a = MeanSquaredError().update(predictions=[1.0], targets=[0.0])
>>> b = MeanSquaredError().update(predictions=[3.0], targets=[0.0])
>>> (a + b).compute(), a.compute()          # (1 + 9) / 2; a is unchanged
(5.0, 1.0)
>>> merge_all([a, b, a.empty()]).compute()
5.0
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, TypeVar, runtime_checkable

from rankwise.errors import RankwiseError

S = TypeVar("S", bound="Mergeable")


@runtime_checkable
class Mergeable(Protocol):
    """A state with a non-mutating ``merge`` and an ``empty`` identity."""

    def merge(self: S, other: S) -> S:
        """A new state of both inputs."""
        ...

    def empty(self: S) -> S:
        """A state of no rows with this state's configuration."""
        ...


def merge_all(states: Iterable[Any]) -> Any:
    """The states merged in the order given (the first one's configuration), none of them
    changed. States that can also merge in place (``merge_state``) are merged into one new
    state, so merging n states copies once, not n times.

    >>> merge_all([])
    Traceback (most recent call last):
    ...
    rankwise.errors.RankwiseError: nothing to merge: no state
    """
    iterator = iter(states)
    try:
        out = next(iterator)
    except StopIteration:
        raise RankwiseError("nothing to merge: no state") from None
    owned = False
    for state in iterator:
        if owned and hasattr(out, "merge_state"):
            out.merge_state(state)
        else:
            out = out.merge(state)
            owned = True
    return out
