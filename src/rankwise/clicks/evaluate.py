"""A click model's predictions on a log, scored chunk by chunk: log-likelihood, perplexity
and conditional perplexity per rank and overall (``rankwise.streaming.clicks``, CLAX's
definitions: perplexity per rank ``2^(-mean log2-likelihood)``, overall the mean over ranks;
the log-likelihood overall pools every shown cell).
"""

from __future__ import annotations

from typing import Any

from rankwise.clicks.models import CHUNK, ClickModel
from rankwise.results import TableResult, signed
from rankwise.streaming.clicks import ConditionalPerplexity, LogLikelihood, Perplexity


def evaluate_model(model: ClickModel, log: Any, chunk_size: int = CHUNK) -> TableResult:
    """A ``TableResult`` whose table has one row per rank and a last row ``all``: impressions,
    clicks, log_likelihood, perplexity, conditional_perplexity; the reader's notes on the log
    are its warnings.

    >>> from rankwise.clicks.log import ClickLog
    >>> from rankwise.clicks.models import GlobalCTR
    >>> log = ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["a", "b"]], [[1, 0], [0, 0]])
    >>> table = evaluate_model(GlobalCTR().fit(log), log).table   # p = 1/4 everywhere
    >>> table["perplexity"].round(4).tolist()   # rank 1: 2^((2 - log2(3/4))/2); rank 2: 2^-log2(3/4)
    [2.3094, 1.3333, 1.8214]
    """
    import numpy as np
    import pandas as pd

    ranks = log.ranks
    ll, cond, ppl = LogLikelihood(positions=ranks), ConditionalPerplexity(positions=ranks), Perplexity(positions=ranks)
    clicks = np.zeros(ranks, dtype=np.int64)
    for chunk in log.chunks(chunk_size):
        conditional = model.conditional_log_probs(chunk)
        ll.update(conditional_log_probs=conditional, clicks=chunk.clicks, where=chunk.mask)
        cond.update(conditional_log_probs=conditional, clicks=chunk.clicks, where=chunk.mask)
        ppl.update(log_probs=model.log_probs(chunk), clicks=chunk.clicks, where=chunk.mask)
        clicks += (chunk.clicks * chunk.mask).sum(axis=0)
    shown = ll.state["count"]
    table = pd.DataFrame({"rank": [str(r) for r in range(1, ranks + 1)], "impressions": shown, "clicks": clicks,
                          "log_likelihood": ll.compute_per_rank(), "perplexity": ppl.compute_per_rank(),
                          "conditional_perplexity": cond.compute_per_rank()})
    total = pd.DataFrame({"rank": ["all"], "impressions": [int(shown.sum())], "clicks": [int(clicks.sum())],
                          "log_likelihood": [ll.compute()], "perplexity": [ppl.compute()],
                          "conditional_perplexity": [cond.compute()]})
    return TableResult(pd.concat([table, total], ignore_index=True),
                       signed("clicks-evaluate", {"model": model.name, "sessions": int(log.sessions),
                                                  "ranks": int(ranks), "chunk_size": chunk_size}),
                       [str(note) for note in getattr(log, "notes", [])])
