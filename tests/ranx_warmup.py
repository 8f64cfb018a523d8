"""Compile ranx's numba functions once, in the background, before its differential tests run.

ranx JIT-compiles its metrics, fusion methods and data structures with numba on their first
call and caches the machine code on disk; in a fresh environment that first call costs 30-40
seconds, which would otherwise land inside whichever ranx test runs first. ``tests/conftest.py``
starts this script when the suite starts (as it starts mypy); the tests then load the cached
code. It exercises the calls the tests make: every metric of ``test_metrics_profiles`` at both
relevance levels, and every fusion method of ``test_fusion`` with and without normalisation,
trained ones included.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ranx  # noqa: E402
from ranx import fusion as ranx_fusion  # noqa: E402
from test_fusion import PARAMS, RANX, TRAINED, TRAINED_PARAMS  # noqa: E402
from test_metrics_profiles import RANX as METRICS  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    queries = [f"q{i}" for i in range(6)]
    runs = [ranx.Run.from_dict({q: {f"d{d}": float(rng.random()) for d in rng.choice(30, 12, replace=False)}
                                for q in queries}, name=f"r{i}") for i in range(3)]
    qrels = ranx.Qrels.from_dict({q: {f"d{d}": int(rng.integers(1, 3)) for d in rng.choice(30, 6, replace=False)}
                                  for q in queries})
    for level in (1, 2):
        names = [m + (f"-l{level}" if level > 1 else "") for m in METRICS]
        ranx.evaluate(qrels, runs[0], names, return_mean=False)
    ranx.evaluate(qrels, runs[0], ["precision", "recall", "f1", "mrr"], return_mean=False, make_comparable=True)
    for norm in (None, "min-max", "max", "sum", "zmuv", "rank", "borda"):
        for method, name in RANX.items():
            params = PARAMS.get(method, {})
            ranx.fuse(runs, norm=norm, method=name, params=params)
    for method, trainer in TRAINED.items():
        params, key = TRAINED_PARAMS[method]
        trained_with = [params["n_segments"]] if method == "probfuse" else []
        learned = getattr(ranx_fusion, trainer)(qrels, runs, *trained_with)
        ranx.fuse(runs, norm=None, method=method, params={key: learned, **{k: v for k, v in params.items()
                                                                            if k == "w"}})


if __name__ == "__main__":
    main()
