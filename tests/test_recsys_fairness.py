"""Fairness of recommendation lists: popularity parity (PopRSP, PopREO) against the formulas
of Elliot's implementation, group exposure against FairRankTune, AWRF by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankwise.errors import InputError
from rankwise.recsys import beyond_accuracy
from rankwise.recsys.fairness import group_exposure
from rankwise.recsys.inputs import RecsysData


def _random_case(seed: int, users: int = 40, items: int = 30, k: int = 6) -> dict:
    rng = np.random.default_rng(seed)
    ids = [f"i{j}" for j in range(items)]
    weights = rng.pareto(1.5, items) + 0.1
    p = weights / weights.sum()
    train = {f"u{u}": list(rng.choice(ids, size=rng.integers(1, 8), p=p)) for u in range(users)}
    test = {f"u{u}": list(rng.choice(ids, size=rng.integers(1, 4), replace=False)) for u in range(users)}
    lists = {f"u{u}": list(rng.choice(ids, size=k, replace=False, p=p)) for u in range(users)}
    groups = {i: ("A" if rng.random() < 0.4 else "B") for i in ids}
    return {"lists": lists, "train": train, "test": test, "groups": groups, "catalogue": ids, "k": k}


def _elliot_short_head(train: dict, catalogue: list, share: float) -> set:
    """Elliot's ``get_short_head``: items by distinct training users, most first, until their
    users reach ``share`` of the (user, item) pairs; catalogue order breaks ties."""
    users = {i: sum(i in set(seen) for seen in train.values()) for i in catalogue}
    limit = share * sum(users.values())
    head = set()
    for item in sorted(catalogue, key=lambda i: (-users[i], sorted(catalogue).index(i))):
        head.add(item)
        limit -= users[item]
        if limit <= 0:
            break
    return head


def _elliot_rsp_reo(case: dict, share: float = 0.8) -> tuple[float, float]:
    """PopRSP and PopREO as Elliot's metrics compute them, user by user with sets."""
    head = _elliot_short_head(case["train"], case["catalogue"], share)
    tail = set(case["catalogue"]) - head
    num, den, hit, rel = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
    for user, ranked in case["lists"].items():
        top, seen, liked = set(ranked[:case["k"]]), set(case["train"].get(user, [])), set(case["test"][user])
        for g, group in enumerate((head, tail)):
            num[g] += len(top & group)
            den[g] += len(group - seen)
            hit[g] += len(top & group & liked)
            rel[g] += len(group & liked)
    rsp, reo = num / den, hit / rel
    return float(np.std(rsp) / np.mean(rsp)), float(np.std(reo) / np.mean(reo))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_popularity_parity_equals_elliots_formulas(seed: int) -> None:
    case = _random_case(seed)
    k = case["k"]
    out = beyond_accuracy(case["lists"], [f"pop_rsp@{k}", f"pop_reo@{k}", f"pop_rsp(head_share=0.5)@{k}"],
                          train=case["train"], test=case["test"], catalogue=case["catalogue"])
    values = out.table.set_index("metric")["value"]
    rsp, reo = _elliot_rsp_reo(case)
    assert values[f"pop_rsp@{k}"] == pytest.approx(rsp, rel=1e-12)
    assert values[f"pop_reo@{k}"] == pytest.approx(reo, rel=1e-12)
    assert values[f"pop_rsp(head_share=0.5)@{k}"] == pytest.approx(_elliot_rsp_reo(case, 0.5)[0], rel=1e-12)


@pytest.mark.parametrize(("attention", "patience"), [("geometric", 0.5), ("geometric", 0.8), ("log", 0.5)])
def test_exposure_ratio_equals_fairranktune(attention: str, patience: float) -> None:
    """FairRankTune's ``AWRF`` (geometric attention, p = 1 - patience) and ``EXP`` (1/log2(r+1)),
    both with the ``MinMaxRatio`` combination: group attention per item, least over most."""
    metrics = pytest.importorskip("FairRankTune.Metrics")
    case = _random_case(7, users=25)
    k = case["k"]
    frame = pd.DataFrame({u: ranked[:k] for u, ranked in case["lists"].items()})
    if attention == "geometric":
        expected, _ = metrics.AWRF(frame, case["groups"], 1 - patience, "MinMaxRatio")
    else:
        expected, _ = metrics.EXP(frame, case["groups"], "MinMaxRatio")
    out = beyond_accuracy(case["lists"], [f"exposure_ratio(attention={attention}, patience={patience})@{k}"],
                          catalogue=case["catalogue"], groups=case["groups"])
    assert out.table["value"].iloc[0] == pytest.approx(float(expected), rel=1e-12)


