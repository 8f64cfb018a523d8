"""Tables from files (Parquet, CSV, TSV, JSONL, each optionally gzipped; many files or a
directory), pandas DataFrames, Arrow tables or dicts of arrays, with the file and first data
line of each piece so that errors can name the line (the row for Parquet)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.data.distinct import member
from rankwise.errors import InputError

TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json")


def _files(source: str | os.PathLike[str]) -> list[Path]:
    path = Path(source)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and _suffix(p) in TABLE_SUFFIXES)
        if not found:
            raise InputError(f"no table files ({', '.join(TABLE_SUFFIXES)}, optionally .gz) in the directory",
                             source=str(path))
        return found
    if not path.exists():
        raise InputError("file not found", source=str(path))
    return [path]


def _suffix(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _first_line(path: Path) -> int:
    """Line of the first data row: 2 under a header (CSV/TSV, after the ``# `` comment lines
    rankwise writes its warnings in), 1 for JSON lines."""
    return 2 + _comment_lines(path) if _suffix(path) in (".csv", ".tsv", ".txt") else 1


def _comment_lines(path: Path) -> int:
    """How many lines at the top of a text table are comments (``# warning: ...``, as every
    CSV rankwise writes starts): the readers skip them.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "s.csv"); _ = open(f, "w").write("# warning: x\\nvariant,n\\na,1\\n")
    >>> _comment_lines(Path(f))
    1
    """
    from rankwise.data.limits import open_source

    count = 0
    try:
        with open_source(path) as f:
            while count < 10_000:
                line = f.readline(1 << 16)
                if not line.startswith(b"# "):
                    break
                count += 1
    except InputError:   # the reader that follows names what is wrong with the file
        return 0
    return count


def read_table(path: Path, columns: Sequence[str] | None, ids: Sequence[str] = ()) -> Any:
    """One event file as an Arrow table with ``columns`` (missing ones named in the error;
    None: every column). ``ids`` are identifier columns: a CSV or TSV file's are read as text
    and kept as text unless every one is a plain integer (``exact_ids``), so that distinct ids
    never become one number (``007``, ``7`` and ``+7``; ids beyond int64; ``1.0`` and ``1``);
    a JSON file whose reader took one for floating-point numbers is read again with it as text."""
    import pyarrow as pa

    suffix = _suffix(path)
    if suffix in (".parquet", ".pq") or not ids:
        return _read_table(path, columns)
    if suffix not in (".jsonl", ".ndjson", ".json"):
        table = _read_table(path, columns, ids)
        for name in ids:
            if name in table.column_names:
                at = table.column_names.index(name)
                table = table.set_column(at, name, exact_ids(table.column(at)))
        return table
    table = _read_table(path, columns)
    floats = [c for c in ids if c in table.column_names and pa.types.is_floating(table.schema.field(c).type)]
    return _read_table(path, columns, floats) if floats else table


def exact_ids(column: Any) -> Any:
    """Identifiers read as text, as int64 when every one is written as int64 writes it (digits,
    no leading zero or sign ``+``; integers hash fast), else as the text they are: ``007``, ``7``
    and ``0x7`` are three ids, as they are in a TREC file.

    >>> import pyarrow as pa
    >>> exact_ids(pa.chunked_array([["7", "-12", "0"]])).type, exact_ids(pa.chunked_array([["7", "007"]])).type
    (DataType(int64), DataType(string))
    >>> [exact_ids(pa.chunked_array([[v, "1"]])).type for v in ("+7", "-0", "0x1", "9223372036854775808", "1.0", "u1")]
    [DataType(string), DataType(string), DataType(string), DataType(string), DataType(string), DataType(string)]
    """
    import pyarrow as pa

    if not pa.types.is_string(column.type) or column.null_count:
        return column   # empty ids are the caller's to refuse, named by their line
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    numbers = []
    for chunk in chunks:
        whole = _plain_integers(chunk)
        if whole is None:
            return column
        numbers.append(whole)
    return pa.chunked_array(numbers, type=pa.int64()) if isinstance(column, pa.ChunkedArray) else numbers[0]


_SAMPLE_IDS = 1024
"""Values cast first: Arrow's failed cast of a long text column to integers takes seconds."""


