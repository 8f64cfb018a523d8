"""Simulated clicks from a click model on given rankings, seeded and vectorised over sessions.

Rank by rank, each session's click at ``r`` is drawn from the model's conditional probability
given the clicks already drawn above it, so any model that predicts ``P(C_r | C_<r)`` (PBM,
UBM, cascade, DCM, SDBN, the CTR baselines) simulates exactly its own generative process.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankwise.clicks.log import ClickLog, piece_of
from rankwise.clicks.models import ClickModel
from rankwise.stats.resampling import seeded


def simulate(model: ClickModel, log: ClickLog, seed: int = 0) -> ClickLog:
    """The sessions of ``log`` (queries and rankings; its clicks are ignored) with clicks
    drawn from ``model``.

    >>> from rankwise.clicks.models import GlobalCTR
    >>> log = ClickLog.from_arrays(["q"] * 4, [["a", "b"]] * 4, [[0, 0]] * 4)
    >>> model = GlobalCTR().fit(log)
    >>> model.ctr = 1.0
    >>> simulate(model, log).clicks.tolist()
    [[1, 1], [1, 1], [1, 1], [1, 1]]
    """
    rng = seeded(seed)
    out = piece_of(log, log.query, log.docs, log.pairs, np.zeros_like(log.clicks), log.mask)
    draws = rng.random(log.clicks.shape)
    model.check_depth(log)
    for r in range(log.ranks):
        p = model.conditional_click_probs(out)[:, r]
        out.clicks[:, r] = ((draws[:, r] < p) & out.mask[:, r]).astype(np.int8)
    return out


def sessions_from_run(run: Any, depth: int = 10, repeat: int = 1) -> ClickLog:
    """A log without clicks that shows each query's top ``depth`` documents of ``run``
    (anything ``rankwise.load_run`` takes), ranked as trec_eval does (score descending, then
    document id descending), ``repeat`` times.

    >>> log = sessions_from_run({"q": {"a": 1.0, "b": 2.0, "c": 2.0}}, depth=2, repeat=2)
    >>> [[log.doc_ids[d] for d in row] for row in log.docs]
    [['c', 'b'], ['c', 'b']]
    """
    import pandas as pd

    from rankwise.data.load import load_run
    from rankwise.errors import InputError

    ranked = load_run(run)
    frame = pd.DataFrame({"query": ranked.query.to_pylist(), "doc": ranked.doc.to_pylist(), "score": ranked.score})
    twice = frame.duplicated(["query", "doc"])
    if twice.any():   # a page cannot show one document at two ranks
        row = frame[twice].iloc[0]
        raise InputError(f"document {row['doc']!r} is listed twice for query {row['query']!r}; a result page shows "
                         "each document once", source=ranked.source, field="doc")
    frame = frame.sort_values(["query", "score", "doc"], ascending=[True, False, False], kind="stable")
    top = frame.groupby("query", sort=True).head(depth)
    lists = top.groupby("query", sort=True)["doc"].apply(list)
    queries = [q for q in lists.index for _ in range(repeat)]
    docs = [row for row in lists.tolist() for _ in range(repeat)]
    log = ClickLog.from_arrays(queries, docs, [[0] * len(row) for row in docs])
    log.notes = list(ranked.notes)
    return log
