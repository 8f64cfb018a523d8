"""Editorial labels for click logs (rankwise.clicks.labels), validation-log early stopping,
and the click commands that use them: `clicks rank --labels`, `clicks evaluate` with several
models and `--plot`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rankwise import clicks
from rankwise.cli.main import app
from rankwise.clicks.labels import match_queries, read_labels
from rankwise.errors import InputError

LOG = Path(__file__).parent / "data" / "clicks" / "clara2_head.tsv"


def _pairs(log: clicks.ClickLog) -> pd.DataFrame:
    return pd.DataFrame({"query": np.asarray(log.query_ids, dtype=object)[log.pair_query].astype(str),
                         "doc": np.asarray(log.doc_ids, dtype=object)[log.pair_doc].astype(str)})


def _labels(log: clicks.ClickLog, renumber: bool) -> pd.DataFrame:
    """A label per pair of the log (the document id's last digit mod 4); query ids moved by
    1000 when ``renumber`` (as CLARA 2's label file numbers them differently)."""
    pairs = _pairs(log)
    labels = pairs.assign(label=pairs["doc"].str[-1].astype(int) % 4)
    return labels.assign(query=(labels["query"].astype(int) + 1000).astype(str)) if renumber else labels


def test_the_formats_are_read(tmp_path: Path) -> None:
    (tmp_path / "clara.tsv").write_text("query\turl\trelevance\n3\t17\t2\n3\t18\t0\n")
    (tmp_path / "table.csv").write_text("qid,doc,label\n3,17,2\n")
    (tmp_path / "yandex.txt").write_text("3 225 17 1\n3 225 18 0\n")
    (tmp_path / "qrels.txt").write_text("3 0 17 2\n3 0 18 0\n")
    assert read_labels(tmp_path / "clara.tsv").values.tolist() == [["3", "17", 2], ["3", "18", 0]]
    assert read_labels(tmp_path / "table.csv").values.tolist() == [["3", "17", 2]]
    assert read_labels(tmp_path / "yandex.txt").values.tolist() == [["3", "17", 1], ["3", "18", 0]]
    assert read_labels(tmp_path / "qrels.txt").values.tolist() == [["3", "17", 2], ["3", "18", 0]]
    # the same file read as Yandex keeps the third field as the document
    assert read_labels(tmp_path / "qrels.txt", "yandex").values.tolist() == [["3", "17", 2], ["3", "18", 0]]


def test_gzipped_labels_are_read_as_every_file_is(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "labels.tsv.gz"
    path.write_bytes(gzip.compress(b"query\turl\trelevance\n3\t17\t2\n"))
    assert read_labels(path).values.tolist() == [["3", "17", 2]]


@pytest.mark.parametrize(("text", "message"), [
    ("query\turl\trelevance\n3\t17\thigh\n", r"labels.txt:2: field 'label': expected an integer label, got 'high'"),
    ("query\turl\trelevance\n3\t17\n", r"labels.txt:2: expected 3 fields \(table labels\), got 2"),
    ("query\tpage\trelevance\n3\t17\t1\n", r"labels.txt:1: no document column; expected one of url, doc"),
    ("3 0 17 2\n3 0 17 1\n", "query '3' document '17' is labelled twice with different labels"),
    ("", "labels.txt: the file is empty"),
])
def test_bad_label_files_name_the_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "labels.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_labels(path)


def test_queries_numbered_differently_are_matched_by_the_documents_they_label() -> None:
    log = clicks.read_yandex(LOG)
    same, note = match_queries(_labels(log, renumber=False), log)
    assert "query ids as given" in note and len(same) == log.n_pairs
    moved, note = match_queries(_labels(log, renumber=True), log)
    assert "numbers queries differently" in note
    pd.testing.assert_frame_equal(moved.sort_values(["query", "doc"]).reset_index(drop=True),
                                  same.sort_values(["query", "doc"]).reset_index(drop=True))
    # two log queries whose documents are all labelled under one label query: refused
    merged = _labels(log, renumber=True)
    first_two = merged["query"].unique()[:2]
    merged.loc[merged["query"].isin(first_two), "query"] = "x"
    with pytest.raises(InputError, match="not one to one.*'x'"):
        match_queries(merged, log)


def test_a_validation_log_stops_em_and_keeps_the_best_iteration() -> None:
    log = clicks.read_yandex(LOG)
    train, validation = log.split(0.3, seed=2)
    model = clicks.PBM().fit(train, iterations=200, tolerance=0, validation=validation, patience=2)
    held = [entry["validation_log_likelihood"] for entry in model.history]
    best = int(np.argmax(held)) + 1
    assert model.best_iteration == best and len(model.history) <= best + 2
    # the kept parameters are the best iteration's: they score the validation log at its best
    assert model.held_out_log_likelihood(validation) == pytest.approx(max(held), rel=1e-12)
    with pytest.raises(ValueError, match="patience"):
        clicks.PBM().fit(train, validation=validation, patience=0)


def _cli(*args: object):
    return CliRunner().invoke(app, ["clicks", *map(str, args)])


def test_cli_rank_scores_the_relevance_ranking_against_labels(tmp_path: Path) -> None:
    log = clicks.read_yandex(LOG)
    _labels(log, renumber=True).rename(columns={"doc": "url", "label": "relevance"}).to_csv(
        tmp_path / "labels.tsv", sep="\t", index=False)
    assert _cli("fit", LOG, "--model", "pbm", "-o", tmp_path / "pbm.json", "--quiet").exit_code == 0
    out = _cli("rank", LOG, "--model", tmp_path / "pbm.json", "-o", tmp_path / "run.trec", "--labels",
               tmp_path / "labels.tsv", "--metric", "ndcg_cut_10")
    assert out.exit_code == 0, out.output
    assert "numbers queries differently" in out.output
    scores = {line.split()[0]: float(line.split()[-1]) for line in out.output.splitlines()
              if line.split() and line.split()[0] in ("pbm", "all", "shown")}
    # the same numbers rankwise evaluate gives for the run written and an all-tied run
    import rankwise

    judged = _labels(log, renumber=False)
    written = rankwise.evaluate(judged, str(tmp_path / "run.trec"), ["ndcg_cut_10"]).summary["ndcg_cut_10"].iloc[0]
    assert scores["pbm"] == pytest.approx(written, abs=5e-5)
    assert set(scores) == {"pbm", "all", "shown"}
    bad = _cli("rank", LOG, "--model", tmp_path / "pbm.json", "-o", tmp_path / "x.trec", "--bound", "upper")
    assert bad.exit_code == 2 and "--bound must be mean or lower" in bad.output


def test_cli_evaluate_compares_models_per_rank_and_plots(tmp_path: Path) -> None:
    for kind in ("pbm", "dbn"):
        assert _cli("fit", LOG, "--model", kind, "-o", tmp_path / f"{kind}.json", "--quiet",
                    "--iterations", "5").exit_code == 0
    out = _cli("evaluate", LOG, "--model", tmp_path / "pbm.json", "--model", tmp_path / "dbn.json", "-f", "csv",
               "--plot", tmp_path / "cond.png")
    assert out.exit_code == 0, out.output
    from io import StringIO

    frame = pd.read_csv(StringIO(out.stdout), comment="#")   # the log's warnings come first, as comments
    assert frame["model"].unique().tolist() == ["pbm", "dbn"] and len(frame) == 2 * 11
    single = pd.read_csv(StringIO(_cli("evaluate", LOG, "--model", tmp_path / "dbn.json", "-f", "csv").stdout),
                         comment="#")
    pd.testing.assert_frame_equal(frame[frame["model"] == "dbn"].drop(columns="model").reset_index(drop=True),
                                  single)
    assert (tmp_path / "cond.png").read_bytes()[:4] == b"\x89PNG"
    table = _cli("evaluate", LOG, "--model", tmp_path / "pbm.json", "--model", tmp_path / "dbn.json")
    assert "conditional perplexity per rank" in table.output
