"""Off-policy estimators: OBP's formulas on hand-computed fixtures, unbiasedness and interval
coverage on simulated randomised logs, position-based IPS under a known PBM, slate estimators."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.counterfactual.estimators import (
    RoundTerms,
    estimate,
    estimate_all,
    from_action_dist,
    round_terms,
)
from rankwise.counterfactual.ranking import (
    cascade_propensities,
    pbm_ips,
    position_propensities,
    slate_estimate,
)
from rankwise.errors import InputError, ParameterError

# Four rounds, two actions, one position (OBP's array shapes), fixture by hand:
#   logged action a = 0, 1, 1, 0;  reward r = 1, 0, 1, 0;  logging propensity pi_b = 0.5, 0.25, 0.25, 0.5
#   target action_dist pi_e(. | x) = (0.2, 0.8), (0.2, 0.8), (0.6, 0.4), (1.0, 0.0)
#   -> pi_e(a_i) = 0.2, 0.8, 0.4, 1.0 and w = 0.4, 3.2, 1.6, 2.0
#   reward model q(x, .) = (0.5, 0.1), (0.5, 0.1), (0.2, 0.6), (0.3, 0.3)
#   -> q_logged = 0.5, 0.1, 0.6, 0.3;  q_target = 0.18, 0.18, 0.36, 0.3
ACTION = [0, 1, 1, 0]
REWARD = np.array([1.0, 0.0, 1.0, 0.0])
PSCORE = np.array([0.5, 0.25, 0.25, 0.5])
DIST = np.array([[0.2, 0.8], [0.2, 0.8], [0.6, 0.4], [1.0, 0.0]])[:, :, None]
Q = np.array([[0.5, 0.1], [0.5, 0.1], [0.2, 0.6], [0.3, 0.3]])[:, :, None]


def _fixture() -> dict:
    return from_action_dist(ACTION, DIST, estimated_rewards=Q)


def test_estimators_equal_obp_formulas_by_hand() -> None:
    f = _fixture()
    assert f["target"].tolist() == [0.2, 0.8, 0.4, 1.0]
    assert np.allclose(f["q_target"], [0.18, 0.18, 0.36, 0.3])

    def value(name, clip=np.inf):
        return round_terms(name, REWARD, PSCORE, f["target"], f["q_logged"], f["q_target"], clip).value()
    # IPS: (0.4 x 1 + 3.2 x 0 + 1.6 x 1 + 2 x 0) / 4 = 0.5
    assert value("ips") == pytest.approx(0.5)
    # IPS clipped at 1.5: (0.4 + 1.5) / 4 = 0.475
    assert value("ips", clip=1.5) == pytest.approx(0.475)
    # SNIPS: (0.4 + 1.6) / (0.4 + 3.2 + 1.6 + 2.0) = 2 / 7.2
    assert value("snips") == pytest.approx(2 / 7.2)
    # DM: (0.18 + 0.18 + 0.36 + 0.3) / 4 = 0.255
    assert value("dm") == pytest.approx(0.255)
    # DR: residuals r - q_logged = 0.5, -0.1, 0.4, -0.3; w x residual = 0.2, -0.32, 0.64, -0.6 (sum -0.08)
    #     0.255 + (-0.08) / 4 = 0.235
    assert value("dr") == pytest.approx(0.235)
    # DR clipped at 1.5: 0.2 - 0.15 + 0.6 - 0.45 = 0.2 -> 0.255 + 0.05 = 0.305
    assert value("dr", clip=1.5) == pytest.approx(0.305)
    # SNDR: 0.255 + (-0.08) / 7.2
    assert value("sndr") == pytest.approx(0.255 - 0.08 / 7.2)
    # switch-DR at 1.5: only w <= 1.5 (round 1) keeps its correction: 0.255 + 0.2 / 4 = 0.305
    assert value("switch-dr", clip=1.5) == pytest.approx(0.305)
    # switch-DR at 2.0: rounds 1, 3 and 4 (w = 0.4, 1.6, 2.0): 0.255 + (0.2 + 0.64 - 0.6) / 4 = 0.315
    assert value("switch-dr", clip=2.0) == pytest.approx(0.315)


TERM_KINDS = (np.ones, np.zeros, lambda n: np.full(n, -0.0), lambda n: np.full(n, 2.0),
              lambda n: np.random.default_rng(n).random(n), lambda n: np.random.default_rng(n).normal(size=n))


@pytest.mark.parametrize("kinds", [(a, b, c) for a in range(6) for b in (0, 3, 4, 5) for c in (0, 1, 2, 4)])
def test_resampled_value_keeps_the_bits_of_gathering_every_term(kinds) -> None:
    # The reference gathers all three terms, as value(rows) did before constant terms (1 or
    # +0 in every round) were skipped; every value must be the same double, -0.0, 0/0 and
    # x/0 included (a denominator of zeros or of -0.0 is kept here on purpose)
    n = 257
    numerator, denominator, added = (TERM_KINDS[k](n) for k in kinds)
    rows = np.random.default_rng(7).integers(0, n, size=(5, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = numerator[rows].sum(axis=-1) / denominator[rows].sum(axis=-1) + added[rows].mean(axis=-1)
        got = RoundTerms(numerator, denominator, added).value(rows)
    assert got.tobytes() == expected.tobytes()


def test_estimate_row_and_table() -> None:
    f = _fixture()
    row = estimate(REWARD, PSCORE, f["target"], "ips", clip=1.5, resamples=500)
    assert row["clipped"] == 3                       # 3.2, 1.6 and 2.0 are above 1.5
    assert row["effective_n"] == pytest.approx(7.2 ** 2 / (0.16 + 10.24 + 2.56 + 4.0))
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    result = estimate_all(REWARD, PSCORE, f["target"], q_logged=f["q_logged"], q_target=f["q_target"], resamples=200)
    assert result.table["estimator"].tolist() == ["ips", "snips", "dm", "dr", "sndr", "switch-dr"]
    assert result.warnings == [] and result.settings["skipped"] == []
    # the same rounds without a reward model: the four model-based estimators left out, named
    result = estimate_all(REWARD, PSCORE, f["target"], resamples=200)
    assert result.table["estimator"].tolist() == ["ips", "snips"]
    assert result.warnings == ["dm, dr, sndr, switch-dr left out: they need a reward model (q_logged and q_target)"]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ParameterError, match="unknown estimator"):
        round_terms("ipw", [1], [0.5], [0.5])
    with pytest.raises(InputError, match=r"in \(0, 1\]; round 1 has 0.0"):
        round_terms("ips", [1, 1], [0.5, 0.0], [0.5, 0.5])
    with pytest.raises(InputError, match="needs a reward model"):
        round_terms("dr", [1], [0.5], [0.5])
    with pytest.raises(InputError, match="2 values for 3 rounds"):
        round_terms("ips", [1, 0, 1], [0.5, 0.5], [0.5, 0.5, 0.5])
    with pytest.raises(InputError, match="not a finite number in round 0"):
        round_terms("ips", [np.nan], [0.5], [0.5])


def test_ips_recovers_true_ctr_on_randomised_logs() -> None:
    # Uniform logging over 5 actions with click rates 0.1 .. 0.5; the target always plays action 3
    # (true CTR 0.4). Over 200 seeded logs, the 95% bootstrap interval covers 0.4 about 95% of the time.
    truth = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    covered, values = 0, []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        action = rng.integers(5, size=2000)
        reward = (rng.random(2000) < truth[action]).astype(float)
        target = (action == 3).astype(float)
        row = estimate(reward, np.full(2000, 0.2), target, "ips", resamples=300, seed=seed)
        covered += row["ci_low"] <= 0.4 <= row["ci_high"]
        values.append(row["value"])
    assert abs(np.mean(values) - 0.4) < 3 * np.std(values) / np.sqrt(200)
    assert 0.90 <= covered / 200 <= 0.99


def test_position_propensities_and_pbm_ips_under_a_known_pbm() -> None:
    # PBM: examination 1, 0.6, 0.3 by rank; five documents with attractiveness 0.9 .. 0.1.
    exam = np.array([1.0, 0.6, 0.3])
    attract = np.array([0.9, 0.7, 0.5, 0.3, 0.1])
    rng = np.random.default_rng(0)
    n = 60_000
    shown = np.argsort(rng.random((n, 5)), axis=1)[:, :3]          # random top 3 of 5 per impression
    clicks = rng.random((n, 3)) < exam * attract[shown]
    positions = np.tile([1, 2, 3], n)
    est = position_propensities(positions, clicks.ravel())
    assert np.allclose(est, exam, atol=0.03)
    # target ranking: documents 4, 0, 1 at ranks 1, 2, 3. True CTR@3 = 0.1 + 0.6 x 0.9 + 0.3 x 0.7 = 0.85
    target_rank_of = np.array([2, 3, 0, 0, 1])
    row = pbm_ips(np.repeat(np.arange(n), 3), positions, clicks.ravel(), target_rank_of[shown].ravel(), exam, k=3,
                  resamples=300)
    # the log shows each document in 3/5 of impressions, so clicks cover it 3/5 of the time: the estimate
    # is of CTR@3 x 3/5 unless the coverage is corrected. Unbiased per shown document -> 0.85 x 0.6 = 0.51
    assert row["ci_low"] <= 0.51 <= row["ci_high"]
    # DCG@2 with gains 1/log2(2) = 1 and 1/log2(3): 0.1 + 0.9 / log2(3), times the 3/5 coverage
    dcg = pbm_ips(np.repeat(np.arange(n), 3), positions, clicks.ravel(), target_rank_of[shown].ravel(), exam, k=2,
                  gain="dcg", resamples=300)
    assert dcg["ci_low"] <= (0.1 + 0.9 / np.log2(3)) * 0.6 <= dcg["ci_high"]
    with pytest.raises(InputError, match="logged rank outside 1..3"):
        pbm_ips([0], [4], [1], [1], exam)
    with pytest.raises(InputError, match="no click at rank 1"):
        position_propensities([1, 2], [0, 1])


def test_slate_estimators_by_hand() -> None:
    # slate 0: rewards 1, 0, 1 at positions 1-3; slate 1: rewards 0, 1, 0
    slate = [0, 0, 0, 1, 1, 1]
    position = [1, 2, 3, 1, 2, 3]
    reward = [1, 0, 1, 0, 1, 0]
    # conditional probabilities of each logged item given the items above it
    behavior_cond = [0.5, 0.5, 0.5, 0.25, 0.5, 1.0]
    target_cond = [1.0, 0.5, 0.25, 0.5, 1.0, 1.0]
    b = cascade_propensities(slate, position, behavior_cond)     # 0.5, 0.25, 0.125 | 0.25, 0.125, 0.125
    e = cascade_propensities(slate, position, target_cond)       # 1, 0.5, 0.125    | 0.5, 0.5, 0.5
    assert b.tolist() == [0.5, 0.25, 0.125, 0.25, 0.125, 0.125]
    # RIPS: slate 0: 1 x 2 + 1 x 1 = 3; slate 1: 1 x 4 = 4  -> (3 + 4) / 2 = 3.5
    assert slate_estimate(slate, reward, b, e, "rips", resamples=100)["value"] == pytest.approx(3.5)
    # IIPS with the marginals themselves: slate 0: 1 x 2 + 1 x 0.5 = 2.5; slate 1: 2 -> 2.25
    assert slate_estimate(slate, reward, behavior_cond, target_cond, "iips", resamples=100)["value"] == 2.25
    # SIPS: whole-slate weights 1/0.125 x 0.125 = 1 and 0.5 / 0.125 = 4: (2 x 1 + 1 x 4) / 2 = 3
    joint_b = [0.125] * 3 + [0.125] * 3
    joint_e = [0.125] * 3 + [0.5] * 3
    assert slate_estimate(slate, reward, joint_b, joint_e, "sips", resamples=100)["value"] == 3.0


OPEN_BANDIT = __import__("pathlib").Path(__file__).parent / "data" / "online" / "open_bandit_men_propensities.csv.gz"
COLUMNS = {"action": "item_id", "reward": "click", "pscore": "propensity_score"}


def _open_bandit_logs(tmp_path) -> dict:
    import pandas as pd

    frame = pd.read_csv(OPEN_BANDIT)
    paths = {}
    for policy in ("random", "bts"):
        paths[policy] = tmp_path / f"{policy}.csv"
        frame[frame["policy"] == policy].drop(columns="policy").to_csv(paths[policy], index=False)
    return paths


def test_open_bandit_each_policy_from_the_others_log(tmp_path) -> None:
    from rankwise.counterfactual.bandit_log import evaluate_policy, policy_from_log, policy_sums, read_bandit_log

    paths = _open_bandit_logs(tmp_path)
    random_log = read_bandit_log(paths["random"], **COLUMNS)
    bts_log = read_bandit_log(paths["bts"], **COLUMNS)
    assert random_log.reward.sum() == 46 and bts_log.reward.sum() == 69
    # the uniform policy on its own uniform log: every weight is 1, IPS = the CTR, 46 / 10,000
    own = evaluate_policy(random_log, "uniform", ["ips"], resamples=200)
    assert own.table["value"].iloc[0] == pytest.approx(0.0046, abs=1e-12)
    assert own.table["effective_n"].iloc[0] == pytest.approx(10_000)
    # the harmonic-mean policy of the random log is 1/34 everywhere, summing to 1 per position
    assert policy_sums(policy_from_log(random_log, rescale=False)) == pytest.approx({1: 1.0, 2: 1.0, 3: 1.0})
    # Thompson sampling's CTR (69 / 10,000) from the random log, and the reverse: IPS's and SNIPS's
    # 95% intervals hold the other policy's own CTR (DR's, from the Thompson log, ends at 0.0043: see
    # docs/counterfactual.md)
    for log, other, truth in ((random_log, bts_log, 0.0069), (bts_log, random_log, 0.0046)):
        result = evaluate_policy(log, policy_from_log(other), ["ips", "snips"], resamples=2000)
        for row in result.table.to_dict("records"):
            assert row["ci_low"] <= truth <= row["ci_high"], (row, truth)


def test_bandit_log_bad_input_names_file_line_and_field(tmp_path) -> None:
    from rankwise.counterfactual.bandit_log import read_bandit_log

    path = tmp_path / "log.csv"
    path.write_text("item_id,position,click,propensity_score\n3,1,0,0.5\n4,2,1,0\n")
    with pytest.raises(InputError, match=r"log.csv:3.*propensity_score.*\(0, 1\]"):
        read_bandit_log(path, **COLUMNS)
    path.write_text("item_id,position,click,propensity_score\n3,1.5,0,0.5\n")
    with pytest.raises(InputError, match=r"log.csv:2.*position.*whole number"):
        read_bandit_log(path, **COLUMNS)
    path.write_text("item_id,position,click,propensity_score\n3,1,yes,0.5\n")
    with pytest.raises(InputError, match=r"log.csv:2.*click.*expected a number, got 'yes'"):
        read_bandit_log(path, **COLUMNS)


def test_ope_command(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from rankwise.cli.main import app

    paths = _open_bandit_logs(tmp_path)
    flags = ["--action", "item_id", "--reward", "click", "--pscore", "propensity_score"]
    run = CliRunner().invoke(app, ["ope", str(paths["random"]), "--policy", "uniform", "-e", "ips", "-f", "json",
                                   "--resamples", "100", *flags])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output)
    assert data["estimates"][0]["value"] == pytest.approx(0.0046) and data["on_policy"] == pytest.approx(0.0046)
    run = CliRunner().invoke(app, ["ope", str(paths["bts"]), "--policy", str(paths["random"]), "-f", "text",
                                   "--resamples", "100", *flags])
    assert run.exit_code == 0, run.output
    assert [line.split()[0] for line in run.output.splitlines()[3:9]] == ["ips", "snips", "dm", "dr", "sndr",
                                                                          "switch-dr"]
    assert "own mean reward: 0.0069 over 10000 rounds" in run.output
    # a policy table: the uniform policy over the 34 items written out gives the same IPS as "uniform"
    table = tmp_path / "policy.csv"
    table.write_text("action,probability\n" + "".join(f"{i},{1 / 34}\n" for i in range(34)))
    run = CliRunner().invoke(app, ["ope", str(paths["random"]), "--policy", str(table), "-e", "ips", "-f", "json",
                                   "--resamples", "100", *flags])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output)["estimates"][0]["value"] == pytest.approx(0.0046)
    # a policy log without the pscore column is refused, naming the file and the column
    bare = tmp_path / "bare.csv"
    bare.write_text("item_id,position,click\n1,1,0\n")
    run = CliRunner().invoke(app, ["ope", str(paths["random"]), "--policy", str(bare), *flags])
    assert run.exit_code == 2 and "bare.csv" in run.output and "no column 'propensity_score'" in run.output
    run = CliRunner().invoke(app, ["ope", str(paths["bts"]), "--policy", "uniform", "-e", "ipw", *flags])
    assert run.exit_code == 2 and "unknown estimator 'ipw'" in run.output


def test_a_header_only_log_is_named(tmp_path) -> None:
    from rankwise.counterfactual.bandit_log import read_bandit_log

    path = tmp_path / "log.csv"
    path.write_text("action,position,reward,pscore\n")
    with pytest.raises(InputError, match=r"log\.csv: no logged rounds"):   # ArrowInvalid before
        read_bandit_log([str(path)], action="action", position="position", reward="reward", pscore="pscore")
