"""Every evaluation convention as a named parameter; the defaults reproduce trec_eval 10.0."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, TypedDict, get_args

from rankwise.errors import RankwiseError

Ties = Literal["trec", "input", "docid_asc", "expected"]
Missing = Literal["skip", "zero"]
Duplicates = Literal["error", "first", "best"]
ScorePrecision = Literal["float32", "float64"]
Gains = Literal["labels", "above_level", "binary"]
Universe = Literal["qrels", "run"]
Retrieved = Literal["all", "positive"]
ZeroDivision = Literal["0", "1", "nan"]

TIES: tuple[str, ...] = get_args(Ties)
MISSING: tuple[str, ...] = get_args(Missing)
DUPLICATES: tuple[str, ...] = get_args(Duplicates)
PRECISIONS: tuple[str, ...] = get_args(ScorePrecision)
GAINS: tuple[str, ...] = get_args(Gains)
UNIVERSES: tuple[str, ...] = get_args(Universe)
RETRIEVED: tuple[str, ...] = get_args(Retrieved)
ZERO_DIVISION: tuple[str, ...] = get_args(ZeroDivision)


class ConventionKeywords(TypedDict, total=False):
    """The convention keywords ``evaluate``, ``compare``, the plots, the reports, fusion tuning,
    system agreement and the engines take (``**conventions``), typed: a type checker flags
    ``evaluate(..., ties="random")``. Their meaning: ``Conventions``.

    >>> sorted(ConventionKeywords.__annotations__) == sorted(Conventions.names())
    True
    """

    rel_level: int
    depth: int | None
    judged_only: bool
    missing: Missing
    ties: Ties
    score_precision: ScorePrecision
    duplicates: Duplicates
    num_docs_in_coll: int
    gains: Gains
    universe: Universe
    retrieved: Retrieved
    zero_division: ZeroDivision | int | float


@dataclass(frozen=True)
class Conventions:
    """How a run is turned into ranked lists and how queries are counted.

    - ``rel_level``: a label >= ``rel_level`` is relevant (trec_eval ``-l``).
    - ``depth``: keep only the top ``depth`` documents per query (trec_eval ``-M``); None keeps all.
    - ``judged_only``: drop retrieved documents without a judgment before ranking (``-J``).
    - ``missing``: queries in the qrels but absent from the run are left out (``skip``) or
      scored as empty rankings (``zero``, trec_eval ``-c``).
    - ``ties``: ``trec`` (score descending, then doc id descending), ``input`` (file order),
      ``docid_asc`` (score descending, then doc id ascending), ``expected`` (the expected value
      over every order of tied documents, McSherry & Najork 2008; P, recall, AP, RR, DCG/nDCG).
    - ``score_precision``: ``float64`` compares scores as C doubles, as trec_eval 10.0 does;
      ``float32`` compares them as C floats, as trec_eval 9.x and pytrec_eval do (scores equal in
      float32 are ties, broken by the tie rule).
    - ``duplicates``: a doc listed twice for one query is an ``error`` (trec_eval), or the
      ``first`` or ``best``-scored occurrence is kept (counted in the warnings).
    - ``num_docs_in_coll``: collection size, used only by ``utility``'s fourth coefficient (``-N``).
    - ``gains``: graded gains of the nDCG family are the ``labels`` (trec_eval), the labels at or
      above ``rel_level`` with 0 below (``above_level``, ranx), or ``binary`` (RecBole).
    - ``universe``: every judged document counts (``qrels``, trec_eval: a relevant document the
      run missed lowers recall), or only the documents the run returned exist (``run``,
      torchmetrics and scikit-learn, which see only the scored documents).
    - ``retrieved``: every returned document is retrieved (``all``), or only those with a score
      above 0 (``positive``, torchmetrics' precision, recall, MAP and MRR); the others stay in
      the universe (they count in R) but not in the ranking.
    - ``zero_division``: the value of a measure where it is undefined (recall, AP, nDCG ... of a
      query without a relevant judged document; set precision and Judged of a query without a
      retrieved document): ``0`` (trec_eval, torchmetrics), ``1``, or ``nan`` (undefined,
      left out of the mean).

    >>> Conventions().signature_part()
    'ties=trec|rel=1|judged=all|missing=skip|depth=all|scores=float64'
    """

    rel_level: int = 1
    depth: int | None = None
    judged_only: bool = False
    missing: Missing = "skip"
    ties: Ties = "trec"
    score_precision: ScorePrecision = "float64"
    duplicates: Duplicates = "error"
    num_docs_in_coll: int = 0
    gains: Gains = "labels"
    universe: Universe = "qrels"
    retrieved: Retrieved = "all"
    zero_division: ZeroDivision | int | float = "0"
    """Given as text, 0, 1 or NaN; kept as text."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "zero_division", _zero_division_text(self.zero_division))
        for name, allowed in (("ties", TIES), ("missing", MISSING), ("duplicates", DUPLICATES),
                              ("score_precision", PRECISIONS), ("gains", GAINS),
                              ("universe", UNIVERSES), ("retrieved", RETRIEVED), ("zero_division", ZERO_DIVISION)):
            value = getattr(self, name)
            if value not in allowed:
                raise RankwiseError(f"convention {name}={value!r}: expected one of {', '.join(allowed)}")
        if self.ties == "expected" and (self.depth is not None or self.judged_only or self.retrieved != "all"):
            raise RankwiseError("ties='expected' cannot be combined with depth, judged_only or retrieved='positive'")
        if self.depth is not None and self.depth <= 0:
            raise RankwiseError(f"convention depth={self.depth}: expected a positive integer or None")

    @classmethod
    def names(cls) -> list[str]:
        """The names accepted as keyword arguments by ``evaluate``."""
        return [f.name for f in fields(cls)]

    def signature_part(self) -> str:
        """The conventions as ``key=value`` pairs for a metric signature."""
        return "|".join([
            f"ties={self.ties}",
            f"rel={self.rel_level}",
            f"judged={'only' if self.judged_only else 'all'}",
            f"missing={self.missing}",
            f"depth={self.depth if self.depth is not None else 'all'}",
            f"scores={self.score_precision}",
        ] + ([f"gains={self.gains}"] if self.gains != "labels" else [])
          + ([f"universe={self.universe}"] if self.universe != "qrels" else [])
          + ([f"retrieved={self.retrieved}"] if self.retrieved != "all" else [])
          + ([f"zero_division={self.zero_division}"] if self.zero_division != "0" else []))

    @property
    def undefined_value(self) -> float:
        """The number ``zero_division`` stands for."""
        return float(self.zero_division)


def _zero_division_text(value: object) -> str:
    """0, 1, 0.0, "0", "nan", float("nan") ... as one of ZERO_DIVISION (others pass through and
    are refused with the allowed values)."""
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        return str(int(value))
    return str(value).lower()
