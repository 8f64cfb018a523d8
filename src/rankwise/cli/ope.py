"""``rankwise ope``: the value of a target policy from a log of another, by off-policy estimators."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rankwise.cli.app import app
from rankwise.cli.options import Digits, ReportFormat, with_signature
from rankwise.cli.output import emit as _emit
from rankwise.cli.output import fail as _fail
from rankwise.cli.output import show_grids as _show_grids
from rankwise.cli.output import sign as _sign
from rankwise.cli.output import warn as _warn
from rankwise.errors import RankwiseError


@app.command("ope")
@with_signature
def ope(
    logs: Annotated[list[str], typer.Argument(
        help="Logged rounds: CSV, TSV, Parquet, JSONL (optionally .gz), one row per shown action.")],
    policy: Annotated[str, typer.Option(
        "--policy", help="The target policy: 'uniform', a table (action, probability[, position]) or another "
                         "log (its propensities, averaged per action and position).")],
    estimator: Annotated[list[str], typer.Option(
        "-e", "--estimator", help="An estimator (repeat; default all); 'rankwise list estimators' lists "
                                  "them.")] = [],  # noqa: B006
    action: Annotated[str, typer.Option("--action", help="Column with the action (item) id.")] = "action",
    position: Annotated[str, typer.Option("--position", help="Column with the 1-based position.")] = "position",
    no_position: Annotated[bool, typer.Option("--no-position", help="The log has one position.")] = False,
    reward: Annotated[str, typer.Option("--reward", help="Column with the reward (click).")] = "reward",
    pscore: Annotated[str, typer.Option("--pscore", help="Column with the logging propensity.")] = "pscore",
    clip: Annotated[float, typer.Option(
        "--clip", help="ips/dr: cap on the weight; switch-dr: weights above it use the model alone.")] = float("inf"),
    prior: Annotated[float, typer.Option(
        "--prior", help="Reward model: pseudo-rounds shrinking each action's mean toward its position's.")] = 1.0,
    alpha: Annotated[float, typer.Option("--alpha", help="Intervals at 1 - alpha.")] = 0.05,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples (0: no interval).")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
    output_format: Annotated[ReportFormat, typer.Option("-f", "--format", help="Output format.")] = ReportFormat.table,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Write to a file.")] = None,
    digits: Digits = 4,
) -> None:
    """Estimate a target policy's mean reward from rounds logged under another policy (IPS,
    SNIPS, direct method, doubly robust and variants), with bootstrap intervals."""
    from rankwise.counterfactual import bandit_log
    from rankwise.counterfactual.estimators import ESTIMATORS
    from rankwise.report import ope as render

    columns: dict[str, Any] = {"action": action, "position": None if no_position else position, "reward": reward,
                               "pscore": pscore}
    try:
        log = bandit_log.read_bandit_log(logs, **columns)
        target, warnings = bandit_log.target_policy(policy, **columns)
        result = bandit_log.evaluate_policy(log, target, estimator or ESTIMATORS, clip=clip, prior=prior, alpha=alpha,
                                            resamples=resamples, seed=seed, policy_name=policy)
        result.warnings[:0] = warnings
    except RankwiseError as exc:
        from rankwise.cli.output import column_hint

        _fail(column_hint(str(exc), {action: "--action", reward: "--reward", pscore: "--pscore",
                                     position: "--position NAME (or --no-position)"}))
        return
    _sign(result)
    if output_format in (ReportFormat.table, ReportFormat.text):
        _show_grids([render.ope_grid(result, digits)], output, plain=output_format == ReportFormat.text,
                    warnings=result.warnings)
    elif output_format == ReportFormat.markdown:
        _emit(render.ope_markdown(result, digits), output, result.warnings, output_format.value)
    else:
        _emit((render.ope_json if output_format == ReportFormat.json else render.ope_csv)(result), output,
              result.warnings, output_format.value)
    if output is not None:
        _warn(result.warnings)
