"""The one merge protocol (``rankwise.merging``), checked on every accumulating state: the
streaming metrics (every case of ``test_streaming.METRICS``, which must cover every metric
class), ``MultiMetric``, the A/B ``VariantMoments``, click models' ``SufficientStatistics`` and
the JAX states. For each: merging parts equals the state of the whole, ``empty()`` is the
identity, the order of merges does not matter beyond rounding, and no input is changed."""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_streaming import METRICS, _close, padded, sentences

from rankwise import streaming as rs
from rankwise.clicks import DBN, PBM, ClickLog
from rankwise.clicks.models import SufficientStatistics, add_statistics
from rankwise.merging import Mergeable, merge_all
from rankwise.online.moments import VariantMoments


def _label_sets(rng: np.random.Generator, n: int) -> dict:
    targets = rng.integers(0, 2, (n, 5))
    targets[:, 0] = 1   # every row has a relevant label
    return {"predictions": rng.normal(size=(n, 5)), "targets": targets}


def _subtopics(rng: np.random.Generator, n: int) -> dict:
    return {"predictions": rng.normal(size=(n, 6)), "targets": rng.integers(0, 2, (n, 6, 3))}


def _values(rng: np.random.Generator, n: int) -> dict:
    return {"values": rng.normal(size=(n, 3)), "sample_weights": rng.uniform(0, 2, n),
            "where": rng.uniform(size=(n, 3)) < 0.9}


POPULARITY = np.arange(30, 0, -1).astype(float)   # 30 item ids, the first the most popular


def _top_ids(rng: np.random.Generator, n: int) -> dict:
    ids = np.stack([rng.permutation(30)[:6] for _ in range(n)])
    return {"predictions": ids, "where": rng.uniform(size=(n, 6)) < 0.9}


def mean_label_of_top_two(scores: np.ndarray, labels: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
    """The mean label of each list's two best-scored kept items (a per-list ranking function)."""
    masked = np.where(where if where is not None else True, scores, -np.inf)
    top = np.argsort(-masked, axis=1, kind="stable")[:, :2]
    return labels[np.arange(len(labels))[:, None], top].mean(axis=1)


CASES = {**METRICS,
         "average": (lambda: rs.Average(), _values),
         "function": (lambda: rs.FunctionMetric(mean_label_of_top_two), padded),
         "ndcg": (lambda: rs.NDCG(k=[3, 8]), padded), "map": (lambda: rs.MAP(), padded),
         "mrr": (lambda: rs.MRR(), padded), "hit_rate": (lambda: rs.HitRate(k=5), padded),
         "precision_at_k": (lambda: rs.PrecisionAtK(k=4), padded), "recall_at_k": (lambda: rs.RecallAtK(k=4), padded),
         "coverage_error": (lambda: rs.CoverageError(), _label_sets),
         "dcg_score": (lambda: rs.DCGScore(), _label_sets), "ndcg_score": (lambda: rs.NDCGScore(), _label_sets),
         "lrap": (lambda: rs.LabelRankingAveragePrecision(), _label_sets),
         "label_ranking_loss": (lambda: rs.LabelRankingLoss(), _label_sets),
         "diversity": (lambda: rs.DiversityMetrics(["alpha_nDCG@5", "P_IA@3"]), _subtopics),
         "item_exposure": (lambda: rs.ItemExposure(30, k=4, popularity=POPULARITY, train_users=POPULARITY / 2,
                                                   users_in_train=20), _top_ids),
         "mer": (lambda: rs.MatchErrorRate(), sentences), "wer_metrax": (lambda: rs.WER(), sentences),
         "wil": (lambda: rs.WordInformationLost(), sentences),
         "wip": (lambda: rs.WordInformationPreserved(), sentences)}
"""Every streaming metric class at least once (``test_streaming.METRICS`` and the rest)."""


def test_every_streaming_metric_class_has_a_merge_case() -> None:
    classes = {name for name, value in vars(rs).items() if inspect.isclass(value) and issubclass(value, rs.Metric)
               and value is not rs.Metric}
    assert classes == {type(factory()).__name__ for factory, _ in CASES.values()}


@pytest.mark.parametrize("name", list(CASES))
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 39), order=st.permutations([0, 1, 2]))
def test_streaming_states_follow_the_protocol(name: str, seed: int, cut: int, order: list[int]) -> None:
    factory, generate = CASES[name]
    batch = generate(np.random.default_rng(seed), 40)
    whole = factory().update(**batch)
    second = min(39, cut + 1 + seed % 5)
    parts = [factory().update(**{k: v[a:b] for k, v in batch.items()})
             for a, b in ((0, cut), (cut, second), (second, 40))]
    before = [copy.deepcopy(p.state) for p in parts]
    assert isinstance(parts[0], Mergeable)
    # parts merged = the whole; in any order; a + b = a.merge(b)
    _close(whole.compute(), (parts[0] + parts[1] + parts[2]).compute())
    _close(whole.compute(), merge_all([parts[i] for i in order]).compute())
    # empty() is the identity on both sides
    _close(parts[0].compute(), parts[0].empty().merge(parts[0]).compute())
    _close(parts[0].compute(), parts[0].merge(parts[0].empty()).compute())
    # no input was changed by any of it
    for part, state in zip(parts, before, strict=True):
        assert part.state.keys() == state.keys()
        for key in state:
            _close(np.asarray(state[key], dtype=float) if not isinstance(state[key], list) else len(state[key]),
                   np.asarray(part.state[key], dtype=float) if not isinstance(part.state[key], list)
                   else len(part.state[key]))


