"""Simulated clicks from a click model on given rankings, seeded and vectorised over sessions.

Rank by rank, each session's click at ``r`` is drawn from the model's conditional probability
given the clicks already drawn above it, so any model that predicts ``P(C_r | C_<r)`` (PBM,
UBM, cascade, DCM, SDBN, the CTR baselines) simulates exactly its own generative process.
"""

from __future__ import annotations

import numpy as np

from rankwise.clicks.log import ClickLog
from rankwise.clicks.models import ClickModel


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
    rng = np.random.default_rng(seed)
    out = ClickLog(log.query, log.docs, np.zeros_like(log.clicks), log.mask, log.query_ids, log.doc_ids)
    draws = rng.random(log.clicks.shape)
    for r in range(log.ranks):
        p = model.conditional_click_probs(out)[:, r]
        out.clicks[:, r] = ((draws[:, r] < p) & out.mask[:, r]).astype(np.int8)
    return out
