"""Metric states for JAX training loops (extra ``jax``): pytrees whose ``update`` is pure, so it
runs inside a ``jit``-compiled step with no copy to the host; ``merge`` adds two states, and
``reduce(axis_name)`` adds them across devices with one ``jax.lax.psum`` inside ``shard_map`` or
``pmap``. Values are those of the NumPy streaming metrics (``rankwise.streaming``).

>>> import jax, jax.numpy as jnp
>>> from rankwise.jax import NDCG
>>> step = jax.jit(lambda state, scores, labels: state.update(scores, labels))
>>> state = step(NDCG.empty(k=2), jnp.array([[0.9, 0.5, 0.1]]), jnp.array([[0, 1, 1]]))
>>> round(float(state.compute()["ndcg@2"]), 6)
0.386853
"""

from rankwise.jax.classification import BinaryCounts, GridAUC, LogLoss
from rankwise.jax.clicks import ClickLikelihood
from rankwise.jax.ranking import DCG, MAP, MRR, NDCG, HitRate, PrecisionAtK, RankingAtK, RecallAtK
from rankwise.jax.regression import Moments
from rankwise.jax.state import bucket_size, pad_to_bucket

__all__ = ["DCG", "MAP", "MRR", "NDCG", "BinaryCounts", "ClickLikelihood", "GridAUC", "HitRate", "LogLoss", "Moments",
           "PrecisionAtK", "RankingAtK", "RecallAtK", "bucket_size", "pad_to_bucket"]
