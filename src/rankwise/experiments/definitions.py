"""Metrics defined over event logs as they come: one row per event, the event type in a column.

A definition names an aggregation of the unit's events, or a ratio of two::

    ctr      = count(click) / count(impression)
    revenue  = sum(value where event = purchase)
    buyers   = any(purchase)
    de_views = count(view where country = DE and device in (mobile, tablet))

``count(TYPE)`` counts the unit's events whose event column is ``TYPE`` (``count(*)`` every
event), ``sum(COLUMN ...)`` adds a numeric column over the unit's rows that match the filter,
``any(TYPE)`` is 1 for a unit with at least one such event (a proportion of units). A filter
is ``where`` and clauses joined by ``and``: ``COLUMN OP VALUE`` with ``=``, ``!=``, ``<``,
``<=``, ``>``, ``>=``, or ``COLUMN in (V1, V2 ...)``; a value is a word, a number or a quoted
string. A lone aggregation is a mean per unit (``any``: a proportion), and ``A / B`` a ratio of
sums over units (``rankwise.experiments.metrics``).

Each aggregation becomes one column per row (the row's contribution: 1 or 0 for ``count``,
the value or 0 for ``sum``), which the usual per-unit sums then add up; the same columns are
written as SQL for the DuckDB engine (``rankwise.experiments.warehouse``), so both paths give the
same numbers.

>>> d = parse_definition("ctr = count(click) / count(impression)")
>>> d.name, d.numerator.column, d.denominator.column
('ctr', 'count(click)', 'count(impression)')
>>> d.numerator.sql("event")
'CASE WHEN ("event" = \\'click\\') THEN 1 ELSE 0 END'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rankwise.errors import InputError, OptionError
from rankwise.params import Declared, Registry

OPERATORS = ("=", "!=", "<", "<=", ">", ">=", "in")
"""The comparisons a filter clause may use."""

@dataclass(frozen=True)
class Aggregation(Declared[str]):
    """How a unit's events become one number. ``sums_values``: it adds up the values of a
    numeric column (its target); otherwise it counts the events of a type (its target) that
    match. ``every_event``: ``(*)`` counts every event. ``proportion``: the unit's value is 1 when
    it has such an event (its count above 0), a proportion of units. ``target``: the prefix of
    the per-row column it becomes (``any`` reads the count's column)."""

    sums_values: bool = False
    every_event: bool = False
    proportion: bool = False


AGGREGATIONS: Registry[Aggregation] = Registry("aggregation", (
    Aggregation("count", "count", "Number of the unit's events of the type (count(*): every event) that match the "
                "filter; alone: mean count per unit.", reference="GrowthBook/Eppo count metrics", every_event=True),
    Aggregation("sum", "sum", "Sum of a numeric column over the unit's rows that match the filter; alone: mean "
                "per unit.", reference="tea-tasting Mean of a per-unit sum", sums_values=True),
    Aggregation("any", "count", "1 if the unit has at least one such event, else 0; a proportion of units (not "
                "in a ratio).", reference="GrowthBook binomial metrics", proportion=True),
))
"""How a unit's events become one number."""

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")|(?P<op>!=|<=|>=|=|<|>|\(|\)|,|/|\*)"
                    r"|(?P<word>[^\s'\"!=<>(),/*]+))")


@dataclass(frozen=True)
class Clause:
    """``column op value(s)``: one condition of a filter. Values are kept as written: they
    compare as numbers with a numeric column and as text with a text column."""

    column: str
    op: str
    values: tuple[str, ...]

    def text(self) -> str:
        shown = [_literal_text(v) for v in self.values]
        column = _literal_text(self.column)
        if self.op == "in":
            return f"{column} in ({', '.join(shown)})"
        return f"{column} {self.op} {shown[0]}"

    def sql(self, numeric: bool) -> str:
        """The condition in SQL, for a numeric or a text column (NULL compares as false)."""
        column = quote_identifier(self.column)
        literals = [_sql_literal(v, numeric, self.column) for v in self.values]
        if self.op == "in":
            return f"({column} IN ({', '.join(literals)}))"
        return f"({column} {'<>' if self.op == '!=' else self.op} {literals[0]})"