def test_awrf_by_hand_and_its_bounds() -> None:
    # one list [x, y], attention (1, 1/2): d = (2/3, 1/3); equal target t = (1/2, 1/2); m = (7/12, 5/12)
    # KL(d||m) = 2/3 log2(8/7) + 1/3 log2(4/5) = 0.021121; KL(t||m) = 1/2 log2(6/7) + 1/2 log2(6/5) = 0.020321
    data = {"u": ["x", "y"]}
    groups = {"x": "A", "y": "B", "z": "B"}
    out = beyond_accuracy(data, ["awrf(target=equal)@2", "awrf(attention=uniform, target=equal)@2"],
                          catalogue=["x", "y", "z"], groups=groups)
    values = out.table["value"].tolist()
    assert values[0] == pytest.approx(1 - (0.0211206 + 0.0203213) / 2, abs=1e-6)
    assert values[1] == pytest.approx(1.0)          # uniform attention on one A and one B: exactly the target
    # relevant target: the user's held-out items are both B; the list gives B a third of its attention
    relevant = beyond_accuracy(data, ["awrf(target=relevant)@2"], catalogue=["x", "y", "z"], groups=groups,
                               test={"u": ["y", "z"]})
    d, t = np.array([2 / 3, 1 / 3]), np.array([0.0, 1.0])
    m = (d + t) / 2
    jsd = (np.sum(d * np.log2(d / m)) + np.log2(1 / m[1])) / 2
    assert relevant.table["value"].iloc[0] == pytest.approx(1 - jsd, rel=1e-12)


def test_group_exposure_table() -> None:
    data = RecsysData.build({"u1": ["x", "y"], "u2": ["y", "x"]}, catalogue=["x", "y", "z", "w"],
                            groups={"x": "A", "y": "B", "z": "B", "w": "B"})
    table = group_exposure(data, 2, attention="uniform").set_index("group")
    # every list shows one A and one B: exposure shares 1/2 each; catalogue 1/4 and 3/4
    assert table["exposure_share"].tolist() == [0.5, 0.5]
    assert table["exposure_ratio"].round(12).tolist() == [2.0, round(2 / 3, 12)]


def test_fairness_metrics_name_what_they_miss() -> None:
    with pytest.raises(InputError, match="groups") as error:
        beyond_accuracy({"u": ["x"]}, ["awrf@1"], train={"u": ["x"]})
    assert error.value.field == "groups"
    with pytest.raises(InputError, match="held-out interactions") as error:
        beyond_accuracy({"u": ["x"]}, ["pop_reo@1"], train={"u": ["x"]})
    assert error.value.field == "test"


def _brute_expected_exposure(draws: list[list[str]], relevant: set, catalogue: list, k: int,
                             patience: float) -> tuple[float, float, float, float]:
    """EE-L, EE-D, EE-R and ||e*||^2 of one user from the definitions: the policy's exposure averaged over
    its draws, the ideal policy's over every ranking it can draw (relevant items in any order on
    top, the others in any order below), exposure patience^(r-1) within the top k."""
    import itertools

    def exposure_of(rankings: list) -> dict:
        out = dict.fromkeys(catalogue, 0.0)
        for ranking in rankings:
            for r, item in enumerate(ranking[:k]):
                out[item] += patience ** r / len(rankings)
        return out

    e = exposure_of(draws)
    others = [i for i in catalogue if i not in relevant]
    ideal = [list(a) + list(b) for a in itertools.permutations(sorted(relevant))
             for b in itertools.permutations(others)]
    star = exposure_of(ideal)
    loss = sum((e[i] - star[i]) ** 2 for i in catalogue)
    return (loss, sum(v * v for v in e.values()), 2 * sum(e[i] * star[i] for i in catalogue),
            sum(v * v for v in star.values()))


