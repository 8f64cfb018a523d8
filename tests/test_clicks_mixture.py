"""Mixtures of click models, and the session weights their E-step rests on."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankwise import clicks
from rankwise.clicks.log import ClickLog, piece_of
from rankwise.clicks.mixture import Mixture, session_log_likelihoods
from rankwise.clicks.registry import mixture
from rankwise.errors import InputError, ParameterError

WEIGHTED_KINDS = [m.name for m in clicks.MODELS.values() if m.fittable and m.name != "mixture"]


def _simulated(sessions: int, seed: int, cascade_share: float = 0.3) -> tuple[ClickLog, np.ndarray, np.ndarray]:
    """Sessions from two kinds of user, written from the models' definitions: a share browse
    as a cascade (top-down, stop at the first click), the others as a PBM (examine rank r with
    probability 0.9^(r-1), click an examined document with its attractiveness)."""
    rng = np.random.default_rng(seed)
    ranks, queries, docs = 8, 30, 12
    alpha = rng.uniform(0.05, 0.9, (queries, docs))
    gamma = 0.9 ** np.arange(ranks)
    query = rng.integers(0, queries, sessions)
    shown = np.argsort(rng.random((sessions, docs)), axis=1)[:, :ranks]
    attractive = rng.random((sessions, ranks)) < alpha[query[:, None], shown]
    pbm = attractive & (rng.random((sessions, ranks)) < gamma)
    cascade = attractive & (np.cumsum(attractive, axis=1) == 1)   # the first attractive document
    is_cascade = rng.random(sessions) < cascade_share
    clicked = np.where(is_cascade[:, None], cascade, pbm).astype(int)
    log = ClickLog.from_arrays([f"q{q}" for q in query], [[f"d{d}" for d in row] for row in shown], clicked)
    return log, gamma, is_cascade


def _sub_log(log: ClickLog, keep: np.ndarray) -> ClickLog:
    """The kept sessions, with the log's pair numbering (so per-pair sums line up)."""
    return piece_of(log, log.query[keep], log.docs[keep], log.pairs[keep], log.clicks[keep], log.mask[keep])


@pytest.mark.parametrize("kind", WEIGHTED_KINDS)
def test_a_weighted_e_step_equals_the_e_step_of_the_sessions_it_keeps(kind: str) -> None:
    """Weights of 0 and 1 select sessions: every statistic of every model equals the
    statistics of the selected sessions alone; weights of 2 double them."""
    log, _, _ = _simulated(600, seed=3)
    model = clicks.MODELS[kind]().fit(log, iterations=3)
    model._first_pass = True
    keep = np.random.default_rng(0).random(log.sessions) < 0.4
    selected, _ = model._statistics(_sub_log(log, keep))
    weighted_log = _sub_log(log, np.ones(log.sessions, dtype=bool))
    weighted_log.cache["weight"] = keep.astype(np.float64)
    weighted, _ = model._statistics(weighted_log)
    assert set(weighted) == set(selected)
    for key in selected:
        np.testing.assert_allclose(weighted[key], selected[key], rtol=1e-12, atol=1e-9, err_msg=key)
    weighted_log.cache["weight"] = np.full(log.sessions, 2.0)
    doubled, _ = model._statistics(weighted_log)
    whole, _ = model._statistics(_sub_log(log, np.ones(log.sessions, dtype=bool)))
    for key in whole:
        np.testing.assert_allclose(doubled[key], 2 * np.asarray(whole[key]), rtol=1e-12, err_msg=key)


def test_mixture_recovers_its_weights_and_its_components_examination() -> None:
    """12,000 sessions, 30% cascade users: the fitted weights are within 0.02 of the truth and
    the PBM component's examination per rank within 0.03 of 0.9^(r-1)."""
    log, gamma, is_cascade = _simulated(15_000, seed=11)
    train, test = log.split(0.2, seed=0)
    model = mixture("pbm+cascade").fit(train, iterations=100)
    assert model.weights[1] == pytest.approx(is_cascade.mean(), abs=0.02)
    np.testing.assert_allclose(model.models[0].gamma, gamma, atol=0.03)
    # the mixture explains held-out sessions better than either model alone
    mixed = model.held_out_log_likelihood(test)
    for kind in ("pbm", "dbn"):
        assert mixed > clicks.MODELS[kind]().fit(train, iterations=100).held_out_log_likelihood(test)


