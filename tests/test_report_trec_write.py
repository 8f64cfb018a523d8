"""rankwise.data.trec_write: scores written exactly as ``repr``, lines in the order and with
the ranks of a plain Python reference, chunked pieces that join to the whole text."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.data.containers import Run
from rankwise.data.trec_write import float_text, trec_run_pieces, write_trec_text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50))
def test_float_text_is_repr(values: list[float]) -> None:
    assert float_text(np.array(values)).to_pylist() == [repr(v) for v in values]


def test_float_text_at_the_format_boundaries() -> None:
    edges = [1e-4, np.nextafter(1e-4, 0), 1e15, np.nextafter(1e15, 0), 1e16, 9999999999999998.0, 123.0, -0.0,
             5e-324, 1.7976931348623157e308, 1 / 61 + 1 / 62, 0.1 + 0.2, -1e-05, 100000000000000.0]
    assert float_text(np.array(edges)).to_pylist() == [repr(float(v)) for v in edges]


def _reference(rows: list[tuple[str, str, float]], name: str) -> str:
    """The lines as the earlier writer made them: stable sort by query, then score descending."""
    ranked = sorted(rows, key=lambda r: (r[0], -r[2]))
    out, rank, last = [], 0, None
    for q, d, s in ranked:
        rank = rank + 1 if q == last else 1
        last = q
        out.append(f"{q} Q0 {d} {rank} {s!r} {name}\n")
    return "".join(out)


@pytest.mark.parametrize("seed", range(4))
def test_lines_match_a_plain_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 2_000
    queries = [f"q{int(q)}" for q in rng.integers(0, 40, n)]  # unordered, "q10" before "q2"
    scores = np.round(rng.normal(size=n), 1)  # many ties, kept in row order
    rows = [(q, f"d{i}", float(s)) for i, (q, s) in enumerate(zip(queries, scores, strict=True))]
    run = Run(np.array(queries, dtype=object), np.array([r[1] for r in rows], dtype=object), scores, "sys")
    pieces = list(trec_run_pieces(run, lines=333))
    assert len(pieces) == math.ceil(n / 333)
    assert b"".join(bytes(p) for p in pieces).decode() == _reference(rows, "sys")


def test_a_ranked_run_is_written_as_it_is() -> None:
    run = Run.from_dict({"b": {"x": 3.0, "y": 1.0}, "a": {"z": 2.0}}, name="t")
    out = io.BytesIO()
    write_trec_text(run, out)
    assert out.getvalue() == b"a Q0 z 1 2.0 t\nb Q0 x 1 3.0 t\nb Q0 y 2 1.0 t\n"
