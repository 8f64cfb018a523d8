"""Typed parameters and the registry every pluggable family uses.

A pluggable thing (a metric family, a click model, an off-policy estimator, an interleaving
method, a fusion method or normalisation, an A/B test, a correction, a sequential design) is
declared once, as one object holding its name, aliases, typed parameters, description,
reference and the function or class that does the work. Its ``Registry`` is the only list of
the family's members: the CLI takes its choices, help texts, "did you mean" suggestions and
errors from it, ``rankwise list KIND`` prints it, the docs generate their tables from it and
the tests loop over it (``tests/test_params.py``).

Every member is spelled the same way in Python and on the command line, the way metrics are::

    rrf(k=60)            dbn(prior=1,2, iterations=20)            switch-dr(clip=10)

>>> from rankwise.params import Declared, Param, Registry
>>> SHAPES = Registry("shape", [Declared("square", lambda side: side * side, "The area of a square.",
...                                      (Param("side", float, 1.0, "length of a side", low=0),))])
>>> member, values = SHAPES.parse("Square(side=3)")
>>> member.name, values, member.target(**values)
('square', {'side': 3.0}, 9.0)
>>> SHAPES.get("sqare")
Traceback (most recent call last):
...
rankwise.errors.ParameterError: unknown shape 'sqare'; did you mean 'square'? expected one of: square
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from rankwise.errors import ParameterError


def _span(low: float | None, high: float | None) -> str:
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"[{lo}, {hi}]"


def _numbers(value: Any) -> list[Any]:
    """A list given as text (``1,2``, ``[1, 2]``, ``(1;2)``) or as a sequence, as its items."""
    if isinstance(value, str):
        text = value.strip().strip("[]()").replace(";", ",")
        return [part for part in (p.strip() for p in text.split(",")) if part]
    return list(value)


@dataclass(frozen=True)
class Param:
    """One typed parameter: name, type, default, allowed range or choices, description and,
    where it can be tuned, the grid searched by default.

    ``type`` is ``int``, ``float``, ``bool``, ``str`` (with ``choices``), ``tuple`` (a list of
    reals, given as ``1,2`` or ``[1, 2]``, or one of its ``choices`` words) or ``dict``
    (per-grade gains, ``{label: gain}``).

    >>> Param("p", float, 0.9, "persistence", low=0.0, high=1.0).convert("0.8", "RBP")
    0.8
    >>> Param("prior", tuple, (1.0, 2.0), "Beta pseudo-counts").convert("[0.5, 3]", "dbn")
    (0.5, 3.0)
    >>> Param("prior", tuple, "empirical", "Beta prior", choices=("empirical",)).convert("empirical", "dbn")
    'empirical'
    >>> Param("p", float, 0.9, "persistence", low=0.0, high=1.0).convert("2", "RBP")
    Traceback (most recent call last):
    ...
    rankwise.errors.ParameterError: RBP: p must be in [0, 1], got 2.0
    """

    name: str
    type: type
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    in_name: bool = False
    """Always written in the canonical name, even at its default (``RBP(p=0.9)``)."""
    required: bool = False
    """No default: the caller must give a value."""
    grid: tuple[Any, ...] = ()
    """The values tried when the parameter is tuned and no grid is given."""
    length: int | None = None
    """A ``tuple`` parameter's exact number of items (``prior``: 2)."""
    cutoff: bool = False
    """The member's cut-off: also written ``name@k`` (``novelty@10``), as metrics are."""

    error: ClassVar[builtins.type[ParameterError]] = ParameterError
    """The error raised for a bad value (metric families raise ``MetricParameterError``)."""

    def convert(self, value: Any, owner: str) -> Any:
        """``value`` (text or number) as this parameter's type, checked against its range;
        ``owner`` names the member in the error."""
        if self.type is tuple and self.choices and isinstance(value, str) \
                and value.strip().strip("'\"") in self.choices:
            return value.strip().strip("'\"")
        try:
            if self.type is bool:
                text = str(value).strip().lower()
                if text not in ("true", "false", "1", "0", "1.0", "0.0"):
                    raise ValueError
                out: Any = text in ("true", "1", "1.0")
            elif self.type is int:
                number = float(value)
                if number != int(number):
                    raise ValueError
                out = int(number)
            elif self.type is float:
                out = float(value)
            elif self.type is str:
                out = str(value).strip().strip("'\"")
            elif self.type is tuple:
                out = tuple(float(v) for v in _numbers(value))
            else:
                out = {int(k): float(v) for k, v in dict(value).items()}
        except (TypeError, ValueError, OverflowError):
            kind = {bool: "true or false", int: "an integer", float: "a number", str: "a word",
                    tuple: "a list of numbers", dict: "label=gain pairs"}[self.type]
            raise self.error(f"{owner}: {self.name} must be {kind}, got {value!r}") from None
        if self.choices and self.type is not tuple and out not in self.choices:
            raise self.error(f"{owner}: {self.name} must be one of {', '.join(self.choices)}, got {out!r}")
        numbers = out if self.type is tuple else (out,) if self.type in (int, float) else ()
        if self.type is tuple and self.length is not None and len(out) != self.length:
            raise self.error(f"{owner}: {self.name} must be {self.length} numbers, got {value!r}")
        for number in numbers:
            if number != number or (self.low is not None and number < self.low) or (
                    self.high is not None and number > self.high):
                raise self.error(f"{owner}: {self.name} must be in {_span(self.low, self.high)}, got {out!r}")
        return out

    def describe(self) -> str:
        """``name=default (range): description``, for docs and listings.

        >>> Param("k", float, 60, "rank constant", low=0).describe()
        'k=60 (0..inf): rank constant'
        """
        if self.type is dict:
            return f"{self.name} (label=gain pairs): {self.description}"
        default = "none" if self.default is None else (
            ",".join(f"{v:g}" for v in self.default) if self.type is tuple and not isinstance(self.default, str)
            else str(self.default))
        if self.required:
            default = "REQUIRED"
        span = ""
        if self.choices and self.type is tuple:
            span = " (" + "|".join(self.choices) + f" or {self.length or 'N'} numbers)"
        elif self.choices:
            span = " (" + "|".join(self.choices) + ")"
        elif self.low is not None or self.high is not None:
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            span = f" ({lo}..{hi})"
        return f"{self.name}={default}{span}: {self.description}"


