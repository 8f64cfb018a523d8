"""Counting measures: documents retrieved, relevant, relevant retrieved, judged non-relevant."""

from __future__ import annotations

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.ranking._seq import seq_sum


def num_ret(rl: RankedLists) -> np.ndarray:
    """Number of documents retrieved for the query (after depth and judged-only filters).

    >>> from rankwise.metrics.ranking._example import example
    >>> num_ret(example()).tolist()
    [5]
    """
    return rl.num_ret.astype(np.int64)


def num_rel(rl: RankedLists) -> np.ndarray:
    """Number of judged documents with label >= the relevance level, retrieved or not.

    >>> from rankwise.metrics.ranking._example import example
    >>> num_rel(example()).tolist()
    [3]
    """
    return rl.num_rel


def num_rel_ret(rl: RankedLists) -> np.ndarray:
    """Number of relevant documents retrieved.

    >>> from rankwise.metrics.ranking._example import example
    >>> num_rel_ret(example()).tolist()
    [2]
    """
    return rl.num_rel_ret


def num_nonrel_judged_ret(rl: RankedLists) -> np.ndarray:
    """Number of retrieved documents judged non-relevant (0 <= label < relevance level).

    >>> from rankwise.metrics.ranking._example import example
    >>> num_nonrel_judged_ret(example()).tolist()
    [1]
    """
    return seq_sum(rl.is_judged_nonrel.astype(np.int64), rl.offsets)
