"""Readers for Parquet, JSON and JSONL qrels and runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rankwise.data.containers import Qrels, Run
from rankwise.data.trec_io import check_file, read_bytes
from rankwise.errors import InputError


def _read_parquet(path: str | os.PathLike[str]) -> Any:
    import pandas as pd

    if os.path.isdir(path):   # a directory is a Parquet dataset, as for runs
        from rankwise.data.pieces import parquet_row_counts

        parquet_row_counts(path)   # a directory without Parquet files, a file in it that is not Parquet
    else:
        check_file(path)
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
        raise InputError(f"expected a Parquet file or a directory of Parquet files ({exc})",
                         source=str(path)) from None


def _loads(text: str, source: str, line: int | None = None) -> Any:
    from rankwise.data.documents import RepeatedKey, check_depth, too_deep, unique_keys

    try:
        return check_depth(json.loads(text, object_pairs_hook=unique_keys), source, line)
    except RecursionError:
        raise too_deep(source, line) from None
    except RepeatedKey as exc:
        key = exc.key
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
    raw = read_bytes(path, lines=source.endswith((".jsonl", ".jsonl.gz", ".ndjson")))   # JSON may be one line
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


def read_tabular_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a run from Parquet, JSON (``{qid: {doc: score}}`` or records) or JSONL records."""
    source = str(path)
    default_name = Path(source.rstrip("/\\")).name.split(".")[0]
    if source.endswith(".parquet") or os.path.isdir(path):  # Arrow columns, no pandas round trip
        from rankwise.data.pieces import ParquetRunPieces

        return ParquetRunPieces(path, name).whole()
    obj = _read_json_any(path)
    if isinstance(obj, dict):
        return Run.from_dict(obj, name=name or default_name, source=source)
    return Run.from_dataframe(obj, name=name, source=source, default_name=default_name)


def read_tabular_qrels(path: str | os.PathLike[str], continuous: bool = False) -> Qrels:
    """Read qrels from Parquet (a file or a dataset directory), JSON (``{qid: {doc: label}}`` or
    records) or JSONL records; ``continuous``: the labels are continuous relevance values."""
    source = str(path)
    parquet = source.endswith(".parquet") or os.path.isdir(path)
    obj = _read_parquet(path) if parquet else _read_json_any(path)
    if isinstance(obj, dict):
        return Qrels.from_dict(obj, source=source, continuous=continuous)
    return Qrels.from_dataframe(obj, source=source, continuous=continuous)
