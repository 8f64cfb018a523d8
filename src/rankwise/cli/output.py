"""What every command does with its inputs and results, without the Typer application: read
``-`` and ``NAME=PATH`` arguments, print tables and warnings, fail with a message (importing
this module loads neither Typer nor rich, so ``rankwise evaluate`` can start without them)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from pathlib import Path

_YELLOW = "\x1b[33m"
_RESET = "\x1b[0m"


def echo(text: str, *, err: bool = False, newline: bool = True) -> None:
    """Write ``text`` (and a newline) to standard output, or standard error with ``err``."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + ("\n" if newline else ""))
    stream.flush()


def emit(text: str, output: Path | None, warnings: Sequence[Any] = (), fmt: str | None = None) -> None:
    """Write ``text`` to ``output`` (ending with a newline) or to standard output. A file gets
    the ``warnings`` too, in format ``fmt``'s own syntax (``rankwise.report.annotate``); on
    standard output they go to standard error (``warn``), CSV's comment lines excepted."""
    if output and warnings and fmt:
        from rankwise.report.annotate import COMMENT, STYLE_OF_FORMAT, annotated

        style = STYLE_OF_FORMAT.get(fmt)
        if not (style == "csv" and text.startswith(COMMENT + "warning:")):
            text = annotated(text, warnings, style)
    if output:
        from rankwise.data.atomic import write_text

        _written(write_text, output, text if text.endswith("\n") else text + "\n")
    else:
        echo(text, newline=not text.endswith("\n"))


def _written(write: Any, output: Path, content: Any) -> None:
    """``write(output, content)``, a failure to write ending the command with its message."""
    from rankwise.errors import OutputError

    try:
        write(output, content)
    except OutputError as error:
        fail(str(error))


def column_hint(message: str, options: dict[str, str]) -> str:
    """A "missing column(s)" error with the options that name those columns: the user sees what
    to type.

    >>> column_hint("log.csv: missing column(s) 'unit'; it has 'user', 'arm'", {"unit": "--unit", "arm": "x"})
    "log.csv: missing column(s) 'unit'; it has 'user', 'arm' (name the column with --unit NAME)"
    """
    import re

    match = re.search(r"missing column\(s\) ((?:'[^']*'(?:, )?)+)", message)
    if match is None:
        return message
    missing = re.findall(r"'([^']*)'", match.group(1))
    flags = [options[m] if "NAME" in options[m] else f"{options[m]} NAME" for m in missing if m in options]
    if not flags:
        return message
    return f"{message} (name the column{'s' if len(flags) > 1 else ''} with {', '.join(flags)})"


def deprecated_flag(value: Any, old_value: Any, new: str, old: str, elsewhere: str | None) -> Any:
    """The value of option ``new``, or of its old short spelling ``old`` with a deprecation
    warning (``old`` means ``elsewhere`` in other commands: one flag, one meaning).

    >>> deprecated_flag("holm", None, "--correction", "-c", "--complete")
    'holm'
    """
    if old_value is None or old_value is False:
        return value
    if elsewhere is None:   # a renamed option: the old spelling means nothing else anywhere
        warn([f"{old} is deprecated: write {new}"])
    else:
        warn([f"{old} is deprecated here: write {new} ({old} is {elsewhere} in the other commands)"])
    return old_value


def warn(warnings: list[Any]) -> None:
    """Print each warning on standard error (yellow on a terminal), as the command line words it."""
    color = sys.stderr.isatty()
    for w in warnings:
        line = f"warning: {where(str(w))}"
        echo(f"{_YELLOW}{line}{_RESET}" if color else line, err=True)


def fail(message: str) -> NoReturn:
    """Print ``rankwise: error: message`` on standard error and exit with status 2."""
    echo(f"rankwise: error: {where(message)}", err=True)
    raise SystemExit(2)


_SIGNATURE_WANTED: list[bool] = [False]
"""Whether the running command was given ``--signature`` (set by ``cli.options.with_signature``)."""


def signature_lines(settings: dict[str, Any]) -> list[str]:
    """The signature(s) a result's ``settings`` carry, one line each: ``signature`` as it is,
    ``signatures`` (one per measure) as ``measure: signature``.

    >>> signature_lines({"signatures": {"P@5": "P@5|rel=1|rankwise-1.0"}})
    ['P@5: P@5|rel=1|rankwise-1.0']
    """
    if "signature" in settings:
        return [str(settings["signature"])]
    return [f"{name}: {value}" for name, value in settings.get("signatures", {}).items()]


