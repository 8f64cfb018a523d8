"""Ranking metrics at fixed cut-offs on padded batches, as JAX pytree states.

``scores`` and ``labels`` have shape [batch, list_size]; ``where`` marks real items (padding is
False). Items are ranked by score, highest first; tied scores keep their column order (the
streaming metrics' ``ties='input'``). Definitions are the catalogue's, at cut-off k:

- ``dcg@k`` = sum over ranks r <= k of label_r / log2(r + 1) (linear gains; labels below 0
  count 0); ``ndcg@k`` = dcg@k / (the dcg@k of the labels in descending order), 0 when that is 0;
- ``P@k`` = relevant in the top k / k (k even past the list's end), ``recall@k`` = relevant in
  the top k / relevant in the list, ``success@k`` = 1 if any relevant item is in the top k;
- ``mrr@k`` = 1 / rank of the first relevant item if it is in the top k, else 0;
- ``map@k`` = sum over relevant items at rank r <= k of (relevant in the top r) / r, divided by
  every relevant item of the list (trec_eval's ``map_cut``);

where an item is relevant when its label >= ``rel_level``. A row without real items is padding
and left out; a row without relevant items scores 0 (``missing='zero'``) or is left out
(``missing='skip'``). The state is a sum and a count per column, so it merges by addition and
reduces across devices with one ``psum``. The tests hold every value equal to
``rankwise.streaming.RankingMetrics`` (1e-6 in float32, 1e-12 with ``jax_enable_x64``).

>>> import jax.numpy as jnp
>>> state = NDCG.from_model_output(jnp.array([[0.9, 0.5, 0.1]]), jnp.array([[0, 1, 1]]), k=2)
>>> round(float(state.compute()["ndcg@2"]), 6)   # (1/log2 3) / (1 + 1/log2 3)
0.386853
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rankwise.errors import RankwiseError, renamed
from rankwise.jax.state import SumState, float_dtype, pytree_state, static


class Ranked(NamedTuple):
    """The per-rank arrays of a batch every kernel reads ([batch, list_size] unless noted)."""

    dcg: jax.Array            # cumulative discounted gain
    idcg: jax.Array           # cumulative discounted gain of the labels in descending order
    hits: jax.Array           # relevant items up to each rank
    precision_sum: jax.Array  # sum of precision at the relevant ranks up to each rank
    first: jax.Array          # [batch] 0-based rank of the first relevant item
    num_rel: jax.Array        # [batch] relevant items of the list (float)


def _ndcg(r: Ranked, at: int, k: int) -> jax.Array:
    ideal = r.idcg[:, at]
    return jnp.where(ideal > 0, r.dcg[:, at] / jnp.where(ideal > 0, ideal, 1.0), 0.0)


def _dcg(r: Ranked, at: int, k: int) -> jax.Array:
    return r.dcg[:, at]


def _reciprocal_rank(r: Ranked, at: int, k: int) -> jax.Array:
    return jnp.where((r.num_rel > 0) & (r.first < k), 1.0 / (r.first + 1.0), 0.0).astype(r.dcg.dtype)


def _average_precision(r: Ranked, at: int, k: int) -> jax.Array:
    return jnp.where(r.num_rel > 0, r.precision_sum[:, at] / jnp.maximum(r.num_rel, 1.0), 0.0)


def _precision(r: Ranked, at: int, k: int) -> jax.Array:
    return r.hits[:, at] / k


def _recall(r: Ranked, at: int, k: int) -> jax.Array:
    return jnp.where(r.num_rel > 0, r.hits[:, at] / jnp.maximum(r.num_rel, 1.0), 0.0)


def _success(r: Ranked, at: int, k: int) -> jax.Array:
    return (r.hits[:, at] > 0).astype(r.dcg.dtype)


Kernel = Callable[[Ranked, int, int], jax.Array]
"""A family's value per row at cut-off ``k`` (``at``: the column of rank ``min(k, size)``)."""

KERNELS: dict[str, Kernel] = {"ndcg_cut": _ndcg, "dcg_cut": _dcg, "RR_cut": _reciprocal_rank,
                              "map_cut": _average_precision, "P": _precision, "recall": _recall,
                              "success": _success}
