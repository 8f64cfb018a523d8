"""``distinct`` is ``np.unique(values)`` by one sort, and the one way src/ takes distinct values
(NumPy 2.3+ hashes in a plain ``np.unique``: 2-3 s on a million distinct keys, against 0.1 s)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rankwise.data.distinct import distinct

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


def _plain_unique_calls() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("unique", "unique_values") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "np" and not node.keywords):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def test_src_takes_distinct_values_through_distinct() -> None:
    """A plain ``np.unique(x)`` (no return_index/inverse/counts, which sort) anywhere in src/
    fails here: use ``rankwise.data.distinct.distinct``."""
    assert _plain_unique_calls() == []
