"""SQUAREM (``rankwise.clicks.acceleration``): the jump of a hand-computed linear map lands on its
limit, a jump below theta_1's log-likelihood is undone (under the empirical prior: only when its
pass also moves further than the pass from theta_1), every EM model reaches plain EM's limit
within the parameter tolerance, and ``acceleration="none"`` is plain EM, pass for pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise import clicks
from rankwise.clicks.acceleration import ACCELERATIONS, Squarem, set_parameter_vector
from rankwise.errors import RankwiseError

LOG = Path(__file__).parent / "data" / "clicks" / "clara2_head.tsv"


class Scalar:
    """The smallest model SQUAREM needs: one probability ``alpha``."""

    pair_fields = {"attractiveness": "alpha"}
    fields: dict = {}

    def __init__(self, alpha: float) -> None:
        self.alpha = np.array([alpha])

    def _snapshot(self) -> dict:
        return {"alpha": self.alpha.copy()}


def _pass(model: Scalar, squarem: Squarem, start: float, end: float, ll: float) -> str:
    """One EM pass from ``start`` to ``end`` (the model holds ``end`` after its M-step), the
    log-likelihood of ``start`` being ``ll``."""
    model.alpha = np.array([end])
    return squarem.after_pass(np.array([start]), np.array([end]), ll)


def test_the_jump_of_a_linear_map_lands_on_its_limit() -> None:
    # EM as the map x -> 0.25 + 0.6 (x - 0.25): from 0.5, theta_1 = 0.4, theta_2 = 0.34;
    # r = -0.1, v = 0.34 - 0.8 + 0.5 = 0.04, a = -|r| / |v| = -2.5,
    # jump = 0.5 - 2 (-2.5)(-0.1) + 6.25 x 0.04 = 0.5 - 0.5 + 0.25 = 0.25, the limit
    model = Scalar(0.5)
    squarem = Squarem(model)
    assert _pass(model, squarem, 0.5, 0.4, -2.0) == "plain"
    assert _pass(model, squarem, 0.4, 0.34, -1.9) == "extrapolated"
    assert model.alpha.tolist() == pytest.approx([0.25], abs=1e-15)
    assert squarem.rate == pytest.approx(0.6)                        # 0.06 / 0.1
    # the next pass starts at the jump and scores at least theta_1's -1.9: kept
    assert _pass(model, squarem, 0.25, 0.25, -1.8) == "plain"


def test_a_jump_below_theta_1_is_undone() -> None:
    model = Scalar(0.5)
    squarem = Squarem(model)
    _pass(model, squarem, 0.5, 0.4, -2.0)
    _pass(model, squarem, 0.4, 0.34, -1.9)     # the model holds the jump, 0.25
    assert _pass(model, squarem, 0.25, 0.3, -1.95) == "undone"
    assert model.alpha.tolist() == [0.34] and squarem.undone == 1     # back at theta_2
    # a fit that ends on an unscored jump settles back at theta_2 too
    _pass(model, squarem, 0.34, 0.3, -1.9)
    assert _pass(model, squarem, 0.3, 0.28, -1.85) == "extrapolated"
    assert model.alpha[0] != pytest.approx(0.28)
    squarem.settle()
    assert model.alpha.tolist() == [0.28]


class EmpiricalScalar(Scalar):
    """``Scalar`` under the empirical prior: its passes need not raise the log-likelihood."""

    prior = "empirical"


def test_under_the_empirical_prior_a_jump_below_theta_1_is_kept_if_its_pass_moves_less() -> None:
    # the linear map of the first test: theta_1 = 0.4, theta_2 = 0.34, the pass from theta_1
    # moved 0.06; the jump lands on 0.25
    model = EmpiricalScalar(0.5)
    squarem = Squarem(model)
    _pass(model, squarem, 0.5, 0.4, -2.0)
    _pass(model, squarem, 0.4, 0.34, -1.9)
    # from the jump the pass moves 0.01 (< 0.06): kept, though its log-likelihood is below theta_1's
    assert _pass(model, squarem, 0.25, 0.26, -1.95) == "plain" and squarem.undone == 0
    # that pass opens the next cycle (theta = 0.25, theta_1 = 0.26); theta_2 = 0.266:
    # r = 0.01, v = 0.266 - 0.52 + 0.25 = -0.004, a = -2.5,
    # jump = 0.25 + 0.05 - 6.25 x 0.004 = 0.275; the pass from theta_1 moved 0.006
    assert _pass(model, squarem, 0.26, 0.266, -1.9) == "extrapolated"
    assert model.alpha.tolist() == pytest.approx([0.275], abs=1e-12)
    # below theta_1's log-likelihood and the pass from the jump moves 0.01 (> 0.006): undone,
    # back at theta_2
    assert _pass(model, squarem, 0.275, 0.285, -2.5) == "undone"
    assert model.alpha.tolist() == [0.266] and squarem.undone == 1
    # a jump whose pass moves further but scores above theta_1 is kept, as under any prior
    _pass(model, squarem, 0.266, 0.26, -1.9)
    _pass(model, squarem, 0.26, 0.266, -1.9)
    assert _pass(model, squarem, float(model.alpha[0]), float(model.alpha[0]) + 0.01, -1.0) == "plain"
    assert squarem.undone == 1


def _random_order_log(sessions: int = 40_000, seed: int = 3) -> clicks.ClickLog:
    """200 queries x 20 documents, 10 shown per session in random order, clicks from a DBN
    (attractiveness and satisfaction Beta(1, 2), continuation 0.9): the benchmark's log, small."""
    from rankwise.clicks.log import ClickLog

    rng = np.random.default_rng(seed)
    query = rng.integers(0, 200, sessions)
    shown = np.argsort(rng.random((sessions, 20)), axis=1)[:, :10]
    docs = [[f"d{q}-{d}" for d in row] for q, row in zip(query, shown, strict=True)]
    log = ClickLog.from_arrays([f"q{q}" for q in query], docs, np.zeros((sessions, 10), int))
    truth = clicks.DBN().fit(log, iterations=1)
    truth.alpha, truth.sigma, truth.gamma = rng.beta(1, 2, log.n_pairs), rng.beta(1, 2, log.n_pairs), 0.9
    return clicks.simulate(truth, log, seed=seed + 1)


