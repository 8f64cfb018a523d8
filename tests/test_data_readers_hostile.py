"""One generated test for every reader (``rankwise.data.readers.READERS``): each gets the whole
hostile family, made from a valid seed file of its own kind:

missing, empty, header-only, binary, truncated gzip, bomb gzip, a line of 10^7 characters, a
byte-order mark, the wrong delimiter, a repeated key, deep nesting, NaN and infinities, empty ids,
a directory where a file is expected.

Missing, empty, binary, truncated gzip, bomb gzip, the endless line and a directory must be refused with a
rankwise error naming the file; every other member either reads (the checks of
tests/test_errors_fuzz.py hold: no NaN where the format has numbers, no row lost silently) or
is refused with a rankwise error; nothing else may escape. The source is scanned for public
``read_*``, ``load_*`` and ``open_*`` functions: a new reader fails here until it is listed."""

from __future__ import annotations

import ast
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_errors_fuzz import READERS as FUZZ_READERS
from test_errors_fuzz import _saved_model

from rankwise.data.readers import HELPERS, READERS
from rankwise.errors import RankwiseError

SRC = Path(__file__).resolve().parent.parent / "src" / "rankwise"
RUN = b"q1 Q0 d1 1 3.5 tagA\nq1 Q0 d2 2 2 tagA\nq2 Q0 d1 1 1 tagA\n"
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
CSV_RUN = b"query,doc,score\nq1,d1,3.5\nq1,d2,2\nq2,d1,1\n"
CSV_QRELS = b"query,doc,label\nq1,d1,1\nq1,d2,0\nq2,d1,2\n"
JSON_RUN = json.dumps({"q1": {"d1": 3.5, "d2": 2.0}, "q2": {"d1": 1.0}}).encode()
JSON_QRELS = json.dumps({"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}).encode()


def _call(target: str, *args: Any, **kwargs: Any) -> Any:
    import importlib

    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


def _fuzz(name: str) -> tuple[str, bytes, Callable[[Path], Any]]:
    return FUZZ_READERS[name]


def _stored_log(path: Path) -> Any:
    from rankwise.clicks.store import open_log

    return open_log(path).load()


# reader name -> (suffix, seed bytes, the call); a directory reader's seed is made by its call
SEEDS: dict[str, tuple[str, bytes, Callable[[Path], Any]]] = {
    "TREC run": (".txt", RUN, lambda p: _call("rankwise.data.load:load_run", p)),
    "TREC qrels": (".txt", QRELS, lambda p: _call("rankwise.data.load:load_qrels", p)),
    "TREC run (text)": (".txt", RUN, lambda p: _call("rankwise.data.trec_io:read_trec_run", p)),
    "TREC qrels (text)": (".txt", QRELS, lambda p: _call("rankwise.data.trec_io:read_trec_qrels", p)),
    "delimited run": (".csv", CSV_RUN, lambda p: _call("rankwise.data.delimited:read_delimited_run", p)),
    "delimited qrels": (".csv", CSV_QRELS, lambda p: _call("rankwise.data.delimited:read_delimited_qrels", p)),
    "tabular run": (".json", JSON_RUN, lambda p: _call("rankwise.data.tabular_io:read_tabular_run", p)),
    "tabular qrels": (".json", JSON_QRELS, lambda p: _call("rankwise.data.tabular_io:read_tabular_qrels", p)),
    "continuous qrels": _fuzz("continuous qrels"),
    "prefs": (".txt", b"1 x A d1 1\n1 x A d2 0\n2 x B d3 2\n2 x B d1 1\n",
              lambda p: _call("rankwise.data.prefs:read_prefs", p)),
    "qrels prefs": (".txt", QRELS, lambda p: _call("rankwise.data.prefs:read_qrels_prefs", p)),
    "qrels jg": (".txt", b"q1 g1 d1 1\nq1 g1 d2 0\nq2 g2 d1 2\n",
                 lambda p: _call("rankwise.data.prefs:read_qrels_jg", p)),
    "subtopics": (".txt", b"q1 1 d1 1\nq1 2 d2 1\nq2 1 d1 0\n",
                  lambda p: _call("rankwise.data.prefs:read_subtopics", p)),
    "preferences (any kind)": (".txt", b"1 x A d1 1\n1 x A d2 0\n",
                               lambda p: _call("rankwise.data.prefs:load_prefs", p)),
    "ndeval qrels": (".txt", b"1 1 d1 1\n1 2 d2 1\n2 1 d1 0\n",
                     lambda p: _call("rankwise.data.ndeval_files:read_ndeval_qrels", p)),
    "ndeval run": (".txt", b"1 Q0 d1 1 3.5 r\n1 Q0 d2 2 2.0 r\n2 Q0 d1 1 1.0 r\n",
                   lambda p: _call("rankwise.data.ndeval_files:read_ndeval_run", p)),
    "zscores": (".txt", b"301 num_ret 967.0000 169.1719\n301 map 0.2 0.1\n",
                lambda p: _call("rankwise.report.zscores:read_zscores", p)),
    "event table": (".csv", b"user,arm,clicks\n1,a,2\n2,b,0\n", lambda p: _call("rankwise.data.tables:read_table", p,
                                                                               None)),
    "document": (".json", json.dumps({"a": {"b": [1, 2]}, "c": "x"}).encode(),
                 lambda p: _call("rankwise.data.documents:read_document", p)),
    "click log": _fuzz("click log (long rows)"),
    "click log (Yandex)": _fuzz("click log (Yandex)"),
    "stored click log": ("", b"", _stored_log),
    "saved click model": (".json", b"", lambda p: _call("rankwise.clicks.persist:load_model", p)),
    "click-model JSON": (".json", b"", lambda p: _call("rankwise.clicks.persist:read_json", p)),
    "editorial labels": _fuzz("labels"),
    "bandit log": _fuzz("bandit log"),
    "metric definitions": _fuzz("metric definitions"),
    "interleaving credits": _fuzz("interleaving credits"),
    "per-variant statistics": _fuzz("statistics table"),
    "catalogue": (".txt", b"item_id\ni1\ni2\ni3\n", lambda p: _call("rankwise.recsys.inputs:read_catalogue", p)),
    "id lines": (".txt", b"unit\nu1\nu2\nu3\n", lambda p: _call("rankwise.data.id_lines:read_id_lines", p, ["unit"])),
    "corpus": (".jsonl", b'{"id": "d1", "title": "a b"}\n{"id": "d2", "title": "c"}\n',
               lambda p: list(_call("rankwise.rankeval.corpus:read_documents", p, "id", ["title"]))),
    "ratings": _fuzz("rank-eval ratings"),
    "index metadata": (".json", json.dumps({"id_field": "id", "fields": ["title"], "analyzer": "default",
                                            "documents": 2, "empty_fields": {}, "corpus": "c.jsonl",
                                            "rankwise": "0.1.0"}).encode(),
                       lambda p: _call("rankwise.rankeval.tantivy_index:read_index_meta", p)),
    "rank-eval spec": _fuzz("rank-eval spec"),
}
CLUSTER = {"Dask frame": "read through Dask (tests/test_scale_cluster.py feeds it runs and qrels)",
           "Spark frame": "read through Spark (tests/test_scale_cluster.py feeds it runs and qrels)"}
"""Readers whose hostile files are the files the readers above refuse first (the cluster
engines read only what the in-memory readers checked)."""


def _seed(name: str) -> tuple[str, bytes, Callable[[Path], Any]]:
    suffix, seed, call = SEEDS[name]
    if name in ("saved click model", "click-model JSON"):
        seed = _saved_model()
    return suffix, seed, call


def test_every_reader_is_listed_and_walked() -> None:
    found = set()
    for path in SRC.rglob("*.py"):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith(("read_", "load_", "open_")):
                found.add(f"{module}:{node.name}")
    listed = {r.target for r in READERS} | set(HELPERS)
    assert found <= listed, f"readers not listed in rankwise.data.readers: {sorted(found - listed)}"
    assert not set(HELPERS) - found, "HELPERS names a function that is gone"
    assert {r.name for r in READERS} == set(SEEDS) | set(CLUSTER), "every reader needs a seed here"


FAMILY = ("missing", "empty", "header-only", "binary", "truncated gzip", "bomb gzip", "endless line",
          "byte-order mark", "wrong delimiter", "repeated key", "deep nesting", "nan and inf", "empty ids",
          "directory")
MUST_REFUSE = {"missing", "empty", "binary", "truncated gzip", "bomb gzip", "endless line", "directory"}


def _directory(target: Path) -> None:
    """A directory where a file is expected: it holds a file named like Parquet that is not
    (a directory is a Parquet dataset to the run and qrels readers) and a valid-looking line."""
    target.mkdir()
    (target / "part-0.parquet").write_bytes(b"not parquet")
    (target / "lines.txt").write_bytes(QRELS)


def _hostile(member: str, seed: bytes) -> bytes:
    lines = seed.splitlines(keepends=True)
    if member == "empty":
        return b""
    if member == "header-only":
        return lines[0] if lines else b""
    if member == "binary":
        return bytes(range(256)) * 8 + b"\x00\xff\xfe" * 100
    if member == "truncated gzip":
        whole = gzip.compress(seed * 50)
        return whole[:max(len(whole) // 2, 12)]
    if member == "bomb gzip":
        return gzip.compress(b"0" * (8 * 2**20))   # 8 MiB of one byte: past the ratio limit set below
    if member == "endless line":
        return b"a" * 10**7
    if member == "byte-order mark":
        return b"\xef\xbb\xbf" + seed
    if member == "wrong delimiter":
        return seed.replace(b",", b";").replace(b"\t", b"|").replace(b" ", b"|")
    if member == "repeated key":
        return seed.replace(b"{", b'{"metric": 1, "metric": 2, ', 1) if seed.lstrip().startswith(b"{") else \
            seed + (lines[-1] if lines else b"")
    if member == "deep nesting":
        return b"[" * 50_000 + b"]" * 50_000 if seed.lstrip().startswith((b"{", b"[")) else seed * 2
    if member == "nan and inf":
        return seed.replace(b"1", b"nan", 1).replace(b"2", b"inf", 1).replace(b"0", b"-inf", 1)
    if member == "empty ids":
        return b"\n".join(b"" if i == 1 else line.rstrip(b"\n") for i, line in enumerate(lines)) + b"\n" \
            if len(lines) > 1 else seed
    raise AssertionError(member)


@pytest.mark.parametrize("member", FAMILY)
@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_reader_meets_the_hostile_family(name: str, member: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RANKWISE_MAX_LINE_BYTES", str(2**20))
    monkeypatch.setenv("RANKWISE_MAX_GZIP_RATIO", "50")
    monkeypatch.setenv("RANKWISE_MAX_INPUT_BYTES", str(4 * 2**20))
    suffix, seed, call = _seed(name)
    if name == "stored click log":
        if member not in ("missing", "empty", "binary", "repeated key", "deep nesting", "directory"):
            pytest.skip("a stored log is a directory: its files are rankwise's own (checked in test_clicks.py)")
        target = tmp_path / "log"
        if member == "directory":   # a directory of other files, no stored log in it
            _directory(target)
        elif member != "missing":
            target.mkdir()
            (target / "log.json").write_bytes(_hostile(member, json.dumps({"format": "x"}).encode()))
        _assert_refused_or_read(call, target, must_refuse=True)
        return
    gz = member in ("truncated gzip", "bomb gzip")
    path = tmp_path / f"input{suffix}{'.gz' if gz else ''}"
    if member == "directory":
        _directory(path)
    elif member != "missing":
        path.write_bytes(_hostile(member, seed))
    _assert_refused_or_read(call, path, must_refuse=member in MUST_REFUSE)


def _assert_refused_or_read(call: Callable[[Path], Any], path: Path, must_refuse: bool) -> None:
    try:
        call(path)
    except RankwiseError as error:
        assert path.name in str(error) or str(path) in str(error), f"the error does not name the file: {error}"
        return
    assert not must_refuse, f"{path.name} was read; expected a rankwise error naming it"
