"""The Arrow compute kernels rankwise's read and join paths use, called directly.

``import pyarrow.compute`` builds a Python wrapper with a parsed docstring for each of its ~300
kernels (40 ms, a sixth of a small evaluation's whole run); these functions call the same
kernels through ``pyarrow._compute.call_function`` without that import. Other code may use
``pyarrow.compute`` freely.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import pyarrow as pa
from pyarrow import _compute

Values: TypeAlias = Any
"""An Arrow array or chunked array (pyarrow ships no type stubs, so this is ``Any`` to mypy)."""


def _call(name: str, args: list[Any], options: Any = None, pool: pa.MemoryPool | None = None) -> Any:
    return _compute.call_function(name, args, options, pool)


def dictionary_encode(values: Values) -> Values:
    """Dictionary-encode ``values`` (indices into their distinct values, in order of appearance).

    >>> dictionary_encode(pa.array(["b", "a", "b"])).indices.to_pylist()
    [0, 1, 0]
    """
    return _call("dictionary_encode", [values])


def index_in(values: Values, value_set: pa.Array, pool: pa.MemoryPool | None = None) -> Values:
    """Position of each value in ``value_set``, null where absent.

    >>> index_in(pa.array(["b", "x"]), pa.array(["a", "b"])).to_pylist()
    [1, None]
    """
    return _call("index_in", [values], _compute.SetLookupOptions(value_set), pool)


def is_valid(values: Values) -> Values:
    """True where a value is not null.

    >>> is_valid(pa.array([1, None])).to_pylist()
    [True, False]
    """
    return _call("is_valid", [values])


def take(values: Values, indices: pa.Array, pool: pa.MemoryPool | None = None) -> Values:
    """The values at ``indices``.

    >>> take(pa.array(["a", "b", "c"]), pa.array([2, 0])).to_pylist()
    ['c', 'a']
    """
    return _call("take", [values, indices], None, pool)


def filter_values(values: Values, mask: pa.Array) -> Values:
    """The values where ``mask`` is true.

    >>> filter_values(pa.array(["a", "b"]), pa.array([False, True])).to_pylist()
    ['b']
    """
    return _call("filter", [values, mask])


def unique(values: Values) -> pa.Array:
    """The distinct values, in order of first appearance.

    >>> unique(pa.array(["b", "a", "b"])).to_pylist()
    ['b', 'a']
    """
    return _call("unique", [values])


def equal(left: Values, right: Values) -> Values:
    """Element-wise equality.

    >>> equal(pa.array(["a", "b"]), pa.array(["a", "c"])).to_pylist()
    [True, False]
    """
    return _call("equal", [left, right])


def sort_indices(table: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Array:
    """Row order of ``table`` sorted by ``sort_keys`` (column, "ascending" or "descending");
    strings compare byte by byte.

    >>> t = pa.table({"g": [1, 1, 0], "d": ["b", "a", "z"]})
    >>> sort_indices(t, [("g", "ascending"), ("d", "ascending")]).to_pylist()
    [2, 1, 0]
    """
    return _call("sort_indices", [table], _compute.SortOptions(sort_keys))


def cast(values: Values, target: pa.DataType) -> Values:
    """``values`` converted to ``target`` (an error where a value does not fit).

    >>> cast(pa.array([1, 2]), pa.string()).to_pylist()
    ['1', '2']
    """
    return _call("cast", [values], _compute.CastOptions.safe(target))