@dataclass(frozen=True)
class Aggregate:
    """One aggregation of a unit's events: ``function(target where clauses)``."""

    function: str
    target: str
    where: tuple[Clause, ...] = ()

    @property
    def kind(self) -> Aggregation:
        """The aggregation's declaration (its facts)."""
        return AGGREGATIONS.get(self.function)

    @property
    def sums(self) -> bool:
        """Whether it adds up a column's values (else it counts events)."""
        return self.kind.sums_values

    @property
    def column(self) -> str:
        """The name of the per-row column it becomes: its own text (``any`` reads the count's
        column: a unit has such an event when its count is above 0)."""
        target = self.target if self.target == "*" else _literal_text(self.target)
        inner = target + (" where " + " and ".join(c.text() for c in self.where) if self.where else "")
        return f"{self.kind.target}({inner})"

    def text(self) -> str:
        """The aggregation as written."""
        return self.function + self.column[self.column.index("("):]

    def clauses(self, event: str) -> tuple[Clause, ...]:
        """Every condition a row must meet, the event type's first."""
        if self.sums or self.target == "*":
            return self.where
        return (Clause(event, "=", (self.target,)), *self.where)

    def source_columns(self, event: str) -> list[str]:
        """The input columns it reads."""
        own = [self.target] if self.sums else []
        return list(dict.fromkeys([*own, *(c.column for c in self.clauses(event))]))

    def sql(self, event: str, numeric: frozenset[str] = frozenset()) -> str:
        """The row's contribution as a SQL expression (``numeric``: the input's numeric columns)."""
        conditions = " AND ".join(c.sql(c.column in numeric) for c in self.clauses(event))
        value = quote_identifier(self.target) if self.sums else "1"
        if not conditions:
            return value
        return f"CASE WHEN {conditions} THEN {value} ELSE 0 END"


@dataclass(frozen=True)
class Definition:
    """A named metric over an event log: one aggregation (a mean or, for ``any``, a
    proportion) or a ratio of two."""

    name: str
    numerator: Aggregate
    denominator: Aggregate | None = None

    def aggregates(self) -> list[Aggregate]:
        return [self.numerator] + ([self.denominator] if self.denominator is not None else [])

    def metric(self) -> Any:
        """The per-unit metric over the derived columns (``Mean``, ``Proportion`` or ``Ratio``)."""
        from rankwise.experiments.metrics import Mean, Proportion, Ratio

        if self.denominator is not None:
            return Ratio(self.numerator.column, self.denominator.column)
        if self.numerator.kind.proportion:
            return Proportion(self.numerator.column)
        return Mean(self.numerator.column)

    def text(self) -> str:
        body = self.numerator.text() + (f" / {self.denominator.text()}" if self.denominator else "")
        return f"{self.name} = {body}"


def quote_identifier(name: str) -> str:
    """A column name as a SQL identifier.

    >>> quote_identifier("order value")
    '"order value"'
    """
    return '"' + name.replace('"', '""') + '"'


def _sql_literal(value: str, numeric: bool, column: str) -> str:
    if numeric:
        number = number_literal(value, column)
        return repr(number) if math.isfinite(number) else f"CAST('{number}' AS DOUBLE)"   # inf is no identifier
    return "'" + value.replace("'", "''") + "'"


def number_literal(value: str, column: str) -> float:
    """A filter's value compared with a numeric column: a number, or an error naming it."""
    try:
        number = float(value)
    except ValueError:
        raise OptionError(f"column {column!r} holds numbers: compare it with a number, not {value!r}") from None
    if number != number:
        raise OptionError(f"column {column!r}: a filter cannot compare with NaN")
    return number


def _literal_text(value: str) -> str:
    return value if re.fullmatch(r"[\w.:+-]+", value) else "'" + value.replace("'", "''") + "'"


def _tokens(text: str, spec: str) -> list[tuple[str, str]]:
    out = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip() == "":
                break
            raise OptionError(f"metric {spec!r}: cannot read {text[position:].strip()!r}")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "string":
            value = value[1:-1].replace(value[0] * 2, value[0])
        out.append((kind, value))
        position = match.end()
    return out


class _Reader:
    def __init__(self, tokens: list[tuple[str, str]], spec: str) -> None:
        self.tokens, self.at, self.spec = tokens, 0, spec

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (expected is not None and token[1].lower() != expected):
            found = repr(token[1]) if token else "the end"
            raise OptionError(f"metric {self.spec!r}: expected {expected or 'more'}, found {found} ({SYNTAX})")
        self.at += 1
        return token

    def value(self) -> str:
        kind, text = self.take()
        if kind not in ("string", "word"):
            raise OptionError(f"metric {self.spec!r}: expected a value, found {text!r} ({SYNTAX})")
        return text


SYNTAX = "e.g. ctr = count(click) / count(impression), revenue = sum(value where event = purchase)"


def _aggregate(reader: _Reader) -> Aggregate:
    kind, name = reader.take()
    if kind != "word":
        raise OptionError(f"metric {reader.spec!r}: expected an aggregation ({', '.join(AGGREGATIONS.names())}), "
                          f"found {name!r}")
    aggregation = AGGREGATIONS.get(name)
    function = aggregation.name
    reader.take("(")
    kind, target = reader.take()
    if kind not in ("word", "string") and target != "*":
        raise OptionError(f"metric {reader.spec!r}: {function}( expects an event type or a column, found {target!r}")
    if target == "*" and not aggregation.every_event:
        able = " or ".join(f"{a.name}(*)" for a in AGGREGATIONS.values() if a.every_event)
        raise OptionError(f"metric {reader.spec!r}: {function}(*) is not defined; only {able} counts every event")
    clauses: list[Clause] = []
    if (reader.peek() or ("", ""))[1].lower() == "where":
        reader.take()
        while True:
            clauses.append(_clause(reader))
            if (reader.peek() or ("", ""))[1].lower() != "and":
                break
            reader.take()
    reader.take(")")
    return Aggregate(function, target, tuple(clauses))


