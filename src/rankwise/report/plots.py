"""Plots (matplotlib, written as PNG/SVG/PDF): metric@k curves, per-query differences, score
distributions, interpolated precision-recall curves and ROC curves. Every plot has labelled
axes, a legend and a title naming the metric and its signature."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankwise.errors import OptionError
from rankwise.evaluation import Result, evaluate

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankwise.engine.conventions import ConventionKeywords


def _figure(width: float = 8.0, height: float = 4.4):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=110)
    return fig, ax


def wrap_signature(signature: str, width: int = 95) -> str:
    """A signature broken at ``|`` into lines of at most ``width`` characters (it never runs off
    the figure).

    >>> print(wrap_signature("nDCG@10|gain=linear|ties=trec|rel=1", width=20))
    nDCG@10|gain=linear|
    ties=trec|rel=1
    """
    lines, current = [], ""
    for part in signature.split("|"):
        piece = part if not current else "|" + part
        if current and len(current) + len(piece) > width:
            lines.append(current + "|")
            current = part
        else:
            current += piece
    return "\n".join(lines + [current])


def literal_text(fig: Any) -> Any:
    """Every text of ``fig`` drawn as written: a run named ``a$^$b`` is a name, not a
    mathtext formula that fails to parse (matplotlib reads text between two ``$`` as math).
    Tick labels and axis offsets are matplotlib's own (a log axis writes ``$10^{2}$``) and stay
    math."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    own = set()
    for axes in fig.axes:
        for axis in (axes.xaxis, axes.yaxis):
            formatter = axis.get_major_formatter()
            if isinstance(formatter, (FixedFormatter, StrCategoryFormatter, FuncFormatter)):   # names as ticks
                axis.set_major_formatter(FuncFormatter(
                    lambda x, pos, shown=formatter: re.sub(r"(?<!\\)\$", r"\\$", str(shown(x, pos)))))
            own.add(axis.get_offset_text())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                own.update((tick.label1, tick.label2))
    for text in fig.findobj(Text):
        if text not in own:
            text.set_parse_math(False)
    return fig


def save_figure(fig: Any, path: str | Path, **options: Any) -> None:
    """``fig.savefig(path)``, whole or not at all (the format from the path's suffix)."""
    from rankwise.data.atomic import atomic_open

    literal_text(fig)
    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format=suffix, **options)


def _version() -> str:
    """The signature's last part, as the metric signatures end: ``rankwise-VERSION``."""
    from rankwise._version import __version__

    return f"rankwise-{__version__}"


def _finish(fig: Any, ax: Any, title: str, signature: str, path: str | Path | None,
            warnings: list[Any] | None = None) -> Any:
    # the title names the metric; the lines under it are the metric's signature, wrapped
    fig.rankwise_warnings = list(warnings or [])   # what reading and evaluating skipped: the caller shows it
    ax.set_title(title, fontsize=10)
    fig.text(0.01, 0.01, wrap_signature(signature), fontsize=7, color="0.35", family="monospace", va="bottom")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    ax.grid(alpha=0.3)
    lines = wrap_signature(signature).count("\n") + 1
    literal_text(fig)
    fig.tight_layout(rect=(0, 0.03 + 0.035 * lines, 1, 1))
    if path is not None:
        save_figure(fig, path, metadata={"Software": None} if str(path).endswith(".png") else None)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return fig


def metric_at_k(qrels: Any, runs: Any, metric: str = "ndcg", k: int = 100, path: str | Path | None = None,
                **conventions: Any) -> Any:  # the conventions, and max_k (deprecated)
    """Mean metric@k for every cut-off 1..k for every run (where more results stop helping).

    ``metric``: any metric with an integer cut-off (ndcg, P, recall, map, success, mrr ...).
    """
    from rankwise.errors import RankwiseError, renamed
    from rankwise.metrics.names import parse_metric

    options = dict(conventions)
    renamed(options, "max_k", "k", "metric_at_k")
    k = options.pop("k", k)
    try:
        spec = parse_metric(f"{metric}@1")
    except RankwiseError:
        raise OptionError(f"metric@k curves exist for metrics with a cut-off (ndcg, P, recall, map, success, "
                          f"mrr ...), not {metric!r}") from None
    family = spec.name
    ks = list(range(1, k + 1))
    res = evaluate(qrels, runs, [f"{family}." + ",".join(map(str, ks))], **options)
    fig, ax = _figure()
    columns = res.labels[next(iter(res.labels))]
    for rs in res.runs:
        ax.plot(ks, [rs.summary(c) for c in columns], label=rs.name, lw=1.6)
    ax.set_xlabel("cut-off k")
    ax.set_ylabel(f"mean {metric}@k")
    first = res.signatures[columns[0]]
    name, _, rest = first.partition("|")
    sig = name.rsplit("@", 1)[0] + "@k|" + rest if "@" in name else first
    return _finish(fig, ax, f"{metric}@k for k = 1..{k}", sig, path, res.warnings)


