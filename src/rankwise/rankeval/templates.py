"""Search templates: mustache (``{{param}}``) rendered by pystache, as Elasticsearch renders them.

A template's source is a search body (an object, serialised to JSON first) or a string of JSON
with mustache tags. Values are escaped for JSON strings (Elasticsearch's JSON escaping), so a
parameter holding quotes or backslashes cannot break the body. A tag without a parameter is an
error naming the template and the parameter; nothing renders as an empty string by accident.

Partials (``{{> name}}``) are refused: Elasticsearch's templates have none, and a renderer that
loads them would read any ``*.mustache`` file on disk into the search request. Triple braces
(``{{{param}}}``) insert a parameter unescaped, as in Elasticsearch: the parameter's text
becomes part of the JSON body (it can add clauses or fields), so only use them with
parameters you wrote yourself.
"""

from __future__ import annotations

import json
from typing import Any

from rankwise.errors import TemplateError


def _json_escape(value: Any) -> str:
    return json.dumps(str(value))[1:-1]


def render(template_id: str, source: dict[str, Any] | str, params: dict[str, Any]) -> dict[str, Any]:
    """Render a template with ``params`` into a search body.

    >>> render("t", {"query": {"match": {"title": "{{q}}"}}}, {"q": 'wing "flutter"'})
    {'query': {'match': {'title': 'wing "flutter"'}}}
    >>> render("t", '{"size": {{n}}, "query": {"match_all": {}}}', {"n": 5})
    {'size': 5, 'query': {'match_all': {}}}
    >>> render("t", {"query": {"match": {"title": "{{q}}"}}}, {})
    Traceback (most recent call last):
    ...
    rankwise.errors.TemplateError: template 't': missing parameter 'q'
    >>> render("t", '{"query": {{> /etc/secrets}} }', {})   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.TemplateError: template 't': partials ({{> name}}) are not supported: ...
    """
    import pystache
    from pystache.context import KeyNotFoundError

    text = source if isinstance(source, str) else json.dumps(source)
    from pystache.common import TemplateNotFoundError

    renderer = pystache.Renderer(escape=_json_escape, missing_tags="strict", partials={})   # no file is read
    try:
        rendered = renderer.render(text, params)
    except KeyNotFoundError as err:
        raise TemplateError(f"template {template_id!r}: missing parameter {err.key!r}") from None
    except TemplateNotFoundError:
        raise TemplateError(f"template {template_id!r}: partials ({{{{> name}}}}) are not supported: Elasticsearch's "
                            "search templates have none") from None
    from rankwise.data.documents import RepeatedKey, unique_keys

    try:
        body = json.loads(rendered, object_pairs_hook=unique_keys)
    except RepeatedKey as repeated:   # Elasticsearch refuses a duplicate key too (strict duplicate detection)
        raise TemplateError(f"template {template_id!r}: the rendered body gives the key {repeated.key!r} twice in one "
                            "object") from None
    except RecursionError:
        raise TemplateError(f"template {template_id!r}: the rendered body is nested too deeply") from None
    except json.JSONDecodeError as err:
        raise TemplateError(f"template {template_id!r}: the rendered body is not JSON ({err.msg} at column "
                            f"{err.colno}): {rendered[:200]}") from None
    if not isinstance(body, dict):
        raise TemplateError(f"template {template_id!r}: rendered to a {type(body).__name__}, expected an object")
    return body
