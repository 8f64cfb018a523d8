"""What the empirical prior of a per-pair parameter follows (``PRIOR_STRUCTURES``), and which
of a fitted model's quantities ranks documents (``RANKINGS``).

A click log shows most (query, document) pairs a few times. Under the empirical prior each pair's
estimate is pulled towards a prior mean, as strongly as the prior's concentration says
(``rankwise.clicks.shrinkage``); the *structure* says what that mean is:

- ``flat``: one Beta for every pair, fitted by marginal likelihood: a rare pair shrinks to the
  baseline of the whole log;
- ``placement`` (the default): the prior mean of a pair's attractiveness is a logistic function of
  where the engine placed it, ``mean log2(rank + 1)`` over its impressions
  (``clicks.placement_features``), and the concentration around it is fitted by marginal
  likelihood: a rare pair shrinks to the attractiveness of the rank the engine usually gives it.
  The placement is the input of a result page, not its outcome (no click is read), and it is
  known for a page the fit never saw, so held-out pairs are scored from it. A log whose placement
  says nothing about clicks gets a flat weight, so the structure nests ``flat``. Satisfaction
  keeps the flat prior: on CLARA 2 a placement prior for it too changes the held-out likelihood by
  at most 1e-5 per cell, a tie that leaves the default with the simpler prior
  (``benchmarks/clara2_clicks.py``, the rows "satisfaction by placement too").

A structure applies under the empirical prior only: a fixed prior (``prior=(1, 2)``) is fixed
pseudo-counts. Features of one's own (``model.use_features``) replace the structure.

A ranking rule scores each pair from the fitted parameters:

- ``relevance`` (the default): what the model's authors define as relevance: attractiveness x
  satisfaction for DBN and SDBN (Chapelle & Zhang 2009, ``a_u s_u``), attractiveness for the
  others (for CCM, Guo et al. 2009's ``R``, which also governs continuation after a click);
- ``attractiveness``: attractiveness alone;
- ``satisfaction``: satisfaction alone (models with satisfaction only).

>>> [s.name for s in PRIOR_STRUCTURES.values()]
['placement', 'flat']
>>> [r.name for r in RANKINGS.values()]
['relevance', 'attractiveness', 'satisfaction']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.params import Declared, Registry


def placement_from_sums(log: Any, sums: dict[str, np.ndarray]) -> Any:
    """``PairFeatures`` with each pair's ``mean_log_rank`` from its ``placement_sums`` (the pairs
    of ``log``, a click log or a fitted model: ``query_ids``, ``doc_ids``, ``pair_query``,
    ``pair_doc``); pairs never shown have no row."""
    import pandas as pd

    from rankwise.clicks.features import PairFeatures

    seen = sums["impressions"] > 0
    queries = np.asarray(log.query_ids, dtype=object)[np.asarray(log.pair_query)[seen]].astype(str)
    docs = np.asarray(log.doc_ids, dtype=object)[np.asarray(log.pair_doc)[seen]].astype(str)
    values = (sums["placed"][seen] / sums["impressions"][seen])[:, None]
    return PairFeatures(("mean_log_rank",), pd.MultiIndex.from_arrays([queries, docs]), values)


def placement_structure(log: Any) -> Any:
    """The placement features of ``log`` (``clicks.placement_features``) as ``PairFeatures``,
    kept on the log (``log.cache``) for the next call.

    >>> from rankwise.clicks.log import ClickLog
    >>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["a", "b"]], [[1, 0], [0, 0]])
    >>> features = placement_structure(log)
    >>> features.names, features.values.ravel().tolist()      # log2(2) = 1 and log2(3)
    (('mean_log_rank',), [1.0, 1.584962500721156])
    """
    from rankwise.clicks.features import placement_sums

    cache = getattr(log, "cache", None)
    if cache is not None and "placement_structure" in cache:
        return cache["placement_structure"]
    sums = {"impressions": np.zeros(log.n_pairs), "placed": np.zeros(log.n_pairs)}
    for chunk in log.chunks(250_000):
        for key, value in placement_sums(chunk).items():
            sums[key] += value
    features = placement_from_sums(log, sums)
    if cache is not None:
        cache["placement_structure"] = features
    return features


def no_structure(log: Any) -> None:
    """The flat prior: no features."""
    return None


def no_sums(chunk: Any) -> dict[str, np.ndarray]:
    """The flat prior reads nothing from the log."""
    return {}


def _placement_sums(chunk: Any) -> dict[str, np.ndarray]:
    from rankwise.clicks.features import placement_sums

    return placement_sums(chunk)


@dataclass(frozen=True)
class PriorStructure(Declared[Callable[..., Any]]):
    """A structure of the empirical prior: ``target(log, **params)`` gives the features its
    prior mean follows for the pairs of a log (``PairFeatures``; None: one Beta for every
    pair), over the per-pair parameters ``fields``. A fit reads them in its first pass:
    ``sums(chunk, **params)`` adds up per chunk, ``from_sums(pairs, totals, **params)`` makes
    the features of the fitted pairs. ``params`` are the member's, from its spelling
    (``name(key=value)``)."""

    fields: tuple[str, ...] = ("alpha",)
    sums: Callable[..., dict[str, np.ndarray]] = no_sums
    from_sums: Callable[..., Any] | None = None


def structure_of(spelling: str) -> tuple[PriorStructure, dict[str, Any]]:
    """The prior structure a spelling names, and its parameters (``PRIOR_STRUCTURES.parse``).

    >>> structure_of("flat")[0].fields
    ()
    """
    return PRIOR_STRUCTURES.parse(spelling)


PRIOR_STRUCTURES: Registry[PriorStructure] = Registry("prior structure", (
    PriorStructure("placement", placement_structure, "Attractiveness shrinks to a logistic function of where the "
                   "engine placed the pair (mean log2(rank + 1) of its impressions); satisfaction to one Beta.",
                   reference="empirical Bayes with a covariate (Efron 2010, ch. 1); GCM features (Zhang et al. 2011)",
                   sums=_placement_sums, from_sums=placement_from_sums),
    PriorStructure("flat", no_structure, "One Beta for every pair, fitted by marginal likelihood.", fields=(),
                   reference="empirical Bayes (Gelman et al., Bayesian Data Analysis, 5.3)"),
), option="--prior-structure")
"""The structures of the empirical prior; the first is the default."""

DEFAULT_STRUCTURE = "placement"


def model_relevance(model: Any, values: dict[str, np.ndarray]) -> np.ndarray:
    """The model's own relevance (``model.relevance_scores``)."""
    return np.asarray(model.relevance_scores(values), dtype=np.float64)


