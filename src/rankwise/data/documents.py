"""The one door for structured documents (JSON and YAML: rank-eval specs, saved click models,
metric definition files, JSON runs and qrels): a key given twice in one object is an error
naming it and its line (every parser would silently keep the last value), nesting deeper than
``MAX_DEPTH`` is an error (never a ``RecursionError``), and a document that does not parse is
an ``InputError`` naming the file and line.

>>> parse_json('{"metric": {"k": 5}, "metric": {"k": 10}}', "spec.json")
Traceback (most recent call last):
...
rankwise.errors.InputError: spec.json:1: the key 'metric' appears twice in one object; expected each key once
>>> parse_yaml("ctr: count(click)\\nctr: count(view)\\n", "metrics.yaml")
Traceback (most recent call last):
...
rankwise.errors.InputError: metrics.yaml:2: the key 'ctr' appears twice in one mapping; expected each key once
>>> parse_json("[" * 5000 + "]" * 5000, "deep.json")
Traceback (most recent call last):
...
rankwise.errors.InputError: deep.json: nested deeper than 100 levels; expected a document at most 100 levels deep
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rankwise.errors import InputError

MAX_DEPTH = 100
"""How deeply a document may nest (a rank-eval query rarely passes 20 levels)."""


class RepeatedKey(ValueError):
    """A key given twice in one object or mapping (``key``; ``line`` when known)."""

    def __init__(self, key: str, line: int | None = None) -> None:
        super().__init__(key)
        self.key, self.line = key, line


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json``'s ``object_pairs_hook`` that refuses a key given twice (``RepeatedKey``)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKey(key)
        out[key] = value
    return out


def _line_of_second(text: str, key: str) -> int | None:
    needle = json.dumps(key)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    return text.count("\n", 0, second) + 1 if second >= 0 else None


def too_deep(source: str, line: int | None = None) -> InputError:
    return InputError(f"nested deeper than {MAX_DEPTH} levels; expected a document at most {MAX_DEPTH} levels deep",
                      source=source, line=line)


def check_depth(document: Any, source: str, line: int | None = None) -> Any:
    """``document``, or an ``InputError`` when it nests deeper than ``MAX_DEPTH`` (walked
    without recursion)."""
    stack = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > MAX_DEPTH:
            raise too_deep(source, line)
        stack.extend((child, depth + 1) for child in children)
    return document


def parse_json(text: str, source: str, line: int | None = None) -> Any:
    """A JSON document (see the module); ``line``: the line of a JSON-lines record."""
    try:
        document = json.loads(text, object_pairs_hook=unique_keys)
    except RepeatedKey as repeated:
        at = line if line is not None else _line_of_second(text, repeated.key)
        raise InputError(f"the key {repeated.key!r} appears twice in one object; expected each key once",
                         source=source, line=at) from None
    except RecursionError:
        raise too_deep(source, line) from None
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON ({error.msg}, column {error.colno})", source=source,
                         line=line if line is not None else error.lineno) from None
    return check_depth(document, source, line)


def _yaml_loader() -> Any:
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        """PyYAML's safe loader, refusing a key given twice in one mapping."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    repeated = key in seen
                except TypeError:   # an unhashable key: PyYAML's own error follows
                    repeated = False
                if repeated:
                    raise RepeatedKey(str(key), key_node.start_mark.line + 1)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def parse_yaml(text: str, source: str) -> Any:
    """A YAML document (PyYAML's safe subset; see the module)."""
    import yaml

    try:
        document = yaml.load(text, Loader=_yaml_loader())   # noqa: S506 - a SafeLoader subclass
    except RepeatedKey as repeated:
        raise InputError(f"the key {repeated.key!r} appears twice in one mapping; expected each key once",
                         source=source, line=repeated.line) from None
    except RecursionError:
        raise too_deep(source) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(error, 'problem', None) or error}", source=source,
                         line=mark.line + 1 if mark else None) from None
    return check_depth(document, source)


def read_document(path: str | os.PathLike[str]) -> Any:
    """A JSON file, or a YAML one (``.yaml``, ``.yml``), through ``parse_json`` / ``parse_yaml``;
    the file must be UTF-8 text."""
    source = os.fspath(path)
    try:
        raw = Path(source).read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the file ({error.strerror or error})", source=source) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"invalid UTF-8 (byte {raw[error.start]:#04x}); expected UTF-8 text", source=source,
                         line=raw[:error.start].count(b"\n") + 1) from None
    if not text.strip():
        raise InputError("the file is empty", source=source)
    if source.lower().endswith((".yaml", ".yml")):
        return parse_yaml(text, source)
    return parse_json(text, source)


__all__ = ["MAX_DEPTH", "RepeatedKey", "check_depth", "parse_json", "parse_yaml", "read_document", "too_deep",
           "unique_keys"]
