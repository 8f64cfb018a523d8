"""The layers hold: data -> engine -> metrics -> evaluation -> stats / report / cli, with no
upward import and no import cycle (imports inside functions count too)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src" / "rankwise"

LAYERS: dict[str, float] = {
    "errors": 0, "_version": 0,
    "params": 0.5,  # typed parameters and the registry of every pluggable family
    "merging": 0.5,  # the one merge protocol of accumulating states
    "results": 0.5,  # the one result shape and its JSON helper
    "progress": 0.5,  # steps of long work, shown by whoever listens (the CLI)
    "protected": 0.5,  # the inputs no output may replace: registered by the CLI, checked by every writer
    "data": 1,
    "engine": 2,
    "metrics": 3,
    "state": 4, "evaluation": 4,
    "streaming": 5, "stats": 5, "torch": 5,
    "jax": 6,  # the JAX states reuse the streaming definitions (threshold grids)
    "fusion": 5, "agreement": 6,
    "recsys": 6,  # beyond-accuracy metrics of recommendation lists, tested per user (stats)
    "comparison": 6, "clicks": 6,
    "experiments": 7, "counterfactual": 7,  # A/B experiments; off-policy estimators
    "interleaving": 7.5,  # its simulated users come from clicks; its simulations assign users as A/B tests do
    "online": 7.8,  # the former home of the three, re-exporting their public names
    "report": 8, "rankeval": 8, "scale": 8,  # scale wraps evaluate, click models and A/B states
    "cli": 9,
    "": 10, "__main__": 10,  # the package itself (rankwise/__init__.py) re-exports the public API
}
"""Rank of each top-level component: a module may import lower ranks and its own component."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """Every rankwise module ``path`` imports, at the top or inside a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rankwise"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("rankwise"))
    return {m for m in out if m in modules}


def _component(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


MODULES = _modules()
GRAPH = {name: _imports(path, MODULES) for name, path in MODULES.items()}


def test_every_component_has_a_layer() -> None:
    assert {_component(m) for m in GRAPH} <= set(LAYERS), "give the new component a rank in LAYERS"


def test_no_module_imports_upward_or_sideways() -> None:
    bad = []
    for module, imports in GRAPH.items():
        own = _component(module)
        for target in imports:
            other = _component(target)
            if other != own and LAYERS[other] >= LAYERS[own]:
                bad.append(f"{module} -> {target}")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(bad))


def test_no_import_cycle() -> None:
    """Tarjan's strongly connected components over the module graph; a package's __init__
    re-exporting its own modules is not a cycle of theirs."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def edges(module: str) -> set[str]:
        return {t for t in GRAPH[module] if not module.startswith(t + ".")}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The check fails on the bug it exists for: an engine module importing a metric."""
    bad = tmp_path / "ranked.py"
    bad.write_text("def f():\n    from rankwise.metrics.ranking import expected\n")
    found = _imports(bad, _modules())
    assert "rankwise.metrics.ranking.expected" in found
    assert LAYERS[_component("rankwise.metrics.ranking.expected")] > LAYERS["engine"]


