"""Runs and qrels as CSV/TSV (``rankwise.data.delimited``): with or without a header, the
delimiter detected, the columns found by the names DataFrames accept; a TREC file that looks
comma-separated gets a one-line hint (issue #41)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import rankwise
from rankwise.cli.main import app
from rankwise.data import load_qrels, load_run
from rankwise.errors import InputError

QRELS, RUN = DATA / "qrels.test", DATA / "results.test"


def _trec_rows(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("suffix", "delimiter", "header"), [
    (".csv", ",", "qid,Q0,docno,rank,score,tag"), (".tsv", "\t", None), (".csv", ";", None),
    (".csv.gz", ",", "query_id,iter,doc_id,rank,score,run_id"),
])
def test_a_run_as_a_table_scores_as_its_trec_file(tmp_path: Path, suffix: str, delimiter: str,
                                                   header: str | None) -> None:
    rows = _trec_rows(RUN)
    text = ((header.replace(",", delimiter) + "\n") if header else "") + \
        "".join(delimiter.join(r) + "\n" for r in rows)
    path = tmp_path / f"run{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    want = rankwise.evaluate(str(QRELS), str(RUN), ["map", "ndcg@10"]).summary.iloc[0].tolist()
    got = rankwise.evaluate(str(QRELS), str(path), ["map", "ndcg@10"]).summary.iloc[0].tolist()
    assert got == want   # the same doubles: ids, scores and tie order read alike


def test_qrels_as_a_table_with_recommender_names(tmp_path: Path) -> None:
    rows = _trec_rows(QRELS)
    path = tmp_path / "qrels.csv"
    path.write_text("user_id,item_id,rating\n" + "".join(f"{q},{d},{label}\n" for q, _, d, label in rows))
    assert load_qrels(str(path)).to_dict() == load_qrels(str(QRELS)).to_dict()
    three = tmp_path / "three.tsv"
    three.write_text("".join(f"{q}\t{d}\t{label}\n" for q, _, d, label in rows))   # no header: query doc label
    assert load_qrels(str(three)).to_dict() == load_qrels(str(QRELS)).to_dict()


def test_ids_keep_their_text(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    path.write_text("qid,docno,score\n007,00123,1.5\n")
    assert load_run(str(path)).to_dict() == {"007": {"00123": 1.5}}


@pytest.mark.parametrize(("text", "message"), [
    ("qid,docno,score\nq1,d1,high\n", r"run\.csv:2: field 'score': expected a number, got 'high'"),
    ("qid,docno,score\nq1,d1,1\n\nq1,d2,2\n", r"run\.csv:3: an empty line inside the table"),
    ("q1,d1\n", r"run\.csv: 2 columns without a header; a run without a header has 6"),
    ("query,doc\nq1,d1\n", r"run\.csv:1: no score or rank column; expected one of score, sim, prediction, "
                            r"rank_score, rank"),
    ("qid,docno,score\nq1,d1,nan\n", r"run\.csv:2: field 'score': expected a number, got 'nan'"),
])
def test_bad_tables_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_run(str(path))


def test_a_trec_file_that_looks_comma_separated_gets_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("301,Q0,FR940202-2-00150,1,2.5,r\n")
    result = CliRunner().invoke(app, ["evaluate", str(QRELS), str(path)])
    assert result.exit_code == 2
    assert "run.txt:1: malformed line" in result.output and "looks comma-separated: name the file .csv" \
        in result.output


def test_load_routes_exactly_the_suffixes_the_reader_takes() -> None:
    from rankwise.data import delimited, load

    assert load._DELIMITED_SUFFIXES == delimited.DELIMITED_SUFFIXES


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["qid", "docno", "score", "q1", "d1", "2.5", "nan", "x", "", ",", ";", "\t", "\n",
                                 "\r\n", '"', "\x00", "é", "1e999", "-0"]), max_size=40))
def test_any_text_gives_a_run_or_rankwise_error(tmp_path_factory: pytest.TempPathFactory, pieces: list[str]) -> None:
    """Fuzz: whatever the file holds, the only exception is rankwise's own, and an accepted file
    keeps every row with a finite score."""
    path = tmp_path_factory.mktemp("fuzz") / "run.csv"
    path.write_text("".join(pieces), encoding="utf-8")
    try:
        run = load_run(str(path))
    except InputError:
        return
    assert np.isfinite(run.score).all() and len(run.query) == len(run.doc) == len(run.score)