def per_query_difference(result: Result, metric: str, a: str, b: str, path: str | Path | None = None) -> Any:
    """Per-query difference b - a on ``metric``, sorted, as bars (wins above 0, losses below)."""
    frame = result.per_query[metric].unstack("run")[[a, b]].dropna()
    d = np.sort((frame[b] - frame[a]).to_numpy())
    fig, ax = _figure()
    x = np.arange(len(d))
    ax.bar(x[d > 0], d[d > 0], color="tab:green", width=1.0, label=f"{b} better ({int((d > 0).sum())})")
    ax.bar(x[d < 0], d[d < 0], color="tab:red", width=1.0, label=f"{a} better ({int((d < 0).sum())})")
    ax.axhline(0, color="0.2", lw=0.8)
    ax.axhline(d.mean() if len(d) else 0, color="tab:blue", lw=1, ls="--", label=f"mean {d.mean():+.4f}")
    ax.set_xlabel(f"queries sorted by difference ({len(d)}; {int((d == 0).sum())} ties)")
    ax.set_ylabel(f"{metric}: {b} - {a}")
    return _finish(fig, ax, f"Per-query {metric}: {b} vs {a}", result.signatures[metric], path, result.warnings)


def distribution(result: Result, metric: str, kind: str = "box", path: str | Path | None = None) -> Any:
    """Box or violin plot of per-query values of ``metric``, one per run."""
    frame = result.per_query[metric].unstack("run")
    runs = [rs.name for rs in result.runs]
    data = [frame[r].dropna().to_numpy() for r in runs]
    fig, ax = _figure()
    if kind == "violin":
        ax.violinplot(data, showmeans=True)
    elif kind == "box":
        ax.boxplot(data, showmeans=True)
    else:
        raise OptionError(f"kind={kind!r}: expected box or violin")
    ax.set_xticks(range(1, len(runs) + 1), runs)
    for i, values in enumerate(data, start=1):
        ax.plot([], [], " ", label=f"{runs[i - 1]}: mean {values.mean():.4f}, n={len(values)}")
    ax.set_xlabel("run")
    ax.set_ylabel(f"per-query {metric}")
    return _finish(fig, ax, f"Distribution of per-query {metric}", result.signatures[metric], path,
                   result.warnings)


def precision_recall(qrels: Any, runs: Any, path: str | Path | None = None,
                     **conventions: Unpack[ConventionKeywords]) -> Any:
    """Mean interpolated precision at recall 0.0, 0.1, ..., 1.0 for every run."""
    levels = [i / 10 for i in range(11)]
    res = evaluate(qrels, runs, ["iprec_at_recall." + ",".join(f"{x:.1f}" for x in levels)], **conventions)
    fig, ax = _figure()
    for run in res.summary.index:
        ax.plot(levels, res.summary.loc[run].to_numpy(), marker="o", ms=3, label=str(run))
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    # the signature of the curve, not of its first point (IPrec@0.00): the conventions are shared
    conventions_part = res.signatures["iprec_at_recall_0.00"].split("|", 1)[1]
    return _finish(fig, ax, "Interpolated precision-recall", f"IPrec@recall 0.0..1.0 (11 points)|{conventions_part}",
                   path, res.warnings)


def roc(qrels: Any, runs: Any, path: str | Path | None = None, **conventions: Unpack[ConventionKeywords]) -> Any:
    """Vertically averaged ROC curves of the rankings, with the mean per-query AUC."""
    from rankwise.data import load_qrels, load_run
    from rankwise.engine.align import QrelsIndex, align
    from rankwise.engine.conventions import Conventions
    from rankwise.evaluation import _as_runs, _unique_names
    from rankwise.metrics.ranking.roc import roc_curves

    conv = Conventions(**conventions)
    judged = load_qrels(qrels)
    index = QrelsIndex.build(judged)
    fig, ax = _figure()
    loaded = [load_run(obj, name=name) for obj, name in _as_runs(runs)]
    notes = [*judged.notes, *(note for run in loaded for note in run.notes)]
    _unique_names(loaded, [])
    for run in loaded:
        rl, _ = align(run, index, conv)
        fpr, tpr, auc = roc_curves(rl)
        ax.plot(fpr, tpr, label=f"{run.name} (mean AUC {np.nanmean(auc):.3f})")
    ax.plot([0, 1], [0, 1], color="0.6", ls=":", label="chance")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    # vertical averaging: each query's curve is a step function of the false positive rate,
    # averaged at every rate; at rate 0 a query ranking a relevant document first already has
    # true positives, so the average starts above the origin
    ax.text(0.98, 0.03, "vertical average over queries: at false positive rate 0\nthe curve starts at the mean "
            "true positive rate\nbefore the first non-relevant document", transform=ax.transAxes, ha="right",
            va="bottom", fontsize=6.5, color="0.35")   # under the chance line, where no curve goes
    return _finish(fig, ax, "ROC of the rankings (vertical average over queries)",
                   f"ROC|vertical average|{conv.signature_part()}|{_version()}", path, notes)


