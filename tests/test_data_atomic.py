"""Every file rankwise writes appears whole or not at all (``rankwise.data.atomic``): an error,
a full disk or Ctrl-C half-way leaves the old file (or none) and no temporary file; ``-o``
naming an input is refused."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from typer.testing import CliRunner

from rankwise.cli.main import app
from rankwise.data import atomic
from rankwise.errors import OutputError

RUNS = [str(DATA / "golden" / "BM25.dl19.trec"), str(DATA / "golden" / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")]


def _half_then(error: BaseException) -> Any:
    """A ``write_trec_text`` that writes a few complete lines, then fails with ``error``."""
    def write(run: Any, out: Any) -> None:
        out.write(b"1037798 Q0 d1 1 2.0 fused\n")
        raise error
    return write


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_fuse_output_is_whole_or_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           error: BaseException) -> None:
    out = tmp_path / "fused.trec"
    out.write_text("the previous run\n")
    import rankwise.data.trec_write as trec_write

    monkeypatch.setattr(trec_write, "write_trec_text", _half_then(error))
    result = CliRunner().invoke(app, ["fuse", *RUNS, "-o", str(out)])
    if isinstance(error, KeyboardInterrupt):   # the shell's status for SIGINT
        assert result.exit_code == 130
    else:
        assert result.exit_code == 2 and "fused.trec: cannot write (No space left on device)" in result.output
    assert out.read_text() == "the previous run\n"       # a truncated run that looks valid before
    assert os.listdir(tmp_path) == ["fused.trec"]          # no temporary file left behind


def test_output_naming_an_input_is_refused(tmp_path: Path, rankwise_cli, capsys) -> None:
    # through the console entry point, which registers the inputs (every writing command:
    # tests/test_cli_outputs.py)
    copy = tmp_path / "bm25.trec"
    copy.write_bytes(Path(RUNS[0]).read_bytes())
    assert rankwise_cli(["fuse", str(copy), RUNS[1], "-o", str(copy)]) == 2
    assert "bm25.trec: names an input of this command" in capsys.readouterr().err
    assert copy.read_bytes() == Path(RUNS[0]).read_bytes()


def test_written_files_keep_ordinary_permissions(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    atomic.write_text(path, "x\n")
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask   # not mkstemp's 0600
    path.chmod(0o640)
    atomic.write_bytes(path, b"y\n")
    assert path.stat().st_mode & 0o777 == 0o640 and path.read_bytes() == b"y\n"


def test_a_directory_in_the_way_is_an_output_error(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="is a directory"):
        atomic.write_text(tmp_path, "x")
    with pytest.raises(OutputError, match="cannot write"):
        atomic.write_text(tmp_path / "missing-folder" / "x.txt", "x")


def _interruptible() -> None:
    """In the child before it starts: SIGINT at its default, as in a terminal. A suite started
    in the background of a non-interactive shell inherits SIGINT ignored, and Python keeps an
    ignored SIGINT ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_real_sigint_while_writing_leaves_the_old_file_and_no_leftovers(tmp_path: Path) -> None:
    """SIGINT delivered to a process in the middle of writing (not a simulated exception)."""
    import signal
    import subprocess
    import sys

    target = tmp_path / "out.trec"
    target.write_text("old content\n")
    script = ("import sys, time\nfrom rankwise.data.atomic import atomic_open\n"
              "with atomic_open(sys.argv[1]) as f:\n"
              "    f.write('half of the new file\\n'); f.flush()\n"
              "    print('writing', flush=True)\n"
              "    time.sleep(60)\n"
              "    f.write('the rest\\n')\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE, text=True,
                             preexec_fn=_interruptible)
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    assert any(p.name.endswith(".part") for p in tmp_path.iterdir())   # mid-write: the temporary file exists
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=30) != 0
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.trec"]   # the temporary file is gone


def test_ctrl_c_in_a_command_exits_130_without_a_traceback(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n")
    read_end, write_end = os.pipe()   # standard input that stays open and empty: the command waits on it
    child = subprocess.Popen([sys.executable, "-m", "rankwise", "evaluate", str(qrels), "-"], stdin=read_end,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible)
    os.close(read_end)

    def cpu_ticks() -> int:
        fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])   # utime + stime

    previous, deadline = -1, time.monotonic() + 60
    while time.monotonic() < deadline:   # imports done and blocked reading the run: its CPU time stops
        time.sleep(0.5)
        ticks = cpu_ticks()
        if ticks == previous:
            break
        previous = ticks
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    os.close(write_end)
    assert child.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


