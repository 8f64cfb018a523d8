"""Click-model log-likelihood and perplexity per rank as a JAX state (CLAX's definitions, as
``rankwise.streaming.LogLikelihood`` / ``ConditionalPerplexity`` / ``Perplexity``).

Inputs are natural-log click probabilities [batch, ranks] (conditional ones for the
log-likelihood and the conditional perplexity, unconditional ones for the perplexity), clicks
(0/1) and ``where``. A cell's likelihood is ``log p`` for a click and ``log(1 - p)`` otherwise
(a stable ``log1mexp``). The state is a sum and a count per rank: it merges by addition and
reduces across devices with one ``psum``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rankwise.errors import RankwiseError
from rankwise.jax.state import SumState, float_dtype, pytree_state, static


def log1mexp(x: jax.Array) -> jax.Array:
    """log(1 - exp(x)) for x <= 0, accurate near 0 and far below it (Mächler 2012).

    >>> [round(float(v), 4) for v in log1mexp(jnp.array([-1e-3, -0.6931472, -50.0]))]
    [-6.9083, -0.6931, -0.0]
    """
    near = x > -jnp.log(2.0)
    return jnp.where(near, jnp.log(-jnp.expm1(jnp.where(near, x, -1.0))), jnp.log1p(-jnp.exp(jnp.where(near, -1.0, x))))


@pytree_state
class ClickLikelihood(SumState):
    """Sum and count of the clicks' log-likelihood per rank (``positions`` ranks).

    >>> s = ClickLikelihood.from_model_output(jnp.array([[-0.01, -10.0, -0.7]]), jnp.array([[1, 0, 1]]), positions=3)
    >>> out = s.compute()
    >>> round(float(out["log_likelihood"]), 6), [round(float(v), 5) for v in out["perplexity_per_rank"]]
    (-0.236682, [1.01005, 1.00005, 2.01375])
    """

    total: jax.Array
    count: jax.Array
    positions: int = static(10)

    @classmethod
    def empty(cls, positions: int = 10) -> ClickLikelihood:
        z = jnp.zeros(int(positions), float_dtype())
        return cls(z, z, int(positions))

    @classmethod
    def from_model_output(cls, log_probs: Any, clicks: Any, where: Any = None, **config: Any) -> ClickLikelihood:
        return cls.empty(**config).update(log_probs, clicks, where)

    def update(self, log_probs: Any, clicks: Any, where: Any = None) -> ClickLikelihood:
        logp = jnp.atleast_2d(jnp.asarray(log_probs, dtype=float_dtype()))
        ranks = logp.shape[1]
        if ranks > self.positions:
            raise RankwiseError(f"ClickLikelihood.update: {ranks} ranks, but the state has positions={self.positions}")
        keep = jnp.ones(logp.shape, bool) if where is None else jnp.atleast_2d(jnp.asarray(where, bool))
        ll = jnp.where(jnp.atleast_2d(jnp.asarray(clicks)) > 0, logp, log1mexp(logp))
        total = self.total.at[:ranks].add(jnp.where(keep, ll, 0.0).sum(axis=0))
        count = self.count.at[:ranks].add(keep.sum(axis=0).astype(self.count.dtype))
        return ClickLikelihood(total, count, self.positions)

    def compute(self) -> dict[str, jax.Array]:
        """Pooled mean log-likelihood, its mean per rank, the perplexity per rank
        (exp(-mean log-likelihood at r)) and the perplexity (mean over ranks with data)."""
        per_rank = self.total / jnp.where(self.count > 0, self.count, jnp.nan)
        perplexity = jnp.exp(-per_rank)
        seen = self.count > 0
        n = self.count.sum()
        return {"log_likelihood": self.total.sum() / jnp.where(n > 0, n, jnp.nan),
                "log_likelihood_per_rank": per_rank, "perplexity_per_rank": perplexity,
                "perplexity": jnp.where(seen, perplexity, 0.0).sum() / jnp.where(seen.any(), seen.sum(), jnp.nan)}
