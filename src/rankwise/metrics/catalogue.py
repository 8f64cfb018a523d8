"""The metric catalogue as Markdown (``docs/metrics.md`` is generated from it)."""

from __future__ import annotations

from rankwise.metrics import names, profiles
from rankwise.metrics.family import Family, MetricSpec
from rankwise.metrics.registry import FAMILIES

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
    "ir_measures' `Accuracy` sorts by score with a stable sort, so tied documents keep the run's order: "
    "`ties='input'` reproduces it. It leaves out queries without a relevant document in the top k and "
    "stops with ZeroDivisionError on a query without a non-relevant one; rankwise gives both NaN (no pair), "
    "left out of the mean.",
    "ir_measures' `Compat` puts the relevant documents the run did not retrieve after the retrieved ones of "
    "their grade when every retrieved score is positive (it orders a grade by score, unretrieved = 0.0); "
    "rankwise always does.",
    "torchmetrics' `RetrievalRecallAtFixedPrecision` picks k once, on the precision and recall curves "
    "averaged over queries; rankwise's `RecallAtPrecision` picks it per query. The averaged curves are "
    "`P.1,...,k` and `recall.1,...,k`.",
    "ndeval (and pyndeval) leave alpha-DCG@1 and ERR-IA@1 undivided by the ideal-ideal value that divides every "
    "other cut-off; rankwise reproduces it. The per-subtopic sums follow the subtopics' first appearance in the "
    "judgments, as pyndeval numbers them (`rankwise ndeval` follows ndeval's numeric order).",
    "cwl-eval's RBP normalises its weights over 1,000 ranks; trec_eval's `rbp` (rankwise's `RBP(p=...)`) does "
    "not: the two differ by about p^1000 (nothing for p <= 0.95, 4e-5 at p = 0.99).",
    "trec_eval 10.0's `-c` summary of `num_rel` counts labels >= 1 whatever `-l` says; `rankwise trec-eval` "
    "reproduces it, `evaluate` sums the per-query values.",
]


_BETTER = {True: "higher", False: "lower", None: "-"}


def aliases(family: Family) -> list[str]:
    """Every other spelling of a family, as the parser reads them.

    >>> from rankwise.metrics.registry import BY_NAME
    >>> aliases(BY_NAME["ndcg_cut"])
    ['`ndcg@k`', '`ndcg_cut@k`']
    """
    out = [f"`{a}@k`" for a in family.cutoff_aliases]
    out += [f"`{a}`" for a in family.aliases if a != family.name]
    if family.elasticsearch:
        out.append(f"`{{\"{family.elasticsearch}\": {{...}}}}`")
    return out


def parameters(family: Family) -> str:
    """The family's cut-offs and typed parameters with their defaults and ranges.

    >>> from rankwise.metrics.registry import BY_NAME
    >>> parameters(BY_NAME["rbp"]).split("; ")[0]
    'p=0.9 (0..1): persistence: chance of looking at the next document'
    """
    parts = []
    if family.cutoff is not None:
        parts.append(f"{family.cutoff.description} (default " + ",".join(f"{v:g}" for v in family.cutoff.default) + ")")
    parts += [p.describe() for p in family.params]
    return "; ".join(parts) or "-"


def canonical(family: Family) -> str:
    """The canonical name of the family at its defaults (``@k`` for any cut-off).

    >>> from rankwise.metrics.registry import BY_NAME
    >>> canonical(BY_NAME["ndcg_exp_cut"]), canonical(BY_NAME["map"])
    ("`nDCG(dcg='exp-log2')@k`", '`AP`')
    """
    cutoffs = family.cutoff.default[:1] if family.cutoff is not None else ()
    spec = MetricSpec(family, cutoffs, (), None, family.name)
    name = names.canonical_name(spec, spec.columns()[0])
    if family.cutoff is not None and family.canonical is not None:
        name = name.rsplit("@", 1)[0] + "@k"
    return f"`{name}`"


def markdown() -> str:
    """Every metric family: name, parameters, summary over queries, definition, aliases, match.

    >>> "| `ndcg_cut` |" in markdown()
    True
    """
    lines = ["# Metrics", "",
             "Generated from the families registered in `rankwise.metrics.registry` by "
             "`python -m rankwise.metrics.catalogue`.",
             "Cut-off families take a cut-off in any spelling: `ndcg_cut.10`, `ndcg_cut_10`, `ndcg@10`, `nDCG@10`.",
             "ir_measures arguments work on every family: `rel=` (`P(rel=2)@5`), the family's own parameters "
             "by name (`RBP(p=0.8)`, `ERR(max_label=4)@20`) and `dcg=` on nDCG/DCG.", "",
             "Conventions can be set for one metric alone the same way: `nDCG(ties=expected)@10`, "
             "`P(retrieved=positive)@5`, `AP(universe=run)`.",
             "The canonical name starts every signature (`nDCG@10|gain=linear|ties=trec|...`).", "",
             "`better`: whether a higher value is better; `ties=expected`: whether the family has a tie-aware "
             "form (McSherry & Najork).", "",
             "| name | canonical | parameters | summary | better | ties=expected | definition | also written "
             "| matches |",
             "|---|---|---|---|---|---|---|---|---|"]
    for fam in FAMILIES:
        match = ("trec_eval 10.0, pytrec_eval" if fam.trec_eval else "") + (", " if fam.trec_eval and fam.reference
                                                                         else "") + fam.reference
        lines.append(f"| `{fam.name}` | {canonical(fam)} | {parameters(fam)} | {fam.summary} | "
                     f"{_BETTER[fam.higher_is_better]} | {'yes' if fam.tie_aware else 'no'} | "
                     f"{fam.description} | {', '.join(aliases(fam)) or '-'} | {match or 'literature definition'} |")
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


if __name__ == "__main__":
    print(markdown(), end="")
