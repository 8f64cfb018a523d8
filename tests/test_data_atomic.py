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
