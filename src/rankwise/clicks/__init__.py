"""Click models: read click logs, fit (counting or vectorised EM), predict click
probabilities for the click metrics, rank documents by fitted relevance, simulate clicks.

>>> from rankwise import clicks
>>> log = clicks.ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["b", "a"]], [[1, 0], [0, 1]])
>>> clicks.PBM().fit(log).parameters()["pairs"]["doc"].tolist()
['a', 'b']
"""

from __future__ import annotations

from rankwise.clicks.log import ClickLog, read_yandex
from rankwise.clicks.models import (
    DCM,
    MODELS,
    PBM,
    SDBN,
    UBM,
    CascadeModel,
    ClickModel,
    DocumentCTR,
    GlobalCTR,
    RankCTR,
)
from rankwise.clicks.simulate import simulate

__all__ = ["DCM", "MODELS", "PBM", "SDBN", "UBM", "CascadeModel", "ClickLog", "ClickModel", "DocumentCTR",
           "GlobalCTR", "RankCTR", "read_yandex", "simulate"]
