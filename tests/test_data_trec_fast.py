"""The piecewise fast reader against the careful line reader, across piece boundaries.

A 32 MB piece is larger than any test file, so these tests shrink pieces to a few dozen bytes:
every line boundary case (a line longer than a piece, CRLF endings, tags changing between
pieces, a gzip stream, a row count above the first piece's estimate) then happens in a file
of a few hundred bytes. The careful reader (``parse_run_lines``) is the reference.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from rankwise.data import trec_fast
from rankwise.data.containers import Qrels, Run
from rankwise.data.pieces import TrecRunPieces
from rankwise.data.trec_io import RUN_TYPES, read_trec_qrels, read_trec_run
from rankwise.data.trec_lines import RUN_FIELDS, parse_qrels_lines, parse_run_lines
from rankwise.engine.align import QrelsIndex, align
from rankwise.engine.conventions import Conventions
from rankwise.errors import InputError

TYPES = {"query": pa.dictionary(pa.int32(), pa.string()), "q0": pa.binary(), "doc": pa.string(),
         "rank": pa.binary(), "score": pa.float64(), "tag": pa.binary()}


def _lines(n: int, long_doc_at: int | None = None, tag_change_at: int | None = None) -> list[str]:
    out = []
    for i in range(n):
        doc = ("D" * 200 + str(i)) if i == long_doc_at else f"d{i}"
        tag = "second" if tag_change_at is not None and i >= tag_change_at else "first"
        out.append(f"q{i // 7} Q0 {doc} {i % 7 + 1} {100 - i / 4} {tag}")
    return out


def _write(path: Path, lines: list[str], newline: str = "\n", gz: bool = False) -> Path:
    data = (newline.join(lines) + newline).encode()
    if gz:
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def _fast(path: Path, piece_bytes: int) -> trec_fast.RegularColumns:
    cols = trec_fast.read_regular(path, RUN_FIELDS, TYPES, " ", ("query", "doc", "score"), distinct="tag",
                                  piece_bytes=piece_bytes)
    assert cols is not None, "a regular file must take the fast path"
    return cols


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("piece_bytes", [40, 97, 1 << 20])
def test_pieces_read_what_the_line_reader_reads(tmp_path: Path, gz: bool, newline: str, piece_bytes: int) -> None:
    # 60 lines of ~30 bytes: with 40-byte pieces nearly every line is its own piece, line 33
    # (a 203-character document id) is longer than any small piece, and the tag changes at 45
    lines = _lines(60, long_doc_at=33, tag_change_at=45)
    path = _write(tmp_path / ("run.trec.gz" if gz else "run.trec"), lines, newline, gz)
    reference, tags = parse_run_lines((newline.join(lines) + newline).encode(), "run.trec")
    cols = _fast(path, piece_bytes)
    assert cols.column("query").cast(pa.string()).to_pylist() == reference.queries
    assert cols.column("doc").to_pylist() == reference.docs
    np.testing.assert_array_equal(cols.array("score"), reference.values)
    assert cols.distinct == ["first", "second"] and cols.last == "second" == tags[-1]


def test_score_array_grows_past_the_first_piece_estimate(tmp_path: Path) -> None:
    # the first piece holds short lines, the rest long ones: the row estimate taken from the
    # first piece is too small for a gzip file (its compressed size is the file size), so the
    # array must grow and keep every value in order
    lines = [f"q0 Q0 d{i} {i} {i}.5 t" for i in range(50)] + [f"q1 Q0 {'x' * 3}{i} {i} {-i}.25 t" for i in range(400)]
    path = _write(tmp_path / "run.trec.gz", lines, gz=True)
    scores = _fast(path, 64).array("score")
    assert scores.tolist() == [float(line.split()[4]) for line in lines]
    assert len(scores) == 450 and scores[-1] == -399.25


def test_irregular_byte_in_a_later_piece_sends_the_file_to_the_line_reader(tmp_path: Path) -> None:
    lines = _lines(40)
    lines[30] = lines[30].replace(" Q0 ", " Q0\x0b")  # \v separates fields for trec_eval, not for Arrow
    path = _write(tmp_path / "run.trec", lines)
    assert trec_fast.read_regular(path, RUN_FIELDS, TYPES, " ", ("query", "doc", "score"), piece_bytes=64) is None
    # Arrow would read 'Q0\vd30' as Q0 and '4' as the document; the line reader splits at \v
    assert read_trec_run(path).doc[30].as_py() == "d30"


def test_duplicate_in_a_later_slice_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # slices of 4 rows that never split a query: the duplicate of query q2 sits in the third
    monkeypatch.setattr(sys.modules["rankwise.engine.align"], "SLICE_ROWS", 4)
    from rankwise.data.containers import Run

    docs = ["a", "b", "c", "d", "e", "f", "g", "g", "h"]
    queries = ["q0", "q0", "q0", "q1", "q1", "q1", "q2", "q2", "q2"]
    run = Run(queries, docs, np.arange(9, 0, -1, dtype=float), "r")
    index = QrelsIndex.build(Qrels(["q0", "q1", "q2"], ["a", "d", "g"], [1, 1, 1]))
    with pytest.raises(InputError, match="'g' is listed twice for query 'q2'"):
        align(run, index, Conventions())
    lists, notes = align(run, index, Conventions(duplicates="first"))
    assert lists.offsets.tolist() == [0, 3, 6, 8] and "1 duplicate" in notes[0]


@pytest.mark.parametrize("ties", ["trec", "docid_asc", "expected"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_chunked_columns_and_small_slices_align_as_one_chunk(monkeypatch: pytest.MonkeyPatch, ties: str,
                                                             precision: str, shuffled: bool) -> None:
    # a reader hands document ids over in pieces (a chunked column); tied rows are looked up
    # chunk by chunk and ties are compared a slice at a time: 3-row slices and 7-row chunks must
    # give the lists that one chunk and one slice give. Scores tie in float64 (0.5 steps) and,
    # only in float32, through a 1e-9 nudge
    from rankwise.data.containers import Run

    rng = np.random.default_rng(7)
    queries = np.repeat(["q0", "q1", "q2", "q3"], 12)
    docs = np.array([f"d{rng.integers(0, 40)}_{i}" for i in range(48)])
    scores = np.round(rng.uniform(0, 3, 48) * 2) / 2 + np.where(rng.random(48) < 0.3, 1e-9, 0.0)
    # query k scores in [-3k, 3 - 3k], reaching both ends: the lowest row of one query ties the
    # highest of the next, so a tie group must not cross a query boundary
    scores[::12], scores[1::12] = 0.0, 3.0
    scores -= 3.0 * np.repeat(np.arange(4), 12)
    order = np.lexsort((-scores, queries))
    if shuffled:
        order = rng.permutation(48)
    queries, docs, scores = queries[order], docs[order], scores[order]
    qrels = Qrels(list(queries[::2]), list(docs[::2]), list(rng.integers(0, 3, 24)))
    conv = Conventions(ties=ties, score_precision=precision)

    whole, _ = align(Run(list(queries), list(docs), scores, "r"), QrelsIndex.build(qrels), conv)
    monkeypatch.setattr(sys.modules["rankwise.engine.align"], "SLICE_ROWS", 3)
    chunked_docs = pa.chunked_array([pa.array(list(docs[i: i + 7])) for i in range(0, 48, 7)])
    pieces, _ = align(Run(list(queries), chunked_docs, scores, "r"), QrelsIndex.build(qrels), conv)
    assert pieces.offsets.tolist() == whole.offsets.tolist()
    assert pieces.label.tolist() == whole.label.tolist()
    if ties == "expected":
        assert pieces.tie_size.tolist() == whole.tie_size.tolist()
        assert whole.tie_size.max() > 1
    else:
        assert pieces.tie_spans.tolist() == whole.tie_spans.tolist()
        assert len(whole.tie_spans) > 0


@pytest.mark.parametrize("offset", [0, (1 << 18) - 1, 1 << 18, (1 << 18) + 5, 700_000])
@pytest.mark.parametrize("byte", [b"\t", b"\x0b", b"\x0c", b"\x00", b"\r"])
def test_an_irregular_byte_is_found_in_every_block(offset: int, byte: bytes) -> None:
    # the bytes are searched a block of 2**18 at a time: one at the first or last byte of a
    # block, or past the first block, is found as one in the first block is
    raw = bytearray(b"q1 Q0 d1 1 2.5 bm25\n" * 40_000)  # 800,000 bytes: four blocks
    assert not trec_fast._scan_bytes(trec_fast.Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ")[0]
    while raw[offset:offset + 1] == b"\n":  # a byte inside a line
        offset += 1
    raw[offset] = byte[0]
    assert trec_fast._scan_bytes(trec_fast.Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ")[0]


@pytest.mark.parametrize("offset", [0, (1 << 18) - 1, 1 << 18, 700_000])
def test_a_hash_sign_is_found_in_every_block(offset: int) -> None:
    # only a piece holding a '#' has its first fields checked for comment lines: a '#' at the
    # edge of a block or past the first block must be seen
    raw = bytearray(b"q1 Q0 d1 1 2.5 bm25\n" * 40_000)
    while raw[offset:offset + 1] == b"\n":
        offset += 1
    raw[offset] = ord("#")
    assert trec_fast._scan_bytes(trec_fast.Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ") == (False, True)


def test_a_comment_line_deep_in_a_large_file_goes_to_the_careful_reader(tmp_path: Path) -> None:
    # the line at 3 MB starts with '#': the fast path must refuse the piece (trec_eval takes
    # '#' as the query id; rankwise's careful reader says what it does with it)
    lines = [b"q%d Q0 d%d 1 2.5 bm25\n" % (i // 100, i) for i in range(150_000)]
    lines[120_000] = b"#q Q0 dx 1 2.5 bm25\n"
    path = tmp_path / "run.trec"
    path.write_bytes(b"".join(lines))
    assert trec_fast.read_regular(path, RUN_FIELDS, RUN_TYPES, " ", ("query", "doc", "score"),
                                  piece_bytes=1 << 20) is None


def test_carriage_returns_that_end_lines_in_a_later_block_are_regular() -> None:
    raw = b"q1 Q0 d1 1 2.5 bm25\r\n" * 40_000
    assert not trec_fast._scan_bytes(trec_fast.Piece(pa.py_buffer(raw), raw, 0, len(raw)), " ")[0]


def _read_in_pieces(path: Path) -> Run:
    # 64 KB pieces: line 2,501 lies in a later piece than the first
    pieces = list(TrecRunPieces(path, piece_bytes=1 << 16))
    return Run([q for p in pieces for q in p.query.to_pylist()], [d for p in pieces for d in p.doc.to_pylist()],
               np.concatenate([p.score for p in pieces]))


def _careful_or_error(parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except InputError as error:
        return str(error)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("change", ["emptied", "doubled"])
@pytest.mark.parametrize(("kind", "field"), [("run", i) for i in range(6)] + [("qrels", i) for i in range(4)])
def test_every_field_emptied_or_doubled_reads_as_the_careful_reader_reads(
        tmp_path: Path, gz: bool, change: str, kind: str, field: int) -> None:
    # Q0, rank and the qrels iteration are never converted on the fast path: an empty one is
    # only seen as two delimiters in a row. Line 2,500 of 4,000 (a later piece) loses one
    # field, leaving two delimiters in a row (or a leading / trailing one), or gains a
    # second delimiter before it (trec_eval splits on runs of whitespace: still a valid line).
    # Whatever the field, the reader must give what the careful line reader gives: the same
    # values, or the same error naming the line
    if kind == "run":
        lines = [f"q{i // 40} Q0 d{i} {i % 40 + 1} {100 - i / 8} bm25" for i in range(4000)]
    else:
        lines = [f"q{i // 40} 0 d{i} {i % 3}" for i in range(4000)]
    fields = lines[2500].split(" ")
    if change == "emptied":
        fields[field] = ""
    else:
        fields[field] = " " + fields[field]
    lines[2500] = " ".join(fields)
    path = _write(tmp_path / (f"{kind}.txt.gz" if gz else f"{kind}.txt"), lines, gz=gz)
    data = ("\n".join(lines) + "\n").encode()
    if kind == "run":
        want = _careful_or_error(lambda: parse_run_lines(data, str(path))[0])
        # the whole-file reader, and the piece reader of the chunked engine (same fast path)
        for got in (_careful_or_error(lambda: read_trec_run(path)),
                    _careful_or_error(lambda: _read_in_pieces(path))):
            if isinstance(want, str):
                assert got == want and ":2501:" in want
            else:
                assert got.doc.to_pylist() == want.docs and got.score.tolist() == list(want.values)
    else:
        got = _careful_or_error(lambda: read_trec_qrels(path))
        want = _careful_or_error(lambda: parse_qrels_lines(data, str(path)))
        if isinstance(want, str):
            assert got == want and ":2501:" in want
        else:
            assert got.doc.to_pylist() == want.docs and got.label.tolist() == list(want.values)


def test_a_file_of_several_pieces_starts_with_small_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lines of 20 bytes; pieces of at most 200 bytes, the first of at most 40: the pieces grow
    # 40, 80, 160, 200, 200 ... (each ends at a line end), and a file of one piece stays whole
    line = b"q1 Q0 d1 1 2.5 bm25\n"
    path = tmp_path / "run.trec"
    path.write_bytes(line * 50)
    monkeypatch.setattr(trec_fast, "FIRST_PIECE_BYTES", 40)
    with open(path, "rb") as f:
        sizes = [p.end - p.start for p in trec_fast._mapped_pieces(f.fileno(), 200)]
    assert sizes == [40, 80, 160, 200, 200, 200, 120]
    with open(path, "rb") as f:
        assert [p.end - p.start for p in trec_fast._mapped_pieces(f.fileno(), 1000)] == [1000]
    # the columns read in those pieces are the columns of every line
    cols = trec_fast.read_regular(path, RUN_FIELDS, RUN_TYPES, " ", ("query", "doc", "score"), distinct="tag",
                                  piece_bytes=200)
    assert cols is not None and sum(len(c) for c in cols.chunks["doc"]) == 50
    assert cols.column("query").to_pylist() == ["q1"] * 50 and cols.array("score").tolist() == [2.5] * 50
    assert cols.distinct == ["bm25"]


@pytest.mark.parametrize("piece_bytes", [64, 1 << 20])
def test_ids_beyond_ascii_in_any_piece_read_as_the_careful_reader_reads(tmp_path: Path, piece_bytes: int) -> None:
    # ids are parsed as bytes and viewed as text when a piece is ASCII; a piece with other bytes
    # is checked as UTF-8 (accented, CJK and 4-byte ids read whole), and a byte that is not
    # UTF-8 in any piece sends the file to the careful reader, which names its line
    lines = _lines(40)
    lines[3] = lines[3].replace("d3", "d\u00e9j\u00e0")
    lines[22] = lines[22].replace("q3", "q\u6587").replace("d22", "d\U0001f600")
    text = "\n".join(lines) + "\n"
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode())
    reference, _ = parse_run_lines(text.encode(), "run.trec")
    cols = trec_fast.read_regular(path, RUN_FIELDS, RUN_TYPES, " ", ("query", "doc", "score"), piece_bytes=piece_bytes)
    assert cols is not None
    assert cols.column("doc").type == pa.string() == cols.column("query").type
    assert cols.column("query").to_pylist() == reference.queries
    assert cols.column("doc").to_pylist() == reference.docs
    assert cols.column("doc")[3].as_py() == "d\u00e9j\u00e0" and cols.column("doc")[22].as_py() == "d\U0001f600"
    bad = text.encode().replace(b"d30 ", b"d\xe9 ")   # Latin-1, not UTF-8, in a later piece
    path.write_bytes(bad)
    assert trec_fast.read_regular(path, RUN_FIELDS, RUN_TYPES, " ", ("query", "doc", "score"),
                                  piece_bytes=piece_bytes) is None
    with pytest.raises(InputError, match="expected UTF-8 text") as err:
        read_trec_run(path)
    assert err.value.line == 31
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes("q1 0 d\u00e9 1\nq1 0 d2 0\n".encode())
    assert read_trec_qrels(qrels).doc.to_pylist() == ["d\u00e9", "d2"]
