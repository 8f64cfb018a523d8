"""The metric catalogue as Markdown (``docs/metrics.md`` is generated from it)."""

from __future__ import annotations

from rankwise.metrics import names
from rankwise.metrics.registry import FAMILIES, Family

MATCHES = {"es_precision": "Elasticsearch", "es_recall": "Elasticsearch", "es_mean_reciprocal_rank": "Elasticsearch",
           "es_dcg": "Elasticsearch", "es_expected_reciprocal_rank": "Elasticsearch", "AP_min": "RecBole MAP@k",
           "ndcg_exp_cut": "ranx ndcg_burges", "RR_cut": "ir_measures RR@k, ranx mrr@k",
           "judged": "ir_measures Judged@k", "hits": "ranx hits@k", "F1": "ranx f1@k"}


def _aliases(family: Family) -> list[str]:
    out = [f"`{a}@k`" for a, f in names._AT_ALIASES.items() if f == family.name]
    out += [f"`{a}`" for a, f in names._PLAIN_ALIASES.items() if f == family.name]
    out += [f"`{{\"{a}\": {{...}}}}`" for a, f in names.ES_METRICS.items() if f == family.name]
    return out


def _parameters(family: Family) -> str:
    if family.name in names.ES_PARAMETERS:
        return ", ".join(names.ES_PARAMETERS[family.name])
    if family.params == "none":
        return "-"
    if family.params.startswith("cut"):
        return "cut-offs (default " + ",".join(f"{v:g}" for v in family.default) + ")"
    if family.params == "pairs":
        return "level=gain pairs" + (", p" if family.name.startswith("rbp") else "")
    return "values (default " + ",".join(f"{v:g}" for v in family.default) + ")"


def markdown() -> str:
    """Every metric family: name, parameters, summary over queries, definition, aliases, match.

    >>> "| `ndcg_cut` |" in markdown()
    True
    """
    lines = ["# Metrics", "", "Generated from `rankwise.metrics.registry` by `python -m rankwise.metrics.catalogue`.",
             "Cut-off families take a cut-off in any spelling: `ndcg_cut.10`, `ndcg_cut_10`, `ndcg@10`, `nDCG@10`.",
             "ir_measures arguments `rel=`, `dcg=` and `p=` work on every family (`P(rel=2)@5`).", "",
             "| name | parameters | summary | definition | also written | matches |",
             "|---|---|---|---|---|---|"]
    for fam in FAMILIES:
        match = "trec_eval 10.0" if fam.trec else MATCHES.get(fam.name, "literature definition")
        lines.append(f"| `{fam.name}` | {_parameters(fam)} | {fam.summary} | {fam.description} | "
                     f"{', '.join(_aliases(fam)) or '-'} | {match} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
