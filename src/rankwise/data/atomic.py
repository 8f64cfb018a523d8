"""Files that appear whole or not at all.

Everything rankwise writes goes to a temporary file in the destination's directory and is
renamed onto the destination only when it is complete (``os.replace``, atomic on POSIX and
Windows within one file system). A full disk, an error or Ctrl-C on the way leaves the old
file, or none, and removes the temporary file; a failure to write is a ``OutputError`` naming
the file, never a raw ``OSError``.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
>>> write_text(path, "complete\\n")
>>> try:
...     with atomic_open(path, "w") as f:
...         _ = f.write("half a fi")
...         raise KeyboardInterrupt
... except KeyboardInterrupt:
...     pass
>>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))   # the old file, no leftovers
('complete\\n', ['out.txt'])
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from rankwise.errors import OutputError
from rankwise.protected import protected_inputs, refuse_protected, refuse_protected_tree


def _mode_for_new_file() -> int:
    """The permission bits an ordinary ``open(path, "w")`` would give (0o666 less the umask)."""
    return 0o666 & ~_umask()


_SYSTEM_FOLDERS = ("/dev/", "/proc/")
"""Paths written in place whatever they are (``/dev/stdout``, ``/proc/self/fd/1``): a rename
there would replace the system's own entry."""


def _in_place(target: Path) -> bool:
    """Whether ``target`` is written in place: a device, a pipe, or a path that is or passes
    through ``/dev`` or ``/proc`` (``/dev/stdout`` is a link to ``/proc/self/fd/1``, which is
    a link to whatever standard output is, a file included)."""
    hops = [target]
    while hops[-1].is_symlink() and len(hops) < 40:
        hops.append(hops[-1].parent / os.readlink(hops[-1]))
    return _is_special(target) or any(str(h).startswith(_SYSTEM_FOLDERS) for h in hops)


def _is_special(target: Path) -> bool:
    """A path that exists and is not a regular file or directory (a device, a pipe, a socket):
    written in place, never replaced by a rename."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends
    without an error, removed otherwise (the old ``path`` is untouched). A device or a pipe
    (``/dev/stdout``, a FIFO) is written in place; a write that fails there (``/dev/full``, a
    closed pipe) is an ``OutputError`` too. A protected input is refused before anything is
    written."""
    import tempfile

    target = Path(path)
    refuse_protected(target)
    if target.is_dir():
        raise OutputError(f"{target}: is a directory; expected a file to write")
    if _in_place(target):
        try:
            yield target
        except OSError as error:
            raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None
        return
    target = Path(os.path.realpath(target)) if target.is_symlink() else target   # the link is kept
    folder = target.parent if str(target.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=folder)
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None
    os.close(handle)
    done = False
    try:
        yield Path(temporary)
        mode = os.stat(target).st_mode & 0o777 if target.exists() else _mode_for_new_file()
        os.chmod(temporary, mode)
        os.replace(temporary, target)
        done = True
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error}); the file was left as it was") \
            from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = None,
                newline: str | None = None) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing, through ``atomic_path``."""
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    with atomic_path(path) as temporary, open(temporary, mode, encoding=encoding, newline=newline) as f:
        yield f


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str], marker: str, kind: str) -> Iterator[Path]:
    """A temporary directory beside ``path`` to fill; when the block ends without an error it
    takes the place of ``path``, whole, and whatever was there goes; an error or Ctrl-C removes it
    and leaves ``path`` as it was. A directory at ``path`` is replaced only when it is empty or is
    a ``kind`` (it holds the file ``marker``, which only rankwise writes there): any other
    directory, a file, or a directory holding an input of the command is refused before anything
    is written.

    >>> import os, tempfile
    >>> folder = os.path.join(tempfile.mkdtemp(), "index")
    >>> with atomic_directory(folder, "meta.json", "rankwise index") as temporary:
    ...     _ = (temporary / "meta.json").write_text("{}")
    >>> try:
    ...     with atomic_directory(folder, "meta.json", "rankwise index") as temporary:
    ...         _ = (temporary / "half").write_text("...")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> os.listdir(folder), os.listdir(os.path.dirname(folder))   # the old directory, no leftovers
    (['meta.json'], ['index'])
    """
    import shutil
    import tempfile

    target = Path(path)
    refuse_protected_tree(target)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{target}: exists and is not a directory; a {kind} is a directory")
    if target.is_dir() and any(target.iterdir()) and not (target / marker).is_file():
        raise OutputError(f"{target}: is not a {kind} (it has no {marker}) and is not empty; rankwise replaces "
                          f"only a {kind} it wrote: choose another directory")
    folder = target.parent if str(target.parent) else Path(".")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=folder))
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error})") from None
    try:
        yield temporary
        os.chmod(temporary, 0o777 & ~_umask())
        _replace_directory(temporary, target)
    except OSError as error:
        raise OutputError(f"{target}: cannot write ({error.strerror or error}); the directory was left as it "
                          "was") from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _replace_directory(new: Path, target: Path) -> None:
    """Move the directory ``new`` to ``target``; a directory already there is moved aside first
    and removed once ``new`` is in place (moved back if it cannot be)."""
    import shutil
    import tempfile

    if not target.exists():
        os.rename(new, target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=new.parent))
    old = aside / "old"
    os.rename(target, old)
    try:
        os.rename(new, target)
    except OSError:
        os.rename(old, target)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """``Path(path).write_text(text)``, whole or not at all."""
    with atomic_open(path, "w", encoding=encoding) as f:
        f.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """``Path(path).write_bytes(data)``, whole or not at all."""
    with atomic_open(path, "wb") as f:
        f.write(data)


__all__ = ["atomic_directory", "atomic_open", "atomic_path", "protected_inputs", "refuse_protected",
           "refuse_protected_tree", "write_bytes", "write_text"]
