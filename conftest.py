"""For every test and doctest: temporary files (``tempfile``, in this process and in the
commands a test starts) go to a folder of pytest's own, which pytest clears after a few runs,
so the suite leaves nothing behind in the system's temporary folder."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _temporary_files_under_pytest(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = str(tmp_path_factory.mktemp("tempfile"))
    monkeypatch.setattr(tempfile, "tempdir", folder)
    monkeypatch.setenv("TMPDIR", folder)
