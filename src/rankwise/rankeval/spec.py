"""The rank evaluation spec: Elasticsearch's ``_rank_eval`` request body, read unchanged, plus
rankwise's ``metrics`` (a list of any metric names) and ``systems`` (named configurations).

An Elasticsearch body::

    {"requests": [{"id": "q1", "request": {"query": {"match": {"body": "heat"}}},
                   "ratings": [{"_index": "docs", "_id": "12", "rating": 2}]},
                  {"id": "q2", "template_id": "t", "params": {"query": "wing flutter"},
                   "ratings": [...]}],
     "metric": {"dcg": {"k": 10, "normalize": true}},
     "templates": [{"id": "t", "template": {"source": {"query": {"match": {"body": "{{query}}"}}}}}],
     "max_concurrent_searches": 10}

rankwise adds ``"metrics": ["ndcg@10", "P@10", {"expected_reciprocal_rank": {...}}]`` and
``"systems": {"title": {"templates": [...]}, "boosted": {"templates": [...]}}``: every system
runs the same requests with its own templates (a template id it does not redefine keeps the
spec's template). Errors name their JSON path: ``requests[3].params.query: missing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankwise.errors import RankwiseError, SpecError


@dataclass(frozen=True)
class Rating:
    """One judged document of a request (Elasticsearch's ``{"_index", "_id", "rating"}``)."""

    index: str | None
    doc_id: str
    rating: int


@dataclass(frozen=True)
class RatingQuery:
    """Semi-automatic judgments: a search whose top ``size`` hits all get ``rating`` (a rating
    written out for a document wins over it)."""

    request: dict[str, Any]
    rating: int
    size: int = 100


@dataclass
class RatedRequest:
    """One request: a literal search body or a template with parameters, its ratings, and
    searches that rate their hits (``rating_queries``)."""

    id: str
    request: dict[str, Any] | None
    template_id: str | None
    params: dict[str, Any]
    ratings: list[Rating]
    rating_queries: list[RatingQuery] = field(default_factory=list)


@dataclass
class System:
    """A named configuration: templates by id (the spec's, overridden by the system's)."""

    name: str
    templates: dict[str, Any]


@dataclass
class RankEvalSpec:
    """A parsed spec. ``metrics`` holds metric names or Elasticsearch metric objects, the
    Elasticsearch ``metric`` first."""

    requests: list[RatedRequest]
    metrics: list[Any]
    systems: list[System]
    max_concurrent_searches: int = 10
    size: int | None = None
    source: str = "<spec>"
    notes: list[str] = field(default_factory=list)
    """What the spec asks for that rankwise does not do (reported as warnings)."""


TOP_LEVEL = ("requests", "metric", "metrics", "templates", "max_concurrent_searches", "systems", "size")


def load_spec(path: str | Path) -> RankEvalSpec:
    """Read a spec from a JSON or YAML file (YAML needs PyYAML, installed with rankwise).

    >>> import json, tempfile, os
    >>> body = {"requests": [{"id": "q1", "request": {"query": {"match_all": {}}},
    ...          "ratings": [{"_index": "i", "_id": "d1", "rating": 1}]}], "metric": {"precision": {"k": 5}}}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     json.dump(body, f)
    >>> spec = load_spec(f.name); os.unlink(f.name)
    >>> spec.requests[0].ratings, spec.metrics
    ([Rating(index='i', doc_id='d1', rating=1)], [{'precision': {'k': 5}}])
    """
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SpecError(f"cannot read the spec ({err.strerror})", source=source) from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[:err.start].count(b"\n") + 1
        raise SpecError(f"line {line}: invalid UTF-8 (byte {err.object[err.start]:#04x}); the spec must be UTF-8 text",
                        source=source) from None
    from rankwise.data.documents import parse_json, parse_yaml
    from rankwise.errors import InputError

    try:   # the one door for documents: a repeated key, deep nesting and bad syntax are errors
        body = (parse_yaml if path.suffix.lower() in (".yaml", ".yml") else parse_json)(text, source)
    except InputError as err:
        raise SpecError(f"{'line ' + str(err.line) + ': ' if err.line else ''}{err.detail}", source=source) from None
    return parse_spec(body, source)


def parse_spec(body: Any, source: str = "<spec>") -> RankEvalSpec:
    """Check and read a spec body (a dict shaped like Elasticsearch's ``_rank_eval`` request).

    >>> parse_spec({"requests": [{"id": "q", "template_id": "t", "params": {}, "ratings": []}]})
    Traceback (most recent call last):
    ...
    rankwise.errors.SpecError: <spec>: requests[0].template_id: unknown template 't'; the spec defines none
    """
    def fail(message: str, path: str = "") -> SpecError:
        return SpecError(message, path=path, source=source)

    if not isinstance(body, dict):
        raise fail(f"expected a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - set(TOP_LEVEL))
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(TOP_LEVEL)}")
    templates = _templates(body.get("templates", []), "templates", fail)
    systems: list[System] = []
    raw_systems = body.get("systems")
    if raw_systems is not None:
        if not isinstance(raw_systems, dict) or not raw_systems:
            raise fail("expected an object of named systems, e.g. {\"title\": {\"templates\": [...]}}", "systems")
        for name, conf in raw_systems.items():
            where = f"systems.{name}"
            if not isinstance(conf, dict) or set(conf) - {"templates"}:
                raise fail("expected {\"templates\": [...]}", where)
            systems.append(System(str(name), {**templates, **_templates(conf.get("templates", []),
                                                                          f"{where}.templates", fail)}))
    else:
        systems.append(System("default", templates))
    requests = _requests(body.get("requests"), systems, fail)
    notes = []
    summary = [str(r.get("id")) for r in body["requests"] if isinstance(r, dict) and "summary_fields" in r]
    if summary:
        notes.append(f"{len(summary)} request(s) ask for summary_fields (e.g. {summary[0]!r}); hits carry "
                     "_index, _id and _score only, so they are not returned")
    located: list[tuple[str, Any]] = []
    if "metric" in body:
        if not isinstance(body["metric"], dict) or len(body["metric"]) != 1:
            raise fail("expected one Elasticsearch metric, e.g. {\"dcg\": {\"k\": 10}}", "metric")
        located.append(("metric", body["metric"]))
    extra = body.get("metrics", [])
    if not isinstance(extra, list) or not all(isinstance(m, (str, dict)) for m in extra):
        raise fail("expected a list of metric names or Elasticsearch metric objects", "metrics")
    located += [(f"metrics[{i}]", m) for i, m in enumerate(extra)]
    if not located:
        raise fail("missing: give \"metric\" (Elasticsearch) or \"metrics\" (a list)", "metric")
    _check_metrics(located, fail)
    metrics = [m for _, m in located]
    concurrency = body.get("max_concurrent_searches", 10)
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise fail(f"expected a positive integer, got {concurrency!r}", "max_concurrent_searches")
    size = body.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 1):
        raise fail(f"expected a positive integer, got {size!r}", "size")
    if size is not None and size > 10_000:
        raise fail(f"at most 10000 hits per search (Elasticsearch's max_result_window), got {size}", "size")
    return RankEvalSpec(requests, metrics, systems, concurrency, size, source, notes)


