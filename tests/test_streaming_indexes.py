"""Flat batches with ``indexes=``, as torchmetrics' retrieval metrics take them: rows grouped by
query across batches and merges, equal to torchmetrics on its own documented examples and on
seeded batches; a flat batch without ``indexes`` is refused with a message that names it."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.errors import RankwiseError
from rankwise.streaming import MAP, MRR, NDCG, HitRate, PrecisionAtK, RankingMetrics, RecallAtK

torch = pytest.importorskip("torch", reason="torch is in the test extra (pip install -e '.[test]')")
retrieval = pytest.importorskip("torchmetrics.retrieval", reason="torchmetrics is in the test extra")

# torchmetrics' own docstring examples: indexes, preds, target and the value it prints
INDEXES = [0, 0, 0, 1, 1, 1, 1]
PREDS = [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]
TARGET = [False, False, True, False, True, False, True]
HIT_TARGET = [True, False, False, False, True, False, True]


@pytest.mark.parametrize(("metric", "target", "expected"), [
    (NDCG(), TARGET, 0.8467),           # RetrievalNormalizedDCG()
    (PrecisionAtK(k=2), TARGET, 0.5),   # RetrievalPrecision(top_k=2)
    (RecallAtK(k=2), TARGET, 0.75),     # RetrievalRecall(top_k=2)
    (HitRate(k=2), HIT_TARGET, 0.5),    # RetrievalHitRate(top_k=2)
    (MRR(), TARGET, 0.75),              # RetrievalMRR(): query 0 first relevant at 1, query 1 at 2
    (MAP(), TARGET, 0.7917),            # RetrievalMAP(): (1 + (1/2 + 2/3) / 2) / 2
])
def test_torchmetrics_documented_examples(metric, target, expected) -> None:
    assert round(metric.update(predictions=PREDS, targets=target, indexes=INDEXES).compute(), 4) == expected


PAIRS = [
    (lambda k: NDCG(k=k), lambda k: retrieval.RetrievalNormalizedDCG(top_k=k), True),
    (lambda k: MRR(k=k), lambda k: retrieval.RetrievalMRR(top_k=k), False),
    (lambda k: PrecisionAtK(k=k), lambda k: retrieval.RetrievalPrecision(top_k=k), False),
    (lambda k: RecallAtK(k=k), lambda k: retrieval.RetrievalRecall(top_k=k), False),
    (lambda k: HitRate(k=k), lambda k: retrieval.RetrievalHitRate(top_k=k), False),
    # AP at full depth: at a cut-off torchmetrics divides by the relevant rows it retrieved
    # within k, rankwise by every relevant row of the query (trec_eval's map_cut)
    (lambda k: MAP(), lambda k: retrieval.RetrievalMAP(), False),
]


@pytest.mark.parametrize("pair", range(len(PAIRS)))
@pytest.mark.parametrize("k", [None, 1, 3, 10])
@pytest.mark.parametrize("action", ["neg", "skip", "pos"])
def test_equal_to_torchmetrics_on_seeded_batches_across_queries(pair, k, action) -> None:
    ours, theirs, graded = PAIRS[pair]
    rng = np.random.default_rng(1000 * pair + (k or 0))
    ours_a, ours_b = (ours(k).empty() for _ in range(2))
    ours_a = type(ours_a)(**{**ours_a.params, "missing": {"neg": "zero", "skip": "skip", "pos": "one"}[action]})
    ours_b = ours_a.empty()
    peer = theirs(k)
    peer.empty_target_action = action
    for batch in range(6):   # queries 0-19 spread over six batches, each half to one of two states
        n = int(rng.integers(5, 40))
        indexes = rng.integers(0, 20, n)
        preds = rng.random(n)   # torchmetrics' AP treats a score <= 0 as not relevant: positive scores
        target = rng.integers(0, 4, n) if graded else (rng.random(n) < 0.2)
        (ours_a if batch % 2 else ours_b).update(predictions=preds, targets=target, indexes=indexes)
        peer.update(torch.tensor(preds), torch.tensor(target), indexes=torch.tensor(indexes))
    assert ours_a.merge(ours_b).compute() == pytest.approx(float(peer.compute()), abs=1e-6)


def test_empty_target_action_error_and_the_torchmetrics_spelling() -> None:
    rows = {"predictions": [0.5, 0.4, 0.9], "targets": [0, 0, 1], "indexes": [0, 0, 1]}
    # query 0 has no relevant row: neg scores it 0, pos 1, skip leaves it out
    assert MRR(empty_target_action="neg").update(**rows).compute() == 0.5     # (0 + 1) / 2
    assert MRR(empty_target_action="pos").update(**rows).compute() == 1.0     # (1 + 1) / 2
    assert MRR(empty_target_action="skip").update(**rows).compute() == 1.0    # 1 / 1
    with pytest.raises(RankwiseError, match="without a relevant item"):
        MRR(empty_target_action="error").update(**rows).compute()
    with pytest.raises(RankwiseError, match="empty_target_action='maybe': expected neg, skip, pos, error"):
        MRR(empty_target_action="maybe")


def test_a_flat_batch_without_indexes_is_refused() -> None:
    with pytest.raises(RankwiseError, match=r"flat batch .* needs indexes="):
        NDCG(k=3).update(predictions=[0.2, 0.3, 0.5], targets=[0, 1, 1])
    with pytest.raises(RankwiseError, match="needs indexes="):
        RankingMetrics(["P@2"]).update(predictions=[0.2, 0.3, 0.5], targets=[0, 1, 1])
    # the same list as one row of a padded batch is what it always was
    assert NDCG(k=3).update(predictions=[[0.2, 0.3, 0.5]], targets=[[0, 1, 1]]).compute() > 0


def test_indexed_and_padded_updates_do_not_mix() -> None:
    flat = MRR().update(predictions=[0.5, 0.4], targets=[0, 1], indexes=[0, 0])
    with pytest.raises(RankwiseError, match="give every batch with indexes="):
        flat.update(predictions=[[0.5, 0.4]], targets=[[0, 1]])
    padded = MRR().update(predictions=[[0.5, 0.4]], targets=[[0, 1]])
    with pytest.raises(RankwiseError, match="indexes= with every batch or with none"):
        padded.update(predictions=[0.5, 0.4], targets=[0, 1], indexes=[0, 0])
    with pytest.raises(RankwiseError, match="cannot merge"):
        flat.merge(padded)
    with pytest.raises(RankwiseError, match="one shape"):
        MRR().update(predictions=[0.5, 0.4], targets=[0, 1], indexes=[0])
    with pytest.raises(RankwiseError, match="whole numbers"):
        MRR().update(predictions=[0.5, 0.4], targets=[0, 1], indexes=[0.5, 1.5])


def test_rows_of_a_query_split_across_batches_are_one_list_and_the_state_round_trips() -> None:
    # query 7: scores 0.9 (label 0) in batch one, 0.8 (label 1) in batch two: RR 1/2 as one list
    metric = MRR().update(predictions=[0.9], targets=[0], indexes=[7])
    metric.update(predictions=[0.8, 0.1], targets=[1, 1], indexes=[7, 3])
    assert metric.compute() == 0.75                          # (1/2 + 1) / 2
    saved = metric.state_dict()
    assert MRR().load_state_dict(saved).compute() == 0.75
    # a row masked out by where is not kept
    masked = MRR().update(predictions=[0.9, 0.8], targets=[0, 1], indexes=[7, 7], where=[False, True])
    assert masked.compute() == 1.0
