"""Every warning in every format: each command below is given data that makes it warn, and is
run in every value of its ``--format`` (read from the command itself, so a new format is walked
too) with ``-o``; the written file must hold the warning. The one exception is ``trec``, whose
bytes are trec_eval's own (its warnings go to standard error)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

DATA = Path(__file__).resolve().parent / "data"
EXEMPT = {"trec"}   # trec_eval's output, byte for byte


def _formats(path: list[str]) -> list[str]:
    import importlib

    import typer.main

    from rankwise.cli.entry import COMMAND_MODULES

    importlib.import_module(f"rankwise.cli.{COMMAND_MODULES[path[0]]}")
    from rankwise.cli.app import app

    command = typer.main.get_command(app)
    for word in path:
        command = command.commands[word]
    option = next(p for p in command.params if "--format" in p.opts)
    return [c for c in option.type.choices if c not in EXEMPT]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("warned")
    files = {name: folder / (name if name.startswith(("qrels", "run")) else f"{name}.csv")
             for name in ("qrels", "run_a", "run_b", "srm", "reco", "train", "log", "policy", "experiments")}
    # CLARA 2's head: clicks on documents their session never showed (left out, warned), and a model
    files["clicks"] = folder / "clicks.tsv"
    files["clicks"].write_bytes((DATA / "clicks" / "clara2_head.tsv").read_bytes())
    files["model"] = folder / "model.json"
    from rankwise.clicks import PBM, read_log, save_model

    save_model(PBM().fit(read_log(files["clicks"]), iterations=3), files["model"])
    files["qrels"].write_text("q1 0 a 1\nq1 0 b 0\nq2 0 a 1\n")
    # q9 has no judgments: "1 query(ies) of the run have no judgments and were left out"
    files["run_a"].write_text("q1 Q0 a 1 2 A\nq1 Q0 b 2 1 A\nq2 Q0 b 1 1 A\nq9 Q0 a 1 1 A\n")
    files["run_b"].write_text("q1 Q0 b 1 2 B\nq1 Q0 a 2 1 B\nq2 Q0 a 1 1 B\nq9 Q0 a 1 1 B\n")
    rng = np.random.default_rng(1)   # a third of the users in a, two thirds in b: a sample ratio mismatch
    users = rng.integers(0, 1000, 3000)
    pd.DataFrame({"user": users, "variant": np.where(users % 3 == 0, "a", "b"),
                  "event": rng.choice(["click", "view"], 3000)}).to_csv(files["srm"], index=False)
    # item z is recommended but never trained on: outside the catalogue
    pd.DataFrame({"user": ["u1", "u1", "u2", "u2"], "item": ["a", "z", "b", "a"], "score": [2, 1, 2, 1]}) \
        .to_csv(files["reco"], index=False)
    pd.DataFrame({"user": ["u1", "u2", "u2"], "item": ["a", "b", "a"]}).to_csv(files["train"], index=False)
    # action 3 is logged, never played by the target policy
    pd.DataFrame({"action": [0, 1, 2, 3] * 20, "reward": [1, 0, 0, 1] * 20, "pscore": 0.25}) \
        .to_csv(files["log"], index=False)
    pd.DataFrame({"action": [0, 1, 2], "probability": [0.5, 0.25, 0.25]}).to_csv(files["policy"], index=False)
    # e3 changed nothing offline: left out of the sign agreement
    pd.DataFrame({"experiment": ["e1", "e2", "e3", "e4", "e5"], "ndcg_delta": [0.01, -0.02, 0.0, 0.03, 0.02],
                  "ctr_delta": [0.002, -0.001, 0.001, 0.004, 0.001]}).to_csv(files["experiments"], index=False)
    return files


CASES = {
    "evaluate": (["evaluate", "{qrels}", "{run_a}", "-m", "map"], "have no judgments and were left out"),
    "compare": (["compare", "{qrels}", "{run_a}", "{run_b}", "-m", "map"], "have no judgments and were left out"),
    "ab": (["ab", "{srm}", "--unit", "user", "-m", "clicks=count(click)"], "sample ratio mismatch"),
    "beyond": (["beyond", "{reco}", "-m", "coverage@2", "--train", "{train}"], "not in the catalogue"),
    "ope": (["ope", "{log}", "--policy", "{policy}", "--no-position"], "never plays"),
    "offline-online": (["offline-online", "{experiments}", "--offline", "ndcg_delta", "--online", "ctr_delta"],
                       "left out of the sign agreement"),
    "clicks evaluate": (["clicks", "evaluate", "{clicks}", "--model", "{model}"], "were left out"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_format_carries_the_warnings(case, inputs, tmp_path, rankwise_cli, capsys) -> None:
    template, phrase = CASES[case]
    argv = [a.format(**{k: str(v) for k, v in inputs.items()}) for a in template]
    formats = _formats(argv[:2] if argv[0] == "clicks" else argv[:1])
    assert len(formats) >= 3
    for fmt in formats:
        out = tmp_path / f"out.{fmt}"
        assert rankwise_cli([*argv, "-f", fmt, "-o", str(out)]) == 0, (case, fmt, capsys.readouterr().err)
        text = out.read_text()
        if fmt == "json":
            assert any(phrase in w for w in json.loads(text)["warnings"]), (case, fmt)
        else:
            assert phrase in text, (case, fmt, text[:400])
        if fmt in ("csv", "statistics"):   # comment lines first; the table reads back with comment="#"
            lines = text.splitlines()
            assert lines[0].startswith("# warning: ") and not lines[-1].startswith("#")
            assert len(pd.read_csv(out, comment="#")) > 0


def test_statistics_written_with_their_warnings_read_back(inputs, tmp_path, rankwise_cli, capsys) -> None:
    """``-f statistics`` starts with the warnings as comments; ``ab --statistics`` reads the file
    back and gives the same comparison as the log itself."""
    stats = tmp_path / "stats.csv"
    argv = ["ab", str(inputs["srm"]), "--unit", "user", "-m", "clicks=count(click)"]
    assert rankwise_cli([*argv, "-f", "statistics", "-o", str(stats)]) == 0
    assert stats.read_text().startswith("# warning: sample ratio mismatch")
    capsys.readouterr()
    assert rankwise_cli([*argv, "-f", "csv"]) == 0
    from_log = capsys.readouterr().out
    assert rankwise_cli(["ab", str(stats), "--statistics", "-m", "clicks=count(click)", "-f", "csv"]) == 0
    from_statistics = capsys.readouterr().out
    import io

    columns = ["metric", "variant", "n_control", "n", "difference", "p_value"]
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(from_statistics), comment="#")[columns],
                                  pd.read_csv(io.StringIO(from_log), comment="#")[columns], rtol=1e-12)
