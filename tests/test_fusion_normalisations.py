"""Normalisations dispatch through their registry: a member is called with the parameters its
spelling gives (``min-max(constant=0.5)``), a profile's ``constant`` reaches only the members
that declare it, and a normalisation with a parameter of a new name, registered in one line,
works at once through ``fuse``."""

from __future__ import annotations

import pytest

from rankwise.data.containers import Run
from rankwise.fusion import fuse

A = Run.from_dict({"q": {"a": 3.0, "b": 1.0}}, name="A")
B = Run.from_dict({"q": {"b": 2.0, "c": 2.0}}, name="B")   # constant within the query


def _scores(run: Run) -> dict[str, float]:
    return {doc: float(score) for doc, score in run.to_dict()["q"].items()}


def test_min_max_takes_its_constant_in_its_spelling() -> None:
    # A: a 1, b 0; B constant: b and c get the constant. combsum: a 1, b 0 + c, c c
    fused = _scores(fuse([A, B], "combsum", norm="min-max(constant=0.5)"))
    assert fused == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.5})
    assert "constant=0.5" in fuse([A, B], "combsum", norm="min-max(constant=0.5)").source   # its signature
    default = _scores(fuse([A, B], "combsum", norm="min-max"))
    assert default == pytest.approx({"a": 1.0, "b": 0.0, "c": 0.0})   # (2 - 2) / 1e-9 = 0