def key_of(name: str) -> str:
    """How names are compared: case, ``-`` and ``_`` do not matter.

    >>> key_of("Switch_DR")
    'switch-dr'
    """
    return str(name).strip().lower().replace("_", "-")


T = TypeVar("T")
"""What a family's members' ``target`` is (the family's ``Protocol``, a class ...)."""


@dataclass(frozen=True)
class Declared(Generic[T]):
    """One member of a pluggable family: its name, the object that does the work (``target``:
    a function or a class, of the family's type ``T``), a one-line description, typed
    parameters, other spellings and the reference it follows or is tested against. Families add
    their own facts by subclassing (``fusion.methods.Method`` adds ``ranks`` and ``trained``)."""

    name: str
    target: T
    description: str
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    reference: str = ""
    kind: str = field(default="", compare=False)
    """The family's name (``fusion method``), set by the registry."""

    def param(self, name: str) -> Param:
        """The parameter called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(self._unknown([name]))

    def _unknown(self, names: list[str]) -> str:
        takes = ", ".join(p.name for p in self.params)
        return f"{self.name}: unknown parameter(s) {', '.join(names)}; it takes {takes or 'none'}"

    def resolve(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every parameter's value: the given ones (text or values; ``None`` means "not given")
        converted and checked, the others at their defaults; unknown or missing ones refused.

        >>> Declared("rrf", None, "", (Param("k", float, 60.0, "rank constant", low=0),)).resolve({"k": "10"})
        {'k': 10.0}
        """
        given = {k: v for k, v in (given or {}).items() if v is not None}
        unknown = sorted(set(given) - {p.name for p in self.params})
        if unknown:
            raise ParameterError(self._unknown(unknown))
        out = {}
        for p in self.params:
            if p.name in given:
                out[p.name] = p.convert(given[p.name], self.name)
            elif p.required:
                raise ParameterError(f"{self.name}: give {p.name}= (it has no default)")
            else:
                out[p.name] = p.default
        return out

    def spelled(self, values: Mapping[str, Any] | None = None) -> str:
        """The member and the values that differ from the defaults, as one would type them.

        >>> Declared("rrf", None, "", (Param("k", float, 60.0, "rank constant"),)).spelled({"k": 10.0})
        'rrf(k=10)'
        """
        parts = []
        for p in self.params:
            value = (values or {}).get(p.name, p.default)
            if value is not None and (value != p.default or p.in_name or p.required):
                parts.append(f"{p.name}={format_value(value)}")
        return f"{self.name}({', '.join(parts)})" if parts else self.name


