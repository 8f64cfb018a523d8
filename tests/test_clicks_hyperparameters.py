"""Every hyperparameter of every ``clicks`` subcommand is checked before any work: a bad value
ends with exit status 2 and a message naming the option, nothing is written; seeds take any
integer; and a model written with any accepted prior loads back, from the CLI and from Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankwise import clicks
from rankwise.errors import RankwiseError

LOG = Path(__file__).resolve().parent / "data" / "clicks" / "clara2_head.tsv"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("models")
    out = {}
    for model in ("pbm", "global-ctr"):
        out[model] = folder / f"{model}.json"
        clicks.save_model(clicks.MODELS.parse(model)[0].build().fit(clicks.read_log(str(LOG)), iterations=3),
                          out[model])
    run = folder / "run.trec"
    run.write_text("".join(f"q1 Q0 d{i} {i + 1} {10 - i} r\n" for i in range(5)))
    out["run"] = run
    return out


# (arguments after "clicks", text the error must contain); {x} are the fixture's files, {out} an output
BAD: dict[str, tuple[list[str], str]] = {
    "prior 1,0": (["fit", "{log}", "--model", "dbn", "--prior", "1,0", "-o", "{out}"], "prior"),
    "prior 5,1": (["fit", "{log}", "--model", "pbm", "--prior", "5,1", "-o", "{out}"], "prior"),
    "prior inf,1": (["fit", "{log}", "--model", "ccm", "--prior", "inf,1", "-o", "{out}"], "prior"),
    "prior 0,0": (["fit", "{log}", "--model", "cascade", "--prior", "0,0", "-o", "{out}"], "prior"),
    "prior -1,2": (["fit", "{log}", "--model", "ubm", "--prior", "-1,2", "-o", "{out}"], "prior"),
    "prior nan,1": (["fit", "{log}", "--model", "sdbn", "--prior", "nan,1", "-o", "{out}"], "prior"),
    "prior one number": (["fit", "{log}", "--model", "dcm", "--prior", "1", "-o", "{out}"], "prior"),
    "iterations 0": (["fit", "{log}", "--model", "pbm", "--iterations", "0", "-o", "{out}"], "iterations"),
    "tolerance -1": (["fit", "{log}", "--model", "pbm", "--tolerance", "-1", "-o", "{out}"], "tolerance"),
    "fit chunk-size 0": (["fit", "{log}", "--model", "pbm", "--chunk-size", "0", "-o", "{out}"], "--chunk-size"),
    "fit workers 0": (["fit", "{log}", "--model", "pbm", "--workers", "0", "-o", "{out}"], "--workers"),
    "evaluate chunk-size 0": (["evaluate", "{log}", "--model", "{pbm}", "--chunk-size", "0"], "--chunk-size"),
    "rank level 0": (["rank", "--model", "{pbm}", "--bound", "lower", "--level", "0", "-o", "{out}"], "--level"),
    "rank level 1": (["rank", "--model", "{pbm}", "--bound", "lower", "--level", "1", "-o", "{out}"], "--level"),
    "rank bound": (["rank", "--model", "{pbm}", "--bound", "upper", "-o", "{out}"], "--bound"),
    "rank lower of one rate": (["rank", "--model", "{global-ctr}", "--bound", "lower", "-o", "{out}"],
                               "every document ties"),
    "simulate sessions 0": (["simulate", "{run}", "--model", "{pbm}", "--sessions", "0", "-o", "{out}"],
                            "--sessions"),
    "simulate list-size 0": (["simulate", "{run}", "--model", "{pbm}", "--list-size", "0", "-o", "{out}"],
                             "--list-size"),
    "simulate depth -1": (["simulate", "{run}", "--model", "{pbm}", "--depth", "-1", "-o", "{out}"], "--depth"),
    "split share": (["split", "{log}", "--train", "{out}", "--held-out", "{out2}", "--test-share", "1.5"],
                    "--test-share"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_hyperparameter_is_refused_before_any_work(case, fitted, tmp_path, rankwise_cli, capsys) -> None:
    argv, message = BAD[case]
    out, out2 = tmp_path / "out.json", tmp_path / "out2.parquet"
    files = {"log": LOG, "out": out, "out2": out2, **fitted}
    status = rankwise_cli(["clicks", *(a.format(**files) for a in argv)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert message in err and "Traceback" not in err
    assert not out.exists() and not out2.exists()


@pytest.mark.parametrize("seed", ["-5", "0", str(2**70)])
def test_seeds_take_any_integer(seed, fitted, tmp_path, rankwise_cli, capsys) -> None:
    simulated = tmp_path / "sim.parquet"
    assert rankwise_cli(["clicks", "simulate", str(fitted["run"]), "--model", str(fitted["pbm"]), "--sessions", "3",
                         "--seed", seed, "-o", str(simulated)]) == 0, capsys.readouterr().err
    assert rankwise_cli(["clicks", "split", str(LOG), "--seed", seed, "--train", str(tmp_path / "a.parquet"),
                         "--held-out", str(tmp_path / "b.parquet")]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("name", clicks.registry.fittable())
def test_every_model_written_with_a_fixed_prior_loads_back(name, tmp_path) -> None:
    member = clicks.MODELS.get(name)
    takes_prior = any(p.name == "prior" for p in member.params)
    model = member.build({"prior": (1.0, 2.0)} if takes_prior else {}).fit(clicks.read_log(str(LOG)), iterations=3)
    path = tmp_path / f"{name}.json"
    clicks.save_model(model, path)
    again = clicks.load_model(path)
    assert type(again) is type(model)
    if takes_prior:
        with pytest.raises(RankwiseError, match="prior"):
            member.build({"prior": (0.0, 0.0)})


def test_python_refuses_the_docstrings_old_prior() -> None:
    with pytest.raises(RankwiseError, match=r"0 < CLICKS < IMPRESSIONS"):
        clicks.CascadeModel(prior=(0, 0))


def test_a_fit_stopped_by_the_iteration_cap_says_so(tmp_path, rankwise_cli, capsys) -> None:
    log = clicks.read_log(str(LOG))
    capped = clicks.UBM().fit(log, iterations=3)
    assert len(capped.history) == 3 and "iteration cap (3) before converging" in capped.warnings[0]
    converged = clicks.UBM().fit(log, iterations=2000, tolerance=1e-3, parameter_tolerance=1e-3)
    assert len(converged.history) < 2000 and converged.warnings == []
    assert rankwise_cli(["clicks", "fit", str(LOG), "--model", "ubm", "--iterations", "2", "--quiet", "-o",
                         str(tmp_path / "m.json")]) == 0
    assert "warning: ubm: EM stopped at the iteration cap (2)" in capsys.readouterr().err