@contextmanager
def signing(wanted: bool) -> Iterator[None]:
    """While the block runs, ``sign`` prints signatures if ``wanted`` (the command's
    ``--signature``)."""
    _SIGNATURE_WANTED[0] = bool(wanted)
    try:
        yield
    finally:
        _SIGNATURE_WANTED[0] = False


def sign(result: Any) -> None:
    """Print the signature(s) of ``result`` (its ``settings``) on standard error when the command
    was given ``--signature``: what produced the numbers, to paste beside them."""
    if _SIGNATURE_WANTED[0]:
        for line in signature_lines(result.settings):
            echo(f"signature: {line}", err=True)


OUTPUT_OPTIONS = ("-o", "--output", "--plot")
"""The options that name a file a command writes, in every command; ``COMMAND_OUTPUTS`` adds
each command's own. Every other argument naming an existing file or directory is one of the
command's inputs (``command_inputs``)."""

COMMAND_OUTPUTS: dict[str, tuple[str, ...]] = {
    "clicks split": ("--train", "--held-out"),
    "rank-eval": ("--unrated-out",),
}
"""Output options of one command beyond ``OUTPUT_OPTIONS`` (``--train`` is an input of
``beyond`` and an output of ``clicks split``)."""


def output_options(argv: list[str]) -> tuple[str, ...]:
    """The output options of the command ``argv`` names.

    >>> output_options(["clicks", "split", "log.tsv"])
    ('-o', '--output', '--plot', '--train', '--held-out')
    >>> output_options(["beyond", "reco.csv", "--train", "train.csv"])
    ('-o', '--output', '--plot')
    """
    words = [a for a in argv[:2] if not a.startswith("-")]
    for length in (2, 1):
        extra = COMMAND_OUTPUTS.get(" ".join(words[:length]))
        if extra and len(words) >= length:
            return OUTPUT_OPTIONS + extra
    return OUTPUT_OPTIONS


def _output_arguments(argv: list[str]) -> list[tuple[int, str, str]]:
    """``(position, option, path)`` of each output the command line names (``-o PATH``: the
    path's position; ``--plot=PATH``: that argument's). The one reading of output options that
    ``command_inputs`` and ``refuse_shared_outputs`` share.

    >>> _output_arguments(["beyond", "reco.csv", "-o", "a.csv", "--plot=a.png"])
    [(3, '-o', 'a.csv'), (4, '--plot', 'a.png')]
    """
    outputs = output_options(argv)
    named: list[tuple[int, str, str]] = []
    skip = False
    for at, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        option, equals, value = arg.partition("=")
        if equals and option in outputs:
            named.append((at, option, value))
        elif arg in outputs and at + 1 < len(argv):
            named.append((at + 1, arg, argv[at + 1]))
            skip = True
    return named


