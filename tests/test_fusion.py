"""rankwise.fusion: hand-computed values, every method and normalisation equal to ranx on
tie-free runs (1e-12), tie rules, depth, signatures and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankwise.errors import InputError, RankwiseError
from rankwise.fusion import FUSION_METHODS, fuse


def _runs(seed: int, n_runs: int = 3, queries: int = 15) -> list[dict[str, dict[str, float]]]:
    """Tie-free runs over the same queries, each returning its own subset of 40 documents, with
    positive scores (ranx's CombMIN / CombMAX put -1e9 / 1e9 in for a missing score, which
    shows through when normalised scores pass them)."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(queries):
            docs = rng.choice(40, size=int(rng.integers(3, 25)), replace=False)
            scores = rng.uniform(0.1, 20.0, size=len(docs))
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
        runs.append(run)
    return runs


def _pairs(run: dict[str, dict[str, float]]) -> dict[tuple[str, str], float]:
    return {(q, d): s for q, docs in run.items() for d, s in docs.items()}


def _as_dict(run) -> dict[tuple[str, str], float]:
    return {(q, d): float(s) for q, d, s in zip(run.query.to_pylist(), run.doc.to_pylist(), run.score, strict=True)}


RANX = {"combsum": "sum", "combmin": "min", "combmax": "max", "combmed": "med", "combanz": "anz", "combmnz": "mnz",
        "combgmnz": "gmnz", "wsum": "wsum", "wmnz": "wmnz", "mixed": "mixed", "isr": "isr", "log_isr": "log_isr",
        "logn_isr": "logn_isr", "rrf": "rrf", "rbc": "rbc", "bordafuse": "bordafuse",
        "weighted_bordafuse": "w_bordafuse"}
PARAMS = {"combgmnz": {"gamma": 0.7}, "wsum": {"weights": [0.5, 0.3, 0.2]}, "wmnz": {"weights": [0.5, 0.3, 0.2]},
          "mixed": {"weights": [0.5, 0.3, 0.2]}, "logn_isr": {"sigma": 0.05}, "rrf": {"k": 10}, "rbc": {"phi": 0.6},
          "weighted_bordafuse": {"weights": [0.5, 0.3, 0.2]}}


TRAINED = {"posfuse": "posfuse_train", "mapfuse": "mapfuse_train", "probfuse": "probfuse_train",
           "segfuse": "segfuse_train", "slidefuse": "slidefuse_train", "bayesfuse": "bayesfuse_train"}
TRAINED_PARAMS = {"probfuse": ({"n_segments": 4}, "probs"), "slidefuse": ({"w": 2}, "probs"),
                  "segfuse": ({}, "probs"), "bayesfuse": ({}, "log_odds"), "posfuse": ({}, "probs"),
                  "mapfuse": ({}, "map_scores")}
CONDORCET = {"condorcet", "weighted_condorcet"}  # compared where the majority is an order (below)


def test_every_method_is_compared_with_ranx() -> None:
    assert set(RANX) | set(TRAINED) | CONDORCET == set(FUSION_METHODS)


@pytest.mark.parametrize("norm", [None, "min-max"])
@pytest.mark.parametrize("method", sorted(TRAINED))
def test_trained_methods_equal_ranx(method: str, norm: str | None, ranx_reference) -> None:
    runs = _runs(4)
    rng = np.random.default_rng(5)
    qrels = {q: {f"d{d}": int(rng.integers(1, 3)) for d in rng.choice(40, size=8, replace=False)} for q in runs[0]}
    params, key = TRAINED_PARAMS[method]

    def theirs(ranx):
        from ranx import fusion as ranx_fusion

        theirs_runs = [ranx.Run.from_dict({q: dict(d) for q, d in r.items()}, name=f"r{i}")
                       for i, r in enumerate(runs)]
        if norm is not None:  # ranx trains on the runs as given and fuses the normalised ones
            theirs_runs = [ranx.Run.from_dict(ranx.fuse([r, r], norm=norm, method="max").to_dict(), name=r.name)
                           for r in theirs_runs]
        trained_with = [params["n_segments"]] if method == "probfuse" else []
        learned = getattr(ranx_fusion, TRAINED[method])(ranx.Qrels.from_dict(qrels), theirs_runs, *trained_with)
        return ranx.fuse(theirs_runs, norm=None, method=method,
                         params={key: learned, **{k: v for k, v in params.items() if k == "w"}}).to_dict()

    expected = _pairs(ranx_reference(f"{method}-{norm}", theirs))
    got = _as_dict(fuse(runs, method, norm=norm, train_qrels=qrels, **params))
    assert got.keys() == expected.keys()
    for pair, value in expected.items():
        assert got[pair] == pytest.approx(value, rel=1e-12, abs=1e-12), pair


