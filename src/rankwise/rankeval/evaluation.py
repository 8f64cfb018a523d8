"""rank_eval(spec, backend) -> RankEvalResult: search, evaluate every metric of every system, and
answer in Elasticsearch's ``_rank_eval`` shape (plus comparison statistics for several systems).

Ratings are matched to hits by document id (``_index`` is reported, not matched, so a spec
written for one Elasticsearch index runs unchanged against a Tantivy directory); with
``match_index`` by ``_index`` and ``_id``, as Elasticsearch matches them. Hits keep the
engine's order (``ties='input'``, scores as float64); a successful request without hits scores
0; failed requests are left out of that system's scores (and out of comparisons).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Literal, get_args

import numpy as np

from rankwise._version import __version__
from rankwise.comparison import Comparison, compare
from rankwise.data.containers import Qrels, Run
from rankwise.engine.conventions import ConventionKeywords
from rankwise.errors import OptionError, RankwiseError
from rankwise.evaluation import Result, evaluate, plain_value
from rankwise.metrics.names import parse_metric
from rankwise.rankeval.backends import Backend, Hit, document_key
from rankwise.rankeval.runner import SystemHits, run_system
from rankwise.rankeval.spec import RankEvalSpec

CONVENTIONS: ConventionKeywords = {"ties": "input", "score_precision": "float64", "missing": "zero"}
Details = Literal["all", "rated", "none"]
"""How much of each request a response carries."""
DETAILS: tuple[Details, ...] = get_args(Details)
"""How much of each request a response carries (``--details``)."""
DEFAULT_DEPTH = 100
"""Search size when a metric has no cut-off (``map``, ``mrr``) and neither the spec nor the
caller sets one."""


def metric_label(metric: Any) -> str:
    """The column label of a spec metric (its JSON text for an Elasticsearch metric object)."""
    return parse_metric(metric).label


def display_label(metric: Any) -> str:
    """A short label for tables: Elasticsearch metric objects become ``es:nDCG@10`` and so on.

    >>> display_label({"dcg": {"k": 10, "normalize": True}}), display_label("P@10")
    ('es:nDCG@10', 'P@10')
    """
    if not isinstance(metric, dict):
        return metric_label(metric)
    spec = parse_metric(metric)
    arguments = spec.arguments()
    name = ("n" if arguments.get("normalize") else "") + (spec.family.short_name or spec.name)
    return f"es:{name}@{spec.depth()}"


def metric_depth(metric: Any) -> int | None:
    """How many hits a metric looks at: its cut-off (Elasticsearch's ``k`` defaults to 10), or
    None when it reads the whole ranking.

    >>> metric_depth({"dcg": {"k": 20}}), metric_depth("P@5"), metric_depth("map")
    (20, 5, None)
    """
    return parse_metric(metric).depth()


def check_details(details: str) -> Details:
    """``details`` as a level of ``DETAILS``; any other value is refused.

    >>> check_details("rated")
    'rated'
    """
    for level in DETAILS:
        if details == level:
            return level
    raise OptionError(f"details={details!r}: expected one of {', '.join(DETAILS)}")


MAX_SIZE = 10_000
"""The most hits one search may ask for: Elasticsearch's default ``index.max_result_window``
(a larger ``size`` made the embedded search engine abort the process)."""


def search_size(spec: RankEvalSpec, size: int | None = None) -> int:
    """The number of hits to ask for: the caller's, the spec's, else the deepest metric's.

    >>> search_size(RankEvalSpec([], ["P@5"], []), 2_000_000_000)
    Traceback (most recent call last):
    ...
    rankwise.errors.OptionError: size 2000000000: at most 10000 hits per search (Elasticsearch's max_result_window)
    """
    if size is not None:
        if not 1 <= size <= MAX_SIZE:
            raise OptionError(f"size {size}: at most {MAX_SIZE} hits per search (Elasticsearch's max_result_window)"
                              if size > MAX_SIZE else f"size {size}: expected a positive number of hits")
        return size
    if spec.size is not None:
        return spec.size
    depths = [metric_depth(m) for m in spec.metrics]
    return DEFAULT_DEPTH if any(d is None for d in depths) else max(d for d in depths if d is not None)


@dataclass
class RankEvalResult:
    """Scores of every metric and system, per request, in Elasticsearch's response shape."""

    spec: RankEvalSpec
    systems: dict[str, SystemHits]
    ratings: dict[str, dict[str, int]]
    evaluations: dict[str, Result | None]
    comparison: Comparison | None
    size: int
    warnings: list[str] = field(default_factory=list)
    match_index: bool = False
    """Ratings were matched on ``_index`` and ``_id`` (keys of ``ratings``: ``document_key``)."""

    def score(self, system: str, metric: str) -> float:
        """Mean over the system's evaluated requests (0 when it has none)."""
        res = self.evaluations[system]
        return 0.0 if res is None else float(res.summary.iloc[0][metric])

    @property
    def summary(self) -> Any:
        """One row per system, one column per metric, plus failures and searches per second; a
        system none of whose requests could be evaluated has NaN scores (not 0: it was not
        measured; the JSON response keeps Elasticsearch's ``metric_score``)."""
        import pandas as pd

        rows = {}
        for name, hits in self.systems.items():
            row: dict[str, Any] = {display_label(m): self.score(name, metric_label(m))
                                   if self.evaluations[name] is not None else float("nan") for m in self.spec.metrics}
            row["failed"] = len(hits.failures)
            row["q/s"] = round(len(hits.hits) / hits.seconds, 1) if hits.seconds > 0 else float("nan")
            rows[name] = row
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "system"
        return frame

    @property
    def table(self) -> Any:
        """``summary`` with the system as a column."""
        return self.summary.reset_index()

    @property
    def settings(self) -> dict[str, Any]:
        """The metrics asked for and the result-window size."""
        from rankwise.results import signed

        return signed("rank-eval", {"metrics": [display_label(m) for m in self.spec.metrics], "size": self.size})

    def failure_notes(self) -> list[str]:
        """One line per system that could not be scored at all: why its first request failed."""
        notes = []
        for name, hits in self.systems.items():
            if self.evaluations[name] is None and hits.failures:
                first = next(iter(hits.failures.values()))["error"]
                notes.append(f"{name}: not scored: all {len(hits.failures)} request(s) failed; the first: "
                             f"{first['type']}: {first['reason']}")
        return notes

    def _entries(self, system: str, metric: Any, details: Details = "all") -> Iterator[tuple[str, dict[str, Any]]]:
        """(request id, Elasticsearch's per-request entry) for one system and metric, one at a
        time. ``details``: ``all`` (score, hits, unrated_docs, metric_details), ``rated``
        (the rated hits only, no unrated_docs) or ``none`` (the score alone)."""
        check_details(details)
        label = metric_label(metric)
        depth = metric_depth(metric) or self.size
        hits = self.systems[system]
        res = self.evaluations[system]
        per_query = {} if res is None else dict(res.per_query.loc[system][label].items())
        detail_rows: dict[str, Any] = {}
        if res is not None and details != "none" and parse_metric(metric).family.details is not None:
            frame = res.details(label).loc[system]
            detail_rows = {str(q): row for q, row in zip(frame.index, frame.to_dict("records"), strict=True)}
        kind = next(iter(metric)) if isinstance(metric, dict) else label
        for request in self.spec.requests:
            if request.id not in hits.hits:
                continue
            value = per_query.get(request.id)
            entry: dict[str, Any] = {"metric_score": None if value is None else float(value)}
            if details != "none":
                rated = self.ratings.get(request.id, {})
                found = hits.hits[request.id][:depth]
                keyed = [(h, h.key(self.match_index)) for h in found]
                if details == "all":
                    entry["unrated_docs"] = [{"_index": h.index, "_id": h.doc_id} for h, key in keyed
                                             if key not in rated]
                entry["hits"] = [{"hit": {"_index": h.index, "_id": h.doc_id, "_score": h.score},
                                  "rating": rated.get(key)} for h, key in keyed
                                 if details == "all" or key in rated]
                row = detail_rows.get(request.id)
                entry["metric_details"] = {} if row is None else {
                    kind: {k: plain_value(v) for k, v in row.items() if k != "unrated_docs"}}
            yield request.id, entry

    def _block(self, system: str, metric: Any, details: Details = "all") -> dict[str, Any]:
        """Elasticsearch's response for one system and one metric."""
        return {"metric_score": self.score(system, metric_label(metric)),
                "details": dict(self._entries(system, metric, details))}

    def _layout(self) -> tuple[list[str], bool]:
        names = list(self.systems)
        return names, len(names) > 1 or len(self.spec.metrics) > 1

    def _footer(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.comparison is not None:
            out["comparison"] = self.comparison.to_dict()
        out["rankwise"] = {"version": __version__, "size": self.size, "warnings": list(self.warnings),
                           "signatures": next((r.signatures for r in self.evaluations.values() if r), {})}
        return out

    def to_dict(self, details: Details = "all") -> dict[str, Any]:
        """Elasticsearch's shape (``metric_score``, ``details``, ``failures``) for the first
        system and metric; with several metrics or systems, ``systems`` holds one such block per
        system and metric, and ``comparison`` the paired tests between systems. ``details`` as
        in ``write_json``."""
        names, several = self._layout()
        first = self._block(names[0], self.spec.metrics[0], details)
        out: dict[str, Any] = {"metric_score": first["metric_score"], "details": first["details"],
                               "failures": self.systems[names[0]].failures}
        if several:
            out["systems"] = {
                name: {"metrics": {metric_label(m): self._block(name, m, details) for m in self.spec.metrics},
                       "failures": self.systems[name].failures,
                       "searches": len(self.systems[name].hits), "seconds": self.systems[name].seconds}
                for name in names}
        out.update(self._footer())
        return out

    def write_json(self, out: IO[str], details: Details = "all", progress: Callable[[int, int], None] | None = None,
                   extra: dict[str, Any] | None = None) -> None:
        """Write ``to_dict(details)`` as compact JSON to a text stream, one request's entry at a
        time: memory stays bounded by one request's hits whatever the number of requests,
        systems and metrics. ``progress(done, total)`` is called after each (system, metric).
        ``extra`` adds top-level keys (e.g. ``cross_check``). ``json.load`` of the output equals
        ``to_dict(details)`` (plus ``extra``).
        """
        def dump(value: Any) -> str:
            return json.dumps(value, separators=(",", ":"))

        def details_object(system: str, metric: Any) -> None:
            out.write("{")
            for i, (rid, entry) in enumerate(self._entries(system, metric, details)):
                out.write(("," if i else "") + dump(rid) + ":" + dump(entry))
            out.write("}")

        names, several = self._layout()
        total = (len(names) * len(self.spec.metrics) if several else 0) + 1
        done = 0
        first_metric = self.spec.metrics[0]
        out.write('{"metric_score":' + dump(self.score(names[0], metric_label(first_metric))) + ',"details":')
        details_object(names[0], first_metric)
        out.write(',"failures":' + dump(self.systems[names[0]].failures))
        done += 1
        if progress:
            progress(done, total)
        if several:
            out.write(',"systems":{')
            for i, name in enumerate(names):
                out.write(("," if i else "") + dump(name) + ':{"metrics":{')
                for j, m in enumerate(self.spec.metrics):
                    out.write(("," if j else "") + dump(metric_label(m)) + ':{"metric_score":'
                              + dump(self.score(name, metric_label(m))) + ',"details":')
                    details_object(name, m)
                    out.write("}")
                    done += 1
                    if progress:
                        progress(done, total)
                hits = self.systems[name]
                out.write('},"failures":' + dump(hits.failures) + ',"searches":' + dump(len(hits.hits))
                          + ',"seconds":' + dump(hits.seconds) + "}")
            out.write("}")
        for key, value in {**self._footer(), **(extra or {})}.items():
            out.write("," + dump(key) + ":" + dump(value))
        out.write("}\n")

    def unrated(self, depth: int | None = None) -> list[dict[str, Any]]:
        """Unrated documents in the top ``depth`` (default: the deepest metric cut-off) of every
        system, once per (request, document): the ones to judge next."""
        if depth is None:
            depths = [metric_depth(m) or self.size for m in self.spec.metrics]
            depth = max(depths)
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for name, hits in self.systems.items():
            for request in self.spec.requests:
                rated = self.ratings.get(request.id, {})
                for rank, h in enumerate(hits.hits.get(request.id, [])[:depth], start=1):
                    if h.key(self.match_index) in rated:
                        continue
                    key = (request.id, h.key(self.match_index))
                    if key not in rows:
                        rows[key] = {"request_id": request.id, "_index": h.index, "_id": h.doc_id, "rating": "",
                                     "systems": name, "best_rank": rank,
                                     "query": str(request.params.get("query", ""))}
                    else:
                        rows[key]["systems"] += f",{name}"
                        rows[key]["best_rank"] = min(rows[key]["best_rank"], rank)
        return list(rows.values())


def _qrels(ratings: Mapping[str, Mapping[str, int]], requests: set[str]) -> Qrels | None:
    keep = [q for q in ratings if q in requests and ratings[q]]
    if not keep:
        return None
    counts = [len(ratings[q]) for q in keep]
    docs = [d for q in keep for d in ratings[q]]
    labels = np.fromiter((r for q in keep for r in ratings[q].values()), dtype=np.int64, count=len(docs))
    return Qrels(np.repeat(np.asarray(keep, dtype=object), counts), docs, labels, source="<ratings>")


def _run(hits: Mapping[str, list[Hit]], requests: set[str], name: str, match_index: bool = False) -> Run | None:
    keep = [q for q in hits if q in requests and hits[q]]
    if not keep:
        return None
    counts = [len(hits[q]) for q in keep]
    docs = [h.key(match_index) for q in keep for h in hits[q]]
    scores = np.fromiter((h.score for q in keep for h in hits[q]), dtype=np.float64, count=len(docs))
    return Run(np.repeat(np.asarray(keep, dtype=object), counts), docs, scores, name=name, source=f"<{name} hits>")


def spec_ratings(spec: RankEvalSpec, match_index: bool = False) -> dict[str, dict[str, int]]:
    """The spec's ratings per request, keyed by ``document_key``. Without ``match_index`` an
    ``_id`` rated in two indices is an error (which one would a hit match?); with it, every
    rating needs its ``_index``.

    >>> from rankwise.rankeval.spec import parse_spec
    >>> spec = parse_spec({"requests": [{"id": "q", "request": {}, "ratings": [
    ...     {"_index": "a", "_id": "1", "rating": 2}, {"_index": "b", "_id": "1", "rating": 0}]}], "metrics": ["P@5"]})
    >>> spec_ratings(spec, match_index=True)["q"] == {"a\x1f1": 2, "b\x1f1": 0}
    True
    """
    out: dict[str, dict[str, int]] = {}
    for r in spec.requests:
        docs = out[r.id] = {}
        for x in r.ratings:
            if match_index and x.index is None:
                raise RankwiseError(f"request {r.id!r}: document {x.doc_id!r} has no _index; matching ratings on "
                                    "_index and _id needs it on every rating")
            key = document_key(x.index, x.doc_id, match_index)
            if key in docs:
                raise RankwiseError(f"request {r.id!r}: document {x.doc_id!r} is rated in two indices; match "
                                    "ratings on _index and _id (match_index=True, --match-index)")
            docs[key] = x.rating
    return out


def merged_ratings(spec: RankEvalSpec, extra: Mapping[str, Mapping[str, int]] | None,
                   warnings: list[str], match_index: bool = False,
                   searched: Mapping[str, Mapping[str, int]] | None = None) -> dict[str, dict[str, int]]:
    """The spec's ratings per request, under the ones its ``rating_queries`` found
    (``searched``: a rating written out wins), with ``extra`` ones (a judging round) merged
    over both: a new rating is added, a changed one replaces the old (both counted in a
    warning)."""
    out = spec_ratings(spec, match_index)
    if searched:
        overruled = 0
        for rid, docs in searched.items():
            for doc, rating in docs.items():
                if doc in out[rid]:
                    overruled += out[rid][doc] != rating
                else:
                    out[rid][doc] = rating
        found = sum(len(d) for d in searched.values())
        warnings.append(f"rating queries rated {found} document(s) of {len(searched)} request(s); "
                        f"{overruled} of them carry another rating written in the spec, which wins")
    if not extra:
        return out
    added = changed = 0
    unknown = set(extra) - set(out)
    if unknown:
        raise RankwiseError(f"ratings for request(s) the spec does not have: {', '.join(sorted(unknown)[:5])}")
    for rid, docs in extra.items():
        for doc, rating in docs.items():
            old = out[rid].get(doc)
            if old is None:
                added += 1
            elif old != rating:
                changed += 1
            out[rid][doc] = int(rating)
    warnings.append(f"merged ratings: {added} added, {changed} changed from the spec's")
    return out


def rank_eval(spec: RankEvalSpec, backend: Backend | Mapping[str, Backend], *, size: int | None = None,
              concurrency: int | None = None, ratings: Mapping[str, Mapping[str, int]] | None = None,
              test: str = "t", correction: str = "holm", seed: int = 0, match_index: bool = False,
              progress: Callable[[int], Callable[[], None]] | None = None) -> RankEvalResult:
    """Run every request of every system of ``spec`` and evaluate every metric.

    ``backend`` serves every system, or is a ``{system: backend}`` mapping. ``ratings``
    (``{request id: {document key: rating}}``) are merged over the spec's. With two systems or
    more, ``test`` and ``correction`` choose the paired comparison (see ``rankwise.compare``).
    ``match_index`` matches ratings to hits on ``_index`` and ``_id`` (Elasticsearch's rule)
    instead of ``_id`` alone. A request's ``rating_queries`` run on the first system's backend
    before the evaluation; their hits get their rating (the highest when several match).

    >>> from rankwise.rankeval.spec import parse_spec
    >>> from rankwise.rankeval.backends import CallableBackend
    >>> spec = parse_spec({"requests": [{"id": "q1", "request": {"query": {"match_all": {}}},
    ...     "ratings": [{"_index": "i", "_id": "a", "rating": 1}, {"_index": "i", "_id": "b", "rating": 0}]}],
    ...     "metric": {"precision": {"k": 2}}})
    >>> res = rank_eval(spec, CallableBackend(lambda body, size: ["b", "a", "c"][:size]))
    >>> res.to_dict()["metric_score"], res.to_dict()["details"]["q1"]["metric_details"]
    (0.5, {'precision': {'relevant_docs_retrieved': 1, 'docs_retrieved': 2}})
    """
    warnings: list[str] = list(spec.notes)
    depth = search_size(spec, size)
    workers = concurrency or spec.max_concurrent_searches
    backends = dict(backend) if isinstance(backend, Mapping) else {s.name: backend for s in spec.systems}
    missing = [s.name for s in spec.systems if s.name not in backends]
    if missing:
        raise RankwiseError(f"no backend for system(s) {', '.join(missing)}")
    searched = searched_ratings(spec, backends[spec.systems[0].name], match_index, warnings)
    advance = progress(len(spec.requests) * len(spec.systems)) if progress else None
    systems = {s.name: run_system(spec, s, backends[s.name], depth, workers, advance) for s in spec.systems}
    rated = merged_ratings(spec, ratings, warnings, match_index, searched)
    unrated_requests = [rid for rid, docs in rated.items() if not docs]
    if unrated_requests:
        warnings.append(f"{len(unrated_requests)} request(s) have no ratings and are not scored "
                        f"(e.g. {unrated_requests[0]!r}); their hits are listed as unrated")
    metrics = list(spec.metrics)
    evaluations: dict[str, Result | None] = {}
    for name, hits in systems.items():
        if hits.failures:
            warnings.append(f"{name}: {len(hits.failures)} request(s) failed and are left out of its scores")
        ok = {rid for rid in hits.hits if rated.get(rid)}
        qrels, run = _qrels(rated, ok), _run(hits.hits, ok, name, match_index)
        if qrels is None or run is None:
            evaluations[name] = None
            if qrels is not None:
                warnings.append(f"{name}: no request returned a hit; every metric is 0")
            continue
        result = evaluations[name] = evaluate(qrels, {name: run}, metrics, **CONVENTIONS)
        warnings.extend(w for w in result.warnings if getattr(w, "kind", None) != "missing_queries")
    comparison = None
    if len(systems) > 1:
        common = set.intersection(*({rid for rid in h.hits if rated.get(rid)} for h in systems.values()))
        qrels = _qrels(rated, common)
        runs = {name: _run(h.hits, common, name, match_index) for name, h in systems.items()}
        if qrels is not None and all(r is not None for r in runs.values()) and len(common) > 1:
            comparison = compare(qrels, runs, metrics, test=test, correction=correction, seed=seed, **CONVENTIONS)
        else:
            warnings.append("too few requests succeeded in every system to compare them")
    return RankEvalResult(spec, systems, rated, evaluations, comparison, depth, warnings, match_index)


def searched_ratings(spec: RankEvalSpec, backend: Backend, match_index: bool = False,
                     warnings: list[str] | None = None) -> dict[str, dict[str, int]]:
    """Ratings found by the requests' ``rating_queries``: every hit of a rating query gets its
    rating, the highest one when several rating queries find the same document. A rating query
    that fails is left out, counted in ``warnings``.

    >>> from rankwise.rankeval.spec import parse_spec
    >>> from rankwise.rankeval.backends import CallableBackend
    >>> spec = parse_spec({"requests": [{"id": "q", "request": {}, "rating_queries": [
    ...     {"request": {"query": {"term": {"tag": "good"}}}, "rating": 2},
    ...     {"request": {"query": {"term": {"tag": "ok"}}}, "rating": 1}]}], "metrics": ["P@5"]})
    >>> hits = {"good": ["a"], "ok": ["a", "b"]}
    >>> searched_ratings(spec, CallableBackend(lambda body, size: hits[body["query"]["term"]["tag"]]))
    {'q': {'a': 2, 'b': 1}}
    """
    out: dict[str, dict[str, int]] = {}
    failed = 0
    first_error = ""
    for request in spec.requests:
        for query in request.rating_queries:
            try:
                found = backend.search(query.request, query.size)
            except RankwiseError as err:
                failed += 1
                first_error = first_error or str(err)
                continue
            docs = out.setdefault(request.id, {})
            for hit in found:
                key = hit.key(match_index)
                docs[key] = max(docs.get(key, query.rating), query.rating)
    if failed and warnings is not None:
        warnings.append(f"{failed} rating query(ies) failed and rated nothing; the first: {first_error}")
    return out