@pytest.mark.parametrize("k", [2, 3, 6])
def test_expected_exposure_equals_its_definition_with_stochastic_rankings(k: int) -> None:
    """Two users; u1's policy drew three rankings (a sample column), u2's one. Every value
    equals the brute-force computation over the ideal policy's every ranking."""
    catalogue = ["a", "b", "c", "d", "e", "f"]
    draws = {"u1": [["a", "b", "c"], ["b", "a", "d"], ["c", "e", "a"]], "u2": [["f", "e", "d"]]}
    relevant = {"u1": {"a", "c"}, "u2": {"d", "e", "f"}}
    rows = pd.DataFrame([{"user": u, "item": i, "sample": s, "rank": r + 1}
                         for u, rankings in draws.items() for s, ranking in enumerate(rankings)
                         for r, i in enumerate(ranking)])
    out = beyond_accuracy(rows, [f"ee_loss@{k}", f"ee_disparity@{k}", f"ee_relevance(patience=0.8)@{k}"],
                          test={u: sorted(v) for u, v in relevant.items()}, catalogue=catalogue)
    values = out.table.set_index("metric")["value"]
    brute = {u: _brute_expected_exposure(draws[u], relevant[u], catalogue, k, 0.5) for u in draws}
    brute_r = {u: _brute_expected_exposure(draws[u], relevant[u], catalogue, k, 0.8)[2] for u in draws}
    assert values[f"ee_loss@{k}"] == pytest.approx(np.mean([b[0] for b in brute.values()]), rel=1e-12)
    assert values[f"ee_disparity@{k}"] == pytest.approx(np.mean([b[1] for b in brute.values()]), rel=1e-12)
    assert values[f"ee_relevance(patience=0.8)@{k}"] == pytest.approx(np.mean(list(brute_r.values())), rel=1e-12)
    # EE-L = EE-D - EE-R + ||e*||^2, user by user
    per_user = out.per_user.drop_duplicates("user").set_index("user")
    for u, (loss, disparity, relevance, ideal) in brute.items():
        assert per_user.loc[u, f"ee_loss@{k}"] == pytest.approx(loss, rel=1e-12)
        assert loss == pytest.approx(disparity - relevance + ideal, rel=1e-12)


def test_stochastic_draws_keep_every_other_metric_per_list() -> None:
    """With a sample column each draw is a list: the history-based metrics see the user's
    training items in every draw."""
    rows = pd.DataFrame({"user": ["u", "u", "u", "u"], "item": ["x", "y", "y", "x"], "sample": [0, 0, 1, 1],
                         "rank": [1, 2, 1, 2]})
    data = RecsysData.build(rows, train={"u": ["x"]}, test={"u": ["y"]})
    assert data.n_lists == 2 and data.draws.tolist() == [0, 1]
    assert [a.tolist() for a in data.relevant] == [[0, 1], [1, 1]]   # (list, item): y relevant in both draws
    assert data.train_by_list()[0].tolist() == [0, 1]          # x is history in both draws


RECSYS = Path(__file__).parent / "data" / "recsys"


def test_accuracy_metrics_beside_beyond_accuracy_equal_evaluate() -> None:
    """ndcg@5 and recall@5 of a recommendation file against held-out interactions equal
    rankwise.evaluate on the same lists and judgments written as dicts."""
    import rankwise

    out = beyond_accuracy(str(RECSYS / "reco.csv"), ["ndcg@5", "recall@5", "novelty@5"],
                          train=str(RECSYS / "train.csv"), test=str(RECSYS / "test.csv"))
    reco, held = pd.read_csv(RECSYS / "reco.csv"), pd.read_csv(RECSYS / "test.csv")
    run = {str(u): {str(i): s for i, s in zip(g["itemID"], g["prediction"], strict=True)}
           for u, g in reco.groupby("userID")}
    qrels = {str(u): {str(i): 1 for i in g["itemID"]} for u, g in held.groupby("userID")}
    expected = rankwise.evaluate(qrels, run, ["ndcg@5", "recall@5"]).summary
    values = out.table.set_index("metric")["value"]
    assert values["ndcg@5"] == pytest.approx(float(expected["ndcg@5"].iloc[0]), rel=1e-12)
    assert values["recall@5"] == pytest.approx(float(expected["recall@5"].iloc[0]), rel=1e-12)
    assert out.table.set_index("metric").loc["ndcg@5", "signature"].startswith("nDCG@5|")


