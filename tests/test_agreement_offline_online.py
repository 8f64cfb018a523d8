"""Offline-online agreement over experiments: does nDCG's change predict the A/B change?"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from rankwise.agreement import offline_online
from rankwise.agreement.offline_online import kendall_tau_b_rows
from rankwise.errors import InputError, RankwiseError

EXPERIMENTS = ("experiment,ndcg_delta,ctr_delta,p\n"
               "ranker-v2,0.012,0.0031,0.01\n"
               "synonyms,0.004,-0.0004,0.61\n"
               "freshness,-0.008,-0.0012,0.04\n"
               "learned-sparse,0.021,0.0045,0.001\n"
               "spell,0.002,0.0009,0.20\n")


def test_hand_computed_statistics(tmp_path) -> None:
    path = tmp_path / "experiments.csv"
    path.write_text(EXPERIMENTS)
    out = offline_online(path, "ndcg_delta", "ctr_delta", online_p="p", resamples=500)
    s = out.statistics
    # offline order: learned-sparse > ranker-v2 > synonyms > spell > freshness; online: learned-sparse >
    # ranker-v2 > spell > synonyms > freshness: one discordant pair (synonyms, spell) of 10 -> (9 - 1) / 10
    assert s["kendall_tau"] == pytest.approx(0.8, abs=1e-12)
    assert s["spearman"] == pytest.approx(1 - 6 * 2 / (5 * 24), abs=1e-12)   # one swap of adjacent ranks: d^2 = 2
    assert s["sign_agreement"] == pytest.approx(4 / 5)                      # synonyms: + offline, - online
    assert s["online_significant"] == 3                                      # p < 0.05: ranker-v2, freshness, l-s
    assert s["significant_sign_agreement"] == 1.0
    # offline wins: ranker-v2, synonyms, learned-sparse, spell; significant online wins among them: 2 of 4
    assert s["offline_win_precision"] == pytest.approx(0.5)
    assert s["kendall_p"] == pytest.approx(kendalltau([0.012, 0.004, -0.008, 0.021, 0.002],
                                                      [0.0031, -0.0004, -0.0012, 0.0045, 0.0009]).pvalue)
    low, high = out.intervals["kendall_tau"]
    assert low <= 0.8 <= high <= 1.0
    again = offline_online(path, "ndcg_delta", "ctr_delta", online_p="p", resamples=500)
    assert again.intervals == out.intervals                                  # seeded
    assert out.table["same_sign"].tolist() == [True, False, True, True, True]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=2, max_size=12))
def test_vectorised_tau_b_equals_scipy_with_ties(pairs: list[tuple[int, int]]) -> None:
    x, y = np.array(pairs, dtype=np.float64).T
    expected = kendalltau(x, y).statistic
    got = kendall_tau_b_rows(x[None, :], y[None, :])[0]
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_a_strong_offline_metric_is_found_and_a_useless_one_is_not() -> None:
    rng = np.random.default_rng(3)
    offline = rng.normal(size=60)
    predictive = offline_online({"offline": offline, "online": offline + 0.3 * rng.normal(size=60)}, experiment=None)
    useless = offline_online({"offline": offline, "online": rng.normal(size=60)}, experiment=None)
    assert predictive.intervals["kendall_tau"][0] > 0.5 and predictive.statistics["kendall_p"] < 1e-6
    low, high = useless.intervals["kendall_tau"]
    assert low < 0 < high and useless.statistics["kendall_p"] > 0.05


def test_bad_input_is_named(tmp_path) -> None:
    path = tmp_path / "e.csv"
    path.write_text("experiment,offline,online\na,0.1,0.2\nb,lots,0.1\nc,0.3,0.1\n")
    with pytest.raises(InputError, match=r"e\.csv:3: field 'offline': expected a number, got 'lots'"):
        offline_online(path)
    with pytest.raises(InputError, match=r"missing column\(s\) 'ctr'; found experiment, offline, online .*--online"):
        offline_online(path, online="ctr")
    with pytest.raises(RankwiseError, match="at least 3 experiments with both changes, got 2"):
        offline_online([{"experiment": "a", "offline": 1, "online": 1}, {"experiment": "b", "offline": 2,
                                                                           "online": 2}])
    with pytest.raises(InputError, match=r"expected a p-value in \[0, 1\], got 1.5"):
        offline_online({"offline": [1, 2, 3], "online": [1, 2, 3], "p": [0.1, 1.5, 0.2]}, experiment=None,
                       online_p="p")
    gaps = offline_online({"offline": [1, 2, 3, None], "online": [1, 3, 2, 4]}, experiment=None, resamples=0)
    assert gaps.warnings == ["<dict>: 1 experiment(s) without both changes left out"]
    assert gaps.statistics["experiments"] == 3


def test_command_line_table_json_and_plot(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    path = tmp_path / "experiments.csv"
    path.write_text(EXPERIMENTS)
    plot = tmp_path / "offline_online.png"
    args = ["offline-online", str(path), "--offline", "ndcg_delta", "--online", "ctr_delta", "--online-p", "p"]
    shown = CliRunner().invoke(app, [*args, "--plot", str(plot)])
    assert shown.exit_code == 0, shown.output
    assert "kendall_tau                 0.8000" in shown.stdout and "synonyms" in shown.stdout
    assert plot.stat().st_size > 10_000
    as_json = CliRunner().invoke(app, [*args, "-f", "json"])
    data = json.loads(as_json.stdout)
    assert data["statistics"]["kendall_tau"] == pytest.approx(0.8) and len(data["experiments"]) == 5
    missing = CliRunner().invoke(app, ["offline-online", str(path)])
    assert missing.exit_code != 0 and "--offline/--online" in missing.output
