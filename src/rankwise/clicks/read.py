"""Any click log a command line names: a stored log (a directory with ``log.json``), a file
in the Yandex relevance-prediction format, or long rows (session, query, rank, doc, click)
in any table format rankwise reads."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rankwise.clicks.log import ClickLog, read_yandex
from rankwise.clicks.store import open_log

FORMATS = ("auto", "stored", "yandex", "long")


def _looks_like_yandex(path: Path) -> bool:
    from rankwise.data.limits import open_source

    with open_source(path, text=True, errors="replace") as handle:
        fields = handle.readline().rstrip("\n").split("\t")
    return len(fields) >= 3 and fields[2] in ("Q", "C")


def read_log(path: str | os.PathLike[str], log_format: str = "auto", ranks: int = 10, **columns: str) -> Any:
    """A ``ClickLog`` (or a ``StoredClickLog`` for a stored directory) from ``path``;
    ``log_format`` one of auto, stored, yandex, long; ``columns`` rename the long-row columns
    (``session=``, ``query=``, ``rank=``, ``doc=``, ``click=``).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "log.tsv")
    >>> _ = open(path, "w").write("7\\t0\\tQ\\t1\\t0\\ta\\tb\\n7\\t3\\tC\\tb\\n")
    >>> read_log(path).clicks.tolist()
    [[0, 1]]
    """
    from rankwise.errors import InputError

    path = Path(path)
    if log_format not in FORMATS:
        raise InputError(f"unknown log format {log_format!r}; expected one of {', '.join(FORMATS)}",
                         field="log_format")
    if not path.exists():
        raise InputError("no such file or directory", source=str(path))
    if log_format == "stored" or (log_format == "auto" and path.is_dir() and (path / "log.json").exists()):
        return open_log(path)
    if log_format == "yandex" or (log_format == "auto" and path.is_file() and _looks_like_yandex(path)):
        return read_yandex(path, ranks=ranks)
    return ClickLog.from_long(path, **columns)
