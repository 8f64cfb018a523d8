"""trec_eval 10.0's grammar for run and qrels lines, byte for byte, with precise errors.

What trec_eval does (``get_trec_results.c``, ``get_qrels.c``) and so what this module does:

- lines end at ``\\n`` only; fields are separated by runs of C ``isspace`` bytes other than
  ``\\n``: space, ``\\t``, ``\\v``, ``\\f``, ``\\r``. Nothing else separates fields: NBSP, U+2028,
  ``\\x1c``-``\\x1f`` and ``\\x85`` are part of an id;
- run lines: blank lines and lines whose first field starts with ``#`` are skipped; at least 6
  fields (``query Q0 doc rank score tag``), later ones ignored; the score is read by C ``atof``
  (its longest numeric prefix: ``1_000`` is 1, ``abc`` is 0), the tag of the last line names the run;
- qrels lines: exactly 4 fields (``query iteration doc label``); a blank line is malformed;
  a line starting with ``#`` is a comment; the label is read by C ``atol``.

rankwise refuses, where trec_eval would read garbage or crash: NUL bytes, ids that are not
UTF-8, NaN scores and labels outside int64. Everything trec_eval reads but not as written (a
score or label that is not a plain number, extra fields, several run tags) is counted in a
warning that names the first line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from rankwise.errors import InputError, Notice

RUN_FIELDS = ("query", "q0", "doc", "rank", "score", "tag")
QRELS_FIELDS = ("query", "iteration", "doc", "label")

_FLOAT = re.compile(
    rb"[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    rb"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|(?i:infinity|inf|nan(?:\([0-9A-Za-z_]*\))?))")
_INT = re.compile(rb"[+-]?[0-9]+")



def delimited_hint(raw: bytes, source: str) -> str:
    """A hint when a line of a TREC file looks comma- or semicolon-separated: the delimiter, not
    the content, is the problem.

    >>> delimited_hint(b"qid,Q0,docno,rank,score,tag", "run.txt")[:44]
    '; the line looks comma-separated: name the f'
    """
    for name, byte in (("comma", b","), ("semicolon", b";")):
        if raw.count(byte) >= 2:
            return (f"; the line looks {name}-separated: name the file .csv (or .tsv) and rankwise reads it as a "
                    "table (with or without a header)")
    return ""


def c_atof(token: bytes) -> tuple[float, bool]:
    """C ``atof`` (``strtod`` in the C locale): the value of the longest numeric prefix, 0.0 if
    there is none; and whether the whole token was that number.

    >>> c_atof(b"2.5"), c_atof(b"1_000"), c_atof(b"abc"), c_atof(b"0x1p3"), c_atof(b"1e5x")
    ((2.5, True), (1.0, False), (0.0, False), (8.0, True), (100000.0, False))
    """
    m = _FLOAT.match(token)
    if m is None:
        return 0.0, False
    text = m.group(0)
    low = text.lower().lstrip(b"+-")
    if low.startswith(b"0x"):
        sign = -1.0 if text.startswith(b"-") else 1.0
        body = low[2:].decode()
        if "p" not in body:
            body += "p0"
        value = sign * float.fromhex("0x" + (body if not body.startswith(".") else "0" + body))
    elif low.startswith(b"nan"):
        value = float("nan")
    else:
        value = float(text)  # Python reads "inf", "infinity" in any case, like strtod
    return value, len(text) == len(token)


def _is_decimal(token: bytes) -> bool:
    """True for a finite decimal number such as ``b"0.35"`` (a continuous label, not a typo).

    >>> _is_decimal(b"0.35"), _is_decimal(b"abc")
    (True, False)
    """
    try:
        return bool(np.isfinite(float(token)))
    except ValueError:
        return False


def c_atol(token: bytes) -> tuple[int, bool]:
    """C ``atol``: the integer prefix (0 if none) and whether it was the whole token.

    >>> c_atol(b"2"), c_atol(b"2.5"), c_atol(b"abc"), c_atol(b"-1")
    ((2, True), (2, False), (0, False), (-1, True))
    """
    m = _INT.match(token)
    if m is None:
        return 0, False
    return int(m.group(0)), m.end() == len(token)


@dataclass
class Lines:
    """The fields trec_eval reads from a file, with line numbers and what was skipped or changed."""

    source: str
    queries: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    values: list[float] | np.ndarray = field(default_factory=list)
    numbers: list[int] | np.ndarray = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    first_line: dict[str, int] = field(default_factory=dict)
    examples: dict[str, bytes] = field(default_factory=dict)

    def keep(self, parts: list[bytes], line: int, value: float) -> None:
        """Record one data line: its query and document ids (fields 1 and 3) and its number."""
        self.queries.append(_decode(parts[0], self.source, line, "query"))
        self.docs.append(_decode(parts[2], self.source, line, "doc"))
        self.values.append(value)  # type: ignore[union-attr]
        self.numbers.append(line)  # type: ignore[union-attr]

    def finish(self, dtype: type, require_data: bool = True) -> Lines:
        """Turn the kept values and line numbers into arrays; a file without data is an error."""
        if not self.numbers and require_data:
            raise InputError("the file holds no data lines", source=self.source)
        self.values = np.asarray(self.values, dtype=dtype)
        self.numbers = np.asarray(self.numbers, dtype=np.int64)
        return self

    def note(self, what: str, line: int, example: bytes = b"") -> None:
        if what not in self.counts:
            self.first_line[what] = line
            self.examples[what] = example
        self.counts[what] = self.counts.get(what, 0) + 1

    def notes(self, source: str, number_field: str) -> list[Notice]:
        """The warnings: one per kind of thing skipped or read differently, with its count."""
        out = []
        messages = {
            "comment": "comment line(s) starting with '#' skipped",
            "blank": "blank line(s) skipped",
            "extra": "line(s) had fields after the 6th; they were ignored, as trec_eval does",
            "inexact": f"{number_field}(s) were not plain numbers and were read as C's "
                       f"{'atof' if number_field == 'score' else 'atol'} reads them, as trec_eval does",
        }
        for what, message in messages.items():
            if what in self.counts:
                shown = self.examples[what].decode("utf-8", "backslashreplace")
                example = f" ({shown!r})" if shown else ""
                hint = ""
                if what == "inexact" and number_field == "label" and _is_decimal(self.examples[what]):
                    hint = (" (continuous relevance: read the qrels with continuous=True, rankwise evaluate "
                            "--continuous)")
                out.append(Notice(f"{source}: {self.counts[what]} {message}; first at line "
                                  f"{self.first_line[what]}{example}{hint}", f"reader_{what}",
                                  count=self.counts[what]))
        return out


def _decode(token: bytes, source: str, line: int, name: str) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"expected UTF-8 text, got the byte {token[exc.start:exc.start + 1]!r} "
                         f"at position {exc.start} of {token!r}", source=source, line=line, field=name) from None


def _lines(data: bytes, source: str, first_line: int = 1) -> list[bytes]:
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + first_line
        raise InputError("expected text, found a NUL byte (trec_eval would silently stop reading here)",
                         source=source, line=line)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


SWAPPED_HINT = ("; this line has the layout of a {found} file ({layout}): are the qrels and the run given in "
                "the wrong order? (qrels first, then runs)")


def parse_run_lines(data: bytes, source: str, first_line: int = 1,
                    require_data: bool = True) -> tuple[Lines, list[str]]:
    """Parse a TREC run as trec_eval does; returns the fields and the distinct tags, the tag of the
    last line (which names the run in trec_eval) last. ``data`` starts at line ``first_line`` of
    the file (a piece of a file read piece by piece); a piece may hold no data line
