"""The click models, declared once: name, class, typed hyperparameters, description, reference.

``MODELS`` is the only list of click models. ``rankwise clicks fit --model 'dbn(prior=1,2)'``,
``rankwise list click-models``, the saved-model reader and the conformance test read it; adding a
model is one class plus one ``ModelKind`` line here.

>>> member, values = MODELS.parse("cascade(floor=1e-8)")
>>> member.name, values["floor"], values["prior"]
('cascade', 1e-08, 'empirical')
>>> type(member.build(values)).__name__
'CascadeModel'
>>> MODELS.get("dbm")   # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankwise.errors.ParameterError: --model: unknown click model 'dbm'; did you mean 'pbm', 'ubm', 'dcm' or 'dbn'? ...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rankwise.clicks.acceleration import DEFAULT_ACCELERATION
from rankwise.clicks.chain import CCM, DBN, DCM, FIT_METHODS, SDBN
from rankwise.clicks.mixture import SEPARATOR, Mixture
from rankwise.clicks.models import (
    FLOOR,
    ITERATION_CAP,
    PBM,
    UBM,
    CascadeModel,
    ClickModel,
    DocumentCTR,
    GlobalCTR,
    RankCTR,
)
from rankwise.clicks.models import PARAMETER_TOLERANCE as PARAMETER_TOLERANCE_DEFAULT
from rankwise.clicks.pooling import POOLINGS
from rankwise.clicks.shrinkage import EMPIRICAL
from rankwise.clicks.structure import DEFAULT_STRUCTURE
from rankwise.clicks.ultra import LabelRankModel
from rankwise.errors import ParameterError
from rankwise.params import Declared, Param, Registry

PRIOR_PARAM = Param("prior", tuple, EMPIRICAL, "Beta prior of every per-pair parameter: 'empirical' fits it "
                    "to the log (empirical Bayes), or fixed pseudo-counts CLICKS,IMPRESSIONS added to each "
                    "estimate's numerator and denominator", low=0, length=2, choices=(EMPIRICAL,))
STRUCTURE_PARAM = Param("prior_structure", str, DEFAULT_STRUCTURE, "What the empirical prior's mean follows: placement "
                        "(attractiveness shrinks to the attractiveness of the rank the engine usually gives the pair) "
                        "or flat (one Beta for every pair); see rankwise list prior-structures")
FLOOR_PARAM = Param("floor", float, FLOOR, "click probability the cascade gives every rank after the first click",
                    low=0, high=1)
ITERATIONS = Param("iterations", int, ITERATION_CAP, "EM: at most this many passes over the log (a guard: a fit "
                   "stopped there warns)", low=1)
TOLERANCE = Param("tolerance", float, 1e-6, "EM: stop when the log-likelihood per session gains less", low=0)
PARAMETER_TOLERANCE = Param("parameter_tolerance", float, PARAMETER_TOLERANCE_DEFAULT,
                            "EM: and no probability moves by more in one pass (inf: the log-likelihood alone "
                            "decides)", low=0)
MIXTURE_PARAMETER_TOLERANCE = Param("parameter_tolerance", float, Mixture.parameter_tolerance,
                                    "EM: and no probability moves by more in one pass (a mixture's likelihood has "
                                    "many maxima: inf, the log-likelihood alone decides)", low=0)
ACCELERATION_PARAM = Param("acceleration", str, DEFAULT_ACCELERATION, "EM: squarem (jumps along pairs of passes to "
                           "the same limit in fewer passes) or none (plain EM); see rankwise list accelerations")
FIT_PARAMS = ("iterations", "tolerance", "parameter_tolerance", "acceleration")
"""Parameters that go to ``fit``, not to the model's constructor."""


