"""The Elasticsearch / OpenSearch backends through their official clients, over real HTTP.

Without a server, a local HTTP server replays response bodies in the documented shapes
(``tests/data/rank_eval``) and records what the clients sent. With ``RANKWISE_ES_URL`` set to a
live Elasticsearch, the live tests index a few documents and cross-check ``_rank_eval``.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import DATA

from rankwise.errors import RankwiseError
from rankwise.rankeval.evaluation import rank_eval
from rankwise.rankeval.spec import parse_spec

REPLAY = DATA / "rank_eval"

SPEC = {
    "requests": [
        {"id": "q1", "request": {"query": {"match": {"title": "heat slab"}}},
         "ratings": [{"_index": "docs", "_id": "d1", "rating": 2}, {"_index": "docs", "_id": "d2", "rating": 0}]},
        {"id": "q2", "request": {"query": {"match": {"nope": "x"}}},
         "ratings": [{"_index": "docs", "_id": "d1", "rating": 1}]},
    ],
    "metric": {"precision": {"k": 2}},
}


class Replay(BaseHTTPRequestHandler):
    """Answers like a server: GET / (info), POST .../_msearch, POST .../_rank_eval."""

    seen: list[tuple[str, str, str]] = []

    def _reply(self, name: str) -> None:
        body = (REPLAY / name).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        Replay.seen.append(("GET", self.path, ""))
        self._reply("info.json")

    do_HEAD = do_GET  # noqa: N815

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length).decode("utf-8")
        Replay.seen.append(("POST", self.path, payload))
        self._reply("msearch.json" if "_msearch" in self.path else "rank_eval.json")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> str:
    Replay.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.mark.parametrize("flavor", ["elasticsearch", "opensearch"])
def test_client_sends_msearch_and_reads_hits_and_errors(server: str, flavor: str) -> None:
    pytest.importorskip("elasticsearch" if flavor == "elasticsearch" else "opensearchpy")
    from rankwise.rankeval.elastic import ElasticsearchBackend

    backend = ElasticsearchBackend(server, "docs", flavor=flavor)
    assert backend.version == "9.1.0"
    result = rank_eval(parse_spec(SPEC), backend)
    # the client sent one NDJSON _msearch: a header naming the index, then the body with size = k
    method, path, payload = next(s for s in Replay.seen if "_msearch" in s[1])
    lines = [json.loads(line) for line in payload.strip().splitlines()]
    assert lines[0] == {"index": "docs"} and lines[1]["size"] == 2
    assert lines[1]["query"] == {"match": {"title": "heat slab"}} and len(lines) == 4
    out = result.to_dict()
    # q1: hits d1 (rating 2), d9 (unrated) in the top 2 -> precision 1/2
    assert out["metric_score"] == 0.5
    q1 = out["details"]["q1"]
    assert q1["metric_details"] == {"precision": {"relevant_docs_retrieved": 1, "docs_retrieved": 2}}
    assert q1["unrated_docs"] == [{"_index": "docs", "_id": "d9"}]
    assert q1["hits"][0] == {"hit": {"_index": "docs", "_id": "d1", "_score": 7.0556192}, "rating": 2}
    # q2's search failed on the server: a failure entry, not a crash, and left out of the score
    assert out["failures"]["q2"]["error"]["type"] == "backend_error"
    assert "search_phase_execution_exception" in out["failures"]["q2"]["error"]["reason"]


def test_cross_check_against_the_servers_rank_eval(server: str) -> None:
    pytest.importorskip("elasticsearch")
    from rankwise.rankeval.elastic import ElasticsearchBackend, cross_check

    backend = ElasticsearchBackend(server, "docs")
    result = rank_eval(parse_spec(SPEC), backend)
    check = cross_check(result, backend)["default"]
    assert check["server_metric_score"] == 0.5 and check["rankwise_metric_score"] == 0.5
    assert check["max_abs_difference"] == 0.0 and check["requests_differing"] == []
    sent = json.loads(next(s for s in Replay.seen if "_rank_eval" in s[1])[2])
    assert sent["metric"] == {"precision": {"k": 2}}
    assert [r["id"] for r in sent["requests"]] == ["q1"]  # the failed request is not sent


def test_unreachable_server_is_one_clear_error() -> None:
    pytest.importorskip("elasticsearch")
    from rankwise.rankeval.elastic import ElasticsearchBackend

    with pytest.raises(RankwiseError, match=r"cannot reach elasticsearch at http://127.0.0.1:9"):
        ElasticsearchBackend("http://127.0.0.1:9", "docs", timeout=2)


LIVE = os.environ.get("RANKWISE_ES_URL")


@pytest.mark.skipif(not LIVE, reason="set RANKWISE_ES_URL to a live Elasticsearch to run the live tests")
def test_live_elasticsearch_agrees_with_its_own_rank_eval(tmp_path: Path) -> None:
    from elasticsearch import Elasticsearch

    from rankwise.rankeval.elastic import ElasticsearchBackend, cross_check

    client = Elasticsearch(LIVE)
    index = "rankwise-live-test"
    client.options(ignore_status=404).indices.delete(index=index)
    docs = {"d1": "heat conduction in composite slabs", "d2": "slab heat flow", "d3": "wing flutter at speed"}
    for doc_id, title in docs.items():
        client.index(index=index, id=doc_id, document={"title": title})
    client.indices.refresh(index=index)
    spec = parse_spec({"requests": [{"id": "q1", "request": {"query": {"match": {"title": "heat slab"}}},
                                     "ratings": [{"_index": index, "_id": "d1", "rating": 2},
                                                 {"_index": index, "_id": "d2", "rating": 1}]}],
                       "metric": {"dcg": {"k": 3, "normalize": True}}})
    backend = ElasticsearchBackend(LIVE, index)
    check = cross_check(rank_eval(spec, backend), backend)["default"]
    assert check["max_abs_difference"] < 1e-9
