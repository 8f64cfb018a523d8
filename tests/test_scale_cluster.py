"""engine='dask' (2-worker LocalCluster) and engine='spark' (local[2]) give the in-memory path's
per-query values, bit for bit, on the shared real runs and on generated runs with ties,
duplicates and shuffled rows; a failing partition is one clear error; a worker killed or a
task failing once mid-evaluation changes no number."""

from __future__ import annotations

import os
import random
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_scale_chunks import GOLDEN, METRICS, _generated, assert_same

from rankwise.errors import InputError, RankwiseError
from rankwise.evaluation import evaluate

REAL = [("qrels.dl19-passage.txt", "BM25.dl19.trec"),
        ("qrels.dl20-passage.txt", "SPLADE_P_P_ENSEMBLE_DISTIL.dl20.trec")]


def _frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[1] for r in rows], "score": [r[2] for r in rows]})


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17+ (README: apt-get install openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    # local[2, 2]: two cores, and a failed task is tried once more, as on a cluster
    session = (SparkSession.builder.master("local[2, 2]").appName("rankwise-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4").getOrCreate())
    yield session
    session.stop()


def _no_shuffle(*args, **kwargs):
    raise AssertionError("the run was shuffled")


def _client(engine: str, request: pytest.FixtureRequest):
    return request.getfixturevalue("dask_client" if engine == "dask" else "spark")


@pytest.mark.parametrize("engine", ["dask", "spark"])
@pytest.mark.parametrize("qrels,run", REAL)
def test_real_runs_on_a_cluster_equal_the_whole_run(engine: str, qrels: str, run: str,
                                                    request: pytest.FixtureRequest) -> None:
    client = _client(engine, request)
    for conventions in ({"missing": "zero"}, {"rel_level": 2, "judged_only": True}):
        whole = evaluate(GOLDEN / qrels, GOLDEN / run, METRICS, **conventions)
        got = evaluate(GOLDEN / qrels, GOLDEN / run, METRICS, engine=engine, client=client, **conventions)
        assert_same(whole, got)


@pytest.mark.parametrize("engine", ["dask", "spark"])
def test_shuffled_rows_with_ties_and_duplicates_keep_the_input_order(engine: str, tmp_path: Path,
                                                                    request: pytest.FixtureRequest) -> None:
    """Rows of each query spread over partitions: the engine shuffles by query and keeps the
    input order, which decides ties under ties='input' and the kept row under duplicates='first'."""
    client = _client(engine, request)
    qrels, rows = _generated(21)
    random.Random(4).shuffle(rows)
    frame = _frame(rows)
    if engine == "dask":
        import dask.dataframe as dd

        distributed_frame = dd.from_pandas(frame, npartitions=4, sort=False)
        with pytest.MonkeyPatch.context() as patch, pytest.raises(AssertionError, match="shuffled"):
            patch.setattr(dd.DataFrame, "shuffle", _no_shuffle)  # rows of a query in several partitions
            evaluate(qrels, distributed_frame, ["map"], engine=engine, client=client, duplicates="first")
    else:
        # Spark keeps a frame's order until it is repartitioned (a round-robin repartition has none):
        # the pandas rows land in order over local[2]'s two partitions
        distributed_frame = client.createDataFrame(frame)
        assert distributed_frame.rdd.getNumPartitions() == 2
    for conventions in ({"ties": "input", "duplicates": "first"}, {"duplicates": "best", "missing": "zero"}):
        whole = evaluate(qrels, frame, METRICS, **conventions)
        got = evaluate(qrels, distributed_frame, METRICS, engine=engine, client=client, **conventions)
        # the example unjudged query is the first one a partition met
        got.warnings = [w for w in got.warnings if w.kind != "unjudged_queries"]
        whole.warnings = [w for w in whole.warnings if w.kind != "unjudged_queries"]
        assert_same(whole, got)


def test_a_parquet_dataset_already_partitioned_by_query_is_not_shuffled(dask_client, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import dask.dataframe as dd
    import pyarrow as pa
    import pyarrow.parquet as pq

    qrels, rows = _generated(8)
    table = pa.Table.from_pandas(_frame(rows), preserve_index=False)
    (tmp_path / "run").mkdir()
    queries = sorted({r[0] for r in rows})
    for i in range(3):  # each file holds whole queries
        mine = set(queries[i::3])
        keep = pa.array([q in mine for q in table.column("qid").to_pylist()])
        pq.write_table(table.filter(keep), tmp_path / "run" / f"part-{i}.parquet")
    whole = evaluate(qrels, tmp_path / "run", METRICS, duplicates="first")
    monkeypatch.setattr(dd.DataFrame, "shuffle", _no_shuffle)
    got = evaluate(qrels, tmp_path / "run", METRICS, duplicates="first", engine="dask", client=dask_client)
    got.warnings = [w for w in got.warnings if w.kind != "unjudged_queries"]
    whole.warnings = [w for w in whole.warnings if w.kind != "unjudged_queries"]
    assert_same(whole, got)


def test_top_k_measures_on_rows_not_partitioned_by_query_are_combined_without_a_shuffle(
        dask_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every measure reads the top 10 at most: partitions keep their candidate rows and the
    client scores them (rankwise.scale.topk); values and warnings as in memory."""
    import dask.dataframe as dd

    from rankwise.data.load import load_run

    run = load_run(GOLDEN / "BM25.dl19.trec")
    frame = pd.DataFrame({"qid": run.query.to_pylist(), "docno": run.doc.to_pylist(), "score": run.score})
    frame = frame.sample(frac=1.0, random_state=5, ignore_index=True)
    metrics = ["ndcg@10", "P@10", "rr@10", "recall@10", '{"dcg": {"k": 5}}']
    monkeypatch.setattr(dd.DataFrame, "shuffle", _no_shuffle)
    for conventions in ({}, {"ties": "input", "missing": "zero", "rel_level": 2}):
        whole = evaluate(GOLDEN / "qrels.dl19-passage.txt", frame, metrics, **conventions)
        got = evaluate(GOLDEN / "qrels.dl19-passage.txt", dd.from_pandas(frame, npartitions=5, sort=False), metrics,
                       engine="dask", client=dask_client, **conventions)
        assert_same(whole, got)
    with pytest.raises(AssertionError, match="shuffled"):  # map reads whole rankings: a shuffle
        evaluate(GOLDEN / "qrels.dl19-passage.txt", dd.from_pandas(frame, npartitions=5, sort=False), ["map"],
                 engine="dask", client=dask_client)


@pytest.mark.parametrize("engine", ["dask", "spark"])
def test_a_failing_partition_is_one_clear_error(engine: str, request: pytest.FixtureRequest) -> None:
    client = _client(engine, request)
    qrels, rows = _generated(3)
    frame = _frame(rows)  # duplicates, refused by default as trec_eval refuses them
    if engine == "dask":
        import dask.dataframe as dd

        frame = dd.from_pandas(frame, npartitions=3, sort=False)
    else:
        frame = client.createDataFrame(frame)
    with pytest.raises((InputError, RankwiseError), match="is listed twice for query"):
        evaluate(qrels, frame, ["map"], engine=engine, client=client)


@pytest.mark.parametrize("engine", ["dask", "spark"])
def test_a_frame_holding_several_runs_is_split_by_its_run_column(engine: str, request: pytest.FixtureRequest) -> None:
    """One long frame with a ``system`` column: each run scored on its own, named by it, in order
    of first appearance, as the in-memory path splits a pandas frame."""
    client = _client(engine, request)
    from rankwise.data.load import load_run

    frames = []
    for run in ("SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec", "BM25.dl19.trec"):
        r = load_run(GOLDEN / run)
        frames.append(pd.DataFrame({"qid": r.query.to_pylist(), "docno": r.doc.to_pylist(), "score": r.score,
                                    "system": run.split(".")[0]}))
    long = pd.concat(frames, ignore_index=True)
    whole = evaluate(GOLDEN / "qrels.dl19-passage.txt", long, ["ndcg@10", "map", "runid"])
    assert list(whole.summary.index) == ["SPLADE_P_P_ENSEMBLE_DISTIL", "BM25"]
    if engine == "dask":
        import dask.dataframe as dd

        distributed_frame = dd.from_pandas(long, npartitions=3, sort=False)
    else:
        distributed_frame = client.createDataFrame(long)
    got = evaluate(GOLDEN / "qrels.dl19-passage.txt", distributed_frame, ["ndcg@10", "map", "runid"], engine=engine,
                   client=client)
    assert_same(whole, got)
    assert round(got.summary.loc["BM25", "ndcg@10"], 4) == 0.5058


def test_spark_per_query_frame(spark) -> None:
    from rankwise.scale.spark_engine import per_query_frame

    frame = per_query_frame(GOLDEN / "qrels.dl19-passage.txt", str(GOLDEN / "BM25.dl19.trec"),
                            ["ndcg@10", "map", "runid"], spark=spark).toPandas().set_index("query").sort_index()
    assert set(frame["run"]) == set(frame["runid"]) == {"rank"}  # the file's tag, as trec_eval names it
    whole = evaluate(GOLDEN / "qrels.dl19-passage.txt", GOLDEN / "BM25.dl19.trec", ["ndcg@10", "map"]).per_query
    whole = whole.droplevel("run").sort_index()
    assert frame["ndcg_cut_10"].tolist() == whole["ndcg@10"].tolist()
    assert frame["map"].tolist() == whole["map"].tolist()
    assert round(frame["ndcg_cut_10"].mean(), 4) == 0.5058  # the published BM25 DL19 figure


@pytest.mark.cluster("spark")   # its own JVM, in a subprocess: not beside the tests' session
def test_a_spark_session_rankwise_starts_keeps_the_jvm_logs_out_of_the_terminal(tmp_path) -> None:
    # log4j's start-up lines ("Setting default log level", NativeCodeLoader warnings) went to
    # the user's terminal; RANKWISE_SPARK_LOGS=1 brings Spark's own logging back
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17+")
    import subprocess
    import sys

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q 0 d1 1\nq 0 d2 0\n")
    run.write_text("q Q0 d1 1 2.0 r\nq Q0 d2 2 1.0 r\n")
    code = (f"import rankwise; r = rankwise.evaluate({str(qrels)!r}, {str(run)!r}, ['map'], engine='spark'); "
            "print(r.summary['map'].iloc[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={k: v for k, v in os.environ.items() if k != "RANKWISE_SPARK_LOGS"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "1.0"
    # the JVM's own notice of the incubator module Spark loads comes before any configuration
    lines = [line for line in out.stderr.splitlines() if not line.startswith("WARNING: Using incubator modules")]
    noisy = [line for line in lines if "WARN" in line or "log level" in line or "log4j" in line or "Stage" in line
             or "FutureWarning" in line]
    assert noisy == [], noisy[:5]


@pytest.mark.parametrize("engine", ["memory", "chunks", "dask", "spark"])
def test_a_corrupt_parquet_piece_and_a_nan_score_are_named(engine: str, tmp_path: Path,
                                                           request: pytest.FixtureRequest) -> None:
    """A file of a Parquet dataset that is not Parquet is named (footers are read before any
    engine starts); a NaN score names its file and row in memory and in chunks, and the
    partition, never a wrong line, on a cluster."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    options = {} if engine in ("memory", "chunks") else {"client": _client(engine, request)}
    qrels, rows = _generated(8)
    frame = _frame(rows)
    queries = sorted(set(frame["qid"]))
    for case in ("corrupt", "nan"):
        folder = tmp_path / case
        folder.mkdir()
        for i in range(3):
            part = frame[frame["qid"].isin(queries[i::3])].copy()
            if case == "nan" and i == 1:
                part.iloc[4, 2] = np.nan
            pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{i}.parquet")
        if case == "corrupt":
            (folder / "part-2.parquet").write_bytes(b"PAR1 not a parquet file" * 10)
            message = r"part-2.parquet: cannot read it as Parquet"
        else:
            message = (r"part-1.parquet \(row 5\): field 'score': expected a number" if engine in ("memory", "chunks")
                       else r"field 'score': expected a number, got (null|NaN) in one of its partitions")
        with pytest.raises((InputError, RankwiseError), match=message):   # Spark: "a partition failed: ..."
            evaluate(qrels, folder, ["map"], duplicates="first", engine=engine, **options)


def _without_unjudged_example(*results) -> None:
    """The unjudged-queries warning's example is the first such query a partition met."""
    for result in results:
        result.warnings = [w for w in result.warnings if w.kind != "unjudged_queries"]


def _fails_once(marker: str, kill: bool):
    """A partition function that, the first time any worker runs it, kills its worker process
    (``kill``) or raises; every later run passes its rows through. ``marker`` (a file) records
    the first run across processes."""
    def once(part):
        if not os.path.exists(marker):
            Path(marker).touch()
            if kill:
                os._exit(1)
            raise RuntimeError("a transient failure")
        return part
    return once


def test_a_dask_worker_killed_mid_evaluation_changes_no_number(dask_client, tmp_path: Path) -> None:
    """The worker holding one partition dies while computing it (its process exits); the
    scheduler runs the partition again on the other worker and the values are the in-memory ones."""
    import dask
    import dask.dataframe as dd
    import numpy as np

    qrels, rows = _generated(6)
    frame = _frame(rows)
    whole = evaluate(qrels, frame, METRICS, duplicates="first")
    marker = tmp_path / "killed"
    kill = _fails_once(str(marker), kill=True)
    bounds = np.linspace(0, len(frame), 4).astype(int)
    parts = [frame.iloc[a:b].reset_index(drop=True) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    pieces = [dask.delayed(kill)(part) if i == 1 else dask.delayed(part) for i, part in enumerate(parts)]
    got = evaluate(qrels, dd.from_delayed(pieces, meta=frame.iloc[:0]), METRICS, duplicates="first",
                   engine="dask", client=dask_client)
    assert marker.exists()  # the worker was killed
    _without_unjudged_example(whole, got)
    assert_same(whole, got)


def test_a_spark_task_failing_once_is_retried_with_the_same_numbers(spark, tmp_path: Path) -> None:
    """One partition's task raises the first time it runs; Spark runs it again (the session
    allows two attempts) and the values are the in-memory ones."""
    qrels, rows = _generated(6)
    frame = _frame(rows)
    whole = evaluate(qrels, frame, METRICS, duplicates="first")
    marker = tmp_path / "failed"
    fail = _fails_once(str(marker), kill=False)
    flaky = spark.createDataFrame(frame).mapInPandas(lambda parts: (fail(part) for part in parts),
                                                     schema="qid string, docno string, score double")
    got = evaluate(qrels, flaky, METRICS, duplicates="first", engine="spark", client=spark)
    assert marker.exists()  # a task failed
    _without_unjudged_example(whole, got)
    assert_same(whole, got)


def test_an_event_log_on_spark_through_ibis_equals_the_in_memory_analysis(spark) -> None:
    """A/B analysis of an event log Spark holds: the per-unit sums run in Spark (through Ibis's
    PySpark backend) and the results equal the in-memory analysis."""
    ibis = pytest.importorskip("ibis")
    from rankwise import experiments

    events = Path(__file__).parent / "data" / "online" / "events.csv"
    metrics = {"ctr": "count(click) / count(impression)", "buyers": "any(purchase)",
               "revenue": "sum(value where event = purchase)"}
    table = ibis.pyspark.connect(spark).read_csv(str(events), header=True, inferSchema=True)
    pd.testing.assert_frame_equal(experiments.analyze(table, unit="user_id", metrics=metrics).table,
                                  experiments.analyze(events, unit="user_id", metrics=metrics).table)
    # the daily looks: one row per unit x day summed by Spark
    looks = {"unit": "user_id", "metrics": metrics, "timestamp": "timestamp", "sequential": "always-valid"}
    spark_looks, memory_looks = experiments.analyze(table, **looks).looks, experiments.analyze(events, **looks).looks
    assert len(spark_looks) == len(memory_looks) > 0
    pd.testing.assert_frame_equal(spark_looks, memory_looks, check_exact=False, rtol=1e-12)
    # an exposure table in Spark too: first exposures, windows and the events left out
    connection = ibis.pyspark.connect(spark)
    exposures = Path(__file__).parent / "data" / "online" / "exposures.csv"
    windowed = {"unit": "user_id", "metrics": metrics, "timestamp": "timestamp", "window": "7d"}
    in_spark = experiments.analyze(table, exposures=connection.read_csv(str(exposures), header=True, inferSchema=True),
                              **windowed)
    in_memory = experiments.analyze(events, exposures=exposures, **windowed)
    pd.testing.assert_frame_equal(in_spark.table, in_memory.table, check_exact=False, rtol=1e-12)
    assert in_spark.warnings == in_memory.warnings


def test_lists_reduced_on_spark_equal_one_update(spark) -> None:
    """Long-format recommendations in a Spark DataFrame: each user's list is rebuilt in its
    partition and the states merged on the driver equal one update with every list."""
    from rankwise.scale.spark_states import spark_reduce_lists
    from rankwise.streaming import ItemExposure

    rng = np.random.default_rng(12)
    lists = np.stack([rng.choice(80, size=6, replace=False) for _ in range(200)])
    lists[::7, 4:] = -1   # some shorter lists
    users, positions = np.nonzero(lists >= 0)
    rows = pd.DataFrame({"user": users, "item": lists[users, positions], "rank": positions + 1}).sample(
        frac=1.0, random_state=3)
    popularity = rng.integers(0, 50, 80).astype(float)
    whole = ItemExposure(80, k=5, popularity=popularity).update(predictions=lists)
    got = spark_reduce_lists(ItemExposure(80, k=5, popularity=popularity), spark.createDataFrame(rows), rank="rank")
    assert got.state["exposure"].tolist() == whole.state["exposure"].tolist()
    assert got.compute()["arp"] == pytest.approx(whole.compute()["arp"], rel=1e-12)
