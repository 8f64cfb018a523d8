"""Fit a Grid to a terminal of a given width without cutting a number, a name or a unit.

Four layouts, tried in this order, the first that fits is printed:

1. **wide**: every column at its natural width (a wide terminal gets the whole table);
2. **wrapped**: numbers at their full width, headers broken at spaces, text cells (run names,
   variants, metrics) folded onto more lines, never narrower than ``MIN_TEXT`` characters;
3. **stacked**: the leading text columns (what a row is about) repeated in blocks, each block
   holding as many of the other columns as fit;
4. **long**: one row per cell: the leading text columns, the column name and the value.

A rich table with the default box takes ``sum(widths) + 3 * columns + 1`` characters: one
border before each column, one after the last and one space of padding on each side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rich.cells import cell_len


class Grid(Protocol):
    """What a layout reads of a table (``rankwise.report.grid.Grid``)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    strong_rows: set[int]
    note: str
    preface: str

MIN_TEXT = 10
"""The narrowest a folded text column gets (a name folds into pieces of at least this many
characters, or its whole length when shorter)."""


@dataclass(frozen=True)
class Layout:
    """One table to print: its columns (indexes into the grid's), each column's width, whether
    text cells fold, and its rows (cells and whether the row is bold)."""

    title: str
    columns: list[str]
    numeric: list[bool]
    widths: list[int]
    rows: list[tuple[list[str], bool]]
    caption: str
    kind: str
    """``wide``, ``wrapped``, ``stacked`` or ``long``."""
    room: int
    """The terminal's width: a narrow table still gets room for its title on one line."""


def table_width(widths: list[int]) -> int:
    """Characters a rich table with these column widths takes.

    >>> table_width([3, 10])
    20
    """
    return sum(widths) + 3 * len(widths) + 1


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _natural(header: str, cells: list[str]) -> int:
    return max([cell_len(header), *(cell_len(c) for c in cells)])


def _least(header: str, cells: list[str], numeric: bool) -> int:
    """The narrowest a column may get: numbers whole under a header broken at spaces, text
    (cells and header) folded to ``MIN_TEXT`` characters."""
    widest = max((cell_len(c) for c in cells), default=0)
    if numeric:
        return max(widest, _longest_word(header), 1)
    return max(min(max(widest, _longest_word(header)), MIN_TEXT), 1)


def _share(natural: list[int], least: list[int], width: int) -> list[int] | None:
    """Column widths between ``least`` and ``natural`` that fill ``width``, or None when even
    the least do not fit; spare room goes to the columns furthest from their natural width."""
    if table_width(least) > width:
        return None
    widths = list(least)
    spare = width - table_width(widths)
    while spare > 0:
        short = [i for i in range(len(widths)) if widths[i] < natural[i]]
        if not short:
            break
        i = max(short, key=lambda j: natural[j] - widths[j])
        widths[i] += 1
        spare -= 1
    return widths


def layouts(grid: Grid, width: int) -> list[Layout]:
    """The tables that show ``grid`` within ``width`` characters.

    >>> from rankwise.report.grid import Grid
    >>> g = Grid("t", ["run", "P@10", "MAP"], [["a-run-with-a-long-name", "0.5012", "0.3000"]], [False, True, True])
    >>> [layout.kind for layout in layouts(g, 80)], [layout.kind for layout in layouts(g, 32)]
    (['wide'], ['wrapped'])
    >>> [(layout.kind, layout.columns) for layout in layouts(g, 24)]
    [('stacked', ['run', 'P@10']), ('stacked', ['run', 'MAP'])]
    """
    columns = [list(col) for col in zip(*grid.rows, strict=True)] if grid.rows else [[] for _ in grid.columns]
    natural = [_natural(h, c) for h, c in zip(grid.columns, columns, strict=True)]
    least = [_least(h, c, n) for h, c, n in zip(grid.columns, columns, grid.numeric, strict=True)]
    rows = [(row, i in grid.strong_rows) for i, row in enumerate(grid.rows)]
    every = list(range(len(grid.columns)))

    def layout(kind: str, picked: list[int], widths: list[int], title: str, caption: str) -> Layout:
        return Layout(title, [grid.columns[i] for i in picked], [grid.numeric[i] for i in picked], widths,
                      [([row[i] for i in picked], strong) for row, strong in rows], caption, kind, width)

    title = "\n".join(line for line in (grid.title, grid.preface) if line)
    if table_width(natural) <= width:
        return [layout("wide", every, natural, title, grid.note)]
    shared = _share(natural, least, width)
    if shared is not None:
        return [layout("wrapped", every, shared, title, grid.note)]
    keys = _leading_text(grid)
    blocks = _blocks(keys, [i for i in every if i not in keys], natural, least, width)
    if blocks is not None:
        out = []
        for n, block in enumerate(blocks):
            picked = keys + block
            widths = _share([natural[i] for i in picked], [least[i] for i in picked], width)
            assert widths is not None
            last = n == len(blocks) - 1
            out.append(layout("stacked", picked, widths, title if n == 0 else "", grid.note if last else ""))
        return out
    return [_long(grid, keys, width, title)]


