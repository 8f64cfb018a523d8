"""The metric catalogue: every registered family, in trec_eval 10.0's output order.

Each family is declared (function, parameters, names, conventions, doc) in the module that
computes it; registering it here is one line of ``DECLARED`` (its name, module and attribute).
Everything that needs to know the metrics (the name parser, the trec_eval printer, profiles,
docs, ``rankwise list metrics``, streaming) reads the families through this module.

Families load on first use: the parser finds which family a spelling means in
``rankwise.metrics.spellings``, a table generated from the families' own declarations
(``python -m rankwise.metrics.registry`` writes it; a test fails when it is stale), so that
evaluating ``ndcg@10`` imports the module of nDCG and not the other ninety families.
``FAMILIES`` (every family, imported together) is there for whoever needs them all.
"""

from __future__ import annotations

import functools
import importlib
import textwrap
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankwise.metrics.family import Family

DECLARED: tuple[tuple[str, str, str], ...] = (
    # trec_eval 10.0, in its order
    ("runid", "counts", "RUNID"),
    ("num_q", "counts", "NUM_Q"),
    ("num_ret", "counts", "NUM_RET"),
    ("num_rel", "counts", "NUM_REL"),
    ("num_rel_ret", "counts", "NUM_REL_RET"),
    ("map", "average_precision", "MAP"),
    ("gm_map", "average_precision", "GM_MAP"),
    ("Rprec", "precision", "RPREC"),
    ("bpref", "average_precision", "BPREF"),
    ("recip_rank", "average_precision", "RECIP_RANK"),
    ("iprec_at_recall", "average_precision", "IPREC_AT_RECALL"),
    ("P", "precision", "P"),
    ("relstring", "rbp", "RELSTRING"),
    ("recall", "precision", "RECALL"),
    ("infAP", "average_precision", "INFAP"),
    ("gm_bpref", "average_precision", "GM_BPREF"),
    ("Rprec_mult", "precision", "RPREC_MULT"),
    ("utility", "precision", "UTILITY"),
    ("11pt_avg", "average_precision", "ELEVEN_PT_AVG"),
    ("binG", "gain", "BING"),
    ("G", "gain", "G"),
    ("ndcg", "gain", "NDCG"),
    ("ndcg_rel", "gain", "NDCG_REL"),
    ("Rndcg", "gain", "RNDCG"),
    ("ndcg_cut", "gain", "NDCG_CUT"),
    ("map_cut", "average_precision", "MAP_CUT"),
    ("relative_P", "precision", "RELATIVE_P"),
    ("success", "precision", "SUCCESS"),
    ("set_P", "precision", "SET_P"),
    ("set_relative_P", "precision", "SET_RELATIVE_P"),
    ("set_recall", "precision", "SET_RECALL"),
    ("set_map", "precision", "SET_MAP"),
    ("set_F", "precision", "SET_F"),
    ("num_nonrel_judged_ret", "counts", "NUM_NONREL_JUDGED_RET"),
    ("prefs_num_prefs_poss", "preferences", "PREFS_NUM_PREFS_POSS"),
    ("prefs_num_prefs_ful", "preferences", "PREFS_NUM_PREFS_FUL"),
    ("prefs_num_prefs_ful_ret", "preferences", "PREFS_NUM_PREFS_FUL_RET"),
    ("prefs_simp", "preferences", "PREFS_SIMP"),
    ("prefs_pair", "preferences", "PREFS_PAIR"),
    ("prefs_avgjg", "preferences", "PREFS_AVGJG"),
    ("prefs_avgjg_Rnonrel", "preferences", "PREFS_AVGJG_RNONREL"),
    ("prefs_simp_ret", "preferences", "PREFS_SIMP_RET"),
    ("prefs_pair_ret", "preferences", "PREFS_PAIR_RET"),
    ("prefs_avgjg_ret", "preferences", "PREFS_AVGJG_RET"),
    ("prefs_avgjg_Rnonrel_ret", "preferences", "PREFS_AVGJG_RNONREL_RET"),
    ("prefs_simp_imp", "preferences", "PREFS_SIMP_IMP"),
    ("prefs_pair_imp", "preferences", "PREFS_PAIR_IMP"),
    ("prefs_avgjg_imp", "preferences", "PREFS_AVGJG_IMP"),
    ("map_avgjg", "judgment_groups", "MAP_AVGJG"),
    ("P_avgjg", "judgment_groups", "P_AVGJG"),
    ("Rprec_mult_avgjg", "judgment_groups", "RPREC_MULT_AVGJG"),
    ("rbp", "rbp", "RBP"),
    ("rbp_resid", "rbp", "RBP_RESID"),
    ("unj", "precision", "UNJ"),
    # beyond trec_eval (ranx, ir_measures, RecBole, torchmetrics, Elasticsearch names)
    ("RR_cut", "average_precision", "RR_CUT"),
    ("hits", "precision", "HITS"),
    ("judged", "precision", "JUDGED"),
    ("set_judged", "precision", "SET_JUDGED"),
    ("dcg_cut", "gain", "DCG_CUT"),
    ("ndcg_exp_cut", "gain", "NDCG_EXP_CUT"),
    ("dcg_exp_cut", "gain", "DCG_EXP_CUT"),
    ("F1", "recsys", "F1"),
    ("AP_min", "recsys", "AP_MIN"),
    ("AP_ret", "recsys", "AP_RET"),
    ("AR", "recsys", "AR"),
    ("ARHR", "recsys", "ARHR"),
    ("CG", "recsys", "CG"),
    ("NCG", "recsys", "NCG"),
    ("ERR", "recsys", "ERR"),
    ("LAG", "recsys", "LAG"),
    ("FCP", "recsys", "FCP"),
    ("Q", "ntcir", "Q"),
    ("Q_cut", "ntcir", "Q_CUT"),
    ("nERR", "ntcir", "NERR"),
    ("GAP", "ntcir", "GAP"),
    ("MDCG", "gain", "MDCG"),
    ("ndcg_signed", "signed", "NDCG_SIGNED"),
    ("AUC", "roc", "AUC"),
    ("compat", "compat", "COMPAT"),
    ("accuracy", "pairwise_accuracy", "ACCURACY"),
    ("accuracy_cut", "pairwise_accuracy", "ACCURACY_CUT"),
    ("fallout", "fallout", "FALLOUT"),
    ("recall_at_precision", "recall_at_precision", "RECALL_AT_PRECISION"),
    ("ERR_IA", "diversity", "ERR_IA"),
    ("nERR_IA", "diversity", "NERR_IA"),
    ("alpha_DCG", "diversity", "ALPHA_DCG"),
    ("alpha_nDCG", "diversity", "ALPHA_NDCG"),
    ("NRBP", "diversity", "NRBP"),
    ("nNRBP", "diversity", "NNRBP"),
    ("MAP_IA", "diversity", "MAP_IA"),
    ("P_IA", "diversity", "P_IA"),
    ("strec", "diversity", "STRECALL"),
    ("INST", "cwl", "INST"),
    ("INSQ", "cwl", "INSQ"),
    ("BPM", "cwl", "BPM"),
    ("SDCG", "cwl", "SDCG"),
    ("NERR8", "cwl", "NERR8"),
    ("NERR9", "cwl", "NERR9"),
    ("NERR10", "cwl", "NERR10"),
    ("NERR11", "cwl", "NERR11"),
    ("TBG", "cwl", "TBG"),
    ("es_precision", "elasticsearch", "ES_PRECISION"),
    ("es_recall", "elasticsearch", "ES_RECALL"),
    ("es_mean_reciprocal_rank", "elasticsearch", "ES_MEAN_RECIPROCAL_RANK"),
    ("es_dcg", "elasticsearch", "ES_DCG"),
    ("es_expected_reciprocal_rank", "elasticsearch", "ES_EXPECTED_RECIPROCAL_RANK"),
)
"""(family name, module of ``rankwise.metrics.ranking``, attribute), in output order."""

