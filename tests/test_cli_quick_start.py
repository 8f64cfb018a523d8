"""``rankwise evaluate`` reads the command lines it knows without Typer (rankwise.cli.quick):
its table of options must be exactly the Typer command's, and every command line it accepts
must reach ``evaluate_files`` with exactly the values Typer would pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rankwise.cli import evaluating, quick
from rankwise.cli.entry import application_for, only_invoked

DATA = Path(__file__).parent / "data"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")


def _evaluate_command() -> Any:
    app = only_invoked(application_for(["evaluate"]), ["evaluate"])
    return typer.main.get_command(app).commands["evaluate"]


def test_the_quick_table_is_the_typer_declaration() -> None:
    # regenerate with: quick.options_of(<the evaluate command>) and paste into EVALUATE_OPTIONS
    assert quick.options_of(_evaluate_command()) == quick.EVALUATE_OPTIONS
    names = [p.name for p in _evaluate_command().params if p.param_type_name == "argument"]
    assert tuple(names) == quick.EVALUATE_ARGUMENTS


def test_the_convention_keywords_are_the_declared_convention_options() -> None:
    # vocabulary.CONVENTION_KEYWORDS (Typer-free) must name exactly the options that
    # options.with_conventions adds to every evaluating command, in the same order
    from rankwise.cli import options, vocabulary

    assert [p.name for p in options._CONVENTION_OPTIONS] == list(vocabulary.CONVENTION_KEYWORDS)


def _calls(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[Any, Any]:
    """(what Typer passes to evaluate_files, what the quick start passes; None: it declined)."""
    seen: list[tuple] = []
    monkeypatch.setattr(evaluating, "evaluate_files", lambda *a, **k: seen.append((a, k)))
    app = only_invoked(application_for(["evaluate"]), ["evaluate"])
    result = CliRunner().invoke(app, ["evaluate", *argv])
    typer_call = seen.pop() if result.exit_code == 0 and seen else None
    code = quick.quick_evaluate(argv)
    quick_call = seen.pop() if code is not None else None
    return typer_call, quick_call


@pytest.mark.parametrize("argv", [
    [QRELS, RUN],
    [QRELS, RUN, "-m", "map", "--metric", "P@5", "--metric=ndcg@10"],
    ["-l", "2", QRELS, "-q", RUN, "b=" + RUN, "-f", "json", "--digits", "6"],
    [QRELS, RUN, "-c", "-J", "-M", "50", "--ties", "expected", "--duplicates=first", "-o", "out.txt"],
    [QRELS, RUN, "--missing", "zero", "--profile", "ranx", "--zero-division", "nan", "--gains", "binary"],
    [QRELS, RUN, "--engine", "chunks", "--chunk-rows", "1000", "--score-precision", "float32"],
    [QRELS, "--", "-", "-m"],
])
def test_quick_start_passes_what_typer_passes(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    typer_call, quick_call = _calls(monkeypatch, argv)
    assert typer_call is not None and quick_call == typer_call


@pytest.mark.parametrize("argv", [
    [QRELS, RUN, "--help"], [QRELS], [QRELS, RUN, "-f", "yaml"], [QRELS, RUN, "--digits", "x"],
    [QRELS, RUN, "-qc"], [QRELS, RUN, "--engine", "dask"], [QRELS, RUN, "-m"], [QRELS, RUN, "--metrics", "map"],
    [QRELS, RUN, "-M", "-1"], [QRELS, RUN, "-q=1"],
])
def test_quick_start_leaves_the_rest_to_typer(argv: list[str]) -> None:
    assert quick.parse(argv) is None or quick.parse(argv)["engine"] == "dask"
    assert quick.quick_evaluate(argv) is None


TOKENS = st.sampled_from(["-m", "--metric", "map", "P@5", "-q", "--per-query", "-f", "--format", "csv", "text",
                          "-l", "2", "x", "-M", "10", "-c", "-J", "--ties", "trec", "--digits", "3", "--engine",
                          "chunks", "memory", "--missing", "zero", "--", "-", "--digits=5", "--format=json",
                          "--rel-level=0", "-Z", "--chunk-rows", "-o", "o.txt", QRELS, RUN])


@settings(max_examples=150, deadline=None)
@given(st.lists(TOKENS, max_size=9))
def test_any_command_line_the_quick_start_takes_means_the_same_to_typer(argv: list[str]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        typer_call, quick_call = _calls(monkeypatch, argv)
    if quick_call is not None:
        assert quick_call == typer_call


def _console(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rankwise", *args], capture_output=True, text=True)


def test_evaluate_starts_without_typer_and_prints_the_same_numbers(tmp_path: Path) -> None:
    quick_out = _console("evaluate", QRELS, RUN, "-m", "map", "-m", "P@5", "-f", "csv")
    # -mmap (a short option with its value attached) is not the quick start's: Typer reads it
    typer_out = _console("evaluate", QRELS, RUN, "-mmap", "-m", "P@5", "-f", "csv")
    assert quick_out.returncode == typer_out.returncode == 0
    assert quick_out.stdout == typer_out.stdout
    # trec_eval 10.0 prints map 0.1785 and P_5 0.2667 for this pair (tests/data/out.test)
    assert quick_out.stdout.splitlines() == ["run,query,map,P@5",
                                             "STANDARD,all,0.17854506039656948,0.26666666666666666"]
    probe = ("import sys; from rankwise.cli.quick import quick_evaluate; "
             f"code = quick_evaluate([{QRELS!r}, {RUN!r}, '-m', 'map']); "
             "print(code, 'typer' in sys.modules, 'pandas' in sys.modules, file=sys.stderr)")
    lean = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert lean.stderr.split() == ["0", "False", "False"]


def test_quick_start_errors_and_output_files(tmp_path: Path) -> None:
    missing = _console("evaluate", str(tmp_path / "nope.qrels"), RUN)
    assert missing.returncode == 2 and missing.stderr.startswith("rankwise: error:")
    assert "nope.qrels" in missing.stderr
    target = tmp_path / "out.json"
    written = _console("evaluate", QRELS, RUN, "-m", "P@5", "-f", "json", "-o", str(target))
    assert written.returncode == 0 and written.stdout == ""
    assert '"P@5"' in target.read_text()


def test_the_evaluating_commands_reuse_freed_heap_memory() -> None:
    import platform

    code = "from rankwise.cli.process import reuse_freed_heap; print(reuse_freed_heap())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    # mallopt exists (and accepts both settings) in glibc only
    assert out == ("True" if platform.libc_ver()[0] == "glibc" else "False")


@pytest.mark.parametrize("command", ["trec-eval", "evaluate", "metrics"])
def test_the_evaluating_commands_ask_numpy_for_no_huge_pages(command: str) -> None:
    # the short evaluating commands set NUMPY_MADVISE_HUGEPAGE=0 and OPENBLAS_NUM_THREADS=1
    # before NumPy is imported (a huge page fault may stop to compact memory; idle OpenBLAS
    # threads spin); other commands keep NumPy's defaults. The child reports NumPy's setting
    # where the command would end
    import os

    args = {"trec-eval": ["-m", "map", QRELS, RUN], "evaluate": [QRELS, RUN, "-m", "map"], "metrics": []}[command]
    code = ("import sys, os, atexit, rankwise.cli.quick as q\n"
            "def report(status):\n"
            "    import numpy\n"
            "    print('huge pages', numpy._core.multiarray._get_madvise_hugepage(), file=sys.stderr)\n"
            "    print('blas threads', os.environ.get('OPENBLAS_NUM_THREADS'), file=sys.stderr)\n"
            "    sys.stderr.flush(); os._exit(status)\n"
            "q.exit_now = report\n"
            "atexit.register(lambda: report(0))\n"
            f"sys.argv = ['rankwise', {command!r}] + {args!r}\n"
            "from rankwise.cli.entry import main\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMPY_MADVISE_HUGEPAGE", "OPENBLAS_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert f"huge pages {command == 'metrics'}" in done.stderr, done.stderr
    assert f"blas threads {None if command == 'metrics' else 1}" in done.stderr, done.stderr
    # an explicit setting wins
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**env, "NUMPY_MADVISE_HUGEPAGE": "1"})
    assert "huge pages True" in done.stderr, done.stderr


def test_output_cut_short_ends_with_status_1(monkeypatch: pytest.MonkeyPatch) -> None:
    # `rankwise trec-eval -q ... | head -1`: writing to a pipe its reader closed raises
    # BrokenPipeError; the command ends with status 1 and no traceback, as Click's commands do
    from rankwise.cli import trec_eval

    def cut_short(argv: list[str]) -> int:
        raise BrokenPipeError

    monkeypatch.setattr(trec_eval, "run_trec_eval", cut_short)
    monkeypatch.setattr(evaluating, "evaluate_files", lambda *a, **k: cut_short([]))
    assert quick.run_quick("trec-eval", ["-q", QRELS, RUN]) == 1
    assert quick.run_quick("evaluate", [QRELS, RUN]) == 1


def _imported(*args: str) -> set[str]:
    """The top-level packages a ``rankwise`` command line imports (``python -X importtime``)."""
    from rankwise.cli.output import TERMINAL_VARIABLES

    env = {k: v for k, v in os.environ.items() if k not in TERMINAL_VARIABLES}   # output to a pipe, as it is
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rankwise", *args], capture_output=True,
                          text=True, check=True, env=env)
    return {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()
            if line.startswith("import time:")}


def test_the_version_and_trec_eval_import_only_what_they_use() -> None:
    heavy = {"numpy", "pandas", "pyarrow", "typer", "rich", "click", "scipy", "matplotlib", "duckdb", "sklearn"}
    version = _imported("--version")
    assert not version & heavy, version & heavy
    assert subprocess.run([sys.executable, "-m", "rankwise", "--version"], capture_output=True, text=True,
                          check=True).stdout.startswith("rankwise ")
    # trec_eval's drop-in reads with pyarrow and computes with numpy, and loads nothing else heavy
    trec_eval = _imported("trec-eval", "-m", "map", QRELS, RUN)
    assert trec_eval & heavy == {"numpy", "pyarrow"}, trec_eval & heavy
    # so does evaluate printing its table to a pipe (rich draws tables on a terminal only)
    evaluate = _imported("evaluate", QRELS, RUN, "-m", "map", "-m", "ndcg@10")
    assert evaluate & heavy == {"numpy", "pyarrow"}, evaluate & heavy
    # nor pathlib, which brings urllib.parse and ipaddress (about 8 ms): the file doors take str paths
    assert not (trec_eval | evaluate) & {"pathlib", "urllib", "ipaddress"}
