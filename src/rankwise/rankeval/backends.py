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

    def key(self, match_index: bool = False) -> str:
        """The key ratings are matched on (``document_key``)."""
        return document_key(self.index, self.doc_id, match_index)


INDEX_SEPARATOR = "\x1f"
"""Joins ``_index`` and ``_id`` into one document key when ratings are matched on both."""
SEARCH_TYPES = ("query_then_fetch", "dfs_query_then_fetch")
"""Elasticsearch's ``search_type`` values: per-shard term statistics, or the whole index's
(``dfs_``: one extra round trip). A one-shard backend scores both the same."""


def document_key(index: str | None, doc_id: str, match_index: bool) -> str:
    """The key a rating and a hit are matched on: the ``_id``, or ``_index`` and ``_id``
    (Elasticsearch's own matching) with ``match_index``.

    >>> document_key("docs", "12", False), split_key(document_key("docs", "12", True))
    ('12', ('docs', '12'))
    """
    return f"{index}{INDEX_SEPARATOR}{doc_id}" if match_index else doc_id


def split_key(key: str) -> tuple[str | None, str]:
    """(``_index`` or None, ``_id``) of a document key."""
    index, sep, doc = key.partition(INDEX_SEPARATOR)
    return (index, doc) if sep else (None, key)


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
