"""One result shape (``rankwise.results``): every analysis returns ``table`` (a DataFrame),
``to_dict()`` (JSON-plain: ``json.dumps`` writes it without a ``default``), ``warnings`` (a
list of text) and ``settings`` (a dict)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from rankwise.results import ResultShape, json_plain

QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"b": 1, "d": 0}, "q3": {"a": 1, "c": 2}}
RUN_X = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"b": 2.0, "d": 1.0}, "q3": {"c": 2.0, "a": 1.0}}
RUN_Y = {"q1": {"b": 3.0, "a": 2.0}, "q2": {"d": 2.0, "b": 1.0}, "q3": {"a": 2.0, "c": 1.0}}
RUN_Z = {"q1": {"c": 3.0, "a": 2.0}, "q2": {"b": 2.0}, "q3": {"c": 2.0}}


def _evaluate() -> Any:
    from rankwise import evaluate

    return evaluate(QRELS, {"x": RUN_X, "y": RUN_Y}, ["ndcg@3", "map"])


def _compare() -> Any:
    from rankwise.comparison import compare

    return compare(QRELS, {"x": RUN_X, "y": RUN_Y, "z": RUN_Z}, ["ndcg@3"], test="t")


def _ab() -> Any:
    from rankwise.experiments import analyze

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"unit": np.arange(60), "variant": np.where(np.arange(60) % 2, "b", "a"),
                          "clicks": rng.integers(0, 4, 60), "views": rng.integers(1, 5, 60)})
    return analyze(frame, metrics={"ctr": "clicks/views"}, unit="unit", variant="variant")


def _ope() -> Any:
    from rankwise.counterfactual.bandit_log import evaluate_policy, read_bandit_log

    log = read_bandit_log({"action": ["a", "b", "a", "b"], "position": [1] * 4, "reward": [1, 0, 1, 1],
                           "pscore": [0.5] * 4})
    return evaluate_policy(log, {("a", 1): 1.0}, estimators=["ips", "snips"], resamples=50)


def _labels() -> Any:
    from rankwise.agreement.labels import label_agreement

    return label_agreement(QRELS, {"q1": {"a": 2, "b": 1, "c": 1}, "q2": {"b": 1, "d": 0}}, resamples=20)


def _systems() -> Any:
    from rankwise.agreement.systems import system_agreement

    return system_agreement(QRELS, QRELS, {"x": RUN_X, "y": RUN_Y, "z": RUN_Z}, "P@1")


def _fusion() -> Any:
    from rankwise.fusion.optimize import optimize

    return optimize(QRELS, [RUN_X, RUN_Y], "wsum", "recip_rank", folds=3, grid={"weights": [[1, 0], [0, 1]]})


def _simulation() -> Any:
    from rankwise.interleaving.simulation import simulate_comparison

    return simulate_comparison({"q": {"d1": 3, "d2": 0, "d3": 1}}, {"q": {"d1": 1, "d2": 2}},
                               {"q": {"d1": 2, "d3": 1}}, depth=2, impressions=[100], repetitions=5,
                               check_impressions=100, samples=5)


def _rank_eval() -> Any:
    from rankwise.rankeval import CallableBackend, parse_spec, rank_eval

    rated = {"id": "q", "request": {"query": {"match_all": {}}},
             "ratings": [{"_index": "i", "_id": "a", "rating": 3}, {"_index": "i", "_id": "b", "rating": 0}]}
    backend = CallableBackend(lambda body, size: [("b", 4.0), ("a", 3.0)][:size], name="i")
    return rank_eval(parse_spec({"requests": [rated], "metric": {"precision": {"k": 2}}}), backend)


def _beyond() -> Any:
    from rankwise.recsys import beyond_accuracy

    return beyond_accuracy({"u1": ["a", "b"], "u2": ["b", "c"]}, ["coverage@2", "epc@2"],
                           train={"u1": ["c"], "u2": ["a", "a"]})


def _estimate() -> Any:
    from rankwise.counterfactual import estimate

    return estimate([1, 0, 1], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5], "ips(clip=1.5)", resamples=20)


def _estimate_all() -> Any:
    from rankwise.counterfactual import estimate_all

    return estimate_all([1, 0, 1], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5], resamples=20)


def _slate() -> Any:
    from rankwise.counterfactual import slate_estimate

    return slate_estimate([0, 0, 1, 1], [1, 0, 1, 1], [0.5, 0.5, 0.5, 0.25], [1, 0.5, 0.25, 1], resamples=20)


def _pbm_ips() -> Any:
    from rankwise.counterfactual import pbm_ips

    return pbm_ips([0, 0, 1], [1, 2, 1], [1, 1, 0], [2, 1, 1], [1.0, 0.5], k=2, resamples=20)


def _preferences() -> Any:
    from rankwise.interleaving import preferences

    return preferences(np.array([[1, 0], [0, 1], [1, 0]]), names=["A", "B"], resamples=20)


def _clicks_evaluate() -> Any:
    from rankwise.clicks import GlobalCTR, evaluate_model
    from rankwise.clicks.log import ClickLog

    log = ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["a", "b"]], [[1, 0], [0, 0]])
    return evaluate_model(GlobalCTR().fit(log), log)


def _offline_online() -> Any:
    from rankwise.agreement import offline_online

    table = pd.DataFrame({"experiment": [f"e{i}" for i in range(6)], "offline": [0.01 * i for i in range(6)],
                          "online": [0.002 * i + 0.001 * (i % 2) for i in range(6)]})
    return offline_online(table, "offline", "online", resamples=20)


RESULTS: dict[str, Callable[[], Any]] = {
    "evaluate": _evaluate, "compare": _compare, "ab": _ab, "ope": _ope, "agree-labels": _labels,
    "agree-systems": _systems, "fuse-optimize": _fusion, "interleave-simulate": _simulation, "rank-eval": _rank_eval,
    "beyond": _beyond, "estimate": _estimate, "estimate-all": _estimate_all, "slate-estimate": _slate,
    "pbm-ips": _pbm_ips, "preferences": _preferences, "clicks-evaluate": _clicks_evaluate,
    "offline-online": _offline_online}

PUBLIC = ("rankwise", "rankwise.experiments", "rankwise.interleaving", "rankwise.counterfactual", "rankwise.online",
          "rankwise.clicks", "rankwise.recsys", "rankwise.fusion",
          "rankwise.agreement", "rankwise.rankeval", "rankwise.streaming", "rankwise.comparison")
NOT_RESULTS = {
    "rankwise.experiments.statistics_table": "prepares the per-variant input table analyze reads",
    "rankwise.online.statistics_table": "the same function, under the package's former name",
    "rankwise.clicks.placement_features": "a feature table for fitting, not an analysis",
    "rankwise.clicks.read_log": "a reader: returns the log",
    "rankwise.agreement.qpp_correlations": "the correlations of one predictor, a part of agreement's result",
    "rankwise.streaming.per_row": "a helper: per-row values of a streaming update",
}
"""Public functions that return a plain value on purpose, and why."""


def test_every_public_function_that_analyses_returns_a_result() -> None:
    """No public function returns a dict, a bare DataFrame or Any unless it is listed above."""
    import importlib
    import inspect

    plain = []
    for module_name in PUBLIC:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            function = getattr(module, name)
            returned = str(getattr(function, "__annotations__", {}).get("return", "")) \
                if inspect.isfunction(function) else ""
            if any(word in returned for word in ("dict", "DataFrame", "Any")) \
                    and f"{module_name}.{name}" not in NOT_RESULTS:
                plain.append(f"{module_name}.{name} -> {returned}")
    assert not plain, "return a result class (rankwise.results), or list it in NOT_RESULTS with why: " + \
        ", ".join(plain)


def test_every_result_class_is_walked() -> None:
    """Every class of ``src/`` that declares ``settings`` and ``warnings`` fields is a result, and
    one of ``RESULTS`` makes it: a new result class fails here until it is walked."""
    import ast
    from pathlib import Path

    declared = set()
    for path in (Path(__file__).resolve().parent.parent / "src" / "rankwise").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                fields = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                          and isinstance(s.target, ast.Name)}
                if {"settings", "warnings"} <= fields:
                    declared.add(node.name)
    made = {type(make()).__name__ for make in RESULTS.values()}
    assert declared <= made, sorted(declared - made)


@pytest.mark.parametrize("name", list(RESULTS))
def test_every_result_has_the_one_shape(name: str) -> None:
    result = RESULTS[name]()
    assert isinstance(result, ResultShape)
    assert isinstance(result.table, pd.DataFrame) and len(result.table) > 0
    assert isinstance(result.warnings, list) and all(isinstance(w, str) for w in result.warnings)
    assert isinstance(result.settings, dict) and result.settings
    document = result.to_dict()
    json.dumps(document)   # plain: no numpy scalar, no array, no tuple key needs a default


def test_json_plain_by_hand() -> None:
    frame = pd.DataFrame({"a": [1, 2], "p": [0.5, np.nan]})
    assert json_plain({"t": frame, 3: (np.int32(4), np.bool_(True)), "when": pd.Timestamp("2026-01-02")}) == {
        "t": [{"a": 1, "p": 0.5}, {"a": 2, "p": None}], "3": [4, True], "when": "2026-01-02T00:00:00"}
    assert json_plain([np.float32(np.inf)]) == [float("inf")]   # a one-sided bound stays infinite


@pytest.mark.parametrize("name", list(RESULTS))
def test_every_result_carries_a_signature_that_reads_back(name: str) -> None:
    """``settings["signature"]`` (or one per measure in ``signatures``): the analysis or the
    measure, every setting, the version; ``Signature.parse`` gives it back unchanged."""
    from rankwise import __version__
    from rankwise.results import Signature

    settings = RESULTS[name]().settings
    texts = [settings["signature"]] if "signature" in settings else list(settings["signatures"].values())
    assert texts
    for text in texts:
        read = Signature.parse(text)
        assert str(read) == text and read.version == __version__


def test_a_signature_by_hand() -> None:
    from rankwise.results import Signature

    made = Signature.of("ope", estimator="ips(clip=1.5)", alpha=0.05, levels=[1, 2], prior=None, exact=True,
                        label="a|b")
    # the version last; lists with commas; None and booleans as words; a '|' inside a value escaped
    assert str(made).rsplit("|", 1)[0] == "ope|estimator=ips(clip=1.5)|alpha=0.05|levels=1,2|prior=none|exact=true" \
        "|label=a%7Cb"
    assert Signature.parse(str(made)).value("label") == "a|b"
    with pytest.raises(ValueError, match="no trailing rankwise-VERSION"):
        Signature.parse("nDCG@10|ties=trec")
    with pytest.raises(ValueError, match="not key=value"):
        Signature.parse("nDCG@10|trec|rankwise-0.1.0")


@pytest.mark.parametrize("name", list(RESULTS))
def test_a_result_says_warnings_only(name: str) -> None:
    """One word for what the user should know: ``warnings`` (no result keeps ``notes`` beside
    it, in Python or in its JSON)."""
    result = RESULTS[name]()
    assert not hasattr(result, "notes")
    assert "notes" not in result.to_dict()