def _templates(raw: Any, where: str, fail: Any) -> dict[str, Any]:
    """Elasticsearch's ``[{"id", "template": {"source" | "inline": object or string}}]``."""
    if not isinstance(raw, list):
        raise fail("expected a list of templates", where)
    out: dict[str, Any] = {}
    for i, t in enumerate(raw):
        path = f"{where}[{i}]"
        if not isinstance(t, dict) or "id" not in t:
            raise fail("expected {\"id\": ..., \"template\": {\"source\": ...}}", path)
        tpl = t.get("template")
        if not isinstance(tpl, dict):
            raise fail("missing: expected {\"source\": <search body or mustache string>}", f"{path}.template")
        if "source" in tpl:
            out[str(t["id"])] = tpl["source"]
        elif "inline" in tpl:
            out[str(t["id"])] = tpl["inline"]
        else:
            raise fail("missing: expected \"source\" (or \"inline\")", f"{path}.template.source")
        if not isinstance(out[str(t["id"])], (dict, str)):
            raise fail("expected a search body object or a mustache string", f"{path}.template.source")
    return out


def _requests(raw: Any, systems: list[System], fail: Any) -> list[RatedRequest]:
    if not isinstance(raw, list) or not raw:
        raise fail("missing: expected a non-empty list of rated requests", "requests")
    out: list[RatedRequest] = []
    seen: set[str] = set()
    known = set().union(*(s.templates for s in systems))
    for i, r in enumerate(raw):
        path = f"requests[{i}]"
        if not isinstance(r, dict):
            raise fail("expected an object", path)
        unknown = sorted(set(r) - {"id", "request", "template_id", "params", "ratings", "summary_fields",
                                   "rating_queries"})
        if unknown:
            raise fail(f"unknown key(s) {', '.join(unknown)}", path)
        if "id" not in r:
            raise fail("missing", f"{path}.id")
        rid = str(r["id"])
        if rid in seen:
            raise fail(f"duplicate request id {rid!r}", f"{path}.id")
        seen.add(rid)
        if ("request" in r) == ("template_id" in r):
            raise fail("expected exactly one of \"request\" and \"template_id\"", path)
        if "request" in r and not isinstance(r["request"], dict):
            raise fail("expected a search body object", f"{path}.request")
        template_id = str(r["template_id"]) if "template_id" in r else None
        if template_id is not None:
            if template_id not in known:
                have = ", ".join(sorted(known)) or "none"
                raise fail(f"unknown template {template_id!r}; the spec defines {have}", f"{path}.template_id")
            for s in systems:
                if template_id not in s.templates:
                    raise fail(f"system {s.name!r} has no template {template_id!r}", f"{path}.template_id")
        params = r.get("params", {})
        if not isinstance(params, dict):
            raise fail("expected an object of template parameters", f"{path}.params")
        queries = _rating_queries(r.get("rating_queries", []), f"{path}.rating_queries", fail)
        ratings = _ratings(r.get("ratings", [] if queries else None), path, fail)
        out.append(RatedRequest(rid, r.get("request"), template_id, params, ratings, queries))
    return out


