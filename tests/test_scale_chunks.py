"""engine='chunks': runs read piece by piece and scored in query-complete chunks give the
in-memory path's per-query values, means and warnings, bit for bit."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.data.pieces import TrecRunPieces
from rankwise.errors import InputError, RankwiseError
from rankwise.evaluation import EvaluationPlan, evaluate
from rankwise.metrics.registry import FAMILIES
from rankwise.scale.chunked import score_pieces
from rankwise.scale.chunking import NotGrouped, QueryChunks

GOLDEN = Path(__file__).parent / "data" / "golden"


def _every_metric() -> list[str]:
    """Every metric family that reads qrels, by its name (or name@10 where it needs a cut-off)."""
    q = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
    r = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.8}, "q2": {"d2": 1.0, "d1": 0.5}}
    out = []
    for fam in FAMILIES:
        if fam.judgments not in ("qrels", "any"):
            continue
        for name in (fam.name, fam.name + "@10"):
            try:
                evaluate(q, r, [name])
            except RankwiseError:
                continue
            out.append(name)
            break
    return out + ["rr@10", "dcg@10", "ndcg_exp@10", "accuracy@10"]


METRICS = _every_metric()


def assert_same(a, b) -> None:
    """Per-query values, summaries and warnings equal, bit for bit (NaN equal to NaN)."""
    pa_, pb = a.per_query, b.per_query
    assert list(pa_.index) == list(pb.index)
    for column in pa_.columns:
        x, y = pa_[column].to_numpy(), pb[column].to_numpy()
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), column
        else:
            assert list(x) == list(y), column
    assert a.summary.equals(b.summary)
    assert [str(w) for w in a.warnings] == [str(w) for w in b.warnings]
    assert a.signatures == b.signatures


def test_every_metric_has_been_found() -> None:
    assert len(METRICS) > 60 and "ndcg_cut" in METRICS and "ERR" in METRICS and "es_dcg" in METRICS


@pytest.mark.parametrize("run", ["BM25.dl19.trec", "SPLADE_P_P_ENSEMBLE_DISTIL.dl20.trec"])
@pytest.mark.parametrize("conventions", [
    {}, {"missing": "zero"}, {"rel_level": 2, "ties": "input"}, {"judged_only": True, "depth": 20},
    {"ties": "expected"}, {"score_precision": "float32", "missing": "zero", "universe": "run"},
])
def test_real_runs_in_chunks_equal_the_whole_run(run: str, conventions: dict) -> None:
    qrels = GOLDEN / ("qrels.dl19-passage.txt" if "dl19" in run else "qrels.dl20-passage.txt")
    metrics = METRICS if conventions.get("ties") != "expected" else ["ndcg@10", "map", "P@10", "recip_rank"]
    whole = evaluate(qrels, GOLDEN / run, metrics, **conventions)
    for chunk_rows in (1, 777, 10**9):  # a query per chunk; cuts inside pieces; one chunk
        assert_same(whole, evaluate(qrels, GOLDEN / run, metrics, engine="chunks", chunk_rows=chunk_rows,
                                    **conventions))


def _write_run(path: Path, rows: list[tuple[str, str, float]], tag: str = "gen") -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt") as f:
        for i, (q, d, s) in enumerate(rows):
            f.write(f"{q} Q0 {d} {i + 1} {s} {tag}\n")


def _generated(seed: int, queries: int = 60) -> tuple[dict, list[tuple[str, str, float]]]:
    """Qrels and run rows with ties (scores of one decimal), duplicates, unjudged queries and
    judged queries the run misses."""
    rng = random.Random(seed)
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 0, 1, 2]) for d in rng.sample(range(40), 8)}
             for q in range(queries)}
    rows = []
    for q in range(queries + 5):  # q60..q64 have no judgments
        if rng.random() < 0.1:
            continue  # a judged query the run does not return
        for d in rng.sample(range(40), rng.randint(1, 25)):
            rows.append((f"q{q}", f"d{d}", round(rng.random(), 1)))
        if rng.random() < 0.2:
            rows.append(rows[-1][:2] + (0.5,))  # a duplicate (query, document) row
    return qrels, rows


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
@pytest.mark.parametrize("form", ["trec", "gz", "parquet", "dataset"])
def test_generated_runs_with_ties_and_duplicates(tmp_path: Path, layout: str, form: str) -> None:
    qrels, rows = _generated(7)
    if layout == "shuffled":
        random.Random(3).shuffle(rows)
    if form in ("trec", "gz"):
        path = tmp_path / ("run.trec" + (".gz" if form == "gz" else ""))
        _write_run(path, rows)
    else:
        table = pa.table({"qid": [r[0] for r in rows], "docno": [r[1] for r in rows],
                          "score": [r[2] for r in rows]})
        if form == "parquet":
            path = tmp_path / "gen.parquet"
            pq.write_table(table, path, row_group_size=50)
        else:
            path = tmp_path / "gen"
            path.mkdir()
            for i, start in enumerate(range(0, len(rows), 97)):  # files in name order = row order
                pq.write_table(table.slice(start, 97), path / f"part-{i:03d}.parquet")
    with pytest.raises(InputError) as whole_error:  # trec_eval refuses duplicates; so do the chunks, alike
        evaluate(qrels, path, ["map"])
    with pytest.raises(InputError) as chunk_error:
        evaluate(qrels, path, ["map"], engine="chunks", chunk_rows=10**9)
    assert str(chunk_error.value) == str(whole_error.value)
    for conventions in ({"duplicates": "first"}, {"missing": "zero", "duplicates": "best"},
                        {"ties": "input", "rel_level": 2, "duplicates": "first"}):
        whole = evaluate(qrels, path, METRICS, **conventions)
        assert any(w.kind == "duplicates" for w in whole.warnings)
        assert any(w.kind == "unjudged_queries" for w in whole.warnings)
        for chunk_rows in (1, 50, 333):
            got = evaluate(qrels, path, METRICS, engine="chunks", chunk_rows=chunk_rows, **conventions)
            partitioned = [w for w in got.warnings if getattr(w, "kind", "") == "partitioned"]
            assert bool(partitioned) == (layout == "shuffled" and chunk_rows < len(rows))
            got.warnings = [w for w in got.warnings if w not in partitioned]
            if layout == "shuffled":  # the example of an unjudged query is the first one met in a partition
                got.warnings = [w for w in got.warnings if w.kind != "unjudged_queries"]
                whole.warnings = [w for w in whole.warnings if w.kind != "unjudged_queries"]
            assert_same(whole, got)


def test_irregular_pieces_are_read_by_the_careful_reader(tmp_path: Path) -> None:
    """Comments, tabs and runs of spaces in some pieces: those pieces go through the line
    reader; every piece's rows, line numbers and skipped-line counts add up to the file's."""
    qrels, rows = _generated(11)
    lines = [f"{q} Q0 {d} {i} {s} gen" for i, (q, d, s) in enumerate(rows)]
    lines[10] = lines[10].replace(" ", "  ")
    lines.insert(200, "# a comment")
    lines.insert(400, "")
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    whole = evaluate(qrels, path, ["map", "P@5"], duplicates="first")
    plan = EvaluationPlan.build(qrels, ["map", "P@5"], None, {"duplicates": "first"})
    pieces = TrecRunPieces(path, piece_bytes=1000)
    got = list(pieces)
    assert sum(len(p) for p in got) == len(rows) and len(got) > 10
    assert np.array_equal(np.concatenate([p.lines for p in got]),
                          [i + 1 for i, line in enumerate(lines) if line.strip() and not line.startswith("#")])
    scores, notes = score_pieces(plan, pieces, 100)
    assert [str(n) for n in notes] == [str(n) for n in whole.runs[0].warnings if "line" in str(n)]
    assert np.array_equal(scores.values["map"], whole.runs[0].values["map"])


def test_a_bad_score_in_a_later_chunk_names_its_line(tmp_path: Path) -> None:
    qrels, rows = _generated(5)
    path = tmp_path / "run.trec"
    _write_run(path, rows)
    text = path.read_text().splitlines()
    text[300] = text[300].rsplit(" ", 2)[0] + " nan gen"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match=r"run.trec:301: field 'score': expected a number, got NaN"):
        evaluate(qrels, path, ["map"], engine="chunks", chunk_rows=20, duplicates="first")


def test_bad_parquet_inputs_name_file_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docno": ["a", "b"], "score": [1.0, None]}), path)
    with pytest.raises(InputError, match=r"run.parquet \(row 2\): field 'score': expected a number, got null"):
        evaluate({"q1": {"a": 1}}, path, ["map"], engine="chunks")
    pq.write_table(pa.table({"qid": ["q1"], "docno": ["a"]}), path)
    with pytest.raises(InputError, match="no score column; expected one of score"):
        evaluate({"q1": {"a": 1}}, path, ["map"], engine="chunks")
    empty = tmp_path / "empty.trec"
    empty.write_text("")
    with pytest.raises(InputError, match="empty.trec: the file holds no data lines"):
        evaluate({"q1": {"a": 1}}, empty, ["map"], engine="chunks")
    with pytest.raises(InputError, match="file not found"):
        evaluate({"q1": {"a": 1}}, tmp_path / "nothing.parquet", ["map"], engine="chunks")


def test_engine_options_are_checked() -> None:
    with pytest.raises(RankwiseError, match="unknown engine 'ray'"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "map", engine="ray")
    with pytest.raises(RankwiseError, match="chunk_rows must be at least 1"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "map", engine="chunks", chunk_rows=0)
    with pytest.raises(RankwiseError, match="chunk_rows and client apply to engine="):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "map", chunk_rows=10)


def test_a_query_split_across_the_input_is_found() -> None:
    from rankwise.data.pieces import RunPiece

    pieces = [RunPiece(pa.array(["a", "a", "b"]), pa.array(["x", "y", "z"]), np.zeros(3), np.arange(1, 4)),
              RunPiece(pa.array(["b", "c", "a"]), pa.array(["w", "v", "u"]), np.zeros(3), np.arange(4, 7))]
    chunks = QueryChunks(pieces, 2, "<run>")
    with pytest.raises(NotGrouped, match="shows up again at line 6"):
        [[r.query.to_pylist() for r in chunk] for chunk in chunks]
    # a query longer than a chunk is never split: 'b' spans both pieces
    grouped = pieces[:1] + [RunPiece(pa.array(["b", "c"]), pa.array(["w", "v"]), np.zeros(2), np.arange(4, 6))]
    assert [[r.query.to_pylist() for r in chunk] for chunk in QueryChunks(grouped, 2, "<run>")] == [
        [["a", "a"]], [["b"], ["b"]], [["c"]]]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), chunk_rows=st.integers(1, 200), shuffle=st.booleans())
def test_property_any_chunking_equals_the_whole_run(tmp_path_factory, seed: int, chunk_rows: int,
                                                   shuffle: bool) -> None:
    qrels, rows = _generated(seed, queries=15)
    if shuffle:
        random.Random(seed).shuffle(rows)
    path = tmp_path_factory.mktemp("prop") / "run.trec"
    _write_run(path, rows)
    metrics = ["map", "ndcg@5", "P@3", "recip_rank", "bpref", "num_ret", "infAP"]
    whole = evaluate(qrels, path, metrics, missing="zero", duplicates="first")
    got = evaluate(qrels, path, metrics, engine="chunks", chunk_rows=chunk_rows, missing="zero", duplicates="first")
    got.warnings = [w for w in got.warnings if w.kind not in ("partitioned", "unjudged_queries")]
    whole.warnings = [w for w in whole.warnings if w.kind != "unjudged_queries"]
    assert_same(whole, got)


def test_a_parquet_dataset_is_read_only_as_far_as_asked(tmp_path: Path, monkeypatch) -> None:
    """Pieces are decoded when asked for: the first piece of a 3-file dataset opens one file
    (Arrow's dataset scanner kept decoding about 1 GB ahead on background threads)."""
    from rankwise.data.pieces import ParquetRunPieces

    for part in range(3):
        pq.write_table(pa.table({"qid": [f"q{part}"] * 2, "docno": ["a", "b"], "score": [2.0, 1.0]}),
                       tmp_path / f"part-{part}.parquet")
    opened: list[object] = []
    real = pq.ParquetFile

    def counting(source, *args, **kwargs):
        opened.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", counting)
    pieces = iter(ParquetRunPieces(tmp_path, batch_rows=2))
    first = next(pieces)
    assert first.query.to_pylist() == ["q0", "q0"] and len(opened) == 1
    assert [p.lines.tolist() for p in pieces] == [[3, 4], [5, 6]] and len(opened) == 3
