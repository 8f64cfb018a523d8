"""The tests of ``compare`` dispatch through their registry: the member looked up is called with
the parameters its spelling gives (no branch on a test's name), so a test with a parameter of a
new name, registered in one line, works at once through ``rankwise.compare``, through
``beyond``'s paired tests and on the command line."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.comparison import COMPARISON_TESTS, compare
from rankwise.params import Param
from rankwise.stats.distributions import sign_test_p
from rankwise.stats.paired import PAIRED_TESTS, ComparisonTest

QRELS = {f"q{i}": {"a": 1, "b": 1} for i in range(8)}
# run y ranks the relevant document first on every query; x puts an irrelevant one first on q0-q5
RUNS = {"x": {q: ({"z": 3.0, "a": 2.0} if int(q[1:]) < 6 else {"a": 3.0, "z": 2.0}) for q in QRELS},
        "y": {q: {"a": 3.0, "z": 2.0} for q in QRELS}}


def margin_sign(a, b, /, *, resamples, seed, progress, margin=0.0):
    """Sign test of the differences beyond ``margin`` (ties within it left out)."""
    d = np.asarray(b) - np.asarray(a)
    wins, losses = int((d > margin).sum()), int((d < -margin).sum())
    return sign_test_p(wins, losses)


@pytest.fixture()
def registered(monkeypatch):
    member = ComparisonTest("margin-sign", margin_sign, "Sign test beyond a margin.",
                            (Param("margin", float, 0.0, "differences within it count as ties", low=0),),
                            reference="Author 2026")
    for registry in (PAIRED_TESTS, COMPARISON_TESTS):
        monkeypatch.setattr(registry, "_members", dict(registry._members))
        monkeypatch.setattr(registry, "_keys", dict(registry._keys))
        registry.register(member)
    return member


def test_a_new_paired_test_with_its_own_parameter_runs_through_compare(registered) -> None:
    # recip_rank: x scores 1/2 on q0-q5 and 1 on q6-q7, y scores 1 everywhere: 6 wins of 0.5, 2 ties
    table = compare(QRELS, RUNS, "recip_rank", test="margin-sign(margin=0.25)").table
    assert table["p_value"].iloc[0] == pytest.approx(sign_test_p(6, 0))     # 2 x 1/64
    # beyond the margin of 0.6 no query differs: every query a tie, p = 1
    assert compare(QRELS, RUNS, "recip_rank", test="margin-sign(margin=0.6)").table["p_value"].iloc[0] == 1.0
    with pytest.raises(Exception, match="margin"):
        compare(QRELS, RUNS, "recip_rank", test="margin-sign(margin=-1)")


def test_every_registered_test_runs_through_compare() -> None:
    for name in COMPARISON_TESTS.names():
        comparison = compare(QRELS, RUNS, "recip_rank", test=name, permutations=200)
        assert comparison.test == name
        assert 0 < comparison.table["p_value"].iloc[0] <= 1, name
        # the tests over all systems control the family-wise error themselves
        assert comparison.correction == ("none" if COMPARISON_TESTS.get(name).over_all_systems else "holm")