def system_agreement_scatter(agreement: Any, path: str | Path | None = None) -> Any:
    """Each run's score under qrels A (x) against qrels B (y), with the diagonal, run names and
    the rank correlations in the title (``rankwise.agreement.SystemAgreement``)."""
    fig, ax = _figure(6.4, 5.2)
    a, b = agreement.scores_a, agreement.scores_b
    ax.scatter(a, b, color="tab:blue", zorder=3, label=f"runs ({len(a)})")
    low, high = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
    for name, x, y in zip(agreement.runs, a, b, strict=True):
        # names of points in the right third go to their left, so none runs into the legend
        right = x > low + 0.66 * (high - low)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(-4, 4) if right else (4, 4), fontsize=7,
                    ha="right" if right else "left", annotation_clip=True, clip_on=True)
    pad = 0.05 * (high - low or 1.0)
    ax.plot([low - pad, high + pad], [low - pad, high + pad], color="0.5", lw=0.8, ls="--", label="same score")
    ax.set_xlabel(f"{agreement.metric} under qrels A")
    ax.set_ylabel(f"{agreement.metric} under qrels B")
    stats = agreement.statistics
    title = (f"{agreement.metric} of each run under two qrels: Kendall tau {stats['kendall_tau']:.3f}, "
             f"tau_AP {stats['tau_ap']:.3f}")
    return _finish(fig, ax, title, f"{agreement.metric}|system agreement|{_version()}", path)


def offline_online_scatter(result: Any, path: str | Path | None = None) -> Any:
    """Each experiment's offline change (x) against its online change (y), the quadrants where
    the two agree shaded, significant online changes filled, the statistics in the title
    (``rankwise.agreement.OfflineOnline``).

    >>> from rankwise.agreement import offline_online
    >>> rows = [{"experiment": f"e{i}", "offline": d, "online": d / 10} for i, d in enumerate([0.1, -0.2, 0.3])]
    >>> fig = offline_online_scatter(offline_online(rows, resamples=50))
    >>> fig.axes[0].get_xlabel()
    'offline change (offline)'
    """
    fig, ax = _figure(6.4, 5.2)
    x, y = result.offline_change, result.online_change
    pad_x, pad_y = 0.08 * (float(np.ptp(x)) or 1.0), 0.08 * (float(np.ptp(y)) or 1.0)
    lo_x, hi_x = min(float(x.min()), 0.0) - pad_x, max(float(x.max()), 0.0) + pad_x
    lo_y, hi_y = min(float(y.min()), 0.0) - pad_y, max(float(y.max()), 0.0) + pad_y
    ax.fill_between([0, hi_x], 0, hi_y, color="tab:green", alpha=0.07, lw=0)
    ax.fill_between([lo_x, 0], lo_y, 0, color="tab:green", alpha=0.07, lw=0, label="signs agree")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.axvline(0, color="0.5", lw=0.8)
    significant = (result.online_p < result.settings["alpha"]) if result.online_p is not None else None
    if significant is None:
        ax.scatter(x, y, color="tab:blue", zorder=3, label=f"experiments ({len(x)})")
    else:
        ax.scatter(x[significant], y[significant], color="tab:blue", zorder=3,
                   label=f"online p < {result.settings['alpha']:g} ({int(significant.sum())})")
        ax.scatter(x[~significant], y[~significant], facecolors="none", edgecolors="tab:blue", zorder=3,
                   label=f"not significant online ({int((~significant).sum())})")
    if len(x) <= 40:
        for name, px, py in zip(result.experiments, x, y, strict=True):
            right = px > lo_x + 0.66 * (hi_x - lo_x)
            ax.annotate(name, (px, py), textcoords="offset points", xytext=(-4, 4) if right else (4, 4), fontsize=7,
                        ha="right" if right else "left", annotation_clip=True, clip_on=True)
    ax.set_xlim(lo_x, hi_x)
    ax.set_ylim(lo_y, hi_y)
    ax.set_xlabel(f"offline change ({result.offline})")
    ax.set_ylabel(f"online change ({result.online})")
    stats = result.statistics
    low, high = result.intervals["kendall_tau"]
    title = (f"{result.offline} vs {result.online} over {len(x)} experiments\nKendall tau "
             f"{stats['kendall_tau']:.3f} [{low:.3f}, {high:.3f}], sign agreement {stats['sign_agreement']:.2f}")
    return _finish(fig, ax, title, f"{result.offline}~{result.online}|offline-online|{_version()}", path)


