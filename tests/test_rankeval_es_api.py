"""Elasticsearch rank_eval API items: ratings matched on _index and _id, search_type passed to the
search, ratings given as a query (Elasticsearch issues 30839 and 40865)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rankeval_elastic import SPEC, Replay, server  # noqa: F401 (the replaying server fixture)

from rankwise.errors import InputError, RankwiseError, SpecError
from rankwise.rankeval.backends import Hit
from rankwise.rankeval.evaluation import rank_eval
from rankwise.rankeval.judging import read_ratings
from rankwise.rankeval.spec import parse_spec


class TwoIndices:
    """Hits from two indices that reuse document ids (an alias over two indices)."""

    name = "alias"

    def __init__(self, hits: dict[str, list[tuple[str, str]]]) -> None:
        self.hits = hits
        self.bodies: list[dict] = []

    def search(self, request: dict, size: int) -> list[Hit]:
        self.bodies.append(request)
        found = self.hits[json.dumps(request, sort_keys=True)]
        return [Hit(index, doc, float(len(found) - i)) for i, (index, doc) in enumerate(found[:size])]


def _body(tag: str) -> dict:
    return {"query": {"term": {"tag": tag}}}


def test_ratings_match_on_index_and_id() -> None:
    spec = parse_spec({"requests": [{"id": "q", "request": _body("x"), "ratings": [
        {"_index": "new", "_id": "1", "rating": 1}, {"_index": "old", "_id": "1", "rating": 0}]}],
        "metric": {"precision": {"k": 2}}})
    backend = TwoIndices({json.dumps(_body("x"), sort_keys=True): [("old", "1"), ("new", "1")]})
    # Elasticsearch's rule: old/1 is rated 0, new/1 is rated 1 -> precision@2 = 1/2
    res = rank_eval(spec, backend, match_index=True)
    assert res.to_dict()["metric_score"] == 0.5
    hits = res.to_dict()["details"]["q"]["hits"]
    assert [(h["hit"]["_index"], h["rating"]) for h in hits] == [("old", 0), ("new", 1)]
    # matched on _id alone the same _id rated in two indices is ambiguous: a clear error
    with pytest.raises(RankwiseError, match="rated in two indices.*--match-index"):
        rank_eval(spec, backend)


def test_match_index_needs_the_index_of_every_rating(tmp_path: Path) -> None:
    spec = parse_spec({"requests": [{"id": "q", "request": _body("x"), "ratings": [{"_id": "1", "rating": 1}]}],
                       "metrics": ["P@2"]})
    with pytest.raises(RankwiseError, match="document '1' has no _index"):
        rank_eval(spec, TwoIndices({}), match_index=True)
    csv = tmp_path / "judged.csv"
    csv.write_text("request_id,_index,_id,rating\nq,new,1,2\nq,old,1,0\n")
    assert read_ratings(csv, match_index=True) == ({"q": {"new\x1f1": 2, "old\x1f1": 0}}, 0)
    no_index = tmp_path / "no_index.csv"
    no_index.write_text("request_id,_id,rating\nq,1,2\n")
    with pytest.raises(InputError, match=r"no_index.csv:1: missing column\(s\) _index"):
        read_ratings(no_index, match_index=True)


def test_rating_queries_rate_their_hits() -> None:
    spec = parse_spec({"requests": [{"id": "q", "request": _body("search"), "ratings": [
        {"_index": "i", "_id": "c", "rating": 0}], "rating_queries": [
        {"request": _body("good"), "rating": 2}, {"request": _body("ok"), "rating": 1, "size": 2}]}],
        "metric": {"dcg": {"k": 3}}})
    backend = TwoIndices({json.dumps(_body("search"), sort_keys=True): [("i", "a"), ("i", "b"), ("i", "c")],
                          json.dumps(_body("good"), sort_keys=True): [("i", "b")],
                          json.dumps(_body("ok"), sort_keys=True): [("i", "a"), ("i", "b"), ("i", "c")]})
    res = rank_eval(spec, backend)
    # a: 1 (ok), b: 2 (good wins over ok), c: 0 written in the spec (and beyond the ok query's size 2)
    assert res.ratings["q"] == {"c": 0, "a": 1, "b": 2}
    # DCG@3 with gain 2^r - 1: 1/log2(2) + 3/log2(3) + 0
    assert res.to_dict()["metric_score"] == pytest.approx(1 + 3 / 1.584962500721156)
    assert any("rating queries rated 2 document(s) of 1 request(s)" in w for w in res.warnings)
    assert backend.bodies[:2] == [_body("good"), _body("ok")]


def test_bad_rating_queries_name_their_path() -> None:
    with pytest.raises(SpecError, match=r"requests\[0\].rating_queries\[0\].rating: expected an integer"):
        parse_spec({"requests": [{"id": "q", "request": {}, "rating_queries": [{"request": {}, "rating": "hi"}]}],
                    "metrics": ["P@2"]})
    with pytest.raises(SpecError, match=r"requests\[0\].rating_queries\[0\].size: expected a number of hits"):
        parse_spec({"requests": [{"id": "q", "request": {}, "rating_queries": [
            {"request": {}, "rating": 1, "size": 0}]}], "metrics": ["P@2"]})


def test_search_type_goes_to_every_search(server: str) -> None:  # noqa: F811
    pytest.importorskip("elasticsearch")
    from rankwise.rankeval.elastic import ElasticsearchBackend, cross_check

    backend = ElasticsearchBackend(server, "docs", search_type="dfs_query_then_fetch")
    result = rank_eval(parse_spec(SPEC), backend)
    _, _, payload = next(s for s in Replay.seen if "_msearch" in s[1])
    lines = [json.loads(line) for line in payload.strip().splitlines()]
    assert lines[0] == {"index": "docs", "search_type": "dfs_query_then_fetch"} and lines[2] == lines[0]
    cross_check(result, backend)
    assert "search_type=dfs_query_then_fetch" in next(s for s in Replay.seen if "_rank_eval" in s[1])[1]
    with pytest.raises(RankwiseError, match="search_type 'dfs': expected one of query_then_fetch"):
        ElasticsearchBackend(server, "docs", search_type="dfs")