def test_the_empirical_prior_converges_in_fewer_passes_with_squarem() -> None:
    # on a random-order log, plain EM's passes lower the log-likelihood on their way to the
    # limit (the prior is refitted each pass); judged by the log-likelihood, SQUAREM's jumps were
    # undone and PBM took 331 passes against plain EM's 229; with the residual's say, 57
    log = _random_order_log()
    plain = clicks.PBM().fit(log, acceleration="none", iterations=5000)
    fast = clicks.PBM().fit(log, iterations=5000)
    lls = [e["log_likelihood"] for e in plain.history]
    assert any(b < a for a, b in zip(lls, lls[1:], strict=False))
    assert not plain.warnings and not fast.warnings
    assert 3 * len(fast.history) < len(plain.history)
    assert np.abs(fast.parameter_vector() - plain.parameter_vector()).max() < 2.5e-4   # the same limit


def test_jumps_stay_inside_the_probabilities() -> None:
    # from 0.02: 0.011, 0.003 (r = -0.009, v = 0.001, a = -9): 0.02 - 0.162 + 0.081 < 0, clipped
    model = Scalar(0.02)
    squarem = Squarem(model)
    _pass(model, squarem, 0.02, 0.011, -1.0)
    assert _pass(model, squarem, 0.011, 0.003, -0.9) == "extrapolated"
    assert 0 < model.alpha[0] <= 1e-9


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6), st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3))
def test_set_parameter_vector_inverts_parameter_vector(alpha: list[float], gamma: list[float]) -> None:
    model = clicks.PBM()
    model.alpha, model.gamma = np.array(alpha), np.array(gamma)
    vector = model.parameter_vector()
    other = clicks.PBM()
    other.alpha, other.gamma = np.zeros(len(alpha)), np.zeros(3)
    set_parameter_vector(other, vector)
    assert other.alpha.tolist() == alpha and other.gamma.tolist() == gamma


