"""rankwise.online: assignment bit-identical to GrowthBook's SDK; analysis equal to scipy,
statsmodels and tea-tasting; gbstats golden values; mergeable statistics; bad input."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise import experiments
from rankwise.errors import InputError, OptionError
from rankwise.stats.twosample import Arm, compare_arms

DATA = Path(__file__).parent / "data" / "online"


# -- assignment ---------------------------------------------------------------------------------

@functools.cache
def _cached_ids(n: int, seed: int) -> tuple[str, ...]:
    rng = np.random.default_rng(seed)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789-_") + ["é", "ß", "中", "😀"])
    lengths = rng.integers(1, 40, n)
    chars = rng.choice(alphabet, size=int(lengths.sum()))   # one draw for every character, then cut
    ends = np.cumsum(lengths)
    return tuple("".join(chars[end - k:end]) for end, k in zip(ends.tolist(), lengths.tolist(), strict=True))


def _ids(n: int, seed: int) -> list[str]:
    """``n`` seeded ids of 1-39 characters, some outside ASCII and the Basic Multilingual Plane."""
    return list(_cached_ids(n, seed))


@pytest.mark.parametrize("version", [1, 2])
def test_hash_equals_growthbook_on_100k_ids(version: int) -> None:
    from growthbook.core import gbhash

    ids = _ids(100_000, version)
    ours = experiments.gbhash(ids, "checkout-redesign", version)
    theirs = np.array([gbhash("checkout-redesign", s, version) for s in ids])
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize(("weights", "coverage", "version"), [
    (None, 1.0, 2), ([0.5, 0.5], 0.4, 2), ([0.1, 0.2, 0.7], 1.0, 1), ([0.95, 0.05], 0.77, 2), ([0.25] * 4, 0.5, 1)])
def test_assignment_equals_growthbook(weights, coverage: float, version: int) -> None:
    from growthbook.core import chooseVariation, gbhash, getBucketRanges

    ids = _ids(100_000, 7)
    variants = len(weights) if weights else 2
    ours = experiments.assign(ids, "exp-key", weights, coverage, version)
    ranges = getBucketRanges(variants, coverage, weights)
    theirs = [chooseVariation(gbhash("exp-key", s, version), ranges) for s in ids]
    assert ours.tolist() == theirs


def test_assignment_through_the_sdk_with_namespaces_and_numbers() -> None:
    # the SDK's own experiment run (hash attribute, namespace, coverage) on ids it sees as
    # strings and as numbers
    from growthbook import Experiment, GrowthBook

    ids = _ids(1500, 3) + [str(i) for i in range(1, 500)]
    ns = ("search", 0.2, 0.7)
    exp = Experiment(key="ranker-v2", variations=[0, 1, 2], weights=[0.2, 0.3, 0.5], coverage=0.8,
                     namespace=ns, hashVersion=2)
    theirs = []
    for uid in ids:
        gb = GrowthBook(attributes={"id": uid})
        result = gb.run(exp)
        theirs.append(result.variationId if result.inExperiment else -1)
        gb.destroy()
    ours = experiments.assign(ids, "ranker-v2", [0.2, 0.3, 0.5], 0.8, 2, namespace=ns)
    assert ours.tolist() == theirs
    numbers = np.arange(1, 500)
    assert experiments.assign(numbers, "ranker-v2", [0.2, 0.3, 0.5], 0.8, 2, namespace=ns).tolist() == theirs[1500:]
    assert experiments.assign(numbers.astype(float), "ranker-v2", [0.2, 0.3, 0.5], 0.8, 2,
                         namespace=ns).tolist() == theirs[1500:]


def test_the_assign_command_matches_the_sdks_default_with_hash_version_1(tmp_path) -> None:
    """The SDK's Experiment() without hashVersion hashes with version 1; `rankwise assign`
    defaults to version 2 (GrowthBook's recommendation) and matches the SDK with
    --hash-version 1."""
    from growthbook import Experiment, GrowthBook
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    ids = _ids(600, 5)
    (tmp_path / "users.csv").write_text("user\n" + "\n".join(ids) + "\n")
    exp = Experiment(key="ranker-v3", variations=["control", "treatment"], coverage=0.9)
    theirs = []
    for uid in ids:
        gb = GrowthBook(attributes={"id": uid})
        result = gb.run(exp)
        theirs.append(result.value if result.inExperiment else "")
        gb.destroy()
    runner = CliRunner()
    outputs = {}
    for version in ("1", "2"):
        result = runner.invoke(app, ["assign", str(tmp_path / "users.csv"), "--unit", "user", "--experiment",
                                     "ranker-v3", "--variants", "control,treatment", "--coverage", "0.9",
                                     "--hash-version", version])
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert lines[0] == "user,variant" and [line.split(",")[0] for line in lines[1:]] == ids
        outputs[version] = [line.split(",")[1] for line in lines[1:]]
    assert outputs["1"] == theirs
    assert sum(a != b for a, b in zip(outputs["2"], theirs, strict=True)) > 100   # the default differs


def test_assign_reads_a_text_file_of_units_as_the_table_and_says_what_it_changed(tmp_path: Path) -> None:
    """One id per line: a first line naming the --unit column was assigned as a unit 'user', and
    empty lines, spaces around an id and repeats went unsaid (" u2" and "u2" hash apart)."""
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    (tmp_path / "users.txt").write_text("user\nu1\n\n u2\nu1\n")
    (tmp_path / "users.csv").write_text("user\nu1\nu2\nu1\n")
    runner = CliRunner()
    text = runner.invoke(app, ["assign", str(tmp_path / "users.txt"), "--unit", "user", "--experiment", "e"])
    table = runner.invoke(app, ["assign", str(tmp_path / "users.csv"), "--unit", "user", "--experiment", "e"])
    assert text.exit_code == table.exit_code == 0
    assert text.stdout == table.stdout and text.stdout.splitlines()[1:] == [
        f"u1,{experiments.assign(['u1'], 'e')[0]}", f"u2,{experiments.assign(['u2'], 'e')[0]}",
        f"u1,{experiments.assign(['u1'], 'e')[0]}"]
    assert "users.txt: 1 empty line(s) skipped" in text.stderr
    assert "users.txt: 1 unit(s) had spaces or tabs around them, removed (line 4)" in text.stderr
    assert "users.txt: 1 unit(s) listed more than once (first at line 5)" in text.stderr


def test_ramping_coverage_never_moves_a_unit() -> None:
    ids = _ids(20_000, 11)
    before = experiments.assign(ids, "ramp", [0.5, 0.5], 0.1)
    after = experiments.assign(ids, "ramp", [0.5, 0.5], 0.9)
    kept = before >= 0
    assert kept.sum() > 1000 and np.array_equal(before[kept], after[kept])
    # namespaces: disjoint ranges never share a unit
    a = experiments.in_namespace(ids, ("ns", 0.0, 0.5))
    b = experiments.in_namespace(ids, ("ns", 0.5, 1.0))
    assert not (a & b).any() and (a | b).all()


def test_ids_growthbook_does_not_hash() -> None:
    # empty strings, None and 0 are not hashable ids: not in the experiment
    assert experiments.assign(["", None, "x"], "e").tolist()[:2] == [-1, -1]
    assert experiments.assign(np.array([0, 5]), "e").tolist()[0] == -1
    with pytest.raises(InputError, match="whole number"):
        experiments.assign(np.array([1.5]), "e")
    with pytest.raises(OptionError, match="sum to 1"):
        experiments.assign(["a"], "e", [0.5, 0.6])


# -- inference against scipy and statsmodels ------------------------------------------------

def _two_arms(seed: int = 0, n: tuple[int, int] = (400, 500)) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.gamma(2.0, 3.0, n[0])
    b = rng.gamma(2.0, 3.3, n[1])
    return {"unit": np.arange(sum(n)).astype(str), "arm": ["A"] * n[0] + ["B"] * n[1],
            "x": np.concatenate([a, b])}, a, b


@pytest.mark.parametrize("test", ["welch", "student"])
def test_t_tests_equal_scipy(test: str) -> None:
    from scipy import stats

    data, a, b = _two_arms()
    row = experiments.analyze(data, "unit", "arm", ["x"], test=test).table.iloc[0]
    ref = stats.ttest_ind(b, a, equal_var=test == "student")
    ci = ref.confidence_interval(0.95)
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert row["ci_lower"] == pytest.approx(ci.low, rel=1e-12)
    assert row["ci_upper"] == pytest.approx(ci.high, rel=1e-12)
    assert row["difference"] == pytest.approx(b.mean() - a.mean(), rel=1e-12)


def test_proportion_z_tests_equal_statsmodels() -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest, test_proportions_2indep

    rng = np.random.default_rng(3)
    a = (rng.random(3000) < 0.10).astype(int)
    b = (rng.random(2800) < 0.12).astype(int)
    data = {"unit": np.arange(5800), "arm": ["c"] * 3000 + ["t"] * 2800, "bought": np.concatenate([a, b])}
    pooled = experiments.analyze(data, "unit", "arm", ["bought>0"], test="z-pooled").table.iloc[0]
    stat, p = proportions_ztest([b.sum(), a.sum()], [len(b), len(a)])
    assert pooled["p_value"] == pytest.approx(p, rel=1e-12)
    assert pooled["statistic"] == pytest.approx(stat, rel=1e-12)
    unpooled = experiments.analyze(data, "unit", "arm", ["bought>0"], test="z").table.iloc[0]
    ref = test_proportions_2indep(b.sum(), len(b), a.sum(), len(a), method="wald")
    low, high = confint_proportions_2indep(b.sum(), len(b), a.sum(), len(a), method="wald")
    assert unpooled["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert unpooled["ci_lower"] == pytest.approx(low, rel=1e-12)
    assert unpooled["ci_upper"] == pytest.approx(high, rel=1e-12)
    # the pooled test's interval is the unpooled (Wald) interval, as statsmodels reports it
    assert pooled["ci_lower"] == pytest.approx(low, rel=1e-12)


def test_mann_whitney_srm_and_power_equal_references() -> None:
    from scipy import stats
    from statsmodels.stats.power import NormalIndPower

    data, a, b = _two_arms(5)
    row = experiments.analyze(data, "unit", "arm", ["x"], test="mann-whitney").table.iloc[0]
    assert row["p_value"] == pytest.approx(stats.mannwhitneyu(b, a).pvalue, rel=1e-12)
    srm = experiments.srm_test([5210, 4790, 10_050], [0.25, 0.25, 0.5])
    ref = stats.chisquare([5210, 4790, 10_050], np.array([0.25, 0.25, 0.5]) * 20_050)
    assert srm.p_value == pytest.approx(ref.pvalue, rel=1e-12) and srm.mismatch
    assert experiments.power(0.3, 2.0, 500, ratio=1.5) == pytest.approx(
        NormalIndPower().power(0.15, 500, 0.05, ratio=1.5), rel=1e-12)
    n = experiments.sample_size(0.1, 1.0, power=0.9)
    assert n == math.ceil(NormalIndPower().solve_power(0.1, nobs1=None, alpha=0.05, power=0.9))


# -- tea-tasting: means and ratios, with and without CUPED ----------------------------------

def test_equal_to_tea_tasting_with_and_without_cuped() -> None:
    tt = pytest.importorskip("tea_tasting")
    data = tt.make_users_data(rng=42, covariates=True, n_users=4000)
    experiment = tt.Experiment(
        orders=tt.Mean("orders"),
        orders_cuped=tt.Mean("orders", "orders_covariate"),
        aov=tt.RatioOfMeans("revenue", "orders"),
        aov_cuped=tt.RatioOfMeans("revenue", "orders", "revenue_covariate", "orders_covariate"),
    )
    theirs = experiment.analyze(data).to_pandas().set_index("metric")
    frame = data.to_pandas()
    frame["variant"] = frame["variant"].astype(str)
    ours = experiments.analyze(frame, "user", "variant",
                          {"orders": experiments.Mean("orders"),
                           "orders_cuped": experiments.Mean("orders", covariate="orders_covariate"),
                           "aov": experiments.Ratio("revenue", "orders"),
                           "aov_cuped": experiments.Ratio("revenue", "orders",
                                                     covariate=("revenue_covariate", "orders_covariate"))},
                          control="0", relative="log", correction="none").table.set_index("metric")
    pairs = {"control": "control_value", "treatment": "value", "effect_size": "difference",
             "effect_size_ci_lower": "ci_lower", "effect_size_ci_upper": "ci_upper",
             "rel_effect_size": "relative", "rel_effect_size_ci_lower": "relative_lower",
             "rel_effect_size_ci_upper": "relative_upper", "pvalue": "p_value", "statistic": "statistic"}
    for metric in theirs.index:
        for theirs_name, ours_name in pairs.items():
            assert ours.loc[metric, ours_name] == pytest.approx(theirs.loc[metric, theirs_name], rel=1e-9, abs=1e-12), \
                (metric, theirs_name)


# -- gbstats golden values ----------------------------------------------------------------------

def test_equal_to_gbstats_golden_values() -> None:
    # produced by tests/data/online/make_gbstats_golden.py with gbstats 0.8.0 (which pins
    # pandas < 2, so it cannot share this environment)
    golden = json.loads((DATA / "gbstats_golden.json").read_text())
    for case in golden["ttest"]:
        a, b = case["a"], case["b"]
        ca = Arm(a["mean"], a["variance"], a["n"])
        cb = Arm(b["mean"], b["variance"], b["n"])
        d = compare_arms(ca, cb, "welch", "delta", alpha=0.05)
        assert d.relative == pytest.approx(case["relative"]["expected"], rel=1e-12)
        assert d.relative_lower == pytest.approx(case["relative"]["ci"][0], rel=1e-9)
        assert d.relative_upper == pytest.approx(case["relative"]["ci"][1], rel=1e-9)
        assert d.difference == pytest.approx(case["absolute"]["expected"], rel=1e-12)
        assert d.ci_lower == pytest.approx(case["absolute"]["ci"][0], rel=1e-9)
        assert d.p_value == pytest.approx(case["absolute"]["p_value"], rel=1e-9)
        # the p-value of the relative lift, GrowthBook's default display
        assert d.relative_p_value == pytest.approx(case["relative"]["p_value"], rel=1e-9, abs=1e-15)
        lower, upper, p = experiments.always_valid(d.difference, d.se, ca.n + cb.n, 0.05, 5000)
        assert (lower, upper) == (pytest.approx(case["sequential"]["ci"][0], rel=1e-9),
                                  pytest.approx(case["sequential"]["ci"][1], rel=1e-9))
        assert p == pytest.approx(case["sequential"]["p_value"], rel=1e-9)
    for case in golden["srm"]:
        assert experiments.srm_test(case["users"], case["weights"]).p_value == pytest.approx(case["p_value"], rel=1e-12)


# -- mergeable statistics -----------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(-1e3, 1e3), st.floats(0, 50)),
                min_size=2, max_size=60), st.integers(1, 59))
def test_merging_states_equals_one_state(rows, cut) -> None:
    cut = min(cut, len(rows) - 1)
    variants = ["a", "b", "c"]

    def state(part):
        return experiments.VariantMoments.from_units([r[0] for r in part], {"x": [r[1] for r in part],
                                                                       "y": [r[2] for r in part]}, variants)

    whole = state(rows)
    merged = state(rows[:cut]).merge(state(rows[cut:]))
    assert merged.n.tolist() == whole.n.tolist()
    np.testing.assert_allclose(merged.means, whole.means, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(merged.comoments, whole.comoments, rtol=1e-9, atol=1e-6)
    # and the raw sums round-trip
    sums = whole.sums()
    again = experiments.VariantMoments.from_sums(variants, ["x", "y"], sums["n"], sums["sums"], sums["products"])
    np.testing.assert_allclose(again.comoments, whole.comoments, rtol=1e-9, atol=1e-6)


def test_logs_sharded_by_day_give_the_one_pass_result(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    n = 5000
    log = pd.DataFrame({"user": rng.integers(0, 800, n).astype(str), "day": rng.integers(1, 4, n),
                        "clicks": rng.integers(0, 3, n), "views": rng.integers(1, 5, n)})
    log["arm"] = np.where(experiments.assign(log["user"].to_numpy(), "shards") == 0, "control", "treatment")
    paths = []
    for day, part in log.groupby("day"):
        path = tmp_path / f"day{day}.csv.gz" if day % 2 else tmp_path / f"day{day}.parquet"
        part.to_csv(path, index=False) if path.name.endswith(".gz") else part.to_parquet(path)
        paths.append(path)
    one = experiments.analyze(log, "user", "arm", ["ctr=clicks/views", "buyers=clicks>0"]).table
    sharded = experiments.analyze(tmp_path, "user", "arm", ["ctr=clicks/views", "buyers=clicks>0"]).table
    pd.testing.assert_frame_equal(one, sharded)


def test_integer_counts_give_exact_statistics_in_any_row_order() -> None:
    rng = np.random.default_rng(5)
    n = 20_000
    log = pd.DataFrame({"user": rng.integers(0, 3000, n), "clicks": rng.integers(0, 4, n),
                        "views": rng.integers(1, 6, n)})
    log["arm"] = np.where(experiments.assign(log["user"].to_numpy(), "exact") == 0, "A", "B")
    metrics = ["ctr=clicks/views", "views=views", "clickers=clicks>0"]
    first = experiments.analyze(log, "user", "arm", metrics).table
    shuffled = experiments.analyze(log.sample(frac=1.0, random_state=1), "user", "arm", metrics).table
    pd.testing.assert_frame_equal(first, shuffled, check_exact=True)   # bit for bit
    as_float = log.astype({"clicks": float, "views": float})
    floats = experiments.analyze(as_float, "user", "arm", metrics).table
    np.testing.assert_allclose(first["se"], floats["se"], rtol=1e-12)
    # each co-moment is (n P - S S^T) / n in integers, rounded once: units 10^9 + 1, + 2, + 4
    # (S = 3e9 + 7, P = 3e18 + 14e9 + 21): (3 * 21 - 49) / 3 = 14 / 3 exactly, where the
    # floating-point sum of squares would lose every digit
    m = experiments.VariantMoments.from_codes(np.zeros(3, np.int64), np.array([[10**9 + 1], [10**9 + 2], [10**9 + 4]]),
                                         ["A"], ["x"])
    assert m.comoments[0, 0, 0] == 14 / 3
    # products beyond int64 fall back to floating point
    big = experiments.VariantMoments.from_codes(np.zeros(2, np.int64), np.array([[2**40], [2**40 + 2]]), ["A"], ["x"])
    assert big.variance("A", "x") == 2.0


# -- hand-computed example and CTR per user ------------------------------------------------------

def test_ratio_metric_hand_computed() -> None:
    # control: users (clicks, views) (1, 2), (0, 2), (3, 4): CTR = 4 / 8 = 0.5
    # treatment: (2, 2), (1, 3), (3, 3): CTR = 6 / 8 = 0.75; difference 0.25
    data = {"user": list("abcdef"), "arm": ["c"] * 3 + ["t"] * 3, "clicks": [1, 0, 3, 2, 1, 3],
            "views": [2, 2, 4, 2, 3, 3]}
    row = experiments.analyze(data, "user", "arm", ["ctr=clicks/views"], control="c").table.iloc[0]
    assert (row["control_value"], row["value"], row["difference"]) == (0.5, 0.75, 0.25)
    # delta method, control: S_cc = 7/3, S_vv = 4/3, S_cv = 4/3 (n - 1 = 2), mean views 8/3:
    # (7/3 - 2 * 0.5 * 4/3 + 0.25 * 4/3) / (8/3)^2 = 1.0 / (64/9) = 9/64
    control = experiments.VariantMoments.from_units(["c"] * 3, {"clicks": [1, 0, 3], "views": [2, 2, 4]})
    assert experiments.Ratio("clicks", "views").unit_variance(control, "c") == pytest.approx(9 / 64, rel=1e-14)


# -- bad input -----------------------------------------------------------------------------------

def test_bad_input_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("user,arm,clicks,views\nu1,A,1,2\nu2,B,-1,2\n")
    with pytest.raises(InputError, match=r"log.csv:3: field 'clicks': negative count"):
        experiments.analyze(path, "user", "arm", ["ctr=clicks/views"])
    path.write_text("user,arm,spend\nu1,A,1.5\nu2,B,nan\n")
    with pytest.raises(InputError, match=r"log.csv:3: field 'spend': expected a finite number"):
        experiments.analyze(path, "user", "arm", ["spend"])
    path.write_text("user,arm,spend\nu1,A,1.5\nu2,C,2\n")
    with pytest.raises(InputError, match=r"log.csv:3: field 'arm': unknown variant 'C'"):
        experiments.analyze(path, "user", "arm", ["spend"], variants=["A", "B"])
    path.write_text("user,variant,spend\nu1,A,1\n")
    with pytest.raises(InputError, match=r"missing column\(s\) 'arm'"):
        experiments.analyze(path, "user", "arm", ["spend"])
    with pytest.raises(OptionError, match="z-pooled"):
        experiments.analyze({"u": ["1", "2", "3", "4"], "v": ["a", "a", "b", "b"], "x": [1, 2, 3, 4]}, "u", "v", ["x"],
                       test="z-pooled")


def test_logs_read_in_slices_keep_results_and_line_numbers(tmp_path: Path, monkeypatch) -> None:
    from rankwise.data import tables

    rng = np.random.default_rng(3)
    n = 200
    log = pd.DataFrame({"user": rng.integers(0, 60, n), "clicks": rng.integers(0, 3, n),
                        "views": rng.integers(1, 4, n), "pre": 0.0})
    log["pre"] = log["user"] * 0.5
    log["arm"] = np.where(log["user"] % 2 == 0, "A", "B")
    csv, parquet = tmp_path / "log.csv", tmp_path / "log.parquet"
    log.to_csv(csv, index=False)
    log.to_parquet(parquet)
    metrics = ["ctr=clicks/views", "views=views", "clickers=clicks>0"]
    whole = experiments.analyze(csv, "user", "arm", metrics, covariates={"views": "pre"}).table
    monkeypatch.setattr(tables, "BATCH_ROWS", 7)   # 29 slices of the 200 rows
    sliced = experiments.analyze([csv, parquet], "user", "arm", metrics, covariates={"views": "pre"}).table
    assert sliced["n"].tolist() == whole["n"].tolist()   # each user counted once per file pair
    one = experiments.analyze(csv, "user", "arm", metrics, covariates={"views": "pre"}).table
    pd.testing.assert_frame_equal(one, whole, check_exact=True)
    # row 150 (CSV line 152) sits in slice 22: its error names the line and the Parquet row
    log.loc[150, "clicks"] = -2
    log.to_csv(csv, index=False)
    log.to_parquet(parquet)
    with pytest.raises(InputError, match=r"log\.csv:152: field 'clicks': negative count"):
        experiments.analyze(csv, "user", "arm", metrics)
    with pytest.raises(InputError, match=r"log\.parquet \(row 151\).*negative count"):
        experiments.analyze(parquet, "user", "arm", metrics)


def test_units_in_two_variants_are_counted_and_left_out() -> None:
    data = {"user": ["a", "a", "b", "c", "d", "e"], "arm": ["A", "B", "A", "A", "B", "B"],
            "x": [1.0, 1.0, 2.0, 4.0, 3.0, 5.0]}
    r = experiments.analyze(data, "user", "arm", ["x"])
    assert (r.table.loc[0, "n_control"], r.table.loc[0, "n"]) == (2, 2)
    assert "1 unit(s) appeared in more than one variant" in r.warnings[0]
    with pytest.raises(InputError, match="unit 'a' appears in more than one variant"):
        experiments.analyze(data, "user", "arm", ["x"], mixed="error")


def test_srm_warning_in_every_output() -> None:
    data = {"u": np.arange(1200).astype(str), "v": ["A"] * 700 + ["B"] * 500, "x": np.ones(1200)}
    r = experiments.analyze(data, "u", "v", ["x"])
    assert r.srm.mismatch and "sample ratio mismatch" in r.warnings[0]
    assert r.to_dict()["srm"]["mismatch"] is True


# -- real data and the command line ------------------------------------------------------------

OBD = DATA / "open_bandit_men.csv.gz"


def test_open_bandit_two_policies() -> None:
    # 46 clicks in 10,000 random-policy impressions, 69 in 10,000 Thompson-sampling ones
    r = experiments.analyze(OBD, "impression", "policy", ["ctr=click>0"], control="random", test="z-pooled")
    row = r.table.iloc[0]
    assert (row["control_value"], row["value"]) == (0.0046, 0.0069)
    assert row["relative"] == pytest.approx(0.5, rel=1e-12)
    # pooled p = 115 / 20000; z = 0.0023 / sqrt(p (1 - p) 2 / 10000)
    p = 115 / 20000
    z = 0.0023 / math.sqrt(p * (1 - p) * 2 / 10_000)
    assert row["statistic"] == pytest.approx(z, rel=1e-9)


def _cli(*args: str):
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    return CliRunner().invoke(app, ["ab", *args])


def test_cli_formats(tmp_path: Path) -> None:
    base = [str(OBD), "--unit", "impression", "--variant", "policy", "-m", "ctr=click", "--control", "random"]
    out = _cli(*base, "-f", "text")
    assert out.exit_code == 0, out.output
    row = next(line for line in out.output.splitlines() if line.startswith("ctr "))
    # Welch on 46 and 69 clicks in 10,000 impressions each: p = 0.0315, alone in its family
    assert row.split() == ["ctr", "bts", "10000", "10000", "0.0046", "0.0069", "0.0023", "[0.0002,", "0.0044]",
                           "+50.00%", "[-5.81%,", "+105.81%]", "0.0315", "0.0315", "*"]
    data = json.loads(_cli(*base, "-f", "json").output)
    assert data["rows"][0]["difference"] == pytest.approx(0.0023, rel=1e-9) and data["srm"]["mismatch"] is False
    assert _cli(*base, "-f", "csv").output.splitlines()[0].startswith("metric,kind,definition,control,variant")
    page = tmp_path / "ab.html"
    out = _cli(*base, "--timestamp", "timestamp", "--sequential", "always-valid", "-f", "html", "-o", str(page))
    assert out.exit_code == 0, out.output
    text = page.read_text()
    assert "<img class='lift' alt='cumulative lift'" in text and "<th>sequential</th><td>always-valid</td>" in text
    assert "<h1>A/B analysis against " in text and "(test=" not in text.split("<h1>")[1].split("</h1>")[0]
    bad = _cli(*base, "--test", "nope")
    assert bad.exit_code == 2 and "unknown test 'nope'" in bad.output


def test_alpha_spending_over_daily_looks() -> None:
    r = experiments.analyze(OBD, "impression", "policy", ["ctr=click"], control="random", timestamp="timestamp",
                       sequential="obrien-fleming", planned_units=20_000)
    looks = r.looks
    assert len(looks) == 7  # 24..30 November 2019
    assert looks["fraction"].iloc[-1] == 1.0
    # the boundary falls as information accrues and ends above the fixed-horizon 1.96
    assert (np.diff(looks["boundary"].to_numpy()) < 0).all() and looks["boundary"].iloc[-1] > 1.96
    assert bool(r.table.loc[0, "significant"]) == bool(looks["crossed"].iloc[-1])


def test_the_boundaries_of_one_schedule_are_computed_once() -> None:
    """Every metric of an arm shares its looks and units, so its boundaries: one computation
    serves all of them (20 looks cost about a second each time before)."""
    from rankwise.stats.sequential import _boundaries

    _boundaries.cache_clear()
    r = experiments.analyze(OBD, "impression", "policy", ["ctr=click", "clicks=click", "any=click>0"], control="random",
                       timestamp="timestamp", sequential="pocock", planned_units=20_000)
    assert _boundaries.cache_info().misses == 1 and _boundaries.cache_info().hits == 2
    boundary = r.looks.groupby("metric", sort=False)["boundary"].apply(list)
    assert boundary["ctr"] == boundary["clicks"] == boundary["any"]


def test_msprt_is_the_normal_mixture_and_its_looks_only_tighten() -> None:
    # Johari et al.: Lambda = sqrt(V / (V + tau^2)) exp(tau^2 d^2 / (2 V (V + tau^2)));
    # d = 0.05, se = 0.02 (V = 4e-4), unit variance 1, effect 0.1: tau^2 = 0.01
    lower, upper, p = experiments.msprt(0.05, 0.02, 1.0, effect=0.1)
    v, tau2 = 4e-4, 0.01
    lam = math.sqrt(v / (v + tau2)) * math.exp(tau2 * 0.05**2 / (2 * v * (v + tau2)))
    assert p == pytest.approx(1 / lam, rel=1e-12)
    half = math.sqrt(v * (v + tau2) / tau2 * (2 * math.log(20) + math.log((v + tau2) / v)))
    assert (lower, upper) == pytest.approx((0.05 - half, 0.05 + half), rel=1e-12)
    # the confidence sequence is the same mixture with tau^2 = rho^2 N se^2
    n_total, tuning = 10_000, 5000
    rho2 = (-2 * math.log(0.05) + math.log(-2 * math.log(0.05) + 1)) / tuning
    unit_variance = rho2 * n_total * v / 0.1**2
    assert experiments.msprt(0.05, 0.02, unit_variance)[2] == pytest.approx(
        experiments.always_valid(0.05, 0.02, n_total, tuning=tuning)[2], rel=1e-12)
    # over daily looks: p-values never rise, intervals never widen, the table shows the last look
    for method in ("msprt", "always-valid"):
        r = experiments.analyze(OBD, "impression", "policy", ["ctr=click"], control="random", timestamp="timestamp",
                           sequential=method)
        looks = r.looks
        assert len(looks) == 7
        assert (np.diff(looks["p_value"]) <= 0).all()
        assert (np.diff(looks["ci_upper"] - looks["ci_lower"]) <= 0).all()
        assert r.table.loc[0, "p_value"] == looks["p_value"].iloc[-1]


def test_analysis_from_per_variant_statistics(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    n = 6000
    log = pd.DataFrame({"user": rng.integers(0, 1500, n), "clicks": rng.integers(0, 3, n),
                        "views": rng.integers(1, 5, n), "pre": 0})
    log["pre"] = log["user"] % 7   # a pre-experiment value per user
    log["arm"] = np.where(experiments.assign(log["user"].to_numpy(), "stats") == 0, "A", "B")
    metrics = ["ctr=clicks/views", "views=views", "clickers=clicks>0"]
    events = experiments.analyze(log, "user", "arm", metrics, covariates={"views": "pre"})
    table = experiments.statistics_table(events.statistics)
    assert table.columns[:4].tolist() == ["variant", "n", "sum(clicks)", "sum(views)"]
    # shards of disjoint users add up to the whole
    halves = [log[log["user"] % 2 == k] for k in (0, 1)]
    parts = [experiments.statistics_table(experiments.analyze(h, "user", "arm", metrics, covariates={"views": "pre"})
                                     .statistics) for h in halves]
    for k, part in enumerate(parts):
        part.to_csv(tmp_path / f"part{k}.csv", index=False)
    again = experiments.analyze(tmp_path, "user", "variant", metrics, covariates={"views": "pre"}, statistics=True)
    cols = ["control_value", "value", "difference", "se", "p_value", "ci_lower", "relative_upper"]
    np.testing.assert_allclose(again.table[cols].to_numpy(float), events.table[cols].to_numpy(float), rtol=1e-9)
    assert again.srm.observed == events.srm.observed
    # the CLI writes them and reads them back
    csv = tmp_path / "log.csv"
    log.to_csv(csv, index=False)
    stats = tmp_path / "stats" / "all.csv"
    stats.parent.mkdir()
    args = ["--unit", "user", "--variant", "arm", *sum((["-m", m] for m in metrics), [])]
    assert _cli(str(csv), *args, "-f", "statistics", "-o", str(stats)).exit_code == 0
    out = _cli(str(stats), *args, "--statistics", "-f", "json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)["rows"]
    plain = experiments.analyze(log, "user", "arm", metrics).table
    assert [r["p_value"] for r in rows] == pytest.approx(plain["p_value"].tolist(), rel=1e-9)


def test_bad_per_variant_statistics(tmp_path: Path) -> None:
    good = {"variant": ["A", "B"], "n": [10, 10], "sum(x)": [5.0, 6.0], "sum(x*x)": [5.0, 8.0]}
    path = tmp_path / "s.csv"
    pd.DataFrame({k: v for k, v in good.items() if k != "sum(x*x)"}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"s\.csv.*missing column\(s\) 'sum\(x\*x\)'"):
        experiments.analyze(path, variant="variant", metrics=["x=x"], statistics=True)
    pd.DataFrame({**good, "n": [10, -1]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"s\.csv:3.*n.*whole number of units from 0 to 2\^62, got -1"):
        experiments.analyze(path, variant="variant", metrics=["x=x"], statistics=True)
    # 10 units summing to 5 need a sum of squares of at least 5^2 / 10 = 2.5
    pd.DataFrame({**good, "sum(x*x)": [2.0, 8.0]}).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"s\.csv:2.*sum\(x\*x\).*below"):
        experiments.analyze(path, variant="variant", metrics=["x=x"], statistics=True)
    with pytest.raises(OptionError, match="one row per unit"):
        experiments.analyze(good, variant="variant", metrics=["x=x"], statistics=True, test="bootstrap")
    state = experiments.read_statistics(good, ["x"], [("x", "x")])
    with pytest.raises(OptionError, match="no column 'views'"):
        experiments.analyze(state, metrics=["views=views"])


# -- simulations: peeking and clustered CTR ------------------------------------------------------

def test_peeking_inflates_the_t_test_not_the_sequential_tests() -> None:
    # A/A: 1,000 experiments, 20 daily looks of 200 new units per arm each
    rng = np.random.default_rng(12)
    reps, looks, per_look = 1000, 20, 200
    a = rng.normal(0, 1, (reps, looks * per_look))
    b = rng.normal(0, 1, (reps, looks * per_look))
    fractions = np.arange(1, looks + 1) / looks
    obf = experiments.boundaries(fractions, 0.05, "obrien-fleming")
    fixed = always = spending = mixture = 0
    for r in range(reps):
        hit_fixed = hit_always = hit_spending = hit_mixture = False
        for k in range(looks):
            n = (k + 1) * per_look
            ca, cb = a[r, :n], b[r, :n]
            d = compare_arms(Arm(ca.mean(), ca.var(ddof=1), n), Arm(cb.mean(), cb.var(ddof=1), n), "z")
            hit_fixed |= d.p_value < 0.05
            hit_always |= experiments.always_valid(d.difference, d.se, 2 * n)[2] < 0.05
            hit_spending |= abs(d.statistic) >= obf[k]
            hit_mixture |= experiments.msprt(d.difference, d.se, 1.0, effect=0.2)[2] < 0.05
        mixture += hit_mixture
        fixed += hit_fixed
        always += hit_always
        spending += hit_spending
    mc = 3 * math.sqrt(0.05 * 0.95 / reps)  # three Monte Carlo standard errors
    assert fixed / reps > 0.15  # peeking at a fixed-horizon test: about 0.2 with 20 looks
    assert always / reps <= 0.05 + mc
    assert mixture / reps <= 0.05 + mc
    assert abs(spending / reps - 0.05) <= mc


def test_ctr_interval_coverage_on_clustered_users() -> None:
    # users with different numbers of impressions and their own click propensity: the
    # per-user delta method covers 95%, the per-impression binomial interval does not
    rng = np.random.default_rng(4)
    reps, users = 2000, 400
    covered_delta = covered_binomial = 0
    for _ in range(reps):
        arms = []
        for _arm in range(2):
            views = rng.integers(1, 30, users).astype(float)
            propensity = rng.beta(1, 9, users)
            clicks = rng.binomial(views.astype(int), propensity).astype(float)
            arms.append((clicks, views))
        moments = experiments.VariantMoments.from_units(["c"] * users + ["t"] * users,
                                                   {"clicks": np.concatenate([arms[0][0], arms[1][0]]),
                                                    "views": np.concatenate([arms[0][1], arms[1][1]])})
        ratio = experiments.Ratio("clicks", "views")
        c = Arm(ratio.value(moments, "c"), ratio.unit_variance(moments, "c"), users)
        t = Arm(ratio.value(moments, "t"), ratio.unit_variance(moments, "t"), users)
        d = compare_arms(c, t, "z")
        covered_delta += d.ci_lower <= 0 <= d.ci_upper
        n_c, n_t = arms[0][1].sum(), arms[1][1].sum()
        se = math.sqrt(c.mean * (1 - c.mean) / n_c + t.mean * (1 - t.mean) / n_t)
        covered_binomial += abs(d.difference) <= 1.959964 * se
    assert abs(covered_delta / reps - 0.95) <= 0.014
    assert covered_binomial / reps < 0.90


# -- no silent wrong number (issue #37) ------------------------------------------------------------

def _per_unit(n: int = 40, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"user": [f"u{i}" for i in range(n)], "variant": ["control", "treat"] * (n // 2),
                         "clicks": rng.integers(0, 3, n), "views": rng.integers(1, 5, n)})


def test_blank_unit_or_variant_is_refused_with_its_row(tmp_path: Path) -> None:
    frame = _per_unit()
    frame.loc[3, "user"] = ""          # empty unit ids merged into one unit before
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"log\.csv:5: field 'user': empty user"):
        experiments.analyze(str(path), unit="user", metrics=["clicks"])
    frame = _per_unit()
    frame["variant"] = frame["variant"].astype(object)
    frame.loc[6, "variant"] = "  "     # became an arm named '' before
    with pytest.raises(InputError, match="field 'variant': empty variant"):
        experiments.analyze(frame, unit="user", metrics=["clicks"])


def test_arms_that_cannot_be_compared_are_blank_with_a_warning() -> None:
    frame = _per_unit()
    one = pd.concat([frame[frame.variant == "control"], frame[frame.variant == "treat"].head(1)])
    result = experiments.analyze(one, unit="user", metrics=["clicks"])
    row = result.table.iloc[0]
    assert row["n"] == 1 and math.isnan(row["p_value"]) and not row["significant"]   # p = 1.0 before
    assert "'treat' has 1 unit(s); a comparison needs at least 2" in result.warnings[-1]
    zero = frame.assign(views=np.where(frame.variant == "treat", 0, frame.views))
    result = experiments.analyze(zero, unit="user", metrics=["ctr=clicks/views", "clicks"])
    ctr, clicks = result.table.iloc[0], result.table.iloc[1]
    assert math.isnan(ctr["p_value"]) and "its value in 'treat' is inf" in result.warnings[0]
    # the comparison that was made is corrected alone (Holm over one p-value: unchanged)
    assert clicks["p_corrected"] == clicks["p_value"]
    declared = experiments.analyze(frame, unit="user", metrics=["clicks"], variants=["control", "treat", "other"])
    assert declared.table["n"].tolist() == [20, 0] and "'other' has 0 unit(s)" in declared.warnings[-1]
    with pytest.raises(OptionError, match="the data has one variant"):
        experiments.analyze(frame[frame.variant == "control"], unit="user", metrics=["clicks"])
    huge = frame.astype({"clicks": float})
    huge.loc[0, "clicks"] = 1e308
    result = experiments.analyze(huge, unit="user", metrics=["clicks"])   # OverflowError before
    assert math.isnan(result.table.iloc[0]["p_value"]) and "not a finite number" in result.warnings[-1]


def test_the_table_marks_only_what_it_shows() -> None:
    from rankwise.report.ab import ab_grid

    frame = _per_unit()
    plain = ab_grid(experiments.analyze(frame, unit="user", metrics=["clicks"]))
    assert "significant after correction" not in plain.note   # printed although nothing was significant
    one = pd.concat([frame[frame.variant == "control"], frame[frame.variant == "treat"].head(1)])
    blank = ab_grid(experiments.analyze(one, unit="user", metrics=["clicks"]))
    assert blank.rows[0][1] == "treat \u2020" and blank.rows[0][6:] == [""] * 6
    assert "\u2020 not compared (blank)" in blank.note


def test_the_text_output_says_what_was_applied_and_puts_the_sample_ratio_first() -> None:
    """The header names CUPED and its covariate; the sample-ratio check (and its warning, once)
    comes before the rows it makes untrustworthy; alpha spending shows its looks, the last |z|,
    the boundary, the first crossing and the repeated interval, not the fixed-horizon ones."""
    from rankwise.report.ab import ab_grid, ab_markdown

    data = {"u": np.arange(1200).astype(str), "v": ["A"] * 700 + ["B"] * 500,
            "x": np.arange(1200) % 7, "pre": np.arange(1200) % 5}
    r = experiments.analyze(data, "u", "v", ["x"], covariates={"x": "pre"})
    text = ab_grid(r).text().splitlines()
    assert text[0].endswith("correction=holm; CUPED: x on pre)")
    assert text[1].startswith("sample ratio: units [700, 500]") and text[1].endswith("(MISMATCH)")
    assert text[2].startswith("warning: sample ratio mismatch") and text[3].startswith("metric")
    assert sum("sample ratio mismatch" in line for line in text) == 1
    markdown = ab_markdown(r).splitlines()
    assert markdown[2].startswith("sample ratio: units [700, 500]") and markdown[5].startswith("| metric")
    r = experiments.analyze(OBD, "impression", "policy", ["ctr=click"], control="random", timestamp="timestamp",
                       sequential="obrien-fleming", planned_units=20_000)
    row = r.table.iloc[0]
    grid = ab_grid(r)
    assert grid.columns[7] == "repeated interval" and grid.columns[-4:] == ["looks", "|z|", "boundary", "crossed"]
    assert row["rci_lower"] == row["difference"] - row["boundary"] * row["se"]
    looks = r.looks
    crossed = looks[looks["crossed"].astype(bool)]
    expected = str(crossed["look"].min().date()) + " *" if len(crossed) else "no"
    assert grid.rows[0][9:] == ["7", f"{abs(row['statistic']):.2f}", f"{row['boundary']:.2f}", expected]
    assert "p corrected" not in grid.columns and "* crossed the boundary at that look" in grid.note


def test_capping_equals_growthbooks_sql_cap_and_keeps_each_metric_its_own() -> None:
    """A percentile cap is PERCENTILE_CONT over every unit's value (GrowthBook's SQL; DuckDB's
    quantile_cont here), each unit's value is min(value, cap), and the analysis is the one of the
    capped per-unit table; a number caps as it is; zeros may be left out of the percentile."""
    duckdb = pytest.importorskip("duckdb")
    rng = np.random.default_rng(4)
    n = 2000
    frame = pd.DataFrame({"user": np.arange(n), "variant": np.where(np.arange(n) % 2, "A", "B"),
                          "revenue": np.where(rng.random(n) < 0.3, 0.0, rng.lognormal(1, 1.5, n)).round(2),
                          "views": rng.integers(1, 20, n)})
    with duckdb.connect() as connection:
        connection.register("units", frame)
        cap, cap_nonzero = connection.execute(
            "SELECT quantile_cont(revenue, 0.99), quantile_cont(revenue, 0.99) FILTER (WHERE revenue <> 0) "
            "FROM units").fetchall()[0]
    result = experiments.analyze(frame, unit="user", metrics=["revenue", "capped=revenue", "rpv=revenue/views"],
                            caps={"capped": "p99", "rpv": "p99"}, control="A")
    assert result.settings["caps"]["capped"] == pytest.approx(cap, rel=1e-14)
    by_hand = experiments.analyze(frame.assign(revenue=np.minimum(frame["revenue"], cap)), unit="user",
                             metrics=["capped=revenue", "rpv=revenue/views"], control="A")
    got = result.table.set_index("metric")
    for name in ("capped", "rpv"):
        assert got.loc[name, "value"] == pytest.approx(by_hand.table.set_index("metric").loc[name, "value"],
                                                       rel=1e-12)
        assert got.loc[name, "p_value"] == pytest.approx(by_hand.table.set_index("metric").loc[name, "p_value"],
                                                         rel=1e-9)
    assert got.loc["revenue", "value"] > got.loc["capped", "value"]   # the uncapped metric keeps its column
    assert got.loc["capped", "definition"] == "revenue capped at p99"
    nonzero = experiments.analyze(frame, unit="user", metrics=["capped=revenue"], caps={"capped": "p99"},
                             ignore_zeros=True, control="A")
    assert nonzero.settings["caps"]["capped"] == pytest.approx(cap_nonzero, rel=1e-14)
    fixed = experiments.analyze(frame, unit="user", metrics=["capped=revenue"], caps={"capped": 10}, control="A")
    assert fixed.table.iloc[0]["value"] == pytest.approx(np.minimum(frame.revenue, 10)[frame.variant == "B"].mean(),
                                                         rel=1e-12)
    from rankwise.report.ab import ab_title

    assert ab_title(result).endswith(f"capped: capped at p99 ({cap:.4f}), rpv at p99 ({cap:.4f}))")
    with pytest.raises(OptionError, match="cap for unknown metric 'other'"):
        experiments.analyze(frame, unit="user", metrics=["revenue"], caps={"other": "p99"})
    with pytest.raises(OptionError, match="a percentile such as p99"):
        experiments.analyze(frame, unit="user", metrics=["revenue"], caps={"revenue": "q99"})


def test_capping_keeps_the_aa_false_positive_rate() -> None:
    """Heavy-tailed revenue (lognormal, sigma 2) capped at its pooled p99: 250 seeded A/A
    experiments of 2 x 400 units reject at about 5% (within 3 binomial standard errors)."""
    rng = np.random.default_rng(8)
    trials, rejections = 250, 0
    arms = np.where(np.arange(800) % 2, "A", "B")
    for _ in range(trials):
        data = {"u": np.arange(800), "v": arms, "x": rng.lognormal(0, 2, 800)}
        rejections += experiments.analyze(data, "u", "v", ["x"], caps={"x": "p99"}).table.iloc[0]["p_value"] < 0.05
    assert abs(rejections / trials - 0.05) < 3 * math.sqrt(0.05 * 0.95 / trials)


SLICED = DATA / "sliced.csv"


def test_each_slice_is_the_analysis_of_its_units() -> None:
    frame = pd.read_csv(SLICED)
    result = experiments.analyze(frame, unit="user", metrics=["ctr=clicks/views", "clicks"],
                                 slices=["device", "country"])
    table = result.table
    assert list(dict.fromkeys(zip(table["dimension"], table["slice"], strict=True))) == [
        ("", "all"), ("device", "desktop"), ("device", "mobile"), ("country", "DE"), ("country", "FR"),
        ("country", "US")]
    for (dimension, value), rows in table[table["slice"] != "all"].groupby(["dimension", "slice"]):
        alone = experiments.analyze(frame[frame[dimension] == value], unit="user",
                                    metrics=["ctr=clicks/views", "clicks"])
        for column in ("n", "n_control", "value", "difference", "ci_lower", "ci_upper", "p_value"):
            assert rows[column].tolist() == alone.table[column].tolist(), (dimension, value, column)
        # corrected within the slice (the default scope) as the slice alone is
        assert rows["p_corrected"].tolist() == alone.table["p_corrected"].tolist()
    whole = experiments.analyze(frame, unit="user", metrics=["ctr=clicks/views", "clicks"])
    assert table[table["slice"] == "all"]["p_corrected"].tolist() == whole.table["p_corrected"].tolist()


def test_correction_scopes() -> None:
    from rankwise.stats.corrections import correct

    frame = pd.read_csv(SLICED)
    p = {}
    for scope in ("slice", "metric", "all"):
        p[scope] = experiments.analyze(frame, unit="user", metrics=["ctr=clicks/views", "clicks"], slices=["device"],
                                  correction_scope=scope).table
    raw = p["all"]["p_value"].to_numpy()
    assert p["all"]["p_corrected"].tolist() == pytest.approx(correct(raw, "holm", 0.05).tolist(), rel=1e-15)
    by_metric = p["metric"]
    for metric in ("ctr", "clicks"):
        rows = by_metric["metric"] == metric
        assert by_metric.loc[rows, "p_corrected"].tolist() == pytest.approx(
            correct(by_metric.loc[rows, "p_value"].to_numpy(), "holm", 0.05).tolist(), rel=1e-15)
    assert experiments.analyze(frame, unit="user", metrics=["ctr=clicks/views"], slices=["device"],
                          correction_scope="metric").settings["correction_scope"] == "metric"
    from rankwise.errors import RankwiseError

    with pytest.raises(RankwiseError, match="unknown correction scope 'slices'; did you mean 'slice'"):
        experiments.analyze(frame, unit="user", metrics=["clicks"], slices=["device"], correction_scope="slices")
    with pytest.raises(OptionError, match="slice by 'user': that is the unit column"):
        experiments.analyze(frame, unit="user", metrics=["clicks"], slices=["user"])


def test_a_unit_takes_the_value_of_its_first_row_and_missing_values_have_a_slice() -> None:
    events = {"u": [1, 1, 2, 2, 3, 3, 4, 4], "v": ["A", "A", "A", "A", "B", "B", "B", "B"],
              "device": ["mobile", "desktop", None, None, "mobile", "mobile", "desktop", "desktop"],
              "x": [1, 2, 3, 4, 5, 6, 7, 8]}
    result = experiments.analyze(events, "u", "v", ["x"], slices=["device"])
    slices = result.table.set_index("slice")
    # unit 1 is mobile (its first row); unit 2 has no device
    assert slices.loc["mobile", "n_control"] == 1 and slices.loc["(missing)", "n_control"] == 1
    assert "1 unit(s) had more than one 'device'; each is in the slice of its first row" in result.warnings
    assert any("in device=mobile: not compared" in w for w in result.warnings)   # one unit per arm


def test_sliced_aa_tests_hold_the_familywise_error_only_when_corrected_across_all() -> None:
    """100 seeded A/A experiments, a metric over the whole experiment and 2 + 3 slices (6
    comparisons): with the correction across all of them the chance of any false positive stays
    near 5%; corrected per slice it is far higher (each slice is its own family)."""
    from rankwise.stats.corrections import correct

    rng = np.random.default_rng(21)
    trials, n = 100, 600
    any_all = any_slice = 0
    for _ in range(trials):
        frame = pd.DataFrame({"user": np.arange(n), "variant": np.where(np.arange(n) % 2, "A", "B"),
                              "device": rng.choice(["d", "m"], n), "country": rng.choice(["x", "y", "z"], n),
                              "value": rng.normal(size=n)})
        table = experiments.analyze(frame, unit="user", metrics=["value"], slices=["device", "country"],
                               correction_scope="all").table
        any_all += bool(table["significant"].any())
        # per slice: each slice has one comparison here, so its corrected p is its own p
        any_slice += bool((correct(table["p_value"].to_numpy(), "none", 0.05) < 0.05).any())
    assert any_all / trials < 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    assert any_slice / trials > 0.15   # 1 - 0.95^6 = 0.26 for independent comparisons


def _daily_sliced_log(n: int = 4_000, seed: int = 8) -> pd.DataFrame:
    """``n`` users over 5 days, a device each; the treatment adds 0.15 to the value on mobile."""
    rng = np.random.default_rng(seed)
    device = rng.choice(["desktop", "mobile"], n)
    arm = np.where(rng.random(n) < 0.5, "A", "B")
    value = rng.normal(1.0, 1.0, n) + 0.15 * ((arm == "B") & (device == "mobile"))
    day = pd.Timestamp("2026-03-01") + pd.to_timedelta(rng.integers(0, 5, n), unit="D")
    return pd.DataFrame({"user": np.arange(n), "arm": arm, "device": device, "value": value, "ts": day})


def test_sequential_designs_are_sliced_with_the_looks_of_each_slice() -> None:
    frame = _daily_sliced_log()
    common = {"unit": "user", "variant": "arm", "metrics": ["value"], "timestamp": "ts"}
    # always valid: every slice's running p and interval are those of the slice analysed alone
    sliced = experiments.analyze(frame, **common, sequential="always-valid", slices=["device"])
    for value in ("desktop", "mobile"):
        alone = experiments.analyze(frame[frame["device"] == value], **common, sequential="always-valid")
        row = sliced.table[sliced.table["slice"] == value].iloc[0]
        for column in ("p_value", "ci_lower", "ci_upper", "relative_lower", "relative_upper"):
            assert row[column] == alone.table.iloc[0][column], (value, column)
        mine = sliced.looks[sliced.looks["slice"] == value]
        assert mine["p_value"].tolist() == alone.looks["p_value"].tolist() and len(mine) == 5
    whole = experiments.analyze(frame, **common, sequential="always-valid")
    assert sliced.table.iloc[0]["p_value"] == whole.table.iloc[0]["p_value"]
    # alpha spending: a slice is looked at on the experiment's schedule (its information fractions)
    spent = experiments.analyze(frame, **common, sequential="obrien-fleming", planned_units=4_000, slices=["device"])
    looks = spent.looks
    fractions = looks[looks["slice"] == "all"]["fraction"].to_numpy()
    assert fractions[-1] == 1.0   # every planned unit has come by the last day
    expected = experiments.boundaries(fractions, 0.05, "obrien-fleming")
    for value in ("all", "desktop", "mobile"):
        mine = looks[looks["slice"] == value]
        assert mine["fraction"].tolist() == fractions.tolist()
        assert mine["boundary"].to_numpy() == pytest.approx(expected, rel=1e-12)
        row = spent.table[spent.table["slice"] == value].iloc[0]
        assert row["looks"] == 5 and bool(row["significant"]) == bool(mine["crossed"].iloc[-1])
        assert row["rci_lower"] == pytest.approx(row["difference"] - expected[-1] * row["se"], rel=1e-12)
    alone = experiments.analyze(frame[frame["device"] == "mobile"], **common, sequential="obrien-fleming",
                           planned_units=4_000)
    mobile = looks[looks["slice"] == "mobile"]
    assert mobile["statistic"].tolist() == alone.looks["statistic"].tolist()
    # the effect on mobile crosses the boundary; desktop (no effect) does not
    table = spent.table.set_index("slice")
    assert table.loc["mobile", "first_crossing"] != "" and not table.loc["desktop", "significant"]


@pytest.mark.parametrize("trials", [pytest.param(120, marks=pytest.mark.slow), 40])
def test_sliced_alpha_spending_holds_its_error_rate_in_every_slice(trials: int) -> None:
    """Seeded A/A experiments over 5 daily looks, sliced by a device split 70/30: each slice
    spends alpha on the experiment's schedule, and its chance of ever crossing the
    O'Brien-Fleming boundary stays within binomial error of 5% (a slice's own information
    grows in step with the experiment's, so the whole's fractions are its own). 120 trials in
    the slow run (bound 10.97%); 40 in the default one (bound 15.3%)."""
    rng = np.random.default_rng(31)
    n = 800
    crossed = {"all": 0, "desktop": 0, "mobile": 0}
    for _ in range(trials):
        frame = pd.DataFrame({"user": np.arange(n), "arm": np.where(rng.random(n) < 0.5, "A", "B"),
                              "device": np.where(rng.random(n) < 0.7, "mobile", "desktop"),
                              "value": rng.normal(size=n),
                              "ts": pd.Timestamp("2026-03-01") + pd.to_timedelta(rng.integers(0, 5, n), unit="D")})
        table = experiments.analyze(frame, unit="user", variant="arm", metrics=["value"], timestamp="ts",
                               sequential="obrien-fleming", planned_units=n, slices=["device"]).table
        for row in table.to_dict("records"):
            crossed[row["slice"]] += bool(row["significant"])
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)
    assert all(count / trials < bound for count in crossed.values()), crossed
    assert sum(crossed.values()) > 0   # the boundary can be crossed: the test is not vacuous


def test_the_lift_plot_has_a_panel_per_metric_and_slice() -> None:
    from rankwise.report.ab import ab_html, lift_figure

    result = experiments.analyze(_daily_sliced_log(), unit="user", variant="arm", metrics=["value"], timestamp="ts",
                            sequential="always-valid", slices=["device"])
    titles = [ax.get_title() for ax in lift_figure(result).axes]
    assert titles == ["value: cumulative lift and its interval", "value in device=desktop: cumulative lift and "
                      "its interval", "value in device=mobile: cumulative lift and its interval"]
    assert "<img class='lift'" in ab_html(result)


def test_guardrails_are_non_inferiority_tests_with_relative_margins() -> None:
    from rankwise.stats.distributions import NORMAL

    rng = np.random.default_rng(6)
    n = 20_000
    data = {"u": np.arange(n), "v": np.where(np.arange(n) % 2, "A", "B"), "x": rng.normal(10, 2, n),
            "latency": rng.normal(100, 20, n)}
    result = experiments.analyze(data, "u", "v", ["x", "latency"], guardrails={"x": 0.01, "latency": 0.02},
                            lower_is_better=["latency"])
    table = result.table.set_index("metric")
    for metric, sign, margin in (("x", 1, 0.01), ("latency", -1, 0.02)):
        row = table.loc[metric]
        expected = NORMAL.sf((sign * row["relative"] + margin) / row["relative_se"])
        assert row["guardrail_p"] == pytest.approx(float(expected), rel=1e-12)
        assert row["margin"] == margin and row["guardrail"] == "passed"   # both within a fraction of 1%
    assert result.settings["guardrails"] == {"x": 0.01, "latency": 0.02}
    worse = dict(data, x=np.where(data["v"] == "B", data["x"] * 0.95, data["x"]))   # B is 5% worse
    row = experiments.analyze(worse, "u", "v", ["x"], guardrails={"x": 0.01}).table.iloc[0]
    assert row["guardrail"] == "failed" and row["guardrail_p"] > 0.5
    with pytest.raises(OptionError, match="guardrail for unknown metric 'y'"):
        experiments.analyze(data, "u", "v", ["x"], guardrails={"y": 0.01})
    with pytest.raises(OptionError, match=r"a relative worsening in \[0, 1\)"):
        experiments.analyze(data, "u", "v", ["x"], guardrails={"x": 2})


def test_a_guardrail_at_its_margin_passes_in_alpha_of_experiments() -> None:
    """True effect exactly -margin (the boundary of the null): 'passed' is a false positive and
    happens in about alpha = 5% of 200 seeded experiments (one-sided test)."""
    rng = np.random.default_rng(17)
    trials, passed = 200, 0
    codes = np.repeat([0, 1], 1000)
    for _ in range(trials):
        values = rng.normal(10.0, 2.0, 2000) * np.where(codes == 1, 0.98, 1.0)   # B is 2% worse
        moments = experiments.VariantMoments.from_codes(codes, values[:, None], ["A", "B"], ["x"])
        row = experiments.analyze(moments, metrics=["x"], guardrails={"x": 0.02}).table.iloc[0]
        passed += row["guardrail"] == "passed"
    assert abs(passed / trials - 0.05) < 3 * math.sqrt(0.05 * 0.95 / trials)


def test_mde_and_units_needed_come_from_the_data_and_deliver_their_power() -> None:
    """Each row's minimum detectable effect is (z_{1-alpha/2} + z_power) times its standard
    error; the units needed for a change equal statsmodels' NormalIndPower (within the one unit
    its far-tail term adds); and experiments of that size detect the change in about 80% of
    200 seeded runs."""
    from statsmodels.stats.power import NormalIndPower

    from rankwise.stats.power import detectable_multiplier

    rng = np.random.default_rng(9)
    n = 4000
    data = {"u": np.arange(n), "v": np.where(np.arange(n) % 2, "A", "B"), "x": rng.normal(10, 3, n),
            "clicks": rng.poisson(2, n), "views": rng.poisson(10, n) + 1}
    result = experiments.analyze(data, "u", "v", ["x", "ctr=clicks/views"], power=0.9)
    for row in result.table.to_dict("records"):
        assert row["mde"] == pytest.approx(detectable_multiplier(0.05, 0.9) * row["se"], rel=1e-12)
        assert row["mde_relative"] == pytest.approx(row["mde"] / row["control_value"], rel=1e-12)
    plan = result.units_needed(0.02, power=0.8).set_index("metric")
    row = result.table.set_index("metric").loc["x"]
    sd = math.sqrt((row["variance_control"] + row["variance"]) / 2)
    ratio = row["n"] / row["n_control"]
    theirs = NormalIndPower().solve_power(effect_size=0.02 * row["control_value"] / sd, alpha=0.05, power=0.8,
                                          ratio=ratio)
    if abs(row["variance_control"] - row["variance"]) / row["variance"] < 0.05:   # statsmodels pools the sd
        assert abs(plan.loc["x", "units_control"] - math.ceil(theirs)) <= 1 + 0.05 * theirs
    # the plan delivers its power: 200 experiments of the planned size with a true +2% change
    units = int(plan.loc["x", "units_control"])
    codes = np.repeat([0, 1], units)
    hits = 0
    for _ in range(200):
        values = rng.normal(10, 3, 2 * units) * np.where(codes == 1, 1.02, 1.0)
        moments = experiments.VariantMoments.from_codes(codes, values[:, None], ["A", "B"], ["x"])
        hits += experiments.analyze(moments, metrics=["x"]).table.iloc[0]["p_value"] < 0.05
    assert abs(hits / 200 - 0.8) < 3 * math.sqrt(0.8 * 0.2 / 200)
    with pytest.raises(OptionError, match="must be positive"):
        result.units_needed(0)


def test_the_former_online_package_re_exports_the_three_new_homes() -> None:
    """``rankwise.online`` (A/B tests, interleaving and counterfactual estimation until they split
    by subject) still gives every public name, the very objects of their new packages."""
    from rankwise import counterfactual, interleaving, online

    homes = (experiments, interleaving, counterfactual)
    for name in online.__all__:
        owners = [home for home in homes if name in home.__all__]
        assert len(owners) == 1, name
        assert getattr(online, name) is getattr(owners[0], name), name
