"""One self-contained HTML page: summary table, comparison, plots (embedded), signatures."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from rankwise._version import __version__
from rankwise.comparison import Comparison, compare
from rankwise.report import plots
from rankwise.report.formats import marked_cells

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{padding:.3rem .6rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
.sig{color:#0a7a2f;font-weight:bold}code{font-size:.8rem;color:#555}
img{max-width:100%;border:1px solid #eee;margin:.5rem 0}.warn{color:#9a6700}
"""


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _summary_table(comparison: Comparison) -> str:
    cols = list(comparison.evaluation.summary.columns)
    rows = ["<table id='summary'><tr><th></th><th>run</th>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols)
            + "</tr>"]
    for letter, name, cells in marked_cells(comparison.evaluation, comparison, 4, lambda t: f"<b>{t}</b>",
                                            lambda t, m: f"{t}<sup class='sig'>{m}</sup>"):
        rows.append(f"<tr><td>{letter}</td><td>{html.escape(name)}</td>"
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join(rows) + "</table>"


def _pairs_table(comparison: Comparison) -> str:
    head = ["metric", "a", "b", "n", "diff (b&minus;a)", f"{int(comparison.confidence * 100)}% CI", "d",
            "W/T/L", "p", f"p ({html.escape(comparison.correction)})"]
    rows = ["<table id='pairs'><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r in comparison.table.to_dict("records"):
        sig = " class='sig'" if r["significant"] else ""
        rows.append(
            f"<tr><td>{html.escape(r['metric'])}</td><td>{html.escape(r['a'])}</td><td>{html.escape(r['b'])}</td>"
            f"<td>{r['n']}</td><td>{r['diff']:+.4f}</td><td>[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]</td>"
            f"<td>{r['effect']:.2f}</td><td>{r['wins']}/{r['ties']}/{r['losses']}</td>"
            f"<td>{r['p_value']:.3g}</td><td{sig}>{r['p_corrected']:.3g}</td></tr>")
    return "\n".join(rows) + "</table>"


def write_report(qrels: Any, runs: Any, metrics: list[str], path: str | Path, *, baseline: str | None = None,
                 test: str = "t", correction: str = "holm", alpha: float = 0.05, permutations: int = 10_000,
                 seed: int = 0, curve_metric: str = "ndcg", max_k: int = 100, **conventions: Any) -> Comparison:
    """Evaluate, compare and plot, then write one HTML page that opens offline."""
    comparison = compare(qrels, runs, metrics, baseline=baseline, test=test, correction=correction, alpha=alpha,
                         permutations=permutations, seed=seed, **conventions)
    result = comparison.evaluation
    names = [rs.name for rs in result.runs]
    first = metrics[0] if metrics[0] in result.summary.columns else list(result.summary.columns)[0]
    figures = [("metric@k", plots.metric_at_k(qrels, runs, curve_metric, max_k, **conventions)),
               (f"{first} per query", plots.distribution(result, first, "box")),
               ("precision-recall", plots.precision_recall(qrels, runs, **conventions))]
    a, b = (baseline or names[0]), next(n for n in names if n != (baseline or names[0]))
    figures.insert(1, (f"{first}: {b} vs {a}", plots.per_query_difference(result, first, a, b)))
    images = "\n".join(f"<figure><img alt='{html.escape(t)}' src='{_png(f)}'><figcaption>{html.escape(t)}"
                       f"</figcaption></figure>" for t, f in figures)
    sigs = "".join(f"<li><b>{html.escape(m)}</b>: <code>{html.escape(s)}</code></li>"
                   for m, s in result.signatures.items())
    warnings = "".join(f"<li class='warn'>{html.escape(w)}</li>" for w in comparison.warnings)
    settings = ", ".join(f"{k}={v}" for k, v in comparison.settings().items())
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rankwise report</title><style>{STYLE}</style></head>
<body>
<h1>rankwise report</h1>
<p>{len(names)} runs, {len(result.summary.columns)} metrics, queries compared:
{html.escape(str(comparison.n_queries))}. rankwise {__version__}.</p>
<h2>Summary</h2>
<p>Bold: best value. Superscript letters: significantly better than that run ({html.escape(settings)}).</p>
{_summary_table(comparison)}
<h2>Comparisons</h2>
{_pairs_table(comparison)}
<h2>Plots</h2>
{images}
<h2>Signatures</h2><ul>{sigs}</ul>
<h2>Warnings</h2><ul>{warnings or "<li>none</li>"}</ul>
</body></html>
"""
    Path(path).write_text(page, encoding="utf-8")
    return comparison
