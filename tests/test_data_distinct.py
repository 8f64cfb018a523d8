"""``distinct`` is ``np.unique(values)`` by one sort, and the one way src/ takes distinct values
(NumPy 2.3+ hashes in a plain ``np.unique``: 2-3 s on a million distinct keys, against 0.1 s)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rankwise.data.distinct import difference, distinct, member, union

SRC = Path(__file__).resolve().parents[1] / "src" / "rankwise"


@given(arrays(np.float64, st.integers(0, 40), elements=st.sampled_from([0.0, -1.5, 2.0, 3.25, np.nan, np.inf])))
def test_equals_numpy_unique_on_floats(values: np.ndarray) -> None:
    np.testing.assert_array_equal(distinct(values), np.unique(values))


@given(arrays(np.int64, st.integers(0, 60), elements=st.integers(-5, 5)))
def test_equals_numpy_unique_on_integers(values: np.ndarray) -> None:
    np.testing.assert_array_equal(distinct(values), np.unique(values))


def test_strings_and_two_dimensions() -> None:
    assert distinct(np.array(["b", "a", "b"], dtype=object)).tolist() == ["a", "b"]
    assert distinct(np.array([[3, 1], [1, 2]])).tolist() == [1, 2, 3]   # flattened, as np.unique


SET_OPERATIONS = ("union1d", "setdiff1d", "intersect1d", "in1d", "setxor1d")
"""NumPy's set operations call a plain ``np.unique`` inside: ``union``, ``difference`` and
``member`` stand in for them."""


def _hashing_calls(source: str) -> list[int]:
    """Lines of a plain ``np.unique``/``np.unique_values``, a NumPy set operation, or an
    ``np.isin`` against anything but a literal tuple or list of values."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "np"):
            continue
        name = node.func.attr
        if (name in ("unique", "unique_values") and not node.keywords) or name in SET_OPERATIONS or (
                name == "isin" and not (len(node.args) > 1 and isinstance(node.args[1], (ast.Tuple, ast.List)))):
            found.append(node.lineno)
    return found


def _plain_unique_calls() -> list[str]:
    return [f"{path.relative_to(SRC)}:{line}" for path in sorted(SRC.rglob("*.py"))
            for line in _hashing_calls(path.read_text(encoding="utf-8"))]


def test_the_walk_finds_each_kind() -> None:
    source = ("np.unique(a)\nnp.unique(a, return_index=True)\nnp.union1d(a, b)\nnp.isin(a, b)\n"
              "np.isin(a, (0, 1))\nnp.setdiff1d(a, b)\n")
    assert _hashing_calls(source) == [1, 3, 4, 6]


@given(arrays(np.int64, st.integers(0, 30), elements=st.integers(-4, 4)),
       arrays(np.int64, st.integers(0, 30), elements=st.integers(-4, 4)))
def test_set_operations_equal_numpys(first: np.ndarray, second: np.ndarray) -> None:
    np.testing.assert_array_equal(member(first, second), np.isin(first, second))
    np.testing.assert_array_equal(member(first, distinct(second), known_sorted=True), np.isin(first, second))
    np.testing.assert_array_equal(union(first, second), np.union1d(first, second))
    np.testing.assert_array_equal(difference(first, second), np.setdiff1d(first, second))


def test_src_takes_distinct_values_through_distinct() -> None:
    """A plain ``np.unique(x)`` (no return_index/inverse/counts, which sort), a NumPy set
    operation or an ``np.isin`` against an array anywhere in src/ fails here: use
    ``rankwise.data.distinct`` (``distinct``, ``member``, ``union``, ``difference``)."""
    assert _plain_unique_calls() == []