def _clause(reader: _Reader) -> Clause:
    kind, column = reader.take()
    if kind not in ("word", "string"):
        raise OptionError(f"metric {reader.spec!r}: expected a column name in the filter, found {column!r}")
    op = reader.take()[1].lower()
    if op not in OPERATORS:
        raise OptionError(f"metric {reader.spec!r}: unknown comparison {op!r}; expected one of {', '.join(OPERATORS)}")
    if op != "in":
        return Clause(column, op, (reader.value(),))
    reader.take("(")
    values = [reader.value()]
    while (reader.peek() or ("", ""))[1] == ",":
        reader.take()
        values.append(reader.value())
    reader.take(")")
    return Clause(column, op, tuple(values))


def is_definition(spec: str) -> bool:
    """Whether a metric spelling is an event-log definition (it calls an aggregation).

    >>> is_definition("ctr = count(click) / count(impression)"), is_definition("ctr=clicks/views")
    (True, False)
    """
    expression = spec.partition("=")[2] if re.match(r"\s*[^=(]+=", spec) else spec
    return bool(re.match(r"\s*(" + "|".join(AGGREGATIONS.keys()) + r")\s*\(", expression, re.IGNORECASE))


def parse_definition(spec: str, name: str | None = None) -> Definition:
    """A definition from its text ``NAME = AGG(...) [/ AGG(...)]`` (or the expression alone,
    named by itself, or by ``name``).

    >>> parse_definition("revenue = sum(value where event = purchase and country in (DE, FR))").text()
    'revenue = sum(value where event = purchase and country in (DE, FR))'
    >>> parse_definition("any(purchase)").metric()
    Proportion(column='count(purchase)', covariate=None)
    """
    text = spec.strip()
    if name is None:
        match = re.match(r"\s*([^=(]+?)\s*=(?!=)(.*)$", text, re.DOTALL)
        if match and not match.group(1).lower().startswith(tuple(AGGREGATIONS.keys())):
            name, text = match.group(1).strip(), match.group(2)
    reader = _Reader(_tokens(text, spec), spec)
    numerator = _aggregate(reader)
    denominator = None
    if reader.peek() is not None:
        reader.take("/")
        denominator = _aggregate(reader)
    extra = reader.peek()
    if extra is not None:
        raise OptionError(f"metric {spec!r}: unexpected {extra[1]!r} after the definition ({SYNTAX})")
    proportion = next((a for a in (numerator, denominator) if a is not None and a.kind.proportion), None)
    if proportion is not None and denominator is not None:
        raise OptionError(f"metric {spec!r}: {proportion.function}(...) is a proportion of units and cannot be part "
                          f"of a ratio; use {proportion.kind.target}(...) in a ratio")
    definition = Definition(name or "", numerator, denominator)
    if not definition.name:
        definition = Definition(definition.text().partition(" = ")[2], numerator, denominator)
    return definition


def read_definitions(path: str) -> list[Definition]:
    """Definitions from a YAML file: a mapping ``name: definition`` under ``metrics:`` (or at
    the top level), reusable across experiments.

    A definition is its text (``count(click) / count(impression)``) or a mapping with
    ``numerator``, optional ``denominator`` and optional ``where`` (a filter applied to both).
    """
    from rankwise.data.documents import parse_yaml
    from rankwise.data.trec_io import read_text

    document = parse_yaml(read_text(path), str(path))   # a metric defined twice is an error, never the last one
    if isinstance(document, Mapping) and "metrics" in document:
        document = document["metrics"]
    if not isinstance(document, Mapping) or not document:
        raise InputError("expected a mapping of metric names to definitions (under 'metrics:')", source=path)
    out = []
    for name, body in document.items():
        try:
            out.append(_from_yaml(str(name), body))
        except OptionError as error:
            raise InputError(f"metric {name!r}: {error}", source=path, field=str(name)) from None
    return out


def _from_yaml(name: str, body: Any) -> Definition:
    if isinstance(body, str):
        return parse_definition(body, name=name)
    if not isinstance(body, Mapping) or "numerator" not in body:
        raise OptionError("expected a definition (text) or a mapping with numerator, denominator, where")
    unknown = sorted(set(body) - {"numerator", "denominator", "where"})
    if unknown:
        raise OptionError(f"unknown key(s) {', '.join(unknown)}; expected numerator, denominator, where")
    where = f" and {body['where']}" if body.get("where") else ""

    def with_filter(text: str) -> str:
        if not where:
            return text
        head, _, tail = text.rstrip().rpartition(")")
        joiner = " and " if " where " in head else " where "
        return head + joiner + where[5:] + ")" + tail

    expression = with_filter(str(body["numerator"]))
    if body.get("denominator"):
        expression += " / " + with_filter(str(body["denominator"]))
    return parse_definition(expression, name=name)

