"""rankwise.clicks: parameter recovery on simulated logs, hand-computed counting models, the
Yandex-format reader on CLARA 2, predictions into the click metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankwise import clicks
from rankwise.errors import InputError
from rankwise.streaming.clicks import ConditionalPerplexity, LogLikelihood, Perplexity

DATA = Path(__file__).parent / "data" / "clicks"
RANKS = 5
DOCS = 8


def _sessions(n: int, seed: int) -> clicks.ClickLog:
    """One query, 8 documents, 5 shown per session in a random order (identifiable)."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((n, DOCS)), axis=1)[:, :RANKS]
    docs = [[f"d{d}" for d in row] for row in order]
    return clicks.ClickLog.from_arrays(["q"] * n, docs, np.zeros((n, RANKS), dtype=int).tolist())


TRUE_ALPHA = np.array([0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
TRUE_GAMMA = np.array([1.0, 0.8, 0.6, 0.45, 0.3])


def _with(model: clicks.ClickModel, log: clicks.ClickLog, **values) -> clicks.ClickModel:
    """``model`` fitted to ``log`` (for its vocabularies), then given the true parameters."""
    model.fit(log, iterations=1)
    order = [int(log.doc_ids[d][1:]) for d in log.pair_doc]
    model.alpha = TRUE_ALPHA[order]
    for name, value in values.items():
        setattr(model, name, value)
    return model


@pytest.mark.parametrize("kind", ["pbm", "ubm"])
def test_em_recovers_the_parameters(kind: str) -> None:
    errors, margins = [], []
    for n in (2_000, 40_000):
        base = _sessions(n, seed=n)
        if kind == "pbm":
            truth = _with(clicks.PBM(), base, gamma=TRUE_GAMMA)
        else:
            # examination falls with the distance from the previous click
            matrix = np.array([[TRUE_GAMMA[r] * (1 if p == 0 else 0.9 ** (r - p + 1)) for p in range(RANKS)]
                               for r in range(RANKS)])
            truth = _with(clicks.UBM(), base, gamma_matrix=matrix)
        train = clicks.simulate(truth, base, seed=1)
        test = clicks.simulate(truth, _sessions(20_000, seed=99), seed=2)
        fitted = clicks.MODELS[kind]().fit(train, iterations=200, tolerance=1e-9)
        order = [int(train.doc_ids[d][1:]) for d in fitted.pair_doc]
        # alpha and gamma are identified up to a common scale: compare with gamma_1 = 1
        scale = fitted.gamma[0] if kind == "pbm" else fitted.gamma_matrix[0, 0]
        errors.append(np.abs(fitted.alpha * scale - TRUE_ALPHA[order]).max())
        margins.append(truth.log_likelihood(test) - fitted.log_likelihood(test))
    # the error shrinks with the sessions, to a few hundredths at 40,000
    assert errors[1] < errors[0] and errors[1] < 0.03
    # held-out log-likelihood at the fitted parameters within 0.2% of the truth's
    assert abs(margins[1]) < 0.002 * abs(truth.log_likelihood(test))


def test_counting_models_recover_their_parameters() -> None:
    base = _sessions(60_000, seed=3)
    sigma = np.linspace(0.2, 0.8, DOCS)
    truth = _with(clicks.SDBN(), base)
    order = [int(base.doc_ids[d][1:]) for d in truth.pair_doc]
    truth.sigma = sigma[order]
    log = clicks.simulate(truth, base, seed=4)
    fitted = clicks.SDBN().fit(log)
    # counting down to the last click leaves out the skips of users who went on unsatisfied
    # after it, so attractiveness comes out high (by 0.02-0.07 here) but in the true order
    assert (fitted.alpha >= truth.alpha - 0.01).all() and (fitted.alpha - truth.alpha).max() < 0.1
    assert (np.argsort(fitted.alpha) == np.argsort(truth.alpha)).all()
    assert (np.argsort(fitted.sigma) == np.argsort(truth.sigma)).all()
    # cascade: the first click only
    cascade = _with(clicks.CascadeModel(), base)
    fitted_cm = clicks.CascadeModel().fit(clicks.simulate(cascade, base, seed=5))
    assert np.abs(fitted_cm.alpha - cascade.alpha).max() < 0.02
    # DCM: continuation per rank
    dcm = _with(clicks.DCM(), base, lam=np.array([0.7, 0.6, 0.5, 0.4, 0.3]))
    fitted_dcm = clicks.DCM().fit(clicks.simulate(dcm, base, seed=6))
    # counted lambda is a lower bound: a user who went on but clicked nothing more looks like
    # one who stopped (DBN and CCM, fitted by EM, have no such bias)
    assert (fitted_dcm.lam[:-1] <= dcm.lam[:-1] + 0.01).all()
    assert (np.diff(fitted_dcm.lam[:-1]) < 0).all()


def test_unconditional_probabilities_are_the_simulated_click_rates() -> None:
    base = _sessions(1, seed=7)
    many = base.subset(np.zeros(200_000, dtype=int))   # one ranking shown 200,000 times
    for model in (_with(clicks.UBM(), base, gamma_matrix=np.tril(np.full((RANKS, RANKS), 0.7)) + 0.1),
                  _with(clicks.CascadeModel(), base), _with(clicks.DCM(), base, lam=np.full(RANKS, 0.5)),
                  _dbn(base, gamma=0.8), _with(clicks.CCM(), base, tau=np.array([0.8, 0.6, 0.3]))):
        rates = clicks.simulate(model, many, seed=8).clicks.mean(axis=0)
        predicted = model.click_probs(base)[0]
        assert np.abs(rates - predicted).max() < 0.005, type(model).__name__


SIGMA = np.linspace(0.2, 0.8, DOCS)


def _dbn(log: clicks.ClickLog, gamma: float) -> clicks.DBN:
    truth = _with(clicks.DBN(), log, gamma=gamma)
    truth.sigma = SIGMA[[int(log.doc_ids[d][1:]) for d in truth.pair_doc]]
    return truth


def test_dbn_and_ccm_recover_the_parameters_by_em() -> None:
    dbn_errors, ccm_errors = [], []
    for n in (4_000, 60_000):
        base = _sessions(n, seed=n + 1)
        truth = _dbn(base, gamma=0.9)
        log = clicks.simulate(truth, base, seed=21)
        fitted = clicks.DBN().fit(log, iterations=500, tolerance=1e-9)
        dbn_errors.append(max(np.abs(fitted.alpha - truth.alpha).max(), np.abs(fitted.sigma - truth.sigma).max(),
                              abs(fitted.gamma - 0.9)))
        ccm_truth = _with(clicks.CCM(), base, tau=np.array([0.85, 0.6, 0.2]))
        ccm = clicks.CCM().fit(clicks.simulate(ccm_truth, base, seed=22), iterations=500, tolerance=1e-9)
        ccm_errors.append(max(np.abs(ccm.alpha - ccm_truth.alpha).max(), np.abs(ccm.tau - ccm_truth.tau).max()))
    # gamma 0.9 comes back as 0.9 (PyClick's DBN gives 0.9996 here), within 0.005 at 60,000
    # sessions; every parameter's error shrinks with the sessions, to under 0.02
    assert abs(fitted.gamma - 0.9) < 0.005
    assert dbn_errors[1] < dbn_errors[0] and dbn_errors[1] < 0.02
    assert ccm_errors[1] < ccm_errors[0] and ccm_errors[1] < 0.02
    # held-out log-likelihood at the fitted parameters within 0.1% of the truth's
    test = clicks.simulate(truth, _sessions(20_000, seed=5), seed=23)
    assert abs(fitted.log_likelihood(test) - truth.log_likelihood(test)) < 0.001 * abs(truth.log_likelihood(test))


def test_forward_backward_is_a_distribution_and_matches_the_chain_rule() -> None:
    import itertools

    # every click pattern of one 4-rank ranking, padded to 5 ranks
    base = _sessions(1, seed=31)
    patterns = np.array(list(itertools.product([0, 1], repeat=4)))
    docs = [[base.doc_ids[d] for d in base.docs[0][:4]] + [None]] * len(patterns)
    log = clicks.ClickLog.from_arrays(["q"] * len(patterns), docs, np.pad(patterns, ((0, 0), (0, 1))).tolist())
    for truth in (_dbn(log, gamma=0.7), _with(clicks.CCM(), log, tau=np.array([0.8, 0.5, 0.3]))):
        _, b, _ = clicks.chain.forward_backward(truth.attractiveness(log) * log.mask, *truth.continuation(log),
                                                log.clicks)
        # P(C) over all 16 patterns adds up to 1, and equals the product of the conditionals
        assert b[:, 0].sum() == pytest.approx(1.0, abs=1e-12)
        conditional = truth.conditional_click_probs(log)
        chain_rule = np.where(log.mask, np.where(log.clicks == 1, conditional, 1 - conditional), 1.0).prod(axis=1)
        assert np.allclose(b[:, 0], chain_rule, atol=1e-12)
        # the unconditional click rates are the pattern-weighted means of the clicks
        assert np.allclose(truth.click_probs(log)[0], (b[:, :1] * log.clicks).sum(axis=0), atol=1e-12)


@pytest.mark.parametrize("kind", ["pbm", "ubm", "dbn", "ccm", "sdbn", "dcm", "cascade", "rank-ctr"])
def test_a_fit_over_chunks_equals_one_over_the_whole_log(kind: str) -> None:
    log = clicks.simulate(_dbn(_sessions(3_000, seed=41), gamma=0.8), _sessions(3_000, seed=41), seed=42)
    # chunks change the order of the sums' terms: the same to the last bits under a fixed prior
    whole = clicks.MODELS[kind](prior=(1, 2)).fit(log, iterations=5)
    pieces = clicks.MODELS[kind](prior=(1, 2)).fit(log, iterations=5, chunk_size=7)
    assert np.allclose(whole.alpha, pieces.alpha, rtol=1e-12, atol=0)
    # the empirical prior's fitted Beta (an optimiser's answer) carries those bits further
    empirical = clicks.MODELS[kind]().fit(log, iterations=5), clicks.MODELS[kind]().fit(log, iterations=5, chunk_size=7)
    assert np.allclose(empirical[0].alpha, empirical[1].alpha, rtol=1e-6, atol=0)
    # chunks in threads are added in chunk order: bit for bit the same as one thread
    one = clicks.MODELS[kind]().fit(log, iterations=5, chunk_size=100, workers=1)
    three = clicks.MODELS[kind]().fit(log, iterations=5, chunk_size=100, workers=3)
    assert np.array_equal(one.alpha, three.alpha)
    assert [h["log_likelihood"] for h in one.history] == [h["log_likelihood"] for h in three.history]
    assert [h["iteration"] for h in whole.history] == [h["iteration"] for h in pieces.history]
    for a, b in zip(whole.history, pieces.history, strict=True):
        assert a["log_likelihood"] == pytest.approx(b["log_likelihood"], rel=1e-12)


def test_hand_computed_models() -> None:
    # two sessions of q: (a, b) with a click on b; (b, a) with clicks on b then a; every estimate
    # is (clicks + 1) / (impressions + 2) under the fixed prior (1, 2)
    log = clicks.ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b", "a"]], [[0, 1], [1, 1]])
    prior = (1.0, 2.0)
    # cascade, down to the first click: a seen once (no click): 1/3; b twice (2 first clicks): 3/4
    assert clicks.CascadeModel(prior=prior).fit(log).alpha.tolist() == pytest.approx([1 / 3, 3 / 4])
    # SDBN by counting, down to the last click: a 1 click in 2 (2/4), b 2 in 2 (3/4); satisfaction:
    # a's one click was a session's last (2/3), b's clicks last in session 1, not in session 2 (2/4)
    sdbn = clicks.SDBN(prior=prior, method="counting").fit(log)
    assert sdbn.alpha.tolist() == pytest.approx([0.5, 0.75]) and sdbn.sigma.tolist() == pytest.approx([2 / 3, 0.5])
    # DCM by counting: lambda_1 = 1 of 1 clicks at rank 1 followed by another (2/3); lambda_2 = 0 of 2 (1/4)
    assert clicks.DCM(prior=prior, method="counting").fit(log).lam.tolist() == pytest.approx([2 / 3, 0.25])
    # cascade conditional probabilities: before the first click alpha, after it the floor
    cm = clicks.CascadeModel(prior=prior, floor=1e-6).fit(log)
    np.testing.assert_allclose(cm.conditional_click_probs(log), [[1 / 3, 0.75], [0.75, 1e-6]], rtol=1e-12)
    # the relevance of SDBN is attractiveness x satisfaction, as a rankwise Run: 1/2 x 2/3, 3/4 x 1/2
    run = sdbn.relevance()
    assert run.doc.to_pylist() == ["a", "b"] and run.score.tolist() == pytest.approx([1 / 3, 0.375])


def test_predictions_feed_the_click_metrics() -> None:
    base = _sessions(5_000, seed=11)
    truth = _with(clicks.PBM(), base, gamma=TRUE_GAMMA)
    log = clicks.simulate(truth, base, seed=12)
    fitted = clicks.PBM().fit(log)
    ll = LogLikelihood(positions=RANKS).update(conditional_log_probs=fitted.conditional_log_probs(log),
                                              clicks=log.clicks, where=log.mask)
    assert ll.compute() * RANKS == pytest.approx(fitted.log_likelihood(log), rel=1e-9)
    ppl = Perplexity(positions=RANKS).update(log_probs=fitted.log_probs(log), clicks=log.clicks, where=log.mask)
    cond = ConditionalPerplexity(positions=RANKS).update(conditional_log_probs=fitted.conditional_log_probs(log),
                                                         clicks=log.clicks, where=log.mask)
    # PBM's clicks are independent: conditional and unconditional perplexity agree
    assert cond.compute() == pytest.approx(ppl.compute(), rel=1e-12)
    assert 1.0 < ppl.compute() < 2.0


def test_yandex_reader_on_clara2() -> None:
    log = clicks.read_yandex(DATA / "clara2_head.tsv")
    assert log.sessions == 305 and log.ranks == 10
    # 95 C lines: 74 clicked cells, 18 repeated clicks on a clicked cell, 3 on unshown URLs
    assert int(log.clicks.sum()) == 74
    assert log.notes == ["3 click(s) on documents their session never showed were left out",
                         "18 repeated click(s) on an already clicked result were counted once"]
    # the first page: query 2031, ten URLs, one click on 97554 at rank 1
    assert log.query_ids[log.query[0]] == "2031"
    assert [log.doc_ids[d] for d in log.docs[0][:3]] == ["97554", "68001", "68301"]
    assert log.clicks[0].tolist() == [1] + [0] * 9


def test_yandex_reader_errors(tmp_path: Path) -> None:
    path = tmp_path / "log.tsv"
    path.write_text("0\t0\tQ\t1\t0\ta\tb\n0\t5\tX\ta\n")
    with pytest.raises(InputError, match=r"log\.tsv:2: .*expected Q or C"):
        clicks.read_yandex(path)
    # a click logged before its session's first page goes to that page (CLARA 2 has 1 such);
    # a click of a session that never shows a page is counted and left out
    path.write_text("0\t5\tC\tb\n0\t6\tQ\t1\t0\ta\tb\n9\t1\tC\ta\n")
    log = clicks.read_yandex(path)
    assert log.clicks.tolist() == [[0, 1]]
    assert log.notes == ["1 click(s) logged before their session's first result page were given to that page",
                         "1 click(s) of sessions without any result page were left out"]
    path.write_text("0\t0\tQ\t1\t0\ta\tb\n0\t5\tC\tz\n0\t6\tC\tb\n")
    log = clicks.read_yandex(path)
    assert log.clicks.tolist() == [[0, 1]] and log.notes == ["1 click(s) on documents their session never "
                                                             "showed were left out"]


def test_long_rows_equal_arrays_and_bad_rows_name_their_line(tmp_path: Path) -> None:
    import pandas as pd

    rows = pd.DataFrame({"session": ["s1", "s1", "s2", "s2"], "query": ["q", "q", "q", "q"],
                         "rank": [1, 2, 2, 1], "doc": ["a", "b", "a", "b"], "click": [0, 1, 1, 0]})
    log = clicks.ClickLog.from_long(rows)
    same = clicks.ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b", "a"]], [[0, 1], [0, 1]])
    assert log.docs.tolist() == same.docs.tolist() and log.clicks.tolist() == same.clicks.tolist()
    # the second file's third data row (its line 4) has click 2
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    rows.to_csv(first, index=False)
    rows.assign(session=["s3", "s3", "s4", "s4"], click=[0, 1, 2, 0]).to_csv(second, index=False)
    with pytest.raises(InputError, match=r"b\.csv:4: field 'click': click must be 0 or 1, got 2"):
        clicks.ClickLog.from_long([first, second])


def test_a_stored_log_streams_to_the_same_fit(tmp_path: Path) -> None:
    base = _sessions(2_000, seed=51)
    log = clicks.simulate(_dbn(base, gamma=0.8), base, seed=52)
    # written in three appended pieces, each with its own vocabularies, padded to 6 ranks
    stored = clicks.write_log([log.subset(np.arange(0, 700)), log.subset(np.arange(700, 1500)),
                               log.subset(np.arange(1500, 2000))], tmp_path / "log", ranks=6)
    assert (stored.sessions, stored.ranks, stored.n_pairs) == (2_000, 6, DOCS)
    loaded = stored.load()
    assert loaded.clicks[:, :RANKS].tolist() == log.clicks.tolist() and not loaded.mask[:, RANKS].any()
    for kind in ("dbn", "pbm"):
        in_memory = clicks.MODELS[kind](prior=(1, 2)).fit(log, iterations=20)
        streamed = clicks.MODELS[kind](prior=(1, 2)).fit(stored, iterations=20, chunk_size=300)
        assert np.allclose(in_memory.alpha, streamed.alpha, rtol=1e-12, atol=0)
        assert in_memory.history[-1]["log_likelihood"] == pytest.approx(streamed.history[-1]["log_likelihood"],
                                                                        rel=1e-12)
    with pytest.raises(InputError, match="not a stored click log"):
        clicks.open_log(tmp_path)


@pytest.mark.parametrize("kind", ["pbm", "ubm", "dbn", "ccm", "sdbn", "dcm", "cascade", "global-ctr", "rank-ctr",
                                  "document-ctr"])
def test_a_saved_model_predicts_the_same(kind: str, tmp_path: Path) -> None:
    base = _sessions(1_000, seed=61)
    log = clicks.simulate(_dbn(base, gamma=0.8), base, seed=62)
    model = clicks.MODELS[kind]().fit(log, iterations=10)
    clicks.save_model(model, tmp_path / "m.json")
    again = clicks.load_model(tmp_path / "m.json")
    held_out = clicks.simulate(model, _sessions(500, seed=63), seed=64)   # its own vocabulary and pair numbers
    assert np.array_equal(again.conditional_click_probs(held_out), model.conditional_click_probs(held_out))
    assert np.array_equal(again.click_probs(held_out), model.click_probs(held_out))
    assert again.history == model.history


def test_bad_model_files_are_named(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"format": "rankwise-click-model", "version": 1, "model": "xyz"}')
    with pytest.raises(InputError, match=r"m\.json: field 'model': unknown model 'xyz'"):
        clicks.load_model(path)
    with pytest.raises(InputError, match="ULTRA parameter file"):
        clicks.load_model(DATA / "ultra" / "pbm_0.1_1.0_4_1.0.json")
    path.write_text("{")
    with pytest.raises(InputError, match=r"m\.json:1: not valid JSON"):
        clicks.load_model(path)


def _tampered(tmp_path: Path, change: Any) -> Path:
    """A saved PBM with one part of its JSON changed by ``change(document)``."""
    log = clicks.ClickLog.from_arrays(["q"] * 2, [["a", "b"], ["b", "a"]], [[1, 0], [0, 1]])
    path = tmp_path / "pbm.json"
    clicks.save_model(clicks.PBM().fit(log, iterations=2), path)
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["parameters"].update(gamma=[7.5, 0.5]), r"field 'gamma': expected probabilities in \[0, 1\], got 7.5"),
    (lambda d: d["parameters"].update(gamma=[-1, 0.5]), r"'gamma': expected probabilities in \[0, 1\], got -1.0"),
    (lambda d: d["parameters"].update(gamma=[float("nan"), 0.5]), r"'gamma': expected probabilities .*, got nan"),
    (lambda d: d["parameters"].update(gamma=[[0.5]]), r"'gamma': expected N numbers, got shape \(1, 1\)"),
    (lambda d: d["pairs"].update(attractiveness=[0.5]), "pairs need 2 values of 'attractiveness'"),
    (lambda d: d.update(version=7), "field 'version': unknown version 7; this rankwise reads version 1"),
    (lambda d: d["settings"].update(prior=[1, 2, 3]), "field 'settings': pbm: prior must be 2 numbers"),
    (lambda d: d["settings"].update(floor=0.1), r"pbm: unknown parameter\(s\) floor"),
    (lambda d: d["pairs"].update(doc=["a", "a"]), "a \\(query, document\\) pair is listed twice"),
])
def test_saved_models_are_validated_on_load(tmp_path: Path, change: Any, message: str) -> None:
    """A saved model with a parameter out of range, of the wrong shape, an unknown version or
    setting is refused with the file and field named (it loaded and simulated garbage before)."""
    with pytest.raises(InputError, match=message):
        clicks.load_model(_tampered(tmp_path, change))


