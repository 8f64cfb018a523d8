"""Accepted column names for tabular inputs (DataFrames, Parquet, JSONL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, overload

from rankwise.errors import InputError

# rankwise, ir_measures, PyTerrier (qid, docno, label / score), ranx (q_id, doc_id, score), pandas and
# recommender spellings; a qrels frame without a label column may carry its labels as ``score`` (ranx)
QUERY_COLUMNS = ("query_id", "qid", "q_id", "query", "topic", "topic_id", "user_id", "user")
DOC_COLUMNS = ("doc_id", "docid", "docno", "doc", "item", "item_id", "document_id", "pid", "url")
SCORE_COLUMNS = ("score", "sim", "prediction", "rank_score")
LABEL_COLUMNS = ("relevance", "label", "rel", "rating", "judgment", "grade", "score")
TAG_COLUMNS = ("run_id", "run", "tag", "system", "name")
RANK_COLUMNS = ("rank", "position", "pos", "ranking")


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
    lowered = {str(n).lower(): str(n) for n in names}
    for candidate in accepted:
        if candidate in lowered:
            return lowered[candidate]
    if required:
        raise InputError(
            f"no {role} column; expected one of {', '.join(accepted)} (found {', '.join(map(str, names))})",
            source=source,
        )
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
            raise InputError(f"{option} {pair!r}: expected ROLE=NAME, ROLE one of {', '.join(known)}")
        if role not in known:
            raise InputError(f"{option} {pair!r}: unknown role {role!r}; expected one of {', '.join(known)}")
        if role in out:
            raise InputError(f"{option}: role {role!r} given twice")
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
