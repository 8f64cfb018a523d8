"""``Average`` (metrax's weighted mean) and ``FunctionMetric`` (CLAX's ``RaxMetric``: any
per-list ranking function as a streaming metric), against metrax and rax."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise import streaming as rs
from rankwise.state import MetricInputError


def test_average_equals_numpy_and_metrax() -> None:
    rng = np.random.default_rng(0)
    values, weights = rng.normal(size=50), rng.uniform(0, 2, 50)
    ours = rs.Average().update(values=values[:20], sample_weights=weights[:20]).merge(
        rs.Average().update(values=values[20:], sample_weights=weights[20:]))
    assert ours.compute() == pytest.approx(np.average(values, weights=weights), rel=1e-12)
    metrax = pytest.importorskip("metrax")
    jnp = pytest.importorskip("jax.numpy")
    theirs = metrax.Average.from_model_output(jnp.array(values), sample_weights=jnp.array(weights)).compute()
    assert ours.compute() == pytest.approx(float(theirs), rel=1e-6)
    assert np.isnan(rs.Average().compute()) and rs.Average(zero_division=0.0).compute() == 0.0
    # a saved state loads into a metric of the same parameters (an undefined mean is None, not NaN)
    assert rs.Average().load_state_dict(ours.state_dict()).compute() == ours.compute()
    with pytest.raises(MetricInputError, match="finite and non-negative"):
        rs.Average().update(values=[1.0, 2.0], sample_weights=[1.0, -1.0])


@pytest.mark.parametrize(("name", "options"), [("ndcg_metric", {"topn": 3}), ("mrr_metric", {}),
                                               ("precision_metric", {"topn": 2})])
def test_function_metric_of_rax_metrics_equals_rax(name: str, options: dict) -> None:
    """rax's metrics averaged over lists, batch by batch and merged, with a where mask."""
    rax = pytest.importorskip("rax")
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(1)
    scores, labels = rng.normal(size=(12, 6)), rng.integers(0, 3, (12, 6)).astype(float)
    labels[:, 0] = np.maximum(labels[:, 0], 1)   # every list has a relevant item
    where = rng.uniform(size=(12, 6)) < 0.85
    where[:, 0] = True
    function = getattr(rax, name)
    ours = rs.FunctionMetric(function, **options)
    ours = ours.update(predictions=scores[:5], targets=labels[:5], where=where[:5]).merge(
        ours.empty().update(predictions=scores[5:], targets=labels[5:], where=where[5:]))
    theirs = function(jnp.array(scores), jnp.array(labels), where=jnp.array(where), **options)
    assert ours.compute() == pytest.approx(float(theirs), rel=1e-6)
    saved = ours.state_dict()
    assert saved["params"]["function"].endswith(name)
    assert rs.FunctionMetric(function, **options).load_state_dict(saved).compute() == ours.compute()


def test_function_metric_refuses_what_it_cannot_average() -> None:
    with pytest.raises(MetricInputError, match="expected a function"):
        rs.FunctionMetric("ndcg")   # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="one per list"):
        rs.FunctionMetric(lambda s, lab: np.array([1.0])).update(predictions=np.ones((3, 2)), targets=np.ones((3, 2)))
