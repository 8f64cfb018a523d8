"""Elasticsearch and OpenSearch backends through their official Python clients (the
``elasticsearch`` / ``opensearch`` extras): rendered searches go out in ``_msearch`` batches, and
the server's own ``_rank_eval`` can cross-check rankwise's numbers."""

from __future__ import annotations

from typing import Any

from rankwise.errors import RankwiseError
from rankwise.rankeval.backends import SEARCH_TYPES, BackendError, Hit, split_key

FLAVORS = ("elasticsearch", "opensearch")


def _client(flavor: str, url: str, api_key: str | None, username: str | None, password: str | None,
            verify_certs: bool, timeout: float) -> Any:
    auth = (username, password or "") if username is not None else None
    if flavor == "elasticsearch":
        try:
            from elasticsearch import Elasticsearch
        except ImportError:
            raise RankwiseError("the Elasticsearch backend needs the client: pip install 'rankwise[elasticsearch]'") \
                from None
        return Elasticsearch(url, api_key=api_key, basic_auth=auth, verify_certs=verify_certs,
                             request_timeout=timeout)
    try:
        from opensearchpy import OpenSearch
    except ImportError:
        raise RankwiseError("the OpenSearch backend needs the client: pip install 'rankwise[opensearch]'") from None
    headers = {"Authorization": f"ApiKey {api_key}"} if api_key else None
    return OpenSearch(hosts=[url], http_auth=auth, verify_certs=verify_certs, timeout=timeout, headers=headers)


class ElasticsearchBackend:
    """Run searches on an Elasticsearch or OpenSearch index.

    The server is contacted once when the backend is made: an unreachable server (or a wrong
    URL or credentials) is one clear error, before any request runs.
    """

    def __init__(self, url: str, index: str, *, flavor: str = "elasticsearch", api_key: str | None = None,
                 username: str | None = None, password: str | None = None, verify_certs: bool = True,
                 timeout: float = 30.0, client: Any = None, search_type: str | None = None) -> None:
        if flavor not in FLAVORS:
            raise RankwiseError(f"backend {flavor!r}: expected one of {', '.join(FLAVORS)}")
        if search_type is not None and search_type not in SEARCH_TYPES:
            raise RankwiseError(f"search_type {search_type!r}: expected one of {', '.join(SEARCH_TYPES)}")
        self.search_type = search_type
        self.flavor = flavor
        self.url = url
        self.name = index
        self.client = client or _client(flavor, url, api_key, username, password, verify_certs, timeout)
        try:
            info = self.client.info()
        except Exception as err:  # any transport or auth failure: one message, nothing runs
            raise RankwiseError(f"cannot reach {flavor} at {url}: {type(err).__name__}: {err}") from None
        self.version = str(_body(info).get("version", {}).get("number", "unknown"))

    def msearch(self, bodies: list[dict[str, Any]], size: int, concurrency: int) -> list[list[Hit] | Exception]:
        """One ``_msearch`` round trip; each search's hits, or its error as an exception."""
        searches: list[dict[str, Any]] = []
        header: dict[str, Any] = {"index": self.name}
        if self.search_type is not None:
            header["search_type"] = self.search_type
        for body in bodies:
            searches += [header, {**body, "size": size}]
        try:
            if self.flavor == "elasticsearch":
                response = self.client.msearch(searches=searches, max_concurrent_searches=concurrency)
            else:
                response = self.client.msearch(body=searches, params={"max_concurrent_searches": concurrency})
        except Exception as err:  # the whole batch failed: every search in it is a failure
            return [BackendError(f"{self.flavor} _msearch failed: {type(err).__name__}: {err}")] * len(bodies)
        responses = _body(response).get("responses", [])
        if len(responses) != len(bodies):
            return [BackendError(f"{self.flavor} returned {len(responses)} responses for {len(bodies)} "
                                 "searches")] * len(bodies)
        return [_hits(r) for r in responses]

    def search(self, request: dict[str, Any], size: int) -> list[Hit]:
        (result,) = self.msearch([request], size, 1)
        if isinstance(result, Exception):
            raise result
        return result

    def rank_eval(self, body: dict[str, Any]) -> dict[str, Any]:
        """The server's own ``_rank_eval`` answer for ``body`` (requests, metric)."""
        extra = {} if self.search_type is None else {"search_type": self.search_type}
        if self.flavor == "elasticsearch":
            response = self.client.rank_eval(index=self.name, requests=body["requests"], metric=body["metric"],
                                             **extra)
        else:
            response = self.client.rank_eval(index=self.name, body=body, params=extra or None)
        return _body(response)


def _body(response: Any) -> dict[str, Any]:
    """The JSON body of a client response (ObjectApiResponse in elasticsearch-py 8+, dict in
    opensearch-py)."""
    return dict(getattr(response, "body", response))


def _hits(response: dict[str, Any]) -> list[Hit] | Exception:
    if "error" in response:
        error = response["error"]
        reason = error.get("reason", error) if isinstance(error, dict) else error
        kind = error.get("type", "error") if isinstance(error, dict) else "error"
        return BackendError(f"{kind}: {reason} (status {response.get('status', '?')})")
    return [Hit(str(h.get("_index", "")), str(h["_id"]), float(h.get("_score") or 0.0))
            for h in response.get("hits", {}).get("hits", [])]


def cross_check(result: Any, backend: ElasticsearchBackend) -> dict[str, Any]:
    """Ask the server's ``_rank_eval`` for each system's Elasticsearch metric, on the same
    rendered requests and ratings, and report how far rankwise's numbers are from it."""
    from rankwise.metrics.names import parse_metric

    metric = result.spec.metrics[0]
    if not isinstance(metric, dict) or parse_metric(metric).family.elasticsearch is None:
        raise RankwiseError("a cross-check needs an Elasticsearch \"metric\" in the spec")
    label = parse_metric(metric).label
    out: dict[str, Any] = {}
    for name, hits in result.systems.items():
        requests = []
        for rid, body in hits.bodies.items():
            ratings = result.ratings.get(rid, {})
            if rid in hits.hits and ratings:
                keys = [split_key(d) for d in ratings]
                requests.append({"id": rid, "request": body, "ratings": [
                    {"_index": index or backend.name, "_id": d, "rating": r}
                    for (index, d), r in zip(keys, ratings.values(), strict=True)]})
        server = backend.rank_eval({"requests": requests, "metric": metric})
        ours = result.evaluations[name].per_query.loc[name][label] if result.evaluations[name] else None
        diffs = {}
        for rid, detail in server.get("details", {}).items():
            mine = float(ours[rid]) if ours is not None and rid in ours.index else 0.0
            diffs[rid] = abs(mine - float(detail["metric_score"]))
        out[name] = {"server_metric_score": server.get("metric_score"),
                     "rankwise_metric_score": result.score(name, label),
                     "max_abs_difference": max(diffs.values(), default=0.0),
                     "requests_differing": sorted(r for r, d in diffs.items() if d > 1e-9),
                     "server_failures": server.get("failures", {})}
    return out
