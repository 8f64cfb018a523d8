"""Rank evaluation against a search engine: spec errors, templates, the DSL translation on a
real Tantivy index, Elasticsearch's response fields by hand, the judging loop, the CLI, and the
end-to-end Cranfield example."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest
from conftest import DATA
from typer.testing import CliRunner

from rankwise.cli.main import app
from rankwise.rankeval import judging
from rankwise.rankeval.backends import CallableBackend
from rankwise.rankeval.evaluation import rank_eval
from rankwise.rankeval.spec import SpecError, parse_spec
from rankwise.rankeval.tantivy_index import TantivyBackend, build_index

pytest.importorskip("tantivy")

DOCS = [
    {"id": "d1", "title": "heat conduction", "body": "heat conduction in composite slabs"},
    {"id": "d2", "title": "slab flow", "body": "heat flow in a slab"},
    {"id": "d3", "title": "wing flutter", "body": "flutter of a swept wing at high speed"},
    {"id": "d4", "title": "heat transfer", "body": "heat transfer to a wing"},
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TantivyBackend:
    root = tmp_path_factory.mktemp("idx")
    corpus = root / "docs.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    build_index(corpus, root / "index", "id", ["title", "body"])
    return TantivyBackend(root / "index", name="docs")


def test_a_damaged_index_is_named_not_a_traceback(tmp_path: Path) -> None:
    """A built index is a saved artefact: its metadata with a wrong shape (``fields`` a string
    was read letter by letter), an unknown or missing key (a KeyError), and its segment files
    damaged (tantivy's ValueError) are each an error naming the index."""
    import shutil

    from rankwise.errors import InputError, RankwiseError

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    built = build_index(corpus, tmp_path / "index", "id", ["title", "body"])
    cases = [({**built, "fields": "title"}, r"field 'fields': expected a non-empty list of field names, got 'title'"),
             ({**built, "version": 2}, r"unknown key\(s\) 'version'"),
             ({k: v for k, v in built.items() if k != "analyzer"}, r"missing key\(s\) 'analyzer'"),
             ({**built, "documents": -1}, r"field 'documents': expected a count of documents"),
             ({**built, "analyzer": "klingon"}, r"field 'analyzer': expected one of default, en_stem")]
    for number, (meta, message) in enumerate(cases):
        copy = tmp_path / f"copy{number}"
        shutil.copytree(tmp_path / "index", copy)
        (copy / "rankwise-index.json").write_text(json.dumps(meta))
        with pytest.raises(InputError, match="rankwise-index.json.*" + message):
            TantivyBackend(copy)
    damaged = tmp_path / "damaged"
    shutil.copytree(tmp_path / "index", damaged)
    for segment in damaged.glob("*.idx"):
        segment.unlink()
    with pytest.raises(RankwiseError, match="damaged: cannot open the index .*; rebuild it"):
        TantivyBackend(damaged)


def ids(backend: TantivyBackend, query: dict, size: int = 10) -> list[str]:
    return [h.doc_id for h in backend.search({"query": query}, size)]


# --- spec errors name their JSON path ---------------------------------------------------------

@pytest.mark.parametrize(("body", "message"), [
    ({"requests": [], "metric": {"precision": {}}}, "requests: missing"),
    ({"requests": [{"id": "a", "request": {}, "ratings": [{"_id": "x"}]}], "metric": {"precision": {}}},
     r"requests\[0\]\.ratings\[0\]\.rating: missing"),
    ({"requests": [{"id": "a", "request": {}, "ratings": [{"_id": "x", "rating": "high"}]}],
      "metric": {"precision": {}}}, r"requests\[0\]\.ratings\[0\]\.rating: expected an integer"),
    ({"requests": [{"id": "a", "template_id": "t", "params": {}, "ratings": []}], "metric": {"precision": {}},
      "templates": [{"id": "u", "template": {"source": {}}}]}, r"requests\[0\]\.template_id: unknown template 't'"),
    ({"requests": [{"id": "a", "request": {}, "ratings": []}, {"id": "a", "request": {}, "ratings": []}],
      "metric": {"precision": {}}}, r"requests\[1\]\.id: duplicate request id 'a'"),
    ({"requests": [{"id": "a", "request": {}, "ratings": []}], "metric": {"precison": {}}},
     "metric: .*unknown Elasticsearch metric 'precison'"),
    ({"requests": [{"id": "a", "request": {}, "ratings": []}], "metrics": ["ndgc@10"]},
     r"metrics\[0\]: unknown metric 'ndgc@10'"),
    ({"requests": [{"id": "a", "request": {}, "ratings": []}], "metric": {"precision": {}}, "sizes": 3},
     "unknown key"),
])
def test_spec_errors_name_the_json_path(body: dict, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        parse_spec(body, "spec.json")


def test_yaml_spec(tmp_path: Path) -> None:
    from rankwise.rankeval.spec import load_spec

    path = tmp_path / "spec.yaml"
    path.write_text("requests:\n  - id: q1\n    request: {query: {match_all: {}}}\n    ratings:\n"
                    "      - {_index: docs, _id: d1, rating: 1}\nmetrics: [P@2]\n", encoding="utf-8")
    spec = load_spec(path)
    assert spec.requests[0].ratings[0].doc_id == "d1" and spec.metrics == ["P@2"]


# --- templates and failures --------------------------------------------------------------------

def test_template_failures_do_not_stop_other_requests(index: TantivyBackend) -> None:
    d1 = [{"_id": "d1", "rating": 1}]
    spec = parse_spec({
        "requests": [
            {"id": "ok", "template_id": "t", "params": {"q": "conduction"}, "ratings": d1},
            {"id": "missing", "template_id": "t", "params": {}, "ratings": d1},
            {"id": "fuzzy", "request": {"query": {"fuzzy": {"title": "haet"}}}, "ratings": d1},
            {"id": "field", "request": {"query": {"match": {"abstract": "heat"}}}, "ratings": d1},
        ],
        "templates": [{"id": "t", "template": {"source": {"query": {"match": {"title": "{{q}}"}}}}}],
        "metric": {"mean_reciprocal_rank": {"k": 5}},
    })
    out = rank_eval(spec, index).to_dict()
    assert set(out["details"]) == {"ok"} and out["metric_score"] == 1.0  # d1 is the only hit for "conduction"
    assert out["failures"]["missing"] == {"error": {"type": "template_error",
                                                    "reason": "template 't': missing parameter 'q'"}}
    assert out["failures"]["fuzzy"]["error"]["type"] == "unsupported_query"
    assert "query.fuzzy: not supported" in out["failures"]["fuzzy"]["error"]["reason"]
    assert "query.match: unknown field 'abstract'" in out["failures"]["field"]["error"]["reason"]


# --- the DSL translation on a real index -------------------------------------------------------

def test_match_or_and_and(index: TantivyBackend) -> None:
    assert set(ids(index, {"match": {"body": "heat wing"}})) == {"d1", "d2", "d3", "d4"}
    assert ids(index, {"match": {"body": {"query": "heat wing", "operator": "and"}}}) == ["d4"]
    assert set(ids(index, {"match": {"body": {"query": "heat slab wing", "minimum_should_match": 2}}})) == {
        "d2", "d4"}  # d1 has heat + slabs (not slab): one term


def test_bm25_score_by_hand(index: TantivyBackend) -> None:
    # one term "flutter" in titles: N = 4 documents, n = 1 holds it; d3's title has 2 tokens,
    # the average title length is (2 + 2 + 2 + 2) / 4 = 2; tf = 1, k1 = 1.2, b = 0.75
    idf = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))
    tf = 1 * (1.2 + 1) / (1 + 1.2 * (1 - 0.75 + 0.75 * 2 / 2))
    (hit,) = index.search({"query": {"match": {"title": "flutter"}}}, 10)
    assert hit.doc_id == "d3" and hit.score == pytest.approx(idf * tf, rel=1e-6)


