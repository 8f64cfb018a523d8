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
    judged_only: bool = False
    """Unjudged documents were dropped (trec_eval ``-J``): a query can be left with none."""
    tie_start: np.ndarray | None = field(default=None, repr=False)
    """With ties='expected': 0-based rank where each row's group of tied rows starts."""
    tie_size: np.ndarray | None = field(default=None, repr=False)
    """With ties='expected': size of each row's group of tied rows."""
    tie_spans: np.ndarray | None = field(default=None, repr=False)
    """Other tie rules: (query, first rank, size) of tied groups with differing labels."""
    level_gains: dict[int, float] | None = None
    """Continuous relevance: each label code's value (the gain-based measures' gains)."""

    def ties_straddling(self, k: int) -> int:
        """Queries where tied documents with different labels straddle cut-off ``k`` (so the
        tie rule decides the value at k)."""
        if self.tie_spans is None or len(self.tie_spans) == 0:
            return 0
        q, start, size = self.tie_spans.T
        cut = (start < k) & (start + size > k)
        return len(segments.distinct(q[cut]))

    def with_rel_level(self, rel_level: int) -> RankedLists:
        """The same rankings judged at another relevance level (arrays shared, caches fresh)."""
        twin = RankedLists(self.query_ids, self.offsets, self.label, self.level_values, self.level_counts,
                           rel_level, self.run_name, self.in_run, judged_only=self.judged_only,
                           level_gains=self.level_gains)
        twin.tie_start, twin.tie_size, twin.tie_spans = self.tie_start, self.tie_size, self.tie_spans
        return twin

    @cached_property
    def tie_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(group id per row, first row of each group, size of each group) for ties='expected'."""
        assert self.tie_start is not None and self.tie_size is not None  # set with ties='expected'
        start = np.ones(len(self.label), dtype=bool)
        if len(self.label):
            start[1:] = self.tie_start[1:] != self.tie_start[:-1]
            start[self.offsets[:-1][self.offsets[:-1] < len(self.label)]] = True
        gid = np.cumsum(start) - 1
        first = np.flatnonzero(start)
        return gid, first, self.tie_size[first]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @cached_property
    def num_ret(self) -> np.ndarray:
        return np.diff(self.offsets)

    @cached_property
    def qidx(self) -> np.ndarray:
        """Query index of every row (int32)."""
        return segments.segment_ids(self.offsets).astype(np.int32)

    @cached_property
    def rank0(self) -> np.ndarray:
        """0-based rank of every row (int32)."""
        return segments.positions(self.offsets).astype(np.int32)

    def query_of(self, rows: np.ndarray) -> np.ndarray:
        """Query index of the given rows, without building the dense ``qidx``."""
        return (np.searchsorted(self.offsets, rows, side="right") - 1).astype(np.int64)

    def rank_of(self, rows: np.ndarray) -> np.ndarray:
        """0-based rank of the given rows, without building the dense ``rank0``."""
        return rows - self.offsets[self.query_of(rows)]

    @cached_property
    def rel_rows(self) -> np.ndarray:
        """Row numbers of the relevant rows, in rank order."""
        return np.flatnonzero(self.label >= self.rel_level)

    @cached_property
    def rel_qidx(self) -> np.ndarray:
        return self.query_of(self.rel_rows)

    @cached_property
    def rel_rank0(self) -> np.ndarray:
        return self.rel_rows - self.offsets[self.rel_qidx]

    @cached_property
    def rel_offsets(self) -> np.ndarray:
        """Offsets of each query's relevant rows inside ``rel_rows``."""
        counts = np.bincount(self.rel_qidx, minlength=self.n_queries)
        return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @cached_property
    def rel_cum(self) -> np.ndarray:
        """How many relevant rows are at or above each relevant row (1, 2, 3 ... per query)."""
        return np.arange(len(self.rel_rows), dtype=np.int64) - self.rel_offsets[self.rel_qidx] + 1

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
        """Relevant rows at or above each row (inclusive), for every row."""
        return segments.segment_cumsum(self.is_rel.astype(np.int32), self.offsets)

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        return np.diff(self.rel_offsets)

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
        """Relevant rows among the first ``k`` of each query (``k`` a number or one per query);
        with ties='expected', the expected number over the orders of tied rows."""
        if self.tie_size is not None:
            return self._expected_rel_in_top(k)
        kk = np.asarray(k)
        limit = kk[self.rel_qidx] if kk.ndim else kk
        inside = self.rel_rank0 < limit
        return np.bincount(self.rel_qidx[inside], minlength=self.n_queries).astype(np.int64)

    @cached_property
    def tie_group_stats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """With ties='expected': (group per row, group start rank, group size, relevant rows per
        group, relevant rows of the query before the group)."""
        gid, first, size = self.tie_groups
        assert self.tie_start is not None  # set with ties='expected'
        rel = np.bincount(gid, weights=self.is_rel, minlength=len(first))
        q = self.query_of(first)
        cum = np.cumsum(rel)
        before_query = np.concatenate(([0.0], cum))[np.searchsorted(first, self.offsets[:-1])[q]]
        before = cum - rel - before_query
        return gid, self.tie_start[first].astype(np.int64), size.astype(np.int64), rel, before

    def _expected_rel_in_top(self, k: int | np.ndarray) -> np.ndarray:
        """Expected relevant rows among the first k over the orders of tied rows: a group of n
        rows with r relevant ones that overlaps the top k by o rows adds r * o / n."""
        _, start, size, rel, _ = self.tie_group_stats
        _, first, _ = self.tie_groups
        q = self.query_of(first)
        kk = np.asarray(k)
        limit = kk[q] if kk.ndim else kk
        overlap = np.clip(limit - start, 0, size)
        return np.bincount(q, weights=rel * overlap / size, minlength=self.n_queries)
