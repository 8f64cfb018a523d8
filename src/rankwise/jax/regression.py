"""Regression states for JAX: count, means, sums of squared deviations and the co-moment of
predictions and targets, plus the sums of squared and absolute errors, merged with Chan,
Golub & LeVeque's formulas. Means are kept relative to a shift (the first pair seen), as the
NumPy state keeps them, so values far from 0 with a small spread keep their digits in float32.
``compute()`` gives MSE, RMSE, MAE, R² and Pearson's r as ``rankwise.streaming`` defines them."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rankwise.jax.state import float_dtype, pytree_state


@pytree_state
class Moments:
    """Running moments of (prediction, target) pairs.

    >>> import jax.numpy as jnp
    >>> s = Moments.from_model_output(jnp.array([2.5, 0.0, 2.0, 8.0]), jnp.array([3.0, -0.5, 2.0, 7.0]))
    >>> round(float(s.compute()["r2"]), 6)
    0.948608
    """

    n: jax.Array
    mean_x: jax.Array
    mean_y: jax.Array
    m2_x: jax.Array
    m2_y: jax.Array
    c_xy: jax.Array
    sse: jax.Array
    sae: jax.Array
    shift_x: jax.Array
    shift_y: jax.Array

    @classmethod
    def empty(cls) -> Moments:
        z = jnp.zeros((), float_dtype())
        return cls(z, z, z, z, z, z, z, z, z, z)

    @classmethod
    def from_model_output(cls, predictions: Any, targets: Any, where: Any = None) -> Moments:
        return cls.empty().update(predictions, targets, where)

    def update(self, predictions: Any, targets: Any, where: Any = None) -> Moments:
        dtype = float_dtype()
        x = jnp.asarray(predictions, dtype=dtype).ravel()
        y = jnp.asarray(targets, dtype=dtype).ravel()
        w = (jnp.ones(x.shape, bool) if where is None else jnp.asarray(where, bool).ravel()).astype(dtype)
        n = w.sum()
        safe = jnp.where(n > 0, n, 1.0)
        first = jnp.argmax(w > 0)
        shift_x = jnp.where(self.n > 0, self.shift_x, x[first])
        shift_y = jnp.where(self.n > 0, self.shift_y, y[first])
        xs, ys = x - shift_x, y - shift_y
        mx, my = (w * xs).sum() / safe, (w * ys).sum() / safe
        dx, dy = (xs - mx) * w, (ys - my) * w
        batch = Moments(n, mx, my, (dx * dx).sum(), (dy * dy).sum(), (dx * dy).sum(),
                        (w * (x - y) ** 2).sum(), (w * jnp.abs(x - y)).sum(), shift_x, shift_y)
        return self.merge(batch)

    def merge(self, other: Moments) -> Moments:
        """Both inputs' moments (Chan et al. 1979); an empty side leaves the other unchanged."""
        n = self.n + other.n
        share = jnp.where(n > 0, other.n / jnp.where(n > 0, n, 1.0), 0.0)
        shift_x = jnp.where(self.n > 0, self.shift_x, other.shift_x)
        shift_y = jnp.where(self.n > 0, self.shift_y, other.shift_y)
        # both sides' means relative to the kept shift
        mean_ax, mean_ay = self.mean_x + (self.shift_x - shift_x), self.mean_y + (self.shift_y - shift_y)
        dx = other.mean_x + (other.shift_x - shift_x) - mean_ax
        dy = other.mean_y + (other.shift_y - shift_y) - mean_ay
        cross = self.n * share  # n_a n_b / n
        return Moments(n, mean_ax + dx * share, mean_ay + dy * share,
                       self.m2_x + other.m2_x + dx * dx * cross, self.m2_y + other.m2_y + dy * dy * cross,
                       self.c_xy + other.c_xy + dx * dy * cross, self.sse + other.sse, self.sae + other.sae,
                       shift_x, shift_y)

    def reduce(self, axis_name: Any) -> Moments:
        """Inside ``shard_map`` / ``pmap``: the moments over every device of ``axis_name`` (one
        ``all_gather`` of the few numbers, merged in device order)."""
        gathered = jax.lax.all_gather(self, axis_name)
        count = gathered.n.shape[0]
        out = jax.tree_util.tree_map(lambda a: a[0], gathered)
        for i in range(1, count):
            out = out.merge(jax.tree_util.tree_map(lambda a, i=i: a[i], gathered))
        return out

    def compute(self) -> dict[str, jax.Array]:
        n = jnp.where(self.n > 0, self.n, jnp.nan)
        mse = self.sse / n
        r2 = jnp.where(self.m2_y > 0, 1.0 - self.sse / jnp.where(self.m2_y > 0, self.m2_y, 1.0),
                       jnp.where(self.sse == 0, 1.0, jnp.nan))
        r2 = jnp.where(self.n > 0, r2, jnp.nan)
        den = jnp.sqrt(self.m2_x * self.m2_y)
        return {"mse": mse, "rmse": jnp.sqrt(mse), "mae": self.sae / n, "r2": r2,
                "pearson": jnp.where(den > 0, self.c_xy / jnp.where(den > 0, den, 1.0), jnp.nan)}
