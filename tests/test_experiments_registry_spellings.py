"""A declared parameter can be given in the member's own spelling, as the docs teach
(``ips(clip=1.5)``, ``probabilistic(tau=2)``), and equals the keyword; naming it both ways is
refused."""

from __future__ import annotations

import pytest

from rankwise.counterfactual.estimators import estimate
from rankwise.errors import ParameterError
from rankwise.interleaving.interleave import interleave

REWARD, BEHAVIOR, TARGET = [1, 0, 1], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5]


def test_an_estimator_takes_its_parameter_in_its_spelling() -> None:
    # w = 2, 1, 2 clipped at 1.5: (1.5 + 0 + 1.5) / 3 = 1.0; unclipped (2 + 0 + 2) / 3
    assert estimate(REWARD, BEHAVIOR, TARGET, "ips(clip=1.5)")["value"] == 1.0
    assert estimate(REWARD, BEHAVIOR, TARGET, "ips", clip=1.5)["value"] == 1.0
    assert estimate(REWARD, BEHAVIOR, TARGET, "ips")["value"] == pytest.approx(4 / 3)
    assert estimate(REWARD, BEHAVIOR, TARGET, "ips(clip=1.5)")["clipped"] == 2
    with pytest.raises(ParameterError, match="clip given twice"):
        estimate(REWARD, BEHAVIOR, TARGET, "ips(clip=1.5)", clip=2.0)


def test_an_interleaving_method_takes_its_parameter_in_its_spelling() -> None:
    rankings = [["a", "b", "c", "d"], ["d", "c", "e", "f"]]
    for seed in range(20):
        spelled = interleave(rankings, "probabilistic(tau=2)", rng=seed)
        keyword = interleave(rankings, "probabilistic", tau=2.0, rng=seed)
        assert spelled.docs == keyword.docs
    assert any(interleave(rankings, "probabilistic(tau=0.1)", rng=s).docs != interleave(rankings, "probabilistic",
                                                                                         tau=8.0, rng=s).docs
               for s in range(20))
