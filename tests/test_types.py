"""All of ``src/`` passes the type checker, no module skipped; the public API, the registries
and the writers strictly (no untyped definitions, no bare generics, no ``Any`` returned)."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_src_passes_mypy() -> None:
    """mypy was started once for the whole run (tests/conftest.py); its report is read here."""
    import os
    import shutil
    import tempfile
    import time

    import pytest
    from conftest import MYPY_DIR, MYPY_ELSEWHERE, start_mypy

    if os.environ.get(MYPY_ELSEWHERE):
        pytest.skip("mypy runs on its own line of .ci/run")
    folder = os.environ.get(MYPY_DIR)
    own = folder is None or not Path(folder).is_dir()   # a run the controller did not expect it in
    if own:
        folder = tempfile.mkdtemp(prefix="rankwise-mypy-")
        start_mypy(folder)
    try:
        status = Path(str(folder)) / "status"
        deadline = time.monotonic() + 900
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        out = (Path(str(folder)) / "report").read_text()
        passed = status.read_text()
    finally:
        if own:
            shutil.rmtree(str(folder), ignore_errors=True)
    assert passed == "0", out
    checked = int(re.search(r"no issues found in (\d+) source files", out).group(1))  # type: ignore[union-attr]
    assert checked == len(list((ROOT / "src" / "rankwise").rglob("*.py")))


def test_no_module_is_skipped() -> None:
    """No override silences a module: a module with type errors fails the suite."""
    for override in _mypy_config()["overrides"]:
        assert not override.get("ignore_errors"), f"type errors silenced in {override['module']}"


def test_the_public_api_is_checked_strictly() -> None:
    """Every name ``import rankwise`` exposes lives in a module under the strict override."""
    import rankwise

    strict = [o for o in _mypy_config()["overrides"] if o.get("disallow_untyped_defs")]
    assert len(strict) == 1 and strict[0]["disallow_any_generics"] and strict[0]["warn_return_any"]
    modules = set(strict[0]["module"])
    for name in rankwise.__all__:
        module = getattr(rankwise, name).__module__ if name != "__version__" else "rankwise"
        assert module in modules or module.rsplit(".", 1)[0] in modules, f"{name} is defined in {module}"
    for module in modules:
        path = ROOT / "src" / Path(*module.split("."))
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), f"{module} no longer exists"