"""The kernel of each metric family (``rankwise.metrics`` name) a :class:`RankingAtK` state
computes; each is asked for by any spelling ``rankwise.evaluate`` accepts with a cut-off
(``ndcg``, ``ndcg_cut``, ``mrr``, ``rr``, ``recip_rank``, ``precision``, ``hit_rate`` ...).
A family gets a JAX state by one kernel and one entry here."""


def catalogue_family(name: str) -> str:
    """The catalogue family a spelling names, refused (with the catalogue's "did you mean")
    when unknown or when the family has no JAX state.

    >>> catalogue_family("ndcg"), catalogue_family("recip_rank"), catalogue_family("hit_rate")
    ('ndcg_cut', 'RR_cut', 'success')
    """
    from rankwise.errors import UnknownMetricError
    from rankwise.metrics.names import parse_metric

    try:
        family = parse_metric(f"{name}@1").family.name
    except UnknownMetricError as error:
        raise RankwiseError(f"unknown ranking family {name!r}: {error}") from None
    if family not in KERNELS:
        raise RankwiseError(f"ranking family {name!r} ({family}) has no JAX state: "
                            f"expected one of {', '.join(KERNELS)} (or a spelling of one)")
    return family


def _columns(families: tuple[str, ...], ks: tuple[int, ...]) -> list[str]:
    return [f"{family}@{k}" for family in families for k in ks]


