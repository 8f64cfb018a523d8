"""Readers for Parquet, JSON and JSONL qrels and runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rankwise.data.containers import Qrels, Run
from rankwise.data.trec_io import check_file, read_bytes
from rankwise.errors import InputError


def check_parquet_directory(path: str | os.PathLike[str]) -> None:
    """A directory is read as a Parquet dataset: it must hold ``.parquet`` files.

    >>> import tempfile
    >>> check_parquet_directory(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: ...: expected a file, got a directory with no .parquet file ...
    """
    if next(Path(path).rglob("*.parquet"), None) is None:
        raise InputError("expected a file, got a directory with no .parquet file (a directory is read as a "
                         "Parquet dataset)", source=str(path))


def _read_parquet(path: str | os.PathLike[str]) -> Any:
    """A Parquet file, or a directory of Parquet files (a dataset, files in name order)."""
    import pandas as pd

    if os.path.isdir(path):
        check_parquet_directory(path)
    else:
        check_file(path)
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"expected a Parquet file ({exc})", source=str(path)) from None


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object hook: a key given twice in one object would silently keep the last value
    (a whole query's ranking lost), so it is an error."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _loads(text: str, source: str, line: int | None = None) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        key = str(exc)
        at = line if line is not None else _line_of_key(text, key)
        raise InputError(f"the key {key!r} appears twice in one JSON object; expected each query "
                         "(and each document of a query) once", source=source, line=at) from None
    except json.JSONDecodeError as exc:
        what = "a JSON object per line" if line is not None else "valid JSON"
        raise InputError(f"expected {what} ({exc.msg})", source=source,
                         line=line if line is not None else exc.lineno) from None


def _line_of_key(text: str, key: str) -> int | None:
    """The line of the second occurrence of ``"key":`` (best effort, for the error message)."""
    needle = json.dumps(key) + ":"
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    if second < 0:
        needle = json.dumps(key)
        first = text.find(needle)
        second = text.find(needle, first + 1) if first >= 0 else -1
    return text.count("\n", 0, second) + 1 if second >= 0 else None


def _read_json_any(path: str | os.PathLike[str]) -> Any:
    """Return a dict (``{qid: {doc: value}}``) or a DataFrame of records (JSON list or JSONL)."""
    import pandas as pd

    source = str(path)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"expected UTF-8 text, got the byte {raw[exc.start:exc.start + 1]!r}", source=source,
                         line=raw.count(b"\n", 0, exc.start) + 1) from None
    if source.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            obj = _loads(line, source, lineno)
            if not isinstance(obj, dict):
                raise InputError("expected a JSON object per line", source=source, line=lineno)
            records.append(obj)
        return pd.DataFrame.from_records(records)
    obj = _loads(text, source)
    if isinstance(obj, list):
        return pd.DataFrame.from_records(obj)
    if isinstance(obj, dict):
        return obj
    raise InputError("expected a JSON object {qid: {docid: value}} or a list of records", source=source)


def _parquet_run(path: str | os.PathLike[str], name: str | None, default_name: str) -> Run:
    """A run from a Parquet file or dataset directory, read column by column with Arrow (no
    pandas round trip: ids stay Arrow strings)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    from rankwise.data.columns import DOC_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS, TAG_COLUMNS, pick_column

    source = str(path)
    if os.path.isdir(path):
        check_parquet_directory(path)
    else:
        check_file(path)
    try:
        dataset = ds.dataset(path, format="parquet")
        names = dataset.schema.names
        columns = [pick_column(names, QUERY_COLUMNS, "query id", source),
                   pick_column(names, DOC_COLUMNS, "document id", source),
                   pick_column(names, SCORE_COLUMNS, "score", source)]
        tag = pick_column(names, TAG_COLUMNS, "run tag", source, required=False)
        table = dataset.to_table(columns=columns + ([tag] if tag and name is None else []))
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(f"expected a Parquet file ({exc})", source=source) from None
    score = table.column(columns[2])
    if not (pa.types.is_floating(score.type) or pa.types.is_integer(score.type)):
        raise InputError(f"expected a numeric column, got {score.type}", source=source, field=columns[2])
    if name is None:
        name = str(table.column(tag)[0].as_py()) if tag is not None and table.num_rows else default_name
    values = np.asarray(score.to_numpy(), dtype=np.float64) if score.num_chunks else np.empty(0)
    return Run(table.column(columns[0]), table.column(columns[1]), values, name, source)


def read_tabular_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a run from Parquet, JSON (``{qid: {doc: score}}`` or records) or JSONL records."""
    source = str(path)
    default_name = Path(source.rstrip("/\\")).name.split(".")[0]
    if source.endswith(".parquet") or os.path.isdir(path):
        return _parquet_run(path, name, default_name)
    obj = _read_json_any(path)
    if isinstance(obj, dict):
        return Run.from_dict(obj, name=name or default_name, source=source)
    return Run.from_dataframe(obj, name=name, source=source, default_name=default_name)


def read_tabular_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read qrels from Parquet, JSON (``{qid: {doc: label}}`` or records) or JSONL records."""
    source = str(path)
    obj = _read_parquet(path) if source.endswith(".parquet") else _read_json_any(path)
    if isinstance(obj, dict):
        return Qrels.from_dict(obj, source=source)
    return Qrels.from_dataframe(obj, source=source)
