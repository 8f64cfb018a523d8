"""One self-contained HTML page: summary table, comparison, plots (embedded), signatures."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankwise._version import __version__
from rankwise.comparison import Comparison, compare
from rankwise.report import plots
from rankwise.report.formats import comparison_html, settings_text

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}
th,td{padding:.3rem .6rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
#pairs th:nth-child(3),#pairs td:nth-child(3){text-align:left}
.sig{color:#0a7a2f;font-weight:bold}code{font-size:.8rem;color:#555}
img{max-width:100%;border:1px solid #eee;margin:.5rem 0}.warn{color:#9a6700}
"""


if TYPE_CHECKING:

    pass


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    from rankwise.report.plots import literal_text

    literal_text(fig).savefig(buf, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def write_report(qrels: Any, runs: Any, metrics: list[str], path: str | Path, *, baseline: str | None = None,
                 test: str = "t", correction: str = "holm", alpha: float = 0.05, permutations: int = 10_000,
                 seed: int = 0, bootstrap_ci: str | None = None, curve_metric: str = "ndcg", k: int = 100,
                 **conventions: Any) -> Comparison:
    """Evaluate, compare and plot, then write one HTML page that opens offline.

    Takes ``rankwise.compare``'s statistics options and ``rankwise.evaluate``'s conventions;
    ``k`` is the largest cut-off of the metric@k curve of ``curve_metric``.
    """
    from rankwise.errors import renamed

    options = dict(conventions)
    renamed(options, "max_k", "k", "write_report")
    k = options.pop("k", k)
    conventions = options
    comparison = compare(qrels, runs, metrics, baseline=baseline, test=test, correction=correction, alpha=alpha,
                         permutations=permutations, seed=seed, bootstrap_ci=bootstrap_ci, **conventions)
    result = comparison.evaluation
    names = [rs.name for rs in result.runs]
    first = list(result.summary.columns)[0]
    figures = [(f"{curve_metric}@k", plots.metric_at_k(qrels, runs, curve_metric, k, **conventions)),
               (f"{first} per query", plots.distribution(result, first, "box")),
               ("precision-recall", plots.precision_recall(qrels, runs, **conventions))]
    a, b = (baseline or names[0]), next(n for n in names if n != (baseline or names[0]))
    figures.insert(1, (f"{first}: {b} vs {a}", plots.per_query_difference(result, first, a, b)))
    images = "\n".join(f"<figure><img alt='{html.escape(t)}' src='{_png(f)}'><figcaption>{html.escape(t)}"
                       f"</figcaption></figure>" for t, f in figures)
    sigs = "".join(f"<li><b>{html.escape(m)}</b>: <code>{html.escape(s)}</code></li>"
                   for m, s in result.signatures.items())
    warnings = "".join(f"<li class='warn'>{html.escape(str(w))}</li>" for w in comparison.warnings)
    counts = sorted(set(comparison.n_queries.values()))
    queries = str(counts[0]) if len(counts) == 1 else ", ".join(f"{m}: {n}" for m, n in comparison.n_queries.items())
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rankwise report</title><style>{STYLE}</style></head>
<body>
<h1>rankwise report</h1>
<p>{len(names)} runs ({html.escape(", ".join(names))}), {len(result.summary.columns)} metrics,
{html.escape(queries)} queries compared. rankwise {__version__}.</p>
<h2>Summary</h2>
<p>Bold: best value. Superscript letters: significantly better than that run
({html.escape(settings_text(comparison))}).</p>
{comparison_html(comparison)}
<h2>Plots</h2>
{images}
<h2>Signatures</h2><ul>{sigs}</ul>
<h2>Warnings</h2><ul>{warnings or "<li>none</li>"}</ul>
</body></html>
"""
    from rankwise.data.atomic import write_text

    write_text(path, page)
    return comparison
