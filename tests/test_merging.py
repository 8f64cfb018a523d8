"""One tester for every state (``rankwise.merging``'s protocol), as torchmetrics has one for
every metric. ``KINDS`` lists every kind of accumulating state with a data generator: each
streaming metric class (flat ``indexes=`` rows too), ``MultiMetric``, every JAX state, the
sufficient statistics of every fittable click model, the A/B ``VariantMoments`` and the fusion
training counts. One property test walks them all: three parts merged equal the state of the
whole, in any order; ``empty()`` is the identity on both sides; no input is changed; the
in-place variant (``merge_state``), where a state has one, agrees. A new state class that is
not listed fails ``test_every_state_kind_is_listed``."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_streaming import METRICS, padded, regression, sentences

from rankwise import streaming as rs
from rankwise.clicks import ClickLog
from rankwise.clicks.models import SufficientStatistics
from rankwise.clicks.registry import MODELS, fittable
from rankwise.experiments.moments import VariantMoments
from rankwise.merging import Mergeable, merge_all


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


def _flat_rows(rng: np.random.Generator, n: int) -> dict:
    return {"predictions": rng.random(n), "targets": rng.integers(0, 3, n), "indexes": rng.integers(0, 8, n)}


CASES["ndcg_flat_rows"] = (lambda: rs.NDCG(k=[3, 5]), _flat_rows)
CASES["multi"] = (lambda: rs.MultiMetric(mse=rs.MeanSquaredError(), mae=rs.MeanAbsoluteError()), regression)


@dataclass(frozen=True)
class Kind:
    """A kind of state: ``case(rng)`` gives three states of disjoint rows and the state of all of
    them; ``value(state)`` what must agree."""

    case: Callable[[np.random.Generator], tuple[list[Any], Any]]
    value: Callable[[Any], Any]
    rtol: float = 1e-9
    """How close merged values must be (JAX computes in float32: 1e-5)."""


def _streaming(name: str) -> Kind:
    factory, generate = CASES[name]

    def case(rng: np.random.Generator) -> tuple[list[Any], Any]:
        batch = generate(rng, 40)
        cut, second = int(rng.integers(1, 38)), 0
        second = int(rng.integers(cut + 1, 40))
        parts = [factory().update(**{k: v[a:b] for k, v in batch.items()})
                 for a, b in ((0, cut), (cut, second), (second, 40))]
        return parts, factory().update(**batch)

    return Kind(case, lambda m: m.compute())


def _jax(build: Callable[[], Any], generate: Callable[[np.random.Generator, int], tuple]) -> Kind:
    def case(rng: np.random.Generator) -> tuple[list[Any], Any]:
        jnp = pytest.importorskip("jax.numpy", reason="jax is in the test extra")
        arrays = [jnp.asarray(a) for a in generate(rng, 12)]
        empty = build()
        parts = [empty.update(*[a[lo:hi] for a in arrays]) for lo, hi in ((0, 3), (3, 7), (7, 12))]
        return parts, empty.update(*arrays)

    return Kind(case, lambda state: {k: np.asarray(v, dtype=float) for k, v in state.compute().items()}
                if isinstance(state.compute(), dict) else np.asarray(state.compute(), dtype=float), rtol=1e-5)


def _jax_kinds() -> dict[str, Kind]:
    try:
        import rankwise.jax as rj
    except ImportError:
        return {}
    probabilities = lambda rng, n: (rng.uniform(size=n), rng.integers(0, 2, n))   # noqa: E731
    lists = lambda rng, n: (rng.normal(size=(n, 5)), rng.integers(0, 3, (n, 5)))   # noqa: E731
    return {
        "jax BinaryCounts": _jax(lambda: rj.BinaryCounts.empty(), probabilities),
        "jax LogLoss": _jax(lambda: rj.LogLoss.empty(), lambda rng, n: (rng.uniform(0.01, 0.99, n),
                                                                          rng.integers(0, 2, n))),
        "jax GridAUC": _jax(lambda: rj.GridAUC.empty(num_thresholds=50), probabilities),
        "jax ClickLikelihood": _jax(lambda: rj.ClickLikelihood.empty(positions=5),
                                    lambda rng, n: (np.log(rng.uniform(0.05, 0.95, (n, 5))),
                                                    rng.integers(0, 2, (n, 5)))),
        "jax RankingAtK": _jax(lambda: rj.RankingAtK.empty(families=("ndcg", "mrr"), k=(3,)), lists),
        "jax Moments": _jax(lambda: rj.Moments.empty(), lambda rng, n: (rng.normal(size=n), rng.normal(size=n))),
    }


def _click_log(rng: np.random.Generator, sessions: int) -> ClickLog:
    docs = [[f"d{(i + j) % 7}" for j in range(4)] for i in rng.integers(0, 7, sessions)]
    return ClickLog.from_arrays([f"q{i % 3}" for i in range(sessions)], docs, rng.integers(0, 2, (sessions, 4)))


def _click_statistics(name: str) -> Kind:
    """The E-step statistics of a model fitted for two iterations, on three chunks of a log and
    on all of it (the same parameters: the sums of the chunks are the sums of the log)."""
    def case(rng: np.random.Generator) -> tuple[list[Any], Any]:
        log = _click_log(rng, 60)
        fitted = MODELS.get(name).target().fit(log, iterations=2)
        parts = [SufficientStatistics(*fitted._statistics(chunk)) for chunk in log.chunks(25)]
        return parts, SufficientStatistics(*fitted._statistics(log))

    return Kind(case, lambda s: ({k: np.asarray(v, dtype=float) for k, v in s.sums.items()}, s.log_likelihood))


def _moments(rng: np.random.Generator) -> tuple[list[Any], Any]:
    variants = rng.choice(["a", "b", "c"], 30).tolist()
    values = {"x": rng.normal(size=30), "y": rng.integers(0, 5, 30).astype(float)}
    parts = [VariantMoments.from_units(variants[lo:hi], {k: v[lo:hi] for k, v in values.items()})
             for lo, hi in ((0, 9), (9, 20), (20, 30))]
    return parts, VariantMoments.from_units(variants, values)


def _moment_values(m: VariantMoments) -> dict:
    return {(v, c): (m.mean(v, c), m.variance(v, c)) for v in sorted(m.variants) for c in ("x", "y")}


def _fusion_counts(rng: np.random.Generator) -> tuple[list[Any], Any]:
    from rankwise.fusion.methods import SEGFUSE_BOUNDS, segment_counts

    query = np.repeat(np.arange(30), 20)
    position = np.tile(np.arange(20), 30) * rng.integers(1, 4)
    relevant = (rng.uniform(size=len(query)) < 0.3).astype(np.float64)
    parts = [segment_counts(position[(query >= lo) & (query < hi)], relevant[(query >= lo) & (query < hi)],
                            hi - lo, SEGFUSE_BOUNDS) for lo, hi in ((0, 7), (7, 19), (19, 30))]
    return parts, segment_counts(position, relevant, 30, SEGFUSE_BOUNDS)


KINDS: dict[str, Kind] = {
    **{name: _streaming(name) for name in CASES},
    **_jax_kinds(),
    **{f"click {name}": _click_statistics(name) for name in fittable()},
    "ab VariantMoments": Kind(_moments, _moment_values),
    "fusion TrainingCounts": Kind(_fusion_counts, lambda c: (np.asarray(c.sums, dtype=float), c.queries)),
}
"""Every kind of accumulating state, by name."""


def test_every_state_kind_is_listed() -> None:
    classes = {name for name, value in vars(rs).items() if inspect.isclass(value) and issubclass(value, rs.Metric)
               and value is not rs.Metric}
    assert classes <= {type(factory()).__name__ for factory, _ in CASES.values()}
    jax = pytest.importorskip("rankwise.jax", reason="jax is in the test extra")
    from rankwise.jax.state import SumState

    states = {name for name, value in vars(jax).items() if inspect.isclass(value)
              and (issubclass(value, SumState) or hasattr(value, "merge")) and value is not SumState}
    assert {f"jax {name}" for name in states} <= set(KINDS), states
    assert {f"click {name}" for name in fittable()} <= set(KINDS)


def _leaves(value: Any) -> list[np.ndarray]:
    """Every number a state holds, in a fixed order (to see that nothing changed it)."""
    if isinstance(value, Mapping):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    if hasattr(value, "state") and isinstance(value.state, dict):
        return _leaves(value.state)
    if hasattr(value, "metrics") and isinstance(value.metrics, dict):
        return _leaves({k: m.state for k, m in value.metrics.items()})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _leaves({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if hasattr(value, "__dict__") and not isinstance(value, (str, bytes)):
        return _leaves({k: v for k, v in vars(value).items() if not callable(v)})
    try:
        return [np.array(value, dtype=float)]
    except (TypeError, ValueError):
        return []


def _close(a: Any, b: Any, rtol: float = 1e-9) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b)
        for key in a:
            _close(a[key], b[key], rtol)
    elif isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _close(x, y, rtol)
    else:
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=rtol,
                                   equal_nan=True)


@pytest.mark.parametrize("name", list(KINDS))
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), order=st.permutations([0, 1, 2]))
def test_every_state_follows_the_protocol(name: str, seed: int, order: list[int]) -> None:
    kind = KINDS[name]
    parts, whole = kind.case(np.random.default_rng(seed))

    def _same(a: Any, b: Any) -> None:
        _close(a, b, kind.rtol)

    before = [copy.deepcopy(_leaves(p)) for p in parts]
    assert isinstance(parts[0], Mergeable)
    expected = kind.value(whole)
    # parts merged = the whole, in any order; a + b = a.merge(b)
    _same(kind.value(parts[0].merge(parts[1]).merge(parts[2])), expected)
    _same(kind.value(merge_all([parts[i] for i in order])), expected)
    # empty() is the identity on both sides
    _same(kind.value(parts[0].empty().merge(parts[0])), kind.value(parts[0]))
    _same(kind.value(parts[0].merge(parts[0].empty())), kind.value(parts[0]))
    # the in-place variant agrees and changes only its own state
    if hasattr(parts[0], "merge_state"):
        own = copy.deepcopy(parts[0])
        assert own.merge_state(parts[1]) is own
        _same(kind.value(own.merge_state(parts[2])), expected)
    # no input was changed by any of it
    for part, saved in zip(parts, before, strict=True):
        now = _leaves(part)
        assert len(now) == len(saved)
        for x, y in zip(now, saved, strict=True):
            np.testing.assert_array_equal(x, y)


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
