"""The inputs of the command being run, which no output may replace: the command line registers
them (``rankwise.cli.entry``), every writer checks them (``rankwise.data.atomic``). Light to
import: the console entry point reads it before NumPy is loaded."""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterable, Iterator

from rankwise.errors import OutputError

_PROTECTED: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("rankwise_inputs", default=())
"""The input paths of the command being run: no output may replace one of them."""


@contextlib.contextmanager
def protected_inputs(paths: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Within the block, every write through this module refuses a path that is the same file as
    one of ``paths`` (through symlinks and hard links): the command line registers each
    command's inputs here, so no command can write over what it reads.

    >>> import os, tempfile
    >>> log = os.path.join(tempfile.mkdtemp(), "log.csv"); _ = open(log, "w").write("unit\\n1\\n")
    >>> with protected_inputs([log]):
    ...     refuse_protected(log)
    Traceback (most recent call last):
    ...
    rankwise.errors.OutputError: log.csv: names an input of this command; write to another file ...
    >>> open(log).read()
    'unit\\n1\\n'
    """
    kept = tuple(os.fspath(p) for p in paths)
    token = _PROTECTED.set(_PROTECTED.get() + kept)
    try:
        yield
    finally:
        _PROTECTED.reset(token)


def _name(path: str) -> str:
    """The last part of a path, as ``pathlib.Path(path).name`` gives it (``pathlib`` is not
    imported here: the command line reads this module before it starts parsing a large run).

    >>> _name("runs/bm25.trec"), _name("runs/")
    ('bm25.trec', 'runs')
    """
    return os.path.basename(os.path.normpath(path))


def refuse_protected(path: str | os.PathLike[str]) -> None:
    """An ``OutputError`` when ``path`` is one of the protected inputs (see ``protected_inputs``)."""
    target = os.fspath(path)
    if not os.path.exists(target):
        return
    for source in _PROTECTED.get():
        try:
            same = os.path.samefile(source, target)
        except OSError:
            same = False
        if same:
            raise OutputError(f"{_name(target)}: names an input of this command; write to another file "
                              "(the input was left as it was)")


def refuse_protected_tree(directory: str | os.PathLike[str]) -> None:
    """An ``OutputError`` when the directory ``directory`` (to be written into or replaced) is a
    protected input or holds one.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp(); log = os.path.join(folder, "log.tsv"); _ = open(log, "w").close()
    >>> with protected_inputs([log]):
    ...     refuse_protected_tree(folder)
    Traceback (most recent call last):
    ...
    rankwise.errors.OutputError: ...: holds log.tsv, an input of this command; write to another directory
    """
    target = os.fspath(directory)
    refuse_protected(target)
    if not os.path.isdir(target):
        return
    root = os.path.realpath(target)
    for source in _PROTECTED.get():
        real = os.path.realpath(source)
        if real.startswith(root.rstrip(os.sep) + os.sep):
            raise OutputError(f"{target}: holds {_name(source)}, an input of this command; write to another "
                              "directory")



__all__ = ["protected_inputs", "refuse_protected", "refuse_protected_tree"]