ORDER: dict[str, int] = {name: i for i, (name, _, _) in enumerate(DECLARED)}
_WHERE: dict[str, tuple[str, str]] = {name: (module, attribute) for name, module, attribute in DECLARED}


def family(name: str) -> Family:
    """The family called ``name``, its module imported on first use (KeyError: no such family).

    >>> family("ndcg_cut").cutoff.default
    (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    """
    module, attribute = _WHERE[name]
    return getattr(importlib.import_module(f"rankwise.metrics.ranking.{module}"), attribute)


class FamiliesByName(Mapping[str, "Family"]):
    """A read-only mapping from keys to family names, giving the family when a key is looked
    up (so a lookup imports one family's module, and iterating or testing a key imports none).

    >>> by_spelling = FamiliesByName({"ndcg@": "ndcg_cut"})
    >>> "ndcg@" in by_spelling, by_spelling["ndcg@"].name, by_spelling.get("p@")
    (True, 'ndcg_cut', None)
    """

    def __init__(self, names: Mapping[str, str]) -> None:
        self._names = names

    def __getitem__(self, key: str) -> Family:
        return family(self._names[key])

    def __contains__(self, key: object) -> bool:
        return key in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


BY_NAME: FamiliesByName = FamiliesByName({name: name for name in ORDER})
"""Every family by its name (trec_eval's column stem)."""


