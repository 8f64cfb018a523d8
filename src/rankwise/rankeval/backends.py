"""The search backend interface: ``search(request, size) -> ranked hits``, and the one for any
Python callable (a vector index, a reranker, a recommender)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rankwise.errors import BackendError, RankwiseError


@dataclass(frozen=True)
class Hit:
    """One retrieved document: its index, id and score, in the engine's rank order."""

    index: str
    doc_id: str
    score: float


class Backend(Protocol):
    """Anything that runs a search body and returns hits in rank order."""

    name: str

    def search(self, request: dict[str, Any], size: int) -> list[Hit]:
        """The top ``size`` hits of the search body ``request``."""
        ...


class CallableBackend:
    """A Python function as a backend: ``fn(request, size)`` returns ranked ids, ``(id, score)``
    pairs or ``{id: score}``; ids without scores get ``size - rank``.

    >>> backend = CallableBackend(lambda request, size: ["d3", "d1"][:size])
    >>> backend.search({"query": {"match_all": {}}}, 2)
    [Hit(index='callable', doc_id='d3', score=2.0), Hit(index='callable', doc_id='d1', score=1.0)]
    """

    def __init__(self, fn: Callable[[dict[str, Any], int], Any], name: str = "callable") -> None:
        self.fn = fn
        self.name = name

    def search(self, request: dict[str, Any], size: int) -> list[Hit]:
        try:
            out = self.fn(request, size)
        except RankwiseError:
            raise
        except Exception as err:  # the callable's own failure becomes this request's failure
            raise BackendError(f"{type(err).__name__}: {err}") from err
        return hits_from(out, self.name, size)


def hits_from(out: Any, index: str, size: int) -> list[Hit]:
    """Normalise what a callable returned into hits (at most ``size``)."""
    if isinstance(out, dict):
        pairs: Sequence[Any] = sorted(out.items(), key=lambda kv: -float(kv[1]))
    else:
        pairs = list(out)
    hits = []
    for rank, item in enumerate(pairs[:size]):
        if isinstance(item, (tuple, list)) and len(item) == 2:
            doc, score = item
        else:
            doc, score = item, float(len(pairs[:size]) - rank)
        hits.append(Hit(index, str(doc), float(score)))
    return hits