# Directories rankwise writes (a search index, a stored click log) appear whole or not at all
# too (``atomic.atomic_directory``): built beside their place and moved there when complete.
CLICKS = DATA / "clicks" / "clara2_head.tsv"


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _index_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str], str]:
    good = tmp_path / "docs.jsonl"
    good.write_text('{"id": "d1", "title": "red apple"}\n{"id": "d2", "title": "green pear"}\n')
    bad = tmp_path / "bad.jsonl"   # two documents are indexed before the third fails
    bad.write_text(good.read_text() + '{"id": "d3", "title": ["not", "text"]}\n')
    argv = ["index", "build", "-o", str(tmp_path / "out"), "--fields", "title", "--overwrite"]
    return [*argv, str(good)], [*argv, str(bad)], "rankwise-index.json"


def _stored_log_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str], str]:
    from rankwise.clicks import store

    finish = store.LogWriter._finish

    def full_disk(self: Any, folder: Path, chunk_size: int) -> None:   # half the files, then no space
        (folder / "pairs.i32").write_bytes(b"\0" * 8)
        raise OSError(errno.ENOSPC, "No space left on device")

    argv = ["clicks", "convert", str(CLICKS), "-o", str(tmp_path / "out")]
    monkeypatch.setattr(store.LogWriter, "_finish", finish)
    return argv, argv, "log.json", full_disk   # type: ignore[return-value]


DIRECTORY_OUTPUTS = {"index build": _index_case, "clicks convert (stored log)": _stored_log_case}


@pytest.mark.parametrize("case", sorted(DIRECTORY_OUTPUTS))
def test_a_directory_output_is_whole_or_untouched(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = DIRECTORY_OUTPUTS[case](tmp_path, monkeypatch)
    first, failing, marker = made[:3]
    runner = CliRunner()
    assert runner.invoke(app, first).exit_code == 0
    out = tmp_path / "out"
    before, listing = _tree(out), sorted(os.listdir(tmp_path))
    assert marker in before
    if len(made) > 3:   # the failure comes from the disk, half-way through the writing
        from rankwise.clicks import store

        monkeypatch.setattr(store.LogWriter, "_finish", made[3])
    result = runner.invoke(app, failing)
    assert result.exit_code == 2, result.output
    assert _tree(out) == before                            # the old directory, whole
    assert sorted(os.listdir(tmp_path)) == listing         # no half-built directory beside it
    fresh = tmp_path / "fresh"
    result = runner.invoke(app, [a if a != str(out) else str(fresh) for a in failing])
    assert result.exit_code == 2 and not fresh.exists()    # a failed first build leaves nothing


@pytest.mark.parametrize("case", sorted(DIRECTORY_OUTPUTS))
def test_a_directory_output_never_replaces_a_directory_it_did_not_write(case: str, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    first = DIRECTORY_OUTPUTS[case](tmp_path, monkeypatch)[0]
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    result = CliRunner().invoke(app, first)
    assert result.exit_code == 2 and "choose another directory" in result.output
    assert _tree(out) == {"thesis.tex": b"years of work"}
    out.joinpath("thesis.tex").unlink()                    # an empty directory is filled
    assert CliRunner().invoke(app, first).exit_code == 0 and oct(out.stat().st_mode & 0o777) != "0o700"


def test_a_stored_log_written_from_a_stream_that_fails_is_not_left_looking_whole(tmp_path: Path) -> None:
    from rankwise.clicks import ClickLog, open_log, save_log, write_log

    out = tmp_path / "log"
    save_log(ClickLog.from_arrays(["q"], [["a", "b"]], [[0, 1]]), out)

    def stream() -> Any:
        yield ClickLog.from_arrays(["r"], [["c"]], [[1]])
        raise ValueError("the source broke")

    with pytest.raises(ValueError, match="the source broke"):
        write_log(stream(), out, ranks=2)
    kept = open_log(out)      # before: the broken stream's one session was closed as a whole log
    assert (kept.sessions, kept.query_ids, kept.doc_ids) == (1, ["q"], ["a", "b"])
    assert sorted(os.listdir(tmp_path)) == ["log"]


def test_only_the_gateway_makes_directories() -> None:
    """A new directory output cannot bypass ``atomic_directory``: no other module makes one."""
    import re

    source = Path(atomic.__file__).resolve().parents[1]
    makers = re.compile(r"\.mkdir\(|os\.makedirs\(|os\.mkdir\(")
    found = [f"{p.relative_to(source)}: {line.strip()}" for p in sorted(source.rglob("*.py")) if p.name != "atomic.py"
             for line in p.read_text(encoding="utf-8").splitlines()
             if makers.search(line) and not line.lstrip().startswith((">>>", "..."))]   # examples may
    assert found == []