def _rating_queries(raw: Any, where: str, fail: Any) -> list[RatingQuery]:
    """``[{"request": {search body}, "rating": 1, "size": 100}]``."""
    if not isinstance(raw, list):
        raise fail("expected a list of {\"request\": {...}, \"rating\": N}", where)
    out = []
    for j, item in enumerate(raw):
        path = f"{where}[{j}]"
        if not isinstance(item, dict) or set(item) - {"request", "rating", "size"}:
            raise fail("expected {\"request\": {search body}, \"rating\": N, \"size\": hits (default 100)}", path)
        if not isinstance(item.get("request"), dict):
            raise fail("missing: expected a search body object", f"{path}.request")
        rating = item.get("rating")
        if isinstance(rating, bool) or not isinstance(rating, int):
            raise fail(f"expected an integer, got {rating!r}", f"{path}.rating")
        size = item.get("size", 100)
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 10_000:
            raise fail(f"expected a number of hits in 1..10000, got {size!r}", f"{path}.size")
        out.append(RatingQuery(item["request"], rating, size))
    return out


def _ratings(raw: Any, path: str, fail: Any) -> list[Rating]:
    if raw is None:
        raise fail("missing: expected a list (it may be empty)", f"{path}.ratings")
    if not isinstance(raw, list):
        raise fail("expected a list of {\"_index\", \"_id\", \"rating\"}", f"{path}.ratings")
    out: list[Rating] = []
    seen: dict[tuple[str | None, str], int] = {}
    for j, item in enumerate(raw):
        where = f"{path}.ratings[{j}]"
        if not isinstance(item, dict):
            raise fail("expected {\"_index\", \"_id\", \"rating\"}", where)
        if "_id" not in item:
            raise fail("missing", f"{where}._id")
        if "rating" not in item:
            raise fail("missing", f"{where}.rating")
        rating = item["rating"]
        if isinstance(rating, bool) or not isinstance(rating, int):
            raise fail(f"expected an integer, got {rating!r}", f"{where}.rating")
        doc = str(item["_id"])
        index = None if item.get("_index") is None else str(item["_index"])
        if (index, doc) in seen:
            raise fail(f"document {doc!r} is rated twice (first at ratings[{seen[index, doc]}])", f"{where}._id")
        seen[index, doc] = j
        out.append(Rating(index, doc, rating))
    return out


def _check_metrics(located: list[tuple[str, Any]], fail: Any) -> None:
    from rankwise.metrics.names import parse_metric

    for path, m in located:
        try:
            parse_metric(m)
        except RankwiseError as err:
            raise fail(str(err), path) from None
