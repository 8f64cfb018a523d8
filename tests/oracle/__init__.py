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


GOLDEN = REPO / "tests" / "data" / "oracle" / "trec_eval-10.0.json.gz"
"""What trec_eval 10.0 printed for every case the oracle tests run (stock and precise builds),
with the arguments that made it: the tests compare with it where trec_eval cannot be built (a
user's fresh clone without its source), and check it is current where it can."""

RECORD = "RANKWISE_ORACLE_RECORD"
"""Set to 1 (and run the oracle tests with ``-n 0``) to rewrite ``GOLDEN`` from the binary."""

REQUIRE = "RANKWISE_REQUIRE_ORACLE"
"""Set (CI sets it) to make a missing oracle binary a failure instead of a reason to use the
golden outputs or to skip."""


def _golden() -> dict[str, dict[str, object]]:
    import gzip
    import json

    if not GOLDEN.is_file():
        return {}
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as f:
        return dict(json.load(f)["cases"])


class TrecEval:
    """The trec_eval 10.0 oracle: the binaries when they can be built, else the golden outputs.

    ``stdout(kind, case, args)`` is what trec_eval (``kind``: ``stock`` or ``precise``) prints
    for ``args``; ``case`` names it in ``GOLDEN``. With the binaries it is run, and it must
    equal the golden output (the file is current); without them the golden output is returned.
    ``binary(kind)`` is for tests that need the binary itself (fuzzing): they skip, saying why,
    when it cannot be built."""

    def __init__(self, binaries: dict[str, Path] | None, reason: str | None) -> None:
        self.binaries, self.reason = binaries, reason
        self.golden = _golden()
        self.recorded: dict[str, dict[str, object]] = {}

    def __getitem__(self, kind: str) -> Path:
        return self.binary(kind)

    def binary(self, kind: str) -> Path:
        import pytest

        if self.binaries is None:
            pytest.skip(f"the trec_eval 10.0 binary is needed here and cannot be built: {self.reason}")
        return self.binaries[kind]

    def stdout(self, kind: str, case: str, args: list[str]) -> str:
        import pytest

        key = f"{case}|{kind}"
        shown = [Path(a).name if os.sep in a else a for a in args]
        if self.binaries is None:
            entry = self.golden.get(key)
            if entry is None:
                pytest.skip(f"no trec_eval 10.0 binary ({self.reason}) and no golden output for {key}")
            assert entry["args"] == shown, (key, entry["args"], shown)
            return str(entry["stdout"])
        done = run(self.binaries[kind], args)
        assert done.returncode == 0, done.stderr
        if os.environ.get(RECORD):
            self.recorded[key] = {"args": shown, "stdout": done.stdout}
        else:
            entry = self.golden.get(key)
            assert entry is not None, f"{GOLDEN.name} has no output for {key}: regenerate it ({RECORD}=1)"
            assert entry["stdout"] == done.stdout, f"{GOLDEN.name} is out of date for {key}: regenerate it"
        return done.stdout

    def save(self) -> None:
        """Write the recorded outputs to ``GOLDEN`` (merged with what it holds)."""
        import gzip
        import json

        cases = {**self.golden, **self.recorded}
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        document = {"tool": "trec_eval 10.0 (shared/tools/trec_eval-10.0; precise: %6.4f printed as %.17g)",
                    "made_by": f"{RECORD}=1 python -m pytest -n 0 tests/test_evaluation_trec_eval_oracle.py "
                               "tests/test_evaluation_trec_eval_prefs.py",
                    "cases": dict(sorted(cases.items()))}
        with gzip.open(GOLDEN, "wt", encoding="utf-8", compresslevel=9) as f:
            json.dump(document, f, separators=(",", ":"))