@pytest.mark.parametrize("method", sorted(RANX))
@pytest.mark.parametrize("norm", ["min-max", "max", "sum", "zmuv", "rank", "borda", None])
def test_equal_to_ranx_on_tie_free_runs(method: str, norm: str | None, ranx_reference) -> None:
    if FUSION_METHODS[method].ranks and norm == "borda":
        pytest.skip("ranx ranks a Borda-normalised run in candidate order, not by score")
    runs = _runs(1)
    expected = _pairs(ranx_reference(f"{method}-{norm}", lambda ranx: ranx.fuse(
        [ranx.Run.from_dict({q: dict(d) for q, d in r.items()}, name=f"r{i}") for i, r in enumerate(runs)],
        norm=norm, method=RANX[method], params=PARAMS.get(method, {})).to_dict()))
    got = _as_dict(fuse(runs, method, norm=norm, **PARAMS.get(method, {})))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_hand_computed_scores() -> None:
    a = {"q": {"x": 4.0, "y": 2.0, "z": 0.0}}
    b = {"q": {"y": 10.0, "w": 5.0}}
    # min-max: a -> x 1, y .5, z 0; b -> y 1, w 0
    got = _as_dict(fuse([a, b], "combmnz"))
    assert got == {("q", "x"): 1.0, ("q", "y"): (0.5 + 1.0) * 2, ("q", "z"): 0.0, ("q", "w"): 0.0}
    # RRF k=60: ranks a: x1 y2 z3; b: y1 w2
    got = _as_dict(fuse([a, b], "rrf"))
    assert got[("q", "y")] == pytest.approx(1 / 62 + 1 / 61) and got[("q", "w")] == pytest.approx(1 / 62)
    # Borda: C = 4 candidates; a returns 3 (x 4, y 3, z 2 points; w (4 - 3 + 1) / 2 = 1); b returns 2
    # (y 4, w 3; x and z (4 - 2 + 1) / 2 = 1.5)
    got = _as_dict(fuse([a, b], "bordafuse"))
    assert got == {("q", "x"): 5.5, ("q", "y"): 7.0, ("q", "z"): 3.5, ("q", "w"): 4.0}
    # log_isr: y is in both runs: (1/2^2 + 1/1^2) ln 2; x only in a: ln 1 = 0
    got = _as_dict(fuse([a, b], "log_isr"))
    assert got[("q", "y")] == pytest.approx(1.25 * math.log(2)) and got[("q", "x")] == 0.0


