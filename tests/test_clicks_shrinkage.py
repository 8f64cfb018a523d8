"""The empirical-Bayes prior of the click models (rankwise.clicks.shrinkage): the Beta fit
against scipy's beta-binomial, recovery of known hyperparameters, and what it buys on sparse
logs simulated here from PBM's definition (not with rankwise's simulator)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import betabinom

from rankwise import clicks
from rankwise.clicks.shrinkage import (
    beta_hyperparameters,
    marginal_log_likelihood,
    posterior_mean,
    trigamma,
    trigamma_of,
)
from rankwise.errors import InputError, OptionError


def _beta_binomial_sample(a: float, b: float, pairs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    trials = rng.integers(1, 40, pairs).astype(float)
    rate = rng.beta(a, b, pairs)
    return rng.binomial(trials.astype(int), rate).astype(float), trials


def test_the_marginal_likelihood_is_scipys_beta_binomial() -> None:
    # ln B(s + a, n - s + b) - ln B(a, b) is betabinom.logpmf without the ln C(n, s) term
    s, n = _beta_binomial_sample(0.7, 6.0, 300, seed=1)
    from scipy.special import comb

    expected = float((betabinom.logpmf(s, n, 0.7, 6.0) - np.log(comb(n, s))).sum())
    assert marginal_log_likelihood(s, n, (0.7, 6.0)) == pytest.approx(expected, rel=1e-12)


def test_the_fitted_beta_is_the_maximum_scipy_finds() -> None:
    s, n = _beta_binomial_sample(0.5, 9.5, 2_000, seed=2)
    a, b = beta_hyperparameters(s, n)

    def negative(x: np.ndarray) -> float:   # with the hyperprior (a + b)^(-5/2)
        a, b = np.exp(x)
        return -float(betabinom.logpmf(s, n, a, b).sum()) + 2.5 * np.log(a + b)

    reference = minimize(negative, np.log([1.0, 1.0]), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12,
                                                                                        "maxiter": 5000})
    assert np.exp(reference.x) == pytest.approx([a, b], rel=1e-4)


def test_known_hyperparameters_are_recovered() -> None:
    # 20,000 pairs from Beta(0.5, 9.5) (mean 0.05, concentration 10): both within 5%
    s, n = _beta_binomial_sample(0.5, 9.5, 20_000, seed=3)
    a, b = beta_hyperparameters(s, n)
    assert a / (a + b) == pytest.approx(0.05, rel=0.05)
    assert a + b == pytest.approx(10.0, rel=0.05)


def test_no_overdispersion_means_every_pair_gets_the_pooled_rate() -> None:
    # every pair's rate is 0.2: the fitted concentration runs to its bound and the posterior
    # means all sit at the pooled rate
    rng = np.random.default_rng(4)
    n = np.full(5_000, 50.0)
    s = rng.binomial(50, 0.2, 5_000).astype(float)
    a, b = beta_hyperparameters(s, n)
    assert a + b > 1_000     # against 4.3 for the Beta(0.3, 4) pairs of the next test
    means = posterior_mean(s, n, (a, b))
    assert means.max() - means.min() < 0.02 and means.mean() == pytest.approx(s.sum() / n.sum(), abs=1e-3)


def test_pairs_without_trials_carry_no_information() -> None:
    s, n = _beta_binomial_sample(1.0, 3.0, 500, seed=5)
    with_empty = beta_hyperparameters(np.append(s, [0.0, 0.0]), np.append(n, [0.0, 0.0]))
    assert with_empty == pytest.approx(beta_hyperparameters(s, n), rel=1e-9)
    assert beta_hyperparameters(np.zeros(3), np.zeros(3)) == (1.0, 1.0)


def _pbm_logs(seed: int, per_query: int = 2) -> tuple[clicks.ClickLog, clicks.ClickLog, np.ndarray]:
    """A sparse log from PBM's definition: 3,000 queries x 10 documents, alpha ~ Beta(0.3, 4),
    gamma_r = 1 / r; ``per_query`` sessions per query to fit, 20 held out (fresh draws, same
    pairs)."""
    rng = np.random.default_rng(seed)
    queries, per_query, ranks = 3_000, 10, 6
    alpha = rng.beta(0.3, 4.0, (queries, per_query))
    gamma = 1.0 / np.arange(1, ranks + 1)

    def draw(sessions_per_query: int) -> clicks.ClickLog:
        query = np.repeat(np.arange(queries), sessions_per_query)
        shown = np.argsort(rng.random((len(query), per_query)), axis=1)[:, :ranks]
        click = rng.random(shown.shape) < alpha[query[:, None], shown] * gamma
        return clicks.ClickLog.from_arrays([f"q{q}" for q in query],
                                           [[f"q{q}d{d}" for d in row] for q, row in zip(query, shown, strict=True)],
                                           click.astype(int).tolist())

    return draw(per_query), draw(20), alpha


def test_the_empirical_prior_predicts_sparse_logs_better_than_a_fixed_one() -> None:
    train, test, alpha = _pbm_logs(seed=6)
    fixed = clicks.PBM(prior=(1, 2)).fit(train, iterations=100)
    oracle = clicks.PBM(prior=(0.3, 4.3)).fit(train, iterations=100)    # the true Beta as pseudo-counts
    empirical = clicks.PBM().fit(train, iterations=100)
    a, b = empirical.hyper["alpha"]
    # the fitted baseline is near the true mean attractiveness 0.3 / 4.3 = 0.070, not 0.5
    assert a / (a + b) == pytest.approx(alpha.mean(), abs=0.02)
    assert empirical.gamma[0] == 1.0          # the top rank is examined: alpha's scale is fixed
    # held out, per session of 6 ranks: fixed -0.7265, empirical -0.7225, the true prior -0.7187
    assert empirical.log_likelihood(test) > fixed.log_likelihood(test) + 0.003
    assert empirical.log_likelihood(test) > oracle.log_likelihood(test) - 0.005
    # and its attractiveness is closer to the truth (root mean square error per pair)
    truth = {f"q{q}d{d}": alpha[q, d] for q in range(alpha.shape[0]) for d in range(alpha.shape[1])}
    pairs = empirical.parameters()["pairs"]
    true = pairs["doc"].map(truth).to_numpy()
    rmse = np.sqrt(np.mean((empirical.alpha - true) ** 2))
    assert rmse < 0.7 * np.sqrt(np.mean((fixed.alpha - true) ** 2))


def test_a_saved_model_keeps_its_fitted_prior(tmp_path: Path) -> None:
    train, test, _ = _pbm_logs(seed=7)
    model = clicks.DBN().fit(train, iterations=5)
    path = tmp_path / "dbn.json"
    clicks.save_model(model, path)
    again = clicks.load_model(path)
    assert again.hyper == model.hyper and set(again.hyper) == {"alpha", "sigma"}
    assert np.array_equal(again.conditional_log_probs(test), model.conditional_log_probs(test))
    document = json.loads(path.read_text())
    document["prior"]["alpha"] = [-1, 2]
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="prior.*positive finite"):
        clicks.load_model(path)
    document["prior"] = {"beta": [1, 2]}
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="unknown pair parameter 'beta'"):
        clicks.load_model(path)


def test_the_prior_is_named_in_the_model_spelling() -> None:
    kind, values = clicks.MODELS.parse("pbm(prior=empirical)")
    assert values["prior"] == "empirical"
    assert clicks.MODELS.parse("pbm(prior=1,2)")[1]["prior"] == (1.0, 2.0)
    with pytest.raises(Exception, match="prior"):
        clicks.MODELS.parse("pbm(prior=emprical)")
    with pytest.raises(ValueError, match="empirical"):
        clicks.PBM(prior="flat")


def test_held_out_queries_split_and_get_the_baseline() -> None:
    # by query: no held-out query is in the training part, so every held-out pair is unseen;
    # global-ctr ties every pair, seen or not, at its one rate
    train, test, _ = _pbm_logs(seed=8)
    fit_part, held_out = train.split(0.25, seed=3, by="query")
    assert not set(fit_part.query.tolist()) & set(held_out.query.tolist())
    assert held_out.sessions + fit_part.sessions == train.sessions
    ctr = clicks.GlobalCTR().fit(fit_part)
    assert set(ctr.relevance("g", train).score.tolist()) == {ctr.ctr}
    pbm = clicks.PBM(prior_structure="flat").fit(fit_part, iterations=10)
    a, b = pbm.hyper["alpha"]
    unseen = clicks.models._pair_index(pbm, held_out) == len(pbm.alpha)
    assert unseen[held_out.mask].all()
    assert np.allclose(pbm.attractiveness(held_out)[held_out.mask], a / (a + b))
    # under the placement prior (the default) each unseen pair gets the logistic of where the
    # held-out log placed it: sigmoid(w (mean log2(rank + 1) - mean) / scale + b)
    placed = clicks.PBM().fit(fit_part, iterations=10)
    (w, bias), fit = placed.feature_fit["weights"], placed.feature_fit
    where = clicks.placement_features(held_out).set_index(["query", "doc"])["mean_log_rank"]
    pairs = np.asarray(held_out.query_ids, dtype=object)[held_out.pair_query[held_out.pairs[held_out.mask]]], \
        np.asarray(held_out.doc_ids, dtype=object)[held_out.pair_doc[held_out.pairs[held_out.mask]]]
    x = (where.loc[list(zip(*pairs, strict=True))].to_numpy() - fit["mean"][0]) / fit["scale"][0]
    assert np.allclose(placed.attractiveness(held_out)[held_out.mask], 1 / (1 + np.exp(-(w * x + bias))), rtol=1e-12)
    assert len(set(np.round(x, 9))) > 1                                   # the pairs were placed at several ranks


def _chain_sessions(n: int, seed: int, after_click) -> tuple[clicks.ClickLog, np.ndarray]:
    """Sessions of one query from a chain model's definition: 8 documents, 5 shown in a
    random order; the user examines rank 1, clicks an examined document with its
    attractiveness, goes on after a click with ``after_click(rank, doc)`` and after a skip
    always."""
    rng = np.random.default_rng(seed)
    alpha = np.array([0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    order = np.argsort(rng.random((n, 8)), axis=1)[:, :5]
    examining = np.ones(n, bool)
    click = np.zeros((n, 5), int)
    for r in range(5):
        doc = order[:, r]
        click[:, r] = examining & (rng.random(n) < alpha[doc])
        go_on = rng.random(n) < after_click(r, doc)
        examining = examining & np.where(click[:, r] == 1, go_on, True)
    log = clicks.ClickLog.from_arrays(["q"] * n, [[f"d{d}" for d in row] for row in order], click.tolist())
    return log, alpha


def _by_doc(model: clicks.ClickModel, values: np.ndarray) -> np.ndarray:
    return np.asarray(values)[np.argsort([int(model.doc_ids[d][1:]) for d in model.pair_doc])]


def test_dcm_by_exact_em_recovers_lambda_where_counting_does_not() -> None:
    lam = np.array([0.6, 0.5, 0.4, 0.3, 0.2])
    log, alpha = _chain_sessions(100_000, seed=11, after_click=lambda r, doc: lam[r])
    exact = clicks.DCM().fit(log, iterations=300, tolerance=1e-9)
    counted = clicks.DCM(method="counting").fit(log)
    # lambda_1..4 (lambda_5 has no rank below: unobservable)
    assert np.abs(exact.lam[:4] - lam[:4]).max() < 0.02
    assert np.abs(_by_doc(exact, exact.alpha) - alpha).max() < 0.02
    # counting reads "went on, clicked nothing more" as "stopped": every lambda too low, by
    # more the lower the rank (fewer attractive results left below): 0.043 .. 0.156 here
    bias = lam[:4] - counted.lam[:4]
    assert bias.min() > 0.03 and bias.max() > 0.12


def test_sdbn_by_exact_em_recovers_satisfaction_where_counting_does_not() -> None:
    sigma = np.array([0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.6, 0.3])
    log, alpha = _chain_sessions(100_000, seed=12, after_click=lambda r, doc: 1 - sigma[doc])
    exact = clicks.SDBN().fit(log, iterations=300, tolerance=1e-9)
    counted = clicks.SDBN(method="counting").fit(log)
    assert np.abs(_by_doc(exact, exact.sigma) - sigma).mean() < 0.03
    assert np.abs(_by_doc(exact, exact.alpha) - alpha).max() < 0.03
    # counting reads "went on, clicked nothing more" as "satisfied": sigma too high
    assert np.abs(_by_doc(counted, counted.sigma) - sigma).mean() > 0.1
    assert exact.log_likelihood(log) > counted.log_likelihood(log)


def test_credible_intervals_cover_the_truth_and_feed_a_lower_bound_ranking(tmp_path: Path) -> None:
    # 12 pages per query: enough impressions per pair for the prior's spread to show (with 2,
    # the fitted Beta is far too narrow and so are the intervals)
    train, _, alpha = _pbm_logs(seed=9, per_query=12)
    model = clicks.PBM().fit(train, iterations=60)
    table = model.intervals(0.9)
    truth = {f"q{q}d{d}": alpha[q, d] for q in range(alpha.shape[0]) for d in range(alpha.shape[1])}
    true = table["doc"].map(truth).to_numpy()
    inside = (table["attractiveness_low"] <= true) & (true <= table["attractiveness_high"])
    # 90% intervals from observed clicks over expected examinations, with the fitted prior
    # plugged in (its own uncertainty ignored): 83.4% of 30,000 pairs' true values inside
    assert 0.8 < inside.mean() < 0.95
    assert (table["attractiveness_low"] < table["attractiveness"]).all()
    assert (table["attractiveness"] < table["attractiveness_high"]).all()
    # the lower-bound ranking scores each pair by its interval's low end; unseen pairs by the
    # prior's 5% quantile
    from scipy.stats import beta

    lower = model.relevance("pbm", bound="lower", level=0.9)
    assert np.allclose(lower.score, table["attractiveness_low"].to_numpy())
    assert model.unseen_relevance("lower", 0.9) == pytest.approx(beta.ppf(0.05, *model.hyper["alpha"]))
    # saved and loaded, the intervals are the same
    clicks.save_model(model, tmp_path / "pbm.json")
    again = clicks.load_model(tmp_path / "pbm.json").intervals(0.9)
    assert np.array_equal(again["attractiveness_low"].to_numpy(), table["attractiveness_low"].to_numpy())
    with pytest.raises(ValueError, match="bound must be mean or lower"):
        model.relevance(bound="upper")


def test_dbn_intervals_cover_both_pair_parameters() -> None:
    train, _, _ = _pbm_logs(seed=10)
    # each pair its own satisfaction (a PBM log has none to tell pairs apart: held out, one rate wins)
    table = clicks.DBN(prior=(1, 2), satisfaction_pooling="partial").fit(train, iterations=3).intervals()
    assert {"attractiveness_low", "attractiveness_high", "satisfaction_low", "satisfaction_high"} <= set(table)
    # a pair never clicked has satisfaction's prior Beta(1, 1): the 95% interval is [0.025, 0.975]
    never = table[table["satisfaction"] == 0.5].iloc[0]
    assert (never["satisfaction_low"], never["satisfaction_high"]) == pytest.approx((0.025, 0.975))


def _feature_logs(seed: int) -> tuple[clicks.ClickLog, pd.DataFrame, np.ndarray]:
    """PBM sessions from its definition where attractiveness follows a feature:
    ``alpha = sigmoid(1.5 x - 2.5)``, ``x ~ N(0, 1)`` per pair; 2,000 queries x 8 documents, 4
    pages per query, 5 ranks, ``gamma_r = 1 / r``."""
    rng = np.random.default_rng(seed)
    queries, per_query, ranks = 2_000, 8, 5
    x = rng.normal(size=(queries, per_query))
    alpha = 1 / (1 + np.exp(-(1.5 * x - 2.5)))
    query = np.repeat(np.arange(queries), 4)
    shown = np.argsort(rng.random((len(query), per_query)), axis=1)[:, :ranks]
    click = rng.random(shown.shape) < alpha[query[:, None], shown] / np.arange(1, ranks + 1)
    log = clicks.ClickLog.from_arrays([f"q{q}" for q in query],
                                      [[f"q{q}d{d}" for d in row] for q, row in zip(query, shown, strict=True)],
                                      click.astype(int).tolist())
    table = pd.DataFrame({"query": np.repeat([f"q{q}" for q in range(queries)], per_query),
                          "doc": [f"q{q}d{d}" for q in range(queries) for d in range(per_query)],
                          "x": x.ravel()})
    return log, table, alpha


def test_features_score_pairs_never_seen(tmp_path: Path) -> None:
    log, table, alpha = _feature_logs(seed=13)
    train, test = log.split(0.3, seed=0, by="query")          # held-out queries: every pair unseen
    plain = clicks.PBM().fit(train, iterations=25)
    featured = clicks.PBM().use_features(table).fit(train, iterations=25)
    # the logistic weight on the standardised feature comes back near the truth's 1.5
    weights = featured.feature_fit["weights"]
    assert weights[0] == pytest.approx(1.5, abs=0.25)
    # on unseen pairs the plain model can only give its baseline; features do much better
    assert featured.log_likelihood(test) > plain.log_likelihood(test) + 0.02
    pairs = featured.relevance("f", test)
    truth = dict(zip(table["doc"], alpha.ravel(), strict=True))
    true = np.array([truth[d] for d in pairs.doc.to_pylist()])
    assert np.corrcoef(pairs.score, true)[0, 1] > 0.95
    # saved and loaded, unseen pairs need the feature table again: refused without it
    clicks.save_model(featured, tmp_path / "f.json")
    loaded = clicks.load_model(tmp_path / "f.json")
    with pytest.raises(InputError, match="feature table"):
        loaded.log_likelihood(test)
    assert loaded.use_features(table).log_likelihood(test) == pytest.approx(featured.log_likelihood(test), rel=1e-12)
    with pytest.raises(InputError, match="fitted with features x"):
        clicks.load_model(tmp_path / "f.json").use_features(table.rename(columns={"x": "y"}))


def test_bad_feature_tables_are_refused() -> None:
    frame = pd.DataFrame({"query": ["q", "q"], "doc": ["a", "a"], "x": [1.0, 2.0]})
    with pytest.raises(InputError, match="two feature rows"):
        clicks.PBM().use_features(frame)
    with pytest.raises(InputError, match=":3: field 'x': expected a finite number, got nan"):
        clicks.PBM().use_features(pd.DataFrame({"query": ["q", "q"], "doc": ["a", "b"], "x": [1.0, np.nan]}))
    with pytest.raises(InputError, match="missing doc"):
        clicks.PBM().use_features(pd.DataFrame({"query": ["q"], "x": [1.0]}))


def test_cli_fits_and_scores_with_features(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    log, table, _ = _feature_logs(seed=14)
    train, test = log.split(0.3, seed=0, by="query")
    train.to_long().to_pandas().to_csv(tmp_path / "train.csv", index=False)
    test.to_long().to_pandas().to_csv(tmp_path / "test.csv", index=False)
    table.to_csv(tmp_path / "features.csv", index=False)
    run = CliRunner().invoke(app, ["clicks", "fit", str(tmp_path / "train.csv"), "--model", "pbm", "--iterations", "10",
                                   "--features", str(tmp_path / "features.csv"), "-o", str(tmp_path / "m.json"),
                                   "--quiet"])
    assert run.exit_code == 0, run.output
    scored = CliRunner().invoke(app, ["clicks", "evaluate", str(tmp_path / "test.csv"), "--model",
                                      str(tmp_path / "m.json"), "--features", str(tmp_path / "features.csv"),
                                      "-f", "csv"])
    assert scored.exit_code == 0, scored.output
    expected = clicks.PBM().use_features(table).fit(clicks.read_log(tmp_path / "train.csv"), iterations=10)
    overall = pd.read_csv(__import__("io").StringIO(scored.stdout)).set_index("rank").loc["all", "log_likelihood"]
    table_expected = clicks.evaluate_model(expected, clicks.read_log(tmp_path / "test.csv")).table.set_index("rank")
    assert overall == pytest.approx(table_expected.loc["all", "log_likelihood"], rel=1e-9)
    without = CliRunner().invoke(app, ["clicks", "evaluate", str(tmp_path / "test.csv"), "--model",
                                       str(tmp_path / "m.json")])
    assert without.exit_code == 2 and "feature table" in without.output


def _dbn_feature_logs(seed: int) -> tuple[clicks.ClickLog, pd.DataFrame, np.ndarray]:
    """DBN sessions from its definition (examine top-down; click an attractive document; after
    a click stop if satisfied; go on with gamma = 0.9) where attractiveness follows one feature
    and satisfaction another: ``alpha = sigmoid(1.5 x - 0.5)``, ``sigma = sigmoid(2 z - 0.5)``;
    1,000 queries x 8 documents, 6 pages per query, 5 ranks."""
    rng = np.random.default_rng(seed)
    queries, per_query, pages, ranks = 1_000, 8, 6, 5
    x, z = rng.normal(size=(queries, per_query)), rng.normal(size=(queries, per_query))
    alpha, sigma = 1 / (1 + np.exp(-(1.5 * x - 0.5))), 1 / (1 + np.exp(-(2.0 * z - 0.5)))
    query = np.repeat(np.arange(queries), pages)
    shown = np.argsort(rng.random((len(query), per_query)), axis=1)[:, :ranks]
    click = np.zeros(shown.shape, dtype=int)
    going = np.ones(len(query), dtype=bool)
    for r in range(ranks):
        clicked = going & (rng.random(len(query)) < alpha[query, shown[:, r]])
        click[clicked, r] = 1
        satisfied = clicked & (rng.random(len(query)) < sigma[query, shown[:, r]])
        going &= ~satisfied & (rng.random(len(query)) < 0.9)
    log = clicks.ClickLog.from_arrays([f"q{q}" for q in query],
                                      [[f"q{q}d{d}" for d in row] for q, row in zip(query, shown, strict=True)],
                                      click.tolist())
    table = pd.DataFrame({"query": np.repeat([f"q{q}" for q in range(queries)], per_query),
                          "doc": [f"q{q}d{d}" for q in range(queries) for d in range(per_query)],
                          "x": x.ravel(), "z": z.ravel()})
    return log, table, alpha * sigma


def test_dbn_satisfaction_follows_its_own_features(tmp_path: Path) -> None:
    """Satisfaction gets its own logistic regression over the same features: on held-out
    queries (every pair unseen) its weights come back near (0, 2), attractiveness's near
    (1.5, 0), and the relevance alpha x sigma of unseen pairs tracks the truth."""
    log, table, relevance = _dbn_feature_logs(seed=21)
    train, test = log.split(0.3, seed=0, by="query")
    featured = clicks.DBN().use_features(table).fit(train, iterations=40)
    np.testing.assert_allclose(featured.feature_fit["weights"][:2], [1.5, 0.0], atol=0.2)
    np.testing.assert_allclose(featured.feature_fit["sigma"]["weights"][:2], [0.0, 2.0], atol=0.25)
    assert featured.log_likelihood(test) > clicks.DBN().fit(train, iterations=40).log_likelihood(test) + 0.3
    pairs = featured.relevance("f", test)
    truth = dict(zip(table["doc"], relevance.ravel(), strict=True))
    assert np.corrcoef(pairs.score, [truth[d] for d in pairs.doc.to_pylist()])[0, 1] > 0.99
    clicks.save_model(featured, tmp_path / "dbn.json")
    loaded = clicks.load_model(tmp_path / "dbn.json").use_features(table)
    np.testing.assert_array_equal(loaded.feature_fit["sigma"]["weights"], featured.feature_fit["sigma"]["weights"])
    assert loaded.log_likelihood(test) == pytest.approx(featured.log_likelihood(test), rel=1e-12)


def _shared_document_logs(seed: int) -> clicks.ClickLog:
    """PBM sessions (gamma_r = 1 / r) where attractiveness is mostly the document's own:
    ``alpha = sigmoid(e_d + noise)``, 400 documents each a candidate of several of 600 queries."""
    rng = np.random.default_rng(seed)
    queries, docs, per_query, pages, ranks = 600, 400, 8, 6, 5
    effect = rng.normal(size=docs) * 1.5 - 1.5
    candidates = np.array([rng.choice(docs, per_query, replace=False) for _ in range(queries)])
    alpha = 1 / (1 + np.exp(-(effect[candidates] + rng.normal(scale=0.3, size=candidates.shape))))
    query = np.repeat(np.arange(queries), pages)
    position = np.argsort(rng.random((len(query), per_query)), axis=1)[:, :ranks]
    click = rng.random(position.shape) < alpha[query[:, None], position] / np.arange(1, ranks + 1)
    return clicks.ClickLog.from_arrays([f"q{q}" for q in query],
                                       [[f"d{d}" for d in row] for row in candidates[query[:, None], position]],
                                       click.astype(int).tolist())


def test_hashed_document_ids_carry_attractiveness_to_unseen_queries(tmp_path: Path) -> None:
    """Held-out queries: every pair is unseen, but its document was shown under other queries.
    Hashed document ids (no feature table) raise the held-out log-likelihood per session by
    more than 0.1 over the plain model; a saved model scores unseen pairs without being given
    anything again."""
    from rankwise.clicks.features import bucket_of

    log = _shared_document_logs(seed=3)
    train, test = log.split(0.3, seed=0, by="query")
    hashed = clicks.PBM().use_features(hashed=("doc",), buckets=1024).fit(train, iterations=30)
    assert hashed.feature_fit["weights"].shape == (1024 + 1,) and hashed.feature_fit["hashed"] == ["doc"]
    assert hashed.log_likelihood(test) > clicks.PBM().fit(train, iterations=30).log_likelihood(test) + 0.1
    clicks.save_model(hashed, tmp_path / "h.json")
    assert clicks.load_model(tmp_path / "h.json").log_likelihood(test) == hashed.log_likelihood(test)
    # CRC-32 buckets, the same on every machine
    assert bucket_of(["d0", "d1"], 1024).tolist() == [zlib.crc32(b"d0") % 1024, zlib.crc32(b"d1") % 1024]
    with pytest.raises(OptionError, match="--hash-ids: hashed ids must be among query, doc, got url"):
        clicks.PBM().use_features(hashed=("url",))
    with pytest.raises(OptionError, match="needs a feature table, hashed ids, or both"):
        clicks.PBM().use_features()


def test_cli_hashes_ids(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    train, test = _shared_document_logs(seed=4).split(0.3, seed=0, by="query")
    train.to_long().to_pandas().to_csv(tmp_path / "train.csv", index=False)
    test.to_long().to_pandas().to_csv(tmp_path / "test.csv", index=False)
    run = CliRunner().invoke(app, ["clicks", "fit", str(tmp_path / "train.csv"), "--model", "pbm", "--iterations", "10",
                                   "--hash-ids", "doc", "--buckets", "256", "-o", str(tmp_path / "m.json"), "--quiet"])
    assert run.exit_code == 0, run.output
    expected = clicks.PBM().use_features(hashed=("doc",), buckets=256).fit(clicks.read_log(tmp_path / "train.csv"),
                                                                          iterations=10)
    loaded = clicks.load_model(tmp_path / "m.json")
    held_out = clicks.read_log(tmp_path / "test.csv")
    assert loaded.log_likelihood(held_out) == pytest.approx(expected.log_likelihood(held_out), rel=1e-12)
    bad = CliRunner().invoke(app, ["clicks", "fit", str(tmp_path / "train.csv"), "--model", "pbm", "--hash-ids", "url",
                                   "-o", str(tmp_path / "x.json")])
    assert bad.exit_code == 2 and "--hash-ids: hashed ids must be among query, doc" in bad.output


def _placed_logs(seed: int) -> tuple[clicks.ClickLog, np.ndarray]:
    """PBM sessions from its definition on an engine that places documents by a noisy view of
    their attractiveness (``alpha ~ Beta(1, 4)``, placed by ``alpha + N(0, 0.15)``); 1,500
    queries x 10 documents, 2 pages per query (most pairs seen twice), 10 ranks,
    ``gamma_r = 1 / r``."""
    rng = np.random.default_rng(seed)
    queries, docs, pages = 1_500, 10, 2
    alpha = rng.beta(1.0, 4.0, size=(queries, docs))
    query = np.repeat(np.arange(queries), pages)
    shown = np.argsort(-(alpha[query] + rng.normal(0, 0.15, size=(len(query), docs))), axis=1)
    click = rng.random(shown.shape) < alpha[query[:, None], shown] / np.arange(1, docs + 1)
    log = clicks.ClickLog.from_arrays([f"q{q}" for q in query],
                                      [[f"q{q}d{d}" for d in row] for q, row in zip(query, shown, strict=True)],
                                      click.astype(int).tolist())
    return log, alpha


def test_placement_features_rank_rare_pairs_by_where_the_engine_put_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    log, alpha = _placed_logs(seed=21)
    table = clicks.placement_features(log)
    # each pair's mean of log2(rank + 1) over its impressions, from the long form of the log
    cells = log.to_long().to_pandas()
    expected = np.log2(cells["rank"] + 1.0).groupby([cells["query"], cells["doc"]]).mean()
    got = table.set_index(["query", "doc"])["mean_log_rank"]
    assert len(got) == 15_000 and np.allclose(got.sort_index().to_numpy(), expected.sort_index().to_numpy(),
                                              rtol=1e-12)
    plain = clicks.PBM(prior_structure="flat").fit(log, iterations=30)
    placed = clicks.PBM().use_features(table).fit(log, iterations=30)
    # the default prior structure reads the same placement in the fit's first pass
    default = clicks.PBM().fit(log, iterations=30)
    assert default.structured_by == "placement" and np.allclose(default.alpha, placed.alpha, rtol=1e-12)
    truth = {f"q{q}d{d}": alpha[q, d] for q in range(alpha.shape[0]) for d in range(alpha.shape[1])}

    def correlation(model: clicks.ClickModel) -> float:   # within-query rank correlation with the truth
        run = model.relevance("r", log).to_dataframe()
        run["truth"] = run["doc_id"].map(truth)
        return float(run.groupby("query_id")[["score", "truth"]].corr(method="spearman").xs("score", level=1)
                     ["truth"].mean())
    assert correlation(placed) > correlation(plain) + 0.1       # two impressions say little; the placement more
    assert placed.feature_fit["weights"][0] < 0                  # a lower place, a lower attractiveness
    # the command line computes the same features from the log it is given
    log.to_long().to_pandas().to_csv(tmp_path / "log.csv", index=False)
    fit = CliRunner().invoke(app, ["clicks", "fit", str(tmp_path / "log.csv"), "--model", "pbm", "--iterations", "30",
                                   "--features", "placement", "-o", str(tmp_path / "m.json"), "--quiet"])
    assert fit.exit_code == 0, fit.output
    ranked = CliRunner().invoke(app, ["clicks", "rank", "--model", str(tmp_path / "m.json"), str(tmp_path / "log.csv"),
                                      "--features", "placement", "-o", str(tmp_path / "run.trec")])
    assert ranked.exit_code == 0, ranked.output
    missing = CliRunner().invoke(app, ["clicks", "rank", "--model", str(tmp_path / "m.json"), "--features",
                                       "placement", "-o", str(tmp_path / "run2.trec")])
    assert missing.exit_code != 0 and "give the click log too" in missing.output


def test_the_lower_bound_ranking_scores_unseen_pairs_from_their_features() -> None:
    """An unseen pair's lower bound comes from its features' prior Beta(kappa m, kappa (1 - m)),
    not from the one prior of all pairs: it ranks held-out queries as the mean does."""
    from scipy.stats import beta

    log, table, alpha = _feature_logs(seed=17)
    train, test = log.split(0.3, seed=0, by="query")          # held-out queries: every pair unseen
    model = clicks.PBM().use_features(table).fit(train, iterations=15)
    mean = model.relevance("m", test).to_dataframe()
    lower = model.relevance("l", test, bound="lower", level=0.9).to_dataframe()
    kappa = model.feature_fit["kappa"]
    expected = beta.ppf(0.05, kappa * mean["score"], kappa * (1 - mean["score"]))
    assert np.allclose(lower["score"], expected, rtol=1e-9)
    assert (lower["score"] < mean["score"]).all()
    truth = dict(zip(table["doc"], alpha.ravel(), strict=True))
    assert np.corrcoef(lower["score"], lower["doc_id"].map(truth))[0, 1] > 0.95


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-3, 1e4) | st.integers(0, 40).map(lambda k: k + 0.25), min_size=1, max_size=40))
def test_trigamma_of_an_array_is_the_recurrence_value_by_value(values: list[float]) -> None:
    # the array form takes the recurrence's steps for all values at once; each value must get the
    # bits of the step-by-step loop (trigamma_of), whatever its neighbours need; and the series
    # cut at 6 is within the documented 1.1e-9 of scipy's (the worst is just above 6: 1.06e-9)
    assert trigamma(np.array(values)).tolist() == [trigamma_of(v) for v in values]
    from scipy.special import polygamma

    assert np.allclose(trigamma(np.array(values)), polygamma(1, np.array(values)), rtol=1.1e-9, atol=0)
