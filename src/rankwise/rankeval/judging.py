"""The judging loop: write the unrated documents that reached the top k (to judge next) and read
judgments back from a CSV (``request_id,_id,rating``, e.g. the filled-in to-do file) or a TREC
qrels file (``request_id 0 doc_id rating``)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from rankwise.errors import InputError

TODO_COLUMNS = ("request_id", "_index", "_id", "rating", "systems", "best_rank", "query")


def write_unrated(rows: list[dict[str, Any]], path: str | Path) -> int:
    """Write the to-do rows (``RankEvalResult.unrated()``) as CSV with an empty ``rating``
    column to fill in; returns the number of rows."""
    from rankwise.data.atomic import atomic_open

    with atomic_open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=TODO_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def read_ratings(path: str | Path, match_index: bool = False) -> tuple[dict[str, dict[str, int]], int]:
    """Ratings from a CSV (``.csv.gz`` too) with ``request_id``, ``_id`` and ``rating`` columns
    (rows whose rating is still empty are skipped and counted) or from TREC qrels; returns (ratings, skipped),
    keyed by ``document_key``: with ``match_index`` the CSV needs an ``_index`` column (TREC
    qrels have none).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("request_id,_index,_id,rating\\nq1,i,d1,2\\nq1,i,d2,\\n")
    >>> read_ratings(f.name); os.unlink(f.name)
    ({'q1': {'d1': 2}}, 1)
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", source=str(path))
    if path.name.lower().endswith((".csv", ".csv.gz")):
        return _csv(path, match_index)
    if match_index:
        raise InputError("TREC qrels carry no _index; matching ratings on _index and _id needs a CSV with "
                         "request_id,_index,_id,rating", source=str(path))
    from rankwise.data.load import load_qrels

    qrels = load_qrels(str(path))
    out: dict[str, dict[str, int]] = {}
    for q, d, label in zip(qrels.query.to_pylist(), qrels.doc.to_pylist(), qrels.label.tolist(), strict=True):
        out.setdefault(str(q), {})[str(d)] = int(label)
    return out, 0


def _csv(path: Path, match_index: bool = False) -> tuple[dict[str, dict[str, int]], int]:
    from rankwise.rankeval.backends import document_key

    out: dict[str, dict[str, int]] = {}
    skipped = 0
    import io

    from rankwise.data.trec_io import read_text

    with io.StringIO(read_text(path), newline="") as f:
        reader = csv.DictReader(f)
        needed = ("request_id", "_index", "_id", "rating") if match_index else ("request_id", "_id", "rating")
        missing = [c for c in needed if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; expected {', '.join(needed)}",
                             source=str(path), line=1)
        for row in reader:
            text = (row["rating"] or "").strip()
            if not text:
                skipped += 1
                continue
            rating = integral_rating(text, str(path), reader.line_num)
            docs = out.setdefault(row["request_id"], {})
            key = document_key(row.get("_index"), row["_id"], match_index)
            if key in docs and docs[key] != rating:
                raise InputError(f"document {row['_id']!r} is rated twice for request {row['request_id']!r} "
                                 "with different ratings", source=str(path), line=reader.line_num, field="_id")
            docs[key] = rating
    return out, skipped


def integral_rating(text: str, source: str, line: int) -> int:
    """A rating cell as an integer: ``2``, and ``2.0`` / ``2e0`` (what a CSV that went through
    pandas or a spreadsheet holds) when the number is integral; anything else is an error.

    >>> integral_rating("2", "r.csv", 2), integral_rating("1.0", "r.csv", 3)
    (2, 1)
    >>> integral_rating("1.5", "r.csv", 4)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: r.csv:4: field 'rating': expected an integer, got '1.5'
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if value.is_integer():
        return int(value)
    raise InputError(f"expected an integer, got {text!r}", source=source, line=line, field="rating")