def test_runs_are_tested_per_user_against_the_baseline_and_corrected() -> None:
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    runs = {"reco": str(RECSYS / "reco.csv"), "random": str(RECSYS / "random.csv")}
    metrics = ["ndcg@5", "ild(similarity=cooccurrence)@5", "coverage@5"]
    out = beyond_accuracy(runs, metrics, train=str(RECSYS / "train.csv"), test=str(RECSYS / "test.csv"),
                          baseline="random")
    per_user = out.per_user.pivot(index="user", columns="run")
    tested = out.table[out.table["p_value"].notna()].set_index("metric")
    assert set(tested.index) == {"ndcg@5", "ild(similarity=cooccurrence)@5"}   # coverage has no per-user values
    assert (tested["run"] == "reco").all() and (tested["baseline"] == "random").all()
    for metric in tested.index:
        expected = stats.ttest_rel(per_user[(metric, "reco")], per_user[(metric, "random")]).pvalue
        assert tested.loc[metric, "p_value"] == pytest.approx(expected, rel=1e-12)
    holm = multipletests(tested["p_value"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(tested["p_adjusted"].to_numpy(), holm, rtol=1e-12)
    with pytest.raises(Exception, match="baseline 'nope' is not one of the runs"):
        beyond_accuracy(runs, metrics, train=str(RECSYS / "train.csv"), baseline="nope")


def test_user_group_rows_are_the_means_of_their_users() -> None:
    groups = {u: "odd" if u % 2 else "even" for u in range(30)}
    out = beyond_accuracy(str(RECSYS / "reco.csv"), ["arp@5", "coverage@5"], train=str(RECSYS / "train.csv"),
                          user_groups=groups)
    rows = out.table.set_index(["metric", "user_group"])
    per_user = out.per_user.assign(group=out.per_user["user"].map(groups))
    for group in ("odd", "even"):
        assert rows.loc[("arp@5", group), "value"] == pytest.approx(
            per_user.loc[per_user["group"] == group, "arp@5"].mean(), rel=1e-12)
        assert rows.loc[("arp@5", group), "users"] == 15
    assert ("coverage@5", "odd") not in rows.index   # a metric of the whole run has no per-group value


def test_cli_beyond_with_accuracy_groups_plot_and_the_old_test_flag(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    groups = tmp_path / "groups.csv"
    pd.DataFrame({"userID": range(30), "segment": ["odd" if u % 2 else "even" for u in range(30)]}).to_csv(
        groups, index=False)
    plot = tmp_path / "trade.png"
    out = CliRunner().invoke(app, ["beyond", f"reco={RECSYS / 'reco.csv'}", f"random={RECSYS / 'random.csv'}",
                                   "--train", str(RECSYS / "train.csv"), "--held-out", str(RECSYS / "test.csv"),
                                   "-m", "ndcg@5", "-m", "arp@5", "--user-groups", str(groups), "--plot", str(plot),
                                   "-f", "text"])
    assert out.exit_code == 0, out.output
    assert "random · odd" in out.stdout and "ndcg@5 ↑" in out.stdout and plot.stat().st_size > 10_000
    old = CliRunner().invoke(app, ["beyond", str(RECSYS / "reco.csv"), "--train", str(RECSYS / "train.csv"),
                                   "--test", str(RECSYS / "test.csv"), "-m", "recall@5", "-f", "csv"])
    assert old.exit_code == 0 and "--test FILE is deprecated here: write --held-out" in old.output
    bad = CliRunner().invoke(app, ["beyond", str(RECSYS / "reco.csv"), "-m", "ndcg@5", "--plot", str(plot)])
    assert bad.exit_code == 2 and "held-out" in bad.output


def test_beyond_takes_compares_statistics_options(tmp_path: Path) -> None:
    """``beyond`` shares compare's statistics options: --test names a paired test, and the
    resampled ones read --resamples and --seed."""
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    args = ["beyond", f"reco={RECSYS / 'reco.csv'}", f"random={RECSYS / 'random.csv'}", "--train",
            str(RECSYS / "train.csv"), "--held-out", str(RECSYS / "test.csv"), "-m", "ndcg@5", "-f", "json"]
    out = CliRunner().invoke(app, args + ["--test", "randomization", "--resamples", "200", "--seed", "3"])
    assert out.exit_code == 0, out.output
    runs = {"reco": str(RECSYS / "reco.csv"), "random": str(RECSYS / "random.csv")}
    expected = beyond_accuracy(runs, ["ndcg@5"], train=str(RECSYS / "train.csv"), test=str(RECSYS / "test.csv"),
                               test_name="randomization", permutations=200, seed=3)
    assert f'"p_value": {float(expected.table["p_value"].iloc[1])!r}' in out.stdout
