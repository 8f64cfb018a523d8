"""The trec_eval 10.0 binary as a test oracle: found or built once per test session.

The source is looked up in ``$TREC_EVAL_SRC``, then in ``shared/tools/trec_eval-10.0`` beside the
checkout (where the reference data lives). ``$TREC_EVAL`` may name a ready binary instead. The
"precise" build prints every floating-point value with ``%.17g`` instead of ``%6.4f``, so that a
test can compare doubles bit for bit (17 significant digits round-trip any double).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRINTERS = ("meas_print_single.c", "meas_print_final.c")


def source_dir() -> Path | None:
    """trec_eval 10.0's source folder, or None when it is not available."""
    env = os.environ.get("TREC_EVAL_SRC")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "tools" / "trec_eval-10.0")
    for path in candidates:
        if (path / "trec_eval.c").is_file():
            return path
    return None


def why_unavailable() -> str | None:
    """None when the oracle can be built, else the reason (for pytest.skip)."""
    if os.environ.get("TREC_EVAL") and not os.environ.get("TREC_EVAL_PRECISE"):
        return None
    if source_dir() is None:
        return "trec_eval 10.0 source not found (set TREC_EVAL_SRC to its folder)"
    if shutil.which("make") is None or (shutil.which("cc") is None and shutil.which("gcc") is None):
        return "no C compiler or make: the trec_eval 10.0 oracle cannot be built"
    return None


def build(dest: Path, precise: bool = False) -> Path:
    """Copy the source to ``dest`` and ``make`` it; returns the binary's path."""
    src = source_dir()
    assert src is not None, why_unavailable()
    shutil.copytree(src, dest)
    if precise:
        for name in PRINTERS:
            path = dest / name
            path.write_text(path.read_text().replace("%6.4f", "%.17g"))
    subprocess.run(["make", "-s", "-C", str(dest)], check=True, capture_output=True)
    return dest / "trec_eval"


def run(binary: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run the oracle; stdout and stderr as text (bytes decoded with surrogate escapes)."""
    return subprocess.run([str(binary), *args], capture_output=True, text=True, errors="surrogateescape",
                          timeout=120)
