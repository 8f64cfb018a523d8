"""rankwise.agreement: label agreement equal to scikit-learn's cohen_kappa_score and the
krippendorff package (1e-12), on the DL19 qrels against a perturbed copy, with bootstrap
intervals over queries that are seeded and cover the point estimate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.agreement import cohen_kappa, krippendorff_alpha, label_agreement
from rankwise.agreement.labels import confusion
from rankwise.errors import RankwiseError

DL19 = Path(__file__).parents[1] / "examples" / "dl19" / "qrels.dl19-passage.txt"


def _noisy_copy(path: Path, seed: int, flip: float = 0.3, drop: float = 0.05) -> dict[str, dict[str, int]]:
    """The qrels with a share of labels moved one grade up or down and a few pairs dropped."""
    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        q, _, d, label = line.split()
        if rng.random() < drop:
            continue
        value = int(label)
        if rng.random() < flip:
            value = int(np.clip(value + rng.choice([-1, 1]), 0, 3))
        out.setdefault(q, {})[d] = value
    return out


def _pairs(path: Path, noisy: dict) -> tuple[np.ndarray, np.ndarray]:
    a, b = [], []
    for line in path.read_text().splitlines():
        q, _, d, label = line.split()
        if d in noisy.get(q, {}):
            a.append(int(label))
            b.append(noisy[q][d])
    return np.array(a), np.array(b)


@pytest.mark.parametrize("weights", ["unweighted", "linear", "quadratic"])
def test_kappa_equals_scikit_learn(weights: str) -> None:
    from sklearn.metrics import cohen_kappa_score

    noisy = _noisy_copy(DL19, 1)
    a, b = _pairs(DL19, noisy)
    expected = cohen_kappa_score(a, b, weights=None if weights == "unweighted" else weights)
    got = cohen_kappa(confusion(a, b, np.unique(np.concatenate([a, b]))), weights)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_krippendorff_package(level: str) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    noisy = _noisy_copy(DL19, 2)
    a, b = _pairs(DL19, noisy)
    expected = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
    assert krippendorff_alpha(a, b, level) == pytest.approx(expected, abs=1e-12)


def test_hand_computed_kappa() -> None:
    # 50 pairs: 20 both relevant, 15 both not, 5 + 10 disagreements: p_o = 35/50 = .7
    # p_e = (25 x 30 + 25 x 20) / 50^2 = .5 -> kappa = (.7 - .5) / (1 - .5) = .4
    assert cohen_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4, abs=1e-15)


def test_label_agreement_on_dl19_against_a_noisy_judge() -> None:
    from sklearn.metrics import cohen_kappa_score

    noisy = _noisy_copy(DL19, 3)
    out = label_agreement(str(DL19), noisy, resamples=300, seed=7)
    a, b = _pairs(DL19, noisy)
    total = len(DL19.read_text().splitlines())
    assert out.shared_pairs == len(a) and out.only_a == total - len(a) and out.only_b == 0
    assert out.queries == 43 and out.confusion.sum() == len(a)
    assert out.statistics["kappa_quadratic"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"), abs=1e-12)
    for level in (1, 2, 3):  # binarised at each level: plain agreement and kappa of the 0/1 labels
        ba, bb = a >= level, b >= level
        assert out.statistics[f"agreement@{level}"] == pytest.approx(float((ba == bb).mean()), abs=1e-15)
        assert out.statistics[f"kappa@{level}"] == pytest.approx(cohen_kappa_score(ba, bb), abs=1e-12)
    for name, (low, high) in out.intervals.items():
        assert low <= out.statistics[name] <= high, name
    again = label_agreement(str(DL19), noisy, resamples=300, seed=7)
    assert again.intervals == out.intervals  # seeded
    assert list(out.table["statistic"])[:3] == ["kappa_unweighted", "kappa_linear", "kappa_quadratic"]


def test_bad_input() -> None:
    with pytest.raises(RankwiseError, match="share no judged"):
        label_agreement({"q": {"a": 1}}, {"q": {"b": 1}}, resamples=0)
    with pytest.raises(RankwiseError, match="weights='cubic'"):
        cohen_kappa(np.eye(2), "cubic")
    with pytest.raises(RankwiseError, match="level='ratio'"):
        krippendorff_alpha(np.array([1, 2]), np.array([1, 2]), "ratio")


def _tau_ap_by_pairs(reference: list[float], estimate: list[float]) -> float:
    """tau_AP from its definition, by explicit loops: for each position i > 1 of the estimated
    ranking, the share of the systems above it that the reference also ranks above it."""
    order = sorted(range(len(estimate)), key=lambda s: -estimate[s])
    shares = []
    for i in range(1, len(order)):
        above = order[:i]
        shares.append(sum(reference[s] > reference[order[i]] for s in above) / i)
    return 2.0 * sum(shares) / (len(order) - 1) - 1.0


def test_tau_ap_equals_its_definition_on_every_permutation_of_five() -> None:
    import itertools

    from rankwise.agreement import tau_ap

    reference = [5.0, 4.0, 3.0, 2.0, 1.0]
    for perm in itertools.permutations(range(5)):
        estimate = [float(5 - perm.index(s)) for s in range(5)]
        assert tau_ap(np.array(reference), np.array(estimate)) == pytest.approx(
            _tau_ap_by_pairs(reference, estimate), abs=1e-15)


def test_tau_ap_weighs_swaps_at_the_top_more_than_kendall_tau() -> None:
    # Yilmaz et al.'s point: one adjacent swap costs Kendall's tau the same anywhere (2/3 for
    # 4 systems), tau_AP more at the top: top swap 2/3 x (0 + 1 + 1) - 1 = 1/3, bottom swap
    # 2/3 x (1 + 1 + 2/3) - 1 = 7/9
    from scipy.stats import kendalltau

    from rankwise.agreement import tau_ap

    ref = np.array([4.0, 3.0, 2.0, 1.0])
    top, bottom = np.array([3.0, 4.0, 2.0, 1.0]), np.array([4.0, 3.0, 1.0, 2.0])
    assert kendalltau(ref, top).statistic == pytest.approx(2 / 3) == kendalltau(ref, bottom).statistic
    assert tau_ap(ref, top) == pytest.approx(1 / 3, abs=1e-15)
    assert tau_ap(ref, bottom) == pytest.approx(7 / 9, abs=1e-15)
    with pytest.raises(RankwiseError, match="without ties"):
        tau_ap(ref, np.array([1.0, 1.0, 2.0, 3.0]))


def test_system_agreement_of_generated_runs_under_two_judges() -> None:
    from scipy.stats import kendalltau, spearmanr

    import rankwise
    from rankwise.agreement import system_agreement

    rng = np.random.default_rng(9)
    noisy = _noisy_copy(DL19, 4, flip=0.4)
    base = Path(DL19).parent
    runs = {"BM25": str(base / "BM25.dl19.trec"), "SPLADE": str(base / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")}
    for i in range(4):  # runs of varying quality: SPLADE (scores near 1e5) with growing noise
        lines = (base / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec").read_text().splitlines()
        runs[f"noisy{i}"] = {}
        for line in lines:
            q, _, d, _, s, _ = line.split()
            runs[f"noisy{i}"].setdefault(q, {})[d] = float(s) + rng.normal(scale=3000.0 * 3 ** i)
    out = system_agreement(str(DL19), noisy, runs, "ndcg@10")
    a = rankwise.evaluate(str(DL19), runs, ["ndcg@10"]).summary["ndcg@10"]
    b = rankwise.evaluate(noisy, runs, ["ndcg@10"]).summary["ndcg@10"]
    assert out.statistics["kendall_tau"] == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
    assert out.statistics["spearman"] == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert out.statistics["tau_ap"] == pytest.approx(_tau_ap_by_pairs(list(a), list(b)), abs=1e-12)
    table = out.table
    assert list(table["run"]) == list(runs) and np.allclose(table["difference"], b.to_numpy() - a.to_numpy())


def test_the_cli_prints_label_and_system_agreement(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    noisy = tmp_path / "noisy.txt"
    noisy.write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in _noisy_copy(DL19, 5).items() for d, v in docs.items()))
    base = Path(DL19).parent
    result = CliRunner().invoke(app, ["agree", str(DL19), str(noisy), f"BM25={base / 'BM25.dl19.trec'}",
                                      f"SPLADE={base / 'SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec'}", "--resamples", "50"])
    assert result.exit_code == 0, result.output
    out = label_agreement(str(DL19), str(noisy), resamples=50)
    assert f"label agreement on {out.shared_pairs} pairs judged by both (43 queries)" in result.output
    assert f"kappa_unweighted {out.statistics['kappa_unweighted']:.4f}" in " ".join(result.output.split())
    assert "kendall_tau 1.0000" in result.output and "BM25" in result.output
    from rankwise.report.agreement import confusion_grid

    assert confusion_grid(out).text() in result.output  # the counts of every (label A, label B) pair
    assert int(out.confusion.sum()) == out.shared_pairs
    as_json = CliRunner().invoke(app, ["agree", str(DL19), str(noisy), f"BM25={base / 'BM25.dl19.trec'}",
                                       f"SPLADE={base / 'SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec'}", "--resamples", "50",
                                       "-f", "json"])
    data = json.loads(as_json.output)
    assert data["labels"]["statistics"]["kappa_unweighted"]["value"] == out.statistics["kappa_unweighted"]
    assert data["labels"]["shared_pairs"] == out.shared_pairs and data["systems"]["statistics"]["kendall_tau"] == 1.0
    assert [r["run"] for r in data["systems"]["runs"]] == ["BM25", "SPLADE"]
    as_csv = tmp_path / "agree.csv"
    assert CliRunner().invoke(app, ["agree", str(DL19), str(noisy), "--resamples", "50", "-f", "csv", "-o",
                                    str(as_csv)]).exit_code == 0
    frame = pd.read_csv(as_csv)
    assert frame.set_index("statistic").loc["alpha_ordinal", "value"] == pytest.approx(
        out.statistics["alpha_ordinal"], abs=1e-15)
    markdown = CliRunner().invoke(app, ["agree", str(DL19), str(noisy), "--resamples", "50", "-f", "markdown"])
    assert "| statistic | value | interval |" in markdown.output
    bad = CliRunner().invoke(app, ["agree", str(DL19), str(tmp_path / "missing.txt")])
    assert bad.exit_code == 2 and "missing.txt" in bad.output


def test_qpp_correlations_equal_scipy_and_smare_its_definition() -> None:
    from scipy.stats import kendalltau, pearsonr, spearmanr

    import rankwise
    from rankwise.agreement import qpp_correlations, smare

    actual = rankwise.evaluate(str(DL19), str(Path(DL19).parent / "BM25.dl19.trec"), ["ndcg@10"]).per_query
    actual = actual["ndcg@10"].droplevel(0)
    rng = np.random.default_rng(2)
    predicted = actual + rng.normal(scale=0.2, size=len(actual))  # a predictor that is right on average
    out = qpp_correlations(predicted.to_dict(), actual)
    p, a = predicted.sort_index().to_numpy(), actual.sort_index().to_numpy()
    assert out["pearson"] == pytest.approx(pearsonr(p, a).statistic, abs=1e-12)
    assert out["spearman"] == pytest.approx(spearmanr(p, a).statistic, abs=1e-12)
    assert out["kendall"] == pytest.approx(kendalltau(p, a).statistic, abs=1e-12)
    # sMARE by hand: ranks by sorting (no ties here), |difference| / n, averaged
    rank_p = np.argsort(np.argsort(p)) + 1
    rank_a = np.argsort(np.argsort(a)) + 1
    assert out["smare"] == pytest.approx(np.mean(np.abs(rank_p - rank_a)) / len(a), abs=1e-15)
    assert smare(a, a) == 0.0 and out["queries"] == 43
    with pytest.raises(RankwiseError, match="no prediction, e.g."):
        qpp_correlations({"q1": 1.0}, {"q1": 0.5, "q2": 0.2, "q3": 0.1})


def test_the_scatter_plot_names_every_run(tmp_path) -> None:
    from rankwise.agreement import system_agreement
    from rankwise.report.plots import system_agreement_scatter

    base = Path(DL19).parent
    runs = {"BM25": str(base / "BM25.dl19.trec"), "SPLADE": str(base / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")}
    out = system_agreement(str(DL19), _noisy_copy(DL19, 6), runs, "ndcg@10")
    fig = system_agreement_scatter(out)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["BM25", "SPLADE"]
    assert ax.get_xlabel() == "ndcg@10 under qrels A" and "Kendall tau 1.000" in ax.get_title()
    path = tmp_path / "agree.png"
    system_agreement_scatter(out, path)
    assert path.stat().st_size > 10_000


def test_tau_ap_matches_the_published_example_of_ircor() -> None:
    """The worked example of ``tauAP`` in the R package ircor (Urbano and Marrero, the reference
    implementation of AP correlation and its tie variants): ten systems scored by x and y,
    tauAP(x, y) = 0.3928571 with x the reference; asymmetric, so swapping the roles changes it."""
    from rankwise.agreement.systems import tau_ap

    x = np.array([0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54])
    y = np.array([0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84])
    assert tau_ap(x, y) == pytest.approx(0.3928571, abs=5e-8)
    assert tau_ap(x, y) == pytest.approx(11 / 28, abs=1e-15)  # 0.3928571... = 11/28
    assert tau_ap(y, x) != pytest.approx(tau_ap(x, y), abs=1e-3)


def test_conflicting_judgments_are_refused_and_reader_notes_kept(tmp_path: Path) -> None:
    """A document judged twice with two labels gave kappa 0.99895 without a word before."""
    from rankwise.errors import InputError

    twice = tmp_path / "twice.txt"
    twice.write_text("1 0 d1 1\n1 0 d1 2\n1 0 d2 0\n")
    other = tmp_path / "other.txt"
    other.write_text("1 0 d1 1\n1 0 d2 0\n")
    with pytest.raises(InputError, match=r"twice\.txt:2: field 'doc': document 'd1' is judged twice"):
        label_agreement(str(twice), str(other), resamples=0)
    noted = tmp_path / "noted.txt"
    noted.write_text("# a comment line\n1 0 d1 1\n1 0 d2 0\n")
    out = label_agreement(str(noted), str(other), resamples=0)
    assert out.warnings and all(note.startswith(str(noted)) for note in out.warnings)