def attractiveness_only(model: Any, values: dict[str, np.ndarray]) -> np.ndarray:
    """Attractiveness alone."""
    if "alpha" not in values:
        raise OptionError(f"--by attractiveness: the {model.name} model has no attractiveness parameter; it ranks "
                          f"by relevance")
    return np.asarray(values["alpha"], dtype=np.float64)


def satisfaction_only(model: Any, values: dict[str, np.ndarray]) -> np.ndarray:
    """Satisfaction alone (a model with satisfaction)."""
    if "sigma" not in values:
        raise OptionError(f"--by satisfaction: the {model.name} model has no satisfaction parameter; it ranks by "
                          f"relevance or attractiveness")
    return np.asarray(values["sigma"], dtype=np.float64)


@dataclass(frozen=True)
class Ranking(Declared[Callable[..., np.ndarray]]):
    """A ranking rule: ``target(model, values, **params)`` scores pairs from their per-pair
    parameters (``values``: by attribute, ``alpha``, ``sigma``; ``params``: the rule's, from
    its spelling)."""


def ranking_rule(spelling: str) -> Callable[[Any, dict[str, np.ndarray]], np.ndarray]:
    """The scoring function a ranking rule's spelling names, its parameters bound.

    >>> rule = ranking_rule("attractiveness")
    >>> rule(None, {"alpha": np.array([0.2, 0.5])}).tolist()
    [0.2, 0.5]
    """
    member, params = RANKINGS.parse(spelling)
    return lambda model, values: member.target(model, values, **params)


RANKINGS: Registry[Ranking] = Registry("ranking rule", (
    Ranking("relevance", model_relevance, "What the model's authors call relevance: attractiveness x satisfaction "
            "for DBN and SDBN, attractiveness for the others.", reference="Chapelle & Zhang 2009; Guo et al. 2009"),
    Ranking("attractiveness", attractiveness_only, "Attractiveness alone.",
            reference="the examination hypothesis (Richardson et al. 2007)"),
    Ranking("satisfaction", satisfaction_only, "Satisfaction alone (DBN, SDBN).",
            reference="Chapelle & Zhang 2009, s_u"),
), option="--by")
"""The rules that rank documents by a fitted click model; the first is the default."""


__all__ = ["DEFAULT_STRUCTURE", "PRIOR_STRUCTURES", "PriorStructure", "RANKINGS", "Ranking", "placement_structure",
           "ranking_rule", "structure_of"]
