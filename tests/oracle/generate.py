"""Seeded random qrels and runs that exercise every convention trec_eval has.

Graded and negative labels, unjudged retrieved documents, exact score ties, scores that tie in
float32 but not in float64, negative scores, doc ids that are prefixes of each other, queries in
the run only and (when the caller evaluates with ``-c``) queries in the qrels only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ID_CHARS = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _ident(rng: np.random.Generator, prefix: str) -> str:
    n = int(rng.integers(1, 6))
    return prefix + "".join(rng.choice(ID_CHARS, size=n))


def _score(rng: np.random.Generator, previous: float | None) -> str:
    kind = rng.random()
    if previous is not None and kind < 0.15:
        return repr(previous)  # an exact tie
    if previous is not None and kind < 0.25:
        return repr(previous * (1 + 1e-9))  # a tie in float32 only
    if kind < 0.4:
        return str(int(rng.integers(-3, 8)))  # small integers: many ties
    if kind < 0.5:
        return f"{rng.normal():.3f}"
    return repr(float(rng.normal(5, 3)))


def generate(rng: np.random.Generator, complete: bool, n_queries: int | None = None) -> tuple[str, str]:
    """Return (qrels text, run text). Without ``complete`` every judged query has results."""
    n_q = n_queries or int(rng.integers(1, 25))
    queries = sorted({_ident(rng, "q") for _ in range(n_q)} | {str(int(rng.integers(1, 500)))})
    qrels_lines, run_lines = [], []
    tag = _ident(rng, "run")
    for q in queries:
        pool = sorted({_ident(rng, "d") for _ in range(int(rng.integers(1, 40)))})
        pool += [d + "x" for d in pool[: int(rng.integers(0, 3))]]  # prefixes of each other
        judged = [d for d in pool if rng.random() < 0.7]
        labels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4], size=len(judged))
        if q == queries[0] and len(labels) and (labels < 0).all():
            labels[0] = 0  # trec_eval 10.0 fails when its first query has only negative labels
        qrels_lines += [f"{q} 0 {d} {int(label)}" for d, label in zip(judged, labels, strict=True)]
        in_qrels = bool(judged)
        in_run = rng.random() < (0.85 if complete else 1.0) or not in_qrels
        if not in_qrels and rng.random() < 0.5:
            continue  # neither side
        if in_run:
            docs = list(rng.permutation(pool))[: int(rng.integers(1, len(pool) + 1))]
            previous = None
            for i, d in enumerate(docs):
                s = _score(rng, previous)
                previous = float(s)
                run_lines.append(f"{q} Q0 {d} {i + 1} {s} {tag}")
    if not qrels_lines:
        qrels_lines.append(f"{queries[0]} 0 dz 1")
        if not any(line.startswith(f"{queries[0]} ") for line in run_lines):
            run_lines.append(f"{queries[0]} Q0 dz 1 1.0 {tag}")
    order = rng.permutation(len(run_lines))
    run_lines = [run_lines[i] for i in order]  # trec_eval ignores the file order
    return "\n".join(qrels_lines) + "\n", "\n".join(run_lines) + "\n"


def write(rng: np.random.Generator, folder: Path, complete: bool,
          n_queries: int | None = None) -> tuple[Path, Path]:
    """Generate and write ``qrels`` and ``run`` into ``folder``."""
    qrels, run = generate(rng, complete, n_queries)
    (folder / "qrels").write_text(qrels)
    (folder / "run").write_text(run)
    return folder / "qrels", folder / "run"