def test_ultra_models_simulate_their_definitions() -> None:
    # one query, five documents with labels 0..4, shown in that order 200,000 times
    labels = {"q": {f"d{i}": i for i in range(5)}}
    run = {"q": {f"d{i}": 5.0 - i for i in range(5)}}
    log = clicks.sessions_from_run(run, depth=5, repeat=200_000)
    assert [log.doc_ids[d] for d in log.docs[0]] == ["d0", "d1", "d2", "d3", "d4"]
    click_prob = np.array([0.1, 0.16, 0.28, 0.52, 1.0])
    exam = np.array([0.68, 0.61, 0.48, 0.34, 0.28])
    pbm = clicks.from_ultra(DATA / "ultra" / "pbm_0.1_1.0_4_1.0.json", labels, log)
    rates = clicks.simulate(pbm, log, seed=71).clicks.mean(axis=0)
    assert np.abs(rates - exam * click_prob).max() < 0.004          # e.g. rank 5: 0.28 x 1.0
    # cascade: P(click at r) = c_r prod_{j<r} (1 - c_j): 0.1, 0.9 x 0.16 = 0.144, ...
    cascade = clicks.from_ultra(DATA / "ultra" / "cascade_0.1_1.0_4_1.0.json", labels, log)
    expected = click_prob * np.concatenate([[1], np.cumprod(1 - click_prob)[:-1]])
    assert np.abs(clicks.simulate(cascade, log, seed=72).clicks.mean(axis=0) - expected).max() < 0.004
    # UBM: exam_prob[r][d - 1], d the distance to the previous click (from rank 0 when none):
    # rank 2 after a click at rank 1 (d = 1) 0.98, without a click (d = 2) 1.0; rank 3 after a
    # click at rank 1 (d = 2) 0.62
    ubm = clicks.from_ultra(DATA / "ultra" / "ubm_0.1_1_4_1.0.json", labels, log)
    assert ubm.gamma_matrix[1, 1] == 0.98 and ubm.gamma_matrix[1, 0] == 1.0 and ubm.gamma_matrix[2, 1] == 0.62
    simulated = clicks.simulate(ubm, log, seed=73)
    assert np.abs(simulated.clicks.mean(axis=0) - ubm.click_probs(log)[0]).max() < 0.004
    # trust bias at rank 1 (r = 0) for label 0: 0.68 x (0.1 x 0.98 + 0.9 x 0.65) = 0.46444
    trust = clicks.from_ultra(DATA / "ultra" / "trust_bias.json", labels, log)
    assert trust.click_probs(log)[0, 0] == pytest.approx(0.68 * (0.1 * 0.98 + 0.9 * 0.65), abs=1e-12)
    assert np.array_equal(pbm.gamma[:5], exam)


