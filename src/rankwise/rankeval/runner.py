"""Run every rated request of every system against a backend, concurrently; a failing request
becomes a failure entry and never stops the others."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rankwise.errors import RankwiseError
from rankwise.rankeval.backends import Backend, BackendError, Hit
from rankwise.rankeval.dsl import UnsupportedQuery
from rankwise.rankeval.spec import RankEvalSpec, RatedRequest, System
from rankwise.rankeval.templates import TemplateError, render


@dataclass
class SystemHits:
    """What one system's searches returned: hits per request, failures per request, timing."""

    name: str
    hits: dict[str, list[Hit]] = field(default_factory=dict)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0

    def record(self, request_id: str, result: list[Hit] | Exception,
               advance: Callable[[], None] | None = None) -> None:
        """Keep a search's hits, or its error as a failure entry."""
        if isinstance(result, Exception):
            self.failures[request_id] = _classify(result)
        else:
            self.hits[request_id] = result
        if advance:
            advance()


def body_of(request: RatedRequest, system: System) -> dict[str, Any]:
    """The search body of a request under a system: the literal request or its rendered template."""
    if request.request is not None:
        return request.request
    assert request.template_id is not None
    return render(request.template_id, system.templates[request.template_id], request.params)


def failure(kind: str, reason: str) -> dict[str, Any]:
    """An Elasticsearch-shaped failure entry.

    >>> failure("template_error", "template 't': missing parameter 'q'")
    {'error': {'type': 'template_error', 'reason': "template 't': missing parameter 'q'"}}
    """
    return {"error": {"type": kind, "reason": reason}}


def _classify(err: Exception) -> dict[str, Any]:
    if isinstance(err, TemplateError):
        return failure("template_error", str(err))
    if isinstance(err, UnsupportedQuery):
        return failure("unsupported_query", str(err))
    if isinstance(err, BackendError):
        return failure("backend_error", str(err))
    return failure("backend_error", f"{type(err).__name__}: {err}")


def run_system(spec: RankEvalSpec, system: System, backend: Backend, size: int, concurrency: int,
               advance: Callable[[], None] | None = None) -> SystemHits:
    """Search every request of ``spec`` with ``system``'s templates; bodies that fail to render
    or translate, and searches that fail, are recorded as failures."""
    out = SystemHits(system.name)
    start = time.perf_counter()
    todo: list[tuple[str, dict[str, Any]]] = []
    for request in spec.requests:
        try:
            body = body_of(request, system)
        except TemplateError as err:
            out.failures[request.id] = _classify(err)
            if advance:
                advance()
            continue
        out.bodies[request.id] = body
        todo.append((request.id, body))
    msearch = getattr(backend, "msearch", None)
    if msearch is not None:  # one round trip per batch (Elasticsearch's _msearch)
        batch = max(concurrency * 10, 50)
        for i in range(0, len(todo), batch):
            chunk = todo[i:i + batch]
            for (rid, _), result in zip(chunk, msearch([b for _, b in chunk], size, concurrency), strict=True):
                out.record(rid, result, advance)
    else:
        def one(item: tuple[str, dict[str, Any]]) -> tuple[str, list[Hit] | Exception]:
            rid, body = item
            try:
                return rid, backend.search(body, size)
            except (RankwiseError, ValueError, KeyError, TypeError, OSError) as err:
                return rid, err

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            for rid, result in pool.map(one, todo):
                out.record(rid, result, advance)
    out.seconds = time.perf_counter() - start
    return out
