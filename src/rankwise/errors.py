"""Exceptions and warnings shared by every layer of rankwise.

Every error about bad input names where the problem is (file, line, field) and what
was expected, so that a user can fix the input without reading rankwise's source.
"""

from __future__ import annotations


class RankwiseError(Exception):
    """Base class of every error rankwise raises on purpose."""


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
        super().__init__(f"unknown metric {name!r}{hint} (run `rankwise metrics` for the list)")
