"""The no-shuffle top-k combiner: partitions that keep only the rows that can be in their
query's top k give the whole run's per-query values, means and warnings, bit for bit, for
every measure it accepts; it refuses measures and conventions that read whole rankings."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest
from test_scale_chunks import GOLDEN, METRICS, _generated, assert_same

from rankwise.data.load import load_run
from rankwise.errors import InputError
from rankwise.evaluation import EvaluationPlan, evaluate
from rankwise.scale.frames import ORDER_COLUMN
from rankwise.scale.gather import named_result
from rankwise.scale.topk import keep_top_rows, score_kept, top_k_needed

COLUMNS = ("qid", "docno", "score")


def _bounded(metrics: list[str]) -> list[str]:
    """The measures the combiner accepts (each alone)."""
    return [m for m in metrics if top_k_needed(EvaluationPlan.build({"q": {"d": 1}}, [m], None, {})) is not None]


BOUNDED = _bounded(METRICS + ["ndcg@3", "P@1", "recall@1000", "P", "ndcg_cut", '{"dcg": {"k": 7}}',
                              '{"precision": {"k": 5, "relevant_rating_threshold": 2}}'])


def _frame_of(run_path) -> pd.DataFrame:
    run = load_run(run_path)
    return pd.DataFrame({"qid": run.query.to_pylist(), "docno": run.doc.to_pylist(), "score": run.score})


def _combined(qrels, frame: pd.DataFrame, metrics: list[str], partitions: int, seed: int, **conventions):
    """The combiner as an engine runs it: rows dealt at random over ``partitions`` partitions
    (each row keeps its place in the input), each partition reduced to its top k rows."""
    plan = EvaluationPlan.build(qrels, metrics, None, conventions)
    k = top_k_needed(plan)
    assert k is not None
    frame = frame.assign(**{ORDER_COLUMN: np.arange(len(frame))})
    where = np.random.default_rng(seed).integers(0, partitions, len(frame))
    kept = [keep_top_rows(frame[where == p], COLUMNS, k, plan.conventions.score_precision) for p in range(partitions)]
    if k * partitions * 4 < len(frame) / frame["qid"].nunique():  # far fewer rows than a ranking's
        assert sum(len(rows) for rows, _ in kept) < len(frame) / 2
    return named_result(plan, [(score_kept(plan, kept, COLUMNS, "run", "<DataFrame>"), "<DataFrame>")])


def test_the_combiner_accepts_rank_cutoffs_only() -> None:
    assert {"ndcg_cut", "P", "recall", "ndcg@3", "rr@10", "hits", "ERR", "P@1", "es_dcg"} <= set(BOUNDED)
    for whole_ranking in ("map", "recip_rank", "ndcg", "bpref", "num_ret", "Rprec", "iprec_at_recall",
                          "Rprec_mult", "recall_at_precision@10", "runid", "infAP"):
        assert whole_ranking not in BOUNDED
    plan = EvaluationPlan.build({"q": {"d": 1}}, ["ndcg@10", "P@5", "recall@100"], None, {})
    assert top_k_needed(plan) == 100
    assert top_k_needed(EvaluationPlan.build({"q": {"d": 1}}, ["ndcg@10", "P@50"], None, {"depth": 20})) == 20
    for conventions in ({"duplicates": "first"}, {"duplicates": "best"}, {"judged_only": True},
                        {"universe": "run"}, {"retrieved": "positive"}, {"ties": "expected"}):
        assert top_k_needed(EvaluationPlan.build({"q": {"d": 1}}, ["ndcg@10"], None, conventions)) is None


@pytest.mark.parametrize("run", ["BM25.dl19.trec", "SPLADE_P_P_ENSEMBLE_DISTIL.dl20.trec"])
def test_every_accepted_measure_equals_the_whole_run_on_real_runs(run: str) -> None:
    qrels = GOLDEN / ("qrels.dl19-passage.txt" if "dl19" in run else "qrels.dl20-passage.txt")
    frame = _frame_of(GOLDEN / run).sample(frac=1.0, random_state=3, ignore_index=True)  # no query order left
    for conventions in ({}, {"missing": "zero", "rel_level": 2}, {"ties": "input", "depth": 50}):
        for metric in BOUNDED:  # each alone: its own k, the tightest cut
            assert_same(evaluate(qrels, frame, [metric], **conventions),
                        _combined(qrels, frame, [metric], 4, 1, **conventions))
        small_k = ["ndcg@3", "P@1", "rr@10", "accuracy@10", "dcg@10"]
        assert_same(evaluate(qrels, frame, small_k, **conventions),
                    _combined(qrels, frame, small_k, 7, 2, **conventions))


@pytest.mark.parametrize("conventions", [{}, {"ties": "input"}, {"ties": "docid_asc"},
                                         {"score_precision": "float32", "missing": "zero"}])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ties_across_the_cut_and_across_partitions(conventions: dict, seed: int) -> None:
    """Scores of one decimal tie often; ties straddling k sit in different partitions."""
    qrels, rows = _generated(seed)
    seen = set()
    rows = [r for r in rows if (r[0], r[1]) not in seen and not seen.add((r[0], r[1]))]  # no duplicates
    random.Random(seed).shuffle(rows)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    if conventions.get("score_precision") == "float32":  # equal as C floats, not as doubles
        frame["score"] += np.where(np.arange(len(frame)) % 2 == 0, 0.0, 1e-12)
    metrics = ["ndcg@3", "P@2", "RR@3", "recall@5", "hits@1"]
    whole = evaluate(qrels, frame, metrics, **conventions)
    assert any(w.kind == "tie_straddling" for w in whole.warnings)
    for partitions in (1, 3, 50):
        assert_same(whole, _combined(qrels, frame, metrics, partitions, seed, **conventions))


def test_a_duplicate_inside_one_partition_fails_as_in_memory() -> None:
    """The duplicate's copies score below the top k of their partition: they are kept anyway."""
    frame = pd.DataFrame({"qid": ["q"] * 5, "docno": ["a", "b", "c", "z", "z"], "score": [5.0, 4.0, 3.0, 0.1, 0.2]})
    kept, dropped = keep_top_rows(frame, COLUMNS, 2)
    assert kept["docno"].tolist() == ["a", "b", "z", "z"] and dropped.to_dict() == {"q": 1}  # c dropped
    plan = EvaluationPlan.build({"q": {"a": 1}}, ["P@2"], None, {})
    with pytest.raises(InputError, match="listed twice for query"):
        score_kept(plan, [(kept.assign(**{ORDER_COLUMN: range(len(kept))}), dropped)], COLUMNS, "run", "<frame>")


def test_scores_that_are_not_numbers_reach_the_driver() -> None:
    frame = pd.DataFrame({"qid": ["q"] * 3, "docno": ["a", "b", "c"], "score": [5.0, 4.0, float("nan")]})
    assert keep_top_rows(frame, COLUMNS, 1)[0]["docno"].tolist() == ["a", "c"]
    with pytest.raises(InputError, match="score"):
        evaluate({"q": {"a": 1}}, frame, ["P@1"])  # as the driver then reports it
