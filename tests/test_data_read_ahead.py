"""Run files read ahead in a background thread (``rankwise.data.load.reading_ahead``): the run a
command then loads is the one read ahead, equal to a plain read, with the same errors; a file
changed in between is read again; other files are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankwise.data import load, trec_io
from rankwise.data.load import load_run, reading_ahead
from rankwise.errors import InputError

LINES = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 0.5 bm25\n"


def _counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    plain = trec_io.read_trec_run

    def counting(path, name=None):
        reads.append(str(path))
        return plain(path, name=name)

    monkeypatch.setattr(trec_io, "read_trec_run", counting)
    return reads


def test_the_run_read_ahead_is_the_run_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "bm25.trec"
    path.write_text(LINES)
    plain = load_run(str(path))
    reads = _counted_reads(monkeypatch)
    with reading_ahead([str(path)]):
        run = load_run(str(path), name="mine")
    assert reads == [str(path)]  # read once, by the thread
    assert run.name == "mine" and plain.name == "bm25"
    assert run.query.to_pylist() == plain.query.to_pylist() == ["q1", "q1", "q2"]
    assert run.doc.to_pylist() == plain.doc.to_pylist()
    assert np.array_equal(run.score, plain.score)
    assert load._AHEAD == {}


def test_a_run_read_ahead_raises_the_plain_reads_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.trec"
    path.write_text("q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5\n")  # the second line has no tag
    with pytest.raises(InputError) as plain:
        load_run(str(path))
    with reading_ahead([str(path)]), pytest.raises(InputError) as ahead:
        load_run(str(path))
    assert str(ahead.value) == str(plain.value)
    assert ":2: malformed line" in str(ahead.value)


def test_a_file_changed_after_its_read_began_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text(LINES)
    with reading_ahead([str(path)]):
        next(iter(load._AHEAD.values())).result()  # the old content is read
        path.write_text("q9 Q0 d9 1 9.0 other\n")
        run = load_run(str(path))
    assert run.query.to_pylist() == ["q9"] and run.name == "other"


def test_reads_not_taken_are_dropped_and_other_files_left_alone(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run, table, folder = tmp_path / "run.trec", tmp_path / "run.csv", tmp_path / "dataset"
    run.write_text(LINES)
    table.write_text("query,doc,score\nq1,d1,1.0\n")
    folder.mkdir()
    reads = _counted_reads(monkeypatch)
    with reading_ahead([str(table), str(folder), str(tmp_path / "missing.trec"), "-"]):
        assert load._AHEAD == {}  # a CSV file, a directory, a missing file, standard input
    with reading_ahead([str(run), str(run)]):
        assert len(load._AHEAD) == 1  # one read per file
    assert load._AHEAD == {}
    assert reads in ([], [str(run)])  # the read nobody took may have run; nothing waits for it
