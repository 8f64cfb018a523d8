"""Shared fixtures: paths to the bundled test data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"


@pytest.fixture
def data_dir() -> Path:
    return DATA
