"""``engine="spark"``: runs as Spark DataFrames, scored with ``mapInArrow`` after a repartition by
query.

Each row carries its place in the input (``monotonically_increasing_id``) through the
repartition, so ties in input order and ``duplicates='first'`` see the input's order; each
partition's rows become one Arrow table, scored by the in-memory code with the encoded qrels
broadcast once. :func:`per_query_frame` gives the per-query values as a Spark DataFrame (for
pipelines that stay in Spark); ``rankwise.evaluate(..., engine="spark")`` brings them back to
the driver as a Result (so ``compare``, intervals and reports work unchanged).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankwise.errors import RankwiseError
from rankwise.evaluation import EvaluationPlan, Result, _as_runs
from rankwise.metrics.compute import RunScores
from rankwise.scale.frames import ORDER_COLUMN, run_columns, score_frame
from rankwise.scale.gather import gather_scores, named_result

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankwise.engine.conventions import ConventionKeywords


def _spark() -> Any:
    import warnings

    # PySpark warns on every import that it does not support pandas 3 yet: rankwise hands it
    # Arrow tables and plain columns, so the warning only adds noise to the user's terminal
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        import pyspark.sql
    except ImportError:
        raise RankwiseError("engine='spark' needs PySpark and Java 17+: pip install 'rankwise[spark]'") from None
    return pyspark.sql


def session(client: Any = None) -> tuple[Any, bool]:
    """The Spark session to use: the one given, the active one, or a new one on the master URL
    given (default ``local[*]``); the second value says whether to stop it afterwards."""
    sql = _spark()
    if client is not None and not isinstance(client, str):
        return client, False
    active = sql.SparkSession.getActiveSession()
    if active is not None and client is None:
        return active, False
    builder = sql.SparkSession.builder.master(client or "local[*]").appName("rankwise")
    builder = builder.config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "8")
    quiet = not os.environ.get("RANKWISE_SPARK_LOGS")
    if quiet:   # the JVM's start-up and warning lines and the stage bars stay out of the user's terminal
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOGS}")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    return builder.getOrCreate(), True


QUIET_LOGS = Path(__file__).with_name("log4j2-quiet.properties").as_uri()
"""The log4j2 configuration of the Spark sessions rankwise starts (errors only); set
``RANKWISE_SPARK_LOGS=1`` to see Spark's own logs."""


def read_frame(spark: Any, obj: Any) -> tuple[Any, str, str | None]:
    """A run as a Spark DataFrame, its source and the name its path gives."""
    from pathlib import Path

    sql = _spark()
    if isinstance(obj, sql.DataFrame):
        return obj, "<Spark DataFrame>", None
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "to_numpy"):  # pandas
        return spark.createDataFrame(obj), "<DataFrame>", None
    if not isinstance(obj, (str, os.PathLike)):
        raise RankwiseError(f"engine='spark' reads Spark or pandas DataFrames and paths, not a {type(obj).__name__}")
    path = os.fspath(obj)
    name = Path(path.rstrip("/\\")).name.split(".")[0]
    if os.path.isdir(path) or path.endswith(".parquet"):
        from rankwise.data.pieces import parquet_row_counts

        parquet_row_counts(path)   # every footer read here: a corrupt file is named before the executors start
        return spark.read.parquet(path), path, name
    from rankwise.data.trec_io import fast_delimiter

    if os.path.exists(path):   # a truncated or corrupt .gz is named here, not inside a worker
        from rankwise.data.limits import check_whole_gzip

        check_whole_gzip(path)
    delimiter = fast_delimiter(path) if os.path.exists(path) else " "
    if delimiter is None:
        raise RankwiseError(f"{path}: engine='spark' reads regular TREC files (one space or tab between fields); "
                            "this one is not: use engine='chunks', or write it as Parquet")
    schema = "query STRING, q0 STRING, doc STRING, rank STRING, score DOUBLE, tag STRING"
    return spark.read.csv(path, sep=delimiter, schema=schema, mode="FAILFAST"), path, None


def split_spark_runs(frame: Any, name: str | None, source: str) -> list[tuple[Any, str | None]]:
    """A Spark DataFrame holding several runs (a ``run`` / ``tag`` / ``system`` ... column with
    more than one value) as one (frame, name) per run, in order of first appearance, as
    ``rankwise.data.load.split_runs`` splits a pandas one; a frame named by the caller, or with
    one run, is one run (named by its tag, if any).
    """
    from pyspark.sql import functions as F

    tag = run_columns(frame.columns, source)[3]
    if name is not None or tag is None:
        return [(frame, name)]
    firsts = (frame.select(tag).withColumn("__first", F.monotonically_increasing_id()).groupBy(tag)
              .agg(F.min("__first").alias("__first")).orderBy("__first").collect())
    if len(firsts) <= 1:
        return [(frame, str(firsts[0][0]) if firsts else None)]
    return [(frame.filter(F.col(tag).eqNullSafe(row[0])), str(row[0])) for row in firsts]


def runs_of(obj: Any, frame: Any, given: str | None, default: str | None, source: str) -> list[tuple[Any, str]]:
    """The runs of one input with their names: a Spark DataFrame is split by its run column
    (``split_spark_runs``); a path is one run. A run is named by the caller, else by its path,
    else by its first tag, else ``run``."""
    sql = _spark()
    split = split_spark_runs(frame, given, source) if isinstance(obj, sql.DataFrame) else [(frame, given or default)]
    out = []
    for part, name in split:
        tag = run_columns(part.columns, source)[3]
        if name is None and tag is not None:
            first = part.select(tag).first()
            name = str(first[0]) if first is not None else None
        out.append((part, name or "run"))
    return out


