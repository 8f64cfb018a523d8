"""compare(): matched queries, p-values equal to scipy on the per-query arrays, reports, plots."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import GOLDEN
from scipy import stats

import rankwise
from rankwise.comparison import compare
from rankwise.report import formats, plots

QRELS = GOLDEN / "qrels.dl19-passage.txt"
RUNS = {"bm25": GOLDEN / "BM25.dl19.trec", "splade": GOLDEN / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec"}


@pytest.fixture(scope="module")
def comparison():
    return compare(QRELS, RUNS, ["ndcg@10", "map"], test="t", rel_level=2)


def test_p_values_equal_scipy_on_the_same_arrays(comparison) -> None:
    pq = comparison.evaluation.per_query
    for metric in ("ndcg@10", "map"):
        a = pq.loc["bm25", metric].to_numpy()
        b = pq.loc["splade", metric].to_numpy()
        row = comparison.table[comparison.table.metric == metric].iloc[0]
        assert row.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=1e-12)
        assert row["diff"] == pytest.approx((b - a).mean(), abs=1e-15)
        assert row.n == 43
        assert row.wins + row.ties + row.losses == 43
    assert comparison.table.significant.all()  # SPLADE++ beats BM25 on DL19


@pytest.mark.parametrize("test", ["wilcoxon", "sign", "randomization", "bootstrap", "tukey", "nemenyi"])
def test_every_test_runs_and_is_deterministic(test: str) -> None:
    runs = dict(RUNS, again=GOLDEN / "BM25.dl19.trec")
    c1 = compare(QRELS, runs, "ndcg@10", test=test, permutations=2000, seed=1)
    c2 = compare(QRELS, runs, "ndcg@10", test=test, permutations=2000, seed=1)
    assert c1.table.p_value.tolist() == c2.table.p_value.tolist()
    assert len(c1.table) == 3  # all pairs of three runs
    same = c1.table[(c1.table.a == "bm25") & (c1.table.b == "again")].iloc[0]
    assert same["diff"] == 0 and not same.significant


def test_baseline_and_corrections() -> None:
    runs = dict(RUNS, again=GOLDEN / "BM25.dl19.trec")
    raw = compare(QRELS, runs, "map", baseline="bm25", correction="none")
    holm = compare(QRELS, runs, "map", baseline="bm25", correction="bonferroni")
    assert list(raw.table.b) == ["splade", "again"]
    assert holm.table.p_corrected.tolist() == pytest.approx(np.minimum(raw.table.p_value * 2, 1).tolist())


def test_missing_queries_are_left_out_for_all_runs(tmp_path) -> None:
    short = tmp_path / "short.trec"
    lines = (GOLDEN / "BM25.dl19.trec").read_text().splitlines()
    first_query = lines[0].split()[0]
    short.write_text("\n".join(line for line in lines if line.split()[0] != first_query) + "\n")
    c = compare(QRELS, {"full": RUNS["splade"], "short": short}, "map")
    assert c.n_queries["map"] == 42
    assert any("1 query(ies) are not in every run" in w for w in c.warnings)
    z = compare(QRELS, {"full": RUNS["splade"], "short": short}, "map", missing="zero")
    assert z.n_queries["map"] == 43


def test_reports(comparison) -> None:
    md = formats.summary_markdown(comparison.evaluation, comparison)
    assert "| b | splade | **" in md and "<sup>a</sup>" in md
    tex = formats.summary_latex(comparison.evaluation, comparison)
    assert "\\toprule" in tex and "\\mathbf{" in tex and "^{a}" in tex and "t test, holm correction" in tex
    data = json.loads(json.dumps(comparison.to_dict()))
    assert data["comparison"]["test"] == "t" and data["comparison"]["seed"] == 0
    assert data["metrics"]["ndcg@10"]["signature"].startswith("nDCG@10|gain=linear|ties=trec|rel=2")
    assert "| metric | a | b | n |" in formats.comparison_markdown(comparison)


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_plots_write_files(tmp_path, comparison, suffix: str) -> None:
    res = comparison.evaluation
    paths = {
        "curve": lambda p: plots.metric_at_k(QRELS, RUNS, "ndcg", 20, path=p, rel_level=2),
        "diff": lambda p: plots.per_query_difference(res, "ndcg@10", "bm25", "splade", path=p),
        "box": lambda p: plots.distribution(res, "map", "violin", path=p),
        "pr": lambda p: plots.precision_recall(QRELS, RUNS, path=p),
        "roc": lambda p: plots.roc(QRELS, RUNS, path=p),
    }
    for name, draw in paths.items():
        out = tmp_path / f"{name}.{suffix}"
        draw(out)
        assert out.stat().st_size > 1000, name


def test_plot_has_labels_legend_and_signature(comparison) -> None:
    fig = plots.per_query_difference(comparison.evaluation, "map", "bm25", "splade")
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() == "map: splade - bm25"
    assert ax.get_legend() is not None and "map" in ax.get_title()
    signature = "".join(t.get_text() for t in ax.figure.texts).replace("\n", "")
    assert "AP|ties=trec|rel=2|" in signature  # the signature is printed under the plot, wrapped


def test_compare_errors() -> None:
    with pytest.raises(rankwise.errors.RankwiseError, match="at least two runs"):
        compare(QRELS, RUNS["bm25"], "map")
    with pytest.raises(rankwise.errors.RankwiseError, match="baseline 'nope'"):
        compare(QRELS, RUNS, "map", baseline="nope")
    with pytest.raises(rankwise.errors.RankwiseError, match="unknown test"):
        compare(QRELS, RUNS, "map", test="z")


def test_nemenyi_reports_friedman() -> None:
    runs = dict(RUNS, again=GOLDEN / "BM25.dl19.trec")
    c = compare(QRELS, runs, "ndcg@10", test="nemenyi")
    pq = c.evaluation.per_query["ndcg@10"].unstack("run")
    expected = stats.friedmanchisquare(*[pq[n].to_numpy() for n in ["bm25", "splade", "again"]]).pvalue
    assert c.omnibus["ndcg@10"] == pytest.approx(expected)
    assert c.to_dict()["friedman_p"]["ndcg@10"] == pytest.approx(expected)


def _signature(fig) -> str:
    return "".join(t.get_text() for t in fig.texts).replace("\n", "")


def test_curve_plots_sign_the_whole_curve_with_the_version() -> None:
    # the PR curve's signature named its first point (IPrec@0.00); ROC and agreement had no version
    pr = _signature(plots.precision_recall(QRELS, RUNS))
    assert pr.startswith("IPrec@recall 0.0..1.0 (11 points)|ties=trec|") and "IPrec@0.00" not in pr
    assert pr.endswith(f"rankwise-{rankwise.__version__}")
    fig = plots.roc(QRELS, RUNS)
    assert _signature(fig).startswith("ROC|vertical average|ties=trec")
    assert _signature(fig).endswith(f"rankwise-{rankwise.__version__}")
    # the ROC plot says why its curves start above the origin
    assert any("vertical average over queries" in t.get_text() for t in fig.axes[0].texts)


def test_agreement_point_names_stay_clear_of_the_legend() -> None:
    from rankwise.agreement.systems import SystemAgreement

    agreement = SystemAgreement(metric="map", runs=["left-run", "right-most-run-with-a-long-name"],
                                scores_a=np.array([0.1, 0.9]), scores_b=np.array([0.2, 0.8]),
                                statistics={"kendall_tau": 1.0, "tau_ap": 1.0})
    fig = plots.system_agreement_scatter(agreement)
    fig.canvas.draw()
    ax = fig.axes[0]
    names = {t.get_text(): t for t in ax.texts}
    assert names["right-most-run-with-a-long-name"].get_ha() == "right"
    assert names["left-run"].get_ha() == "left"
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    for text in names.values():
        assert not text.get_window_extent(renderer).overlaps(legend)
    assert _signature(fig).endswith(f"rankwise-{rankwise.__version__}")


def test_markdown_summary_explains_its_marks_and_the_html_pairs_align_names_left(comparison) -> None:
    from rankwise.report import html as report_html

    text = formats.summary_markdown(comparison.evaluation, comparison)
    assert "**bold**: the best value of the metric. <sup>x</sup>: significantly better than run x (" in text
    # the pairs table's third column is run b, a name: left-aligned like run a
    assert "#pairs th:nth-child(3),#pairs td:nth-child(3){text-align:left}" in report_html.STYLE
