"""trec_eval's preference and judgment-group measures: ``-R prefs``, ``-R qrels_prefs`` and
``-R qrels_jg`` print trec_eval 10.0's own test outputs byte for byte (every ``quicktest`` line
of its Makefile), equal the trec_eval binary bit for bit on generated judgments, and give the
same numbers from Python."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from conftest import DATA

import rankwise
from rankwise.cli.trec_eval import run_trec_eval
from rankwise.data.prefs import Prefs, read_prefs, read_qrels_jg, read_qrels_prefs
from rankwise.errors import InputError, RankwiseError


def _ours(args: list[str], float_format: str = "%6.4f") -> str:
    out = io.StringIO()
    assert run_trec_eval(args, out=out, float_format=float_format) == 0
    return out.getvalue()


@pytest.mark.parametrize("args,golden", [
    (["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"], "out.test.prefs"),
    (["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test", "prefs.results.test"], "out.test.prefs"),
    (["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"], "out.test.qrels_prefs"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"], "out.test.qrels_jg"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"], "out.test.qrels_jg"),
])
def test_quicktest_lines_byte_for_byte(args: list[str], golden: str) -> None:
    args = args[:-2] + [str(DATA / args[-2]), str(DATA / args[-1])]
    assert _ours(args) == (DATA / golden).read_text()


def test_by_hand() -> None:
    # one user, one sub-group: a (2) > b (1) > c (0); the run ranks b, a and never retrieves c.
    # pairs: a>b retrieved, not kept; a>c implied, kept (a retrieved, c not); b>c implied, kept
    prefs = Prefs.from_rows([("q", "u", "s", "a", 2.0), ("q", "u", "s", "b", 1.0), ("q", "u", "s", "c", 0.0)])
    run = {"q": {"b": 0.9, "a": 0.5, "x": 0.1}}
    names = ["prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
             "prefs_simp_ret", "prefs_simp_imp", "prefs_pair"]
    got = rankwise.evaluate(prefs, run, names).summary.loc["run"].tolist()
    assert got == [3, 2, 0, 2 / 3, 0.0, 2 / 3, 2 / 3]


def test_two_sub_groups_combine_transitively() -> None:
    # sub-group 1: a > b; sub-group 2: b > c  ->  a > b, b > c and, transitively, a > c
    prefs = Prefs.from_rows([("q", "u", "1", "a", 2.0), ("q", "u", "1", "b", 1.0),
                             ("q", "u", "2", "b", 2.0), ("q", "u", "2", "c", 1.0)])
    run = {"q": {"c": 0.9, "b": 0.5, "a": 0.1}}  # the exact reverse: nothing kept
    res = rankwise.evaluate(prefs, run, ["prefs_num_prefs_poss", "prefs_num_prefs_ful"])
    assert res.summary.loc["run"].tolist() == [3, 0]


def test_inconsistent_preferences_are_an_error() -> None:
    # trec_eval aborts (core dump) on a preference cycle inside one judgment group
    prefs = Prefs.from_rows([("q", "u", "1", "a", 2.0), ("q", "u", "1", "b", 1.0),
                             ("q", "u", "2", "b", 2.0), ("q", "u", "2", "a", 1.0)])
    with pytest.raises(RankwiseError, match="'a' and 'b' are each preferred to the other"):
        rankwise.evaluate(prefs, {"q": {"a": 1.0}}, ["prefs_simp"])


def test_judgments_and_metrics_must_match(tmp_path) -> None:
    prefs = read_prefs(DATA / "prefs.test")
    with pytest.raises(RankwiseError, match="map is computed from qrels, not from prefs"):
        rankwise.evaluate(prefs, str(DATA / "prefs.results.test"), ["map"])
    with pytest.raises(RankwiseError, match="prefs_simp is computed from prefs judgments"):
        rankwise.evaluate(str(DATA / "qrels.test"), str(DATA / "results.test"), ["prefs_simp"])
    bad = tmp_path / "bad"
    bad.write_text("q1 u s d1 1\nq1 u s d2\n")
    with pytest.raises(InputError, match=r"bad:2: malformed line: expected exactly 5 fields"):
        read_prefs(bad)


def test_python_equals_the_command_line() -> None:
    res = rankwise.evaluate(read_qrels_prefs(DATA / "qrels.test"), str(DATA / "results.test"),
                            ["prefs_simp", "prefs_avgjg_Rnonrel"])
    printed = _ours(["-m", "prefs_simp", "-m", "prefs_avgjg_Rnonrel", "-R", "qrels_prefs",
                     str(DATA / "qrels.test"), str(DATA / "results.test")], "%.17g")
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2]) for line in printed.splitlines()}
    assert res.summary.loc["STANDARD"].to_dict() == values
    jg = rankwise.evaluate(read_qrels_jg(DATA / "qrels.123"), str(DATA / "results.test"), ["map_avgjg", "P_avgjg.5"])
    assert jg.per_query.loc[("STANDARD", "301"), "map_avgjg"] == pytest.approx(0.0266, abs=5e-5)  # out.test.qrels_jg
    assert jg.summary.loc["STANDARD", "map_avgjg"] == pytest.approx(0.1130, abs=5e-5)
    assert "judgments=qrels_jg" in jg.signatures["map_avgjg"]


# --- the trec_eval binary on generated judgments --------------------------------------------


def _generated_prefs(seed: int) -> tuple[str, str]:
    """Consistent preferences (each document has one level per judgment group, so sub-groups
    never contradict each other), several groups and sub-groups, levels 0 for non-relevant,
    documents the run never retrieves, and tied scores."""
    rng = np.random.default_rng(seed)
    prefs, run = [], []
    for q in range(int(rng.integers(3, 8))):
        docs = [f"D{int(i):03d}" for i in rng.choice(60, size=int(rng.integers(4, 14)), replace=False)]
        for g in range(int(rng.integers(1, 4))):
            level = {d: float(rng.choice([0, 0, 1, 2, 3, 4.5])) for d in docs}
            for s in range(int(rng.integers(1, 4))):
                for d in rng.choice(docs, size=int(rng.integers(2, len(docs) + 1)), replace=False):
                    prefs.append(f"q{q} g{g} s{s} {d} {level[d]}")
        pool = [f"D{i:03d}" for i in range(60)]
        retrieved = rng.choice(pool, size=int(rng.integers(1, 30)), replace=False)
        for d in retrieved:
            run.append(f"q{q} Q0 {d} 0 {float(rng.integers(0, 6)) / 2} tag")
    return "\n".join(prefs) + "\n", "\n".join(run) + "\n"


def _generated_groups(seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(int(rng.integers(3, 8))):
        for g in range(int(rng.integers(1, 4))):
            for i in rng.choice(40, size=int(rng.integers(1, 15)), replace=False):
                qrels.append(f"q{q} g{g} D{int(i):03d} {int(rng.integers(-1, 3))}")
        for i in rng.choice(40, size=int(rng.integers(1, 25)), replace=False):
            run.append(f"q{q} Q0 D{int(i):03d} 0 {float(rng.integers(0, 8)) / 4} tag")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("flags", [[], ["-c"], ["-M", "5"]])
def test_equal_to_trec_eval_bit_for_bit(oracle, tmp_path, seed: int, flags: list[str]) -> None:
    for kind, generate, measures in (("prefs", _generated_prefs, "all_prefs"),
                                     ("qrels_prefs", _generated_groups, "all_prefs"),
                                     ("qrels_jg", _generated_groups, "qrels_jg")):
        judgments, run = generate(seed)
        if kind == "qrels_prefs":  # qrels_prefs reads levels with atof: no negative labels there
            judgments = judgments.replace(" -1\n", " 0\n")
        (tmp_path / "j").write_text(judgments)
        (tmp_path / "r").write_text(run)
        args = [*flags, "-q", "-m", measures, "-R", kind, str(tmp_path / "j"), str(tmp_path / "r")]
        ref = oracle.stdout("precise", f"prefs-{kind}-{seed}-{'_'.join(flags) or 'none'}", args)
        assert _ours(args, "%.17g") == ref, (kind, seed, flags)


def test_nan_from_trec_eval_division_stays_out_of_the_average() -> None:
    # a group with no judged document retrieved and R = N = 0: trec_eval divides 0 by 0 and its
    # "sum > 0" test then reports 0
    prefs = Prefs.from_rows([("q", "u", "s", "a", 0.0), ("q", "u", "s", "b", 0.0)])
    value = rankwise.evaluate(prefs, {"q": {"x": 1.0}}, ["prefs_avgjg_Rnonrel"]).summary.iloc[0, 0]
    assert value == 0.0 and not math.isnan(value)
