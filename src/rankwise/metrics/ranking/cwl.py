"""C/W/L measures (Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019), as cwl-eval computes them.

A user scans the ranking and, after rank i, continues with probability C_i. The weight of
rank i is W_i = prod_{j<i} C_j / sum_k prod_{j<k} C_j and the chance of stopping there is
L_i = prod_{j<i} C_j (1 - C_i). Over the first ``n`` ranks (cwl-eval's ``max_n``, 1000; the run
is padded with gain 0 or cut), with unit costs:

- expected utility (the measure's value, gain per document) EU = sum_i W_i g_i;
- expected total utility ETU = sum_i L_i sum_{j<=i} g_j; expected cost EC = sum_i W_i;
- expected total cost ETC = sum_i L_i i; expected documents examined EI = 1 / W_1.

Gains come from the labels: clipped to [min_rel, max_rel] (negative labels count as 0) and
scaled to [0, 1], as ir_measures feeds cwl-eval; unjudged documents gain 0 (cwl-eval's lower
bound). ``result.details(name)`` gives ETU, EC, ETC and EI per query. Every query is one row of
a [queries, n] matrix, so all queries are computed at once.

The C vectors (rank i = 1, 2, ...; G_i the gain up to and including rank i):

- INST(T): ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - G_i; INSQ(T): ((i + 2T - 1) / (i + 2T))^2;
- BPM(T)@K: 1 while G_i < T and i < K, else 0; SDCG@k: log(i + 1) / log(i + 2) for i < k, else 0;
- NERR8@k: 1 - g_i for i < k; NERR9@k: i / (i + 1) (1 - g_i) for i < k; NERR10(p): p (1 - g_i);
  NERR11(T): ((i + 2T - 1) / (i + 2T))^2 (1 - g_i);
- TBG(H): W_i proportional to H 2^(-(i - 1) / H) / ln 2 (time-biased gain with unit costs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from rankwise.engine.ranked import RankedLists
from rankwise.metrics.family import Cutoff, Family, Param

COLUMNS = ("expected_utility", "expected_total_utility", "expected_cost", "expected_total_cost", "expected_items")


def gain_matrix(rl: RankedLists, n: int, min_rel: float, max_rel: float) -> np.ndarray:
    """[queries, n] gains of the first n ranks: labels clipped to [min_rel, max_rel] (negative
    and unjudged as 0) and scaled to [0, 1]; 0 beyond the ranking.

    >>> from rankwise.metrics.ranking._example import example
    >>> gain_matrix(example(), 6, 0, 2).tolist()   # labels 2, -, 0, 1, - -> 1, 0, 0, 0.5, 0, (pad) 0
    [[1.0, 0.0, 0.0, 0.5, 0.0, 0.0]]
    """
    out = np.zeros((rl.n_queries, n))
    inside = rl.rank0 < n
    label = np.maximum(rl.label[inside], 0).astype(np.float64)
    scaled = (np.clip(label, min_rel, max_rel) - min_rel) / (max_rel - min_rel)
    out[rl.qidx[inside], rl.rank0[inside]] = scaled
    return out


def user_model(gains: np.ndarray, continuation: np.ndarray | None = None, weights: np.ndarray | None = None
               ) -> dict[str, np.ndarray]:
    """EU, ETU, EC, ETC and EI per query from the C vectors (or, for TBG, the W vectors).

    >>> m = user_model(np.array([[1.0, 0.0, 1.0]]), np.array([[0.5, 0.5, 0.5]]))
    >>> [round(float(m[c][0]), 6) for c in COLUMNS]   # W = (1, .5, .25) / 1.75, L = (.5, .25, .125)
    [0.714286, 1.0, 1.0, 1.375, 1.75]

    EU = (1 + .25) / 1.75; ETU = .5 * 1 + .25 * 1 + .125 * 2; ETC = .5 * 1 + .25 * 2 + .125 * 3; EI = 1.75.
    """
    q, n = gains.shape
    ones = np.ones((q, 1))
    if weights is None:
        assert continuation is not None
        reach = np.concatenate([ones, np.cumprod(continuation[:, :-1], axis=1)], axis=1)
        weights = reach * (1.0 / reach.sum(axis=1))[:, None]
    else:
        continuation = np.zeros_like(weights)
        ahead = weights[:, :-1] > 0
        continuation[:, :-1] = np.divide(weights[:, 1:], weights[:, :-1], out=np.zeros((q, n - 1)), where=ahead)
    stop = np.cumprod(np.concatenate([ones, continuation[:, :-1]], axis=1), axis=1) * (1.0 - continuation)
    ranks = np.arange(1, n + 1, dtype=np.float64)
    return {"expected_utility": (weights * gains).sum(axis=1),
            "expected_total_utility": (stop * np.cumsum(gains, axis=1)).sum(axis=1),
            "expected_cost": weights.sum(axis=1),
            "expected_total_cost": (stop * ranks).sum(axis=1),
            "expected_items": 1.0 / weights[:, 0]}


def _ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=np.float64)


def inst(g: np.ndarray, T: float) -> np.ndarray:  # noqa: N803 - the measure's own name
    """INST's C vector."""
    i = _ranks(g.shape[1])
    t_i = T - np.cumsum(g, axis=1)
    return ((i + T + t_i - 1.0) / (i + T + t_i)) ** 2.0


