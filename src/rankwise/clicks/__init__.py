"""Click models: read click logs, fit (counting or vectorised EM), predict click
probabilities for the click metrics, rank documents by fitted relevance, simulate clicks.

>>> from rankwise import clicks
>>> log = clicks.ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["b", "a"]], [[1, 0], [0, 1]])
>>> clicks.PBM().fit(log).parameters()["pairs"]["doc"].tolist()
['a', 'b']
"""

from __future__ import annotations

from rankwise.clicks.chain import CCM, DBN, DCM, SDBN
from rankwise.clicks.evaluate import evaluate_model
from rankwise.clicks.features import placement_features
from rankwise.clicks.log import LONG_ROLES, ClickLog, read_yandex
from rankwise.clicks.mixture import Mixture
from rankwise.clicks.models import PBM, UBM, CascadeModel, ClickModel, DocumentCTR, GlobalCTR, RankCTR
from rankwise.clicks.persist import load_model, save_model
from rankwise.clicks.read import read_log
from rankwise.clicks.registry import MODELS, ModelKind
from rankwise.clicks.simulate import sessions_from_run, simulate
from rankwise.clicks.store import LogWriter, StoredClickLog, open_log, save_log, write_log
from rankwise.clicks.ultra import LabelRankModel, from_ultra

__all__ = ["CCM", "LONG_ROLES", "CascadeModel", "ClickLog", "ClickModel", "DBN", "DCM", "DocumentCTR", "GlobalCTR",
           "LabelRankModel", "LogWriter", "MODELS", "Mixture", "ModelKind", "PBM", "RankCTR", "SDBN",
           "StoredClickLog", "UBM",
           "evaluate_model", "from_ultra", "load_model", "open_log", "placement_features", "read_log", "read_yandex",
           "save_log",
           "save_model", "sessions_from_run", "simulate", "write_log"]