def _plain_integers(chunk: Any) -> Any:
    """The chunk as int64 if every value is a plain integer (``exact_ids``), else None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankwise.data.arrow import offsets

    if len(chunk) == 0:
        return pa.array([], type=pa.int64())
    if chunk.buffers()[2] is None:   # every value empty
        return None
    bounds = offsets(chunk)
    text = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)
    starts, lengths = bounds[:-1], np.diff(bounds)
    if bool((lengths == 0).any()):
        return None
    first = text[starts]
    second = text[np.minimum(starts + 1, len(text) - 1)]
    digit = (first >= ord("0")) & (first <= ord("9"))
    plain = (digit & ((first != ord("0")) | (lengths == 1))) | \
        ((first == ord("-")) & (lengths > 1) & (second >= ord("1")) & (second <= ord("9")))
    if not bool(plain.all()):
        return None   # a letter, a sign +, a leading zero: text
    try:
        pc.cast(chunk.slice(0, _SAMPLE_IDS), pa.int64())
        return pc.cast(chunk, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _read_table(path: Path, columns: Sequence[str] | None, text: Sequence[str] = ()) -> Any:
    import pyarrow as pa

    suffix = _suffix(path)
    try:
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            # one file, read as such (pq.read_table goes through pyarrow.dataset: a third of a
            # second more to import, for the same table)
            with pq.ParquetFile(path) as parquet:
                _require(parquet.schema_arrow.names, columns, path)
                return parquet.read(columns=None if columns is None else list(columns), use_threads=True)
        if suffix in (".jsonl", ".ndjson", ".json"):
            import pyarrow.json as pajson

            schema = pa.schema([(c, pa.string()) for c in text]) if text else None
            table = pajson.read_json(path, parse_options=pajson.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="infer"))
        else:
            import pyarrow.csv as pacsv

            delimiter = "\t" if suffix in (".tsv", ".txt") else ","
            # text columns are read as bytes, then checked to be UTF-8 below (the line of a bad byte named)
            table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                                   read_options=pacsv.ReadOptions(use_threads=True, skip_rows=_comment_lines(path)),
                                   convert_options=pacsv.ConvertOptions(
                                       null_values=[""], column_types={c: pa.binary() for c in text}))
        names = list(table.column_names)   # decoded here: a header that is not UTF-8 fails inside the try
    except (pa.ArrowInvalid, OSError, EOFError) as exc:
        raise _unreadable(path, exc) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 (byte {exc.object[exc.start]:#04x}); expected UTF-8 text",
                         source=str(path)) from None
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"column {twice[0]!r} appears twice in the header; every column needs its own name",
                         source=str(path), line=1)
    _require(names, columns, path)
    if suffix not in (".parquet", ".pq"):   # the text readers keep a column that is not UTF-8 as bytes
        for at, field in enumerate(table.schema):
            if pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
                table = table.set_column(at, field.name, _utf8_column(table.column(at), path, field.name))
    return table if columns is None else table.select(list(columns))


def _utf8_column(column: Any, path: Path, name: str) -> Any:
    """A column read as bytes, as text once checked to be UTF-8 (else the line of the first
    value that is not is named)."""
    import pyarrow as pa

    try:
        return column.cast(pa.string())
    except (pa.ArrowInvalid, UnicodeDecodeError):
        row = next(i for i, v in enumerate(column.to_pylist()) if v is not None and not _utf8(v))
        raise InputError("invalid UTF-8; expected UTF-8 text", field=name,
                         **location(str(path), _first_line(path), row)) from None


def _unreadable(path: Path, exc: Exception) -> InputError:
    return InputError(f"cannot read it as {_suffix(path).lstrip('.') or 'a table'}: {exc}", source=str(path))


def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _require(names: Sequence[str], columns: Sequence[str] | None, path: Path | str) -> None:
    if columns is None:
        return
    missing = [c for c in columns if c not in names]
    if missing:
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; it has {', '.join(map(repr, names))}",
                         source=str(path))


class ReadPieces(list):
    """Pieces already read, as ``(name, first line, Arrow table)``: ``tables_of`` passes them
    through, so that rows derived from a file still name its lines."""


def tables_of(data: Any, columns: Sequence[str] | None, ids: Sequence[str] = ()) -> list[tuple[str, int, Any]]:
    """``(name, first line, Arrow table)`` for every piece of ``data`` (with ``columns``, or
    every column when None; ``ids``: identifier columns, see ``read_table``)."""
    import pyarrow as pa

    if isinstance(data, ReadPieces):
        for name, _, table in data:
            _require(table.column_names, columns, name)
        return [(name, first, table if columns is None else table.select(list(columns))) for name, first, table in data]
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    if isinstance(data, pa.Table):
        _require(data.column_names, columns, "<table>")
        return [("<table>", 1, data if columns is None else data.select(list(columns)))]
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # pandas DataFrame
        _require([str(c) for c in data.columns], columns, "<DataFrame>")
        chosen = data if columns is None else data[list(columns)]
        return [("<DataFrame>", 1, pa.Table.from_pandas(chosen, preserve_index=False))]
    if isinstance(data, Mapping):
        _require(list(data), columns, "<dict>")
        return [("<dict>", 1, pa.table({c: data[c] for c in (list(data) if columns is None else columns)}))]
    if isinstance(data, Sequence):
        out: list[tuple[str, int, Any]] = []
        for item in data:
            if isinstance(item, (str, os.PathLike)):
                out.extend((str(p), _first_line(p), read_table(p, columns, ids)) for p in _files(item))
            else:
                out.extend(tables_of(item, columns, ids))
        return out
    raise InputError(f"cannot read experiment data from a {type(data).__name__}; give files, a directory, "
                     "a DataFrame, an Arrow table or a dict of columns")


def column_names_of(data: Any) -> list[str]:
    """The column names of ``data`` (the first file's, for files), read from the header or the
    schema only.

    >>> column_names_of({"session_id": [1], "url": ["a"]})
    ['session_id', 'url']
    """
    import pyarrow as pa

    if isinstance(data, ReadPieces):
        return [] if not data else list(data[0][2].column_names)
    if isinstance(data, pa.Table):
        return list(data.column_names)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):
        return [str(c) for c in data.columns]
    if isinstance(data, Mapping):
        return [str(k) for k in data]
    if isinstance(data, (str, os.PathLike)):
        path = _files(data)[0]
        suffix = _suffix(path)
        try:
            if suffix in (".parquet", ".pq"):
                import pyarrow.parquet as pq

                return list(pq.read_schema(path).names)
            if suffix in (".jsonl", ".ndjson", ".json"):
                return list(_read_table(path, None).column_names)
            import pyarrow.csv as pacsv

            delimiter = "\t" if suffix in (".tsv", ".txt") else ","
            with pacsv.open_csv(path, parse_options=pacsv.ParseOptions(delimiter=delimiter),
                                read_options=pacsv.ReadOptions(skip_rows=_comment_lines(path))) as reader:
                return list(reader.schema.names)
        except (pa.ArrowInvalid, OSError, EOFError) as exc:
            raise _unreadable(path, exc) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid UTF-8 (byte {exc.object[exc.start]:#04x}); expected UTF-8 text",
                             source=str(path), line=1) from None
    if isinstance(data, Sequence) and data:
        return column_names_of(data[0])
    return []


BATCH_ROWS = 1 << 20
"""Rows per piece when a source is read piece by piece (``batches_of``): the temporaries of
each piece stay small enough to be reused, and a million rows match Parquet's row groups."""


class Batches:
    """Pieces ``(name, first line, Arrow table)`` read one at a time, for one pass; ``rows``
    is how many rows they hold in all, known before the first is read (Parquet's metadata)."""

    def __init__(self, pieces: Iterable[tuple[str, int, Any]], rows: int, count: int) -> None:
        self._pieces, self.rows, self._count = pieces, rows, count

    def __iter__(self) -> Iterator[tuple[str, int, Any]]:
        return iter(self._pieces)

    def __len__(self) -> int:   # how many pieces (a progress bar's total)
        return self._count


def batches_of(data: Any, columns: Sequence[str] | None, ids: Sequence[str] = (), rows: int | None = None) -> Batches:
    """``tables_of``, ``rows`` rows at a time: a Parquet file is decoded piece by piece as the
    pieces are used (its columns are never all in memory at once); any other source is read
    as ``tables_of`` reads it and sliced (zero-copy). Each piece's first line counts from its
    file's; ``Batches`` (say, rows derived from a file piece by piece) pass through.

    >>> pieces = batches_of({"a": [1, 2, 3]}, ["a"], rows=2)
    >>> pieces.rows, [(name, first, len(t)) for name, first, t in pieces]
    (3, [('<dict>', 1, 2), ('<dict>', 3, 1)])
    """
    rows = rows or BATCH_ROWS   # read when called: a test may make the pieces small
    if isinstance(data, Batches):
        return Batches(((name, first, _selected(table, columns, name)) for name, first, table in data),
                       data.rows, len(data))
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    paths = [p for item in data for p in _files(item)] if _all_paths(data) else []
    if paths and all(_suffix(p) in (".parquet", ".pq") for p in paths):
        sizes = [_parquet_rows(p, columns) for p in paths]
        return Batches((piece for p in paths for piece in _parquet_batches(p, columns, rows)), sum(sizes),
                       sum(max(1, -(-n // rows)) for n in sizes))
    pieces = [(name, first + start, table.slice(start, rows)) for name, first, table in tables_of(data, columns, ids)
              for start in range(0, max(len(table), 1), rows)]
    return Batches(pieces, sum(len(t) for _, _, t in pieces), len(pieces))


def _all_paths(data: Any) -> bool:
    return isinstance(data, Sequence) and bool(data) and all(isinstance(item, (str, os.PathLike)) for item in data)


def _selected(table: Any, columns: Sequence[str] | None, name: str) -> Any:
    _require(table.column_names, columns, name)
    return table if columns is None else table.select(list(columns))


def _parquet_rows(path: Path, columns: Sequence[str] | None) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path) as parquet:
            _require(parquet.schema_arrow.names, columns, path)
            return int(parquet.metadata.num_rows)
    except (pa.ArrowInvalid, OSError, EOFError) as exc:
        raise _unreadable(path, exc) from None


def _ahead(items: Iterator[Any]) -> Iterator[Any]:
    """``items``, the next one produced on another thread while this one is used (Parquet
    decodes without holding the interpreter: reading overlaps the work on each piece).

    >>> list(_ahead(iter([1, 2, 3])))
    [1, 2, 3]
    """
    from concurrent.futures import ThreadPoolExecutor

    done = object()
    with ThreadPoolExecutor(max_workers=1) as pool:
        coming = pool.submit(next, items, done)
        while True:
            item = coming.result()
            if item is done:
                return
            coming = pool.submit(next, items, done)
            yield item


def _parquet_batches(path: Path, columns: Sequence[str] | None, rows: int) -> Iterator[tuple[str, int, Any]]:
    """The file in pieces of exactly ``rows`` rows (the last one shorter), whatever its row
    groups: the pieces are those of the whole file read and sliced."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    chosen = None if columns is None else list(columns)
    try:
        with pq.ParquetFile(path) as parquet:
            if parquet.metadata.num_rows == 0:
                yield str(path), 1, parquet.read(columns=chosen)
                return
            first, held, size = 1, [], 0
            for batch in _ahead(parquet.iter_batches(batch_size=rows, columns=chosen)):
                held.append(batch)
                size += batch.num_rows
                while size >= rows:
                    table = pa.Table.from_batches(held)
                    yield str(path), first, table.slice(0, rows)
                    first, size = first + rows, size - rows
                    held = table.slice(rows).to_batches() if size else []
            if size:
                yield str(path), first, pa.Table.from_batches(held)
    except (pa.ArrowInvalid, OSError, EOFError) as exc:
        raise _unreadable(path, exc) from None


def location(name: str, first: int, row: int) -> dict[str, Any]:
    """Where row ``row`` (0-based) of a piece starting at line ``first`` is, as keyword
    arguments of ``InputError``: the line of a text file, the row of a Parquet file.

    >>> location("log.csv", 2, 3), location("log.parquet", 1, 3)
    ({'source': 'log.csv', 'line': 5}, {'source': 'log.parquet (row 4)'})
    """
    if name.endswith((".parquet", ".pq")):
        return {"source": f"{name} (row {first + row})"}
    return {"source": name, "line": first + row}


def number_column(name: str, first: int, column: Any, field_name: str, counts: bool = False) -> np.ndarray:
    """The column as integers (integer and boolean columns: sums stay exact) or float64
    (checked finite); ``counts`` must not be negative."""
    import pyarrow as pa

    if column.null_count:
        row = int(np.flatnonzero(np.asarray(column.is_null().to_numpy(zero_copy_only=False)))[0])
        raise InputError("missing value; expected a number", field=field_name, **location(name, first, row))
    if pa.types.is_null(column.type):   # an empty piece (a header only): no values of any type
        return np.zeros(len(column) - column.null_count, dtype=np.float64)
    if pa.types.is_boolean(column.type):
        column = column.cast(pa.int8())
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        values = column.to_pylist()
        for row, value in enumerate(values):
            try:
                float(value)
            except (TypeError, ValueError):
                raise InputError(f"expected a number, got {value!r}", field=field_name,
                                 **location(name, first, row)) from None
        column = pa.array([float(v) for v in values])
    if pa.types.is_integer(column.type):
        values = np.asarray(column.to_numpy())   # its own width: no copy of 100M events
    else:
        values = np.asarray(column.to_numpy(), dtype=np.float64)
        bad = np.isnan(values) | np.isinf(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"expected a finite number, got {values[row]}", field=field_name,
                             **location(name, first, row))
    if counts and (values < 0).any():
        row = int(np.flatnonzero(values < 0)[0])
        raise InputError(f"negative count {values[row]:g}; counts (clicks, impressions, conversions) are >= 0",
                         field=field_name, **location(name, first, row))
    return values


def refuse_blank(name: str, first: int, column: Any, field_name: str) -> Any:
    """``column`` (text, or a dictionary of text), refused when a row is empty or blank: empty
    unit ids would merge into one unit, an empty variant would become an arm named ''.

    >>> import pyarrow as pa
    >>> refuse_blank("log.csv", 2, pa.array(["a", "b"]), "unit").to_pylist()
    ['a', 'b']
    >>> refuse_blank("log.csv", 2, pa.array(["a", " "]), "unit")   # rows from line 2 (after the header)
    Traceback (most recent call last):
    ...
    rankwise.errors.InputError: log.csv:3: field 'unit': empty unit; every row needs one
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    values = column.dictionary if pa.types.is_dictionary(column.type) else column
    blank = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0)
    if pc.any(blank).as_py():
        rows = np.asarray(blank.to_numpy(zero_copy_only=False))
        if pa.types.is_dictionary(column.type):
            rows = member(np.asarray(column.indices.to_numpy(zero_copy_only=False)), np.flatnonzero(rows))
        if rows.any():
            raise InputError(f"empty {field_name}; every row needs one", field=field_name,
                             **location(name, first, int(np.flatnonzero(rows)[0])))
    return column