@pytest.mark.parametrize("kind", ["pbm", "ubm", "dcm", "dbn", "ccm"])   # SDBN: benchmarks/click_recovery.py
def test_squarem_reaches_plain_ems_limit(kind: str) -> None:
    log = clicks.read_log(LOG)
    plain = clicks.MODELS[kind]().fit(log, acceleration="none", iterations=5000)
    fast = clicks.MODELS[kind]().fit(log, iterations=5000)
    assert not plain.warnings and not fast.warnings
    # both stop within 1e-4 of the limit: within 2e-4 of each other, to rounding of the stop
    assert np.abs(fast.parameter_vector() - plain.parameter_vector()).max() < 2.5e-4
    assert fast.history[-1]["log_likelihood"] == pytest.approx(plain.history[-1]["log_likelihood"], abs=5e-5)
    if kind in ("ubm", "pbm", "ccm", "dbn"):   # the slow ones: at least three times fewer passes
        assert 3 * len(fast.history) < len(plain.history)


def test_squarem_stops_within_the_parameter_tolerance_of_the_limit() -> None:
    # the limit: plain EM to 1e-8 (2,458 passes); SQUAREM at the default 1e-4 stops 2.9e-5 from
    # it in 92 passes; on the cycles' rate alone, without the plain passes that check a stop, it
    # stopped 4.1e-4 away
    log = clicks.read_log(LOG)
    limit = clicks.PBM().fit(log, acceleration="none", iterations=50_000, parameter_tolerance=1e-8, tolerance=1e-12)
    fast = clicks.PBM().fit(log, iterations=5000)
    assert not limit.warnings and not fast.warnings
    assert np.abs(fast.parameter_vector() - limit.parameter_vector()).max() < 1e-4
    assert len(fast.history) < 150


@pytest.mark.parametrize("kind", ["pbm", "ubm", "dcm", "sdbn", "dbn", "ccm"])
def test_every_em_model_stops_within_the_parameter_tolerance(kind: str) -> None:
    # the limit from a fit to 1e-8 (SQUAREM's, which for PBM lands within 1e-9 of plain EM's):
    # at the default 1e-4 the fits stop 2e-7 (DCM) to 6.4e-5 (UBM, DBN) from it
    log = clicks.read_log(LOG)
    limit = clicks.MODELS[kind]().fit(log, iterations=50_000, parameter_tolerance=1e-8, tolerance=1e-12)
    fast = clicks.MODELS[kind]().fit(log, iterations=5000)
    assert not limit.warnings and not fast.warnings
    assert np.abs(fast.parameter_vector() - limit.parameter_vector()).max() < 1e-4


def test_none_is_plain_em_pass_for_pass() -> None:
    log = clicks.read_log(LOG)
    first = clicks.UBM().fit(log, acceleration="none", iterations=30)
    second = clicks.UBM().fit(log, acceleration="none", iterations=30)
    assert [e["log_likelihood"] for e in first.history] == [e["log_likelihood"] for e in second.history]
    # SQUAREM's first jump follows the third pass: the first three passes are plain EM's, the
    # fourth starts from the jump
    fast = clicks.UBM().fit(log, iterations=30)
    plain = [e["log_likelihood"] for e in first.history]
    jumped = [e["log_likelihood"] for e in fast.history]
    assert jumped[:3] == plain[:3] and jumped[3] != plain[3]


def test_an_unknown_acceleration_is_refused_by_name(rankwise_cli, tmp_path) -> None:
    with pytest.raises(RankwiseError, match="squarem"):
        clicks.PBM().fit(clicks.read_log(LOG), acceleration="squaremm")
    out = tmp_path / "m.json"
    assert rankwise_cli(["clicks", "fit", str(LOG), "--model", "pbm", "--acceleration", "fast", "-o", str(out)]) == 2
    assert not out.exists()
    assert list(ACCELERATIONS.names()) == ["squarem", "none"]
