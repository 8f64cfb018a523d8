"""The one hashing pass over a run's documents (engine.duplicates): the judged filter never
loses a judged row, repeated pairs are always suspected, and threads sharing the scan find what
one thread finds."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.engine.duplicates import DocumentScanner, JudgedFilter, _repeated_blocks
from rankwise.engine.strings import string_hashes

docs = st.text(alphabet="ab0é\x00", min_size=1, max_size=12)


def _filter(pairs: list[tuple[int, str]]) -> JudgedFilter:
    hashes = string_hashes(pa.array([d for _, d in pairs], type=pa.string()))
    return JudgedFilter.of(hashes, np.array([q for q, _ in pairs], dtype=np.int32))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 4), docs), min_size=1, max_size=60),
       judged=st.lists(st.tuples(st.integers(1, 4), docs), max_size=20, unique=True), slice_rows=st.integers(1, 9),
       grouped=st.booleans())
def test_scan_keeps_every_judged_row_and_suspects_every_repeat(rows, judged, slice_rows, grouped) -> None:
    if grouped:
        rows = sorted(rows, key=lambda r: r[0])
    qcode = np.array([q for q, _ in rows], dtype=np.int32)
    known = qcode != 0  # query 0 has no judgments: its rows are neither looked up nor checked
    doc = pa.array([d for _, d in rows])
    # each judged pair's label is 1 + its place in the judgments (distinct labels find mix-ups)
    label_of = {pair: 1 + i for i, pair in enumerate(judged)}
    looked_up: list[int] = []

    def lookup(q: np.ndarray, hashes: np.ndarray, slice_docs: pa.Array, local: np.ndarray) -> np.ndarray:
        looked_up.extend(q.tolist())
        d = [slice_docs[int(i)].as_py() for i in local]
        assert hashes.tolist() == string_hashes(pa.array(d, type=pa.string())).tolist()  # the rows' own hashes
        return np.array([label_of.get((int(a), b), -1) for a, b in zip(q.tolist(), d, strict=True)],
                        dtype=np.int32)

    scanner = DocumentScanner(doc, qcode, known, _filter(judged), slice_rows, None, lookup,
                              np.full(len(rows), 99, dtype=np.int32))
    scanner.work()
    scan = scanner.result()
    # every row's label: a judged pair of a known query has its judgment, every other row -1
    # (NONPOOL), and only candidate rows were looked up
    assert scan.labels is not None
    assert scan.labels.tolist() == [label_of.get(row, -1) if row[0] != 0 else -1 for row in rows]
    assert len(looked_up) == len(scan.candidates)
    must = [i for i, row in enumerate(rows) if row[0] != 0 and row in judged]
    assert set(must) <= set(scan.candidates.tolist())
    unfiltered = DocumentScanner(doc, qcode, known, None, slice_rows)  # every known row
    unfiltered.work()
    assert unfiltered.result().candidates.tolist() == np.flatnonzero(known).tolist()
    assert unfiltered.result().suspects == scan.suspects
    assert all(known[scan.candidates]) and np.all(np.diff(scan.candidates) > 0)
    seen: dict[tuple[int, str], int] = {}
    for i, (q, d) in enumerate(rows):
        if q == 0:
            continue
        if (q, d) in seen:  # the repeat and its first row lie in one suspect slice
            assert any(a <= seen[(q, d)] and i < b for a, b in scan.suspects)
        seen.setdefault((q, d), i)


def test_the_filter_drops_most_unjudged_pairs() -> None:
    # 1,000 judged pairs: 2**16 flags (10 + 6 bits; the minimum is 16). The judged documents
    # asked for under another query, and 20,000 other documents, pass at about
    # 1,000 / 65,536 = 1.5%
    pairs = [(i % 50, f"j{i}") for i in range(1000)]
    f = _filter(pairs)
    assert f.bits == 16
    hashes = string_hashes(pa.array([d for _, d in pairs]))
    assert f.may_be_judged(hashes, np.array([q for q, _ in pairs])).all()
    assert 0.005 < f.may_be_judged(hashes, np.array([q + 50 for q, _ in pairs])).mean() < 0.03
    others = string_hashes(pa.array([f"other{i}" for i in range(20_000)]))
    assert 0.005 < f.may_be_judged(others, np.zeros(20_000, dtype=np.int32)).mean() < 0.03


def test_a_repeat_of_the_padding_key_is_found() -> None:
    # queries of unequal depth pad their matrix rows with 0xFFFFFFFF; a document whose hash has
    # those high 32 bits must still be seen twice, and only its query's rows are suspect
    top = np.uint64(0xFFFFFFFF << 32)
    hashes = np.array([top | np.uint64(1), top | np.uint64(2), 5 << 32, 7 << 32, 9 << 32], dtype=np.uint64)
    qcode = np.array([0, 0, 1, 1, 1], dtype=np.int32)
    assert _repeated_blocks(hashes.copy(), qcode) == [(0, 2)]
    assert _repeated_blocks(np.array([top, 0, 5 << 32, 7 << 32, 9 << 32], dtype=np.uint64), qcode) == []
    # the same through the unsorted fallback (queries not contiguous): every row is suspect
    assert _repeated_blocks(hashes.copy(), np.array([0, 1, 0, 1, 1], dtype=np.int32)) == []
    assert _repeated_blocks(hashes.copy(), np.array([0, 1, 1, 0, 1], dtype=np.int32)) == []
    assert _repeated_blocks(hashes.copy(), np.array([0, 1, 0, 1, 0], dtype=np.int32)) == []
    assert _repeated_blocks(hashes.copy(), np.array([1, 0, 1, 0, 1], dtype=np.int32)) == []
    assert _repeated_blocks(hashes.copy(), np.array([0, 0, 1, 0, 1], dtype=np.int32)) == [(0, 5)]


def test_a_false_alarm_costs_the_check_of_its_query_alone() -> None:
    # two documents of query 2 whose hashes share their high 32 bits (a false alarm) make that
    # query's block the only suspect range, not the slice; the bytes then find no repeat
    from rankwise.data.containers import Run
    from rankwise.engine.duplicates import resolve_duplicates

    hashes = (np.arange(40, dtype=np.uint64) + np.uint64(1)) << np.uint64(32)
    hashes[25] = hashes[21] | np.uint64(7)
    qcode = np.repeat(np.arange(4, dtype=np.int32), 10)
    assert _repeated_blocks(hashes.copy(), qcode) == [(20, 30)]
    # depths 8, 10, 22 (a padded matrix, 3 x 22 keys): a repeat in the middle query only
    hashes = (np.arange(40, dtype=np.uint64) + np.uint64(1)) << np.uint64(32)
    hashes[9] = hashes[17]
    qcode = np.repeat(np.arange(3, dtype=np.int32), [8, 10, 22])
    assert _repeated_blocks(hashes.copy(), qcode) == [(8, 18)]
    run = Run(["q"] * 3, ["a", "b", "c"], [3.0, 2.0, 1.0])
    assert resolve_duplicates(run, np.zeros(3, dtype=np.int32), "error", np.ones(3, dtype=bool), [(0, 3)]) == (None, 0)


def test_threads_sharing_the_scan_find_what_one_finds() -> None:
    rng = np.random.default_rng(3)
    qcode = np.repeat(np.arange(400, dtype=np.int32), 50)
    doc = pa.array([f"d{x}" for x in rng.integers(0, 3000, len(qcode))])  # many repeats
    known = rng.random(len(qcode)) < 0.9
    judged = _filter([(q, f"d{x}") for q in range(0, 400, 3) for x in range(q, 3000, 97)])
    alone = DocumentScanner(doc, qcode, known, judged, 120)
    alone.work()
    shared = DocumentScanner(doc, qcode, known, judged, 120)
    helpers = [threading.Thread(target=shared.work) for _ in range(3)]
    for t in helpers:
        t.start()
    shared.work()
    for t in helpers:
        t.join()
    one, many = alone.result(), shared.result()
    assert one.suspects == many.suspects and len(one.suspects) > 10
    assert one.candidates.tolist() == many.candidates.tolist()


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.text(alphabet="ab0é", max_size=20), min_size=1, max_size=40),
       start=st.integers(0, 40), length=st.integers(0, 40))
def test_a_slice_hashes_like_a_fresh_array_of_its_strings(values, start, length) -> None:
    # a slice shares its parent's whole buffer; hashing it reads only its own bytes, and gives
    # the hashes a fresh array of the same strings gets
    start = min(start, len(values))
    whole = pa.array(values)
    part = whole.slice(start, length)
    fresh = pa.array(values[start: start + length], type=pa.string())
    assert string_hashes(part).tolist() == string_hashes(fresh).tolist()
    from rankwise.engine.strings import string_words

    words, lengths = string_words(part)
    fresh_words, fresh_lengths = string_words(fresh)
    assert words.tolist() == fresh_words.tolist() and lengths.tolist() == fresh_lengths.tolist()


def test_a_lookup_needs_its_labels_array() -> None:
    # the scanner writes looked-up labels into the caller's array: one without the other is refused
    doc, qcode, known = pa.array(["a"]), np.zeros(1, dtype=np.int32), np.ones(1, dtype=bool)
    with pytest.raises(ValueError, match="go together"):
        DocumentScanner(doc, qcode, known, None, 4, None, lambda q, h, d, r: np.zeros(len(q), dtype=np.int32))
    with pytest.raises(ValueError, match="go together"):
        DocumentScanner(doc, qcode, known, None, 4, None, None, np.zeros(1, dtype=np.int32))