def _cli(*args: str):
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    return CliRunner().invoke(app, ["clicks", *map(str, args)])


def test_cli_fit_evaluate_rank_simulate_convert(tmp_path: Path) -> None:
    log = DATA / "clara2_head.tsv"
    model = tmp_path / "dbn.json"
    fitted = _cli("fit", log, "--model", "dbn", "-o", model, "--iterations", "3")
    assert fitted.exit_code == 0, fitted.output
    # a progress line per iteration, the reader's notes as warnings
    assert "iteration   3  log-likelihood" in fitted.output and "18 repeated click(s)" in fitted.output
    in_python = clicks.DBN().fit(clicks.read_yandex(log), iterations=3)
    assert clicks.load_model(model).gamma == pytest.approx(in_python.gamma, rel=1e-12)
    table = _cli("evaluate", log, "--model", model, "-f", "csv")
    assert table.exit_code == 0, table.output
    lines = [line for line in table.output.splitlines() if line[:1].isdigit() or line.startswith("all")]
    assert len(lines) == 11 and lines[0].startswith("1,305,36,")
    expected = clicks.evaluate_model(in_python, clicks.read_yandex(log)).table
    assert float(lines[-1].split(",")[4]) == pytest.approx(expected["perplexity"].iloc[-1], rel=1e-12)
    run = tmp_path / "run.trec"
    assert _cli("rank", "--model", model, "-o", run).exit_code == 0
    first = run.read_text().splitlines()[0].split()
    assert first[0] == "1024" and len(run.read_text().splitlines()) == len(in_python.pair_query) == 1406
    simulated = tmp_path / "sim.parquet"
    out = _cli("simulate", run, "--model", model, "-o", simulated, "--sessions", "2", "--list-size", "3")
    assert out.exit_code == 0, out.output
    again = clicks.read_log(simulated)
    assert again.ranks == 3 and again.sessions == 2 * len(set(in_python.pair_query.tolist()))
    stored = tmp_path / "stored"
    assert _cli("convert", simulated, "-o", stored).exit_code == 0
    assert clicks.open_log(stored).load().clicks.tolist() == again.clicks.tolist()


