"""``rankwise trec-eval``: a drop-in for the trec_eval program (same flags, names, output)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from rankwise.data.load import load_qrels, load_run
from rankwise.data.prefs import read_prefs, read_qrels_jg, read_qrels_prefs
from rankwise.engine.align import QrelsIndex, align
from rankwise.engine.conventions import Conventions
from rankwise.errors import RankwiseError
from rankwise.evaluation import check_judgments, grouped_judgments
from rankwise.metrics.compute import compute_scores
from rankwise.metrics.family import MetricSpec
from rankwise.metrics.names import parse_params
from rankwise.metrics.registry import BY_NAME, ORDER, nicknames
from rankwise.report.trec_format import format_trec
from rankwise.report.zscores import read_zscores, to_zscores

USAGE = ("rankwise trec-eval [-h] [-q] [-n] [-c] [-J] [-l N] [-M N] [-N N] [-Z FILE] [-R FORMAT] "
         "[-m MEASURE[.PARAMS]]... QRELS RUN")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rankwise trec-eval", usage=USAGE,
                                description="Evaluate RUN against QRELS exactly as trec_eval 10.0 does.")
    p.add_argument("-q", "--query", action="store_true", help="print per-query values as well")
    p.add_argument("-n", "--nosummary", action="store_true", help="do not print the summary")
    p.add_argument("-c", "--complete", action="store_true",
                   help="average over every query of the qrels (missing queries score 0)")
    p.add_argument("-J", "--judged_docs_only", action="store_true", help="drop unjudged documents")
    p.add_argument("-l", "--level_for_rel", type=int, default=1, metavar="N",
                   help="relevance level: label >= N is relevant (default 1)")
    p.add_argument("-M", "--max_retrieved_per_topic", type=int, default=None, metavar="N",
                   help="evaluate only the top N documents of each query")
    p.add_argument("-N", "--number_docs_in_coll", type=int, default=0, metavar="N",
                   help="collection size (for utility)")
    p.add_argument("-Z", "--Zscore", default=None, metavar="FILE",
                   help="report z-scores against the per-query means and deviations in FILE")
    p.add_argument("-R", "--rel_info_format", default="qrels", choices=("qrels", "prefs", "qrels_prefs", "qrels_jg"),
                   help="format of the judgments: qrels (default), prefs, qrels_prefs or qrels_jg")
    p.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measure name, nickname (official, all_trec, set, prefs, all_prefs, qrels_jg) or name.params")
    p.add_argument("qrels")
    p.add_argument("run")
    return p


def resolve_measures(args: Sequence[str]) -> list[MetricSpec]:
    """Turn trec_eval ``-m`` arguments into specs, one per family, in trec_eval's order.

    >>> [s.name for s in resolve_measures(["P.5", "map"])]
    ['map', 'P']
    """
    params: dict[str, tuple[tuple, tuple, str]] = {}
    marked: list[str] = []
    groups = nicknames()
    for arg in args or ["official"]:
        name, dot, text = arg.partition(".")
        if dot and not text:
            raise RankwiseError(f"improper measure in parameter {arg!r}")
        if name in groups:
            marked.extend(groups[name])
        elif name in BY_NAME and BY_NAME[name].trec_eval:
            marked.append(name)
        else:
            raise RankwiseError(f"illegal measure {arg!r}")
        if dot:
            fam = BY_NAME.get(name)
            if fam is None or (fam.cutoff is None and fam.syntax == "none"):
                raise RankwiseError(f"illegal measure {arg!r}: it takes no parameters")
            if name not in params:
                cutoffs, values = parse_params(fam, text)
                params[name] = (cutoffs, values, text)
    specs = []
    for name in sorted(set(marked), key=ORDER.__getitem__):
        fam = BY_NAME[name]
        default: tuple[Any, ...] = (fam.cutoff.default if fam.cutoff is not None else (), (), None)
        cutoffs, values, text = params.get(name, default)
        specs.append(MetricSpec(fam, cutoffs, values, None if fam.cutoff is not None else text, name))
    return specs


def run_trec_eval(argv: Sequence[str], out=None, float_format: str = "%6.4f") -> int:
    """Entry point: parse trec_eval arguments, evaluate, print; returns the exit code.

    ``float_format`` replaces trec_eval's ``%6.4f`` (``%.17g`` prints each double exactly)."""
    out = out or sys.stdout
    parser = _parser()
    args, extra = parser.parse_known_args(list(argv))
    if extra:
        parser.error(f"expected two files, QRELS and RUN; also got {' '.join(extra)} (one run per call, as "
                     "trec_eval; `rankwise evaluate` takes several)")
    try:
        specs = resolve_measures(args.measure)
        conv = Conventions(rel_level=args.level_for_rel, depth=args.max_retrieved_per_topic,
                           judged_only=args.judged_docs_only, missing="zero" if args.complete else "skip",
                           num_docs_in_coll=args.number_docs_in_coll)
        check_judgments(specs, args.rel_info_format)
        override: dict[str, object] = {}
        if args.rel_info_format != "qrels":
            reader = {"prefs": read_prefs, "qrels_prefs": read_qrels_prefs, "qrels_jg": read_qrels_jg}
            judgments = reader[args.rel_info_format](args.qrels)
            lists, warnings = grouped_judgments(judgments, load_run(args.run), conv)
            warnings = judgments.notes + warnings
            if lists.n_queries == 0:
                raise RankwiseError("no queries with both results and relevance info")
            scores = compute_scores(lists, specs, conv)
        else:
            qrels = load_qrels(args.qrels)
            index = QrelsIndex.build(qrels)
            rl, warnings = align(load_run(args.run), index, conv)
            warnings = qrels.notes + warnings
            if rl.n_queries == 0:
                raise RankwiseError("no queries with both results and relevance info")
            scores = compute_scores(rl, specs, conv)
        if args.complete and args.rel_info_format == "qrels":
            # trec_eval quirk: with -c the summary num_rel counts labels >= 1 whatever -l says
            override["num_rel"] = int(index.level_counts[:, index.level_values >= 1].sum())
    except RankwiseError as exc:
        print(f"rankwise trec-eval: {exc}", file=sys.stderr)
        return 2
    columns = [c for s in specs if s.family.value_kind not in ("runid", "num_q") for c in s.columns()]
    kinds = {s.family.value_kind for s in specs}
    if args.Zscore:
        try:
            scores = to_zscores(scores, read_zscores(args.Zscore))
        except RankwiseError as exc:
            print(f"rankwise trec-eval: {exc}", file=sys.stderr)
            return 2
        override = {}
    out.write(format_trec(scores, columns, per_query=args.query, summary=not args.nosummary,
                          with_runid="runid" in kinds, with_num_q="num_q" in kinds,
                          summary_override=override, zscores=bool(args.Zscore),
                          float_format=float_format))
    for w in warnings:
        print(f"rankwise trec-eval: warning: {w}", file=sys.stderr)
    return 0
