"""Every reader refuses bad input with file:line:field, or reads it as trec_eval does and counts
what it changed; never a raw Python traceback, never a silent change."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rankwise
from rankwise.data import load_qrels, load_run
from rankwise.errors import InputError

GOOD_RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"


def _write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("text,line", [
    ("q1 Q0 d1 1 2.0 t\nq1 Q0  2 2.0 t\n", 2),   # a missing doc hidden by two spaces
    ("q1 Q0 d1 1 2.0 t\n Q0 d2 1 2.0 t\n", 2),   # a missing query hidden by a leading space
    ("q1 Q0 d1 1 2.0\n", 1),                     # no tag
])
def test_missing_fields_are_malformed_lines(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(InputError, match="malformed line: expected 6 fields") as err:
        load_run(_write(tmp_path, "r.trec", text))
    assert err.value.line == line


def test_only_c_whitespace_separates_fields(tmp_path: Path) -> None:
    # \v and \f separate fields (C isspace); NBSP, U+2028, \x1c and U+0085 are part of the id
    run = load_run(_write(tmp_path, "r.trec", "q1\vQ0\fd\u00a01 1 2.0 t\nq1 Q0 d\u2028\x1c\u00852 2 1.0 t\n"))
    assert run.doc.to_pylist() == ["d\u00a01", "d\u2028\x1c\u00852"]
    assert run.query.to_pylist() == ["q1", "q1"]


def test_a_comment_line_does_not_change_how_lines_are_read(tmp_path: Path) -> None:
    body = "q1 Q0 d\u00a01 1 2.0 t\nq1 Q0 d2 2 1_000 t\n"
    plain = load_run(_write(tmp_path, "a.trec", body))
    commented = load_run(_write(tmp_path, "b.trec", "# header\n" + body))
    assert plain.doc.to_pylist() == commented.doc.to_pylist()
    assert plain.score.tolist() == commented.score.tolist() == [2.0, 1.0]


def test_scores_read_as_atof_with_a_counted_warning(tmp_path: Path) -> None:
    # C's atof reads the numeric prefix: '1_000' is 1, Arabic-Indic and full-width digits are 0
    path = _write(tmp_path, "r.trec", "q1 Q0 a 1 1_000 t\nq1 Q0 b 2 \u0661\u0662 t\nq1 Q0 c 3 \uff13 t\n"
                                      "q1 Q0 d 4 0x10 t\n")
    run = load_run(path)
    assert run.score.tolist() == [1.0, 0.0, 0.0, 16.0]
    assert run.notes == [f"{path}: 3 score(s) were not plain numbers and were read as C's atof reads them, "
                         "as trec_eval does; first at line 1 ('1_000')"]


def test_several_tags_name_the_run_after_the_last_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.trec", "q1 Q0 d1 1 2.0 first\nq1 Q0 d2 2 1.0 second\n")
    run = load_run(path)
    assert run.name == "second"  # trec_eval's -m runid prints the last line's tag
    assert run.notes == [f"{path}: 2 different run tags ('first', 'second'); the run is named after the tag "
                         "of the last line, 'second', as trec_eval names it"]


def test_qrels_comments_are_counted_and_blank_lines_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "q.txt", "# judged by A\nq1 0 d1 1\n")
    assert load_qrels(path).notes == [f"{path}: 1 comment line(s) starting with '#' skipped; first at line 1"]
    with pytest.raises(InputError, match="found a blank line") as err:
        load_qrels(_write(tmp_path, "b.txt", "q1 0 d1 1\n\nq1 0 d2 0\n"))
    assert err.value.line == 2


@pytest.mark.parametrize("data,message,line", [
    (b"q1 Q0 d\xff 1 2.0 t\n", "expected UTF-8 text", 1),
    (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d\x002 2 1.0 t\n", "found a NUL byte", 2),
    (b"q1 Q0 d1 1 inf t\nq1 Q0 d2 2 nan t\n", "NaN scores have no order", 2),
])
def test_bytes_trec_eval_would_misread_are_errors(tmp_path: Path, data: bytes, message: str, line: int) -> None:
    with pytest.raises(InputError, match=message) as err:
        load_run(_write(tmp_path, "r.trec", data))
    assert err.value.line == line


def test_an_infinite_score_ranks_first(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path, "r.trec", "q1 Q0 a 1 inf t\nq1 Q0 b 2 1e400 t\nq1 Q0 c 3 -inf t\n"))
    assert run.score.tolist() == [np.inf, np.inf, -np.inf]


def test_label_beyond_int64_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected an integer between -2\\^63 and 2\\^63 - 1") as err:
        load_qrels(_write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 9223372036854775808\n"))
    assert (err.value.line, err.value.field) == (2, "label")
    with pytest.raises(InputError, match="got 9223372036854775808"):
        load_qrels({"q1": {"d1": 2**63}})


def test_large_labels_are_kept_exactly() -> None:
    res = rankwise.evaluate({"q": {"a": 2**40, "b": 0}}, {"q": {"a": 1.0, "b": 2.0}}, ["map", "num_rel"])
    assert res.summary.loc["run", "map"] == 0.5  # a is relevant at rank 2: AP = (1/2) / 1


def test_files_that_are_not_what_they_claim(tmp_path: Path) -> None:
    gz = gzip.compress(GOOD_RUN.encode())
    with pytest.raises(InputError, match="gzip data is truncated or corrupt"):
        load_run(_write(tmp_path, "r.trec.gz", gz[: len(gz) // 2]))
    with pytest.raises(InputError, match="gzip data is truncated or corrupt"):
        load_run(_write(tmp_path, "s.trec.gz", gz[:10] + b"\x00" * 20 + gz[30:]))
    with pytest.raises(InputError, match="expected a file, got a directory"):
        load_run(tmp_path)
    with pytest.raises(InputError, match="expected a Parquet file"):
        load_run(_write(tmp_path, "r.parquet", GOOD_RUN))


def test_json_repeated_keys_are_errors(tmp_path: Path) -> None:
    text = '{"q1": {"d1": 1.0},\n "q2": {"d1": 2.0},\n "q1": {"d9": 3.0}}'
    with pytest.raises(InputError, match="the key 'q1' appears twice") as err:
        load_run(_write(tmp_path, "r.json", text))
    assert err.value.line == 3
    with pytest.raises(InputError, match="the key 'doc_id' appears twice"):
        load_qrels(_write(tmp_path, "q.jsonl", json.dumps({"query_id": "q1", "doc_id": "d1"})[:-1]
                          + ', "doc_id": "d1", "relevance": 1}\n'))


@pytest.mark.parametrize("column", ["query_id", "doc_id"])
def test_missing_ids_in_frames_and_parquet(tmp_path: Path, column: str) -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    frame.loc[1, column] = None
    field = column.split("_")[0]
    with pytest.raises(InputError, match="expected an id, got (None|nan)") as err:
        load_run(frame)
    assert (err.value.line, err.value.field) == (2, field)
    frame.to_parquet(tmp_path / "r.parquet")
    with pytest.raises(InputError, match="expected an id") as err:
        load_run(tmp_path / "r.parquet")
    assert err.value.field == field


def test_a_non_numeric_score_after_an_infinite_one() -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [float("inf"), "high"]})
    with pytest.raises(InputError, match="expected a number, got 'high'") as err:
        load_run(frame)
    assert (err.value.line, err.value.field) == (2, "score")


def test_fifty_thousand_queries_do_not_overflow() -> None:
    """The join key qcode * n_docs passes 2^31 here; int32 arithmetic gave MAP 0.859."""
    n = 50_000
    res = rankwise.evaluate({f"q{i}": {f"d{i}": 1} for i in range(n)}, {f"q{i}": {f"d{i}": 1.0} for i in range(n)},
                            ["map", "num_rel_ret"])
    assert res.summary.loc["run", "map"] == 1.0
    assert res.summary.loc["run", "num_rel_ret"] == n


def test_two_million_judgments_over_fifty_thousand_queries() -> None:
    """50,000 queries x 40 judgments = 2M judged (query, doc) pairs over 2M distinct documents:
    query code x document count reaches 1e11, far past 2^31. Each query retrieves its one
    relevant document first and one non-relevant one second: AP = 1, P@2 = 1/2, R = 1."""
    import pyarrow as pa

    from rankwise.data.containers import Qrels, Run

    n_q, per_q = 50_000, 40
    q = np.repeat(np.arange(n_q), per_q)
    docs = pa.array([f"d{i}" for i in range(n_q * per_q)])
    labels = np.zeros(n_q * per_q, dtype=np.int64)
    labels[::per_q] = 1  # the first judged document of each query is relevant
    qrels = Qrels(pa.array(q.astype(str)), docs, labels)
    first = np.arange(n_q) * per_q
    run_docs = np.column_stack([first, first + 1]).ravel()
    run = Run(pa.array(np.repeat(np.arange(n_q), 2).astype(str)), docs.take(pa.array(run_docs)),
              np.tile([2.0, 1.0], n_q))
    res = rankwise.evaluate(qrels, run, ["map", "P@2", "num_rel", "num_rel_ret"])
    summary = res.summary.loc["run"]
    assert (summary["map"], summary["P@2"]) == (1.0, 0.5)
    assert (summary["num_rel"], summary["num_rel_ret"]) == (n_q, n_q)


@pytest.mark.parametrize("gz", [False, True])
def test_a_bare_carriage_return_does_not_end_a_line(tmp_path: Path, gz: bool) -> None:
    """trec_eval reads "\\r" as whitespace inside a line (only "\\n" ends one); Arrow's CSV
    reader would end the line there and count a document trec_eval never sees."""
    pack = gzip.compress if gz else (lambda b: b)
    run = _write(tmp_path, "run", pack(b"q1 Q0 d1 1 3.5 t\rq1 Q0 d2 2 2 t\n"))
    qrels = _write(tmp_path, "qrels", pack(b"q1 0 d1 1\nq1 0 d2 1\n"))
    res = rankwise.evaluate(str(qrels), str(run), ["num_ret", "num_rel_ret"])
    # one line of 12 fields: the first 6 are read (d1), the rest ignored, as trec_eval 10.0 prints
    assert res.summary.loc["t"].tolist() == [1, 1]
    assert any("fields after the 6th" in w for w in res.warnings)
    bad_qrels = _write(tmp_path, "bad", pack(b"q1 0 d1 1\rq1 0 d2 0\n"))
    with pytest.raises(InputError, match=r"bad:1: .*found 8 field"):
        load_qrels(str(bad_qrels))
    crlf = _write(tmp_path, "crlf", pack(b"q1 0 d1 1\r\nq1 0 d2 0\r\n"))
    assert load_qrels(str(crlf)).to_dict() == {"q1": {"d1": 1, "d2": 0}}



# -- input limits (issue #37): no input makes a reader grow without bound -------------------------

def test_an_endless_device_stops_at_the_line_limit() -> None:
    with pytest.raises(InputError, match=r"/dev/zero: a line longer than 1048576 bytes without a line end"):
        load_run("/dev/zero")   # grew memory without bound before


def test_a_gzip_bomb_stops_at_the_ratio_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rankwise.data.limits as limits

    monkeypatch.setattr(limits, "RATIO_CHECKED_AFTER", 2**20)   # the check starts after 1 MiB here
    bomb = tmp_path / "run.trec.gz"
    with gzip.open(bomb, "wb") as f:            # 8 MiB of one repeated line: about 1000 times smaller
        f.write(b"301 Q0 D 1 1.0 t\n" * (2**23 // 17))
    with pytest.raises(InputError, match=r"run\.trec\.gz: the gzip data expands more than 200 times"):
        load_run(str(bomb))
    monkeypatch.setenv("RANKWISE_MAX_GZIP_RATIO", "0")          # 0 turns the limit off
    assert len(load_run(str(bomb))) > 0


def test_limits_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run.trec"
    run.write_text("301 Q0 " + "D" * 200 + " 1 1.0 t\n")
    monkeypatch.setenv("RANKWISE_MAX_LINE_BYTES", "100")
    with pytest.raises(InputError, match="a line longer than 100 bytes"):
        rankwise.data.trec_io.read_bytes(run)
    monkeypatch.setenv("RANKWISE_MAX_LINE_BYTES", "1000")
    monkeypatch.setenv("RANKWISE_MAX_INPUT_BYTES", "50")
    with pytest.raises(InputError, match="more than 50 bytes of input"):
        rankwise.data.trec_io.read_bytes(run)
    monkeypatch.setenv("RANKWISE_MAX_INPUT_BYTES", "lots")
    with pytest.raises(InputError, match="RANKWISE_MAX_INPUT_BYTES='lots': expected a number"):
        rankwise.data.trec_io.read_bytes(run)


def test_rank_eval_size_is_bounded() -> None:
    from rankwise.errors import OptionError
    from rankwise.rankeval.evaluation import search_size
    from rankwise.rankeval.spec import RankEvalSpec

    with pytest.raises(OptionError, match="at most 10000 hits per search"):   # aborted inside tantivy before
        search_size(RankEvalSpec([], ["P@5"], []), 2_000_000_000)