def test_cli_errors_name_the_problem(tmp_path: Path) -> None:
    out = _cli("fit", DATA / "clara2_head.tsv", "--model", "xyz", "-o", tmp_path / "m.json")
    assert out.exit_code == 2 and "unknown click model 'xyz'" in out.output
    out = _cli("simulate", DATA / "clara2_head.tsv", "--model", DATA / "ultra" / "pbm_0.1_1.0_4_1.0.json",
               "-o", tmp_path / "s.tsv")
    assert out.exit_code == 2 and "give the relevance labels with --qrels" in out.output
    bad = tmp_path / "bad.tsv"
    bad.write_text("1\t0\tQ\t5\t0\ta\n1\t2\tZ\ta\n")
    out = _cli("fit", bad, "--model", "pbm", "-o", tmp_path / "m.json")
    assert out.exit_code == 2 and "bad.tsv:2" in out.output and "expected Q or C" in out.output


def test_relevance_of_a_logs_pairs_and_long_logs_read_back(tmp_path: Path) -> None:
    base = _sessions(3_000, seed=81)
    simulated = clicks.simulate(_dbn(base, gamma=0.8), base, seed=82)
    model = clicks.SDBN(prior=(1, 2)).fit(simulated)
    # a log with one seen pair (q, d3) and one unseen (q, new): the unseen scores the prior
    # mean squared (attractiveness 0.5 x satisfaction 0.5)
    other = clicks.ClickLog.from_arrays(["q"], [["d3", "new"]], [[0, 0]])
    run = model.relevance("sdbn", other)
    scores = dict(zip(run.doc.to_pylist(), run.score.tolist(), strict=True))
    seen = model.parameters()["pairs"].set_index("doc").loc["d3"]
    assert scores == {"d3": seen["attractiveness"] * seen["satisfaction"], "new": 0.25}
    # under the flat empirical prior the unseen pair scores the fitted Betas' means multiplied
    fitted = clicks.SDBN(prior_structure="flat").fit(simulated)
    (a1, b1), (a2, b2) = fitted.hyper["alpha"], fitted.hyper["sigma"]
    fitted_run = fitted.relevance("sdbn", other)
    unseen = dict(zip(fitted_run.doc.to_pylist(), fitted_run.score.tolist(), strict=True))["new"]
    assert unseen == pytest.approx(a1 / (a1 + b1) * a2 / (a2 + b2), rel=1e-12) and unseen != 0.25
    # under the placement prior (the default) its attractiveness is the logistic of where this
    # log placed it, rank 2: sigmoid(w (log2(3) - mean) / scale + b); satisfaction stays flat
    placed = clicks.SDBN().fit(simulated)
    fit = placed.feature_fit
    (w, b), (a2, b2) = fit["weights"], placed.hyper["sigma"]
    x = (np.log2(3.0) - fit["mean"][0]) / fit["scale"][0]
    placed_run = placed.relevance("sdbn", other)
    unseen = dict(zip(placed_run.doc.to_pylist(), placed_run.score.tolist(), strict=True))["new"]
    assert placed.structured_by == "placement" and "sigma" not in fit
    assert unseen == pytest.approx(1 / (1 + np.exp(-(w * x + b))) * a2 / (a2 + b2), rel=1e-12)
    # long rows written by to_long are detected and read back as the same log
    path = tmp_path / "log.csv"
    other_clicks = clicks.simulate(model, base.subset(np.arange(10)), seed=83)
    other_clicks.to_long().to_pandas().to_csv(path, index=False)
    again = clicks.read_log(path)
    assert again.clicks.tolist() == other_clicks.clicks.tolist()
    assert [[again.doc_ids[d] for d in row] for row in again.docs] == \
        [[other_clicks.doc_ids[d] for d in row] for row in other_clicks.docs]