def test_multi_match_bool_term_terms_query_string_phrase(index: TantivyBackend) -> None:
    title = {h.doc_id: h.score for h in index.search({"query": {"match": {"title": "heat"}}}, 10)}
    body = {h.doc_id: h.score for h in index.search({"query": {"match": {"body": "heat"}}}, 10)}
    most = {h.doc_id: h.score for h in index.search(
        {"query": {"multi_match": {"query": "heat", "fields": ["title^2", "body"], "type": "most_fields"}}}, 10)}
    best = {h.doc_id: h.score for h in index.search(
        {"query": {"multi_match": {"query": "heat", "fields": ["title^2", "body"], "tie_breaker": 0.5}}}, 10)}
    for d in ("d1", "d4"):  # heat in title and body
        assert most[d] == pytest.approx(2 * title[d] + body[d], rel=1e-5)
        assert best[d] == pytest.approx(max(2 * title[d], body[d]) + 0.5 * min(2 * title[d], body[d]), rel=1e-5)
    assert most["d2"] == pytest.approx(body["d2"], rel=1e-5)
    # filter restricts without scoring; must_not excludes
    filtered = index.search({"query": {"bool": {"must": [{"match": {"body": "heat"}}],
                                                "filter": [{"match": {"title": "transfer"}}]}}}, 10)
    assert [(h.doc_id, round(h.score, 5)) for h in filtered] == [("d4", round(body["d4"], 5))]
    assert set(ids(index, {"bool": {"should": [{"match": {"body": "heat"}}],
                                    "must_not": [{"term": {"id": "d1"}}]}})) == {"d2", "d4"}
    assert set(ids(index, {"terms": {"id": ["d2", "d3"]}})) == {"d2", "d3"}
    assert ids(index, {"query_string": {"query": "title:flutter OR title:nothing"}}) == ["d3"]
    assert ids(index, {"match_phrase": {"body": "composite slabs"}}) == ["d1"]
    assert ids(index, {"match_phrase": {"body": "slabs composite"}}) == []
    assert len(ids(index, {"match_all": {}})) == 4


