"""The empirical prior's structure (``prior_structure``: placement by default, or flat) and the
ranking rules (``relevance(by=...)``): the placement a fit reads in its first pass, by hand; what
turns the structure off; a log whose placement says nothing gets the flat prior back; a log
whose engine ranks by attractiveness is fitted better held out; a saved model scores a new
log's unseen pairs from where that log placed them; every ranking rule's scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise import clicks
from rankwise.errors import RankwiseError

LOG = Path(__file__).parent / "data" / "clicks" / "clara2_head.tsv"


def test_the_first_pass_reads_each_pairs_mean_placement() -> None:
    # a at ranks 1, 2, 1; b at 2, 1; c at 2: mean log2(rank + 1) = (1 + log2 3 + 1) / 3,
    # (log2 3 + 1) / 2 and log2 3
    log = clicks.ClickLog.from_arrays(["q"] * 3, [["a", "b"], ["b", "a"], ["a", "c"]], [[1, 0], [0, 1], [0, 0]])
    model = clicks.PBM().fit(log, iterations=3)
    l3 = np.log2(3.0)
    expected = {"a": (2 + l3) / 3, "b": (l3 + 1) / 2, "c": l3}
    got = dict(zip(model.features.index.get_level_values(1), model.features.values[:, 0], strict=True))
    assert got == pytest.approx(expected, rel=1e-15)
    assert model.structured_by == "placement" and model.featured_fields == ("alpha",)
    assert model.feature_fit["mean"][0] == pytest.approx(np.mean(list(expected.values())), rel=1e-15)
    assert model.feature_fit["structure"] == "placement"


def test_what_turns_the_structure_off() -> None:
    log = clicks.read_log(LOG)
    assert clicks.PBM(prior=(1, 2)).fit(log).feature_fit is None              # a fixed prior is fixed
    assert clicks.PBM(prior_structure="flat").fit(log).feature_fit is None
    own = pd.DataFrame({"query": np.asarray(log.query_ids, dtype=object)[log.pair_query],
                        "doc": np.asarray(log.doc_ids, dtype=object)[log.pair_doc], "x": 1.0})
    mine = clicks.DBN().use_features(own).fit(log)                            # one's own features win
    assert mine.structured_by is None and mine.feature_fit["names"] == ["x"] and "sigma" in mine.feature_fit
    assert clicks.GlobalCTR().fit(log).feature_fit is None                     # no per-pair prior
    with pytest.raises(RankwiseError, match="prior_structure|placement"):
        clicks.PBM(prior_structure="ranked")


def _engine_log(sessions: int, seed: int, noise: float) -> tuple[clicks.ClickLog, np.ndarray]:
    """PBM sessions: 300 queries x 6 documents, attractiveness Beta(1, 4) per pair, the engine
    showing 4 in the order of attractiveness plus Gaussian ``noise`` (a large noise: an order
    that says nothing), examination 1, 0.7, 0.5, 0.35."""
    rng = np.random.default_rng(seed)
    alpha = rng.beta(1.0, 4.0, (300, 6))
    gamma = np.array([1.0, 0.7, 0.5, 0.35])
    query = rng.integers(0, 300, sessions)
    order = np.argsort(-(alpha[query] + rng.normal(0, noise, (sessions, 6))), axis=1)[:, :4]
    shown = alpha[query[:, None], order]
    click = (rng.random((sessions, 4)) < gamma) & (rng.random((sessions, 4)) < shown)
    docs = [[f"q{q}d{d}" for d in row] for q, row in zip(query, order, strict=True)]
    return clicks.ClickLog.from_arrays([f"q{q}" for q in query], docs, click.astype(int).tolist()), alpha


def test_an_order_that_says_nothing_gets_the_flat_prior_back() -> None:
    log, _ = _engine_log(6_000, seed=1, noise=100.0)
    placed, flat = clicks.PBM().fit(log), clicks.PBM(prior_structure="flat").fit(log)
    assert abs(placed.feature_fit["weights"][0]) < 0.15          # per standard deviation of placement
    assert np.corrcoef(placed.alpha, flat.alpha)[0, 1] > 0.99


def test_an_engine_that_ranks_by_attractiveness_is_fitted_better_held_out() -> None:
    log, _ = _engine_log(6_000, seed=2, noise=0.1)   # five sessions a query: most pairs seen a few times
    train, test = log.split(0.25, seed=3)
    placed, flat = clicks.PBM().fit(train), clicks.PBM(prior_structure="flat").fit(train)
    assert placed.feature_fit["weights"][0] < 0                   # a lower place, a lower attractiveness
    assert placed.held_out_log_likelihood(test) > flat.held_out_log_likelihood(test) + 0.005


def test_a_saved_model_scores_a_new_logs_unseen_pairs_from_their_placement(tmp_path: Path) -> None:
    log, _ = _engine_log(3_000, seed=4, noise=0.1)
    model = clicks.PBM().fit(log)
    clicks.save_model(model, tmp_path / "m.json")
    loaded = clicks.load_model(tmp_path / "m.json")
    assert loaded.structured_by == "placement" and loaded.features is None
    # an unseen pair placed first and one placed third: sigmoid(w (log2(r + 1) - mean) / scale + b)
    other = clicks.ClickLog.from_arrays(["new"], [["top", "middle", "low"]], [[0, 0, 0]])
    scores = dict(zip(loaded.relevance("r", other).doc.to_pylist(), loaded.relevance("r", other).score.tolist(),
                      strict=True))
    fit = loaded.feature_fit
    (w, b), mean, scale = fit["weights"], fit["mean"][0], fit["scale"][0]
    for doc, rank in (("top", 1), ("low", 3)):
        assert scores[doc] == pytest.approx(1 / (1 + np.exp(-(w * (np.log2(rank + 1) - mean) / scale + b))),
                                            rel=1e-12)
    assert scores["top"] > scores["middle"] > scores["low"]
    assert loaded.relevance("r", log).score.tolist() == pytest.approx(model.relevance("r", log).score.tolist(),
                                                                       rel=1e-15)


def test_every_ranking_rule_scores_what_it_names(rankwise_cli, tmp_path: Path) -> None:
    log = clicks.read_log(LOG)
    dbn = clicks.DBN().fit(log)
    by = {rule: np.asarray(dbn.relevance("r", by=rule).score) for rule in ("relevance", "attractiveness",
                                                                            "satisfaction")}
    assert by["attractiveness"].tolist() == dbn.alpha.tolist() and by["satisfaction"].tolist() == dbn.sigma.tolist()
    assert by["relevance"].tolist() == pytest.approx((dbn.alpha * dbn.sigma).tolist(), rel=1e-15)
    # a pair never seen scores its prior's value under each rule: satisfaction's Beta mean
    other = clicks.ClickLog.from_arrays(["unseen query"], [["x"]], [[0]])
    a, b = dbn.hyper["sigma"]
    assert dbn.relevance("r", other, by="satisfaction").score.tolist() == pytest.approx([a / (a + b)], rel=1e-15)
    ccm = clicks.CCM().fit(log)   # CCM's relevance is its R, fitted as attractiveness
    assert ccm.relevance("r").score.tolist() == ccm.relevance("r", by="attractiveness").score.tolist()
    with pytest.raises(RankwiseError, match="pbm model has no satisfaction"):
        clicks.PBM().fit(log).relevance("r", by="satisfaction")
    clicks.save_model(dbn, tmp_path / "m.json")
    run = tmp_path / "run.trec"
    assert rankwise_cli(["clicks", "rank", "--model", str(tmp_path / "m.json"), "--by", "satisfaction", "-o",
                         str(run)]) == 0
    assert sorted(float(line.split()[4]) for line in run.read_text().splitlines()) == \
        pytest.approx(sorted(dbn.sigma.tolist()), rel=1e-12)
    assert rankwise_cli(["clicks", "rank", "--model", str(tmp_path / "m.json"), "--by", "novelty", "-o",
                         str(tmp_path / "no.trec")]) == 2
    assert not (tmp_path / "no.trec").exists()
