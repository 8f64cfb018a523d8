"""Readers: every input shape gives the same data; bad input names file, line, field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DATA

from rankwise.data import load_qrels, load_run
from rankwise.data.containers import Qrels, Run
from rankwise.errors import InputError

RUN_TEXT = "q1 Q0 d1 1 2.5 tagA\nq1 Q0 d2 2 1.5 tagA\nq2 Q0 d3 1 0.5 tagA\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_trec_run_fast_path(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path, "r.trec", RUN_TEXT))
    assert run.name == "tagA"
    assert run.query.to_pylist() == ["q1", "q1", "q2"]
    assert run.doc.to_pylist() == ["d1", "d2", "d3"]
    assert run.score.tolist() == [2.5, 1.5, 0.5]


def test_trec_run_mixed_whitespace_and_gzip(tmp_path: Path) -> None:
    text = "q1\tQ0\td1\t1\t  2.5\ttagA\n  q1   Q0 d2 2 1.5 tagA   \n\n"
    path = tmp_path / "r.trec.gz"
    path.write_bytes(gzip.compress(text.encode()))
    run = load_run(path)
    assert run.doc.to_pylist() == ["d1", "d2"]
    assert run.score.tolist() == [2.5, 1.5]
    assert any("blank line" in n for n in run.notes)


def test_trec_run_comments_are_counted(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path, "r.trec", "# a comment\n" + RUN_TEXT))
    assert len(run) == 3
    assert run.notes == [f"{tmp_path / 'r.trec'}: 1 comment line(s) starting with '#' skipped; first at line 1"]


def test_trec_run_extra_columns_ignored_with_a_note() -> None:
    run = load_run(DATA / "results.trunc")
    assert run.name == "STANDARD"
    assert any("fields after the 6th" in n for n in run.notes)


def test_trec_qrels_keeps_negative_labels(tmp_path: Path) -> None:
    qrels = load_qrels(_write(tmp_path, "q.txt", "q1 0 d1 2\nq1 0 d2 -1\nq2 Q0 d3 0\n"))
    assert qrels.label.tolist() == [2, -1, 0]
    assert qrels.doc.to_pylist() == ["d1", "d2", "d3"]


def test_all_run_shapes_agree(tmp_path: Path) -> None:
    reference = load_run(_write(tmp_path, "r.trec", RUN_TEXT)).to_dict()
    frame = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d3"], "score": [2.5, 1.5, 0.5]})
    frame.to_parquet(tmp_path / "r.parquet")
    (tmp_path / "r.json").write_text(json.dumps(reference))
    (tmp_path / "r.jsonl").write_text("".join(
        json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n" for q, d, s in frame.itertuples(index=False)))
    for source in (frame, reference, tmp_path / "r.parquet", tmp_path / "r.json", tmp_path / "r.jsonl"):
        assert load_run(source).to_dict() == reference
    # files without a tag column are named after the file
    assert load_run(tmp_path / "r.jsonl").name == "r" and load_run(tmp_path / "r.parquet").name == "r"
    tagged = frame.assign(run_id="bm25")
    assert load_run(tagged).name == "bm25"


def test_all_qrels_shapes_agree(tmp_path: Path) -> None:
    judgments = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    frame = Qrels.from_dict(judgments).to_dataframe()
    frame.to_parquet(tmp_path / "q.parquet")
    (tmp_path / "q.json").write_text(json.dumps(judgments))
    for source in (judgments, frame, tmp_path / "q.parquet", tmp_path / "q.json"):
        assert load_qrels(source).to_dict() == judgments


def _id_sources(tmp_path: Path, frame: pd.DataFrame, stem: str) -> list:
    """The id columns every source kind gives: Parquet (pandas writes ``large_string``), a
    Parquet dataset directory, Arrow ``large_string`` and dictionary columns in a DataFrame."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame.to_parquet(tmp_path / f"{stem}.parquet")
    (tmp_path / stem).mkdir()
    frame.to_parquet(tmp_path / stem / "part-0.parquet")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    large = table.cast(pa.schema([pa.field(f.name, pa.large_string() if pa.types.is_string(f.type) else f.type)
                                  for f in table.schema]))
    pq.write_table(large, tmp_path / f"{stem}-large.parquet")
    encoded = frame.astype({c: "category" for c in frame.columns if frame[c].dtype == object})
    return [tmp_path / f"{stem}.parquet", tmp_path / stem, tmp_path / f"{stem}-large.parquet",
            large.to_pandas(types_mapper=pd.ArrowDtype), encoded]


