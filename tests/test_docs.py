"""Every code block of README.md and docs/*.md runs, and its printed output is checked.

A ```python block runs as a script and a ```bash block line by line with bash, both in a fresh
folder that holds the repository's ``examples``, ``tests`` and ``docs`` (so paths in the docs
work as written, and nothing is written into the repository). When the next block is a ```text
block, it is the expected standard output (``...`` matches anything, whitespace is normalised,
as in doctest). A block that cannot run here says why on the line before it:
``<!-- not run: needs an Elasticsearch server -->``. Blocks without a language (synopses,
outputs quoted in prose) and ```json blocks are data, not code.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")


@dataclass
class Block:
    page: str
    line: int
    language: str
    code: str
    expected: str | None
    skip: str | None


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page with the ```text block that follows each, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[tuple[int, str, str, str | None, int]] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, language = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        skip = NOT_RUN.search(before)
        found.append((start + 1, language, "\n".join(lines[start + 1:j]), skip.group(1) if skip else None, j))
        i = j + 1
    out = []
    for n, (line, language, code, skip, end) in enumerate(found):
        if language not in ("python", "bash"):
            continue
        following = found[n + 1] if n + 1 < len(found) else None
        expected = None
        if following is not None and following[1] == "text":
            if not any(t.strip() for t in lines[end + 1:following[0] - 1]):
                expected = following[2]
        out.append(Block(page.name, line, language, code, expected, skip))
    return out


ALL = [b for page in PAGES for b in blocks(page)]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for name in ("examples", "tests", "docs"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def _run(block: Block, cwd: Path) -> str:
    env = {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "error::FutureWarning"}
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    if block.language == "python":
        proc = subprocess.run([sys.executable, "-c", block.code], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=600)
    else:
        proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{block.page}:{block.line} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("block", ALL, ids=[f"{b.page}:{b.line}" for b in ALL])
def test_code_block_runs_and_prints_what_the_page_shows(block: Block, workspace: Path) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    out = _run(block, workspace)
    if block.expected is not None:
        checker = doctest.OutputChecker()
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        want = block.expected + "\n"
        assert checker.check_output(want, out, flags), (
            f"{block.page}:{block.line} printed something else:\n"
            + checker.output_difference(doctest.Example("", want), out, flags))


def test_every_page_has_run_blocks_and_skips_say_why() -> None:
    assert len([b for b in ALL if b.skip is None]) >= 10
    assert all(b.skip.strip() for b in ALL if b.skip is not None)
    assert any(b.expected is not None for b in ALL)
