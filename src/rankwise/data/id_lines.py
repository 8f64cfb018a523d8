"""Files of one id per line (a catalogue of items, the units to assign): one reader for all.

A first line that names the id column (``item_id``, ``--unit``'s name) is a header; empty lines
are skipped and counted in a note; spaces and tabs around an id are removed and counted in a
note (``" u1"`` and ``"u1"`` would otherwise be two ids, hashed and matched apart); an id listed
twice is kept as often as it is listed and counted in a note (the caller decides what a repeat
means); a file with no id is an error naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from rankwise.errors import InputError


def read_id_lines(path: str | os.PathLike[str], header_names: Iterable[str] = (), what: str = "id",
                  note_repeats: bool = True) -> tuple[list[str], list[str]]:
    """The ids of a file of one ``what`` per line (text, ``.gz`` too) and notes on what was
    skipped or changed; ``header_names``: the names a first line may give the column (in any
    case), read as a header; ``note_repeats=False`` leaves repeats to a caller that notes them
    its own way.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "units.txt")
    >>> _ = open(path, "w").write("user_id\\nu1\\n\\n u2\\nu1\\n")
    >>> ids, notes = read_id_lines(path, ["user_id"], "unit")
    >>> ids
    ['u1', 'u2', 'u1']
    >>> for note in notes: print(note)
    units.txt: 1 empty line(s) skipped
    units.txt: 1 unit(s) had spaces or tabs around them, removed (line 4)
    units.txt: 1 unit(s) listed more than once (first at line 5)
    """
    from rankwise.data.trec_io import check_file, read_text

    source = os.fspath(path)
    shown = os.path.basename(source)
    check_file(path)
    lines = read_text(path).splitlines()
    first = 1
    if lines and lines[0].strip().lower() in {name.lower() for name in header_names}:
        lines, first = lines[1:], 2
    ids: list[str] = []
    empty, padded, repeated = 0, [], []
    seen: set[str] = set()
    for number, line in enumerate(lines, first):
        value = line.strip(" \t")
        if not value:
            empty += 1
            continue
        if value != line:
            padded.append(number)
        if value in seen:
            repeated.append(number)
        seen.add(value)
        ids.append(value)
    if not ids:
        raise InputError(f"no {what}: expected one {what} id per line", source=source)
    notes = [f"{shown}: {empty} empty line(s) skipped"] if empty else []
    if padded:
        notes.append(f"{shown}: {len(padded)} {what}(s) had spaces or tabs around them, removed (line {padded[0]})")
    if repeated and note_repeats:
        notes.append(f"{shown}: {len(repeated)} {what}(s) listed more than once (first at line {repeated[0]})")
    return ids, notes
