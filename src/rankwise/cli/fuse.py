"""``rankwise fuse``: several runs into one (RRF, CombSUM/MNZ ..., weighted sums, Borda ...)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rankwise.cli.app import app
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import inputs as _inputs
from rankwise.errors import RankwiseError

FLAGS = {"k": "--k", "phi": "--phi", "gamma": "--gamma", "sigma": "--sigma", "n_segments": "--n-segments", "w": "--w",
         "rel_level": "--rel-level", "weights": "--weights", "train_qrels": "--train-qrels",
         "input_depth": "--input-depth", "depth": "--depth", "ranks": "--ranks", "ties": "--ties", "norm": "--norm"}
"""The fusion keywords and the options that set them."""


def fuse_flags(message: str) -> str:
    """A fusion error written for Python callers, with the keywords it names spelled as the
    options of ``rankwise fuse``.

    >>> fuse_flags("probfuse: give n_segments= (it has no default)")
    'probfuse: give --n-segments (it has no default)'
    >>> fuse_flags("rrf: unknown parameter(s) n_segments; it takes k")
    'rrf: unknown parameter(s) --n-segments; it takes --k'
    >>> fuse_flags("slidefuse: w must be at least 0, got -1")
    'slidefuse: --w must be at least 0, got -1'
    >>> fuse_flags("weights: expected 2 numbers (one per run), got [1.0]")
    '--weights: expected 2 numbers (one per run), got [1.0]'
    """
    import re

    names = "|".join(sorted(FLAGS, key=len, reverse=True))
    message = re.sub(rf"\b({names})=(?=[\s)]|$)", lambda m: FLAGS[m.group(1)], message)
    message = re.sub(rf"^((?:\w+: )?)({names})(?= must)", lambda m: m.group(1) + FLAGS[m.group(2)], message)
    message = re.sub(rf"^({names})(?=: )", lambda m: FLAGS[m.group(1)], message)

    def listed(m: re.Match[str]) -> str:
        return m.group(1) + ", ".join(FLAGS.get(n.strip(), n.strip()) for n in m.group(2).split(","))

    return re.sub(r"(parameter\(s\) |it takes )([\w, ]+?)(?=;|$)", listed, message)


@app.command("fuse")
def fuse_command(
    runs: Annotated[list[str], typer.Argument(
        help="Runs to fuse (TREC, Parquet, JSON, JSONL; - for stdin); NAME=PATH names a run.")],
    method: Annotated[str, typer.Option(
        "--method", help="A fusion method, with its parameters if any: rrf, 'rrf(k=20)', 'wsum(weights=0.3,0.7)' "
                         "...; 'rankwise list fusion' lists every method and its parameters.")] = "rrf",
    k: Annotated[float | None, typer.Option("--k", help="rrf: the rank constant (default 60).")] = None,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="wsum, wmnz, mixed, weighted_bordafuse, weighted_condorcet: one weight per run, "
                          "comma-separated.")] = None,
    phi: Annotated[float | None, typer.Option("--phi", help="rbc: persistence (default 0.8).")] = None,
    gamma: Annotated[float | None, typer.Option("--gamma", help="combgmnz: the exponent of the count.")] = None,
    sigma: Annotated[float | None, typer.Option("--sigma", help="logn_isr: added to the count (default 0.01).")] = None,
    n_segments: Annotated[int | None, typer.Option("--n-segments", help="probfuse: segments per list.")] = None,
    w: Annotated[int | None, typer.Option("--w", help="slidefuse: the window's half-width in ranks.")] = None,
    rel_level: Annotated[int | None, typer.Option(
        "-l", "--rel-level", help="Trained methods: the lowest label that counts as relevant (default 1).")] = None,
    norm: Annotated[str, typer.Option(
        "--norm", help="A normalisation ('rankwise list normalisations'); auto: min-max for score methods, none "
                       "for rank methods.")] = "auto",
    ties: Annotated[str | None, typer.Option(
        "--ties", help="How each run's tied scores rank, and how fused ties are written: trec (document id "
                       "descending; the default), docid_asc, input.")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="Keep the first DEPTH documents per query.")] = None,
    input_depth: Annotated[int | None, typer.Option(
        "--input-depth", help="Read only each run's first INPUT_DEPTH documents per query.")] = None,
    ranks: Annotated[str | None, typer.Option(
        "--ranks", help="score (each run's ranks from its scores and --ties) or file (its rank column).")] = None,
    train_qrels: Annotated[str | None, typer.Option(
        "--train-qrels", help="posfuse, mapfuse, probfuse, segfuse, slidefuse, bayesfuse: qrels of training "
                              "queries to learn from.")] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", help="ranx or pyserini: that tool's conventions where not given.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The fused run's tag (default: the method).")] = None,
    tune: Annotated[str | None, typer.Option(
        "--tune", help="Tune the method's parameters for this metric (e.g. ndcg@10) with k-fold cross-validation "
                       "over the queries of --qrels; writes the held-out run (each fold fused as chosen on the "
                       "others).")] = None,
    qrels: Annotated[str | None, typer.Option("--qrels", help="--tune: the judgments to tune and report on.")] = None,
    grid: Annotated[list[str] | None, typer.Option(
        "--grid", help="--tune: values to try, NAME=V1,V2,... (repeat; weights as W:W per candidate, e.g. "
                       "weights=0.3:0.7,0.5:0.5); default grids otherwise.")] = None,
    folds: Annotated[int, typer.Option("--folds", help="--tune: cross-validation folds.")] = 5,
    trials: Annotated[int | None, typer.Option("--trials", help="--tune: random draws from the grid instead of "
                                                                "all of it.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="--tune: seed of the folds and random draws.")] = 0,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write the fused run here (default stdout).")
                      ] = None,
) -> None:
    """Fuse runs into one TREC run; the method, its parameters, the normalisation, the tie rule
    and the depth are printed as a signature on standard error."""
    from rankwise.data.trec_write import write_trec_text
    from rankwise.fusion import fuse

    params: dict[str, Any] = {key: value for key, value in (("k", k), ("phi", phi), ("gamma", gamma), ("sigma", sigma),
                                            ("n_segments", n_segments), ("w", w), ("rel_level", rel_level))
              if value is not None}
    if weights is not None:
        try:
            params["weights"] = [float(w) for w in weights.split(",")]
        except ValueError:
            _fail(f"--weights {weights!r}: expected numbers separated by commas, one per run")
            return
    if tune is None and (qrels is not None or grid):
        _fail("--qrels and --grid go with --tune METRIC")
        return
    try:
        with _inputs(None, runs) as (_, inputs):
            if tune is not None:
                fused = _tuned(inputs, method, tune, qrels, params, grid or [], folds, trials, seed, train_qrels,
                               norm, ties or "trec", depth, name)
            else:
                fused = fuse(inputs, method, norm=norm, ties=ties, depth=depth, name=name, ranks=ranks,
                             input_depth=input_depth, profile=profile, train_qrels=train_qrels, **params)
    except RankwiseError as exc:
        _fail(fuse_flags(str(exc)))
        return
    sys.stdout.flush()
    if output is None:
        write_trec_text(fused, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        from rankwise.data.atomic import atomic_open

        try:
            with atomic_open(output, "wb") as out:   # whole or not at all: Ctrl-C leaves no truncated run
                write_trec_text(fused, out)
        except RankwiseError as exc:
            _fail(str(exc))
    typer.echo(fused.source, err=True)
    from rankwise.cli.output import warn

    warn(fused.notes)


def parse_grid(entries: list[str]) -> dict[str, list]:
    """``--grid`` entries as ``optimize``'s grid: whole numbers stay integers, weights are
    colon-separated per candidate.

    >>> parse_grid(["k=10,60", "weights=0.3:0.7,1:0"])
    {'k': [10, 60], 'weights': [[0.3, 0.7], [1, 0]]}
    """
    def number(text: str) -> float | int:
        value = float(text)
        return int(value) if value.is_integer() and "." not in text else value

    out: dict[str, list] = {}
    for entry in entries:
        key, sep, values = entry.partition("=")
        if not sep or not values:
            raise RankwiseError(f"--grid {entry!r}: expected NAME=V1,V2,...")
        try:
            out[key.strip()] = [[number(w) for w in v.split(":")] if key.strip() == "weights" else number(v)
                                for v in values.split(",")]
        except ValueError:
            raise RankwiseError(f"--grid {entry!r}: expected numbers after {key.strip()}=") from None
    return out


def _tuned(inputs: list, method: str, metric: str, qrels: str | None, fixed: dict, grid: list[str], folds: int,
           trials: int | None, seed: int, train_qrels: str | None, norm: str, ties: str, depth: int | None,
           name: str | None):
    """The held-out run of ``optimize``; the folds' choices and the means printed on standard error."""
    from rankwise.fusion import optimize

    if qrels is None:
        raise RankwiseError("--tune needs --qrels: the judgments to tune and report on")
    searched = parse_grid(grid)
    conventions = {"rel_level": fixed.pop("rel_level")} if "rel_level" in fixed else {}
    searched.update({key: [value] for key, value in fixed.items() if key not in searched})
    found = optimize(qrels, inputs, method, metric, grid=searched or None, trials=trials, folds=folds, seed=seed,
                     train_qrels=train_qrels, norm=norm, ties=ties, depth=depth, **conventions)
    for number, fold in enumerate(found.folds, 1):
        typer.echo(f"fold {number}: {len(fold['queries'])} queries, chosen {fold['params']} "
                   f"(training mean {fold['train_mean']:.4f})", err=True)
    typer.echo(f"held-out {metric}: {found.held_out_mean:.4f} (the best candidate on every query: "
               f"{float(found.means.max()):.4f}, optimistic); best overall: {found.best}", err=True)
    if name is not None:
        found.run.name = name
    return found.run