# --- Elasticsearch's response fields, by hand --------------------------------------------------

RATED = {"id": "q", "request": {"query": {"match_all": {}}},
         "ratings": [{"_index": "i", "_id": "a", "rating": 3}, {"_index": "i", "_id": "b", "rating": 0},
                     {"_index": "i", "_id": "c", "rating": 1}, {"_index": "i", "_id": "z", "rating": 2}]}
HITS = CallableBackend(lambda body, size: [("b", 4.0), ("a", 3.0), ("u", 2.0), ("c", 1.0)][:size], name="i")


def es(metric: dict) -> dict:
    return rank_eval(parse_spec({"requests": [RATED], "metric": metric}), HITS).to_dict()["details"]["q"]


def test_elasticsearch_metric_fields_by_hand() -> None:
    # ranked: b (0), a (3), u (unrated), c (1); z (2) was not retrieved
    p = es({"precision": {"k": 4}})
    assert p["metric_score"] == pytest.approx(2 / 4)  # a, c relevant of 4 retrieved
    assert p["metric_details"] == {"precision": {"relevant_docs_retrieved": 2, "docs_retrieved": 4}}
    assert p["unrated_docs"] == [{"_index": "i", "_id": "u"}]
    assert es({"precision": {"k": 4, "ignore_unlabeled": True}})["metric_score"] == pytest.approx(2 / 3)
    r = es({"recall": {"k": 4}})
    assert r["metric_score"] == pytest.approx(2 / 3)  # a, c of the rated relevant a, c, z
    assert r["metric_details"] == {"recall": {"relevant_docs_retrieved": 2, "relevant_docs": 3}}
    m = es({"mean_reciprocal_rank": {"k": 4, "relevant_rating_threshold": 2}})
    assert m["metric_score"] == pytest.approx(1 / 2) and m["metric_details"] == {
        "mean_reciprocal_rank": {"first_relevant": 2}}
    d = es({"dcg": {"k": 4}})
    dcg = 0 / math.log2(2) + 7 / math.log2(3) + 0 / math.log2(4) + 1 / math.log2(5)  # gain 2^r - 1
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4) + 0 / math.log2(5)  # ratings 3, 2, 1, 0
    assert d["metric_score"] == pytest.approx(dcg)
    assert d["metric_details"]["dcg"] == pytest.approx({"dcg": dcg, "ideal_dcg": ideal, "normalized_dcg": dcg / ideal})
    e = es({"expected_reciprocal_rank": {"k": 4, "maximum_relevance": 3}})
    r2, r4 = 7 / 8, 1 / 8  # R = (2^r - 1) / 2^3 for a (rank 2) and c (rank 4)
    assert e["metric_score"] == pytest.approx(r2 / 2 + (1 - r2) * r4 / 4)
    assert e["hits"][1] == {"hit": {"_index": "i", "_id": "a", "_score": 3.0}, "rating": 3}