@dataclass(frozen=True)
class ModelKind(Declared[Callable[..., "ClickModel"]]):
    """A click model: ``target`` is its class; ``fittable`` is False for models made from
    labels (``label-rank``) rather than fitted to a log."""

    fittable: bool = True

    def build(self, values: Mapping[str, Any] | None = None) -> ClickModel:
        """A new model with these hyperparameters (those of ``fit`` left out)."""
        settings = {k: v for k, v in (values or {}).items() if k not in FIT_PARAMS}
        return self.target(**settings)

    def fit_options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The values that go to ``fit`` (``iterations``, ``tolerance``)."""
        return {k: v for k, v in values.items() if k in FIT_PARAMS}

    def __call__(self, **settings: Any) -> ClickModel:
        """``MODELS["pbm"](prior=(1, 2))``: the model, as calling its class would."""
        return self.target(**settings)


POOLING = Param("satisfaction_pooling", str, POOLINGS[0], "held-out (the default: whichever of the two predicts a "
                "held-out tenth of the log's first 50,000 sessions better, partial only by more than one standard "
                "error), partial (each pair its own satisfaction, shrunk to the prior) or complete (one satisfaction "
                "for every pair)", choices=POOLINGS)
METHOD = Param("method", str, "em", "em: the exact likelihood by EM; counting: PyClick's one-pass approximation "
               "(reads 'no later click' as 'stopped')", choices=FIT_METHODS)
COMPONENTS = Param("components", str, "pbm+dbn", "the mixed click models, by name, joined by '+' (in Python, "
                   "Mixture([models]) takes models with their own settings)")
SEED = Param("seed", int, 0, "breaks the tie between components of one kind (their starting attractiveness is "
             "perturbed)", low=0)
COUNTED = (PRIOR_PARAM,)
PER_PAIR = (PRIOR_PARAM, STRUCTURE_PARAM)


def mixture(components: str = "pbm+dbn", seed: int = 0) -> Mixture:
    """A ``Mixture`` of the click models named in ``components`` (``"pbm+dbn"``, each with its
    defaults), as ``--model 'mixture(components=pbm+dbn)'`` builds it.

    >>> [m.name for m in mixture("pbm+cascade").models]
    ['pbm', 'cascade']
    """
    models = []
    for name in components.split(SEPARATOR):
        kind, values = MODELS.parse(name.strip())
        if kind.name == "mixture" or not kind.fittable:
            raise ParameterError(f"mixture: components are fittable click models, got {kind.name!r}")
        models.append(kind.build(values))
    return Mixture(models, seed=seed)
EM = (PRIOR_PARAM, STRUCTURE_PARAM, ITERATIONS, TOLERANCE, PARAMETER_TOLERANCE, ACCELERATION_PARAM)

MODELS: Registry[ModelKind] = Registry("click model", (
    ModelKind("global-ctr", GlobalCTR, "P(click) is one rate for every cell.", COUNTED,
              reference="Chuklin et al. 2015, GCTR"),
    ModelKind("rank-ctr", RankCTR, "P(click) is the click rate at the cell's rank.", PER_PAIR,
              reference="Chuklin et al. 2015, RCTR"),
    ModelKind("document-ctr", DocumentCTR, "P(click) is the (query, document) pair's click rate.", PER_PAIR,
              reference="Chuklin et al. 2015, DCTR"),
    ModelKind("pbm", PBM, "Position-based: P(C_r) = alpha_qd gamma_r, clicks independent.", EM,
              reference="Richardson et al. 2007; CLAX PositionBasedModel"),
    ModelKind("ubm", UBM, "User browsing: P(C_r | C_<r) = alpha_qd gamma_{r, rank of the previous click}.", EM,
              reference="Dupret & Piwowarski 2008; CLAX UserBrowsingModel"),
    ModelKind("cascade", CascadeModel, "Cascade: examine top-down, stop at the first click.", (*PER_PAIR, FLOOR_PARAM),
              aliases=("cm",), reference="Craswell et al. 2008; CLAX CascadeModel"),
    ModelKind("dcm", DCM, "Dependent click model: after a click at rank r, continue with lambda_r.", (*EM, METHOD),
              reference="Guo et al. 2009; CLAX DependentClickModel"),
    ModelKind("sdbn", SDBN, "Simplified DBN: attractiveness and satisfaction per pair, gamma = 1.",
              (*EM, METHOD, POOLING),
              reference="Chapelle & Zhang 2009; CLAX SimplifiedDynamicBayesianNetwork"),
    ModelKind("dbn", DBN, "Dynamic Bayesian network: attractiveness, satisfaction per pair, continuation gamma.",
              (*EM, POOLING),
              reference="Chapelle & Zhang 2009; CLAX DynamicBayesianNetwork"),
    ModelKind("ccm", CCM, "Click chain model: continuation tau_1..tau_3 after no click, a click, a satisfying one.",
              EM, reference="Guo et al. 2009; CLAX ClickChainModel"),
    ModelKind("mixture", mixture, "Each session follows one of several click models, drawn with fitted weights; "
              "one EM over the sessions' components and the components' own hidden variables.",
              (COMPONENTS, SEED, ITERATIONS, TOLERANCE, MIXTURE_PARAMETER_TOLERANCE, ACCELERATION_PARAM),
              reference="CLAX MixtureModel"),
    ModelKind("label-rank", LabelRankModel, "Click probabilities from relevance labels and examination per rank "
              "(ULTRA parameter files; not fitted).", COUNTED, fittable=False, reference="ULTRA ClickModel"),
), option="--model")


def fittable() -> list[str]:
    """The models ``rankwise clicks fit`` can fit."""
    return [m.name for m in MODELS.values() if m.fittable]


__all__ = ["FIT_PARAMS", "MODELS", "ModelKind", "fittable", "mixture"]
