"""The images of docs/ are what docs/compare_example.py draws today: redrawn here and compared
pixel by pixel with the committed files (a stale image fails; run the script to refresh them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_committed_images_are_up_to_date(tmp_path: Path) -> None:
    compare_mod = pytest.importorskip("matplotlib.testing.compare")
    spec = importlib.util.spec_from_file_location("compare_example", ROOT / "docs" / "compare_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    drawn = module.write_images(tmp_path)
    committed = sorted(p.name for p in (ROOT / "docs" / "img").glob("*.png"))
    assert sorted(p.name for p in drawn) == committed, "docs/img holds images no script draws"
    stale = [p.name for p in drawn
             if compare_mod.compare_images(str(ROOT / "docs" / "img" / p.name), str(p), tol=2) is not None]
    assert not stale, f"stale images (run python docs/compare_example.py): {stale}"