def test_mixture_probabilities_of_every_click_pattern_sum_to_one() -> None:
    """The conditional click probabilities come from the posterior over components given the
    clicks above each rank: the session probabilities they define sum to 1 over all 2^R
    patterns (weighing by the posterior given the whole session would not)."""
    log, _, _ = _simulated(2_000, seed=5)
    model = mixture("pbm+dbn").fit(log, iterations=20)
    ranks = log.ranks
    patterns = np.array(list(itertools.product([0, 1], repeat=ranks)))
    docs = [[f"d{d}" for d in range(ranks)]] * len(patterns)
    every = ClickLog.from_arrays(["q0"] * len(patterns), docs, patterns)
    assert np.exp(session_log_likelihoods(model, every)).sum() == pytest.approx(1.0, abs=1e-9)


def test_mixture_save_and_load_predict_the_same(tmp_path) -> None:
    log, _, _ = _simulated(1_000, seed=2)
    model = Mixture([clicks.PBM(), clicks.MODELS["dbn"](prior=(1, 2))]).fit(log, iterations=10)
    path = tmp_path / "mixture.json"
    clicks.save_model(model, path)
    loaded = clicks.load_model(path)
    assert [m.name for m in loaded.models] == ["pbm", "dbn"] and loaded.models[1].prior == (1.0, 2.0)
    np.testing.assert_allclose(loaded.weights, model.weights, rtol=0, atol=0)
    np.testing.assert_allclose(loaded.conditional_click_probs(log), model.conditional_click_probs(log), rtol=1e-15)
    np.testing.assert_allclose(loaded.relevance().score, model.relevance().score, rtol=1e-15)
    assert set(model.parameters()) >= {"components", "0.pairs", "1.pairs"}


def test_mixture_relevance_is_the_weighted_sum_of_its_components() -> None:
    log, _, _ = _simulated(1_000, seed=4)
    model = mixture("pbm+cascade").fit(log, iterations=10)
    expected = sum(w * m.relevance().score for w, m in zip(model.weights, model.models, strict=True))
    np.testing.assert_allclose(model.relevance().score, expected, rtol=1e-15)
    np.testing.assert_allclose(model.click_probs(log), sum(w * m.click_probs(log) for w, m in zip(
        model.weights, model.models, strict=True)), rtol=1e-15)


def test_mixture_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="at least two components"):
        mixture("pbm")
    with pytest.raises(ValueError, match="click models, got str"):
        Mixture(["pbm", "dbn"])
    with pytest.raises(ParameterError, match="unknown click model 'dbm'; did you mean"):
        mixture("pbm+dbm")
    with pytest.raises(ValueError, match="not mixtures"):
        Mixture([clicks.PBM(), mixture("pbm+dbn")])
    with pytest.raises(ParameterError, match="fittable"):
        mixture("pbm+label-rank")
    with pytest.raises(ValueError, match="model.models"):
        mixture().intervals()


def test_a_saved_mixture_with_missing_components_is_refused(tmp_path) -> None:
    import json

    log, _, _ = _simulated(300, seed=6)
    path = tmp_path / "m.json"
    clicks.save_model(mixture("pbm+cascade").fit(log, iterations=2), path)
    document = json.loads(path.read_text())
    document["components"] = document["components"][:1]
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="needs 2 component documents") as error:
        clicks.load_model(path)
    assert error.value.field == "components"


def test_cli_fits_and_evaluates_a_mixture(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    log, _, _ = _simulated(800, seed=8)
    rows = tmp_path / "log.csv"
    log.to_long().to_pandas().to_csv(rows, index=False)
    out = tmp_path / "model.json"
    runner = CliRunner()
    fitted = runner.invoke(app, ["clicks", "fit", str(rows), "--model", "mixture(components=pbm+cascade)",
                                 "--iterations", "5", "-o", str(out), "--quiet"])
    assert fitted.exit_code == 0, fitted.output
    assert clicks.load_model(out).name == "mixture"
    scored = runner.invoke(app, ["clicks", "evaluate", str(rows), "--model", str(out), "--format", "csv"])
    assert scored.exit_code == 0, scored.output
    expected = clicks.evaluate_model(mixture("pbm+cascade").fit(clicks.read_log(rows), iterations=5),
                                     clicks.read_log(rows)).table.set_index("rank")
    import io

    import pandas as pd

    overall = pd.read_csv(io.StringIO(scored.stdout)).set_index("rank").loc["all", "log_likelihood"]
    assert overall == pytest.approx(expected.loc["all", "log_likelihood"], rel=1e-9)
