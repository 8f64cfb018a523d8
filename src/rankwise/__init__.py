"""rankwise: exact, fast, reproducible evaluation of rankings.

>>> import rankwise
>>> rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, "P@2").summary["P@2"].item()
0.5
"""

from typing import TYPE_CHECKING, Any

from rankwise._version import __version__

if TYPE_CHECKING:  # the names type checkers see; at run time they are imported on first use
    from rankwise.comparison import compare
    from rankwise.data import Qrels, Run, load_qrels, load_run
    from rankwise.data.prefs import load_prefs
    from rankwise.engine.conventions import Conventions
    from rankwise.evaluation import Result, evaluate
    from rankwise.rankeval import rank_eval

__all__ = ["__version__", "evaluate", "compare", "rank_eval", "Qrels", "Run", "Result", "Conventions", "load_qrels",
           "load_run", "load_prefs"]


def __dir__() -> list[str]:  # tab completion lists the lazy names too
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:  # lazy imports keep `import rankwise` light
    if name in ("evaluate", "Result"):
        import importlib

        return getattr(importlib.import_module("rankwise.evaluation"), name)
    if name == "compare":
        from rankwise.comparison import compare

        return compare
    if name == "rank_eval":
        from rankwise.rankeval import rank_eval

        return rank_eval
    if name in ("Qrels", "Run", "load_qrels", "load_run"):
        from rankwise import data

        return getattr(data, name)
    if name == "load_prefs":
        from rankwise.data.prefs import load_prefs

        return load_prefs
    if name == "Conventions":
        from rankwise.engine.conventions import Conventions

        return Conventions
    raise AttributeError(f"module 'rankwise' has no attribute {name!r}")
