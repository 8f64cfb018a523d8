"""Counting measures: documents retrieved, relevant, relevant retrieved, judged non-relevant."""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Family, of_lists
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


def run_name(rl: RankedLists) -> np.ndarray:
    """The run's tag on every query (trec_eval prints it once, as ``runid``).

    >>> from rankwise.metrics.ranking._example import example
    >>> run_name(example()).tolist()
    ['example']
    """
    return np.full(rl.n_queries, rl.run_name, dtype=object)


def one_per_query(rl: RankedLists) -> np.ndarray:
    """1 for every evaluated query; its sum is trec_eval's ``num_q``.

    >>> from rankwise.metrics.ranking._example import example
    >>> one_per_query(example()).tolist()
    [1]
    """
    return np.ones(rl.n_queries, dtype=np.int64)


_COUNT: dict[str, Any] = {"summary": "sum", "value_kind": "int", "tie_aware": True, "trec_eval": True}

RUNID = Family("runid", of_lists(run_name), "The run's name (its tag).", summary="none", value_kind="runid",
               higher_is_better=None, tie_aware=True, trec_eval=True, judgments="any",
               nicknames=("official", "set", "all_prefs", "prefs", "qrels_jg"))
NUM_Q = Family("num_q", of_lists(one_per_query), "Number of queries evaluated.", summary="sum", value_kind="num_q",
               higher_is_better=None, tie_aware=True, trec_eval=True, judgments="any", canonical="NumQ",
               nicknames=("official", "set", "all_prefs", "prefs", "qrels_jg"),
               aliases=("numq", "num_q"))
NUM_RET = Family("num_ret", of_lists(num_ret), "Number of documents retrieved.", **_COUNT, higher_is_better=None,
                 nicknames=("official", "set"), canonical="NumRet", aliases=("numret", "num_ret"),
                 variants=(("rel", "*", "num_rel_ret"),))
NUM_REL = Family("num_rel", of_lists(num_rel), "Number of relevant documents judged (label >= relevance level).",
                 **_COUNT, higher_is_better=None, nicknames=("official", "set"), canonical="NumRel",
                 aliases=("numrel", "num_rel"))
NUM_REL_RET = Family("num_rel_ret", of_lists(num_rel_ret), "Number of relevant documents retrieved.", **_COUNT,
                     nicknames=("official", "set"), canonical="NumRelRet", aliases=("numrelret", "num_rel_ret"))
NUM_NONREL_JUDGED_RET = Family("num_nonrel_judged_ret", of_lists(num_nonrel_judged_ret),
                               "Number of judged non-relevant documents retrieved.", **_COUNT,
                               aliases=("num_nonrel_judged_ret",), higher_is_better=False)
