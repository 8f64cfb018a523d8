"""Elasticsearch query DSL -> Tantivy queries, for a documented subset.

Supported clauses (with Elasticsearch's scoring semantics, BM25 k1 = 1.2, b = 0.75):

- ``match_all``: every document, score 1 (``boost``).
- ``match``: ``{"field": "text"}`` or ``{"field": {"query", "operator": "or"|"and", "boost",
  "minimum_should_match": int}}``; the text is analysed like the field, each token a term query,
  scores summed.
- ``match_phrase``: ``{"field": "text"}`` or ``{"field": {"query", "slop", "boost"}}``.
- ``multi_match``: ``{"query", "fields": ["title^2", "body"], "type": "best_fields"|"most_fields",
  "operator", "tie_breaker", "boost"}``; best_fields is a dis-max over the fields (plus
  ``tie_breaker`` x the others), most_fields their sum; ``^n`` boosts a field.
- ``bool``: ``must``, ``should``, ``filter`` (must match, adds no score), ``must_not``,
  ``minimum_should_match`` (an integer), ``boost``.
- ``term`` (exact, not analysed) and ``terms`` (any of the values, constant score).
- ``query_string``: ``{"query", "default_field" | "fields", "default_operator"}``, parsed by
  Tantivy's query parser (Lucene-like syntax).

Anything else raises ``UnsupportedQuery`` naming the clause's path (``query.bool.must[1].fuzzy``),
which the runner turns into a failure for that request alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rankwise.errors import UnsupportedQuery

SUPPORTED = ("match_all", "match", "match_phrase", "multi_match", "bool", "term", "terms", "query_string")


@dataclass
class Target:
    """What translation needs from an index: its fields and how it analyses text."""

    fields: tuple[str, ...]
    id_field: str
    analyze: Callable[[str], list[str]]
    schema: Any
    parse_query: Callable[..., Any]


def translate(body: dict[str, Any], target: Target) -> Any:
    """The Tantivy query of a search body (``{"query": {...}}``; no query means match_all).

    >>> import tantivy
    >>> sb = tantivy.SchemaBuilder(); _ = sb.add_text_field("id", stored=True, tokenizer_name="raw")
    >>> _ = sb.add_text_field("body"); schema = sb.build(); index = tantivy.Index(schema)
    >>> t = Target(("body",), "id", lambda s: s.lower().split(), schema, index.parse_query)
    >>> translate({"query": {"match": {"body": "Heat flow"}}}, t) is not None
    True
    >>> try:
    ...     translate({"query": {"fuzzy": {"body": "heat"}}}, t)
    ... except UnsupportedQuery as err:
    ...     print(str(err).split(";")[0])
    query.fuzzy: not supported by the tantivy backend
    """
    unknown = sorted(set(body) - {"query", "size", "from", "_source", "track_total_hits", "timeout"})
    if unknown:
        raise UnsupportedQuery(f"{unknown[0]}: search option not supported by the tantivy backend "
                               "(only \"query\" is used; size comes from the metrics)")
    if "query" not in body:
        import tantivy

        return tantivy.Query.all_query()
    return _clause(body["query"], "query", target)


def _one(obj: Any, path: str) -> tuple[str, Any]:
    if not isinstance(obj, dict) or len(obj) != 1:
        raise UnsupportedQuery(f"{path}: expected an object with one query clause, got {obj!r}")
    return next(iter(obj.items()))


def _boosted(query: Any, boost: Any, path: str) -> Any:
    import tantivy

    if boost is None or boost == 1:
        return query
    if not isinstance(boost, (int, float)) or isinstance(boost, bool):
        raise UnsupportedQuery(f"{path}.boost: expected a number, got {boost!r}")
    return tantivy.Query.boost_query(query, float(boost))


def _field(target: Target, name: Any, path: str) -> str:
    if name not in target.fields and name != target.id_field:
        raise UnsupportedQuery(f"{path}: unknown field {name!r}; the index has {', '.join(target.fields)}")
    return str(name)


def _check_keys(options: dict[str, Any], allowed: tuple[str, ...], path: str) -> None:
    extra = sorted(set(options) - set(allowed))
    if extra:
        raise UnsupportedQuery(f"{path}.{extra[0]}: not supported by the tantivy backend; "
                               f"supported: {', '.join(allowed)}")


def _clause(obj: Any, path: str, target: Target) -> Any:
    name, value = _one(obj, path)
    where = f"{path}.{name}"
    handler = _HANDLERS.get(name)
    if handler is None:
        raise UnsupportedQuery(f"{where}: not supported by the tantivy backend; supported: {', '.join(SUPPORTED)}")
    return handler(value, where, target)


def _match_all(value: Any, path: str, target: Target) -> Any:
    import tantivy

    options = value or {}
    _check_keys(options, ("boost",), path)
    return _boosted(tantivy.Query.all_query(), options.get("boost"), path)


def _text_options(value: Any, path: str, allowed: tuple[str, ...]) -> tuple[str, str, dict[str, Any]]:
    field, spec = _one(value, path)
    options = spec if isinstance(spec, dict) else {"query": spec}
    _check_keys(options, allowed, f"{path}.{field}")
    if "query" not in options:
        raise UnsupportedQuery(f"{path}.{field}.query: missing")
    return field, str(options["query"]), options


def _terms_of(target: Target, field: str, text: str, operator: str, minimum: Any, path: str) -> Any:
    import tantivy

    tokens = target.analyze(text)
    if operator not in ("or", "and"):
        raise UnsupportedQuery(f"{path}.operator: expected 'or' or 'and', got {operator!r}")
    if not tokens:
        return tantivy.Query.empty_query()
    occur = tantivy.Occur.Must if operator == "and" else tantivy.Occur.Should
    clauses = [(occur, tantivy.Query.term_query(target.schema, field, tok, index_option="freq")) for tok in tokens]
    if minimum is not None and (not isinstance(minimum, int) or isinstance(minimum, bool)):
        raise UnsupportedQuery(f"{path}.minimum_should_match: only an integer is supported, got {minimum!r}")
    return tantivy.Query.boolean_query(clauses, minimum if operator == "or" else None)


def _match(value: Any, path: str, target: Target) -> Any:
    field, text, options = _text_options(value, path, ("query", "operator", "boost", "minimum_should_match"))
    field = _field(target, field, path)
    query = _terms_of(target, field, text, str(options.get("operator", "or")).lower(),
                      options.get("minimum_should_match"), f"{path}.{field}")
    return _boosted(query, options.get("boost"), f"{path}.{field}")


def _match_phrase(value: Any, path: str, target: Target) -> Any:
    import tantivy

    field, text, options = _text_options(value, path, ("query", "slop", "boost"))
    field = _field(target, field, path)
    tokens = target.analyze(text)
    if not tokens:
        return tantivy.Query.empty_query()
    if len(tokens) == 1:
        query = tantivy.Query.term_query(target.schema, field, tokens[0])
    else:
        terms: list[str | tuple[int, str]] = list(tokens)
        query = tantivy.Query.phrase_query(target.schema, field, terms, slop=int(options.get("slop", 0)))
    return _boosted(query, options.get("boost"), f"{path}.{field}")


def _multi_match(value: Any, path: str, target: Target) -> Any:
    import tantivy

    if not isinstance(value, dict):
        raise UnsupportedQuery(f"{path}: expected an object")
    _check_keys(value, ("query", "fields", "type", "operator", "tie_breaker", "boost"), path)
    if "query" not in value:
        raise UnsupportedQuery(f"{path}.query: missing")
    fields = value.get("fields") or list(target.fields)
    kind = value.get("type", "best_fields")
    if kind not in ("best_fields", "most_fields"):
        raise UnsupportedQuery(f"{path}.type: {kind!r} is not supported; supported: best_fields, most_fields")
    per_field = []
    for i, spec in enumerate(fields):
        name, _, boost = str(spec).partition("^")
        name = _field(target, name, f"{path}.fields[{i}]")
        query = _terms_of(target, name, str(value["query"]), str(value.get("operator", "or")).lower(), None, path)
        per_field.append(_boosted(query, float(boost) if boost else None, f"{path}.fields[{i}]"))
    if kind == "most_fields":
        combined = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_field])
    else:
        combined = tantivy.Query.disjunction_max_query(per_field, float(value.get("tie_breaker", 0.0)))
    return _boosted(combined, value.get("boost"), path)


def _bool(value: Any, path: str, target: Target) -> Any:
    import tantivy

    if not isinstance(value, dict):
        raise UnsupportedQuery(f"{path}: expected an object")
    _check_keys(value, ("must", "should", "filter", "must_not", "minimum_should_match", "boost"), path)
    clauses = []
    for key, occur in (("must", tantivy.Occur.Must), ("should", tantivy.Occur.Should),
                       ("filter", tantivy.Occur.Must), ("must_not", tantivy.Occur.MustNot)):
        items = value.get(key, [])
        items = items if isinstance(items, list) else [items]
        for i, item in enumerate(items):
            query = _clause(item, f"{path}.{key}[{i}]", target)
            if key == "filter":  # must match, adds no score
                query = tantivy.Query.const_score_query(query, 0.0)
            clauses.append((occur, query))
    if not clauses:
        return _boosted(tantivy.Query.all_query(), value.get("boost"), path)
    minimum = value.get("minimum_should_match")
    if minimum is not None and (not isinstance(minimum, int) or isinstance(minimum, bool)):
        raise UnsupportedQuery(f"{path}.minimum_should_match: only an integer is supported, got {minimum!r}")
    return _boosted(tantivy.Query.boolean_query(clauses, minimum), value.get("boost"), path)


def _term(value: Any, path: str, target: Target) -> Any:
    import tantivy

    field, spec = _one(value, path)
    options = spec if isinstance(spec, dict) else {"value": spec}
    _check_keys(options, ("value", "boost"), f"{path}.{field}")
    field = _field(target, field, path)
    if "value" not in options:
        raise UnsupportedQuery(f"{path}.{field}.value: missing")
    query = tantivy.Query.term_query(target.schema, field, str(options["value"]))
    return _boosted(query, options.get("boost"), f"{path}.{field}")


def _terms(value: Any, path: str, target: Target) -> Any:
    import tantivy

    if not isinstance(value, dict):
        raise UnsupportedQuery(f"{path}: expected an object")
    boost = value.get("boost")
    fields = [k for k in value if k != "boost"]
    if len(fields) != 1 or not isinstance(value[fields[0]], list):
        raise UnsupportedQuery(f"{path}: expected {{\"field\": [values]}}")
    field = _field(target, fields[0], path)
    query = tantivy.Query.term_set_query(target.schema, field, [str(v) for v in value[field]])
    return _boosted(tantivy.Query.const_score_query(query, 1.0), boost, path)


def _query_string(value: Any, path: str, target: Target) -> Any:
    if not isinstance(value, dict) or "query" not in value:
        raise UnsupportedQuery(f"{path}.query: missing")
    _check_keys(value, ("query", "default_field", "fields", "default_operator", "boost"), path)
    if "fields" in value:
        fields = list(value["fields"])
    elif "default_field" in value:
        fields = [value["default_field"]]
    else:
        fields = list(target.fields)
    names, boosts = [], {}
    for i, spec in enumerate(fields):
        name, _, boost = str(spec).partition("^")
        names.append(_field(target, name, f"{path}.fields[{i}]"))
        if boost:
            boosts[name] = float(boost)
    conjunction = str(value.get("default_operator", "or")).lower() == "and"
    try:
        query = target.parse_query(str(value["query"]), names, boosts or None, conjunction_by_default=conjunction)
    except ValueError as err:
        raise UnsupportedQuery(f"{path}.query: Tantivy cannot parse {value['query']!r}: {err}") from None
    return _boosted(query, value.get("boost"), path)


_HANDLERS: dict[str, Callable[[Any, str, Target], Any]] = {
    "match_all": _match_all, "match": _match, "match_phrase": _match_phrase, "multi_match": _multi_match,
    "bool": _bool, "term": _term, "terms": _terms, "query_string": _query_string,
}
