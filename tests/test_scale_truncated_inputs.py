"""A truncated ``.gz`` run is an error naming the file on every engine: in memory, in chunks,
on Dask and on Spark (checked before the workers read it, so no worker's ``EOFError`` escapes)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import rankwise
from rankwise.errors import InputError

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture()
def truncated(tmp_path: Path) -> Path:
    whole = gzip.compress((DATA / "results.test").read_bytes())
    path = tmp_path / "run.trec.gz"
    path.write_bytes(whole[: len(whole) // 2])
    return path


@pytest.mark.parametrize("engine", ["memory", "chunks"])
def test_in_process_engines(engine: str, truncated: Path) -> None:
    with pytest.raises(InputError, match=r"run\.trec\.gz: the gzip data is truncated or corrupt"):
        rankwise.evaluate(str(DATA / "qrels.test"), str(truncated), ["map"], engine=engine)


def test_cluster_engines_refuse_it_before_their_workers_read(truncated: Path) -> None:
    pytest.importorskip("dask", reason="the Dask engine needs dask (test extra)")
    from rankwise.scale.dask_engine import read_frame as dask_frame
    from rankwise.scale.spark_engine import read_frame as spark_frame

    with pytest.raises(InputError, match=r"run\.trec\.gz: the gzip data is truncated or corrupt"):
        dask_frame(str(truncated), None)
    with pytest.raises(InputError, match=r"run\.trec\.gz: the gzip data is truncated or corrupt"):
        spark_frame(None, str(truncated))