@pytest.mark.parametrize("module", ["rankwise", "rankwise.cli.main"])
def test_import_stays_light(module: str) -> None:
    """``import rankwise`` and the CLI do not pull in the heavy stacks."""
    import subprocess
    import sys

    code = (f"import sys, {module}; heavy = [m for m in ('torch', 'jax', 'matplotlib', 'sklearn', 'scipy', "
            "'pyspark', 'dask') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_the_add_a_metric_example_in_the_docs_runs() -> None:
    """docs/architecture.md's example family computes, and registers without a name clash."""
    import re

    from rankwise.engine.conventions import Conventions
    from rankwise.metrics.compute import compute_scores
    from rankwise.metrics.family import MetricSpec
    from rankwise.metrics.ranking._example import example
    from rankwise.metrics.registry import FAMILIES, check

    page = (SRC.parent.parent / "docs" / "architecture.md").read_text()
    code = re.search(r"```python\n(   \"\"\"First relevant rank.*?)```", page, re.S).group(1)
    namespace: dict = {}
    exec(compile("\n".join(line[3:] for line in code.splitlines()), "architecture.md", "exec"), namespace)
    family = namespace["FIRST_RANK"]
    check(FAMILIES + (family,))
    scores = compute_scores(example(), [MetricSpec(family, label="first_rank")], Conventions())
    assert scores.values["first_rank"].tolist() == [1]  # example(): the top document has label 2


INTENDED: dict[str, set[str]] = {
    "merging": {"errors"},
    "results": {"_version"},   # every result's signature ends with the version
    "params": {"errors"},
    "protected": {"errors"},
    "data": {"errors", "protected"},
    "engine": {"errors", "data"},
    "metrics": {"errors", "params", "data", "engine"},
    "evaluation": {"_version", "errors", "progress", "results", "data", "engine", "metrics"},
    "state": {"errors"},
    "fusion": {"errors", "params", "progress", "results", "data", "engine", "evaluation"},
    "stats": {"errors", "params", "progress"},
    "streaming": {"errors", "engine", "metrics", "state"},
    "torch": {"errors", "state"},
    "agreement": {"errors", "progress", "results", "data", "engine", "evaluation", "stats"},
    "clicks": {"errors", "params", "progress", "results", "data", "streaming", "stats"},
    "comparison": {"_version", "errors", "params", "results", "engine", "evaluation", "stats"},
    "jax": {"errors", "metrics", "streaming"},
    "experiments": {"errors", "params", "progress", "results", "data", "stats"},
    "counterfactual": {"errors", "params", "results", "data", "stats"},
    "interleaving": {"errors", "params", "progress", "results", "data", "evaluation", "stats", "clicks", "experiments"},
    "online": {"experiments", "interleaving", "counterfactual"},
    "rankeval": {"_version", "errors", "results", "data", "engine", "metrics", "evaluation", "comparison"},
    "recsys": {"_version", "errors", "params", "results", "data", "metrics", "evaluation", "stats", "streaming"},
    "report": {"_version", "errors", "results", "data", "engine", "metrics", "evaluation", "comparison", "experiments"},
    "scale": {"errors", "merging", "data", "engine", "metrics", "evaluation", "clicks", "experiments", "streaming"},
    "cli": {"_version", "errors", "params", "progress", "protected", "data", "engine", "metrics", "evaluation",
            "fusion", "agreement", "clicks", "comparison", "experiments", "interleaving", "counterfactual", "rankeval",
            "report", "recsys", "stats"},
    "": {"_version", "data", "engine", "evaluation", "comparison", "rankeval"},
    "__main__": {"cli"},
}
"""Every arrow between components the design intends (docs/architecture.md draws them). An
arrow the layers allow but nobody intended (``online -> metrics`` or ``stats -> data``, say)
fails here until it is added on purpose; an intended arrow the code no longer draws must be
removed, so the list stays the picture of the code."""


def test_only_intended_arrows_between_components() -> None:
    actual: dict[str, set[str]] = {}
    for module, imports in GRAPH.items():
        own = _component(module)
        for target in imports:
            if _component(target) != own:
                actual.setdefault(own, set()).add(_component(target))
    unintended = sorted(f"{a} -> {b}" for a, targets in actual.items() for b in targets - INTENDED.get(a, set()))
    stale = sorted(f"{a} -> {b}" for a, targets in INTENDED.items() for b in targets - actual.get(a, set()))
    assert not unintended, "arrows nobody intended (add them to INTENDED on purpose):\n" + "\n".join(unintended)
    assert not stale, "intended arrows the code no longer draws (remove them):\n" + "\n".join(stale)


META_TESTS = {"architecture", "architecture_limits", "types", "docs", "docs_images", "docs_claims"}
"""Tests about the project as a whole rather than one component."""


def test_test_files_are_named_after_the_component_they_test() -> None:
    """``tests/test_<component>[_<module or topic>].py``: the tests mirror the source tree (a
    file named by history, ``test_more_measures.py``, says nothing about what it tests)."""
    components = sorted((c for c in LAYERS if c and not c.startswith("_")), key=len, reverse=True)
    stray = []
    for path in sorted((Path(__file__).parent).glob("test_*.py")):
        stem = path.stem.removeprefix("test_")
        if stem in META_TESTS:
            continue
        if not any(stem == c or stem.startswith(f"{c}_") for c in components):
            stray.append(path.name)
    assert not stray, "name these after the component they test: " + ", ".join(stray)
