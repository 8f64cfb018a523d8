"""What a metric family is: one object holding its function and every fact about it.

A ``Family`` is declared once, in the module that holds its function, and registered by one
line in ``rankwise.metrics.registry``. The name parser, the trec_eval printer, profiles,
``rankwise list metrics``, the generated docs/metrics.md, streaming ``RankingMetrics`` and rank-eval
all read these objects; none of them keeps a table of metric names of its own.

Every family computes with the same signature (rax's style)::

    compute(lists: RankedLists, conventions: Conventions, cutoffs: tuple, params: dict) -> values

``cutoffs`` holds the family's cut-offs (one output column each) and ``params`` every typed
parameter, defaults filled in. The result is one value per query (or one column per cut-off).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rankwise import params
from rankwise.errors import MetricParameterError, ParameterError

ALL = 10**9
"""A cut-off that keeps every document (``Judged`` without ``@k``, ``nDCG(dcg='exp-log2')``)."""


@dataclass(frozen=True)
class Param(params.Param):
    """One typed parameter of a family (``rankwise.params.Param``); a bad value raises
    ``MetricParameterError``.

    >>> Param("p", float, 0.9, "persistence", low=0.0, high=1.0).convert("0.8", "RBP")
    0.8
    >>> Param("p", float, 0.9, "persistence", low=0.0, high=1.0).convert("2", "RBP")
    Traceback (most recent call last):
    ...
    rankwise.errors.MetricParameterError: RBP: p must be in [0, 1], got 2.0
    """

    error: ClassVar[type[ParameterError]] = MetricParameterError


@dataclass(frozen=True)
class Cutoff:
    """The cut-offs of a family that produces one column per cut-off (``P_5``, ``P_10``)."""

    type: type
    default: tuple
    description: str = "cut-off: count only the top k documents"

    def column(self, family: str, value: float) -> str:
        """The trec_eval column name of one cut-off (``P_5``, ``iprec_at_recall_0.10``)."""
        return f"{family}_{int(value)}" if self.type is int else f"{family}_{value:.2f}"


@dataclass(frozen=True)
class ProfileName:
    """What a name means under a profile: ``names`` (lower case) are read as this family.

    ``cutoff``: ``"only"`` (only ``name@k``; a plain ``name`` keeps its usual meaning),
    ``"required"`` (as ``only``, and a plain ``name`` is an error), ``"none"`` (only ``name``),
    ``"optional"`` (both);
    ``cutoff_param`` receives k when the family takes k as a parameter (Elasticsearch);
    ``without_cutoff`` is the cut-off used for a plain ``name``; ``arguments`` are fixed
    parameter values and ``max_label`` names a parameter set to the largest judged label.
    """

    profile: str
    names: tuple[str, ...]
    cutoff: str = "optional"
    arguments: tuple[tuple[str, Any], ...] = ()
    conventions: tuple[tuple[str, Any], ...] = ()
    cutoff_param: str | None = None
    without_cutoff: int | None = None
    max_label: str | None = None


Compute = Callable[[Any, Any, tuple, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Family(params.Declared[Compute]):
    """One metric family, defined in one place: a kind of ``rankwise.params.Declared``, with its
    fields (``name``, ``target``: the computation, ``description``, ``params``, ``aliases``,
    ``reference``: what it is tested against) and the facts of a metric below.

    ``name`` is trec_eval's name (the column stem: ``ndcg_cut`` -> ``ndcg_cut_10``).
    ``summary``: how per-query values aggregate over queries: ``mean``, ``nanmean`` (undefined
    queries left out), ``gmean`` (trec_eval's geometric mean), ``sum`` or ``none``.
    ``value_kind``: ``float``, ``int``, ``string``, ``runid`` or ``num_q`` (how trec_eval prints it).
    ``syntax``: how trec_eval's ``name.TEXT`` fills the parameters: ``positional`` (a list of
    numbers, in parameter order) or ``pairs`` (``name=value``; integer names are per-grade gains).
    """

    params: tuple[Param, ...] = ()
    """Its parameters (metric ``Param``s: they raise ``MetricParameterError``)."""
    cutoff: Cutoff | None = None
    syntax: str = "none"
    summary: str = "mean"
    value_kind: str = "float"
    higher_is_better: bool | None = True
    """None for counts and labels that are neither better nor worse when larger."""
    tie_aware: bool = False
    """Has a closed form under ``ties='expected'`` (McSherry & Najork)."""
    gain_based: bool = False
    """Sums per-grade gains (the signature names them)."""
    continuous: bool = False
    """Defined on continuous relevance (``Qrels.from_values``): its gains are the values."""
    undefined: str | None = None
    """When its value is undefined (0/0): ``no_relevant`` (a query without a relevant judged
    document), ``no_nonrelevant`` (without a judged non-relevant one) or ``no_retrieved``
    (nothing retrieved); the ``zero_division`` convention decides it."""
    cutoff_sensitive: bool = True
    """Its value at k depends on which of several tied documents falls inside the top k."""
    trec_eval: bool = False
    """Part of trec_eval 10.0 (``rankwise trec-eval -m``; ``all_trec`` when it reads qrels)."""
    judgments: str = "qrels"
    """What it is computed from: ``qrels``, ``prefs`` (preference judgments, trec_eval ``-R prefs``
    or ``-R qrels_prefs``) or ``qrels_jg`` (qrels in judgment groups, ``-R qrels_jg``); ``any``
    for the run's name and the query count."""
    nicknames: tuple[str, ...] = ()
    """trec_eval nicknames it belongs to besides ``all_trec`` (``official``, ``set``)."""
    canonical: str | None = None
    """ir_measures' name (the canonical name's stem); else the trec_eval column is canonical."""
    canonical_args: tuple[str, ...] = ()
    cutoff_aliases: tuple[str, ...] = ()
    """Spellings taking ``@k`` (``ndcg@10``, ``nDCG@10``), matched case-insensitively."""
    elasticsearch: str | None = None
    """Elasticsearch rank_eval's metric name (``{"dcg": {"k": 10}}``)."""
    short_name: str | None = None
    """A short label for tables (``es:DCG@10``), where the name is long."""
    variants: tuple[tuple[str, str, str], ...] = ()
    """(argument, value, family): ir_measures arguments that select another family
    (``nDCG(dcg='exp-log2')`` -> ``ndcg_exp_cut``)."""
    profiles: tuple[ProfileName, ...] = ()
    digits_param: str | None = None
    """ranx's ``name.NN``: the parameter it sets to 0.NN (``rbp.95`` -> p = 0.95)."""
    details: Callable[..., dict] | None = field(default=None, repr=False)
    """Per-query details (Elasticsearch's ``metric_details``): ``details(lists, params)``."""

    def __post_init__(self) -> None:
        if self.syntax not in ("none", "positional", "pairs"):
            raise ValueError(f"{self.name}: syntax {self.syntax!r}")
        if self.summary not in ("mean", "nanmean", "gmean", "sum", "none"):
            raise ValueError(f"{self.name}: summary {self.summary!r}")

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every lower-case name the parser reads as this family: its aliases (``@k`` ones for a
        family with cut-offs) and its canonical name, so that a canonical name always parses."""
        own = self.cutoff_aliases if self.cutoff is not None else self.aliases
        extra = (self.canonical.lower(),) if self.canonical and not self.canonical_args else ()
        return tuple(dict.fromkeys(own + extra))

    def param(self, name: str) -> Param | None:   # type: ignore[override]
        """The parameter called ``name`` (ir_measures' lower-cased spelling too: ``t`` for ``T``),
        None when it has none of that name."""
        exact = next((p for p in self.params if p.name == name), None)
        return exact or next((p for p in self.params if p.name.lower() == name.lower()), None)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    @property
    def depth_param(self) -> Param | None:
        """The parameter that plays the role of a cut-off (Elasticsearch's ``k``)."""
        return self.param("k")


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: its family, cut-offs, parameters, and the name the user wrote.

    ``params`` holds the parameters set explicitly, as (name, value) pairs; ``printable`` the
    parameter text trec_eval appends to the column name (``set_F_0.5``).
    """

    family: Family
    cutoffs: tuple = ()
    params: tuple[tuple[str, Any], ...] = ()
    printable: str | None = None
    label: str = ""
    rel: int | None = None
    """A relevance level of this metric alone (ir_measures' ``rel=``), else the conventions'."""
    conventions: tuple = ()
    """Conventions of this metric alone, as sorted (name, value) pairs (``nDCG(ties=expected)@10``)."""

    @property
    def name(self) -> str:
        return self.family.name

    def arguments(self) -> dict[str, Any]:
        """Every parameter, defaults filled in (per-grade gains as a dict)."""
        out = {**self.family.defaults(), **dict(self.params)}
        for p in self.family.params:
            if p.type is dict and out[p.name] is not None:
                out[p.name] = dict(out[p.name])
        return out

    def compute(self, lists: Any, conventions: Any) -> Any:
        return self.family.target(lists, conventions, self.cutoffs, self.arguments())

    def columns(self) -> list[str]:
        """Column names as trec_eval prints them (``P_5``, ``set_F_0.5``)."""
        fam = self.family
        if fam.cutoff is not None:
            return [fam.cutoff.column(fam.name, v) for v in self.cutoffs]
        if self.printable is not None and fam.syntax != "none":
            return [f"{fam.name}_{self.printable}"]
        return [fam.name]

    def result_columns(self) -> list[str]:
        """Column names in results: a metric's own relevance level and conventions are part of
        them (``P_5(rel=2)``), as are the parameters of a family with cut-offs
        (``fallout_10(zero_division=1)``), so the same family under two settings never collides."""
        args = [f"{k}={v}" for k, v in self.params if self.family.cutoff is not None and not isinstance(v, tuple)]
        args += ([f"rel={self.rel}"] if self.rel is not None else []) + [f"{k}={v}" for k, v in self.conventions]
        return [f"{c}({','.join(args)})" for c in self.columns()] if args else self.columns()

    def depth(self) -> int | None:
        """How many documents per query the metric looks at (None: all)."""
        if self.family.cutoff is not None and self.family.cutoff.type is int and self.cutoffs:
            return int(max(self.cutoffs))
        if self.family.depth_param is not None:
            return int(self.arguments()["k"])
        return None

    def key(self) -> tuple:
        return (self.family.name, self.cutoffs, self.params, self.printable, self.rel)


def of_lists(fn: Callable[[Any], Any]) -> Compute:
    """A family's compute from a function of the ranked lists alone.

    >>> of_lists(len)([1, 2], None, (), {})
    2
    """
    return lambda lists, conventions, cutoffs, params: fn(lists)


def per_cutoff(fn: Callable[[Any, Any], Any]) -> Compute:
    """A family's compute from a function of (lists, k): one column per cut-off.

    >>> per_cutoff(lambda lists, k: [k, k])(None, None, (5, 10), {}).tolist()
    [[5, 10], [5, 10]]
    """
    import numpy as np

    return lambda lists, conventions, cutoffs, params: np.column_stack([fn(lists, k) for k in cutoffs])


@dataclass
class QueryLists:
    """What a family computes on, for judgments other than plain qrels: the evaluated queries,
    the run's name and the relevance level (families read the rest from a subclass)."""

    query_ids: Any
    run_name: str = field(default="run", kw_only=True)
    rel_level: int = field(default=1, kw_only=True)
    tie_size: None = field(default=None, kw_only=True)
    """No tie-aware form: ``ties="expected"`` is refused by these families."""

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)