def insq(g: np.ndarray, T: float) -> np.ndarray:  # noqa: N803
    """INSQ's C vector."""
    i = _ranks(g.shape[1])
    return np.broadcast_to(((i + 2.0 * T - 1.0) / (i + 2.0 * T)) ** 2.0, g.shape)


def bpm(g: np.ndarray, T: float, k: int) -> np.ndarray:  # noqa: N803
    """BPM's (static) C vector: continue while the gain so far is below T and fewer than k
    documents are seen."""
    i = _ranks(g.shape[1])
    return ((np.cumsum(g, axis=1) < T) & (i < k)).astype(np.float64)


def sdcg(g: np.ndarray, k: int) -> np.ndarray:
    """Scaled DCG's C vector."""
    i = _ranks(g.shape[1])
    c = np.array([math.log(x + 1, 2.0) / math.log(x + 2, 2.0) for x in i.tolist()])
    return np.broadcast_to(np.where(i < k, c, 0.0), g.shape)


def nerr8(g: np.ndarray, k: int) -> np.ndarray:
    """NERR (eq. 8) C vector."""
    return np.where(_ranks(g.shape[1]) < k, 1.0 - g, 0.0)


def nerr9(g: np.ndarray, k: int) -> np.ndarray:
    """NERR (eq. 9) C vector."""
    i = _ranks(g.shape[1])
    return np.where(i < k, (i / (i + 1.0)) * (1.0 - g), 0.0)


def nerr10(g: np.ndarray, p: float) -> np.ndarray:
    """NERR (eq. 10) C vector."""
    return p * (1.0 - g)


def nerr11(g: np.ndarray, T: float) -> np.ndarray:  # noqa: N803
    """NERR (eq. 11) C vector."""
    i = _ranks(g.shape[1])
    return (((i + 2.0 * T - 1.0) / (i + 2.0 * T)) ** 2.0) * (1.0 - g)


def tbg_weights(g: np.ndarray, H: float) -> np.ndarray:  # noqa: N803
    """TBG's W vector with unit costs: the decay integral at each document's start time, normalised."""
    n = g.shape[1]
    decay = np.array([(H * (2.0 ** (-x / H))) / math.log(2.0, math.e) for x in range(n)])
    return np.broadcast_to(decay / np.cumsum(decay)[-1], g.shape)