def format_value(value: Any) -> str:
    """A parameter value as text: numbers in their shortest form, lists with commas.

    >>> format_value(60.0), format_value((1.0, 2.5)), format_value("exp")
    ('60', '1,2.5', 'exp')
    """
    if isinstance(value, (list, tuple)):
        return ",".join(format_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def split_call(text: str) -> tuple[str, dict[str, str]]:
    """``name(key=value, ...)`` as the name and the values as text. Commas inside brackets
    belong to one value; a bare list after ``key=`` runs to the next ``key=``.

    >>> split_call("dbn(prior=1,2, iterations=20)")
    ('dbn', {'prior': '1,2', 'iterations': '20'})
    >>> split_call("wsum(weights=[0.3, 0.7])")
    ('wsum', {'weights': '[0.3, 0.7]'})
    >>> split_call("rrf")
    ('rrf', {})
    """
    text = str(text).strip()
    if "(" not in text:
        return text, {}
    if not text.endswith(")"):
        raise ParameterError(f"{text!r}: expected NAME or NAME(key=value, ...)")
    name, body = text[:text.index("(")].strip(), text[text.index("(") + 1:-1]
    pieces, depth, current = [], 0, ""
    for char in body:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += char
    pieces.append(current)
    values: dict[str, str] = {}
    last = None
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if "=" in piece:
            key, value = (s.strip() for s in piece.split("=", 1))
            if not key or key in values:
                raise ParameterError(f"{text!r}: {'a repeated' if key else 'an empty'} parameter name {key!r}")
            values[key] = value
            last = key
        elif last is not None:   # dbn(prior=1,2): the list goes on
            values[last] += "," + piece
        else:
            raise ParameterError(f"{text!r}: expected key=value pairs inside the parentheses, got {piece!r}")
    return name, values


def _cut_off(text: str) -> tuple[str, str | None]:
    """A spelling without its trailing ``@k`` and the ``k`` (None when there is none; an ``@``
    inside the parentheses is a value's).

    >>> _cut_off("ild(similarity=jaccard)@5"), _cut_off("rrf(k=10)")
    (('ild(similarity=jaccard)', '5'), ('rrf(k=10)', None))
    """
    text = str(text).strip()
    if "@" not in text.rpartition(")")[2]:
        return text, None
    called, _, cut = text.rpartition("@")
    return called, cut


D = TypeVar("D", bound="Declared[Any]")


class Registry(Generic[D]):
    """The members of one pluggable family, in their declared order, found by name or alias
    (case, ``-`` and ``_`` do not matter), with close-match suggestions, a spelling parser
    (``name(key=value)``) and a catalogue.

    >>> from rankwise.fusion.methods import FUSION_METHODS
    >>> FUSION_METHODS.parse("RRF(k=10)")[1]
    {'k': 10.0}
    >>> [m.name for m in FUSION_METHODS.search("borda")]
    ['bordafuse', 'weighted_bordafuse']
    """

    def __init__(self, kind: str, members: Iterable[D], option: str = "") -> None:
        self.kind = kind
        """What one member is called in messages (``fusion method``)."""
        self.option = option
        """The command-line option that names a member (``--method``), for messages."""
        self._members: dict[str, D] = {}
        self._keys: dict[str, str] = {}
        for member in members:
            self.register(member)

    def register(self, member: D) -> D:
        """Add ``member``; its name and aliases must be new."""
        object.__setattr__(member, "kind", self.kind)
        for spelling in (member.name, *member.aliases):
            key = key_of(spelling)
            if key in self._keys:
                raise ValueError(f"{self.kind} {spelling!r} is declared twice")
            self._keys[key] = member.name
        self._members[member.name] = member
        return member

    def __iter__(self) -> Iterator[str]:
        """The names, as a dict's keys (``values()`` gives the members)."""
        return iter(self._members)

    def values(self) -> list[D]:
        """The members in declared order."""
        return list(self._members.values())

    def items(self) -> list[tuple[str, D]]:
        return list(self._members.items())

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and key_of(name) in self._keys

    def __getitem__(self, name: str) -> D:
        return self.get(name)

    def names(self) -> list[str]:
        """The members' names in declared order."""
        return list(self._members)

    def keys(self) -> list[str]:
        return self.names()

    def get(self, name: str) -> D:
        """The member called ``name`` (or one of its aliases)."""
        key = key_of(name)
        if key in self._keys:
            return self._members[self._keys[key]]
        near = closest(key, list(self._keys))
        near = list(dict.fromkeys(self._keys[k] for k in near))
        hint = f"; did you mean {_either(near)}?" if near else ";"
        where = f"{self.option}: " if self.option else ""
        raise ParameterError(f"{where}unknown {self.kind} {name!r}{hint} expected one of: {', '.join(self._members)}")

    def parse(self, text: str, **given: Any) -> tuple[D, dict[str, Any]]:
        """A spelling (``rrf(k=10)``) as its member and every parameter's value; ``given``
        values (keyword arguments, command-line options) join those in the spelling, and
        naming one parameter both ways is refused. A member with a cut-off parameter
        (``Param(cutoff=True)``) is also spelled ``name@k`` or ``name(key=value)@k``, as
        metrics are."""
        called, cut = _cut_off(text)
        name, inline = split_call(called)
        member = self.get(name)
        given = {k: v for k, v in given.items() if v is not None}
        if cut is not None:
            cutoff = next((p.name for p in member.params if p.cutoff), None)
            if cutoff is None:
                raise ParameterError(f"{member.name}: takes no cut-off ({text!r}: write it without @)")
            if cutoff in inline or cutoff in given:
                raise ParameterError(f"{member.name}: {cutoff} given twice (in {text!r} and as @{cut})")
            inline = {**inline, cutoff: cut.strip()}
        both = sorted(set(inline) & set(given))
        if both:
            raise ParameterError(f"{member.name}: {both[0]} given twice (in {text!r} and on its own)")
        return member, member.resolve({**inline, **given})

    def parse_with_keywords(self, text: str, **keywords: Any) -> tuple[D, dict[str, Any]]:
        """``parse`` for a function whose keywords predate the spelling (``clip=``, ``tau=``):
        each keyword given (not None) joins the spelling for a member that declares it and is
        left out for one that does not, as a command's option applies to every member that
        has the parameter. Naming one parameter both ways is still refused.

        >>> clip = Param("clip", float, 100.0, "cap on the weight", low=0)
        >>> WEIGHTS = Registry("estimator", [Declared("ips", None, "", (clip,)), Declared("snips", None, "")])
        >>> WEIGHTS.parse_with_keywords("ips", clip=10.0)[1], WEIGHTS.parse_with_keywords("snips", clip=10.0)[1]
        ({'clip': 10.0}, {})
        """
        member = self.get(split_call(_cut_off(text)[0])[0])
        declared = {p.name for p in member.params}
        return self.parse(text, **{k: v for k, v in keywords.items() if k in declared and v is not None})

    def canonical(self, text: str, **given: Any) -> str:
        """The spelling ``text`` names, written the one way (``BH`` -> ``bh``, ``rrf(k=60.0)`` ->
        ``rrf``): what a result's settings record and what ``parse`` reads back."""
        member, values = self.parse(text, **given)
        return member.spelled(values)

    def search(self, text: str = "") -> list[D]:
        """The members whose name, alias, description or reference contains ``text`` (any case)."""
        needle = text.strip().lower()
        return [m for m in self.values() if not needle or any(needle in s.lower() for s in (
            m.name, *m.aliases, m.description, m.reference))]

    def rows(self, text: str = "") -> list[dict[str, Any]]:
        """The catalogue as rows: name, aliases, parameters (a list), description, reference."""
        return [{"name": m.name, "aliases": ", ".join(m.aliases),
                 "parameters": [p.describe() for p in m.params],
                 "description": m.description, "reference": m.reference} for m in self.search(text)]

    def markdown(self) -> str:
        """The catalogue as a Markdown table (for the docs)."""
        lines = ["| name | parameters | description |", "|---|---|---|"]
        for row in self.rows():
            name = f"`{row['name']}`" + (f" ({row['aliases']})" if row["aliases"] else "")
            params = "<br>".join(f"`{p}`" for p in row["parameters"]) or "none"
            text = row["description"] + (f" *{row['reference']}*" if row["reference"] else "")
            lines.append(f"| {name} | {_cell(params)} | {_cell(text)} |")
        return "\n".join(lines) + "\n"

    def help(self) -> str:
        """The member names for a command's help text."""
        return ", ".join(self.names())


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and swaps of
    two neighbours each cost 1.

    >>> edit_distance("dbm", "dbn"), edit_distance("rff", "rrf"), edit_distance("ndgc", "ndcg")
    (1, 1, 1)
    """
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def closest(word: str, candidates: Iterable[str]) -> list[str]:
    """The candidates nearest ``word`` by ``edit_distance``, when within a third of its length
    (at least 1 edit); else those ``difflib`` finds close, best first.

    >>> closest("dbm", ["pbm", "dbn", "cascade"])
    ['pbm', 'dbn']
    >>> closest("zzz", ["pbm", "dbn"])
    []
    """
    candidates = list(candidates)
    if not candidates:
        return []
    distances = [edit_distance(word, c) for c in candidates]
    best = min(distances)
    if best <= max(1, len(word) // 3):
        return [c for c, d in zip(candidates, distances, strict=True) if d == best]
    from difflib import get_close_matches

    return get_close_matches(word, candidates, n=2, cutoff=0.75)


def _either(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


__all__ = ["Declared", "Param", "ParameterError", "Registry", "format_value", "key_of", "split_call"]
