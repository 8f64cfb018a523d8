"""Every plot kind, drawn as it is saved: its title names what is shown, and no two of its
texts (title, axis labels, legend entries, point labels, the signature) overlap or leave the
figure. Measured on matplotlib's own renderer, the boxes the PNG is drawn from."""

from __future__ import annotations

import itertools
from typing import Any

import matplotlib
import numpy as np
import pytest
from conftest import GOLDEN

matplotlib.use("Agg")

import rankwise  # noqa: E402
from rankwise.report import plots  # noqa: E402

QRELS = GOLDEN / "qrels.dl19-passage.txt"
RUNS = {"bm25": GOLDEN / "BM25.dl19.trec", "splade": GOLDEN / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec"}


def _texts(fig: Any) -> list[tuple[str, Any]]:
    """(kind: text, box in pixels) of every visible text but tick labels."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for text in fig.texts:
        out.append(("figure text", text))
    for ax in fig.axes:
        out += [("title", ax.title), ("x label", ax.xaxis.label), ("y label", ax.yaxis.label)]
        out += [("point label", t) for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            out += [("legend", t) for t in legend.get_texts()]
    boxes = []
    for kind, text in out:
        if text.get_visible() and text.get_text().strip():
            boxes.append((f"{kind} {text.get_text()[:40]!r}", text.get_window_extent(renderer)))
    return boxes


def _check(fig: Any, *named: str) -> None:
    title = " ".join(ax.get_title() for ax in fig.axes)
    for word in named:
        assert word in title, f"the title {title!r} does not name {word!r}"
    boxes = _texts(fig)
    width, height = fig.canvas.get_width_height()
    for name, box in boxes:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
            f"{name} leaves the figure ({box.x0:.0f}..{box.x1:.0f} of {width} px)"
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        if a.startswith("point label") and b.startswith("point label"):
            continue   # labels of nearby points may touch; each must still clear the rest
        assert not box_a.overlaps(box_b), f"{a} overlaps {b}"


@pytest.fixture(scope="module")
def result() -> rankwise.Result:
    return rankwise.evaluate(QRELS, RUNS, ["ndcg@10", "map"], rel_level=2)


def test_evaluation_plots(result) -> None:
    _check(plots.metric_at_k(QRELS, RUNS, "ndcg", k=20, rel_level=2), "ndcg@k")
    _check(plots.per_query_difference(result, "ndcg@10", "bm25", "splade"), "ndcg@10", "bm25", "splade")
    _check(plots.distribution(result, "map"), "map")
    _check(plots.precision_recall(QRELS, RUNS, rel_level=2))
    _check(plots.roc(QRELS, RUNS, rel_level=2))


def test_agreement_offline_online_and_tradeoff_plots() -> None:
    from rankwise.agreement import offline_online, system_agreement
    from rankwise.recsys import beyond_accuracy

    runs = {name: {"q1": {"a": 3.0 - i * 0.1, "b": 2.0 + i * 0.2, "c": 1.0}, "q2": {"a": 1.0 + i, "c": 2.0}}
            for i, name in enumerate(["first-system", "second-system", "third-system"])}
    qa, qb = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}, {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    _check(plots.system_agreement_scatter(system_agreement(qa, qb, runs, "P@1")), "P@1")
    rows = [{"experiment": f"experiment-{i}", "offline": d, "online": d / 10 + 0.001 * (-1) ** i}
            for i, d in enumerate([0.02, -0.01, 0.03, 0.005, -0.02])]
    _check(plots.offline_online_scatter(offline_online(rows, resamples=50)), "offline", "online")
    lists = {"popular": {"u": ["x", "y"], "v": ["x", "y"]}, "diverse": {"u": ["y", "z"], "v": ["w", "x"]}}
    out = beyond_accuracy(lists, ["P@1", "coverage@2"], train={"u": ["x", "x", "z"], "v": ["w"]},
                          test={"u": ["x"], "v": ["w"]})
    _check(plots.tradeoff(out, "P@1", "coverage@2"), "P@1", "coverage@2")


def test_click_perplexity_plot() -> None:
    import pandas as pd

    tables = {name: pd.DataFrame({"rank": [*map(str, range(1, 11)), "all"],
                                  "conditional_perplexity": np.linspace(1.5, 1.1, 11) + i * 0.01})
              for i, name in enumerate(["pbm", "ubm", "dbn (placement features)"])}
    _check(plots.click_perplexity_per_rank(tables, "held-out.log"), "held-out.log")