(``require_data=False``).

    >>> lines, tags = parse_run_lines(b"q1 Q0 d1 1 2.5 bm25\\n# note\\nq1\\tQ0 d2 2 1_0 bm25 x\\n", "r")
    >>> lines.docs, lines.values.tolist(), lines.counts
    (['d1', 'd2'], [2.5, 1.0], {'comment': 1, 'extra': 1, 'inexact': 1})
    """
    tags: list[bytes] = []
    out = Lines(source)
    for lineno, raw in enumerate(_lines(data, source, first_line), start=first_line):
        parts = raw.split()
        if not parts:
            out.note("blank", lineno)
            continue
        if parts[0].startswith(b"#"):
            out.note("comment", lineno)
            continue
        if len(parts) < 6:
            raise InputError(
                f"malformed line: expected 6 fields separated by spaces or tabs ({' '.join(RUN_FIELDS)}), "
                f"found {len(parts)}: missing '{RUN_FIELDS[len(parts)]}' (trec_eval: 'Malformed line')"
                + (SWAPPED_HINT.format(found="qrels", layout=" ".join(QRELS_FIELDS)) if len(parts) == 4 else "")
                + delimited_hint(raw, source), source=source, line=lineno)
        if len(parts) > 6:
            out.note("extra", lineno)
        value, exact = c_atof(parts[4])
        if value != value:
            raise InputError(f"expected a number, got {parts[4].decode('utf-8', 'backslashreplace')!r}: NaN "
                             "scores have no order", source=source, line=lineno, field="score")
        if not exact:
            out.note("inexact", lineno, parts[4])
        out.keep(parts, lineno, value)
        tags.append(parts[5])
    if not tags and not require_data:
        return out.finish(np.float64, require_data), []
    out.finish(np.float64)
    last = tags[-1]
    distinct = [t for t in dict.fromkeys(tags) if t != last] + [last]  # the last line's tag last
    names = [_decode(t, source, int(out.numbers[tags.index(t)]), "tag") for t in distinct]
    return out, names


def parse_qrels_lines(data: bytes, source: str) -> Lines:
    """Parse TREC qrels as trec_eval does (exactly 4 fields; blank lines are malformed).

    >>> parse_qrels_lines(b"q1 0 d1 2\\n#c\\nq1 0 d2 -1\\n", "q").values.tolist()
    [2, -1]
    """
    out = Lines(source)
    for lineno, raw in enumerate(_lines(data, source), start=1):
        if raw.startswith(b"#"):
            out.note("comment", lineno)
            continue
        parts = raw.split()
        if len(parts) != 4:
            what = "a blank line" if not parts else f"{len(parts)} field(s)"
            raise InputError(
                f"malformed line: expected exactly 4 fields separated by spaces or tabs "
                f"({' '.join(QRELS_FIELDS)}), found {what} (trec_eval: 'Malformed line')"
                + (SWAPPED_HINT.format(found="run", layout=" ".join(RUN_FIELDS)) if len(parts) == 6 else "")
                + delimited_hint(raw, source), source=source, line=lineno)
        value, exact = c_atol(parts[3])
        if not -(2**63) <= value < 2**63:
            raise InputError(f"expected an integer between -2^63 and 2^63 - 1, got {value}",
                             source=source, line=lineno, field="label")
        if not exact:
            out.note("inexact", lineno, parts[3])
        out.keep(parts, lineno, value)
    return out.finish(np.int64)
