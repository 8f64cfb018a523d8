"""Simulated users come from one registry: the simulator dispatches through it (no hand list
of names), a member's parameter is given in its spelling (``dbn(continuation=0.5)``), a typo is
refused with a suggestion before any work, and a new member is one function and one
registration, taken at once by ``user_model`` and by ``rankwise interleave simulate``."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankwise.clicks import ClickLog
from rankwise.errors import RankwiseError
from rankwise.interleaving import simulation as sim
from rankwise.interleaving.simulated_users import user_model

QRELS = {"q1": {"a": 3, "b": 0}}


def test_the_dbn_users_continuation_is_a_declared_parameter() -> None:
    log = ClickLog.from_arrays(["q1"], [["a", "b"]], [[0, 0]])
    patterns = sim.click_patterns(2)
    # a (label 3) attracts and satisfies with 0.52, b (label 0) with 0.1; after a click on a that
    # does not satisfy (0.48), the user goes on with the continuation: P(click a, click b) =
    # 0.52 x 0.48 x gamma x 0.1
    for gamma in (0.9, 0.5):
        model = user_model(f"dbn(continuation={gamma})", QRELS, log)
        probs = sim.pattern_probabilities(model, log, log.pairs[:1], patterns)[0]
        assert probs[3] == pytest.approx(0.52 * 0.48 * gamma * 0.1)
    with pytest.raises(RankwiseError, match=r"--click-model: unknown simulated user 'dbm'; did you mean .*'dbn'"):
        user_model("dbm", QRELS, log)
    with pytest.raises(RankwiseError, match="continuation"):
        user_model("dbn(continuation=2)", QRELS, log)


def test_the_command_takes_the_spelling_and_names_the_typo(rankwise_cli, capsys) -> None:
    root = Path(__file__).resolve().parent.parent / "examples" / "dl19"
    argv = ["interleave", "simulate", str(root / "qrels.dl19-passage.txt"), str(root / "BM25.dl19.trec"),
            str(root / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec"), "--impressions", "20", "--repetitions", "5"]
    assert rankwise_cli([*argv, "--click-model", "cascad"]) == 2
    assert "did you mean 'cascade'" in capsys.readouterr().err
