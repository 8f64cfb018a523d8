"""A tiny worked example shared by the metric docstrings.

One query ``q1`` with judgments d1=2, d2=0, d3=1, d4=1, d9=-1 (judged unjudgeable) and a
run ranking d1, d5, d2, d3, d9 (d5 was never judged). Labels by rank: 2, -1 (not in the
pool), 0, 1, -2 (in the pool, unjudged). Relevant (label >= 1): d1, d3, d4, so R = 3.
"""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists


def example(rel_level: int = 1) -> RankedLists:
    """RankedLists for the example above."""
    return RankedLists(
        query_ids=np.array(["q1"], dtype=object),
        offsets=np.array([0, 5]),
        label=np.array([2, -1, 0, 1, -2]),
        level_values=np.array([0, 1, 2]),
        level_counts=np.array([[1, 2, 1]]),
        rel_level=rel_level,
        run_name="example",
        in_run=np.array([True]),
    )


def tied_example() -> RankedLists:
    """Query q1 with d1 (label 1) and d2 (label 0) tied at ranks 1-2, then d3 (label 1) at rank 3;
    R = 2. Under ties='expected' each order of d1, d2 counts half."""
    rl = RankedLists(
        query_ids=np.array(["q1"], dtype=object),
        offsets=np.array([0, 3]),
        label=np.array([1, 0, 1]),
        level_values=np.array([0, 1]),
        level_counts=np.array([[1, 2]]),
        rel_level=1,
        run_name="tied",
        in_run=np.array([True]),
    )
    rl.tie_start = np.array([0, 0, 2], dtype=np.int32)
    rl.tie_size = np.array([2, 2, 1], dtype=np.int32)
    return rl
