"""Fusion of runs: ``fuse(runs, method=..., norm=..., ties=..., depth=...) -> Run``.

>>> from rankwise.fusion import fuse
>>> fuse({"bm25": {"q1": {"a": 2.0, "b": 1.0}}, "dense": {"q1": {"b": 0.9, "c": 0.1}}}, "combmnz").doc.to_pylist()
['b', 'a', 'c']
"""

from rankwise.fusion.fuse import fuse
from rankwise.fusion.methods import FUSION_METHODS, method_named
from rankwise.fusion.normalize import NORMS
from rankwise.fusion.optimize import FusionSearch, optimize

__all__ = ["FUSION_METHODS", "NORMS", "FusionSearch", "fuse", "method_named", "optimize"]


def __getattr__(name: str) -> object:
    """``METHODS``, the registry's name before ``FUSION_METHODS`` (deprecated: four modules
    had a ``METHODS`` meaning four things)."""
    if name == "METHODS":
        import warnings

        from rankwise.errors import RankwiseDeprecationWarning

        warnings.warn("rankwise.fusion.METHODS is deprecated: use rankwise.fusion.FUSION_METHODS",
                      RankwiseDeprecationWarning, stacklevel=2)
        return FUSION_METHODS
    raise AttributeError(f"module 'rankwise.fusion' has no attribute {name!r}")
