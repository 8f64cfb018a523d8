"""Fusion of runs: ``fuse(runs, method=..., norm=..., ties=..., depth=...) -> Run``.

>>> from rankwise.fusion import fuse
>>> fuse({"bm25": {"q1": {"a": 2.0, "b": 1.0}}, "dense": {"q1": {"b": 0.9, "c": 0.1}}}, "combmnz").doc.to_pylist()
['b', 'a', 'c']
"""

from rankwise.fusion.fuse import fuse
from rankwise.fusion.methods import METHODS, method_named
from rankwise.fusion.normalize import NORMS
from rankwise.fusion.optimize import FusionSearch, optimize

__all__ = ["METHODS", "NORMS", "FusionSearch", "fuse", "method_named", "optimize"]
