"""The simulation harness: exact click-pattern laws from rankwise.clicks models, the outcome
laws of interleaving, and the experiments' error rates, false positives and coverage."""

from __future__ import annotations

import pytest

from rankwise.clicks.log import ClickLog
from rankwise.errors import RankwiseError
from rankwise.interleaving import simulation as sim

QRELS = {"q1": {"a": 3, "b": 0, "c": 1, "d": 2}, "q2": {"x": 2, "y": 0, "z": 3}}
RUN_A = {"q1": {"a": 1, "b": 4, "c": 3, "d": 2}, "q2": {"y": 3, "x": 2, "z": 1}}   # A puts b, then c, first
RUN_B = {"q1": {"a": 4, "d": 3, "c": 2, "b": 1}, "q2": {"z": 3, "x": 2, "y": 1}}   # B is ideal


def test_pattern_probabilities_are_a_law_and_match_pbm_by_hand() -> None:
    log = ClickLog.from_arrays(["q1"], [["b", "a"]], [[0, 0]])
    patterns = sim.click_patterns(2)
    assert patterns.tolist() == [[0, 0], [1, 0], [0, 1], [1, 1]]
    for name in sim.SIMULATED_USERS.names():
        model = sim.user_model(name, QRELS, log)
        probs = sim.pattern_probabilities(model, log, log.pairs[:1], patterns)
        assert probs.sum() == pytest.approx(1.0), name
    model = sim.user_model("pbm", QRELS, log)
    probs = sim.pattern_probabilities(model, log, log.pairs[:1], patterns)[0]
    # PBM, ULTRA: b (label 0) attracts 0.1, a (label 3) 0.52; examination 0.68 and 0.61:
    # click b 0.068, click a 0.3172; P(no click) = 0.932 x 0.6828
    assert probs[0] == pytest.approx(0.932 * 0.6828)
    assert probs[3] == pytest.approx(0.068 * 0.3172)
    # cascade: at most one click, so P(both) = 0
    cascade = sim.pattern_probabilities(sim.user_model("cascade", QRELS, log), log, log.pairs[:1], patterns)[0]
    assert cascade[3] == 0.0 and cascade[1] == pytest.approx(0.1) and cascade[2] == pytest.approx(0.9 * 0.52)


def test_comparisons_laws_and_a_a_symmetry() -> None:
    comparisons = sim.build_comparisons(QRELS, RUN_A, RUN_B, "pbm", depth=4, samples=50)
    assert [c.query for c in comparisons] == ["q1", "q2"]
    for c in comparisons:
        assert c.difference > 0                                   # B is better on both
        for law in c.outcome.values():
            assert law.sum() == pytest.approx(1.0)
        assert c.outcome["aa"][0] == pytest.approx(c.outcome["aa"][2])   # A against itself: no preference
        assert c.outcome["team-draft"][2] > c.outcome["team-draft"][0]   # B wins more often than it loses
        assert c.clicks["A"].sum() == pytest.approx(1.0)


def test_run_simulation_error_falls_and_checks_hold() -> None:
    result = sim.simulate_comparison(QRELS, RUN_A, RUN_B, "dbn", depth=4, impressions=[10, 100, 10_000],
                                     repetitions=200, check_impressions=2000)
    error = result.error.set_index(["method", "impressions"])["wrong_winner"]
    for method in ("ab", "team-draft", "optimized"):
        assert error[(method, 10)] > error[(method, 10_000)]
        assert error[(method, 10_000)] < 0.05
    checks = result.checks.set_index("method")
    # 2 comparisons x 200 A/A experiments: a 5% test rejects 20 of 400 on average (sd 4.4)
    assert 0.01 <= checks.loc["team-draft", "false_positive_rate"] <= 0.10
    assert 0.01 <= checks.loc["ab", "false_positive_rate"] <= 0.10
    assert 0.88 <= checks.loc["team-draft", "coverage"] <= 0.99
    with pytest.raises(RankwiseError, match="unknown simulated user 'pcm'; did you mean 'pbm'"):
        sim.simulate_comparison(QRELS, RUN_A, RUN_B, "pcm")


def test_interleave_commands(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    credits = tmp_path / "credits.csv"
    credits.write_text("A,B\n" + "1,0\n" * 8 + "0,1\n" * 2 + "0,0\n" * 2)
    run = CliRunner().invoke(app, ["interleave", "compare", str(credits), "-f", "text"])
    assert run.exit_code == 0, run.output
    # 8 wins, 2 ties, 2 losses: delta = (8 + 1) / 12 - 0.5 = 0.25; sign test 8 of 10: p = 0.1094
    assert run.output.splitlines()[3].split()[:7] == ["A", "B", "12", "8", "2", "2", "0.2500"]
    assert "0.1094" in run.output
    qrels, a, b = tmp_path / "qrels", tmp_path / "a.run", tmp_path / "b.run"
    qrels.write_text("".join(f"{q} 0 {d} {rel}\n" for q, docs in QRELS.items() for d, rel in docs.items()))
    for path, run_dict in ((a, RUN_A), (b, RUN_B)):
        path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run_dict.items() for d, s in docs.items()))
    figure = tmp_path / "error.png"
    run = CliRunner().invoke(app, ["interleave", "simulate", str(qrels), str(a), str(b), "--impressions", "10,1000",
                                   "--repetitions", "20", "--list-size", "4", "--plot", str(figure), "-f", "text"])
    assert run.exit_code == 0, run.output
    assert "probability of the wrong winner (2 comparisons" in run.output and figure.stat().st_size > 1000
    # methods without an A/A check or an interval show a footnoted blank, never nan
    checks = run.output[run.output.index("checks at"):]
    assert "nan" not in checks and "†" in checks and "not simulated for this method" in checks
    # the figure's title names the runs and the qrels
    from rankwise.interleaving.simulation import simulate_comparison
    from rankwise.report.interleave import error_figure

    result = simulate_comparison(str(qrels), str(a), str(b), "pbm", 4, [10, 1000], 20)
    assert error_figure(result).axes[0].get_title().startswith(f"{a.name} vs {b.name}\non {qrels.name}\nusers pbm")
