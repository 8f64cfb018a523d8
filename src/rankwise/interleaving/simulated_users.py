"""The users an interleaving simulation clicks as: one registry (``SIMULATED_USERS``), read by
``rankwise interleave simulate --click-model`` (``'dbn(continuation=0.8)'``), its help, the
catalogue and the simulator. Each member builds a click model over a log's (query, document)
pairs from the judgments: ULTRA's attractiveness per relevance label 0..4 with the examination
of its position-based and user-browsing models, a cascade, or a dynamic Bayesian network whose
satisfaction equals its attractiveness.

Adding a simulated user is one function ``(qrels, log, **params) -> ClickModel`` and one
``Declared`` line below (``tests/test_interleaving_simulated_users.py`` adds one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rankwise.params import Declared, Param, Registry

# ULTRA (ULTR-Community/ULTRA, example/ClickModel, Apache-2.0): attractiveness by label
# 0..4 and the examination of its position-based and user-browsing models.
ULTRA_CLICK_PROB = [0.1, 0.16, 0.28, 0.52, 1.0]
ULTRA_PBM_EXAM = [0.68, 0.61, 0.48, 0.34, 0.28, 0.2, 0.11, 0.1, 0.08, 0.06]
ULTRA_UBM_EXAM = [[1.0], [0.98, 1.0], [1.0, 0.62, 0.95], [1.0, 0.77, 0.42, 0.82], [1.0, 0.92, 0.55, 0.31, 0.69],
                  [1.0, 0.96, 0.63, 0.4, 0.22, 0.54], [1.0, 0.99, 0.73, 0.46, 0.29, 0.17, 0.47],
                  [1.0, 1.0, 0.89, 0.52, 0.35, 0.24, 0.14, 0.43], [1.0, 1.0, 0.95, 0.68, 0.4, 0.29, 0.19, 0.12, 0.41],
                  [1.0, 1.0, 1.0, 0.96, 0.52, 0.36, 0.27, 0.18, 0.12, 0.43]]
DBN_CONTINUATION = 0.9


def _ultra(model_name: str, exam: Any) -> Any:
    def build(qrels: Any, log: Any) -> Any:
        from rankwise.clicks.ultra import from_ultra

        return from_ultra({"model_name": model_name, "exam_prob": exam, "click_prob": ULTRA_CLICK_PROB}, qrels, log)

    return build


def dbn_user(qrels: Any, log: Any, continuation: float = DBN_CONTINUATION) -> Any:
    """A DBN whose attractiveness and satisfaction are ULTRA's click probability of the label,
    going on after an unsatisfying click with probability ``continuation``."""
    import numpy as np

    from rankwise.clicks.chain import DBN
    from rankwise.clicks.ultra import _labels

    model = DBN()
    attract = np.asarray(ULTRA_CLICK_PROB)
    model.alpha = attract[np.minimum(_labels(qrels, log).astype(np.int64), len(attract) - 1)]
    model.sigma = model.alpha.copy()
    model.gamma = continuation
    model.query_ids, model.doc_ids, model.pair_query, model.pair_doc = (log.query_ids, log.doc_ids,
                                                                        log.pair_query, log.pair_doc)
    return model


SIMULATED_USERS: Registry[Declared[Callable[..., Any]]] = Registry("simulated user", (
    Declared("pbm", _ultra("position_biased_model", ULTRA_PBM_EXAM),
             "Position-based users: ULTRA's examination per rank, attractiveness per label.",
             reference="ULTRA ClickModel"),
    Declared("cascade", _ultra("cascade_model", [1.0] * 10),
             "Cascade users: read down until the first click, attractiveness per label.",
             reference="ULTRA ClickModel; Craswell et al. 2008"),
    Declared("ubm", _ultra("user_browsing_model", ULTRA_UBM_EXAM),
             "User-browsing users: examination by rank and distance to the last click (ULTRA's).",
             reference="ULTRA ClickModel; Dupret & Piwowarski 2008"),
    Declared("dbn", dbn_user, "Dynamic Bayesian network users: satisfaction equal to attractiveness.",
             (Param("continuation", float, DBN_CONTINUATION, "chance to go on after an unsatisfying click",
                    low=0, high=1),), reference="Chapelle & Zhang 2009"),
), option="--click-model")
"""The simulated users of ``rankwise interleave simulate``."""


def user_model(click_model: str, qrels: Any, log: Any) -> Any:
    """The simulated users: a registered spelling (``SIMULATED_USERS``: ``pbm``,
    ``dbn(continuation=0.8)`` ...) or an ULTRA parameter file (``.json``)."""
    if str(click_model).endswith(".json"):
        from rankwise.clicks.ultra import from_ultra

        return from_ultra(click_model, qrels, log)
    member, params = SIMULATED_USERS.parse(click_model)
    return member.target(qrels, log, **params)


__all__ = ["SIMULATED_USERS", "dbn_user", "user_model"]
