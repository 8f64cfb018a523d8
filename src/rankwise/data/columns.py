"""Accepted column names for tabular inputs (DataFrames, Parquet, JSONL)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Literal, overload

from rankwise.errors import InputError, OptionError

# rankwise, ir_measures, PyTerrier (qid, docno, label / score), ranx (q_id, doc_id, score), pandas and
# recommender spellings; a qrels frame without a label column may carry its labels as ``score`` (ranx)
QUERY_COLUMNS = ("query_id", "qid", "q_id", "query", "topic", "topic_id", "search_id", "request_id", "user_id", "user")
DOC_COLUMNS = ("doc_id", "docid", "docno", "doc", "item", "item_id", "document_id", "pid", "url")
SCORE_COLUMNS = ("score", "sim", "prediction", "rank_score")
LABEL_COLUMNS = ("relevance", "label", "rel", "rating", "judgment", "grade", "score")
TAG_COLUMNS = ("run_id", "run", "tag", "system", "name")
RANK_COLUMNS = ("rank", "position", "pos", "ranking")
# event logs and exposure tables (rankwise, GrowthBook, Eppo, Statsig, Segment spellings)
UNIT_COLUMNS = ("unit", "unit_id", "user_id", "user", "userid", "visitor_id", "anonymous_id", "customer_id",
                "device_id", "session_id")
VARIANT_COLUMNS = ("variant", "variation", "variation_id", "variant_id", "arm", "bucket", "treatment",
                   "experiment_group")

RUN_ROLES = {"query": "query id", "doc": "document id", "score": "score", "rank": "score or rank",
             "label": "relevance label", "tag": "run tag"}
"""``--columns`` roles of runs and qrels, and the role each names in ``pick_column``."""

RECSYS_ROLES = {"user": "user id", "item": "item id", "score": "score", "rank": "rank", "rating": "rating"}
"""``--columns`` roles of recommendation lists and interaction tables, and the role each names."""

_NAMED: ContextVar[Mapping[str, str]] = ContextVar("rankwise_named_columns", default=MappingProxyType({}))


@contextmanager
def named_columns(mapping: Mapping[str, str]) -> Iterator[None]:
    """Within the block, a table that has the column ``mapping[role]`` reads ``role`` from it
    (``--columns ROLE=NAME``); a table without that column falls back to the common spellings.

    >>> with named_columns({"query": "search_id"}):
    ...     pick_column(["search_id", "qid"], QUERY_COLUMNS, "query id", "x")
    'search_id'
    """
    token = _NAMED.set({**_NAMED.get(), **mapping})
    try:
        yield
    finally:
        _NAMED.reset(token)


def named_column(role: str) -> str | None:
    """The column ``--columns`` names for ``role`` in the current block, if any."""
    return _NAMED.get().get(role)


@overload
def pick_column(names: Iterable[str], accepted: tuple[str, ...], role: str, source: str,
                required: Literal[True] = True) -> str: ...
@overload
def pick_column(names: Iterable[str], accepted: tuple[str, ...], role: str, source: str,
                required: bool) -> str | None: ...
def pick_column(
    names: Iterable[str], accepted: tuple[str, ...], role: str, source: str, required: bool = True
) -> str | None:
    """Return the first column of ``names`` that is one of ``accepted`` (case-insensitive).

    >>> pick_column(["qid", "docno", "score"], QUERY_COLUMNS, "query id", "x")
    'qid'
    """
    names = [str(n) for n in names]
    key = next((k for k, r in RUN_ROLES.items() if r == role), role)
    named = named_column(key)
    if named is not None and named in names:
        return named
    lowered = {n.lower(): n for n in names}
    for candidate in accepted:
        if candidate in lowered:
            return lowered[candidate]
    if required:
        raise InputError(f"no {role} column; expected one of {', '.join(accepted)} (found {', '.join(names)}); "
                         f"name it with --columns {key}=NAME", source=source)
    return None


def column_map(pairs: Iterable[str], roles: Iterable[str], option: str = "--columns") -> dict[str, str]:
    """``ROLE=NAME`` texts as ``{role: name}``, each role one of ``roles``.

    >>> column_map(["session=sid", "doc=url"], ("session", "query", "rank", "doc", "click"))
    {'session': 'sid', 'doc': 'url'}
    """
    known = list(roles)
    out: dict[str, str] = {}
    for pair in pairs:
        role, equals, name = pair.partition("=")
        role, name = role.strip(), name.strip()
        if not equals or not role or not name:
            raise OptionError(f"{option} {pair!r}: expected ROLE=NAME, ROLE one of {', '.join(known)}")
        if role not in known:
            raise OptionError(f"{option} {pair!r}: unknown role {role!r}; expected one of {', '.join(known)}")
        if role in out:
            raise OptionError(f"{option}: role {role!r} given twice")
        out[role] = name
    return out


def resolve_roles(names: Iterable[str], spellings: dict[str, tuple[str, ...]], given: dict[str, str | None],
                  source: str, option: str = "--columns") -> dict[str, str]:
    """The column of each role: the one ``given``, else the first column whose name (any case)
    is one of the role's ``spellings``; a role found nowhere is an error listing the columns
    found and every role missing.

    >>> resolve_roles(["session_id", "position", "url", "clicked", "query"],
    ...               {"session": ("session", "session_id"), "rank": ("rank", "position"), "doc": ("doc", "url"),
    ...                "click": ("click", "clicked"), "query": ("query",)}, {}, "log.csv")
    {'session': 'session_id', 'rank': 'position', 'doc': 'url', 'click': 'clicked', 'query': 'query'}
    """
    present = [str(n) for n in names]
    lowered = {n.lower(): n for n in present}
    out: dict[str, str] = {}
    missing = []
    for role, accepted in spellings.items():
        chosen = given.get(role)
        if chosen is not None:
            if chosen not in present:
                raise InputError(f"{option} {role}={chosen}: no column {chosen!r}; the columns are "
                                 f"{', '.join(present)}", source=source)
            out[role] = chosen
            continue
        found = next((lowered[a] for a in accepted if a in lowered), None)
        if found is None:
            missing.append(role)
        else:
            out[role] = found
    if missing:
        expected = "; ".join(f"{r}: {', '.join(spellings[r])}" for r in missing)
        raise InputError(f"missing column(s) for {', '.join(missing)} (expected {expected}); the columns are "
                         f"{', '.join(present)}; name them with {option} ROLE=NAME", source=source)
    return out
