"""``rankwise list [KIND] [FILTER]``: every registered family's members, searchable; readable
at 80 columns in a pipe, a table on a terminal: the one listing command (``rankwise metrics
[FILTER]`` is the deprecated spelling of ``rankwise list metrics [FILTER]``)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from rankwise.cli.app import app
from rankwise.cli.output import echo as _echo
from rankwise.cli.output import fail as _fail

REGISTRIES = {
    "click-models": ("rankwise.clicks.registry", "MODELS"),
    "prior-structures": ("rankwise.clicks.structure", "PRIOR_STRUCTURES"),
    "click-rankings": ("rankwise.clicks.structure", "RANKINGS"),
    "accelerations": ("rankwise.clicks.acceleration", "ACCELERATIONS"),
    "simulated-users": ("rankwise.interleaving.simulated_users", "SIMULATED_USERS"),
    "estimators": ("rankwise.counterfactual.estimators", "OPE_ESTIMATORS"),
    "slate-estimators": ("rankwise.counterfactual.ranking", "SLATE"),
    "interleaving": ("rankwise.interleaving.methods", "INTERLEAVING_METHODS"),
    "fusion": ("rankwise.fusion.methods", "FUSION_METHODS"),
    "normalisations": ("rankwise.fusion.normalize", "NORMALISATIONS"),
    "ab-tests": ("rankwise.experiments.ab_tests", "AB_TESTS"),
    "event-aggregations": ("rankwise.experiments.definitions", "AGGREGATIONS"),
    "correction-scopes": ("rankwise.experiments.slices", "CORRECTION_SCOPES"),
    "cap-conventions": ("rankwise.experiments.capping", "CAP_CONVENTIONS"),
    "sequential": ("rankwise.stats.sequential", "SEQUENTIAL_DESIGNS"),
    "comparison-tests": ("rankwise.comparison", "COMPARISON_TESTS"),
    "corrections": ("rankwise.stats.corrections", "CORRECTION_METHODS"),
    "beyond-accuracy": ("rankwise.recsys.metrics", "BEYOND_ACCURACY"),
}
"""Each listable kind (besides ``metrics``) and where its registry is declared; only the one
asked for is imported."""


def registry(kind: str) -> Any:
    """The registry listed as ``kind``."""
    import importlib

    module, attribute = REGISTRIES[kind]
    return getattr(importlib.import_module(module), attribute)


def metric_rows(text: str = "") -> list[dict[str, Any]]:
    """The metric families as catalogue rows, those mentioning ``text`` (any case) only.

    >>> [r["name"] for r in metric_rows("reciprocal")][:3]
    ['recip_rank', 'RR_cut', 'ARHR']
    """
    from rankwise.metrics.catalogue import canonical
    from rankwise.metrics.registry import FAMILIES

    needle = text.strip().lower()
    rows = []
    for fam in FAMILIES:
        spelled = canonical(fam).strip("`")
        words = (fam.name, spelled, *fam.aliases, fam.description)
        if needle and not any(needle in str(w).lower() for w in words):
            continue
        rows.append({"name": fam.name, "aliases": spelled if spelled != fam.name else "",
                     "description": fam.description, "parameters": _parameters(fam), "reference": fam.reference or "",
                     "summary": fam.summary})
    return rows


def _parameters(family: Any) -> list[str]:
    out = []
    if family.cutoff is not None:
        out.append(f"{family.cutoff.description} (default " + ",".join(f"{v:g}" for v in family.cutoff.default) + ")")
    return out + [p.describe() for p in family.params]


def show(title: str, rows: list[dict[str, Any]], what: str, text: str) -> None:
    """A table on a terminal; 80-column blocks in a pipe or a file."""
    from rankwise.report.catalogue import blocks

    if not rows:
        _fail(f"no {what} matches {text!r}")
    from rich.console import Console

    if Console().is_terminal:
        from rankwise.report.grid import Grid
        from rankwise.report.terminal import fitted

        columns = ["name", "spelled", "parameters", "definition"]
        grid = Grid(title, columns, [[r["name"], r["aliases"], "; ".join(r["parameters"]) or "-", r["description"]]
                                     for r in rows], [False] * 4)
        console = Console()
        for table in fitted(grid, console.width):
            console.print(table)
        return
    _echo(blocks(rows))


@app.command("list")
def list_command(
    kind: Annotated[str | None, typer.Argument(
        help=", ".join(["metrics", *REGISTRIES]) + "; none: the kinds and their counts.")] = None,
    text: Annotated[str, typer.Argument(help="Show only members whose name or description contains this.")] = "",
) -> None:
    """List the members of a pluggable family (metrics, click models, estimators ...) with their
    parameters, definitions and references; FILTER searches them."""
    kinds = ["metrics", *REGISTRIES]
    if kind is None:
        from rankwise.metrics.registry import FAMILIES

        counts = {"metrics": len(FAMILIES), **{k: len(registry(k)) for k in REGISTRIES}}
        width = max(len(k) for k in kinds)
        _echo("\n".join(f"{k:<{width}}{counts[k]:>5}  rankwise list {k} [FILTER]" for k in kinds))
        return
    if kind not in kinds:
        from rankwise.params import closest

        near = closest(kind, kinds)
        _fail(f"unknown kind {kind!r}" + (f"; did you mean {near[0]!r}?" if near else ";")
              + f" expected one of: {', '.join(kinds)}")
    if kind == "metrics":
        show("rankwise metrics", metric_rows(text), "metric", text)
        return
    chosen = registry(kind)
    show(f"rankwise {chosen.kind}s", chosen.rows(text), chosen.kind, text)


TITLES = {"click-models": "Click models",
          "prior-structures": "Structures of a click model's empirical prior",
          "click-rankings": "Rules that rank documents by a fitted click model",
          "accelerations": "Ways of running a click model's EM",
          "simulated-users": "Simulated users of interleaving experiments", "estimators": "Off-policy estimators",
          "slate-estimators": "Slate off-policy estimators",
          "interleaving": "Interleaving and multileaving methods", "fusion": "Fusion methods",
          "normalisations": "Score normalisations (fusion)",
          "ab-tests": "A/B tests", "sequential": "Sequential designs",
          "event-aggregations": "Aggregations of event-log metrics",
          "correction-scopes": "Correction scopes of sliced A/B results",
          "cap-conventions": "What an A/B metric's cap reaches",
          "comparison-tests": "Significance tests of `compare`", "corrections": "Multiple-comparison corrections",
          "beyond-accuracy": "Beyond-accuracy recommender metrics"}
USE = {"simulated-users": "`rankwise interleave simulate QRELS A B --click-model 'dbn(continuation=0.8)'`",
       "click-models": "`rankwise clicks fit LOG --model 'dbn(prior=1,2, iterations=20)'`; "
                       "`rankwise.clicks.MODELS.parse('dbn(iterations=20)')`",
       "prior-structures": "`rankwise clicks fit LOG --model dbn --prior-structure flat`; "
                           "`rankwise.clicks.DBN(prior_structure='flat')`",
       "click-rankings": "`rankwise clicks rank --model M.json LOG --by satisfaction -o run.trec`; "
                         "`model.relevance(log=log, by='attractiveness')`",
       "accelerations": "`rankwise clicks fit LOG --model ubm --acceleration none`; "
                        "`model.fit(log, acceleration='squarem')`",
       "estimators": "`rankwise ope LOG -e ips -e 'dr'`; `rankwise.counterfactual.estimators.estimate(..., 'snips')`",
       "slate-estimators": "`rankwise.counterfactual.ranking.slate_estimate(..., estimator='rips')`",
       "interleaving": "`rankwise.interleaving.interleave(rankings, 'probabilistic')`",
       "fusion": "`rankwise fuse A B --method 'rrf(k=20)'`; `rankwise.fusion.fuse([a, b], 'rrf(k=20)')`",
       "normalisations": "`rankwise fuse A B --method combsum --norm zmuv`; `fuse(runs, 'combsum', norm='zmuv')`",
       "ab-tests": "`rankwise ab LOG --test welch`, `--test 'bayesian(prior_mean=0.1, proper=true)'`; "
                   "`rankwise.experiments.analyze(..., test='welch')`",
       "sequential": "`rankwise ab LOG --sequential 'always-valid(tuning=5000)'`; "
                     "`analyze(..., sequential='msprt(mixture_effect=0.2)')`",
       "event-aggregations": "`rankwise ab EVENTS -m 'ctr = count(click) / count(impression)'`; "
                             "`analyze(events, metrics=['revenue = sum(value where event = purchase)'])`",
       "correction-scopes": "`rankwise ab LOG --slice country --correction-scope all`; "
                            "`analyze(..., slices=['country'], correction_scope='metric')`",
       "cap-conventions": "`rankwise ab LOG --cap revenue=p99 --cap-convention growthbook`; "
                          "`analyze(..., caps={'revenue': 'p99'}, cap_convention='growthbook')`",
       "comparison-tests": "`rankwise compare QRELS A B --test randomization`; `rankwise.compare(..., test='t')`",
       "corrections": "`rankwise ab LOG --correction holm`, `rankwise compare ... --correction bh`; "
                      "`correction='bonferroni'`",
       "beyond-accuracy": "`rankwise beyond LISTS --train T -m novelty@10 -m 'ild(similarity=cosine)@10'`; "
                          "`rankwise.recsys.beyond_accuracy(lists, ['coverage@10'], train=...)` (docs/recsys.md)"}


def plugins_page() -> str:
    """docs/plugins.md: every registered family but the metrics (docs/metrics.md), generated
    from the registries (``python -m rankwise.cli.catalogue > docs/plugins.md``)."""
    parts = ["# Click models, estimators, interleaving, fusion methods, tests and corrections\n",
             "Generated from the registries (`python -m rankwise.cli.catalogue > docs/plugins.md`; a test "
             "fails until it is regenerated). Each member is spelled the same way in Python and on the "
             "command line: `name` or `name(key=value, ...)`, case, `-` and `_` not mattering. "
             "`rankwise list KIND [FILTER]` prints the same from the command line; the metrics are in "
             "[metrics.md](metrics.md). How to add a member: [architecture.md](architecture.md).\n"]
    for kind in REGISTRIES:
        parts.append(f"## {TITLES[kind]}\n\nUse: {USE[kind]}\n\n{registry(kind).markdown()}")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.stdout.write(plugins_page())
