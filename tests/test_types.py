"""The modules listed under ``[tool.mypy]`` in pyproject.toml pass the type checker (the public
registry and I/O modules strictly); the list grows until it is all of ``src/``."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_listed_modules_pass_mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mypy import api

    monkeypatch.chdir(ROOT)
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path)])
    assert status == 0, out + err
    assert "Success: no issues found in 13 source files" in out