def test_click_log_readers_keep_every_session_rank_and_url(tmp_path: Path) -> None:
    """Session ids beyond int64 stayed apart; ranks beyond ``ranks`` are counted, not "never
    shown"; an empty URL is an error, not a shift; invalid UTF-8 names its line (issue #37)."""
    long = tmp_path / "long.csv"
    big = [18446744073709551616, 18446744073709551617]   # 2^64 and 2^64 + 1: one float64
    long.write_text("session,query,rank,doc,click\n" + "".join(f"{s},q,1,a,1\n{s},q,2,b,0\n" for s in big))
    assert clicks.read_log(long).sessions == 2
    deep = tmp_path / "deep.tsv"
    urls = "\t".join(f"u{i}" for i in range(1, 13))    # 12 results, ranks=10
    deep.write_text(f"1\t0\tQ\t7\t0\t{urls}\n1\t5\tC\tu11\n1\t6\tC\tu2\n1\t7\tC\tnowhere\n")
    log = clicks.read_yandex(deep)
    assert log.clicks.tolist() == [[0, 1, 0, 0, 0, 0, 0, 0, 0, 0]]
    assert "1 result page(s) showed more than 10 documents: ranks 11+ were left out with their 1 click(s)" \
        in log.notes[1] and "1 click(s) on documents their session never showed" in log.notes[0]
    assert clicks.read_yandex(deep, ranks=12).clicks.tolist() == [[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]]
    gap = tmp_path / "gap.tsv"
    gap.write_text("1\t0\tQ\t7\t0\tu1\t\tu3\n")
    with pytest.raises(InputError, match=r"gap\.tsv:1: field 'URL': URL_2 is empty"):
        clicks.read_yandex(gap)
    bad = tmp_path / "bad.tsv"
    bad.write_bytes(b"1\t0\tQ\t7\t0\tu1\n1\t1\tC\tu\xff1\n")
    with pytest.raises(InputError, match=r"bad\.tsv:2: invalid UTF-8 \(byte 0xff\)"):
        clicks.read_yandex(bad)


