"""Readers for Parquet, JSON and JSONL qrels and runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rankwise.data.containers import Qrels, Run
from rankwise.data.trec_io import read_bytes
from rankwise.errors import InputError


def _read_parquet(path: str | os.PathLike[str]) -> Any:
    import pandas as pd

    if not Path(path).exists():
        raise InputError("file not found", source=str(path))
    return pd.read_parquet(path)


def _read_json_any(path: str | os.PathLike[str]) -> Any:
    """Return a dict (``{qid: {doc: value}}``) or a DataFrame of records (JSON list or JSONL)."""
    import pandas as pd

    source = str(path)
    text = read_bytes(path).decode("utf-8")
    if source.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"expected a JSON object per line ({exc.msg})", source=source, line=lineno) from None
            if not isinstance(obj, dict):
                raise InputError("expected a JSON object per line", source=source, line=lineno)
            records.append(obj)
        return pd.DataFrame.from_records(records)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", source=source, line=exc.lineno) from None
    if isinstance(obj, list):
        return pd.DataFrame.from_records(obj)
    if isinstance(obj, dict):
        return obj
    raise InputError("expected a JSON object {qid: {docid: value}} or a list of records", source=source)


def read_tabular_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a run from Parquet, JSON (``{qid: {doc: score}}`` or records) or JSONL records."""
    source = str(path)
    obj = _read_parquet(path) if source.endswith(".parquet") else _read_json_any(path)
    default_name = Path(source).name.split(".")[0]
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