# --- the judging loop ---------------------------------------------------------------------------

def test_judging_loop_writes_unrated_and_merges_ratings_back(tmp_path: Path) -> None:
    spec = parse_spec({"requests": [RATED, {"id": "new", "request": {"query": {"match_all": {}}}, "ratings": []}],
                       "metrics": ["P@4"]})
    first = rank_eval(spec, HITS)
    todo = tmp_path / "todo.csv"
    assert judging.write_unrated(first.unrated(), todo) == 5  # u for q; b, a, u, c for the unrated request
    assert "1 request(s) have no ratings" in " ".join(first.warnings)
    lines = todo.read_text().splitlines()
    lines = [lines[0]] + [line.replace(",,", ",1,", 1) for line in lines[1:]]  # a judge marks all relevant
    todo.write_text("\n".join(lines) + "\n")
    ratings, skipped = judging.read_ratings(todo)
    assert skipped == 0 and ratings["q"] == {"u": 1}
    second = rank_eval(spec, HITS, ratings=ratings)
    assert second.unrated() == []
    assert second.score("default", "P@4") == pytest.approx((3 / 4 + 4 / 4) / 2)


# --- the command line -------------------------------------------------------------------------

def test_cli_index_build_and_rank_eval(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.csv"
    corpus.write_text("id,title,body\n" + "".join(f"{d['id']},{d['title']},{d['body']}\n" for d in DOCS))
    runner = CliRunner()
    res = runner.invoke(app, ["index", "build", str(corpus), "-o", str(tmp_path / "ix"), "--fields", "title,body"])
    assert res.exit_code == 0, res.output
    assert "indexed 4 documents" in res.output
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({
        "requests": [{"id": "q1", "template_id": "t", "params": {"q": "heat slab"},
                      "ratings": [{"_index": "ix", "_id": "d2", "rating": 1}]},
                     {"id": "q2", "template_id": "t", "params": {"q": "wing"},
                      "ratings": [{"_index": "ix", "_id": "d3", "rating": 1}]}],
        "templates": [{"id": "t", "template": {"source": {"query": {"match": {"body": "{{q}}"}}}}}],
        "systems": {"body": {}, "title": {"templates": [
            {"id": "t", "template": {"source": {"query": {"match": {"title": "{{q}}"}}}}}]}},
        "metric": {"precision": {"k": 2}}, "metrics": ["mrr@10"]}))
    res = runner.invoke(app, ["rank-eval", str(spec), "--index", str(tmp_path / "ix"), "--quiet", "-o",
                              str(tmp_path / "out.json"), "--unrated-out", str(tmp_path / "todo.csv"),
                              "--format", "markdown"])
    assert res.exit_code == 0, res.output
    assert "| system | es:P@2 | mrr@10 | failed | q/s |" in res.output
    out = json.loads((tmp_path / "out.json").read_text())
    assert set(out["systems"]) == {"body", "title"} and "comparison" in out
    assert set(out["systems"]["title"]["metrics"]) == {
        '{"precision": {"ignore_unlabeled": false, "k": 2, "relevant_rating_threshold": 1}}', "mrr@10"}
    assert (tmp_path / "todo.csv").read_text().startswith("request_id,_index,_id,rating,systems,best_rank,query")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"requests": [{"id": "q", "template_id": "t", "ratings": []}],
                               "metric": {"precision": {}}}))
    res = runner.invoke(app, ["rank-eval", str(bad), "--index", str(tmp_path / "ix")])
    assert res.exit_code == 2 and "requests[0].template_id: unknown template 't'" in res.output
    res = runner.invoke(app, ["rank-eval", str(spec), "--index", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "not a rankwise index" in res.output
    # --search-type: checked, and said to change nothing on Tantivy's one shard; --match-index: the
    # spec's ratings carry _index "ix", the index directory's name, so the scores stay the same
    res = runner.invoke(app, ["rank-eval", str(spec), "--index", str(tmp_path / "ix"), "--search-type", "dfs"])
    assert res.exit_code == 2 and "--search-type 'dfs': expected one of query_then_fetch" in res.output
    res = runner.invoke(app, ["rank-eval", str(spec), "--index", str(tmp_path / "ix"), "--quiet", "--format",
                              "markdown", "--search-type", "dfs_query_then_fetch", "--match-index"])
    assert res.exit_code == 0, res.output
    assert "one shard, where both search types score the same" in res.output
    assert "| system | es:P@2 | mrr@10 | failed | q/s |" in res.output


# --- end to end on Cranfield --------------------------------------------------------------------

def _prepare() -> object:
    path = Path(__file__).parents[1] / "examples" / "rank_eval" / "prepare_collections.py"
    spec = importlib.util.spec_from_file_location("prepare_collections", path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_cranfield_end_to_end(tmp_path: Path) -> None:
    prepared = _prepare().prepare("cranfield", DATA / "cranfield", tmp_path)  # type: ignore[attr-defined]
    meta = build_index(prepared["corpus"], tmp_path / "index", "id", ["title", "body"])
    assert meta["documents"] == 1400
    from rankwise.rankeval.spec import load_spec

    spec = load_spec(prepared["spec"])
    assert len(spec.requests) == 225 and [s.name for s in spec.systems] == ["title", "title_body"]
    result = rank_eval(spec, TantivyBackend(tmp_path / "index"), size=1000)
    # sanity: a plain BM25 over Cranfield reaches MAP of about 0.29; title+body here ~0.26-0.27
    assert 0.24 < result.score("title_body", "map") < 0.31
    assert result.score("title", "map") < result.score("title_body", "map")
    table = result.comparison.table
    row = table[table.metric == "ndcg@10"].iloc[0]
    assert row.significant and row.n == 225
    assert all(len(h.failures) == 0 for h in result.systems.values())


def test_summary_fields_are_accepted_and_reported() -> None:
    spec = parse_spec({"requests": [{"id": "q", "request": {"query": {"match_all": {}}}, "summary_fields": ["title"],
                                     "ratings": [{"_id": "a", "rating": 1}]}], "metrics": ["P@1"]})
    result = rank_eval(spec, CallableBackend(lambda body, size: ["a"]))
    assert any("summary_fields" in w and "not returned" in w for w in result.warnings)


# --- the response streamed to disk --------------------------------------------------------------

def test_streamed_response_equals_the_dict_at_every_detail_level() -> None:
    import io

    spec = parse_spec({"requests": [RATED, {**RATED, "id": "q2"}], "metric": {"precision": {"k": 4}},
                       "metrics": ["ndcg@4"], "systems": {"one": {}, "two": {}}})
    result = rank_eval(spec, HITS)
    for details in ("all", "rated", "none"):
        buf = io.StringIO()
        result.write_json(buf, details)
        assert json.loads(buf.getvalue()) == json.loads(json.dumps(result.to_dict(details))), details
    rated = result.to_dict("rated")["details"]["q"]
    # hits b (0), a (3), u (unrated), c (1): the rated ones only, no unrated_docs
    assert [h["hit"]["_id"] for h in rated["hits"]] == ["b", "a", "c"] and "unrated_docs" not in rated
    assert result.to_dict("none")["details"]["q"] == {"metric_score": pytest.approx(2 / 4)}


def test_integral_ratings_from_pandas_and_callable_from_the_working_directory(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("request_id,_index,_id,rating\nq,i,u,1.0\nq,i,a,3\n")
    assert judging.read_ratings(ratings) == ({"q": {"u": 1, "a": 3}}, 0)
    import gzip

    packed = tmp_path / "r.csv.gz"   # a gzipped CSV is a CSV (it was read as TREC qrels and refused)
    packed.write_bytes(gzip.compress(ratings.read_bytes()))
    assert judging.read_ratings(packed) == ({"q": {"u": 1, "a": 3}}, 0)
    ratings.write_text("request_id,_index,_id,rating\nq,i,u,0.5\n")
    with pytest.raises(judging.InputError, match="r.csv:2: field 'rating': expected an integer, got '0.5'"):
        judging.read_ratings(ratings)
    (tmp_path / "mybackend.py").write_text("def search(body, size):\n    return [('a', 1.0)]\n")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"requests": [RATED], "metric": {"precision": {"k": 1}}}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in __import__("sys").path if p not in ("", str(tmp_path))])
    res = CliRunner().invoke(app, ["rank-eval", str(spec), "--backend", "callable", "--callable", "mybackend:search",
                                   "--quiet", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["metric_score"] == 1.0  # a is rated 3


def test_template_partials_are_refused(tmp_path: Path) -> None:
    """``{{> /path}}`` read any *.mustache file on disk into the search request before."""
    from rankwise.errors import TemplateError
    from rankwise.rankeval.templates import render

    secret = tmp_path / "secret.mustache"
    secret.write_text('{"stolen": true}')
    with pytest.raises(TemplateError, match="partials .* are not supported"):
        render("t", '{"query": {{> ' + str(secret.with_suffix("")) + '}} }', {})


def test_overwrite_replaces_only_a_rankwise_index(tmp_path: Path) -> None:
    from rankwise.errors import RankwiseError

    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"id": "1", "title": "heat flow"}\n')
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(RankwiseError, match="is not a rankwise index .* choose another directory"):
        build_index(corpus, precious, "id", ["title"], overwrite=True)
    assert (precious / "thesis.tex").read_text() == "years of work"
    index = tmp_path / "index"
    build_index(corpus, index, "id", ["title"])
    assert build_index(corpus, index, "id", ["title"], overwrite=True)["documents"] == 1


def test_a_system_whose_requests_all_failed_is_shown_failed(index: TantivyBackend) -> None:
    """It showed as scoring 0.0000, the reason only in -o response.json (issue #41)."""
    from rankwise.cli.rank_eval import _grids

    d1 = [{"_id": "d1", "rating": 1}]
    spec = parse_spec({"requests": [{"id": "fuzzy", "request": {"query": {"fuzzy": {"title": "haet"}}},
                                     "ratings": d1}], "metric": {"mean_reciprocal_rank": {"k": 5}}})
    result = rank_eval(spec, index)
    assert math.isnan(result.summary.iloc[0, 0]) and result.summary.iloc[0]["failed"] == 1
    grid = _grids(result)[0]
    assert grid.rows[0][1] == "-"
    assert "all 1 request(s) failed; the first: unsupported_query: query.fuzzy: not supported" in grid.note


def test_a_rendered_template_that_gives_a_key_twice_is_refused() -> None:
    """A template written as text can render a key twice: Elasticsearch refuses the body
    (strict duplicate detection); rankwise took the last value."""
    from rankwise.rankeval.templates import TemplateError, render

    with pytest.raises(TemplateError, match="template 't': the rendered body gives the key 'title' twice"):
        render("t", '{"query": {"match": {"title": "{{q}}", "title": "x"}}}', {"q": "a"})
    assert render("t", '{"query": {"match": {"title": "{{q}}"}}}', {"q": "a"}) == {"query": {"match": {"title": "a"}}}
