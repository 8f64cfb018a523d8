"""One entry point per input kind: anything a user may pass becomes a Qrels or a Run."""

from __future__ import annotations

import os
from typing import Any

from rankwise.data.containers import Qrels, Run
from rankwise.errors import InputError

_TABULAR_SUFFIXES = (".parquet", ".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz")
_DELIMITED_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz")
"""The suffixes ``rankwise.data.delimited`` reads (that module is imported only when one is read)."""


def _is_pandas(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def load_qrels(obj: Any, continuous: bool = False) -> Qrels:
    """Accept a Qrels, a path (TREC, CSV, TSV, Parquet, JSON, JSONL, optionally .gz), a DataFrame
    or a dict. ``continuous=True`` reads the labels as continuous relevance values (watch time,
    percentages, signed grades: any finite number), which the gain-based measures use as gains.

    >>> load_qrels({"q1": {"d1": 1}}).label.tolist()
    [1]
    >>> load_qrels({"q1": {"d1": 0.35}}, continuous=True).values.tolist()
    [0.35]
    """
    if isinstance(obj, Qrels):
        if continuous and not obj.continuous:
            return Qrels.from_values(obj.query, obj.doc, obj.label, obj.source, obj.lines, obj.notes)
        return obj
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if path.endswith(_TABULAR_SUFFIXES):
            from rankwise.data.tabular_io import read_tabular_qrels

            return read_tabular_qrels(path, continuous)
        if path.lower().endswith(_DELIMITED_SUFFIXES):
            from rankwise.data.delimited import read_delimited_qrels

            return read_delimited_qrels(path, continuous)
        from rankwise.data.trec_io import read_trec_qrels

        return read_trec_qrels(path, continuous)
    if _is_pandas(obj):
        return Qrels.from_dataframe(obj, continuous=continuous)
    if isinstance(obj, dict):
        return Qrels.from_dict(obj, continuous=continuous)
    raise InputError(f"cannot read qrels from a {type(obj).__name__}; expected a path, DataFrame or dict")


def load_run(obj: Any, name: str | None = None) -> Run:
    """Accept a Run, a path (TREC, CSV, TSV, Parquet, JSON, JSONL, optionally .gz), a DataFrame
    or a dict.

    >>> load_run({"q1": {"d1": 0.5}}, name="mine").name
    'mine'
    """
    if isinstance(obj, Run):
        if name is not None:
            obj.name = name
        return obj
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if path.endswith(_TABULAR_SUFFIXES) or os.path.isdir(path):  # a directory: a Parquet dataset
            from rankwise.data.tabular_io import read_tabular_run

            return read_tabular_run(path, name=name)
        if path.lower().endswith(_DELIMITED_SUFFIXES):
            from rankwise.data.delimited import read_delimited_run

            return read_delimited_run(path, name=name)
        from rankwise.data.trec_io import read_trec_run

        return read_trec_run(path, name=name)
    if _is_pandas(obj):
        return Run.from_dataframe(obj, name=name)
    if isinstance(obj, dict):
        return Run.from_dict(obj, name=name or "run")
    raise InputError(f"cannot read a run from a {type(obj).__name__}; expected a path, DataFrame or dict")


def split_runs(frame: Any) -> list[tuple[Any, str | None]]:
    """A long DataFrame holding several runs (a ``run`` / ``run_id`` / ``tag`` / ``system`` /
    ``name`` column with more than one value) as one (frame, name) per run, in order of first
    appearance; any other frame is one run named by its tag column, if any.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "a"], "score": [2.0, 1.0, 1.0],
    ...                   "system": ["bm25", "bm25", "dense"]})
    >>> [(name, len(part)) for part, name in split_runs(f)]
    [('bm25', 2), ('dense', 1)]
    """
    from rankwise.data.columns import TAG_COLUMNS, pick_column

    tag = pick_column(frame.columns, TAG_COLUMNS, "run tag", "<DataFrame>", required=False)
    if tag is None or frame[tag].nunique(dropna=False) <= 1:
        return [(frame, None)]
    return [(part, str(name)) for name, part in frame.groupby(tag, sort=False, dropna=False)]
