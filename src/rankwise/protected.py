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
    """An ``OutputError`` when ``path`` is one of the protected inputs (see ``protected_inputs``)
    or a file inside a protected input directory (a Parquet dataset, a folder of runs: the
    command reads its files), through symlinks and hard links.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp(); part = os.path.join(folder, "part-0.parquet")
    >>> _ = open(part, "w").write("rows")
    >>> with protected_inputs([folder]):
    ...     refuse_protected(part)
    Traceback (most recent call last):
    ...
    rankwise.errors.OutputError: part-0.parquet: is inside ..., an input directory of this command; ...
    """
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
        if os.path.isdir(source) and _inside(target, source):
            raise OutputError(f"{_name(target)}: is inside {source}, an input directory of this command; write "
                              "outside it (the input was left as it was)")


def _inside(target: str, directory: str) -> bool:
    """Whether the existing file ``target`` is inside ``directory``: by its resolved path, or,
    for a file with several hard links, by being the same file as one found under it.

    >>> import os, tempfile
    >>> folder, elsewhere = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> part = os.path.join(folder, "a", "part.csv"); os.makedirs(os.path.dirname(part))
    >>> _ = open(part, "w").close(); os.link(part, os.path.join(elsewhere, "link.csv"))
    >>> _inside(part, folder), _inside(os.path.join(elsewhere, "link.csv"), folder), _inside(folder, elsewhere)
    (True, True, False)
    """
    root = os.path.realpath(directory).rstrip(os.sep) + os.sep
    if os.path.realpath(target).startswith(root):
        return True
    info = os.stat(target)
    if info.st_nlink < 2 or not os.path.isfile(target):
        return False
    for folder, _, names in os.walk(directory):
        for name in names:
            try:
                found = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            if (found.st_dev, found.st_ino) == (info.st_dev, info.st_ino):
                return True
    return False


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
