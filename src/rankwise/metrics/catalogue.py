"""The metric catalogue as Markdown (``docs/metrics.md`` is generated from it)."""

from __future__ import annotations

from rankwise.metrics import names, profiles
from rankwise.metrics.registry import FAMILIES, Family

MATCHES = {"es_precision": "Elasticsearch", "es_recall": "Elasticsearch", "es_mean_reciprocal_rank": "Elasticsearch",
           "es_dcg": "Elasticsearch", "es_expected_reciprocal_rank": "Elasticsearch (and gdeval's ERR, max 4)",
           "AP_min": "RecBole MAP@k", "ndcg_exp_cut": "ranx ndcg_burges, ir_measures nDCG(dcg='exp-log2') (gdeval)",
           "RR_cut": "ir_measures RR@k, ranx mrr@k", "judged": "ir_measures Judged@k", "hits": "ranx hits@k",
           "F1": "ranx f1@k", "AP_ret": "torchmetrics RetrievalMAP(top_k)", "AUC": "scikit-learn roc_auc_score"}
"""Tools a family was checked against, beyond trec_eval (tests/test_*_profile.py, test_ir_measures_names.py)."""

DIFFERENCES = [
    "trec_eval 10.0 places the recall levels of `iprec_at_recall` and `11pt_avg` at int(level * R + 0.5) "
    "relevant documents; pytrec_eval (trec_eval 9 code) uses + 0.9. rankwise follows trec_eval 10.0.",
    "ranx orders tied scores by its own sort (not by doc id); the `ranx` profile keeps the run's order, which is "
    "what ranx does whenever its run is already sorted (all runs read from files).",
    "torchmetrics takes tied documents (except in nDCG, which averages them) in whatever order `torch.topk` and "
    "`torch.argsort` leave them; torch does not specify it and it changes with the list's length. The "
    "`torchmetrics` profile keeps the input order, so P, recall, AP and RR can differ on queries where tied "
    "documents of different relevance meet. torchmetrics computes in float32: values agree to about 1e-7.",
    "torchmetrics' `RetrievalPrecision`/`Recall`/`MAP`/`MRR` do not count documents scored <= 0 as retrieved "
    "but its hit rate, R-precision and nDCG do; the profile follows each metric (`retrieved=positive` on the "
    "first four).",
    "gdeval.pl (ir_measures' provider for `ERR@k` and `nDCG(dcg='exp-log2')@k`) prints 5 decimals and fixes "
    "ERR's largest grade at 4; rankwise's `ERR@k` divides by 2^(largest judged label). gdeval's ERR is "
    "`{\"expected_reciprocal_rank\": {\"k\": k, \"maximum_relevance\": 4}}`.",
    "Elasticsearch's DCG cuts its ideal ranking at min(hits, rated documents); trec_eval's nDCG cuts it at k.",
    "trec_eval 10.0's `-c` summary of `num_rel` counts labels >= 1 whatever `-l` says; `rankwise trec-eval` "
    "reproduces it, `evaluate` sums the per-query values.",
]


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
             "Conventions can be set for one metric alone the same way: `nDCG(ties=expected)@10`, "
             "`P(retrieved=positive)@5`, `AP(universe=run)`.",
             "The canonical name starts every signature (`nDCG@10|gain=linear|ties=trec|...`).", "",
             "| name | canonical | parameters | summary | definition | also written | matches |",
             "|---|---|---|---|---|---|---|"]
    for fam in FAMILIES:
        match = "trec_eval 10.0, pytrec_eval" if fam.trec else MATCHES.get(fam.name, "literature definition")
        lines.append(f"| `{fam.name}` | {_canonical(fam)} | {_parameters(fam)} | {fam.summary} | {fam.description} | "
                     f"{', '.join(_aliases(fam)) or '-'} | {match} |")
    lines += ["", "## Profiles", "",
              "`evaluate(..., profile=NAME)` / `rankwise evaluate --profile NAME` set these conventions "
              "(explicit ones override them):", "",
              "| profile | conventions |", "|---|---|"]
    for name, conv in profiles.PROFILES.items():
        text = ", ".join(f"`{k}={v}`" for k, v in conv.items()) or "the defaults"
        lines.append(f"| `{name}` | {text} |")
    doc = (profiles.__doc__ or "").split("\n\n", 1)[1].strip()
    lines += ["", "What each profile does to metric names:", "", doc, "",
              "## Where tools disagree", ""]
    lines += [f"- {d}" for d in DIFFERENCES]
    return "\n".join(lines) + "\n"


def _canonical(family: Family) -> str:
    if family.params in ("cut_long", "cut_double"):
        value = family.default[0]
        spec = names.MetricSpec(family.name, (value,), None, family.name)
        return f"`{names.canonical_name(spec, family.columns((value,), None)[0])}`".replace(
            f"@{family.columns((value,), None)[0].rsplit('_', 1)[1]}", "@k")
    spec = names.MetricSpec(family.name, family.default, None, family.name)
    return f"`{names.canonical_name(spec, family.columns(family.default, None)[0])}`"


if __name__ == "__main__":
    print(markdown(), end="")
