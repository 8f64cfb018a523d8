"""Writing runs as TREC text (``qid Q0 docid rank score tag``), column by column with Arrow's
kernels, a million lines at a time on every core: scores keep every digit, written exactly as
Python's ``repr`` writes them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyarrow import _compute

from rankwise.data import arrow, kernels
from rankwise.data.containers import Run

LINES_PER_PIECE = 1 << 20
"""Lines formatted at once (bounds the text held in memory to a few pieces)."""


def float_text(values: np.ndarray) -> pa.Array:
    """Each float as ``repr`` writes it (the shortest digits that read back to the same float).
    Arrow's shortest formatting agrees with ``repr`` on the digits; where it does not spell them
    the same way (a whole number without ``.0``; an exponent where repr has none, 1e+10, or none
    where it has one, outside [1e-4, 1e15); zero, inf, NaN) the text is mended.

    >>> float_text(np.array([0.5, 2.0, 1e-07, 0.0, -0.0, 1e16, 1 / 3])).to_pylist()
    ['0.5', '2.0', '1e-07', '0.0', '-0.0', '1e+16', '0.3333333333333333']
    """
    values = np.asarray(values, dtype=np.float64)
    text = kernels.cast(pa.array(values), pa.string())
    size = np.abs(values)
    exponent = arrow.to_numpy(_compute.call_function("match_substring", [text], _compute.MatchSubstringOptions("e")),
                              bool)
    # repr writes [1e-4, 1e15) without exponent, as Arrow does unless trailing zeros make the exponent shorter
    positional = (size >= 1e-4) & (size < 1e15) & ~exponent
    whole = positional & (values == np.trunc(values))
    if whole.any():
        suffix = _compute.call_function("if_else", [arrow.mask(whole), pa.scalar(".0"), pa.scalar("")])
        text = _compute.call_function("binary_join_element_wise", [text, suffix, pa.scalar("")])
    other = np.flatnonzero(~positional)
    if len(other):
        spelled = pa.array([repr(v) for v in values[other].tolist()], pa.string())
        text = _compute.call_function("replace_with_mask", [text, arrow.mask(~positional), spelled])
    return text


def ranked_rows(run: Run) -> np.ndarray | None:
    """The row order that writes ``run`` by query id (byte order), then score descending, rows
    of equal scores in their order; ``None`` when the rows already are in that order."""
    n = len(run)
    if n < 2:
        return None
    query = _strings(run.query)
    before, after = query.slice(0, n - 1), query.slice(1)
    same = arrow.to_numpy(kernels.equal(before, after), bool)
    ascending = arrow.to_numpy(_compute.call_function("less", [before, after]), bool)
    steps_down = run.score[1:] <= run.score[:-1]
    if bool((ascending | (same & steps_down)).all()):
        return None
    table = pa.table({"query": query, "score": pa.array(run.score)})
    return arrow.to_numpy(kernels.sort_indices(table, [("query", "ascending"), ("score", "descending")]), np.int64)


def _strings(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """String values (dictionary-encoded ones decoded)."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return values
    return kernels.cast(values, pa.string())


def _one_chunk(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def trec_run_pieces(run: Run, lines: int = LINES_PER_PIECE) -> Iterator[pa.Buffer]:
    """The run's TREC text, ``lines`` lines per piece; ranks count from 1 within each query.

    >>> b"".join(bytes(p) for p in trec_run_pieces(Run.from_dict({"q1": {"a": 0.5, "b": 2.0}}, name="bm25")))
    b'q1 Q0 b 1 2.0 bm25\\nq1 Q0 a 2 0.5 bm25\\n'
    """
    from concurrent.futures import ThreadPoolExecutor

    order = ranked_rows(run)
    query = _strings(run.query if order is None else arrow.take_rows(run.query, order))
    doc = _strings(run.doc if order is None else arrow.take_rows(run.doc, order))
    score = run.score if order is None else run.score[order]
    n = len(run)
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = ~arrow.to_numpy(kernels.equal(query.slice(0, n - 1), query.slice(1)), bool)
    starts = np.flatnonzero(first)
    rank = np.arange(1, n + 1, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, n)))
    ending = pa.scalar(f"{run.name}\n")

    def piece(start: int) -> pa.Buffer:
        end = min(start + lines, n)
        joined = _compute.call_function("binary_join_element_wise", [
            _one_chunk(query.slice(start, end - start)), pa.scalar("Q0"), _one_chunk(doc.slice(start, end - start)),
            kernels.cast(pa.array(rank[start:end]), pa.string()), float_text(score[start:end]), ending,
            pa.scalar(" ")])
        bounds = arrow.offsets(joined)
        return joined.buffers()[2][int(bounds[0]): int(bounds[-1])] if len(joined) else pa.py_buffer(b"")

    workers = max(1, min(os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(workers) as pool:
        pending = []
        for start in range(0, n, lines):
            pending.append(pool.submit(piece, start))
            if len(pending) > workers:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()


def write_trec_text(run: Run, out: object) -> None:
    """Write ``run`` as TREC text to the binary file object ``out``."""
    for piece in trec_run_pieces(run):
        out.write(piece)  # type: ignore[attr-defined]
