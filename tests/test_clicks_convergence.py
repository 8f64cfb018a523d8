"""EM's stopping rule: each pass records its largest parameter move; a fit stops when the
log-likelihood and the parameters have settled (``parameter_tolerance``, 1e-4), the iteration
cap is a guard that warns, and a settled UBM fit is closer to the truth than one the earlier
rule (the log-likelihood alone, 50 passes) stopped."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise import clicks
from rankwise.errors import RankwiseError

RANKS, DOCS = 5, 8
ALPHA = np.array([0.9, 0.75, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
GAMMA = np.array([1.0, 0.8, 0.6, 0.45, 0.3])
# UBM's examination [rank, previous click rank (0: none)]: 0.9 x PBM's without a click above,
# PBM's at the distance from the previous click after one
UBM_GAMMA = np.array([[1.0 if r == 0 else 0.9 * GAMMA[r] if p == 0 else GAMMA[r - p] if p <= r else 0.0
                       for p in range(RANKS)] for r in range(RANKS)])


def _ubm_log(sessions: int, seed: int) -> clicks.ClickLog:
    """UBM sessions simulated here from the definition: one query, 8 documents, 5 shown in a
    random order; examined by rank and previous click, clicked if also attracted."""
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((sessions, DOCS)), axis=1)[:, :RANKS]
    alpha = ALPHA[order]
    click = np.zeros((sessions, RANKS), dtype=int)
    previous = np.zeros(sessions, dtype=int)
    for r in range(RANKS):
        click[:, r] = (rng.random(sessions) < UBM_GAMMA[r, previous]) & (rng.random(sessions) < alpha[:, r])
        previous = np.where(click[:, r] == 1, r + 1, previous)
    return clicks.ClickLog.from_arrays(["q"] * sessions, [[f"d{d}" for d in row] for row in order], click.tolist())


def _errors(model: clicks.ClickModel) -> tuple[float, float]:
    """The largest errors of attractiveness and of the reachable examination cells."""
    order = np.argsort([int(model.doc_ids[d][1:]) for d in model.pair_doc])
    reachable = np.tril(np.ones((RANKS, RANKS), dtype=bool))
    return (float(np.abs(np.asarray(model.alpha)[order] - ALPHA).max()),
            float(np.abs(model.gamma_matrix - UBM_GAMMA)[reachable].max()))


def test_every_pass_records_its_largest_parameter_move() -> None:
    model = clicks.UBM()
    vectors: list[np.ndarray] = []
    model.fit(_ubm_log(3_000, 0), iterations=5, progress=lambda entry: vectors.append(model.parameter_vector()),
              acceleration="none")
    moves = [entry["parameter_change"] for entry in model.history]
    assert moves[0] == np.inf   # the first pass has no parameters before it
    for k in range(1, 5):
        assert moves[k] == pytest.approx(np.abs(vectors[k] - vectors[k - 1]).max(), rel=1e-12)
        assert 0 < moves[k] < 1


def test_a_fit_stops_only_when_no_parameter_moves() -> None:
    log = _ubm_log(20_000, 1)
    settled = clicks.UBM().fit(log)   # the default rule: parameters within 1e-4 of EM's limit
    assert settled.history[-1]["parameter_distance"] < 1e-4 and not settled.warnings
    # the earlier rule, the log-likelihood alone at most 50 passes, stops UBM at its cap, short
    # of the maximum and further from the truth
    early = clicks.UBM().fit(log, iterations=50, parameter_tolerance=float("inf"), acceleration="none")
    assert len(early.history) == 50 and early.warnings
    plain = clicks.UBM().fit(log, acceleration="none")
    assert len(plain.history) > 50 and not plain.warnings
    assert max(_errors(settled)) < max(_errors(early)) and max(_errors(plain)) < max(_errors(early))
    assert max(_errors(settled)) < 0.05
    # SQUAREM (the default) reaches plain EM's limit, within the tolerance, in a third of the passes
    assert np.abs(settled.parameter_vector() - plain.parameter_vector()).max() < 2e-4
    assert 3 * len(settled.history) < len(plain.history)


def test_the_cap_warns_and_names_both_tolerances() -> None:
    model = clicks.UBM().fit(_ubm_log(3_000, 2), iterations=3, parameter_tolerance=1e-4)
    assert len(model.history) == 3
    assert any("iteration cap (3)" in w and "from its limit" in w for w in model.warnings)


def test_the_parameter_tolerance_is_a_checked_hyperparameter(rankwise_cli, tmp_path) -> None:
    from pathlib import Path

    kind, values = clicks.MODELS.parse("ubm(parameter_tolerance=1e-4)")
    assert kind.fit_options(values)["parameter_tolerance"] == 1e-4
    with pytest.raises(RankwiseError, match="parameter_tolerance"):
        clicks.MODELS.parse("ubm(parameter_tolerance=-1)")
    log = Path(__file__).parent / "data" / "clicks" / "clara2_head.tsv"
    out = tmp_path / "m.json"
    assert rankwise_cli(["clicks", "fit", str(log), "--model", "ubm", "--parameter-tolerance", "-1", "-o",
                         str(out)]) == 2
    assert not out.exists()
    assert rankwise_cli(["clicks", "fit", str(log), "--model", "ubm", "--parameter-tolerance", "1e-5",
                         "--quiet", "-o", str(out)]) == 0
    assert clicks.load_model(out).history[-1]["parameter_distance"] < 1e-5
