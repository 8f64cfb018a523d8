"""How far DBN's and SDBN's satisfaction is pooled (``rankwise.clicks.pooling``): one rate for
every pair by hand, the held-out choice on logs whose satisfaction does or does not differ
between pairs, the ranking it gives, and the option refused by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankwise import clicks
from rankwise.cli.main import app
from rankwise.clicks.pooling import MINIMUM_HELD_OUT, choose_pooling, session_log_likelihoods

DOCS, RANKS = 8, 5
ALPHA = np.array([0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])


def _simulated(sessions: int, sigma: np.ndarray, seed: int) -> clicks.ClickLog:
    """DBN sessions (gamma 0.9) over one query's 8 documents, 5 shown in a random order."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((sessions, DOCS)), axis=1)[:, :RANKS]
    base = clicks.ClickLog.from_arrays(["q"] * sessions, [[f"d{d}" for d in row] for row in order],
                                       np.zeros((sessions, RANKS), dtype=int).tolist())
    truth = clicks.DBN(satisfaction_pooling="partial").fit(base, iterations=1)
    index = [int(base.doc_ids[d][1:]) for d in truth.pair_doc]
    truth.alpha, truth.sigma, truth.gamma = ALPHA[index], sigma[index], 0.9
    return clicks.simulate(truth, base, seed=seed + 1)


def test_complete_pooling_is_one_rate_by_hand() -> None:
    # SDBN by counting: satisfaction is the share of a pair's clicks that were its session's last.
    # Clicks: a (session 1, last), a and b (session 2: b last), b (session 3, last): 3 last of 4
    # clicks; with the per-rank pseudo-counts (1, 2): (3 + 1) / (4 + 2) = 2/3 for every pair
    log = clicks.ClickLog.from_arrays(["q"] * 3, [["a", "b"]] * 3, [[1, 0], [1, 1], [0, 1]])
    model = clicks.SDBN(method="counting", satisfaction_pooling="complete").fit(log)
    assert model.sigma.tolist() == pytest.approx([2 / 3, 2 / 3])
    assert model.selection is None and model.pooling == "complete"
    # a pair the fit never saw takes the same rate
    unseen = clicks.ClickLog.from_arrays(["q"], [["c"]], [[1]])
    assert model.satisfaction(unseen)[0, 0] == pytest.approx(2 / 3, rel=1e-9)
    # each pair its own: a 1 last of 2 clicks, b 2 of 2, shrunk to the fitted prior
    partial = clicks.SDBN(method="counting", satisfaction_pooling="partial").fit(log)
    assert partial.sigma[0] < partial.sigma[1]


def test_held_out_keeps_each_pairs_satisfaction_when_it_differs_and_pools_it_when_it_does_not() -> None:
    varied = _simulated(20_000, np.linspace(0.05, 0.95, DOCS), seed=3)
    model = clicks.DBN().fit(varied)
    assert model.selection["pooling"] == "partial" and model.pooling == "partial"
    assert model.selection["sessions"] >= MINIMUM_HELD_OUT
    assert model.selection["gain"] > model.selection["standard_error"] > 0
    assert np.ptp(model.sigma) > 0.5   # the truth spreads 0.05 to 0.95

    alike = _simulated(20_000, np.full(DOCS, 0.4), seed=5)
    pooled = clicks.DBN().fit(alike)
    assert pooled.selection["pooling"] == "complete"
    assert pooled.selection["gain"] <= pooled.selection["standard_error"]
    assert np.ptp(pooled.sigma) == 0 and abs(pooled.sigma[0] - 0.4) < 0.03
    # one satisfaction: relevance ranks every query's documents as attractiveness does
    by_relevance = pooled.relevance("r", alike).to_dict()["q"]
    by_attractiveness = pooled.relevance("a", alike, by="attractiveness").to_dict()["q"]
    assert sorted(by_relevance, key=by_relevance.get) == sorted(by_attractiveness, key=by_attractiveness.get)


def test_a_log_too_small_to_hold_out_keeps_the_authors_model() -> None:
    log = _simulated(2_000, np.full(DOCS, 0.4), seed=7)   # about 200 held-out sessions
    choice = choose_pooling(clicks.SDBN(), log, {})
    assert choice["pooling"] == "partial" and choice["sessions"] < MINIMUM_HELD_OUT
    assert np.isnan(choice["gain"])


def test_session_log_likelihoods_add_up_to_the_held_out_likelihood() -> None:
    log = _simulated(3_000, np.linspace(0.2, 0.8, DOCS), seed=9)
    model = clicks.DBN(satisfaction_pooling="partial").fit(log)
    per_session = session_log_likelihoods(model, log)
    assert per_session.shape == (3_000,) and (per_session <= 0).all()
    assert per_session.mean() == pytest.approx(model.held_out_log_likelihood(log), rel=1e-12)


def test_a_pooled_model_saves_and_loads_back(tmp_path: Path) -> None:
    log = _simulated(2_000, np.full(DOCS, 0.4), seed=11)
    model = clicks.DBN(satisfaction_pooling="complete").fit(log)
    clicks.save_model(model, tmp_path / "m.json")
    again = clicks.load_model(tmp_path / "m.json")
    assert again.satisfaction_pooling == "complete"
    np.testing.assert_array_equal(again.sigma, model.sigma)
    assert again.log_likelihood(log) == pytest.approx(model.log_likelihood(log), rel=1e-12)


def test_an_unknown_pooling_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="satisfaction_pooling must be one of held-out, partial, complete"):
        clicks.DBN(satisfaction_pooling="some")
    log = tmp_path / "log.tsv"
    log.write_text("session\tquery\trank\tdoc\tclick\n1\tq\t1\ta\t1\n1\tq\t2\tb\t0\n")
    out = CliRunner().invoke(app, ["clicks", "fit", str(log), "--model", "dbn(satisfaction_pooling=some)",
                                   "-o", str(tmp_path / "m.json")])
    assert out.exit_code == 2 and "satisfaction_pooling" in out.output
    assert not (tmp_path / "m.json").exists()


def test_the_choice_is_the_same_on_a_stored_log(tmp_path: Path) -> None:
    log = _simulated(12_000, np.linspace(0.05, 0.95, DOCS), seed=13)
    clicks.save_log(log, tmp_path / "log")
    stored = clicks.DBN().fit(clicks.open_log(tmp_path / "log"), chunk_size=5_000)
    in_memory = clicks.DBN().fit(log, chunk_size=5_000)
    assert stored.selection == in_memory.selection and stored.selection["pooling"] == "partial"
    assert stored.history[0]["seconds"] > 0
    np.testing.assert_allclose(stored.sigma, in_memory.sigma, rtol=1e-9)