def test_hand_computed_trained_methods() -> None:
    a = {"q": {"x": 4.0, "y": 3.0, "z": 2.0, "u": 1.0}}
    b = {"q": {"y": 2.0, "x": 1.0}}
    qrels = {"q": {"x": 1, "z": 1, "y": 0}}  # hits: a 1 0 1 0, b 0 1
    # ProbFuse, 2 segments: a's segments of 2 hold 1/2 and 1/2 relevant; b's of 1 hold 0 and 1.
    # x: 0.5 / 1 + 1 / 2 = 1; y: 0.5 / 1 + 0 / 1; z and u: 0.5 / 2
    got = _as_dict(fuse([a, b], "probfuse", n_segments=2, train_qrels=qrels))
    assert got == {("q", "x"): 1.0, ("q", "y"): 0.5, ("q", "z"): 0.25, ("q", "u"): 0.25}
    # SlideFuse, w = 1: a's P(position) = 1 0 1 0, windows x [1 0], y [1 0 1], z [0 1 0], u [1 0];
    # b's 0 1, windows y [0 1], x [0 1]
    got = _as_dict(fuse([a, b], "slidefuse", w=1, train_qrels=qrels))
    assert got == pytest.approx({("q", "x"): 0.5 + 0.5, ("q", "y"): 2 / 3 + 0.5, ("q", "z"): 1 / 3,
                                 ("q", "u"): 0.5})
    # BayesFuse: a's band 1-5 holds 2 relevant of 5 (p = 0.4), b's 1 of 5 (p = 0.2);
    # z and u are missing from b: log(0.001 / 0.999)
    got = _as_dict(fuse([a, b], "bayesfuse", train_qrels=qrels))
    floor = math.log(0.001 / 0.999)
    assert got == pytest.approx({("q", "x"): math.log(0.4 / 0.6) + math.log(0.2 / 0.8),
                                 ("q", "y"): math.log(0.4 / 0.6) + math.log(0.2 / 0.8),
                                 ("q", "z"): math.log(0.4 / 0.6) + floor, ("q", "u"): math.log(0.4 / 0.6) + floor})
    # SegFuse, no normalisation: the band 1-5 as BayesFuse's, times (score + 1)
    got = _as_dict(fuse([a, b], "segfuse", norm=None, train_qrels=qrels))
    assert got == pytest.approx({("q", "x"): 0.4 * 5 + 0.2 * 2, ("q", "y"): 0.4 * 4 + 0.2 * 3,
                                 ("q", "z"): 0.4 * 3, ("q", "u"): 0.4 * 2})
    with pytest.raises(RankwiseError, match="probfuse: give n_segments="):
        fuse([a, b], "probfuse", train_qrels=qrels)


def test_ties_rank_depth_and_signature() -> None:
    a = {"q": {"b": 1.0, "a": 1.0, "c": 0.5}}  # b and a tie
    b = {"q": {"c": 1.0}}
    trec = fuse([a, b], "rrf", ties="trec")
    # trec ranks a tie by document id descending: b (1), a (2); docid_asc: a (1), b (2)
    assert _as_dict(trec)[("q", "b")] == pytest.approx(1 / 61)
    asc = fuse([a, b], "rrf", ties="docid_asc")
    assert _as_dict(asc)[("q", "a")] == pytest.approx(1 / 61)
    # output order: c (1/63 + 1/61) first, then the fused tie a/b broken as the rule says
    fused = fuse([{"q": {"a": 1.0, "b": 1.0}}, {"q": {"b": 1.0, "a": 1.0}}], "combsum", norm=None)
    assert fused.doc.to_pylist() == ["b", "a"]
    assert fuse([{"q": {"a": 1.0, "b": 1.0}}, {"q": {"b": 1.0, "a": 1.0}}], "combsum", norm=None,
                ties="docid_asc").doc.to_pylist() == ["a", "b"]
    cut = fuse([a, b], "rrf", depth=2, name="hybrid")
    assert cut.doc.to_pylist() == ["c", "b"] and cut.name == "hybrid"
    assert cut.source == "fusion=rrf|k=60|norm=none|ties=trec|depth=2"
    assert fuse([a, b], "wsum", weights=[0.7, 0.3]).source == \
        "fusion=wsum|weights=0.7,0.3|norm=min-max|ties=trec|depth=all"


def test_bad_input_is_refused_with_its_place(tmp_path) -> None:
    with pytest.raises(RankwiseError, match="unknown fusion method 'rff'; did you mean 'rrf'"):
        fuse(_runs(2, 2), "rff")
    with pytest.raises(RankwiseError, match="rrf: unknown parameter"):
        fuse(_runs(2, 2), "rrf", phi=0.5)
    with pytest.raises(RankwiseError, match="combgmnz: give gamma="):
        fuse(_runs(2, 2), "combgmnz")
    with pytest.raises(RankwiseError, match="weights: expected 2 numbers"):
        fuse(_runs(2, 2), "wsum", weights=[1.0])
    with pytest.raises(RankwiseError, match="unknown normalisation 'l2'"):
        fuse(_runs(2, 2), "combsum", norm="l2")
    with pytest.raises(RankwiseError, match="posfuse learns from judgments: give train_qrels="):
        fuse(_runs(2, 2), "posfuse")
    with pytest.raises(RankwiseError, match="at least two runs"):
        fuse(_runs(2, 1), "rrf")
    dup = tmp_path / "dup.trec"
    dup.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 a 3 0.5 t\n")
    with pytest.raises(InputError, match=r"dup.trec:3: field 'doc': document 'a' is listed twice .*first at line 1"):
        fuse([str(dup), _runs(2, 1)[0]], "rrf")


