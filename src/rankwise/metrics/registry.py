"""The metric catalogue: every measure family, its parameters, defaults and definition.

Families are listed in trec_eval 10.0's output order. A family with cut-offs produces one
column per cut-off (``P_5``, ``P_10`` ...), named as trec_eval names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.engine.conventions import Conventions
from rankwise.engine.ranked import RankedLists
from rankwise.metrics.ranking import average_precision as ap
from rankwise.metrics.ranking import counts, gain, precision, rbp, recsys, roc
from rankwise.metrics.ranking import elasticsearch as es
from rankwise.metrics.ranking.average_precision import DEFAULT_RECALL_LEVELS

STANDARD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

Compute = Callable[[RankedLists, Any, Conventions], Any]


@dataclass(frozen=True)
class Family:
    """One measure family: name, parameter kind, defaults, how it is summarised, its definition.

    ``params``: ``none``; ``cut_long`` (integer cut-offs, one column each); ``cut_double``
    (real cut-offs, one column each); ``double`` (a list of reals, one column); ``pairs``
    (``name=value`` pairs, one column). ``summary``: ``mean``, ``sum``, ``gmean``, ``none``.
    """

    name: str
    params: str
    default: tuple
    compute: Compute
    summary: str
    kind: str
    description: str
    trec: bool = True

    def columns(self, values: tuple, printable: str | None) -> list[str]:
        """Column names for these parameter values, as trec_eval prints them."""
        if self.params == "cut_long":
            return [f"{self.name}_{int(v)}" for v in values]
        if self.params == "cut_double":
            return [f"{self.name}_{v:.2f}" for v in values]
        if printable is not None and self.params in ("double", "pairs"):
            return [f"{self.name}_{printable}"]
        return [self.name]


def _gains(pairs: tuple) -> dict[int, float]:
    out: dict[int, float] = {}
    for key, value in pairs:
        if re.fullmatch(r"[+-]?\d+", key):
            out[int(key)] = value
    return out


def _p_of(pairs: tuple, default: float = 0.9) -> float:
    for key, value in pairs:
        if key == "p":
            return value
    return default


def _cols(fn: Callable[[RankedLists, Any], np.ndarray]) -> Compute:
    return lambda rl, values, conv: np.column_stack([fn(rl, v) for v in values])


FAMILIES: list[Family] = [
    Family("runid", "none", (), lambda rl, v, c: None, "none", "runid",
           "The run's name (its tag).", True),
    Family("num_q", "none", (), lambda rl, v, c: None, "none", "num_q",
           "Number of queries evaluated.", True),
    Family("num_ret", "none", (), lambda rl, v, c: counts.num_ret(rl), "sum", "int",
           "Number of documents retrieved."),
    Family("num_rel", "none", (), lambda rl, v, c: counts.num_rel(rl), "sum", "int",
           "Number of relevant documents judged (label >= relevance level)."),
    Family("num_rel_ret", "none", (), lambda rl, v, c: counts.num_rel_ret(rl), "sum", "int",
           "Number of relevant documents retrieved."),
    Family("map", "none", (), lambda rl, v, c: ap.average_precision(rl), "mean", "float",
           "Mean average precision: sum of precision at each relevant retrieved doc / R."),
    Family("gm_map", "none", (), lambda rl, v, c: ap.average_precision(rl), "gmean", "float",
           "Geometric mean of AP over queries (AP floored at 0.00001)."),
    Family("Rprec", "none", (), lambda rl, v, c: precision.r_precision(rl), "mean", "float",
           "Precision after R documents, R = number of relevant documents."),
    Family("bpref", "none", (), lambda rl, v, c: ap.bpref(rl), "mean", "float",
           "Binary preference: fraction of judged non-relevant docs ranked below each relevant doc."),
    Family("recip_rank", "none", (), lambda rl, v, c: ap.reciprocal_rank(rl), "mean", "float",
           "Reciprocal rank of the first relevant document."),
    Family("iprec_at_recall", "cut_double", DEFAULT_RECALL_LEVELS,
           lambda rl, v, c: ap.interpolated_precision_at_recall(rl, v), "mean", "float",
           "Interpolated precision at recall levels: max precision at or after reaching the level."),
    Family("P", "cut_long", STANDARD_CUTS, _cols(precision.precision_at), "mean", "float",
           "Precision at cut-off k: relevant in the top k / k."),
    Family("relstring", "double", (10.0,), lambda rl, v, c: rbp.relstring(rl, int(v[0])), "none", "string",
           "Labels of the first N documents as a string (per query only)."),
    Family("recall", "cut_long", STANDARD_CUTS, _cols(precision.recall_at), "mean", "float",
           "Recall at cut-off k: relevant in the top k / R."),
    Family("infAP", "none", (), lambda rl, v, c: ap.inferred_ap(rl), "mean", "float",
           "Inferred AP (Yilmaz & Aslam): AP estimated from a sampled judgment pool."),
    Family("gm_bpref", "none", (), lambda rl, v, c: ap.bpref(rl), "gmean", "float",
           "Geometric mean of bpref over queries."),
    Family("Rprec_mult", "cut_double", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
           _cols(precision.r_precision_mult), "mean", "float",
           "Precision at cut-off int(x * R + 0.9)."),
    Family("utility", "double", (1.0, -1.0, 0.0, 0.0),
           lambda rl, v, c: precision.utility(rl, tuple(v), c.num_docs_in_coll), "mean", "float",
           "Set utility c1*relret + c2*nonrelret + c3*relnotret + c4*nonrelnotret."),
    Family("11pt_avg", "double", DEFAULT_RECALL_LEVELS,
           lambda rl, v, c: ap.eleven_point_average(rl, v), "mean", "float",
           "Mean interpolated precision at the 11 recall levels 0.0, 0.1 ... 1.0."),
    Family("binG", "none", (), lambda rl, v, c: gain.binary_g(rl), "mean", "float",
           "Binary G: mean over relevant docs of 1 / log2(2 + non-relevant above)."),
    Family("G", "pairs", (), lambda rl, v, c: gain.g_measure(rl, _gains(v)), "mean", "float",
           "G: gain-based measure combining MAP and nDCG (experimental in trec_eval)."),
    Family("ndcg", "pairs", (), lambda rl, v, c: gain.ndcg(rl, _convention_gains(rl, c, _gains(v))), "mean", "float",
           "nDCG over the whole ranking; gains = labels unless set per grade (1=3,2=9)."),
    Family("ndcg_rel", "pairs", (), lambda rl, v, c: gain.ndcg_rel(rl, _gains(v)), "mean", "float",
           "nDCG averaged over the relevant documents."),
    Family("Rndcg", "pairs", (), lambda rl, v, c: gain.rndcg(rl, _gains(v)), "mean", "float",
           "nDCG averaged at the R-levels of the ideal ranking."),
    Family("ndcg_cut", "cut_long", STANDARD_CUTS,
           lambda rl, v, c: gain.ndcg_at(rl, v, _convention_gains(rl, c)), "mean", "float",
           "nDCG at cut-off k (linear gain, log2(rank+1) discount, ideal cut at k)."),
    Family("map_cut", "cut_long", STANDARD_CUTS, lambda rl, v, c: ap.average_precision_at(rl, v),
           "mean", "float", "AP counting only the top k (still divided by R)."),
    Family("relative_P", "cut_long", STANDARD_CUTS, _cols(precision.relative_precision_at), "mean", "float",
           "Relevant in the top k / min(k, R)."),
    Family("success", "cut_long", (1, 5, 10), _cols(precision.success_at), "mean", "float",
           "1 if a relevant document is in the top k, else 0."),
    Family("set_P", "none", (), lambda rl, v, c: precision.set_precision(rl), "mean", "float",
           "Precision of the retrieved set."),
    Family("set_relative_P", "none", (), lambda rl, v, c: precision.set_relative_precision(rl),
           "mean", "float", "Relevant retrieved / min(retrieved, R)."),
    Family("set_recall", "none", (), lambda rl, v, c: precision.set_recall(rl), "mean", "float",
           "Recall of the retrieved set."),
    Family("set_map", "none", (), lambda rl, v, c: precision.set_map(rl), "mean", "float",
           "set_P * set_recall."),
    Family("set_F", "double", (1.0,), lambda rl, v, c: precision.set_f(rl, v[0]), "mean", "float",
           "F measure of the retrieved set: (b+1) P R / (b P + R)."),
    Family("num_nonrel_judged_ret", "none", (), lambda rl, v, c: counts.num_nonrel_judged_ret(rl),
           "sum", "int", "Number of judged non-relevant documents retrieved."),
    Family("rbp", "pairs", (), lambda rl, v, c: rbp.rbp(rl, _p_of(v), _gains(v)), "mean", "float",
           "Rank-biased precision with persistence p (default 0.9): (1-p) sum gain_i p^(i-1)."),
    Family("rbp_resid", "pairs", (), lambda rl, v, c: rbp.rbp_residual(rl, _p_of(v)), "mean", "float",
           "RBP residual: how much RBP could rise if unjudged retrieved docs were relevant."),
    Family("unj", "cut_long", (5, 10, 20), _cols(precision.unjudged_at), "mean", "float",
           "Fraction of unjudged documents in the top k."),
    # measures beyond trec_eval (names of ranx / ir_measures)
    Family("RR_cut", "cut_long", (10,), _cols(lambda rl, k: ap.reciprocal_rank(rl, k)), "mean", "float",
           "Reciprocal rank of the first relevant document within the top k (0 beyond k).", False),
    Family("hits", "cut_long", (10,), _cols(precision.hits_at), "mean", "float",
           "Number of relevant documents in the top k.", False),
    Family("judged", "cut_long", (10,), _cols(precision.judged_at), "mean", "float",
           "Fraction of the top k that is judged.", False),
    Family("dcg_cut", "cut_long", (10,), lambda rl, v, c: gain.dcg_at(rl, v, _convention_gains(rl, c)), "mean", "float",
           "DCG at cut-off k (linear gain, log2(rank+1) discount), not normalised.", False),
    Family("ndcg_exp_cut", "cut_long", (10,), lambda rl, v, c: gain.ndcg_at(rl, v, _exp_gains(rl, c)), "mean", "float",
           "nDCG@k with exponential gain 2^label - 1 (Burges et al.), trec_eval's ideal rule.", False),
    Family("F1", "cut_long", (10,), _cols(recsys.f1_at), "mean", "float",
           "F1@k: harmonic mean of P@k and recall@k.", False),
    Family("AP_min", "cut_long", (10,), _cols(recsys.average_precision_min_at), "mean", "float",
           "AP@k normalised by min(R, k) (RecBole's MAP@k).", False),
    Family("AP_ret", "cut_long", (10,), _cols(recsys.average_precision_retrieved_at), "mean", "float",
           "AP@k normalised by the relevant documents retrieved in the top k (torchmetrics' RetrievalMAP).",
           False),
    Family("AR", "cut_long", (10,), _cols(recsys.average_recall_at), "mean", "float",
           "Average recall@k: mean recall at each hit in the top k (MAR@k over queries).", False),
    Family("ARHR", "cut_long", (10,), _cols(recsys.arhr_at), "mean", "float",
           "Average reciprocal hit rank: sum of 1/rank over the hits in the top k.", False),
    Family("CG", "cut_long", (10,), _cols(recsys.cumulative_gain_at), "mean", "float",
           "Cumulative gain: sum of the labels in the top k.", False),
    Family("ERR", "cut_long", (10,), _cols(recsys.err_at), "mean", "float",
           "Expected reciprocal rank: sum_r R_r/r prod_{i<r}(1-R_i), R = (2^label-1)/2^max.", False),
    Family("LAG", "none", (), lambda rl, v, c: recsys.lag(rl), "mean", "float",
           "Mean number of non-relevant items ranked above each relevant retrieved item.", False),
    Family("FCP", "none", (), lambda rl, v, c: recsys.fcp(rl), "mean", "float",
           "Fraction of concordant pairs among retrieved judged items with different labels.", False),
    Family("AUC", "none", (), lambda rl, v, c: roc.roc_curves(rl, np.array([0.0, 1.0]))[2], "nanmean", "float",
           "Per-query ROC AUC (unretrieved judged docs tied at the bottom; undefined with one class).", False),
    Family("es_precision", "pairs", (), lambda rl, v, c: es.precision(
        rl, _int(v, "k", 10), _int(v, "relevant_rating_threshold", 1), bool(_int(v, "ignore_unlabeled", 0))),
        "mean", "float", "Elasticsearch precision: relevant hits / hits in the top k.", False),
    Family("es_recall", "pairs", (), lambda rl, v, c: es.recall(
        rl, _int(v, "k", 10), _int(v, "relevant_rating_threshold", 1)),
        "mean", "float", "Elasticsearch recall: relevant hits in the top k / relevant rated docs.", False),
    Family("es_mean_reciprocal_rank", "pairs", (), lambda rl, v, c: es.mean_reciprocal_rank(
        rl, _int(v, "k", 10), _int(v, "relevant_rating_threshold", 1)),
        "mean", "float", "Elasticsearch MRR: 1 / rank of the first relevant hit in the top k.", False),
    Family("es_dcg", "pairs", (), lambda rl, v, c: es.dcg(
        rl, _int(v, "k", 10), bool(_int(v, "normalize", 0)), _opt_int(v, "unknown_doc_rating"))[0],
        "mean", "float", "Elasticsearch DCG@k (gain 2^r - 1), normalised by the ideal DCG if asked.", False),
    Family("es_expected_reciprocal_rank", "pairs", (), lambda rl, v, c: es.expected_reciprocal_rank(
        rl, _int(v, "k", 10), _int(v, "maximum_relevance", 3), _opt_int(v, "unknown_doc_rating")),
        "mean", "float", "Elasticsearch ERR@k, R = (2^r - 1) / 2^maximum_relevance.", False),
]


def _int(values: tuple, key: str, default: int) -> int:
    for k, v in values:
        if k == key:
            return int(v)
    return default


def _opt_int(values: tuple, key: str) -> int | None:
    for k, v in values:
        if k == key:
            return int(v)
    return None


def _exp_gains(rl: RankedLists, conv: Conventions) -> dict[int, float]:
    """2^label - 1 per grade; grades the conventions zero out (below the level) stay 0."""
    base = _convention_gains(rl, conv) or {}
    return {int(level): 0.0 if base.get(int(level), 1.0) == 0 else float(2.0 ** level - 1.0)
            for level in rl.level_values if level > 0}


def _convention_gains(rl: RankedLists, conv: Conventions, custom: dict[int, float] | None = None
                      ) -> dict[int, float] | None:
    """Gains of the nDCG family under ``conv.gains`` (custom per-grade gains win)."""
    if conv.gains == "labels":
        return custom or None
    out: dict[int, float] = {}
    for level in rl.level_values.tolist():
        if conv.gains == "binary":
            out[level] = 1.0 if level >= rl.rel_level else 0.0
        else:  # above_level
            out[level] = float(level) if level >= rl.rel_level else 0.0
    out.update(custom or {})
    return out

BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}
ORDER: dict[str, int] = {f.name: i for i, f in enumerate(FAMILIES)}

OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")
ALL_TREC = tuple(f.name for f in FAMILIES if f.trec)
SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
       "set_relative_P", "set_map", "set_F")
NICKNAMES = {"official": OFFICIAL, "all_trec": ALL_TREC, "set": SET}