def _partitioned(frame: Any, chunk_rows: int | None, source: str) -> tuple[Any, tuple[str, str, str], str | None]:
    """The run's rows, each with its input place, repartitioned by query."""
    from pyspark.sql import functions as F

    query, doc, score, tag = run_columns(frame.columns, source)
    rows = frame.select(query, doc, score).withColumn(ORDER_COLUMN, F.monotonically_increasing_id())
    parts = rows.rdd.getNumPartitions() if chunk_rows is None else max(1, -(-rows.count() // chunk_rows))
    return rows.repartition(max(parts, 1), query), (query, doc, score), tag


def _scorer(shared: Any, columns: tuple[str, str, str], source: str, pickled: bool) -> Any:
    """The function ``mapInArrow`` runs on each partition."""

    def score(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        plan = _plan_of(shared)
        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0 and pickled:
            return
        scores = score_frame(plan, table, columns, source)
        if pickled:
            yield pa.record_batch([pa.array([pickle.dumps(scores)], pa.binary())], names=["scores"])
        else:
            yield pa.RecordBatch.from_pydict(_per_query_columns(scores))

    return score


_PLANS: dict[str, EvaluationPlan] = {}
"""Plans unpickled in this worker, by broadcast token (a worker reuses its copy)."""


def _broadcast(spark: Any, plan: EvaluationPlan) -> Any:
    """The plan sent once to every executor (cloudpickle: metric families hold functions)."""
    import uuid

    from pyspark import cloudpickle

    return spark.sparkContext.broadcast((uuid.uuid4().hex, cloudpickle.dumps(plan)))


def _plan_of(shared: Any) -> EvaluationPlan:
    token, data = shared.value
    plan = _PLANS.get(token)
    if plan is None:
        plan = _PLANS[token] = pickle.loads(data)
    return plan


def _per_query_columns(scores: RunScores) -> dict[str, Any]:
    out: dict[str, Any] = {"query": pa.array(scores.query_ids.astype(str), pa.string())}
    for column, values in scores.values.items():
        out[column] = values
    return out


def _spark_type(kind: str) -> str:
    return {"int": "BIGINT", "string": "STRING"}.get(kind, "DOUBLE")


def per_query_frame(qrels: Any, run: Any, metrics: Any, profile: str | None = None, spark: Any = None,
                    chunk_rows: int | None = None, **conventions: Unpack[ConventionKeywords]) -> Any:
    """Per-query values of ``run`` (a Spark DataFrame or a path) as a Spark DataFrame with
    ``run`` and ``query`` columns and one column per metric (trec_eval column names, e.g.
    ``ndcg_cut_10``). A frame holding several runs (a ``run`` / ``tag`` / ``system`` column)
    gives the rows of each. Queries a run does not return are absent (``missing='skip'``).

    >>> per_query_frame("qrels.txt", spark.read.parquet("run/"), ["ndcg@10", "map"]).show()  # doctest: +SKIP
    """
    from functools import reduce

    from pyspark.sql import functions as F

    plan = EvaluationPlan.build(qrels, metrics, profile, conventions)
    spark_session, _ = session(spark)
    frame, source, default = read_frame(spark_session, run)
    shared = _broadcast(spark_session, plan)
    probe = plan.score_absent(np.empty(0, dtype=np.int64), "run")  # the columns and their kinds
    schema = ", ".join(["query STRING"] + [f"`{c}` {_spark_type(probe.kinds[c])}" for c in probe.values])
    runids = [c for spec in plan.specs if spec.family.value_kind == "runid" for c in spec.result_columns()]
    frames = []
    for part, name in runs_of(run, frame, None, default, source):
        rows, columns, _ = _partitioned(part, chunk_rows, source)
        values = rows.mapInArrow(_scorer(shared, columns, source, pickled=False), schema)
        for column in runids:  # the run's name, known here, not in the partitions
            values = values.withColumn(column, F.lit(name))
        frames.append(values.select(F.lit(name).alias("run"), *values.columns))
    return reduce(lambda a, b: a.unionByName(b), frames)


def evaluate_with_engine(plan: EvaluationPlan, runs: Any, chunk_rows: int | None = None, client: Any = None
                         ) -> Result:
    """Evaluate each run on Spark (``rankwise.evaluate(..., engine="spark", client=spark)``)."""
    sql = _spark()
    spark, owned = session(client)
    try:
        shared = _broadcast(spark, plan)
        scored: list[tuple[RunScores, str]] = []
        for obj, given in [(runs, None)] if isinstance(runs, sql.DataFrame) else _as_runs(runs):
            whole, source, default = read_frame(spark, obj)
            for frame, name in runs_of(obj, whole, given, default, source):
                scored.append((_score_run(shared, plan, frame, source, name, chunk_rows), source))
        return named_result(plan, scored)
    finally:
        if owned:
            spark.stop()


def _score_run(shared: Any, plan: EvaluationPlan, frame: Any, source: str, name: str,
               chunk_rows: int | None) -> RunScores:
    """One run's scores from its Spark DataFrame."""
    rows, columns, _ = _partitioned(frame, chunk_rows, source)
    try:
        table = rows.mapInArrow(_scorer(shared, columns, source, pickled=True), "scores BINARY").toArrow()
    except Exception as exc:  # the failing partition's error, raised on the driver
        raise RankwiseError(f"{source}: a partition failed on Spark: {_first_line(exc)}") from exc
    parts = [pickle.loads(b) for b in table.column("scores").to_pylist()]
    return gather_scores(plan, parts, name, source)


def _first_line(exc: Exception) -> str:
    """The Python error a worker raised, from Spark's long report."""
    text = str(exc)
    for line in text.splitlines():
        if "rankwise.errors." in line or "Error:" in line:
            return line.strip()
    return text.splitlines()[0] if text else type(exc).__name__