def _measure(vector: Callable[..., np.ndarray], weights: bool = False) -> Callable:
    """A family's compute (and its details) from a C-vector (or W-vector) function."""
    def values(rl: RankedLists, cutoffs: tuple, params: dict) -> list[dict[str, np.ndarray]]:
        # compute and details ask for the same model in turn: build it once per lists object
        cache = rl.__dict__.setdefault("_cwl_models", {})
        key = (vector, tuple(cutoffs), tuple(sorted(params.items())))
        if key not in cache:
            cache[key] = build(rl, cutoffs, params)
        return cache[key]

    def build(rl: RankedLists, cutoffs: tuple, params: dict) -> list[dict[str, np.ndarray]]:
        g = gain_matrix(rl, params["n"], params["min_rel"], params["max_rel"])
        extra = {k: v for k, v in params.items() if k not in ("n", "min_rel", "max_rel")}
        out = []
        for k in cutoffs or (None,):
            args = dict(extra, k=int(k)) if k is not None else extra
            v = vector(g, **args)
            out.append(user_model(g, weights=v) if weights else user_model(g, v))
        return out

    def compute(rl: RankedLists, conv: object, cutoffs: tuple, params: dict) -> np.ndarray:
        return np.column_stack([m["expected_utility"] for m in values(rl, cutoffs, params)])

    def details(rl: RankedLists, params: dict, cutoffs: tuple = ()) -> dict[str, np.ndarray]:
        model = values(rl, cutoffs, params)[0]  # the first cut-off's
        return {c: model[c] for c in COLUMNS}

    compute.details = details  # type: ignore[attr-defined]
    return compute


_GAIN = (Param("min_rel", float, 0.0, "label that gains nothing (lower labels clip to it)"),
         Param("max_rel", float, 1.0, "label that gains 1 (higher labels clip to it)"),
         Param("n", int, 1000, "ranks the user model spans (cwl-eval's max_n)", low=1))
_T = Param("T", float, 1.0, "gain the user wants", low=0.0, in_name=True)
_C: dict[str, Any] = {"judgments": "qrels", "reference": "cwl-eval 1.0 (ir_measures' cwl_eval provider)"}


def _family(name: str, vector: Callable, doc: str, params: tuple = (), cutoff: bool = False,
            weights: bool = False, aliases: tuple[str, ...] = ()) -> Family:
    compute = _measure(vector, weights)
    return Family(name, compute, doc, cutoff=Cutoff(int, (10,)) if cutoff else None, params=params + _GAIN,
                  syntax="pairs", canonical=name, aliases=() if cutoff else aliases,
                  cutoff_aliases=aliases if cutoff else (), details=compute.details, **_C)  # type: ignore[attr-defined]


INST = _family("INST", inst, "INST: adaptive C/W/L metric, the user wants T gain.", (_T,), aliases=("inst",))
INSQ = _family("INSQ", insq, "INSQ: INST's static variant.", (_T,), aliases=("insq",))
BPM = _family("BPM", bpm, "Bejewelled player model (static): stop at T gain or k documents.", (_T,), cutoff=True,
              aliases=("bpm",))
SDCG = _family("SDCG", sdcg, "Scaled DCG@k: DCG's discount as a C/W/L user model.", cutoff=True, aliases=("sdcg",))
NERR8 = _family("NERR8", nerr8, "Not-but-nearly ERR (eq. 8), truncated at k.", cutoff=True, aliases=("nerr8",))
NERR9 = _family("NERR9", nerr9, "Not-but-nearly ERR (eq. 9), truncated at k.", cutoff=True, aliases=("nerr9",))
NERR10 = _family("NERR10", nerr10, "Not-but-nearly ERR (eq. 10), RBP-like persistence p.",
                 (Param("p", float, 0.9, "persistence", low=0.0, high=1.0, in_name=True),), aliases=("nerr10",))
NERR11 = _family("NERR11", nerr11, "Not-but-nearly ERR (eq. 11), INST-like target T.", (_T,), aliases=("nerr11",))
TBG = _family("TBG", tbg_weights, "Time-biased gain with unit costs and half-life H.",
              (Param("H", float, 224.0, "half-life, in documents", low=0.0, in_name=True),), weights=True,
              aliases=("tbg",))
