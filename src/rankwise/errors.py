"""Exceptions and warnings shared by every layer of rankwise.

Every error about bad input names where the problem is (file, line, field) and what
was expected, so that a user can fix the input without reading rankwise's source.
"""

from __future__ import annotations

from typing import Any


class RankwiseError(Exception):
    """Base class of every error rankwise raises on purpose. Errors about a value (bad input
    data, an unknown name, an option outside its range) also derive from ``ValueError``; every
    class is defined here, so ``except rankwise.errors.RankwiseError`` catches them all."""


class InputError(RankwiseError, ValueError):
    """Bad input data: names the source, line, field and what was expected.

    >>> str(InputError("expected a number", source="run.txt", line=3, field="score"))
    "run.txt:3: field 'score': expected a number"
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.detail = message
        where = source or "<input>"
        if line is not None:
            where += f":{line}"
        prefix = f"{where}: "
        if field is not None:
            prefix += f"field '{field}': "
        super().__init__(prefix + message)


class UnknownMetricError(RankwiseError, ValueError):
    """A metric name that rankwise cannot parse; carries the closest known names."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown metric {name!r}{hint} (run `rankwise list metrics` for the list)")


class SpecError(RankwiseError, ValueError):
    """A spec that cannot be read: names the file and the JSON path of the problem.

    >>> str(SpecError("missing", path="requests[3].params.query", source="spec.json"))
    'spec.json: requests[3].params.query: missing'
    """

    def __init__(self, message: str, *, path: str = "", source: str = "<spec>") -> None:
        self.path = path
        self.source = source
        super().__init__(f"{source}: {path + ': ' if path else ''}{message}")


class UnsupportedQuery(RankwiseError, ValueError):
    """A query clause outside the translated subset, or malformed, with its path."""


class TemplateError(RankwiseError, ValueError):
    """A template that cannot be rendered (a missing parameter, or JSON that does not parse)."""


class BackendError(RankwiseError):
    """A search that failed in the backend; it becomes a failure entry for that request."""


class OptionError(RankwiseError, ValueError):
    """An argument outside its allowed values (an unknown test, correction, plot kind ...)."""


class ParameterError(OptionError):
    """A declared parameter that cannot be read, or a name no registry knows: an unknown click
    model, estimator or fusion method, a parameter it does not take, a missing one, a value of
    the wrong type or out of range (``rankwise.params``)."""


class MetricParameterError(ParameterError):
    """A metric parameter that cannot be read (bad cut-off, malformed pair, out of range)."""


class MetricInputError(RankwiseError, ValueError):
    """An input a metric cannot use: unknown name, missing, wrong shape or values."""


class OutputError(RankwiseError, OSError):
    """A file rankwise could not write (full disk, no permission, a directory in the way); the
    destination is left as it was (``rankwise.data.atomic``)."""


class RankwiseDeprecationWarning(FutureWarning):
    """An old spelling that still works: the message names the one to use instead.

    A ``FutureWarning`` so that users of the library see it (Python hides
    ``DeprecationWarning`` outside ``__main__``)."""


def renamed(options: dict[str, Any], old: str, new: str, where: str) -> None:
    """Move ``options[old]`` to ``options[new]`` with a deprecation warning (in place).

    >>> import warnings
    >>> opts = {"ks": [5]}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed(opts, "ks", "k", "NDCG")
    >>> opts, str(caught[0].message)
    ({'k': [5]}, "NDCG: 'ks' is deprecated; write 'k'")
    """
    if old not in options:
        return
    import warnings

    if new in options:
        raise RankwiseError(f"{where}: give {new!r} only ({old!r} is its deprecated spelling)")
    warnings.warn(f"{where}: {old!r} is deprecated; write {new!r}", RankwiseDeprecationWarning, stacklevel=3)
    options[new] = options.pop(old)


class Notice(str):
    """A warning of a result (``Result.warnings``, ``Comparison.warnings`` ...): the message as
    a string (as printed), and what it is about as fields: ``kind`` (what happened, e.g.
    ``missing_queries``, ``unjudged_queries``, ``duplicates``, ``renamed_run``, ``reader``),
    ``run``, ``metric`` and ``count`` (None where they do not apply).

    >>> n = Notice("bm25: 3 judged query(ies) are absent from the run", kind="missing_queries", run="bm25", count=3)
    >>> n.kind, n.count, n.endswith("run"), n.to_dict()["run"]
    ('missing_queries', 3, True, 'bm25')
    """

    kind: str
    run: str | None
    metric: str | None
    count: int | None  # type: ignore[assignment]  # the notice's count, in place of str.count
    details: dict[str, Any]
    """What else the message was written from (rows, an example ...), so that the notices of
    the pieces of one run can be added up and written again (``rankwise.scale``)."""

    def __new__(cls, message: str, kind: str = "note", run: str | None = None, metric: str | None = None,
                count: int | None = None, details: dict[str, Any] | None = None) -> Notice:
        self = super().__new__(cls, message)
        self.kind, self.run, self.metric, self.count = kind, run, metric, count
        self.details = details or {}
        return self

    @property
    def message(self) -> str:
        return str.__str__(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{kind, run, metric, count, message}``."""
        return {"kind": self.kind, "run": self.run, "metric": self.metric, "count": self.count,
                "message": self.message}

    def __reduce__(self) -> tuple[Any, ...]:
        return (Notice, (self.message, self.kind, self.run, self.metric, self.count, self.details))


def notice_dicts(warnings: list[Any]) -> list[dict[str, Any]]:
    """Warnings as JSON objects (plain strings become ``kind='note'``).

    >>> notice_dicts(["x", Notice("y", "duplicates", run="r", count=2)])[1]["count"]
    2
    """
    return [w.to_dict() if isinstance(w, Notice) else Notice(str(w)).to_dict() for w in warnings]
