"""The one gateway for outputs, walked over every command that writes: an output naming one of
the command's inputs (directly, through a symlink, through a hard link) is refused and the input
left byte for byte; a write that fails (``/dev/full``) is a clean error with a non-zero exit; a
new writing option fails this file until it is registered in ``OUTPUT_OPTIONS`` and walked here.

Each case runs the real console entry point in this process (``rankwise.cli.entry.main``), the
door every command line goes through."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def _digest(path: Path) -> str:
    if path.is_dir():
        return ";".join(f"{p.relative_to(path)}:{_digest(p)}" for p in sorted(path.rglob("*")) if p.is_file())
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """Small inputs of every kind the writing commands read."""
    import pandas as pd

    folder = tmp_path_factory.mktemp("inputs")
    out: dict[str, Path] = {}
    for name, source in (("qrels", ROOT / "examples" / "qrels.test"), ("run", ROOT / "examples" / "results.test"),
                         ("clicks", DATA / "clicks" / "clara2_head.tsv"), ("events", DATA / "online" / "events.csv"),
                         ("reco", DATA / "recsys" / "reco.csv"), ("train", DATA / "recsys" / "train.csv")):
        out[name] = folder / source.name
        shutil.copy(source, out[name])
    out["run2"] = folder / "other.test"
    lines = [line.split() for line in out["run"].read_text().splitlines()]   # the scores reversed
    out["run2"].write_text("".join(f"{q} Q0 {d} {r} {-float(s)} OTHER\n" for q, _, d, r, s, _ in lines))
    out["bandit"] = folder / "bandit.csv"
    pd.DataFrame({"action": [i % 4 for i in range(80)], "reward": [i % 3 == 0 for i in range(80)],
                  "pscore": 0.25}).to_csv(out["bandit"], index=False)
    out["units"] = folder / "units.txt"
    out["units"].write_text("".join(f"u{i}\n" for i in range(50)))
    out["credits"] = folder / "credits.csv"
    out["credits"].write_text("A,B\n" + "1,0\n" * 8 + "0,1\n" * 2 + "0,0\n" * 2)
    out["experiments"] = folder / "experiments.csv"
    out["experiments"].write_text("experiment,ndcg_delta,ctr_delta\n" + "".join(
        f"e{i},{i * 0.01:.2f},{i * 0.002 + (i % 2) * 0.001:.4f}\n" for i in range(6)))
    out["database"] = folder / "events.ddb"   # read through --database and through an --ibis URL
    import duckdb

    with duckdb.connect(str(out["database"])) as connection:
        connection.execute(f"CREATE TABLE events AS SELECT * FROM read_csv_auto('{out['events']}')")
    out["corpus"] = folder / "corpus.jsonl"
    out["corpus"].write_text("".join(json.dumps({"id": f"d{i}", "title": f"red apple {i}", "body": "fruit"}) + "\n"
                                     for i in range(5)))
    return out


def _model(rankwise_cli, files, tmp: Path) -> Path:
    model = tmp / "model.json"
    assert rankwise_cli(["clicks", "fit", str(files["clicks"]), "--model", "pbm", "-q", "-o", str(model)]) == 0
    return model


def _index(rankwise_cli, files, tmp: Path) -> Path:
    index = tmp / "ix"
    assert rankwise_cli(["index", "build", str(files["corpus"]), "-o", str(index),
                                 "--fields", "title,body"]) == 0
    return index


def _spec(tmp: Path) -> Path:
    spec = tmp / "spec.json"
    spec.write_text(json.dumps({
        "requests": [{"id": "q", "template_id": "t", "params": {"q": "apple"},
                      "ratings": [{"_index": "ix", "_id": "d1", "rating": 1}]}],
        "templates": [{"id": "t", "template": {"source": {"query": {"match": {"title": "{{q}}"}}}}}],
        "metric": {"precision": {"k": 2}}}))
    return spec


# command -> (arguments before the output, the output option, the input it must never replace,
# whether the output is a directory). {name} is a file of the fixture; {model}, {index}, {spec}
# are made in the test's folder.
WRITERS: dict[str, tuple[list[str], str, str, bool]] = {
    "evaluate": (["evaluate", "{qrels}", "{run}", "-m", "map"], "-o", "run", False),
    "compare": (["compare", "{qrels}", "{run}", "{run2}", "-m", "map"], "-o", "run2", False),
    "plot": (["plot", "box", "{qrels}", "{run}", "{run2}", "-m", "ndcg@10"], "-o", "qrels", False),
    "report": (["report", "{qrels}", "{run}", "{run2}", "-m", "map"], "-o", "qrels", False),
    "fuse": (["fuse", "{run}", "{run2}"], "-o", "run", False),
    "ab": (["ab", "{events}", "--unit", "user_id", "-m", "clicks=count(click)"], "-o", "events", False),
    "ab --database": (["ab", "--database", "{database}", "--table", "events", "--unit", "user_id", "-m",
                       "clicks=count(click)"], "-o", "database", False),
    "ab --ibis": (["ab", "--ibis", "duckdb://{database}", "--table", "events", "--unit", "user_id", "-m",
                   "clicks=count(click)"], "-o", "database", False),
    "assign": (["assign", "{units}", "--experiment", "exp"], "-o", "units", False),
    "ope": (["ope", "{bandit}", "--policy", "uniform", "--no-position"], "-o", "bandit", False),
    "beyond": (["beyond", "{reco}", "-m", "coverage@5", "--train", "{train}"], "-o", "train", False),
    "beyond --plot": (["beyond", "{reco}", "-m", "ndcg@5", "-m", "coverage@5", "--train", "{train}",
                       "--held-out", "{train}"], "--plot", "reco", False),
    "agree": (["agree", "{qrels}", "{qrels}"], "-o", "qrels", False),
    "agree --plot": (["agree", "{qrels}", "{qrels}", "{run}", "{run2}"], "--plot", "run", False),
    "offline-online": (["offline-online", "{experiments}", "--offline", "ndcg_delta", "--online", "ctr_delta"], "-o",
                       "experiments", False),
    "offline-online --plot": (["offline-online", "{experiments}", "--offline", "ndcg_delta", "--online",
                               "ctr_delta"], "--plot", "experiments", False),
    "interleave compare": (["interleave", "compare", "{credits}"], "-o", "credits", False),
    "interleave simulate": (["interleave", "simulate", "{qrels}", "{run}", "{run2}", "--impressions", "20",
                             "--repetitions", "2"], "-o", "run", False),
    "interleave simulate --plot": (["interleave", "simulate", "{qrels}", "{run}", "{run2}", "--impressions", "20",
                                    "--repetitions", "2"], "--plot", "run2", False),
    "clicks fit": (["clicks", "fit", "{clicks}", "--model", "pbm", "-q"], "-o", "clicks", False),
    "clicks evaluate": (["clicks", "evaluate", "{clicks}", "--model", "{model}"], "-o", "clicks", False),
    "clicks evaluate --plot": (["clicks", "evaluate", "{clicks}", "--model", "{model}"], "--plot", "model", False),
    "clicks rank": (["clicks", "rank", "{clicks}", "--model", "{model}"], "-o", "model", False),
    "clicks simulate": (["clicks", "simulate", "{run}", "--model", "{model}"], "-o", "run", False),
    "clicks convert": (["clicks", "convert", "{clicks}"], "-o", "clicks", False),
    "clicks split --train": (["clicks", "split", "{clicks}", "--held-out", "{tmp}/held.tsv"], "--train", "clicks",
                             False),
    "clicks split --held-out": (["clicks", "split", "{clicks}", "--train", "{tmp}/train.tsv"], "--held-out", "clicks",
                                False),
    "index build": (["index", "build", "{corpus}", "--fields", "title,body"], "-o", "corpus", True),
    "rank-eval": (["rank-eval", "{spec}", "--index", "{index}", "--quiet"], "-o", "spec", False),
    "rank-eval --unrated-out": (["rank-eval", "{spec}", "--index", "{index}", "--quiet"], "--unrated-out", "spec",
                                False),
}


def _argv(rankwise_cli, files, tmp: Path, case: str) -> tuple[list[str], str, Path, bool]:
    template, option, protected, directory = WRITERS[case]
    names = {k: str(v) for k, v in files.items()}
    text = " ".join(template)
    if "{model}" in text:
        names["model"] = str(_model(rankwise_cli, files, tmp))
    if "{index}" in text:
        names["index"] = str(_index(rankwise_cli, files, tmp))
    if "{spec}" in text:
        names["spec"] = str(_spec(tmp))
    names["tmp"] = str(tmp)
    argv = [a.format(**names) for a in template]
    return argv, option, Path(names[protected]), directory


def _suffix(case: str, option: str) -> str:
    if option == "--plot" or case == "plot":
        return ".png"
    if case == "report":
        return ".html"
    if case.startswith("clicks") and option != "-o" or case in ("clicks convert", "clicks simulate"):
        return ".tsv"
    return ".out"


@pytest.mark.parametrize("case", sorted(WRITERS))
def test_no_command_writes_over_its_input(case, files, tmp_path, rankwise_cli) -> None:
    argv, option, protected, directory = _argv(rankwise_cli, files, tmp_path, case)
    # the invocation is valid: a fresh output is written
    fresh = tmp_path / ("fresh" if directory else f"fresh{_suffix(case, option)}")
    assert rankwise_cli([*argv, option, str(fresh)]) == 0, case
    assert fresh.exists()
    # the input itself, a symlink to it and a hard link to it: refused, the input unchanged
    link, hard = tmp_path / f"link{protected.suffix}", tmp_path / f"hard{protected.suffix}"
    link.symlink_to(protected)
    if not protected.is_dir():
        os.link(protected, hard)
    before = _digest(protected)
    for target in (protected, link, *([] if protected.is_dir() else [hard])):
        assert rankwise_cli([*argv, option, str(target)]) != 0, (case, target)
        assert _digest(protected) == before, (case, target)
    assert not [p for p in protected.parent.iterdir() if p.name.endswith(".part")]


def _output_pairs() -> list[tuple[str, str, str]]:
    """(case, first option, second option) for every command of ``WRITERS`` with two outputs."""
    options: dict[str, list[str]] = {}
    for case, (_, option, _, directory) in WRITERS.items():
        if not directory:
            options.setdefault(case.split(" --")[0], []).append(option)
    return [(command, first, second) for command, listed in sorted(options.items())
            for first, second in zip(listed, listed[1:], strict=False)]


@pytest.mark.parametrize(("command", "first", "second"), _output_pairs())
def test_two_outputs_never_name_one_file(command, first, second, files, tmp_path, rankwise_cli, capsys) -> None:
    """Two outputs of one command naming one file (directly or through a symlink) are refused
    before anything runs: ``-o out.png --plot out.png`` left the table where the plot was."""
    case = next(c for c in WRITERS if c.split(" --")[0] == command and WRITERS[c][1] == first)
    argv, _, _, _ = _argv(rankwise_cli, files, tmp_path, case)
    given = [i for i, a in enumerate(argv) if a in (first, second)]   # clicks split names its other output
    argv = [a for i, a in enumerate(argv) if i not in given and i - 1 not in given]
    target, link = tmp_path / "shared.png", tmp_path / "link.png"
    link.symlink_to(target)
    for other in (target, link):
        capsys.readouterr()
        assert rankwise_cli([*argv, first, str(target), second, str(other)]) == 2, (command, other)
        assert f"{first} and {second} name one file" in capsys.readouterr().err
        assert not target.exists()


DIRECTORY_READERS = {
    "evaluate": ["evaluate", "{qrels}", "{dataset}", "-m", "map", "-f", "json"],
    "compare": ["compare", "{qrels}", "{dataset}", "{run2}", "-m", "map"],
    "fuse": ["fuse", "{dataset}", "{run2}"],
    "report": ["report", "{qrels}", "{dataset}", "{run2}", "-m", "map"],
    "agree": ["agree", "{qrels}", "{qrels}", "{dataset}", "{run2}"],
}
"""Commands that read a directory (a Parquet dataset) as a run."""


@pytest.mark.parametrize("case", sorted(DIRECTORY_READERS))
def test_no_command_writes_over_a_file_of_an_input_directory(case, files, tmp_path, rankwise_cli) -> None:
    """A file inside an input directory is an input (the command read it): an output naming it,
    a symlink to it or a hard link to it is refused, the dataset left byte for byte (a JSON
    result replaced the Parquet part it was computed from)."""
    from rankwise.data import load_run

    dataset = tmp_path / "dataset"
    dataset.mkdir()
    load_run(files["run"]).to_dataframe().to_parquet(dataset / "part-0.parquet")
    names = {**{k: str(v) for k, v in files.items()}, "dataset": str(dataset)}
    argv = [a.format(**names) for a in DIRECTORY_READERS[case]]
    assert rankwise_cli([*argv, "-o", str(tmp_path / "fresh.out")]) == 0, case
    part = dataset / "part-0.parquet"
    link, hard = tmp_path / "link.parquet", tmp_path / "hard.parquet"
    link.symlink_to(part)
    os.link(part, hard)
    before = _digest(dataset)
    for target in (part, link, hard):
        assert rankwise_cli([*argv, "-o", str(target)]) != 0, (case, target)
        assert _digest(dataset) == before, (case, target)


FULL_DISK = sorted(c for c, (_, option, _, directory) in WRITERS.items() if not directory
                   and c not in ("clicks split --train", "clicks split --held-out"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system to simulate a full disk")
@pytest.mark.parametrize("case", FULL_DISK)
def test_a_failed_write_is_an_error(case, files, tmp_path, rankwise_cli, capsys) -> None:
    argv, option, _, _ = _argv(rankwise_cli, files, tmp_path, case)
    capsys.readouterr()
    assert rankwise_cli([*argv, option, "/dev/full"]) != 0, case
    err = capsys.readouterr().err
    assert "/dev/full" in err and "Traceback" not in err, err
    assert Path("/dev/full").is_char_device()


def test_every_writing_option_is_registered_and_walked() -> None:
    """Every option of every command whose help says it writes is an output option, and every
    command with an output option has a case above."""
    import importlib
    import re

    import typer.main

    from rankwise.cli.entry import COMMAND_MODULES
    from rankwise.cli.output import output_options

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"rankwise.cli.{module}")
    from rankwise.cli.app import app

    walked = {(c.split(" --")[0], WRITERS[c][1]) for c in WRITERS}
    found = set()

    def walk(command, prefix):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*prefix, name])
            return
        for param in command.params:
            help_text = (getattr(param, "help", "") or "").lower()
            writes = re.search(r"\b(write|goes|to create)\b", help_text) and param.opts[0].startswith("-") \
                and param.opts[0] not in ("--format", "-f", "--overwrite")
            registered = set(param.opts) & set(output_options(prefix))
            if writes:
                assert registered, f"{' '.join(prefix)} {param.opts}: writes a file, not an output option"
            if registered:
                found.add((" ".join(prefix), param.opts[-1] if param.opts[-1] != "--output" else "-o"))

    walk(typer.main.get_command(app), [])
    assert found == walked, (found - walked, walked - found)


SIGNED = ("evaluate", "compare", "ab", "ope", "beyond", "agree", "offline-online", "interleave compare",
          "interleave simulate", "clicks evaluate", "rank-eval")
"""The commands that print a result: each takes ``--signature``."""


@pytest.mark.parametrize("case", SIGNED)
def test_every_result_command_prints_its_signature(case, files, tmp_path, rankwise_cli, capsys) -> None:
    """``--signature`` prints the result's signature(s) on standard error, each one that
    ``Signature.parse`` reads back, naming the rankwise version; without it, none."""
    from rankwise._version import __version__
    from rankwise.results import Signature

    argv, _, _, _ = _argv(rankwise_cli, files, tmp_path, case)
    capsys.readouterr()
    assert rankwise_cli(argv) == 0, case
    assert "signature:" not in capsys.readouterr().err
    assert rankwise_cli([*argv, "--signature"]) == 0, case
    lines = [line[len("signature: "):] for line in capsys.readouterr().err.splitlines()
             if line.startswith("signature: ")]
    assert lines, case
    for line in lines:
        head, colon, rest = line.partition(": ")
        text = rest if colon and "|" not in head else line   # evaluate: one per measure, "measure: signature"
        signature = Signature.parse(text)
        assert str(signature) == text and text.endswith(f"rankwise-{__version__}"), (case, text)


def test_the_commands_that_take_signature_are_those_walked() -> None:
    import importlib

    import typer.main

    from rankwise.cli.entry import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"rankwise.cli.{module}")
    from rankwise.cli.app import app

    found = set()

    def walk(command, prefix):
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*prefix, name])
        if any("--signature" in param.opts for param in getattr(command, "params", [])):
            found.add(" ".join(prefix))

    walk(typer.main.get_command(app), [])
    assert found == set(SIGNED)
