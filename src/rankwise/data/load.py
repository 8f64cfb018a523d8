"""One entry point per input kind: anything a user may pass becomes a Qrels or a Run."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
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
        kind = _file_kind(path)
        if kind == "tabular":
            from rankwise.data.tabular_io import read_tabular_qrels

            return read_tabular_qrels(path, continuous)
        if kind == "delimited":
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
        kind = _file_kind(path)
        if kind == "tabular":
            from rankwise.data.tabular_io import read_tabular_run

            return read_tabular_run(path, name=name)
        if kind == "delimited":
            from rankwise.data.delimited import read_delimited_run

            return read_delimited_run(path, name=name)
        run = _read_ahead(path)
        if run is None:
            from rankwise.data.trec_io import read_trec_run

            return read_trec_run(path, name=name)
        if name is not None:
            run.name = name
        return run
    if _is_pandas(obj):
        return Run.from_dataframe(obj, name=name)
    if isinstance(obj, dict):
        return Run.from_dict(obj, name=name or "run")
    raise InputError(f"cannot read a run from a {type(obj).__name__}; expected a path, DataFrame or dict")


_AHEAD: dict[tuple[Any, ...], Future[Run]] = {}
"""The run files being read ahead (``reading_ahead``), by the identity of the file."""


def _file_identity(path: str) -> tuple[Any, ...] | None:
    """What identifies a regular file's content: its path, device, inode, size and time of
    last change (None for anything else: standard input, a directory, a missing file)."""
    import stat

    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return os.path.realpath(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _file_kind(path: str) -> str:
    """How ``load_run`` and ``load_qrels`` read this path: ``tabular`` (Parquet, JSON, JSONL, or a directory: a
    Parquet dataset), ``delimited`` (CSV, TSV) or ``trec``.

    >>> _file_kind("bm25.parquet"), _file_kind("bm25.TSV"), _file_kind("bm25.trec.gz")
    ('tabular', 'delimited', 'trec')
    """
    if path.endswith(_TABULAR_SUFFIXES) or os.path.isdir(path):
        return "tabular"
    if path.lower().endswith(_DELIMITED_SUFFIXES):
        return "delimited"
    return "trec"


@contextmanager
def reading_ahead(paths: Sequence[str]) -> Iterator[None]:
    """Read these TREC run files in a background thread, one after the other, while the caller
    gets ready (imports, the qrels): ``load_run`` on one of them, inside the block, waits for its
    read and takes it, or raises the error the read met. A file changed since the read began is
    read again; anything but a TREC run file is left to ``load_run``; reads not taken by the end
    of the block are dropped.

    The command line's short commands start this as soon as pyarrow is imported: the parse of a
    large run then uses the processor the imports leave idle.

    >>> import tempfile
    >>> path = tempfile.NamedTemporaryFile("w", suffix=".trec", delete=False).name
    >>> _ = open(path, "w").write("q1 Q0 d1 1 2.5 bm25\\n")
    >>> with reading_ahead([path]):
    ...     run = load_run(path, name="mine")
    >>> run.name, run.doc.to_pylist(), _AHEAD
    ('mine', ['d1'], {})
    >>> os.unlink(path)
    """
    from concurrent.futures import ThreadPoolExecutor

    started: list[tuple[Any, ...]] = []
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rankwise-read-ahead")
    try:
        for path in paths:
            identity = _file_identity(path)
            if identity is not None and identity not in _AHEAD and _file_kind(path) == "trec":
                _AHEAD[identity] = pool.submit(_read_trec_run, path)
                started.append(identity)
        yield
    finally:
        for identity in started:
            _AHEAD.pop(identity, None)
        pool.shutdown(wait=False, cancel_futures=True)  # an error need not wait for a read nobody takes


def _read_trec_run(path: str) -> Run:
    from rankwise.data.trec_io import read_trec_run

    return read_trec_run(path)


def _read_ahead(path: str) -> Run | None:
    """The run read ahead from ``path`` (None if none was, or the file changed since)."""
    if not _AHEAD:
        return None
    future = _AHEAD.pop(_file_identity(path) or (), None)
    return None if future is None else future.result()


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