def test_an_empty_log_or_a_model_file_of_bad_bytes_is_an_error(tmp_path: Path) -> None:
    empty = clicks.ClickLog.from_arrays([], [], [])
    with pytest.raises(InputError, match="the click log has no sessions: nothing to fit"):
        clicks.PBM().fit(empty)                                    # a 0-pair model with exit 0 before
    path = tmp_path / "m.json"
    path.write_bytes(b'{"format": "rankwise-click-model",\n "model": "pb\xffm"}')
    with pytest.raises(InputError, match=r"m\.json:2: invalid UTF-8 \(byte 0xff\)"):
        clicks.load_model(path)


def test_simulated_sessions_refuse_a_document_twice_and_keep_reader_notes(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("q Q0 a 1 2.0 r\nq Q0 a 2 1.0 r\n")
    with pytest.raises(InputError, match="document 'a' is listed twice for query 'q'"):
        clicks.sessions_from_run(str(run))
    run.write_text("qid Q0 docno rank score tag\nq Q0 a 1 2.0 r\n")
    assert any("not plain numbers" in note for note in clicks.sessions_from_run(str(run)).notes)


def test_cli_split_holds_out_whole_queries_reproducibly(tmp_path: Path, rankwise_cli, capsys) -> None:
    log = DATA / "clara2_head.tsv"
    out = _cli("split", log, "--train", tmp_path / "train.parquet", "--held-out", tmp_path / "test.parquet",
               "--by", "query", "--seed", "3")
    assert out.exit_code == 0, out.output
    train, test = clicks.read_log(tmp_path / "train.parquet"), clicks.read_log(tmp_path / "test.parquet")
    whole = clicks.read_yandex(log)
    expected_train, expected_test = whole.split(0.25, seed=3, by="query")
    assert (train.sessions, test.sessions) == (expected_train.sessions, expected_test.sessions) == (252, 53)
    assert not {train.query_ids[q] for q in train.query} & {test.query_ids[q] for q in test.query}
    assert "305 sessions by query: 252 ->" in out.output
    capsys.readouterr()
    twice = str(tmp_path / "a")
    same = rankwise_cli(["clicks", "split", str(log), "--train", twice, "--held-out", twice])
    assert same == 2 and "--train and --held-out name one file" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


def test_a_stored_log_that_fits_in_memory_is_read_from_disk_once(tmp_path: Path, monkeypatch) -> None:
    from rankwise.clicks import store

    base = _sessions(1_200, seed=53)
    log = clicks.simulate(_dbn(base, gamma=0.8), base, seed=54)
    clicks.save_log(log, tmp_path / "log")
    reads = []
    original = store._read_rows
    monkeypatch.setattr(store, "_read_rows", lambda path, *a: reads.append(path.name) or original(path, *a))
    kept = clicks.open_log(tmp_path / "log")           # 1,200 sessions: kept by size
    streamed = clicks.open_log(tmp_path / "log")
    streamed.keep_in_memory = False
    a = clicks.DBN().fit(kept, iterations=6, tolerance=0, chunk_size=500, workers=1)
    assert reads.count("clicks.i8") == 1                # one pass from disk, five from memory
    reads.clear()
    b = clicks.DBN().fit(streamed, iterations=6, tolerance=0, chunk_size=500, workers=1)
    assert reads.count("clicks.i8") == 6
    assert np.array_equal(a.alpha, b.alpha) and a.history[-1]["log_likelihood"] == b.history[-1]["log_likelihood"]
    reads.clear()   # PBM and UBM keep each chunk's distinct (pair, cell, click) counts: one read even streamed
    clicks.PBM().fit(streamed, iterations=6, tolerance=0, chunk_size=500, workers=1)
    assert reads.count("clicks.i8") == 1
    assert kept.nbytes == 1_200 * (4 + 5 * RANKS)


@pytest.mark.parametrize("model", ["pbm", "ubm"])
def test_the_compressed_e_step_equals_the_cell_by_cell_one(model: str, monkeypatch) -> None:
    """PBM and UBM fit on distinct (pair, cell, click) counts after the first pass; the
    parameters equal those of the cell-by-cell E-step to rounding."""
    base = _sessions(800, seed=61)
    log = clicks.simulate(_dbn(base, gamma=0.8), base, seed=62)
    kind = {"pbm": clicks.PBM, "ubm": clicks.UBM}[model]
    compressed = kind().fit(log, iterations=8, tolerance=0, chunk_size=300, workers=1)
    monkeypatch.setattr(kind, "compressible", False)
    cell_by_cell = kind().fit(log, iterations=8, tolerance=0, chunk_size=300, workers=1)
    np.testing.assert_allclose(compressed.alpha, cell_by_cell.alpha, rtol=1e-10, atol=1e-12)
    for name in kind.fields:
        np.testing.assert_allclose(getattr(compressed, name), getattr(cell_by_cell, name), rtol=1e-10, atol=1e-12)
    assert compressed.history[-1]["log_likelihood"] == pytest.approx(cell_by_cell.history[-1]["log_likelihood"],
                                                                     rel=1e-12)