def per_query(scores: Any, labels: Any, where: Any, families: tuple[str, ...], ks: tuple[int, ...],
              rel_level: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Values [batch, columns] (columns: each family at each k), whether each row has a real
    item, and each row's number of relevant items.

    >>> values, real, num_rel = per_query(jnp.array([[0.9, 0.5]]), jnp.array([[0, 1]]), None, ("P", "mrr"), (1, 2), 1)
    >>> values.tolist(), num_rel.tolist()   # P@1 0, P@2 1/2, RR@1 0, RR@2 1/2
    ([[0.0, 0.5, 0.0, 0.5]], [1])
    """
    dtype = float_dtype()
    scores = jnp.asarray(scores, dtype=dtype)
    labels = jnp.asarray(labels)
    where = jnp.ones(scores.shape, dtype=bool) if where is None else jnp.asarray(where, dtype=bool)
    size = scores.shape[-1]
    order = jnp.lexsort((-scores, ~where), axis=-1)  # real items first, score descending, stable
    label = jnp.take_along_axis(labels, order, axis=-1)
    real = jnp.take_along_axis(where, order, axis=-1)
    gain = jnp.where(real, jnp.maximum(label, 0), 0).astype(dtype)
    relevant = real & (label >= rel_level)
    num_rel = relevant.sum(axis=-1)
    rank = jnp.arange(1, size + 1, dtype=dtype)
    discount = 1.0 / jnp.log2(rank + 1.0)
    dcg = jnp.cumsum(gain * discount, axis=-1)
    ideal = -jnp.sort(-jnp.where(where, jnp.maximum(labels, 0), 0).astype(dtype), axis=-1)
    idcg = jnp.cumsum(ideal * discount, axis=-1)
    hits = jnp.cumsum(relevant, axis=-1).astype(dtype)
    precision_sum = jnp.cumsum(jnp.where(relevant, hits / rank, 0.0), axis=-1)
    ranked = Ranked(dcg, idcg, hits, precision_sum, jnp.argmax(relevant, axis=-1), num_rel.astype(dtype))
    out = [KERNELS[family](ranked, min(k, size) - 1, k) for family in (catalogue_family(f) for f in families)
           for k in ks]
    return jnp.stack(out, axis=-1), where.any(axis=-1), num_rel


@pytree_state
class RankingAtK(SumState):
    """Several ranking families at several cut-offs over padded batches: a sum and a count per
    column. ``compute()`` gives ``{"ndcg@10": mean, ...}`` (JAX scalars; NaN before any query).

    >>> import jax, jax.numpy as jnp
    >>> state = RankingAtK.empty(families=("mrr", "P"), k=(1, 3))
    >>> step = jax.jit(lambda s, x, y, m: s.update(x, y, where=m))
    >>> state = step(state, jnp.array([[0.2, 0.9, 0.5], [0.1, 0.3, 0.0]]), jnp.array([[1, 0, 2], [0, 1, 0]]),
    ...              jnp.array([[True, True, True], [True, True, False]]))
    >>> {k: round(float(v), 4) for k, v in state.compute().items()}   # mrr@3 = (1/2 + 1/1) / 2
    {'mrr@1': 0.5, 'mrr@3': 0.75, 'P@1': 0.5, 'P@3': 0.5}
    """

    total: jax.Array
    count: jax.Array
    families: tuple[str, ...] = static(("ndcg",))
    ks: tuple[int, ...] = static((10,))
    rel_level: int = static(1)
    missing: str = static("zero")

    @classmethod
    def empty(cls, families: tuple[str, ...] | list[str] = ("ndcg",), k: int | tuple[int, ...] | list[int] = (10,),
              rel_level: int = 1, missing: str = "zero", **deprecated: Any) -> RankingAtK:
        """A state before any batch; ``k`` a cut-off or several (the NumPy states' name; ``ks``
        is its deprecated spelling)."""
        if "ks" in deprecated:
            options = {"ks": deprecated.pop("ks")}
            renamed(options, "ks", "k", cls.__name__)
            k = options["k"]
        if deprecated:
            raise RankwiseError(f"{cls.__name__}: unknown parameter(s) {', '.join(sorted(deprecated))}")
        families = tuple(families)
        ks = tuple(int(v) for v in np.atleast_1d(np.asarray(k)).tolist())  # an int, a 0-d array or several
        for family in families:
            catalogue_family(family)
        if not ks or any(k < 1 for k in ks):
            raise RankwiseError(f"k expects positive cut-offs, got {ks!r}")
        if missing not in ("zero", "skip"):
            raise RankwiseError(f"missing={missing!r}: expected zero or skip")
        n = len(families) * len(ks)
        return cls(jnp.zeros(n, float_dtype()), jnp.zeros(n, float_dtype()), families, ks, int(rel_level), missing)

    @classmethod
    def from_model_output(cls, scores: Any, labels: Any, where: Any = None, **config: Any) -> RankingAtK:
        """The state of one batch (metrax's constructor): ``empty(**config).update(...)``."""
        return cls.empty(**config).update(scores, labels, where)

    def update(self, scores: Any, labels: Any, where: Any = None) -> RankingAtK:
        """The state with one more batch added (pure: usable under ``jit`` and ``vmap``)."""
        values, real, num_rel = per_query(scores, labels, where, self.families, self.ks, self.rel_level)
        keep = real & (num_rel > 0) if self.missing == "skip" else real
        weight = keep.astype(values.dtype)[:, None]
        return RankingAtK(self.total + (values * weight).sum(axis=0), self.count + weight.sum(),
                          self.families, self.ks, self.rel_level, self.missing)

    def compute(self) -> dict[str, jax.Array]:
        """Mean of each column over the queries seen."""
        means = self.total / jnp.where(self.count > 0, self.count, jnp.nan)
        return dict(zip(_columns(self.families, self.ks), means, strict=True))


def _family(name: str) -> type:
    """A one-family view of :class:`RankingAtK` (``NDCG.empty(k=(5, 10))``), documented by
    its catalogue family."""
    from rankwise.metrics.registry import family

    def empty(cls: type, k: int | tuple[int, ...] | list[int] = (10,), rel_level: int = 1, missing: str = "zero",
              **deprecated: Any) -> RankingAtK:
        return RankingAtK.empty((name,), k, rel_level, missing, **deprecated)

    def from_model_output(cls: type, scores: Any, labels: Any, where: Any = None, **config: Any) -> RankingAtK:
        return RankingAtK.empty((name,), **config).update(scores, labels, where)

    doc = f"{family(catalogue_family(name)).description} States of ``RankingAtK`` with the ``{name}`` family."
    return type(name.upper(), (), {"__doc__": doc, "empty": classmethod(empty),
                                   "from_model_output": classmethod(from_model_output)})


NDCG = _family("ndcg")
DCG = _family("dcg")
MRR = _family("mrr")
MAP = _family("map")
PrecisionAtK = _family("P")
RecallAtK = _family("recall")
HitRate = _family("success")
