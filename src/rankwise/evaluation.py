"""evaluate(qrels, runs, metrics, **conventions) -> Result: per-query values, means, signatures."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rankwise._version import __version__
from rankwise.data.containers import Qrels, Run
from rankwise.data.load import load_qrels, load_run
from rankwise.engine.align import QrelsIndex, align, empty_rankings
from rankwise.engine.conventions import Conventions, Missing
from rankwise.engine.ranked import RankedLists
from rankwise.errors import Notice, RankwiseError, notice_dicts
from rankwise.metrics.compute import RunScores, check_continuous, compute_scores
from rankwise.metrics.names import MetricSpec, canonical_name, parse_metric

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankwise.data.prefs import Prefs
    from rankwise.engine.conventions import ConventionKeywords


def signature(spec: MetricSpec, column: str, conv: Conventions, continuous: bool = False) -> str:
    """The reproducibility signature of one column: its canonical name and every convention
    (``conv`` already holds the metric's own conventions); ``continuous``: the qrels hold
    continuous relevance (``gain=values``).

    >>> signature(parse_metric("ndcg@10"), "ndcg_cut_10", Conventions())
    'nDCG@10|gain=linear|ties=trec|rel=1|judged=all|missing=skip|depth=all|scores=float64|rankwise-0.1.0'
    """
    from rankwise.results import Signature

    fields: list[tuple[str, str]] = []
    if spec.family.gain_based and continuous:
        fields.append(("gain", "values"))
    elif spec.family.gain_based:
        gains = spec.arguments().get("gains") or {}
        fields.append(("gain", ",".join(f"{k}={v:g}" for k, v in gains.items()) if gains else "linear"))
    for part in conv.signature_part().split("|"):
        key, _, value = part.partition("=")
        fields.append((key, str(spec.rel) if key == "rel" and spec.rel is not None else value))
    return str(Signature(canonical_name(spec, column), tuple(fields), __version__))


@dataclass
class Result:
    """Outcome of ``evaluate``: per-query values, means, signatures and warnings.

    ``per_query`` has one row per (run, query) and one column per metric; ``summary`` one row
    per run. Column names are the metric names as written by the caller (a name that stands for
    several cut-offs, such as ``P.5,10``, becomes one column per cut-off).
    """

    runs: list[RunScores]
    labels: dict[str, list[str]]
    signatures: dict[str, str]
    conventions: Conventions
    warnings: list[str] = field(default_factory=list)

    def _column_map(self) -> dict[str, str]:
        out = {}
        for label, cols in self.labels.items():
            if len(cols) == 1:
                out[label] = cols[0]
            else:
                for c in cols:
                    out[c] = c
        return out

    @cached_property
    def per_query(self) -> Any:
        import pandas as pd

        colmap = self._column_map()
        frames = []
        for rs in self.runs:
            data = {"run": rs.name, "query": rs.query_ids.astype(str)}
            for out, col in colmap.items():
                data[out] = rs.values[col]
            frames.append(pd.DataFrame(data))
        frame = pd.concat(frames, ignore_index=True)
        return frame.set_index(["run", "query"])

    @cached_property
    def summary(self) -> Any:
        import pandas as pd

        colmap = self._column_map()
        rows = {rs.name: {out: rs.summary(col) for out, col in colmap.items()} for rs in self.runs}
        frame = pd.DataFrame.from_dict(rows, orient="index")
        frame.index.name = "run"
        return frame

    @property
    def table(self) -> Any:
        """``summary`` with the run as a column: one row per run, one column per metric."""
        return self.summary.reset_index()

    @property
    def settings(self) -> dict[str, Any]:
        """The conventions and each metric's signature (everything that reproduces the values)."""
        from dataclasses import asdict

        from rankwise.results import json_plain

        return {"conventions": json_plain(asdict(self.conventions), nan_as_null=False),
                "signatures": dict(self.signatures)}

    def details(self, metric: str) -> Any:
        """Per-query details of an Elasticsearch metric (relevant and retrieved hits, first
        relevant rank, dcg / ideal_dcg, unrated_docs), one row per (run, query)."""
        import pandas as pd

        if metric.lstrip().startswith("{"):  # an Elasticsearch metric in any spelling: its re-serialised label
            from rankwise.metrics.names import parse_metric

            metric = parse_metric(metric).label
        frames = []
        for rs in self.runs:
            if metric not in rs.details:
                raise RankwiseError(f"{metric!r} has no per-query details (Elasticsearch metrics do)")
            data = {"run": rs.name, "query": rs.query_ids.astype(str)}
            data.update({k: np.asarray(v) for k, v in rs.details[metric].items()})
            frames.append(pd.DataFrame(data))
        return pd.concat(frames, ignore_index=True).set_index(["run", "query"])

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """The stable JSON shape: ``{"rankwise", "metrics", "runs", "warnings", "notices"}`` (the
        warnings as printed, and as ``{kind, run, metric, count, message}`` objects)."""
        colmap = self._column_map()
        runs: dict[str, Any] = {}
        for rs in self.runs:
            entry: dict[str, Any] = {"summary": {out: rs.summary(col) for out, col in colmap.items()}}
            if per_query:
                entry["per_query"] = {
                    str(q): {out: plain_value(rs.values[col][i]) for out, col in colmap.items()}
                    for i, q in enumerate(rs.query_ids)
                }
            runs[rs.name] = entry
        metrics = {out: {"signature": self.signatures[out]} for out in colmap}
        return {"rankwise": __version__, "metrics": metrics, "runs": runs, "warnings": list(self.warnings),
                "notices": notice_dicts(self.warnings)}


def plain_value(value: Any) -> Any:
    """A NumPy scalar as the plain Python number (for JSON)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


JUDGMENT_KINDS = {"qrels": "qrels", "prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "qrels_jg",
                  "subtopics": "subtopics"}
"""What each kind of judgments file feeds: trec_eval's ``-R`` formats and the families' ``judgments``."""


def check_judgments(specs: Sequence[MetricSpec], kind: str) -> None:
    """Refuse a metric that cannot be computed from this kind of judgments.

    >>> check_judgments([parse_metric("prefs_simp")], "prefs")
    >>> check_judgments([parse_metric("map")], "prefs")
    Traceback (most recent call last):
    ...
    rankwise.errors.RankwiseError: map is computed from qrels, not from prefs
    """
    wanted = JUDGMENT_KINDS[kind]
    for spec in specs:
        if spec.family.judgments not in ("any", wanted):
            source = {"prefs": "prefs judgments (trec_eval -R prefs or -R qrels_prefs)",
                      "qrels_jg": "qrels in judgment groups (trec_eval -R qrels_jg)",
                      "subtopics": "subtopic qrels (rankwise.load_prefs(path, 'subtopics'))",
                      "qrels": "qrels"}[spec.family.judgments]
            raise RankwiseError(f"{spec.label} is computed from {source}, not from {kind}")


def grouped_judgments(judgments: Prefs, run: Run, conv: Conventions) -> tuple[Any, list[str]]:
    """The lists preference or judgment-group families read, and the notes of building them."""
    from rankwise.metrics.ranking.diversity import diversity_lists
    from rankwise.metrics.ranking.judgment_groups import grouped_lists
    from rankwise.metrics.ranking.preferences import prefs_lists

    if judgments.kind == "qrels_jg":
        return grouped_lists(judgments, run, conv)
    if judgments.kind == "subtopics":
        return diversity_lists(judgments, run, conv)
    lists = prefs_lists(judgments, run, conv.depth, conv.missing, conv.score_precision)
    return lists, list(lists.notes)


def _index_of(qrels: Qrels) -> QrelsIndex:
    """The encoded qrels, built once per Qrels object (Qrels are treated as immutable)."""
    index = qrels.__dict__.get("_rankwise_index")
    if index is None:
        index = QrelsIndex.build(qrels)
        qrels.__dict__["_rankwise_index"] = index
    return index


def _aligned(run: Run, index: QrelsIndex, conv: Conventions) -> tuple[RankedLists, list[str]]:
    """The run aligned with these qrels under these conventions, computed once per Run object
    (Runs are treated as immutable), so repeated evaluations skip the join and the sort."""
    cache = run.__dict__.setdefault("_rankwise_aligned", {})
    hit = cache.get(conv)
    if hit is not None and hit[0] is index:
        return hit[1], list(hit[2])
    rl, notes = align(run, index, conv)
    cache[conv] = (index, rl, notes)
    return rl, list(notes)


def _unique_names(runs: list[Run], warnings: list[str]) -> None:
    """Runs sharing a tag are named after their files (or numbered), with a warning."""
    from collections import Counter

    counts = Counter(r.name for r in runs)
    for run in runs:
        if counts[run.name] > 1 and not run.source.startswith("<"):
            new = os.path.basename(run.source).removesuffix(".gz")
            new = new.rsplit(".", 1)[0] if "." in new else new  # BM25.dl19.trec -> BM25.dl19
            warnings.append(Notice(f"several runs are tagged {run.name!r}; {run.source} is reported as {new!r}",
                                   "renamed_run", run=new))
            run.name = new
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            base, n = run.name, 2
            while f"{base}#{n}" in seen:
                n += 1
            warnings.append(Notice(f"two runs are named {base!r}; the later one is reported as '{base}#{n}'",
                                   "renamed_run", run=f"{base}#{n}"))
            run.name = f"{base}#{n}"
        seen.add(run.name)


def _as_runs(runs: Any) -> list[tuple[Any, str | None]]:
    """Normalise the ``runs`` argument into (run-like, name) pairs."""
    if type(runs).__name__ == "DataFrame":
        from rankwise.data.load import split_runs

        return split_runs(runs)
    if isinstance(runs, (Run, str, os.PathLike)):
        return [(runs, None)]
    if isinstance(runs, Mapping):
        if not runs:
            raise RankwiseError("no runs given: expected a run, or a mapping of run names to runs (an empty mapping "
                                "has nothing to score)")
        values = list(runs.values())
        if values and all(isinstance(v, Mapping) for v in values) and all(
            all(not isinstance(x, Mapping) for x in v.values()) for v in values
        ):
            return [(dict(runs), None)]  # one {qid: {doc: score}} run
        return [(v, str(k)) for k, v in runs.items()]
    if isinstance(runs, Sequence):  # runs, or (name, run) pairs
        if not runs:
            raise RankwiseError("no runs given: expected a run, or a list of runs (an empty list has nothing to "
                                "score)")
        return [(r[1], str(r[0])) if isinstance(r, tuple) and len(r) == 2 else (r, None) for r in runs]
    raise RankwiseError(f"cannot read runs from a {type(runs).__name__}")


EvaluationEngine = Literal["memory", "chunks", "dask", "spark"]
"""Where ``evaluate`` runs: in memory, in chunks of a file, or on a Dask or Spark cluster."""
ENGINE_MODULES = {"chunks": "rankwise.scale.chunked", "dask": "rankwise.scale.dask_engine",
           "spark": "rankwise.scale.spark_engine"}
"""Engines other than ``memory``, by name: each module has ``evaluate_with_engine(plan, runs,
**options) -> Result``. They are looked up by name when asked for (they sit above this module
and pull in their own dependencies)."""


def _conventions(profile: str | None, conventions: Mapping[str, Any]) -> Conventions:
    """The conventions of a profile, overridden by the ones given; unknown names are refused."""
    from rankwise.metrics import profiles

    unknown = set(conventions) - set(Conventions.names())
    if unknown:
        raise RankwiseError(f"unknown convention(s) {sorted(unknown)}; expected {Conventions.names()}")
    return Conventions(**profiles.conventions_of(profile, dict(conventions)))


@dataclass
class EvaluationPlan:
    """What ``evaluate`` does to every run, once the qrels are encoded and the metrics parsed:
    the engines call :meth:`score` on each piece of a run and :meth:`result` at the end.

    >>> plan = EvaluationPlan.build({"q1": {"d1": 1}}, ["P@1"], None, {})
    >>> plan.score(load_run({"q1": {"d1": 0.9, "d2": 0.5}})).values["P_1"].tolist()
    [1.0]
    """

    qrels: Qrels
    index: QrelsIndex
    specs: list[MetricSpec]
    conventions: Conventions
    groups: dict[tuple[Any, ...], list[MetricSpec]]
    own: dict[tuple[Any, ...], Conventions]
    notes: list[str]

    @classmethod
    def build(cls, qrels: Any, metrics: str | Sequence[str], profile: str | None,
              conventions: Mapping[str, Any]) -> EvaluationPlan:
        """Encode ``qrels``, parse ``metrics`` and resolve the conventions (``evaluate``'s
        arguments)."""
        from rankwise.metrics import profiles

        conv = _conventions(profile, conventions)
        if isinstance(metrics, (str, dict)):
            metrics = [metrics]
        q = qrels if isinstance(qrels, Qrels) else load_qrels(qrels)
        max_label = int(q.label.max()) if len(q.label) else 1
        specs = [profiles.metric_of(profile, m, max_label) or parse_metric(m) for m in metrics]
        check_judgments(specs, "qrels")
        if q.continuous:
            check_continuous(specs)
        groups: dict[tuple[Any, ...], list[MetricSpec]] = {}
        for spec in specs:  # metrics with conventions of their own are computed on their own alignment
            groups.setdefault(spec.conventions, []).append(spec)
        own = {key: replace(conv, **dict(key)) for key in groups}
        return cls(q, _index_of(q), specs, conv, groups, own, list(q.notes))

    def score(self, run: Run, missing: Missing | None = None) -> RunScores:
        """Every metric on one run (or one query-complete piece of it); its warnings are in
        ``RunScores.warnings``. ``missing`` overrides the convention (engines score the pieces
        of a run with ``missing='skip'`` and the absent queries at the end)."""
        merged: RunScores | None = None
        notes: list[str] = []
        for key, group in self.groups.items():
            conv = self.own[key] if missing is None else replace(self.own[key], missing=missing)
            rl, align_notes = _aligned(run, self.index, conv)
            notes.extend(n for n in align_notes if n not in notes)
            if rl.n_queries == 0 and missing is None:
                raise RankwiseError(f"{run.name}: no query has both a ranking and judgments "
                                    f"(run {run.source}, qrels {self.qrels.source})")
            scores = compute_scores(rl, group, conv)
            notes.extend(scores.warnings)
            merged = scores if merged is None else _merge(merged, scores)
        assert merged is not None
        merged.name = run.name
        merged.warnings = notes
        return merged

    @cached_property
    def query_order(self) -> np.ndarray:
        """The qrels' query ids as sorted strings: a query's position is its place in the
        per-query values of every engine."""
        return self.index.query_ids.astype(str)

    def score_absent(self, codes: np.ndarray, run_name: str) -> RunScores:
        """Every metric on empty rankings for the qrels queries ``codes`` (positions in
        ``index.query_ids``): what ``missing='zero'`` scores a query the run never returned."""
        merged: RunScores | None = None
        for key, group in self.groups.items():
            rl = empty_rankings(self.index, codes, self.own[key], run_name)
            scores = compute_scores(rl, group, self.own[key])
            scores.warnings = []
            merged = scores if merged is None else _merge(merged, scores)
        assert merged is not None
        merged.name = run_name
        return merged

    def result(self, scores: list[RunScores], warnings: list[str]) -> Result:
        """The Result of these runs' scores, with the signature of every column."""
        labels = {s.label: s.result_columns() for s in self.specs}
        sigs: dict[str, str] = {}
        for s in self.specs:
            cols = s.result_columns()
            if len(cols) == 1:
                sigs[s.label] = signature(s, cols[0], self.own[s.conventions], self.qrels.continuous)
            else:
                for c in cols:
                    sigs[c] = signature(s, c, self.own[s.conventions], self.qrels.continuous)
        return Result(scores, labels, sigs, self.conventions, warnings)


def evaluate(
    qrels: Any,
    runs: Any,
    metrics: str | Sequence[str],
    profile: str | None = None,
    *,
    engine: EvaluationEngine = "memory",
    chunk_rows: int | None = None,
    client: Any = None,
    **conventions: Unpack[ConventionKeywords],
) -> Result:
    """Evaluate one or many runs against qrels.

    ``qrels`` and each run may be a path (TREC, Parquet, JSON, JSONL), a DataFrame, a
    ``{qid: {docid: value}}`` dict or a Qrels/Run. ``runs`` may be one run, a list, or a
    ``{name: run}`` mapping. ``metrics`` are names in trec_eval, ranx or ir_measures
    spelling. Keyword arguments set conventions (see ``Conventions``): ``rel_level``,
    ``depth``, ``judged_only``, ``missing``, ``ties``, ``score_precision``, ``duplicates``, ``gains``.
    ``profile`` (``trec_eval``, ``ranx``, ``recbole``, ``elasticsearch``) sets conventions and
    metric meanings to reproduce that tool; explicit conventions override it.

    ``engine`` says where the rows are scored: ``memory`` (the whole run at once), ``chunks``
    (query-complete chunks of about ``chunk_rows`` rows read from a file or Parquet dataset
    larger than memory), ``dask`` or ``spark`` (partitions on a cluster; ``client`` is the Dask
    client or Spark session, else the current one). Every engine gives the same per-query
    values, bit for bit (see docs/scale.md).

    Qrels and Run objects remember their encoding and alignment, so evaluating the same loaded
    objects again (other metrics, a training loop) skips the join and the sort.

    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 1}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
    >>> res = evaluate(qrels, run, ["map", "P@2", "ndcg@3"])
    >>> res.summary.round(4).to_dict("records")   # AP = (1/1 + 2/3) / 2
    [{'map': 0.8333, 'P@2': 0.5, 'ndcg@3': 0.9197}]
    """
    if _is_prefs(qrels):
        if engine != "memory":
            raise RankwiseError(f"engine={engine!r}: preference and judgment-group qrels are evaluated in memory")
        return _evaluate_grouped(qrels, runs, [metrics] if isinstance(metrics, (str, dict)) else metrics,
                                 _conventions(profile, conventions))
    plan = EvaluationPlan.build(qrels, metrics, profile, conventions)
    if engine != "memory":
        if engine not in ENGINE_MODULES:
            raise RankwiseError(f"unknown engine {engine!r}; expected one of {['memory', *ENGINE_MODULES]}")
        import importlib

        module = importlib.import_module(ENGINE_MODULES[engine])
        result: Result = module.evaluate_with_engine(plan, runs, chunk_rows=chunk_rows, client=client)
        return result
    if chunk_rows is not None or client is not None:
        raise RankwiseError("chunk_rows and client apply to engine='chunks', 'dask' or 'spark'")
    from rankwise.progress import step

    warnings: list[str] = list(plan.notes)
    sources = _as_runs(runs)
    with step("reading runs", total=len(sources)) as advance:
        loaded = []
        for obj, name in sources:
            loaded.append(load_run(obj, name=name))
            advance(1, f"reading runs: {loaded[-1].name}")
    _unique_names(loaded, warnings)
    results: list[RunScores] = []
    with step("scoring runs", total=len(loaded)) as advance:
        for run in loaded:
            scores = plan.score(run)
            warnings.extend(n for n in scores.warnings if n not in warnings)
            results.append(scores)
            advance(1, f"scoring runs: {run.name}")
    return plan.result(results, warnings)


def _is_prefs(obj: Any) -> bool:
    """Whether ``obj`` is loaded preference or judgment-group judgments (a ``Prefs``); the
    module is imported only when it is already loaded, so plain qrels never pay for it."""
    import sys

    module = sys.modules.get("rankwise.data.prefs")
    return module is not None and isinstance(obj, module.Prefs)


def _evaluate_grouped(judgments: Prefs, runs: Any, metrics: Sequence[str], conv: Conventions) -> Result:
    """``evaluate`` with preference judgments or qrels in judgment groups."""
    specs = [parse_metric(m) for m in metrics]
    check_judgments(specs, judgments.kind)
    if any(s.conventions for s in specs) or (judgments.kind != "subtopics" and any(s.rel is not None for s in specs)):
        raise RankwiseError("preference, judgment-group and diversity metrics take no conventions of their own")
    warnings: list[str] = list(judgments.notes)
    loaded = [load_run(obj, name=name) for obj, name in _as_runs(runs)]
    _unique_names(loaded, warnings)
    results = []
    for run in loaded:
        lists, notes = grouped_judgments(judgments, run, conv)
        warnings.extend(notes)
        if lists.n_queries == 0:
            raise RankwiseError(f"{run.name}: no query has both a ranking and judgments "
                                f"(run {run.source}, judgments {judgments.source})")
        scores = compute_scores(lists, specs, conv)
        scores.name = run.name
        results.append(scores)
    labels = {s.label: s.result_columns() for s in specs}
    sigs = {}
    for s in specs:
        cols = s.result_columns()
        for c in cols:
            sigs[s.label if len(cols) == 1 else c] = signature(s, c, conv) + f"|judgments={judgments.kind}"
    return Result(results, labels, sigs, conv, warnings)


def _merge(into: RunScores, other: RunScores) -> RunScores:
    """Columns computed under other conventions join the same run's scores (same queries)."""
    if not np.array_equal(into.query_ids, other.query_ids):
        raise RankwiseError(f"{into.name}: metrics with their own conventions evaluated different queries")
    into.values.update(other.values)
    into.kinds.update(other.kinds)
    into.summary_rule.update(other.summary_rule)
    into.details.update(other.details)
    into.warnings.extend(other.warnings)
    return into
