"""Qrels and Run containers and their readers (TREC, Parquet, JSON/JSONL, pandas, dicts)."""

from rankwise.data.containers import Qrels, Run
from rankwise.data.load import load_qrels, load_run

__all__ = ["Qrels", "Run", "load_qrels", "load_run"]