PYSERINI = Path(__file__).parent / "data" / "pyserini_fusion"


@pytest.mark.parametrize(("verify", "method", "options"), [
    ("simple_trec_run_rrf_verify.txt", "rrf", {"k": 60}),
    ("simple_trec_run_interpolation_verify.txt", "wsum", {"weights": [0.4, 1 - 0.4], "norm": None}),
    ("simple_trec_run_average_verify.txt", "wsum", {"weights": [1 / 2, 1 / 2], "norm": None}),
    ("simple_fusion_normalize_verify.txt", "combsum", {"norm": "min-max"}),
])
def test_pyserini_fusion_reproduced_byte_for_byte(verify: str, method: str, options: dict) -> None:
    from rankwise.data.trec_io import trec_run_lines

    runs = [str(PYSERINI / "simple_trec_run_fusion_1.txt"), str(PYSERINI / "simple_trec_run_fusion_2.txt")]
    fused = fuse(runs, method, profile="pyserini", name="test", **options)
    assert "".join(trec_run_lines(fused)) == (PYSERINI / verify).read_text()


def test_pyserini_ranks_come_from_the_rank_column() -> None:
    # run 2 ranks 2054tkb7 3rd (its 2nd line): RRF 1/62 + 1/63, not 1/62 + 1/62
    runs = [str(PYSERINI / "simple_trec_run_fusion_1.txt"), str(PYSERINI / "simple_trec_run_fusion_2.txt")]
    by_file = _as_dict(fuse(runs, "rrf", profile="pyserini"))
    by_score = _as_dict(fuse(runs, "rrf"))
    assert by_file[("1", "2054tkb7")] == 1 / 62 + 1 / 63 and by_score[("1", "2054tkb7")] == 2 / 62
    assert fuse(runs, "rrf", profile="pyserini").source == \
        "fusion=rrf|k=60|norm=none|ranks=file|ties=docid_asc|depth=all"


def test_ranks_from_a_gzipped_run_file(tmp_path) -> None:
    """The rank column is read through the same door as the run (a .gz run was a raw
    UnicodeDecodeError with ranks='file')."""
    import gzip

    runs = [str(PYSERINI / "simple_trec_run_fusion_1.txt"), str(PYSERINI / "simple_trec_run_fusion_2.txt")]
    packed = tmp_path / "run2.txt.gz"
    packed.write_bytes(gzip.compress(Path(runs[1]).read_bytes()))
    assert _as_dict(fuse([runs[0], str(packed)], "rrf", profile="pyserini")) == \
        _as_dict(fuse(runs, "rrf", profile="pyserini"))


def test_input_depth_keeps_each_runs_first_ranks() -> None:
    a = {"q": {"x": 3.0, "y": 2.0, "z": 1.0}}
    b = {"q": {"z": 3.0, "w": 2.0}}
    got = _as_dict(fuse([a, b], "rrf", input_depth=1))
    assert got == {("q", "x"): 1 / 61, ("q", "z"): 1 / 61}


