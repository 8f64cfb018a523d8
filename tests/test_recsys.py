"""Beyond-accuracy recommender metrics (``rankwise.recsys``): equal to Microsoft Recommenders'
``python_evaluation`` (golden values computed by Recommenders 1.2.1, tests/data/recsys), to
formulas written out here, and to hand-computed values; bad input is refused by name."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.errors import InputError, ParameterError
from rankwise.recsys import BEYOND_ACCURACY, beyond_accuracy
from rankwise.recsys.metrics import parse

DATA = Path(__file__).parent / "data" / "recsys"
GOLDEN = json.loads((DATA / "recommenders_golden.json").read_text())
TRAIN, RECO = DATA / "train.csv", DATA / "reco.csv"


def _features() -> pd.DataFrame:
    return pd.read_csv(DATA / "features.csv")


def value(metric: str, **inputs: object) -> float:
    out = beyond_accuracy(str(RECO), [metric], train=str(TRAIN), **inputs)   # type: ignore[arg-type]
    return float(out.table["value"].iloc[0])


@pytest.mark.parametrize(("metric", "golden", "inputs"), [
    ("coverage@5", "catalog_coverage", {}),
    ("distributional_coverage@5", "distributional_coverage", {}),
    ("novelty@5", "novelty", {}),
    ("ild(similarity=cooccurrence)@5", "diversity_cooccurrence", {}),
    ("ild(similarity=cosine)@5", "diversity_feature_vector", {"features": "features"}),
    ("serendipity(similarity=cooccurrence)@5", "serendipity_cooccurrence", {}),
    ("serendipity(similarity=cosine)@5", "serendipity_feature_vector", {"features": "features"}),
])
def test_equal_to_microsoft_recommenders(metric: str, golden: str, inputs: dict) -> None:
    given = {"features": _features()} if inputs else {}
    assert value(metric, **given) == pytest.approx(GOLDEN[golden], rel=1e-12)


EVIDENTLY = json.loads((DATA / "evidently_golden.json").read_text())


def test_equal_to_evidently_where_the_definitions_meet() -> None:
    """Evidently 0.7.23's values on the same data (make_evidently_golden.py): novelty,
    personalisation, ARP and coverage equal rankwise's (Evidently's novelty as a named
    option); its Gini, diversity and serendipity differ by a stated normalisation (every list
    holds 5 items and every catalogue item is recommended here, so each is a fixed factor)."""
    def ours(metric: str) -> float:
        return value(metric, features=_features())

    assert ours("novelty(frequency=users,average=users,unseen=skip)@5") == pytest.approx(EVIDENTLY["novelty"],
                                                                                          rel=1e-12)
    assert ours("personalisation@5") == pytest.approx(EVIDENTLY["personalisation"], rel=1e-12)
    assert ours("arp@5") == pytest.approx(EVIDENTLY["arp"], rel=1e-12)   # no (user, item) twice: c(i) = n(i)
    assert ours("coverage@5") == pytest.approx(EVIDENTLY["coverage"], rel=1e-12)
    # Gini: Evidently divides by (n - 1) over the recommended items, rankwise (RecBole) by n over the catalogue
    n = 25
    assert ours("gini@5") * n / (n - 1) == pytest.approx(EVIDENTLY["gini"], rel=1e-12)
    # diversity: Evidently sums a list's pairwise cosine distances and divides by its length,
    # rankwise averages them over the pairs: L (L - 1) / 2 / L = 2 for L = 5
    assert ours("ild(similarity=cosine)@5") * 2 == pytest.approx(EVIDENTLY["diversity"], rel=1e-12)
    # serendipity: Evidently's per user 1 - (sum of similarities to the training items) / |train|,
    # rankwise's (Recommenders') 1 - that sum / (|train| x |list|): 1 - 5 (1 - rankwise's)
    assert 1 - 5 * (1 - ours("serendipity(similarity=cosine)@5")) == pytest.approx(EVIDENTLY["serendipity"],
                                                                                  rel=1e-12)


def test_per_user_diversity_equals_recommenders_user_diversity() -> None:
    out = beyond_accuracy(str(RECO), ["ild(similarity=cooccurrence)@5"], train=str(TRAIN))
    ours = out.per_user.sort_values("user")["ild(similarity=cooccurrence)@5"].to_numpy()
    np.testing.assert_allclose(ours, GOLDEN["user_diversity_cooccurrence"], rtol=1e-12)


def test_popularity_metrics_equal_their_formulas() -> None:
    train, reco = pd.read_csv(TRAIN), pd.read_csv(RECO)
    reco = reco.sort_values(["userID", "prediction"], ascending=[True, False])
    counts = train["itemID"].value_counts()
    users = train.groupby("itemID")["userID"].nunique()
    n_users = train["userID"].nunique()
    top3 = reco.groupby("userID").head(3)
    arp = top3.assign(p=top3["itemID"].map(counts).fillna(0)).groupby("userID")["p"].mean().mean()
    epc = top3.assign(e=1 - top3["itemID"].map(users).fillna(0) / n_users).groupby("userID")["e"].mean().mean()
    exposure = top3["itemID"].value_counts().reindex(sorted(set(train["itemID"]) | set(top3["itemID"])),
                                                     fill_value=0).sort_values().to_numpy(float)
    j = np.arange(1, len(exposure) + 1)
    gini = ((2 * j - len(exposure) - 1) * exposure).sum() / (len(exposure) * exposure.sum())
    assert value("arp@3") == pytest.approx(arp, rel=1e-12)
    assert value("epc@3") == pytest.approx(epc, rel=1e-12)
    assert value("gini@3") == pytest.approx(gini, rel=1e-12)
    assert value("unique_items@3") == top3["itemID"].nunique()


def test_personalisation_equals_the_user_by_user_matrix() -> None:
    reco = pd.read_csv(RECO).sort_values(["userID", "prediction"], ascending=[True, False]).groupby("userID").head(4)
    matrix = pd.crosstab(reco["userID"], reco["itemID"]).to_numpy(float)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    cosine = unit @ unit.T
    n = len(matrix)
    expected = 1 - (cosine.sum() - n) / (n * (n - 1))
    assert value("personalisation@4") == pytest.approx(expected, rel=1e-12)


def test_hand_computed_lists_and_inputs_as_people_have_them() -> None:
    # u1 = [a, b], u2 = [b, c] from scores, ranks or ordered lists; train u1: c, u2: a, a
    by_score = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["b", "a", "c", "b"],
                             "score": [0.1, 0.9, 0.2, 0.8]})
    by_rank = pd.DataFrame({"userID": ["u2", "u1", "u2", "u1"], "itemID": ["c", "b", "b", "a"], "rank": [2, 2, 1, 1]})
    lists = {"u1": ["a", "b"], "u2": ["b", "c"]}
    train = pd.DataFrame({"user_id:token": ["u1", "u2", "u2"], "item_id:token": ["c", "a", "a"]})   # RecBole's
    for run in (by_score, by_rank, lists):
        out = beyond_accuracy(run, ["arp@2", "aplt@2", "novelty@2", "coverage@2"], train=train)
        # ARP (2 + 0)/2, (0 + 1)/2 -> 0.75; APLT head {a}: 1/2, 1 -> 0.75;
        # novelty (log2(3/2) + 0 + log2 3 + 0) / 4; coverage: a and c of the catalogue {a, c} (train)
        # are recommended: 2 / 2, b is outside it (warned)
        assert out.table["value"].tolist() == pytest.approx([0.75, 0.75, (math.log2(1.5) + math.log2(3)) / 4, 1.0])
        assert any("1 recommended item(s) are not in the catalogue" in w for w in out.warnings)
        recommenders = beyond_accuracy(run, ["coverage(outside=count)@2"], train=train)   # 3 recommended / 2 trained
        assert recommenders.table["value"].tolist() == [1.5]


def test_calibration_by_hand_and_multi_genre_items() -> None:
    # u: history x, x (A|B), z (B): p = (2 * 1/2, 2 * 1/2 + 1) / 3 = (1/3, 2/3); list x, y (A): q = (3/4, 1/4)
    out = beyond_accuracy({"u": ["x", "y"]}, "calibration(alpha=0)@2", train={"u": ["x", "x", "z"]},
                          groups={"x": "A|B", "y": ["A"], "z": "B"})
    p, q = np.array([1 / 3, 2 / 3]), np.array([3 / 4, 1 / 4])
    assert out.table["value"].iloc[0] == pytest.approx(float((p * np.log(p / q)).sum()), rel=1e-12)


def test_serendipity_takes_relevance_from_held_out_interactions() -> None:
    # u: history a; list b, c; b co-occurs with a for one other user, c never; only c is in the test set
    train = {"u": ["a"], "v": ["a", "b"]}
    out = beyond_accuracy({"u": ["b", "c"]}, "serendipity@2", train=train, test={"u": ["c"]})
    # b: (1 - 1/sqrt(2 * 1)) x 0 = 0; c: (1 - 0) x 1 = 1; mean 0.5
    assert out.table["value"].iloc[0] == pytest.approx(0.5)
    rated = pd.DataFrame({"user": ["u", "u"], "item": ["b", "c"], "rating": [5, 2]})
    kept = beyond_accuracy({"u": ["b", "c"]}, "serendipity@2", train=train, test=rated, rating_threshold=4)
    assert kept.table["value"].iloc[0] == pytest.approx((1 - 1 / math.sqrt(2)) / 2)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 6))
def test_invariants(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    lists = {f"u{u}": list(rng.choice(12, rng.integers(1, 7), replace=False)) for u in range(rng.integers(2, 8))}
    train = {f"u{u}": list(rng.choice(12, rng.integers(1, 5))) for u in range(6)}
    out = beyond_accuracy(lists, [f"gini@{k}", f"aplt@{k}", f"epc@{k}", f"personalisation@{k}",
                                  f"distributional_coverage@{k}"], train=train)
    gini, aplt, epc, personal, entropy = out.table["value"].tolist()
    assert 0 <= gini < 1 and 0 <= aplt <= 1 and 0 <= epc <= 1 and -1e-12 <= personal <= 1 + 1e-12
    assert 0 <= entropy <= math.log2(12) + 1e-12
    # the same items for every user: nothing personal
    same = beyond_accuracy({u: lists["u0"] for u in lists}, f"personalisation@{k}", train=train)
    assert same.table["value"].iloc[0] == pytest.approx(0.0, abs=1e-12)


def test_bad_input_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs item features"):
        beyond_accuracy({"u": ["a", "b"]}, "ild@2", train={"u": ["c"]})
    with pytest.raises(InputError, match="item 'b' has no feature vector"):
        beyond_accuracy({"u": ["a", "b"]}, "ild@2", features={"a": [1.0, 0.0]})
    with pytest.raises(InputError, match="no training interactions"):
        beyond_accuracy({"u": ["a"]}, "novelty@2")
    with pytest.raises(InputError, match="calibration needs item groups"):
        beyond_accuracy({"u": ["a"]}, "calibration@2", train={"u": ["a"]})
    with pytest.raises(ParameterError, match="did you mean 'novelty'"):
        beyond_accuracy({"u": ["a"]}, "novelity@2", train={"u": ["a"]})
    with pytest.raises(ParameterError, match="k must be"):
        parse("arp@0")
    bad = tmp_path / "reco.csv"
    bad.write_text("user,item,score\nu1,a,0.5\n,b,0.3\n")
    with pytest.raises(InputError, match=r"reco.csv:3.*user"):
        beyond_accuracy(str(bad), "coverage@2", catalogue=["a", "b"])
    with pytest.raises(InputError, match="different lengths"):
        beyond_accuracy({"u": ["a"]}, "ild@2", features={"a": [1.0], "b": [1.0, 2.0]})


def test_repeated_rows_are_counted_in_a_warning_and_undefined_users_named() -> None:
    out = beyond_accuracy({"u": ["a", "a", "b"], "v": ["c"]}, ["coverage@3", "ild(similarity=cooccurrence)@3"],
                          train={"u": ["a", "b"], "v": ["c"]})
    assert any("1 repeated (user, item) row(s)" in w for w in out.warnings)
    assert any("undefined for 1 user(s)" in w for w in out.warnings)   # v's list has one item: no pair
    assert out.table["value"].iloc[0] == 1.0   # a, b, c of a, b, c


def test_a_rank_given_twice_in_a_list_is_counted_in_a_warning(tmp_path) -> None:
    # u: a and b both at rank 1, c at 2 (rows out of order); v: x at 1, y at 2; w: p, q at 1
    # under two draws of a stochastic policy, one place each: one tie in u alone
    reco = tmp_path / "reco.csv"
    reco.write_text("user,item,rank\nu,c,2\nv,x,1\nu,a,1\nv,y,2\nu,b,1\n")
    out = beyond_accuracy(str(reco), ["coverage@3"], catalogue=["a", "b", "c", "x", "y"])
    assert [w for w in out.warnings if "repeat a rank" in w] == [
        "run: 1 recommendation(s) repeat a rank their list already has: tied items keep the file's order"]
    assert out.table["value"].iloc[0] == 1.0
    draws = tmp_path / "draws.csv"
    draws.write_text("user,item,rank,draw\nw,p,1,0\nw,q,1,1\n")
    assert not [w for w in beyond_accuracy(str(draws), ["coverage@1"], catalogue=["p", "q"]).warnings
                if "repeat a rank" in w]
    scored = tmp_path / "scored.csv"   # equal scores are ties of the model, not a malformed list
    scored.write_text("user,item,score\nu,a,0.5\nu,b,0.5\n")
    assert not [w for w in beyond_accuracy(str(scored), ["coverage@2"], catalogue=["a", "b"]).warnings
                if "repeat a rank" in w]


def test_every_metric_is_declared_with_its_reference() -> None:
    for member in BEYOND_ACCURACY.values():
        assert member.reference and member.params[0].name == "k" and member.params[0].cutoff


def test_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    runner = CliRunner()
    args = ["beyond", f"popular={RECO}", "-m", "coverage@5", "-m", "novelty@5", "-m", "ild(similarity=cosine)@5",
            "--train", str(TRAIN), "--features", str(DATA / "features.csv")]
    table = runner.invoke(app, [*args, "-f", "text"])
    assert table.exit_code == 0, table.output
    assert "coverage@5 ↑" in table.output and "popular" in table.output
    assert f"{GOLDEN['novelty']:.4f}" in table.output
    written = tmp_path / "out.json"
    assert runner.invoke(app, [*args, "-f", "json", "-o", str(written)]).exit_code == 0
    rows = json.loads(written.read_text())["rows"]
    assert rows[2]["value"] == pytest.approx(GOLDEN["diversity_feature_vector"], rel=1e-12)
    per_user = runner.invoke(app, [*args, "-f", "csv", "--per-user"])
    assert per_user.output.splitlines()[0] == "run,user,novelty@5,ild(similarity=cosine)@5"
    missing = runner.invoke(app, ["beyond", str(RECO), "-m", "ild@5", "--train", str(TRAIN)])
    assert missing.exit_code != 0 and "needs item features" in missing.output


@pytest.mark.parametrize("similarity", ["cooccurrence", "cosine", "jaccard"])
def test_serendipity_and_ild_in_pieces_equal_one_piece(monkeypatch: pytest.MonkeyPatch, similarity: str) -> None:
    """Serendipity compares items with histories CHUNK_PAIRS pairs at a time, and the
    co-occurrence similarity comes from a dense table below DENSE_PAIRS: chunks of 7 pairs and
    the sparse lookup give the same values (to 1e-12) as one chunk and the dense table."""
    from rankwise.recsys import metrics

    rng = np.random.default_rng(3)
    users, items = 60, 25
    train = pd.DataFrame({"user": rng.integers(0, users, 400), "item": rng.integers(0, items, 400)})
    reco = pd.DataFrame({"user": np.repeat(np.arange(users), 6), "item": rng.integers(0, items, users * 6),
                         "rank": np.tile(np.arange(1, 7), users)}).drop_duplicates(["user", "item"])
    features = pd.DataFrame(rng.integers(0, 2, (items, 5)).astype(float)).assign(item=np.arange(items))
    names = [f"serendipity(similarity={similarity})@6", f"ild(similarity={similarity})@6"]
    whole = beyond_accuracy(reco, names, train=train, features=features).table["value"].to_numpy()
    monkeypatch.setattr(metrics, "CHUNK_PAIRS", 7)
    monkeypatch.setattr(metrics, "DENSE_PAIRS", 1)
    pieces = beyond_accuracy(reco, names, train=train, features=features).table["value"].to_numpy()
    np.testing.assert_allclose(pieces, whole, rtol=1e-12)
    assert np.isfinite(whole).all()


def test_the_statistics_settings_are_refused_out_of_range_with_one_run() -> None:
    # one run compares nothing, but alpha 2 or -5 resamples are still no settings (the library
    # checks them, not only the command line)
    from rankwise.errors import OptionError

    with pytest.raises(OptionError, match="alpha must be between 0 and 1"):
        beyond_accuracy({"u": ["a"]}, "coverage@1", catalogue=["a"], alpha=2)
    with pytest.raises(OptionError, match="resamples must be a whole number of at least 0"):
        beyond_accuracy({"u": ["a"]}, "coverage@1", catalogue=["a"], permutations=-5)
