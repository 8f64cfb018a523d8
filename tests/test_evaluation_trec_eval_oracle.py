"""Differential tests against the trec_eval 10.0 binary, built from source once per session.

Two builds: the stock one (``%6.4f``: byte-identical output is the contract of ``rankwise
trec-eval``) and a precise one that prints every double with ``%.17g``, so that each per-query
and summary value is compared bit for bit, through ``rankwise trec-eval`` and through
``rankwise.evaluate``. Data: many seeds of generated qrels and runs (exact and float32-only ties,
graded and negative labels, unjudged documents, queries on one side only) under ``-c``, ``-M``,
``-l``, ``-J``, ``-N``, and the real TREC DL runs bundled in tests/data/golden.

Where trec_eval cannot be built (a fresh clone without its source), every case is compared
with what trec_eval 10.0 printed for it, committed in tests/data/oracle (``oracle.GOLDEN``);
where it can, the binary runs and must still print exactly that (the file is current).
"""

from __future__ import annotations

import difflib
import io
from pathlib import Path

import numpy as np
import pytest
from conftest import GOLDEN
from oracle import TrecEval, generate

import rankwise
from rankwise.cli.trec_eval import run_trec_eval

FLAGS = [[], ["-c"], ["-M", "7"], ["-l", "2"], ["-J"], ["-N", "1000"], ["-c", "-M", "5", "-l", "2"],
         ["-c", "-J", "-l", "3"]]
SEEDS = range(240)


def _rankwise(args: list[str], float_format: str) -> str:
    out = io.StringIO()
    assert run_trec_eval(args, out=out, float_format=float_format) == 0
    return out.getvalue()


def _same(expected: str, got: str) -> None:
    if expected != got:
        diff = list(difflib.unified_diff(expected.splitlines(), got.splitlines(), "trec_eval", "rankwise",
                                         lineterm="", n=0))
        pytest.fail("\n".join(diff[:30]))


def _case(tmp_path: Path, seed: int) -> tuple[list[str], Path, Path]:
    flags = FLAGS[seed % len(FLAGS)]
    qrels, run_file = generate.write(np.random.default_rng(seed), tmp_path, "-c" in flags)
    return flags, qrels, run_file


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_runs_bit_for_bit(oracle: TrecEval, tmp_path: Path, seed: int) -> None:
    flags, qrels, run_file = _case(tmp_path, seed)
    args = ["-q", "-m", "all_trec", *flags, str(qrels), str(run_file)]
    _same(oracle.stdout("precise", f"generated-{seed}", args), _rankwise(args, "%.17g"))
    if seed % 8 == 0:  # the stock binary's bytes, too
        _same(oracle.stdout("stock", f"generated-{seed}", args), _rankwise(args, "%6.4f"))


def test_thousands_of_queries(oracle: TrecEval, tmp_path: Path) -> None:
    qrels, run_file = generate.write(np.random.default_rng(7), tmp_path, True, n_queries=3000)
    args = ["-q", "-c", "-m", "all_trec", str(qrels), str(run_file)]
    _same(oracle.stdout("precise", "thousands", args), _rankwise(args, "%.17g"))
    _same(oracle.stdout("stock", "thousands", args), _rankwise(args, "%6.4f"))


REAL = [(system, year, level) for system in ("BM25", "SPLADE_P_P_ENSEMBLE_DISTIL")
        for year in ("19", "20") for level in ("1", "2")]


@pytest.mark.parametrize("system,year,level", REAL)
def test_real_runs_bit_for_bit(oracle: TrecEval, system: str, year: str, level: str) -> None:
    args = ["-q", "-c", "-m", "all_trec", "-l", level, str(GOLDEN / f"qrels.dl{year}-passage.txt"),
            str(GOLDEN / f"{system}.dl{year}.trec")]
    case = f"real-{system}-dl{year}-l{level}"
    _same(oracle.stdout("precise", case, args), _rankwise(args, "%.17g"))
    _same(oracle.stdout("stock", case, args), _rankwise(args, "%6.4f"))


# rankwise.evaluate names and the trec_eval columns they equal
EVALUATE_NAMES = {"map": "map", "ndcg@10": "ndcg_cut_10", "P@5": "P_5", "recall@100": "recall_100",
                  "recip_rank": "recip_rank", "ndcg": "ndcg", "bpref": "bpref", "Rprec": "Rprec",
                  "set_map": "set_map", "map@10": "map_cut_10", "infAP": "infAP", "rbp": "rbp"}


def _precise_values(text: str) -> dict[tuple[str, str], float]:
    out = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        if qid != "all" and not value.startswith("'"):
            out[(name.strip(), qid)] = float(value)
    return out


@pytest.mark.parametrize("seed", range(0, 240, 7))
def test_evaluate_equals_the_oracle(oracle: TrecEval, tmp_path: Path, seed: int) -> None:
    flags, qrels, run_file = _case(tmp_path, seed)
    conventions = {"missing": "zero" if "-c" in flags else "skip", "judged_only": "-J" in flags}
    if "-M" in flags:
        conventions["depth"] = int(flags[flags.index("-M") + 1])
    if "-l" in flags:
        conventions["rel_level"] = int(flags[flags.index("-l") + 1])
    ref = oracle.stdout("precise", f"generated-{seed}", ["-q", "-m", "all_trec", *flags, str(qrels), str(run_file)])
    expected = _precise_values(ref)
    result = rankwise.evaluate(str(qrels), str(run_file), list(EVALUATE_NAMES), **conventions)
    frame = result.per_query.reset_index()
    assert len(frame) == len({q for _, q in expected})
    for name, column in EVALUATE_NAMES.items():
        for qid, value in zip(frame["query"], frame[name], strict=True):
            assert value == expected[(column, qid)], (name, qid, value, expected[(column, qid)])
