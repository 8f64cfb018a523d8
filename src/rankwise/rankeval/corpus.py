"""Documents to index: JSON Lines or CSV/TSV files, read with line numbers for every error."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rankwise.errors import InputError


def _open(path: Path) -> Any:
    from rankwise.data.limits import open_source

    return open_source(path, text=True, newline="")


def read_documents(path: str | Path, id_field: str, fields: list[str]) -> Iterator[tuple[int, str, dict[str, str]]]:
    """Yield ``(line, doc id, {field: text})`` for every document of a JSONL or CSV/TSV file.

    A document without the id field, a duplicate id or a non-text field value is an error with
    the file, line and field; a missing text field is read as empty text (the caller counts it).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"id": "d1", "title": "Heat", "body": "flow"}\\n{"id": "d2", "title": "Wing"}\\n')
    >>> list(read_documents(f.name, "id", ["title", "body"])); os.unlink(f.name)
    [(1, 'd1', {'title': 'Heat', 'body': 'flow'}), (2, 'd2', {'title': 'Wing', 'body': None})]
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", source=str(path))
    suffixes = [s for s in path.suffixes if s != ".gz"]
    kind = suffixes[-1].lower() if suffixes else ""
    seen: dict[str, int] = {}
    rows = _jsonl(path) if kind in (".jsonl", ".ndjson", ".json") else _csv(path, "\t" if kind == ".tsv" else ",")
    for line, record in rows:
        if id_field not in record or record[id_field] in (None, ""):
            raise InputError(f"missing document id; expected a value in {id_field!r}", source=str(path), line=line,
                             field=id_field)
        doc_id = str(record[id_field])
        if doc_id in seen:
            raise InputError(f"document id {doc_id!r} appears twice (first at line {seen[doc_id]})",
                             source=str(path), line=line, field=id_field)
        seen[doc_id] = line
        texts: dict[str, str] = {}
        for name in fields:
            value = record.get(name)
            if value is not None and not isinstance(value, (str, int, float)):
                raise InputError(f"expected text, got {type(value).__name__}", source=str(path), line=line,
                                 field=name)
            texts[name] = None if value is None else str(value)  # type: ignore[assignment]
        yield line, doc_id, texts
    if not seen:
        raise InputError("no documents", source=str(path))


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open(path) as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            from rankwise.data.documents import parse_json

            record = parse_json(text, str(path), number)   # repeated keys, deep nesting: errors naming the line
            if not isinstance(record, dict):
                raise InputError(f"expected a JSON object, got {type(record).__name__}", source=str(path), line=number)
            yield number, record


def _csv(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with _open(path) as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if reader.fieldnames is None:
            raise InputError("empty file; expected a header row", source=str(path), line=1)
        for record in reader:
            if None in record:
                raise InputError(f"more fields than the header's {len(reader.fieldnames)}", source=str(path),
                                 line=reader.line_num)
            yield reader.line_num, record