def test_the_cli_writes_the_fused_run_and_its_signature(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    out = tmp_path / "fused.trec"
    result = CliRunner().invoke(app, ["fuse", str(PYSERINI / "simple_trec_run_fusion_1.txt"),
                                      str(PYSERINI / "simple_trec_run_fusion_2.txt"), "--method", "rrf", "--k", "60",
                                      "--profile", "pyserini", "--name", "test", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == (PYSERINI / "simple_trec_run_rrf_verify.txt").read_text()
    assert "fusion=rrf|k=60|norm=none|ranks=file|ties=docid_asc|depth=all" in result.output
    bad = CliRunner().invoke(app, ["fuse", str(PYSERINI / "simple_trec_run_fusion_1.txt"),
                                   str(PYSERINI / "simple_trec_run_fusion_2.txt"), "--method", "wsum",
                                   "--weights", "1"])
    assert bad.exit_code == 2 and "weights: expected 2 numbers (one per run)" in bad.output


def test_cli_errors_name_the_options_to_type() -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    runs = [str(PYSERINI / "simple_trec_run_fusion_1.txt"), str(PYSERINI / "simple_trec_run_fusion_2.txt")]
    expected = {("--method", "probfuse", "--n-segments", "2"): "probfuse learns from judgments: give --train-qrels",
                ("--method", "rrf", "--w", "2"): "rrf: unknown parameter(s) --w; it takes --k",
                ("--input-depth", "0"): "--input-depth must be at least 1, got 0",
                ("--method", "wsum", "--weights", "1,2,3"):
                    "--weights: expected 2 numbers (one per run), got [1.0, 2.0, 3.0]"}
    for options, message in expected.items():
        result = CliRunner().invoke(app, ["fuse", *runs, *options])
        assert result.exit_code == 2 and message in result.output, (options, result.output)


def test_the_cli_trains_probfuse_with_its_flags(tmp_path) -> None:
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    (tmp_path / "a.trec").write_text("q Q0 x 1 4 a\nq Q0 y 2 3 a\nq Q0 z 3 2 a\nq Q0 u 4 1 a\n")
    (tmp_path / "b.trec").write_text("q Q0 y 1 2 b\nq Q0 x 2 1 b\n")
    (tmp_path / "qrels").write_text("q 0 x 1\nq 0 z 2\nq 0 y 0\n")
    result = CliRunner().invoke(app, ["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method",
                                      "probfuse", "--n-segments", "2", "-l", "2", "--train-qrels",
                                      str(tmp_path / "qrels")])
    assert result.exit_code == 0, result.output
    # at level 2 only z is relevant: a's segments hold 0 and 1/2, b's nothing; z and u score 0.5 / 2
    lines = [line.split() for line in result.output.splitlines() if line.startswith("q ")]
    assert [(f[2], float(f[4])) for f in lines] == [("z", 0.25), ("u", 0.25), ("y", 0.0), ("x", 0.0)]
    assert "fusion=probfuse|n_segments=2|rel_level=2|norm=none" in result.output


def test_optimize_chooses_each_fold_on_the_other_queries_only() -> None:
    import rankwise
    from rankwise.fusion import optimize

    qrels = str(Path(__file__).parents[1] / "examples" / "dl19" / "qrels.dl19-passage.txt")
    runs = {"BM25": str(Path(qrels).parent / "BM25.dl19.trec"),
            "SPLADE++": str(Path(qrels).parent / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")}
    grid = {"weights": [[a, 1 - a] for a in (0.0, 0.2, 0.4, 0.6)]}
    found = optimize(qrels, runs, "wsum", "ndcg@10", grid=grid, folds=4, seed=3)
    # each candidate's per-query values, computed independently with fuse + evaluate
    per_candidate = []
    for params in found.candidates:
        res = rankwise.evaluate(qrels, fuse(runs, "wsum", **params), ["ndcg@10"], missing="zero")
        per_candidate.append(res.per_query["ndcg@10"].droplevel(0).to_dict())
    assert np.allclose(found.means, [np.mean(list(v.values())) for v in per_candidate], rtol=0, atol=1e-15)
    every = set(per_candidate[0])
    assert sorted(q for f in found.folds for q in f["queries"]) == sorted(every)  # a partition of the queries
    for fold in found.folds:
        train = every - set(fold["queries"])
        train_means = [np.mean([v[q] for q in sorted(train)]) for v in per_candidate]
        pick = int(np.argmax(train_means))  # the first best, as optimize breaks ties
        assert fold["params"] == found.candidates[pick]
        for q in fold["queries"]:
            assert found.held_out[q] == per_candidate[pick][q]
    # the held-out run scores each query as the candidate chosen without it
    cv = rankwise.evaluate(qrels, found.run, ["ndcg@10"]).per_query["ndcg@10"].droplevel(0).to_dict()
    assert all(cv[q] == pytest.approx(found.held_out[q], abs=1e-15) for q in cv)
    assert found.best == found.candidates[int(np.argmax(found.means))]
    # with separate training qrels, one choice made on them
    split = optimize(qrels, runs, "wsum", "ndcg@10", grid=grid, train_qrels=qrels)
    assert len(split.folds) == 1 and split.folds[0]["params"] == found.best


def test_optimize_trains_learned_methods_on_the_other_folds_only() -> None:
    import rankwise
    from rankwise.data.load import load_qrels
    from rankwise.fusion import optimize

    qrels = str(Path(__file__).parents[1] / "examples" / "dl19" / "qrels.dl19-passage.txt")
    runs = {"BM25": str(Path(qrels).parent / "BM25.dl19.trec"),
            "SPLADE++": str(Path(qrels).parent / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")}
    found = optimize(qrels, runs, "probfuse", "ndcg@10", grid={"n_segments": [5, 20]}, folds=3, seed=1, rel_level=2)
    judged = load_qrels(qrels)
    for fold in found.folds:
        assert fold["params"]["rel_level"] == 2  # the evaluation's level is the method's unless searched
        held_out = set(fold["queries"])
        train = {}
        for q, d, label in zip(judged.query.to_pylist(), judged.doc.to_pylist(), judged.label, strict=True):
            if q not in held_out:
                train.setdefault(q, {})[d] = int(label)
        fused = fuse(runs, "probfuse", train_qrels=train, **fold["params"])
        values = rankwise.evaluate(qrels, fused, ["ndcg@10"], rel_level=2).per_query["ndcg@10"].droplevel(0)
        for q in fold["queries"]:
            assert found.held_out[q] == pytest.approx(float(values[q]), abs=1e-15)
    # learned from every query, it looks better than it is on unseen queries
    posfuse = optimize(qrels, runs, "posfuse", "ndcg@10", folds=5, seed=0, rel_level=2)
    assert float(posfuse.means[0]) > posfuse.held_out_mean + 0.01


def test_the_cli_tunes_under_cross_validation(tmp_path) -> None:
    from typer.testing import CliRunner

    import rankwise
    from rankwise.cli.main import app
    from rankwise.fusion import optimize

    qrels = str(Path(__file__).parents[1] / "examples" / "dl19" / "qrels.dl19-passage.txt")
    runs = {"BM25": str(Path(qrels).parent / "BM25.dl19.trec"),
            "SPLADE++": str(Path(qrels).parent / "SPLADE_P_P_ENSEMBLE_DISTIL.dl19.trec")}
    out = tmp_path / "cv.trec"
    result = CliRunner().invoke(app, ["fuse", *(f"{k}={v}" for k, v in runs.items()), "--method", "rrf", "--tune",
                                      "ndcg@10", "--qrels", qrels, "--grid", "k=10,60", "--folds", "3", "--seed", "2",
                                      "-l", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    found = optimize(qrels, runs, "rrf", "ndcg@10", grid={"k": [10, 60]}, folds=3, seed=2, rel_level=2)
    written = rankwise.evaluate(qrels, str(out), ["ndcg@10"], rel_level=2).summary["ndcg@10"].iloc[0]
    assert written == pytest.approx(found.held_out_mean, abs=1e-12)
    assert f"held-out ndcg@10: {found.held_out_mean:.4f}" in result.output
    assert result.output.count("fold ") == 3 and "fusion=rrf|tuned=ndcg@10|folds=3|seed=2" in result.output
    missing = CliRunner().invoke(app, ["fuse", *runs.values(), "--tune", "ndcg@10"])
    assert missing.exit_code == 2 and "--tune needs --qrels" in missing.output
    bad = CliRunner().invoke(app, ["fuse", *runs.values(), "--tune", "ndcg@10", "--qrels", qrels, "--grid", "k"])
    assert bad.exit_code == 2 and "--grid 'k': expected NAME=V1,V2" in bad.output


def test_optimize_refuses_what_it_cannot_search() -> None:
    from rankwise.fusion import optimize

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    runs = [{"q1": {"a": 1.0}, "q2": {"b": 1.0}}, {"q1": {"b": 1.0}, "q2": {"a": 1.0}}]
    with pytest.raises(RankwiseError, match="folds must be between 2 and the number of queries"):
        optimize(qrels, runs, "rrf", "P@1", folds=5)
    with pytest.raises(RankwiseError, match="no parameter 'alpha' to search"):
        optimize(qrels, runs, "rrf", "P@1", grid={"alpha": [1]}, folds=2)
    with pytest.raises(RankwiseError, match=r"combmnz: no parameter 'gamma' to search \(it takes no parameters\)"):
        optimize(qrels, runs, "combmnz", "P@1", grid={"gamma": [1]}, folds=2)


def test_condorcet_by_pairwise_majority() -> None:
    r1 = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    r2 = {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    r3 = {"q": {"a": 3.0, "c": 2.0, "b": 1.0}}
    # a beats b (runs 1, 3) and c (all); b beats c (runs 1, 2): a, b, c scored 3, 2, 1
    assert _as_dict(fuse([r1, r2, r3], "condorcet")) == {("q", "a"): 3.0, ("q", "b"): 2.0, ("q", "c"): 1.0}
    # weights: run 2 alone outweighs the others on (a, b)
    got = fuse([r1, r2, r3], "weighted_condorcet", weights=[1.0, 3.0, 1.0]).doc.to_pylist()
    assert got == ["b", "a", "c"]
    # a cycle (each pair won 2 to 1) resolves the same way every time: document id order first
    cycle = [r1, {"q": {"b": 3.0, "c": 2.0, "a": 1.0}}, {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}]
    assert fuse(cycle, "condorcet").doc.to_pylist() == fuse(cycle, "condorcet").doc.to_pylist() == ["a", "b", "c"]
    # a document a run did not return ranks below the ones it did
    assert fuse([{"q": {"a": 1.0}}, {"q": {"b": 1.0}}, {"q": {"a": 2.0, "b": 1.0}}], "condorcet").doc.to_pylist() \
        == ["a", "b"]


@pytest.mark.parametrize("seed", range(5))
def test_condorcet_equals_ranx_when_the_majority_is_an_order(seed: int, ranx_reference) -> None:
    rng = np.random.default_rng(seed)
    runs = []
    swaps = rng.permutation(11)[:6].reshape(3, 2)  # each run swaps two adjacent pairs, no pair twice
    for positions in swaps:
        order = list(range(12))
        for p in positions:
            order[p], order[p + 1] = order[p + 1], order[p]
        runs.append({"q": {f"d{d:02d}": float(12 - i) for i, d in enumerate(order)}})
    theirs = ranx_reference(str(seed), lambda ranx: ranx.fuse(
        [ranx.Run.from_dict(r, name=f"r{i}") for i, r in enumerate(runs)], norm=None, method="condorcet").to_dict())
    assert _as_dict(fuse(runs, "condorcet")) == _pairs(theirs)


@pytest.mark.parametrize("seed", range(30))
def test_condorcet_shortcut_equals_the_merge_sort(seed: int) -> None:
    from functools import cmp_to_key

    from rankwise.fusion.methods import _majority, _majority_order

    rng = np.random.default_rng(seed)
    candidates, runs = int(rng.integers(2, 9)), int(rng.integers(1, 5))
    ranks = np.full((candidates, runs), np.inf)
    for i in range(runs):  # each run returns a random subset, in a random order
        returned = rng.choice(candidates, size=int(rng.integers(1, candidates + 1)), replace=False)
        ranks[returned, i] = np.arange(1, len(returned) + 1)
    majority = _majority(ranks, rng.choice([1.0, 2.0], size=runs))
    merge_sorted = sorted(range(candidates), key=cmp_to_key(lambda x, y: int(majority[x, y])))
    assert _majority_order(majority).tolist() == merge_sorted


def test_reader_notes_reach_the_fused_run_and_the_command(tmp_path: Path) -> None:
    """A header line read as a query named 'qid' was silent in fuse before."""
    from typer.testing import CliRunner

    from rankwise.cli.main import app

    run = tmp_path / "hdr.trec"
    run.write_text("qid Q0 docno rank score tag\n1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    other = tmp_path / "other.trec"
    other.write_text("1 Q0 b 1 3.0 s\n")
    fused = fuse([str(run), str(other)], "rrf")
    assert any("score(s) were not plain numbers" in note for note in fused.notes)
    result = CliRunner().invoke(app, ["fuse", str(run), str(other)])
    assert result.exit_code == 0 and "warning: " in result.output and "not plain numbers" in result.output


def test_fuse_takes_the_method_with_its_parameters_in_one_spelling() -> None:
    a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    b = {"q1": {"d3": 9.0, "d1": 8.0}}
    assert fuse([a, b], "RRF(k=10)").source == fuse([a, b], "rrf", k=10).source == \
        "fusion=rrf|k=10|norm=none|ties=trec|depth=all"
    with pytest.raises(RankwiseError, match=r"rrf: k given twice"):
        fuse([a, b], "rrf(k=10)", k=20)