def test_every_source_gives_ids_of_one_type(tmp_path: Path) -> None:
    """Ids read from any source are Arrow ``string`` (Parquet from pandas is ``large_string``):
    runs from two sources combine, as fusion combines them (a Parquet run fused with a TREC
    run was an ``ArrowTypeError``)."""
    import pyarrow as pa

    from rankwise.fusion import fuse

    trec = load_run(_write(tmp_path, "r.trec", RUN_TEXT))
    runs = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d3"], "score": [2.5, 1.5, 0.5]})
    judged = pd.DataFrame({"query": ["q1", "q2"], "doc": ["d1", "d3"], "label": [1, 2]})
    expected = fuse([trec, trec], "rrf").to_dict()
    for source in _id_sources(tmp_path, runs, "r"):
        run = load_run(source)
        assert (run.query.type, run.doc.type) == (pa.string(), pa.string()), source
        assert run.to_dict() == trec.to_dict()
        assert fuse([run, trec], "rrf").to_dict() == expected, source
    for source in _id_sources(tmp_path, judged, "q"):
        qrels = load_qrels(source)
        assert (qrels.query.type, qrels.doc.type) == (pa.string(), pa.string()), source
        assert qrels.to_dict() == {"q1": {"d1": 1}, "q2": {"d3": 2}}


@pytest.mark.parametrize("text,line,field,message", [
    ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2\n", 2, None, "malformed line: expected 6 fields"),
    ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 nan t\n", 2, "score", "NaN scores have no order"),
])
def test_bad_run_lines(tmp_path: Path, text: str, line: int, field: str | None, message: str) -> None:
    path = _write(tmp_path, "bad.trec", text)
    with pytest.raises(InputError) as err:
        load_run(path)
    assert err.value.source == str(path)
    assert err.value.line == line
    assert err.value.field == field
    assert message in str(err.value)


def test_qrels_label_read_as_atol_with_a_warning(tmp_path: Path) -> None:
    """trec_eval reads labels with C's atol: 'high' is 0, '2.5' is 2; rankwise does the same and
    says so."""
    path = _write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 high\nq1 0 d3 2.5\n")
    qrels = load_qrels(path)
    assert qrels.label.tolist() == [1, 0, 2]
    assert qrels.notes == [f"{path}: 2 label(s) were not plain numbers and were read as C's atol reads them, "
                           "as trec_eval does; first at line 2 ('high')"]


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="the file is empty"):
        load_run(_write(tmp_path, "empty.trec", "\n"))
    with pytest.raises(InputError, match="file not found"):
        load_qrels(tmp_path / "nope.txt")


def test_dataframe_without_score_column() -> None:
    with pytest.raises(InputError, match="no score or rank column; expected one of score, sim, prediction, "
                                         "rank_score, rank"):
        Run.from_dataframe(pd.DataFrame({"qid": ["q"], "docno": ["d"]}))


def test_scores_keep_full_precision(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path, "r.trec", "q1 Q0 d1 1 15.780599594116211 t\n"))
    assert run.score[0] == np.float64("15.780599594116211")


def test_string_words_order_like_strcmp() -> None:
    import pyarrow as pa

    from rankwise.engine.strings import hash_rows, string_words

    ids = ["", "a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x7f", "b", "ä", "zz" * 9, "zz" * 8, "Z", "10", "9"]
    words, lengths = string_words(pa.chunked_array([pa.array(ids[:5]), pa.array(ids[5:])]))
    assert lengths.tolist() == [len(s.encode()) for s in ids]
    order = np.lexsort(words.T[::-1])
    assert [ids[i] for i in order] == sorted(ids, key=lambda s: s.encode())
    h = hash_rows(words)
    assert len(set(h.tolist())) == len(ids)


def test_write_trec_run_round_trip(tmp_path: Path) -> None:
    from rankwise.data.trec_io import write_trec_run

    run = load_run(DATA / "results.test")
    out = tmp_path / "copy.trec"
    write_trec_run(run, out)
    again = load_run(out)
    assert again.name == "STANDARD" and again.to_dict() == run.to_dict()
    first = out.read_text().splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1"  # ranks numbered from 1 by descending score
