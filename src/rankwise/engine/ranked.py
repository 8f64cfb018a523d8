"""RankedLists: one run aligned with its qrels, sorted, as flat arrays with per-query offsets."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from rankwise.engine import segments

NONPOOL = -1
"""Label of a retrieved document that has no judgment at all."""
UNJUDGED = -2
"""Label of a retrieved document judged with a negative label (in the pool but not judged)."""


@dataclass
class RankedLists:
    """Sorted rankings of the evaluated queries, ready for vectorised metrics.

    ``label`` holds one entry per retrieved row in rank order: the judged label (>= 0),
    ``NONPOOL`` or ``UNJUDGED``. ``level_values``/``level_counts`` give, per query, how many
    judged documents carry each non-negative label (the ideal ordering comes from them).

    >>> rl = RankedLists(np.array(["q1"], dtype=object), np.array([0, 3]), np.array([1, -1, 0]),
    ...                  np.array([0, 1]), np.array([[1, 2]]), rel_level=1)
    >>> rl.num_ret.tolist(), rl.num_rel.tolist(), rl.cum_rel.tolist()
    ([3], [2], [1, 1, 1])
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    label: np.ndarray
    level_values: np.ndarray
    level_counts: np.ndarray
    rel_level: int = 1
    run_name: str = "run"
    in_run: np.ndarray | None = None
    docs: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def qidx(self) -> np.ndarray:
        return segments.segment_ids(self.offsets)

    @cached_property
    def rank0(self) -> np.ndarray:
        """0-based rank of every row."""
        return segments.positions(self.offsets)

    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.label >= self.rel_level

    @cached_property
    def is_judged(self) -> np.ndarray:
        return self.label >= 0

    @cached_property
    def is_judged_nonrel(self) -> np.ndarray:
        return (self.label >= 0) & (self.label < self.rel_level)

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Relevant rows at or above each row (inclusive)."""
        return segments.segment_cumsum(self.is_rel.astype(np.int64), self.offsets)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return segments.segment_sum(self.is_rel.astype(np.int64), self.offsets)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """Judged relevant documents per query (label >= rel_level), retrieved or not."""
        keep = self.level_values >= self.rel_level
        return self.level_counts[:, keep].sum(axis=1).astype(np.int64)

    @cached_property
    def num_judged_nonrel(self) -> np.ndarray:
        keep = (self.level_values >= 0) & (self.level_values < self.rel_level)
        return self.level_counts[:, keep].sum(axis=1).astype(np.int64)

    def rel_in_top(self, k: int | np.ndarray) -> np.ndarray:
        """Relevant rows among the first ``k`` of each query."""
        return segments.value_at(self.cum_rel, self.offsets, k)