def test_merge_state_is_the_in_place_variant() -> None:
    a = rs.MeanSquaredError().update(predictions=[1.0], targets=[0.0])
    b = rs.MeanSquaredError().update(predictions=[3.0], targets=[0.0])
    assert a.merge(b).compute() == 5.0 and a.compute() == 1.0   # (1 + 9) / 2; a unchanged
    assert a.merge_state(b) is a and a.compute() == 5.0
    multi = rs.MultiMetric(mse=rs.MeanSquaredError(), mae=rs.MeanAbsoluteError())
    one = multi.empty().update(predictions=[1.0], targets=[0.0])
    two = multi.empty().update(predictions=[0.0], targets=[3.0])
    assert (one + two).compute() == {"mse": 5.0, "mae": 2.0}   # (1 + 9) / 2, (1 + 3) / 2
    assert one.compute() == {"mse": 1.0, "mae": 1.0}
    assert one.merge_state(two) is one and one.compute()["mae"] == 2.0


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 29))
def test_variant_moments_follow_the_protocol(seed: int, cut: int) -> None:
    rng = np.random.default_rng(seed)
    variants = rng.choice(["a", "b", "c"], 30).tolist()
    values = {"x": rng.normal(size=30), "y": rng.integers(0, 5, 30).astype(float)}
    whole = VariantMoments.from_units(variants, values)
    first = VariantMoments.from_units(variants[:cut], {k: v[:cut] for k, v in values.items()})
    rest = VariantMoments.from_units(variants[cut:], {k: v[cut:] for k, v in values.items()})
    saved = copy.deepcopy((first.n, first.means, first.comoments))
    for merged in (first + rest, rest + first, merge_all([first.empty(), first, rest])):
        for v in whole.variants:
            for c in ("x", "y"):
                assert merged.mean(v, c) == pytest.approx(whole.mean(v, c), rel=1e-12, abs=1e-12)
                np.testing.assert_allclose(merged.variance(v, c), whole.variance(v, c), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(first.n, saved[0])
    np.testing.assert_array_equal(first.comoments, saved[2])


def _log(seed: int, sessions: int) -> ClickLog:
    rng = np.random.default_rng(seed)
    docs = [[f"d{(i + j) % 7}" for j in range(4)] for i in rng.integers(0, 7, sessions)]
    return ClickLog.from_arrays([f"q{i % 3}" for i in range(sessions)], docs, rng.integers(0, 2, (sessions, 4)))


@pytest.mark.parametrize("model", [PBM, DBN])
def test_click_statistics_follow_the_protocol(model: type) -> None:
    log = _log(5, 60)
    fitted = model(prior=(1, 2)).fit(log, iterations=2)
    parts = [fitted._statistics(chunk) for chunk in log.chunks(25)]
    whole = fitted._statistics(log)
    merged = add_statistics(*parts)
    reordered = merge_all([SufficientStatistics(*parts[2]), SufficientStatistics(*parts[0]),
                           SufficientStatistics(*parts[1])])
    for candidate in (merged, reordered, merged.empty() + merged):
        sums, ll = candidate
        assert ll == pytest.approx(whole[1], rel=1e-12)
        for key, value in whole[0].items():
            np.testing.assert_allclose(sums[key], value, rtol=1e-12, atol=1e-12)
    first = SufficientStatistics(*parts[0])
    kept = {k: v.copy() for k, v in first.sums.items()}
    first + SufficientStatistics(*parts[1])
    for key, value in kept.items():
        np.testing.assert_array_equal(first.sums[key], value)


def test_jax_states_follow_the_protocol() -> None:
    jnp = pytest.importorskip("jax.numpy")
    import rankwise.jax as rj

    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=(6, 5)), rng.integers(0, 3, (6, 5))
    state = rj.RankingAtK.empty(families=("ndcg", "mrr"), k=(3,))
    whole = state.update(jnp.asarray(scores), jnp.asarray(labels))
    a = state.update(jnp.asarray(scores[:2]), jnp.asarray(labels[:2]))
    b = state.update(jnp.asarray(scores[2:]), jnp.asarray(labels[2:]))
    for merged in (a + b, b.merge(a), merge_all([state, a, b])):
        for key, value in whole.compute().items():
            np.testing.assert_allclose(np.asarray(merged.compute()[key]), np.asarray(value), rtol=1e-5)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 29))
def test_fusion_training_counts_follow_the_protocol(seed: int, cut: int) -> None:
    """A trained fusion method's counts of two disjoint sets of training queries merge into the
    counts of all of them (SegFuse's segments)."""
    from rankwise.fusion.methods import SEGFUSE_BOUNDS, segment_counts

    rng = np.random.default_rng(seed)
    query = np.repeat(np.arange(30), 20)
    position = np.tile(np.arange(20), 30) * rng.integers(1, 4)
    relevant = (rng.uniform(size=len(query)) < 0.3).astype(np.float64)
    first = query < cut
    whole = segment_counts(position, relevant, 30, SEGFUSE_BOUNDS)
    a = segment_counts(position[first], relevant[first], cut, SEGFUSE_BOUNDS)
    b = segment_counts(position[~first], relevant[~first], 30 - cut, SEGFUSE_BOUNDS)
    before = a.sums.copy()
    assert isinstance(a, Mergeable)
    np.testing.assert_allclose((a + b).sums, whole.sums, rtol=1e-12)
    np.testing.assert_allclose((b + a).estimates(), whole.estimates(), rtol=1e-12)
    assert (a + b).queries == 30 and (a.empty() + a).queries == a.queries
    np.testing.assert_array_equal(a.sums, before)
