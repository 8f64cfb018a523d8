"""Paired tests, intervals and corrections agree with scipy / statsmodels computed directly."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rankwise.stats import corrections, intervals, many, paired

RNG = np.random.default_rng(42)
A = RNG.uniform(0, 1, 50)
B = np.clip(A + RNG.normal(0.05, 0.1, 50), 0, 1)


def test_t_wilcoxon_sign_match_scipy() -> None:
    assert paired.t_test(A, B) == pytest.approx(stats.ttest_rel(B, A).pvalue, abs=1e-12)
    assert paired.wilcoxon_test(A, B) == pytest.approx(stats.wilcoxon(B - A).pvalue, abs=1e-12)
    d = B - A
    expected = stats.binomtest(int((d > 0).sum()), int((d != 0).sum()), 0.5).pvalue
    assert paired.sign_test(A, B) == pytest.approx(expected, abs=1e-12)


def _exact_randomization(d: np.ndarray) -> float:
    d = d[d != 0]
    obs = abs(d.sum())
    sums = [abs(sum(s * x for s, x in zip(signs, d, strict=True)))
            for signs in itertools.product((-1, 1), repeat=len(d))]
    return float(np.mean([s >= obs - 1e-12 for s in sums]))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 2)), min_size=1, max_size=10))
def test_randomization_is_exact_on_small_inputs(diffs: list[float]) -> None:
    d = np.array(diffs)
    assert paired.randomization_test(np.zeros(len(d)), d) == pytest.approx(_exact_randomization(d))


def test_sampled_randomization_is_deterministic_and_close_to_exact() -> None:
    a, b = A[:20], B[:20]  # 2^20 patterns: sampled
    p1 = paired.randomization_test(a, b, permutations=20_000, seed=7)
    assert p1 == paired.randomization_test(a, b, permutations=20_000, seed=7)
    exact = _exact_randomization(b - a)  # about a million patterns: fine once
    assert p1 == pytest.approx(exact, abs=0.01)


def test_bootstrap_test_is_deterministic_and_sensible() -> None:
    p = paired.bootstrap_test(A, B, resamples=5000, seed=3)
    assert p == paired.bootstrap_test(A, B, resamples=5000, seed=3)
    assert p < 0.05 and paired.t_test(A, B) < 0.05
    assert paired.bootstrap_test(A, A, resamples=100) == 1.0  # no difference at all


def test_intervals_and_effect_size() -> None:
    d = B - A
    res = stats.ttest_rel(B, A).confidence_interval(0.95)
    low, high = intervals.t_interval(d)
    assert (low, high) == (pytest.approx(res.low, abs=1e-12), pytest.approx(res.high, abs=1e-12))
    ref = stats.bootstrap((d,), np.mean, n_resamples=3000, method="BCa",
                          random_state=np.random.default_rng(5)).confidence_interval
    got = intervals.bootstrap_interval(d, method="BCa", resamples=3000, seed=5)
    assert got == (pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12))
    assert intervals.cohens_d(d) == pytest.approx(d.mean() / d.std(ddof=1))


@pytest.mark.parametrize("name,method", [("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(name: str, method: str) -> None:
    p = np.array([0.001, 0.02, 0.04, 0.3, 0.049])
    assert corrections.correct(p, name) == pytest.approx(multipletests(p, method=method)[1], abs=1e-15)


def test_many_systems() -> None:
    m = np.column_stack([A, B, A + 0.001])
    ref = stats.tukey_hsd(A, B, A + 0.001).pvalue
    assert many.tukey_hsd(m) == pytest.approx(ref, abs=1e-12)
    assert many.friedman(m) == pytest.approx(stats.friedmanchisquare(A, B, A + 0.001).pvalue)
    nem = many.nemenyi(m)
    assert nem.shape == (3, 3) and nem[0, 2] < 0.05  # A + 0.001 always ranks above A


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1e-6, 0.01, 0.02, 0.2, 0.5, 0.9, 1.0]) | st.floats(0, 1), min_size=1,
                max_size=30))
def test_holm_equals_statsmodels_with_ties(p: list[float]) -> None:
    from unittest import mock

    arr = np.array(p)
    # statsmodels' holm runs gc.collect() on every call: over a whole test session's heap that
    # is a second or more each, and it changes nothing here
    with mock.patch("gc.collect"):
        expected = multipletests(arr, method="holm")[1]
    assert corrections.holm(arr) == pytest.approx(expected, abs=1e-15)