@functools.cache
def all_families() -> tuple[Family, ...]:
    """Every family, in output order (imports every family module), checked for clashes.

    >>> [f.name for f in all_families()[:3]]
    ['runid', 'num_q', 'num_ret']
    """
    families = tuple(family(name) for name in ORDER)
    for name, fam in zip(ORDER, families, strict=True):
        if fam.name != name:
            raise ValueError(f"DECLARED names {name!r} for the family {fam.name!r}")
    check(families)
    return families


def __getattr__(name: str) -> Any:
    if name == "FAMILIES":
        return all_families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def nicknames() -> dict[str, tuple[str, ...]]:
    """trec_eval's nicknames (``official``, ``set``, ``all_trec``) from the families' own marks.

    >>> nicknames()["official"][:3]
    ('runid', 'num_q', 'num_ret')
    """
    from rankwise.metrics.spellings import NICKNAMES

    return dict(NICKNAMES)


def check(families: tuple[Family, ...]) -> None:
    """Refuse a catalogue where two families claim the same name or spelling.

    >>> check(all_families())
    """
    seen: dict[tuple[str, str], str] = {}
    for fam in families:
        kind = "cutoff" if fam.cutoff is not None else "plain"
        keys = [("name", fam.name)] + [(kind, a) for a in fam.spellings]
        keys += [("plain", a) for a in fam.aliases if fam.cutoff is not None]
        keys += [("es", fam.elasticsearch)] if fam.elasticsearch else []
        for key in keys:
            if key in seen and seen[key] != fam.name:
                raise ValueError(f"{fam.name} and {seen[key]} both claim the {key[0]} spelling {key[1]!r}")
            seen[key] = fam.name
        if any(a != a.lower() for a in fam.aliases + fam.cutoff_aliases):
            raise ValueError(f"{fam.name}: aliases are matched in lower case; write them so")


def spellings_of(families: tuple[Family, ...]) -> dict[str, dict]:
    """What ``rankwise.metrics.spellings`` holds, computed from the families: the family each
    spelling without a cut-off means (``PLAIN``), each spelling taking ``@k`` (``AT``), each
    Elasticsearch metric (``ES``), and trec_eval's nicknames (``NICKNAMES``).

    >>> spellings_of(all_families())["AT"]["ndcg"]
    'ndcg_cut'
    """
    plain = {a: f.name for f in families if f.cutoff is None for a in f.spellings}
    plain.update({a: f.name for f in families if f.cutoff is not None for a in f.aliases})
    at = {a: f.name for f in families if f.cutoff is not None for a in f.spellings}
    es = {f.elasticsearch: f.name for f in families if f.elasticsearch}
    nicks: dict[str, list[str]] = {"all_trec": []}
    for fam in families:
        if fam.trec_eval and fam.judgments in ("qrels", "any"):
            nicks["all_trec"].append(fam.name)
        for nick in fam.nicknames:
            nicks.setdefault(nick, []).append(fam.name)
    return {"PLAIN": plain, "AT": at, "ES": es, "NICKNAMES": {k: tuple(v) for k, v in nicks.items()}}


def spellings_source(families: tuple[Family, ...]) -> str:
    """The text of ``rankwise/metrics/spellings.py`` for ``families``."""
    out = ['"""Which family each metric spelling means, generated from the families\' declarations by',
           "``python -m rankwise.metrics.registry``: do not edit (a test checks it against the families).",
           '"""', ""]
    for table, entries in spellings_of(families).items():
        kind = "tuple[str, ...]" if table == "NICKNAMES" else "str"
        out.append(f"{table}: dict[str, {kind}] = {{")
        for key, value in entries.items():
            if isinstance(value, tuple):  # one name list per nickname, wrapped
                items = textwrap.wrap(" ".join(f"{v!r}," for v in value), 108)
                out += [f"    {key!r}: ("] + [f"        {line}" for line in items] + ["    ),"]
            else:
                out.append(f"    {key!r}: {value!r},")
        out += ["}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).with_name("spellings.py").write_text(spellings_source(all_families()), encoding="utf-8")
