"""Size gates on ``src/``: no function takes more than 10 parameters, has a cyclomatic
complexity above 15 (ruff's C901), more than 60 statements (PLR0915) or more than 60 lines,
except those in ``tests/data/code_limits_baseline.txt``. The baseline may only shrink: a
function that no longer exceeds a limit must leave it (``RANKWISE_LIMITS_RECORD=1`` rewrites
it, for a change that removes entries only)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tests" / "data" / "code_limits_baseline.txt"
RUFF_LIMITS = {"C901": "lint.mccabe.max-complexity=15", "PLR0913": "lint.pylint.max-args=10",
               "PLR0915": "lint.pylint.max-statements=60"}
MAX_LINES = 60


def _functions(path: Path) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function of a module with its qualified name (``Class.method``, ``outer.inner``)."""
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((f"{prefix}{child.name}", child))
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


def found() -> set[str]:
    """``path::function::rule`` of every function beyond a limit."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    command = [ruff, "check", "src", "--select", ",".join(RUFF_LIMITS), "--output-format", "json", "--no-cache"]
    for setting in RUFF_LIMITS.values():
        command += ["--config", setting]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr   # 1: violations found; anything else: ruff failed
    report = json.loads(done.stdout)
    out = set()
    names: dict[str, dict[int, str]] = {}
    for item in report:
        path = Path(item["filename"]).resolve().relative_to(ROOT).as_posix()
        if path not in names:
            names[path] = {node.lineno: name for name, node in _functions(ROOT / path)}
        out.add(f"{path}::{names[path].get(item['location']['row'], '?')}::{item['code']}")
    for path in sorted((ROOT / "src").rglob("*.py")):
        for name, node in _functions(path):
            if (node.end_lineno or node.lineno) - node.lineno + 1 > MAX_LINES:
                out.add(f"{path.relative_to(ROOT).as_posix()}::{name}::lines")
    return out


def test_no_function_beyond_the_limits_outside_the_shrinking_baseline() -> None:
    now = found()
    if os.environ.get("RANKWISE_LIMITS_RECORD") == "1":
        BASELINE.write_text("".join(f"{entry}\n" for entry in sorted(now)))
    baseline = {line.strip() for line in BASELINE.read_text().splitlines() if line.strip()}
    new = sorted(now - baseline)
    assert not new, "beyond the size limits (split the function, or pass a settings object):\n" + "\n".join(new)
    gone = sorted(baseline - now)
    assert not gone, "within the limits now: remove from tests/data/code_limits_baseline.txt:\n" + "\n".join(gone)