def click_perplexity_per_rank(tables: dict[str, Any], log_name: str, path: str | Path | None = None,
                              column: str = "conditional_perplexity") -> Any:
    """Conditional perplexity (or ``column``) per rank of several click models on one
    held-out log, one line per model; ``tables`` maps a model's name to its
    ``rankwise.clicks.evaluate_model`` table (rows per rank and ``all``). 1 is perfect; lower
    is better.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"rank": ["1", "2", "all"], "conditional_perplexity": [1.4, 1.2, 1.3]})
    >>> fig = click_perplexity_per_rank({"pbm": table}, "test.log")
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['pbm (all 1.3000)']
    """
    fig, ax = _figure()
    ranks: list[str] = []
    for name, table in tables.items():
        per_rank = table[table["rank"].astype(str) != "all"]
        overall = table.loc[table["rank"].astype(str) == "all", column]
        ranks = per_rank["rank"].astype(str).tolist()
        label = f"{name} (all {float(overall.iloc[0]):.4f})" if len(overall) else name
        ax.plot(range(1, len(per_rank) + 1), per_rank[column].to_numpy(float), marker="o", ms=3, label=label)
    ax.set_xticks(range(1, len(ranks) + 1), ranks)
    ax.set_xlabel("rank")
    what = column.replace("_", " ")
    ax.set_ylabel(f"{what} (1 is perfect)")
    title = f"{what.capitalize()} per rank on {log_name}: {', '.join(tables)}"
    return _finish(fig, ax, title, f"{what}|CLAX definitions|log={log_name}|{_version()}", path)


def tradeoff(result: Any, x: str, y: str, path: str | Path | None = None) -> Any:
    """Each run of a ``rankwise.recsys.beyond_accuracy`` result as one point: metric ``x``
    (typically accuracy, ``ndcg@10``) against metric ``y`` (diversity, novelty, coverage ...),
    named, with the better direction of each axis in its label.

    >>> from rankwise.recsys import beyond_accuracy
    >>> out = beyond_accuracy({"a": {"u": ["x", "y"]}, "b": {"u": ["y", "z"]}}, ["P@1", "arp@2"],
    ...                       train={"u": ["x", "x", "z"]}, test={"u": ["x"]})
    >>> fig = tradeoff(out, "P@1", "arp@2")
    >>> fig.axes[0].get_xlabel(), [t.get_text() for t in fig.axes[0].texts]
    ('P@1 (higher is better)', ['a', 'b'])
    """
    table = result.table
    if "user_group" in table.columns:
        table = table[table["user_group"] == "all"]
    missing = [m for m in (x, y) if m not in set(table["metric"])]
    if missing:
        from rankwise.errors import OptionError

        raise OptionError(f"the trade-off plot needs metric(s) {', '.join(missing)} among those computed "
                          f"({', '.join(dict.fromkeys(table['metric']))})")
    values = table.pivot_table(index="run", columns="metric", values="value", sort=False)
    direction = dict(zip(table["metric"], table["higher_is_better"], strict=True))
    fig, ax = _figure(6.4, 5.2)
    ax.scatter(values[x], values[y], color="tab:blue", zorder=3, label=f"runs ({len(values)})")
    span = float(values[x].max() - values[x].min()) or 1.0
    for name, px, py in zip(values.index, values[x], values[y], strict=True):
        right = px > values[x].min() + 0.66 * span   # names in the right third go left of their point
        ax.annotate(str(name), (px, py), textcoords="offset points", xytext=(-4, 4) if right else (4, 4),
                    fontsize=7, ha="right" if right else "left")

    def axis(metric: str) -> str:
        higher = direction.get(metric)
        better = "" if higher is None else " (higher is better)" if higher else " (lower is better)"
        return f"{metric}{better}"

    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel(axis(x))
    ax.set_ylabel(axis(y))
    users = int(result.per_user.groupby("run").size().max()) if len(result.per_user) else 0
    title = f"{y} against {x}: {', '.join(map(str, values.index))} ({users} users)"
    return _finish(fig, ax, title, f"{x} vs {y}|beyond accuracy|{_version()}", path, result.warnings)