def refuse_shared_outputs(argv: list[str]) -> None:
    """Fail when two output options of the command line name one file (``-o out.png --plot
    out.png``: the table replaced the plot); the same file through a symlink or a hard link
    counts, standard output (``-``) and devices do not.

    >>> refuse_shared_outputs(["beyond", "reco.csv", "-o", "a.csv", "--plot", "a.png"])
    >>> refuse_shared_outputs(["beyond", "reco.csv", "-o", "out.png", "--plot=./out.png"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    seen: list[tuple[str, str]] = []
    for _, option, path in _output_arguments(argv):
        if path in ("", "-") or path.startswith("/dev/"):
            continue
        for other, earlier in seen:
            if _same_output(path, earlier):
                fail(f"{other} and {option} name one file, {path}: each output needs its own (one would replace "
                     "the other)")
        seen.append((option, path))


def _same_output(first: str, second: str) -> bool:
    if os.path.exists(first) and os.path.exists(second):
        return os.path.samefile(first, second)
    return os.path.realpath(first) == os.path.realpath(second)


def command_inputs(argv: list[str]) -> list[str]:
    """The existing files and directories a command line names, other than its outputs: each
    argument, the ``PATH`` of ``NAME=PATH`` and of ``--option=PATH``, and the file of a URL
    (``--ibis duckdb://events.ddb``); the value of an output option is left out. No command may
    write over one of them (``rankwise.data.atomic``).

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp(); log = os.path.join(folder, "log.csv"); _ = open(log, "w").close()
    >>> out = os.path.join(folder, "out.csv"); _ = open(out, "w").close()
    >>> [os.path.basename(p) for p in command_inputs(["ab", log, "-o", out, f"B={log}", f"duckdb://{log}"])]
    ['log.csv', 'log.csv', 'log.csv']
    """
    outputs = output_options(argv)
    written = {at for at, _, _ in _output_arguments(argv)}
    found: list[str] = []
    for at, arg in enumerate(argv):
        if at in written or arg in outputs:
            continue
        for candidate in _named_paths(arg):
            if candidate and os.path.exists(candidate):
                found.append(candidate)
                break
    return found


def _named_paths(arg: str) -> list[str]:
    """What an argument may name on disk: itself, the ``PATH`` of ``NAME=PATH`` or
    ``--option=PATH``, and the path of a URL (``duckdb://events.ddb``, ``sqlite:///data.db``,
    ``file:///runs``; its query string left out).

    >>> _named_paths("duckdb:///data/events.ddb?read_only=true")
    ['duckdb:///data/events.ddb?read_only=true', 'true', '/data/events.ddb']
    """
    named = [arg]
    _, equals, value = arg.partition("=")
    if equals:
        named.append(value)
    for text in list(named):
        scheme, separator, rest = text.partition("://")
        if separator and scheme.replace("+", "").replace("-", "").isalnum():
            named.append(rest.split("?", 1)[0])
    return named


_STDIN_COPIES: dict[str, str] = {}
"""Temporary copies of standard input -> the name shown in messages."""


def where(message: str) -> str:
    """A message as the command line shows it: the temporary copy of standard input named
    ``<stdin>``, convention keywords written as the options to type.

    >>> where("Pass duplicates='first' to keep one")
    'Pass --duplicates first to keep one'
    """
    from rankwise.cli.vocabulary import as_flags

    for path, shown in _STDIN_COPIES.items():
        message = message.replace(path, shown)
    return as_flags(message)


def _stdin_copy() -> str:
    import tempfile

    if _STDIN_COPIES:
        fail("standard input (-) can be read once: give the other inputs as files")
    folder = tempfile.mkdtemp(prefix="rankwise-")
    path = os.path.join(folder, "stdin")
    with open(path, "wb") as f:
        f.write(sys.stdin.buffer.read())
    _STDIN_COPIES[path] = "<stdin>"
    return path


def named_runs(arguments: list[str]) -> list[Any]:
    """Run arguments as paths, and ``(name, path)`` pairs for those written ``NAME=PATH`` (an
    existing file whose name holds ``=`` stays a path).

    >>> named_runs(["bm25.trec", "SPLADE=splade.trec"])
    ['bm25.trec', ('SPLADE', 'splade.trec')]
    """
    out: list[Any] = []
    for arg in arguments:
        name, sep, path = arg.partition("=")
        out.append((name, path) if sep and name and path and not os.path.exists(arg) else arg)
    return out


@contextmanager
def inputs(qrels: str | None, runs: list[str]) -> Iterator[tuple[Any, Any]]:
    """The qrels (None: a command without qrels) and runs of a command line: ``-`` reads
    standard input (once), ``NAME=PATH`` names a run; temporary copies of standard input are
    removed afterwards."""
    import shutil

    try:
        qrels_in = _stdin_copy() if qrels == "-" else qrels
        runs_in = [(r[0], _stdin_copy() if r[1] == "-" else r[1]) if isinstance(r, tuple)
                   else (_stdin_copy() if r == "-" else r) for r in named_runs(runs)]
        yield qrels_in, runs_in
    finally:
        for path in list(_STDIN_COPIES):
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
        _STDIN_COPIES.clear()


TERMINAL_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
"""Environment variables by which rich treats standard output as a terminal though it is not one."""


def _may_be_terminal() -> bool:
    """Whether rich could take standard output for a terminal: it is one, or a variable says so."""
    stream = sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) or any(name in os.environ for name in TERMINAL_VARIABLES)


def show_grids(grids: list[Any], output: Path | None, plain: bool = False, warnings: Sequence[Any] = ()) -> None:
    """Print tables: rich on a terminal; plain text (every digit and name) to a file, a pipe or
    when ``plain``. A file gets the ``warnings`` under the tables."""
    if output is not None:
        emit("\n\n".join(g.text() for g in grids) + "\n", output, warnings, "text")
        return
    if plain or not _may_be_terminal():
        echo("\n\n".join(g.text() for g in grids))   # a pipe or a file: rich is not even imported
        return
    from rich.console import Console

    from rankwise.report.terminal import fitted

    console = Console()
    if plain or not console.is_terminal:
        echo("\n\n".join(g.text() for g in grids))
        return
    for g in grids:
        for table in fitted(g, console.width):
            console.print(table)