def _leading_text(grid: Grid) -> list[int]:
    """The text columns before the first number: what each row is about."""
    keys = []
    for i, numeric in enumerate(grid.numeric):
        if numeric:
            break
        keys.append(i)
    return keys[: len(grid.columns) - 1]


def _blocks(keys: list[int], values: list[int], natural: list[int], least: list[int],
            width: int) -> list[list[int]] | None:
    """The value columns in order, cut into groups that fit beside the key columns."""
    blocks: list[list[int]] = []
    current: list[int] = []
    for i in values:
        trial = keys + current + [i]
        if table_width([least[j] for j in trial]) <= width:
            current.append(i)
            continue
        if not current:
            return None
        blocks.append(current)
        current = [i]
        if table_width([least[j] for j in keys + current]) > width:
            return None
    if current:
        blocks.append(current)
    return _balanced(keys, values, least, len(blocks)) if blocks else None


def _balanced(keys: list[int], values: list[int], least: list[int], count: int) -> list[list[int]]:
    """``values`` cut into ``count`` runs of columns whose widest block is as narrow as possible
    (so the spare room, which unfolds the names, is shared rather than left to the last block)."""
    from functools import cache

    @cache
    def best(start: int, parts: int) -> tuple[int, tuple[int, ...]]:
        if parts == 1:
            return table_width([least[j] for j in keys + values[start:]]), (len(values),)
        options = []
        for end in range(start + 1, len(values) - parts + 2):
            here = table_width([least[j] for j in keys + values[start:end]])
            rest, cuts = best(end, parts - 1)
            options.append((max(here, rest), (end, *cuts)))
        return min(options)

    cuts = (0, *best(0, count)[1])
    return [values[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def _long(grid: Grid, keys: list[int], width: int, title: str) -> Layout:
    """One row per cell; everything folds when even that is too wide."""
    names = [grid.columns[i] for i in keys] + ["column", "value"]
    rows: list[tuple[list[str], bool]] = []
    for n, row in enumerate(grid.rows):
        for i, cell in enumerate(row):
            if i not in keys:
                rows.append(([row[k] for k in keys] + [grid.columns[i], cell], n in grid.strong_rows))
    columns = [list(col) for col in zip(*(r for r, _ in rows), strict=True)] if rows else [[] for _ in names]
    numeric = [False] * (len(keys) + 1) + [True]
    natural = [_natural(h, c) for h, c in zip(names, columns, strict=True)]
    least = [_least(h, c, n) for h, c, n in zip(names, columns, numeric, strict=True)]
    widths = _share(natural, least, width) or least
    return Layout(title, names, numeric, widths, rows, grid.note, "long", width)


def rich_table(layout: Layout) -> Any:
    """The layout as a rich Table with fixed column widths (text folds, numbers never break)."""
    from rich.table import Table

    # a table narrower than its title widens to keep the title on one line, when the title fits
    title = cell_len(layout.title.splitlines()[0]) + 2 if layout.title else 0
    table = Table(title=layout.title or None, caption=layout.caption or None,
                  min_width=title if title <= layout.room else None)
    for name, numeric, width in zip(layout.columns, layout.numeric, layout.widths, strict=True):
        table.add_column(name, justify="right" if numeric else "left", width=width, overflow="fold")
    for cells, strong in layout.rows:
        table.add_row(*cells, style="bold" if strong else None)
    return table


def fitted(grid: Grid, width: int) -> list[Any]:
    """Rich tables showing ``grid`` within ``width`` characters (see the module's layouts)."""
    return [rich_table(layout) for layout in layouts(grid, width)]
