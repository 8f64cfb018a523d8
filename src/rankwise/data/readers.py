"""Every reader of rankwise, listed once: each function that reads a user's file (or directory)
is a ``Reader`` here, with what it reads. ``tests/test_data_readers_hostile.py`` feeds every one
of them the whole hostile family (missing, empty, header-only, binary, truncated and bomb gzip,
a line of 10^7 characters, a byte-order mark, the wrong delimiter, repeated keys, deep
nesting, NaN and infinities, empty ids) and accepts only a rankwise error naming the file or a
right value; and it scans the source for public ``read_*``, ``load_*`` and ``open_*``
functions, so a new reader fails the suite until it is listed here (or in ``HELPERS``, with
the reason it reads no user file of its own).

Readers name their targets as ``module:function`` text: this list imports nothing.

>>> len(READERS) > 30 and all(":" in r.target for r in READERS)
True
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reader:
    """One reader: its name, the function (``module:function``) and what it reads."""

    name: str
    target: str
    reads: str


READERS: tuple[Reader, ...] = (
    Reader("TREC run", "rankwise.data.load:load_run", "runs: TREC, CSV/TSV, JSON, JSONL, Parquet (.gz)"),
    Reader("TREC qrels", "rankwise.data.load:load_qrels", "qrels: TREC, CSV/TSV, JSON, JSONL, Parquet (.gz)"),
    Reader("TREC run (text)", "rankwise.data.trec_io:read_trec_run", "a TREC run file"),
    Reader("TREC qrels (text)", "rankwise.data.trec_io:read_trec_qrels", "a TREC qrels file"),
    Reader("delimited run", "rankwise.data.delimited:read_delimited_run", "a CSV/TSV run"),
    Reader("delimited qrels", "rankwise.data.delimited:read_delimited_qrels", "CSV/TSV qrels"),
    Reader("tabular run", "rankwise.data.tabular_io:read_tabular_run", "a JSON, JSONL or Parquet run"),
    Reader("tabular qrels", "rankwise.data.tabular_io:read_tabular_qrels", "JSON, JSONL or Parquet qrels"),
    Reader("continuous qrels", "rankwise.data.load:load_qrels", "qrels of continuous relevance"),
    Reader("prefs", "rankwise.data.prefs:read_prefs", "trec_eval's preference file"),
    Reader("qrels prefs", "rankwise.data.prefs:read_qrels_prefs", "qrels read as preferences"),
    Reader("qrels jg", "rankwise.data.prefs:read_qrels_jg", "qrels with judgment groups"),
    Reader("subtopics", "rankwise.data.prefs:read_subtopics", "subtopic qrels"),
    Reader("preferences (any kind)", "rankwise.data.prefs:load_prefs", "any preference file, by kind"),
    Reader("ndeval qrels", "rankwise.data.ndeval_files:read_ndeval_qrels", "ndeval's diversity qrels"),
    Reader("ndeval run", "rankwise.data.ndeval_files:read_ndeval_run", "ndeval's run"),
    Reader("zscores", "rankwise.report.zscores:read_zscores", "trec_eval's z-score file"),
    Reader("event table", "rankwise.data.tables:read_table", "an event, exposure or per-unit table"),
    Reader("document", "rankwise.data.documents:read_document", "a JSON or YAML document"),
    Reader("click log", "rankwise.clicks.read:read_log", "a click log: Yandex, long rows or stored"),
    Reader("click log (Yandex)", "rankwise.clicks.log:read_yandex", "a Yandex-format click log"),
    Reader("stored click log", "rankwise.clicks.store:open_log", "a stored click-log directory"),
    Reader("saved click model", "rankwise.clicks.persist:load_model", "a fitted click model (JSON)"),
    Reader("click-model JSON", "rankwise.clicks.persist:read_json", "a saved model or ULTRA parameter file"),
    Reader("editorial labels", "rankwise.clicks.labels:read_labels", "editorial relevance labels"),
    Reader("bandit log", "rankwise.counterfactual.bandit_log:read_bandit_log", "logged bandit rounds"),
    Reader("metric definitions", "rankwise.experiments.definitions:read_definitions", "a YAML file of A/B metrics"),
    Reader("interleaving credits", "rankwise.interleaving.interleave:read_credits", "per-query interleaving credits"),
    Reader("per-variant statistics", "rankwise.experiments.statistics_table:read_statistics",
           "sufficient statistics per variant"),
    Reader("catalogue", "rankwise.recsys.inputs:read_catalogue", "the item catalogue of coverage"),
    Reader("id lines", "rankwise.data.id_lines:read_id_lines", "one id per line: units to assign, items"),
    Reader("corpus", "rankwise.rankeval.corpus:read_documents", "documents to index: JSONL or CSV/TSV"),
    Reader("ratings", "rankwise.rankeval.judging:read_ratings", "relevance ratings (CSV)"),
    Reader("rank-eval spec", "rankwise.rankeval.spec:load_spec", "a rank-eval spec (JSON or YAML)"),
    Reader("index metadata", "rankwise.rankeval.tantivy_index:read_index_meta", "the metadata of a built index"),
    Reader("Dask frame", "rankwise.scale.dask_engine:read_frame", "a run or qrels file for Dask"),
    Reader("Spark frame", "rankwise.scale.spark_engine:read_frame", "a run or qrels file for Spark"),
)
"""Every reader of a user's file."""

HELPERS: dict[str, str] = {
    "rankwise.data.limits:read_bounded": "reads a stream a reader above opened (the size limits)",
    "rankwise.data.limits:open_source": "the stream door every line reader above opens files through",
    "rankwise.data.trec_io:read_text": "the whole-file door of the readers above (UTF-8 text)",
    "rankwise.data.trec_io:read_bytes": "the whole-file door of the readers above (bytes)",
    "rankwise.data.trec_fast:read_regular": "the fast path of the TREC readers above",
    "rankwise.data.gateway:read_statement": "a SQL text, not a file (the database gateway)",
}
"""Public functions named like readers that read no user file of their own, and why."""


__all__ = ["HELPERS", "READERS", "Reader"]
