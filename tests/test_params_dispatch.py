"""Every registry dispatches: each member of each family runs through the family's public entry
point on a small fixture, and a member added with a parameter of a new name (the recipe of
docs/architecture.md) works at once through that entry point, its parameter given in the
spelling (``name(key=value)``). A consumer that branches on names or passes hard-wired
keywords fails here.

The A/B families (tests, sequential designs, aggregations, correction scopes) are the
experiments redesign's and are listed in ``NOT_YET``; metric families have their own recipe,
run by ``tests/test_architecture.py::test_the_add_a_metric_example_in_the_docs_runs``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankwise.cli.catalogue import REGISTRIES, registry
from rankwise.params import Declared, Param

LOG = Path(__file__).parent / "data" / "clicks" / "clara2_head.tsv"
NO_NEW_MEMBER = {"event-aggregations": "an aggregation is a row expression that every engine compiles (Arrow, "
                                       "DuckDB SQL, Ibis): a new one is written in each, not declared once"}

# off-policy rounds: weights w = target / behavior = 2, 1, 2
REWARD, BEHAVIOR, TARGET = [1.0, 0.0, 1.0], [0.5, 0.5, 0.25], [1.0, 0.5, 0.5]
Q_LOGGED, Q_TARGET = [0.5, 0.2, 0.4], [0.6, 0.3, 0.5]
# two slates of two positions; per-row r pi_e / pi_b = 2, 0, 0.5, 4
SLATES = ([0, 0, 1, 1], [1.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.25], [1.0, 0.5, 0.25, 1.0])
QRELS = {f"q{i}": {"a": 1, "b": 1, "c": 0} for i in range(8)}
# run y ranks a relevant document first everywhere; x puts the irrelevant c first on q0-q5
RUNS = {"x": {q: ({"c": 3.0, "a": 2.0, "b": 1.0} if int(q[1:]) < 6 else {"a": 3.0, "b": 2.0, "c": 1.0})
              for q in QRELS},
        "y": {q: {"a": 3.0, "b": 2.0, "c": 1.0} for q in QRELS},
        "z": {q: {"b": 3.0, "c": 2.0, "a": 1.0} for q in QRELS}}
RECOMMENDED = {"u1": ["a", "b", "c"], "u2": ["a", "d"], "u3": ["b"]}
TRAIN = {"u1": ["d"], "u2": ["b", "c"], "u3": ["a", "c"]}
HELD_OUT = {"u1": ["a"], "u2": ["d"], "u3": ["c"]}
FEATURES = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [0.5, 0.2]}
GROUPS = {"a": "g1", "b": "g2", "c": "g1", "d": "g2"}


def _add(monkeypatch: pytest.MonkeyPatch, kind: str, member: Declared) -> None:
    """``member`` registered in ``kind``'s registry for this test only."""
    chosen = registry(kind)
    monkeypatch.setattr(chosen, "_members", dict(chosen._members))
    monkeypatch.setattr(chosen, "_keys", dict(chosen._keys))
    chosen.register(member)


# ---------------------------------------------------------------- every member, public entry


def _click_model(name: str, tmp_path: Path, rankwise_cli: Any) -> float:
    from rankwise.clicks import load_model

    member = registry("click-models").get(name)
    out = tmp_path / "model.json"
    spelling = "mixture(components=pbm+cascade)" if name == "mixture" else name
    code = rankwise_cli(["clicks", "fit", str(LOG), "--model", spelling, "--quiet", "-o", str(out)])
    if not member.fittable:
        assert code == 2 and not out.exists()   # made from labels: refused by fit, named
        return 0.5
    assert code == 0
    return float(np.mean(load_model(out).relevance().score))


def _click_fit_option(kind: str, name: str, tmp_path: Path, rankwise_cli: Any) -> float:
    """A prior structure or an EM acceleration through ``clicks fit``; a ranking rule through
    ``clicks rank`` of a fitted DBN."""
    from rankwise.clicks import load_model

    out, run = tmp_path / "model.json", tmp_path / "run.trec"
    option = {"prior-structures": "--prior-structure", "accelerations": "--acceleration"}.get(kind)
    # 60 passes show that the member runs (EM's convergence is tested in test_clicks_acceleration.py;
    # plain EM takes about 900 passes on this log)
    fit = ["clicks", "fit", str(LOG), "--model", "dbn", "--quiet", "-o", str(out), "--iterations", "60"]
    assert rankwise_cli(fit + ([option, name] if option else [])) == 0
    if option is not None:
        return float(load_model(out).history[-1]["log_likelihood"])
    assert rankwise_cli(["clicks", "rank", "--model", str(out), str(LOG), "--by", name, "-o", str(run)]) == 0
    return float(np.mean([float(line.split()[4]) for line in run.read_text().splitlines()]))


def _run_every(kind: str, name: str, tmp_path: Path, rankwise_cli: Any) -> float:
    """``name`` of ``kind`` run through the family's public entry point: a number it gives."""
    if kind == "click-models":
        return _click_model(name, tmp_path, rankwise_cli)
    if kind in ("prior-structures", "click-rankings", "accelerations"):
        return _click_fit_option(kind, name, tmp_path, rankwise_cli)
    if kind == "simulated-users":
        from rankwise.clicks import ClickLog
        from rankwise.interleaving import simulation
        from rankwise.interleaving.simulated_users import user_model

        log = ClickLog.from_arrays(["q0"], [["a", "c"]], [[0, 0]])
        model = user_model(name, QRELS, log)
        laws = simulation.pattern_probabilities(model, log, log.pairs[:1], simulation.click_patterns(2))
        assert laws.sum() == pytest.approx(1.0)
        return float(laws[0, 0])
    if kind == "estimators":
        from rankwise.counterfactual import estimate

        return estimate(REWARD, BEHAVIOR, TARGET, name, Q_LOGGED, Q_TARGET, resamples=50)["value"]
    if kind == "slate-estimators":
        from rankwise.counterfactual import slate_estimate

        return slate_estimate(*SLATES, name, resamples=50)["value"]
    if kind == "interleaving":
        from rankwise.interleaving import distribution, interleave

        rankings = [["a", "b", "c"], ["c", "d", "a"]]
        assert len(interleave(rankings, name, rng=0).docs) == 3
        table = distribution(rankings, name, samples=20, rng=0)
        return float(table.probabilities.sum())
    if kind == "fusion":
        from rankwise.fusion import FUSION_METHODS, fuse

        member = FUSION_METHODS.get(name)
        given = {p.name: p.grid[1] for p in member.params if p.required}   # gamma, n_segments, w: no default
        fused = fuse(list(RUNS.values()), name, train_qrels=QRELS if member.trained else None, **given)
        return float(len(fused.doc))
    if kind == "normalisations":
        from rankwise.fusion import fuse

        return float(np.sum(fuse(list(RUNS.values()), "combsum", norm=name).score))
    if kind == "comparison-tests":
        from rankwise import compare

        return float(compare(QRELS, RUNS, "recip_rank", test=name, permutations=200).table["p_value"].iloc[0])
    if kind == "corrections":
        from rankwise import compare

        return float(compare(QRELS, RUNS, "recip_rank", correction=name).table["p_corrected"].max())
    if kind == "beyond-accuracy":
        from rankwise.recsys import beyond_accuracy

        result = beyond_accuracy(RECOMMENDED, f"{name}@3", train=TRAIN, test=HELD_OUT, features=FEATURES,
                                 groups=GROUPS, catalogue=list(FEATURES))
        return float(result.table["value"].iloc[0])
    if kind == "ab-tests":
        from rankwise.experiments import analyze

        row = analyze(_experiment(), "unit", "variant", ["bought>0"], test=name).table.iloc[0]
        return float(row["difference"])
    if kind == "sequential":
        from rankwise.experiments import analyze

        result = analyze(_experiment(), "unit", "variant", ["bought>0"], sequential=name, timestamp="time",
                         planned_units=200)
        assert result.looks is not None and len(result.looks) == 3   # one look a day
        return float(result.table["boundary"].iloc[0])
    if kind == "event-aggregations":
        from rankwise.experiments import analyze

        events = _events()
        spelled = f"x = {name}(click)" if not AGGREGATION_TARGET.get(name) else f"x = {name}(value)"
        return float(analyze(events, "unit", "variant", [spelled]).table["difference"].iloc[0])
    if kind == "correction-scopes":
        from rankwise.experiments import analyze

        table = analyze(_experiment(), "unit", "variant", ["bought>0", "late=time_day"], slices=["region"],
                        correction_scope=name).table
        return float(table["p_corrected"].max())
    if kind == "cap-conventions":
        from rankwise.experiments import analyze

        table = analyze(_experiment(), "unit", "variant", ["late=time_day"], caps={"late": "p50"},
                        covariates={"late": "bought"}, cap_convention=name).table
        return float(table["difference"].iloc[0])
    raise AssertionError(f"no public entry point for {kind}: add it here")


AGGREGATION_TARGET = {"sum": True}
"""The aggregations whose target is a numeric column (the others count events of a type)."""


def _events() -> Any:
    """An event log: every unit clicks once with value 1; B's units click a second time."""
    import pandas as pd

    units = list(range(20))
    rows = [(u, "B" if u % 2 else "A", "click", 1.0) for u in units] + \
        [(u, "B", "click", 2.0) for u in units if u % 2]
    return pd.DataFrame(rows, columns=["unit", "variant", "event", "value"])


def _experiment() -> Any:
    """120 units over three days; B buys more often: A units 0, 2 of every 10 (0.4), B 1, 3, 5 (0.6)."""
    import pandas as pd

    units = np.arange(120)
    return pd.DataFrame({"unit": units, "variant": np.where(units % 2, "B", "A"),
                         "bought": ((units % 10) < np.where(units % 2, 6, 3)).astype(int),
                         "time": pd.Timestamp("2026-01-01") + pd.to_timedelta(units % 3, unit="D"),
                         "time_day": units % 3, "region": [f"r{(u // 2) % 2}" for u in units]})


MEMBERS = [(kind, name) for kind in REGISTRIES for name in registry(kind)]


@pytest.mark.parametrize(("kind", "name"), MEMBERS)
def test_every_member_runs_through_its_public_entry_point(kind: str, name: str, tmp_path: Path,
                                                          rankwise_cli: Any) -> None:
    value = _run_every(kind, name, tmp_path, rankwise_cli)
    assert np.isfinite(value), (kind, name)


# ------------------------------------------------ a new member with a parameter of a new name


def _new_click_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.clicks import PBM, load_model
    from rankwise.clicks.registry import ITERATIONS, ModelKind

    class EvenPBM(PBM):
        """PBM with a prior of ``strength`` clicks in 2 x ``strength`` impressions (Beta(s, s))."""

        name = "even-pbm"

        def __init__(self, strength: float = 1.0) -> None:
            super().__init__(prior=(strength, 2 * strength))
            self.strength = strength

    _add(monkeypatch, "click-models", ModelKind("even-pbm", EvenPBM, "PBM shrunk towards 1/2.",
                                                (Param("strength", float, 1.0, "prior pseudo-counts", low=0.01),
                                                 ITERATIONS)))
    spread = {}
    for strength in (1.0, 1000.0):
        out = tmp_path / f"even-{strength:g}.json"
        assert rankwise_cli(["clicks", "fit", str(LOG), "--model", f"even-pbm(strength={strength:g}, iterations=5)",
                             "--quiet", "-o", str(out)]) == 0
        assert json.loads(out.read_text())["settings"] == {"strength": strength}
        spread[strength] = float(np.std(load_model(out).relevance().score))
    # a prior of 1,000 pseudo-counts each way holds every attractiveness near 1/2
    assert spread[1000.0] < spread[1.0] / 5


def _new_prior_structure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.clicks import load_model
    from rankwise.clicks.features import placement_sums
    from rankwise.clicks.structure import PriorStructure, placement_from_sums

    def sums(chunk, offset=1.0):   # per pair: its impressions, and ln(impressions + offset) summed later
        return {"impressions": placement_sums(chunk)["impressions"]}

    def from_sums(pairs, totals, offset=1.0):   # the pair's ln(impressions + offset), as one feature
        return placement_from_sums(pairs, {"impressions": np.ones_like(totals["impressions"]),
                                           "placed": np.log(totals["impressions"] + offset)})

    def of_log(log, offset=1.0):
        totals = {"impressions": np.zeros(log.n_pairs)}
        for chunk in log.chunks(1_000):
            totals["impressions"] += sums(chunk)["impressions"]
        return from_sums(log, totals, offset)

    _add(monkeypatch, "prior-structures", PriorStructure("exposure", of_log, "By how often the pair was shown.",
                                                         (Param("offset", float, 1.0, "added before the log", low=0),),
                                                         sums=sums, from_sums=from_sums))
    out = tmp_path / "m.json"
    assert rankwise_cli(["clicks", "fit", str(LOG), "--model", "pbm", "--prior-structure", "exposure(offset=2)",
                         "--quiet", "-o", str(out)]) == 0
    saved = json.loads(out.read_text())
    assert saved["settings"]["prior_structure"] == "exposure(offset=2)"
    assert saved["features"]["structure"] == "exposure(offset=2)"
    model = load_model(out)
    # the fitted features' mean is the pairs' mean ln(impressions + 2), from the log itself
    impressions = of_log(clicks_log := __import__("rankwise").clicks.read_log(LOG), 0.0).values[:, 0]
    assert model.feature_fit["mean"][0] == pytest.approx(np.log(np.exp(impressions) + 2).mean(), rel=1e-12)
    assert np.isfinite(model.relevance("r", clicks_log).score).all()


def _new_click_ranking(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.clicks import DBN, read_log, save_model
    from rankwise.clicks.structure import Ranking

    def blend(model, values, weight=0.5):   # weight x attractiveness + (1 - weight) x satisfaction
        return weight * values["alpha"] + (1 - weight) * values["sigma"]

    _add(monkeypatch, "click-rankings", Ranking("blend", blend, "A weighted mean.",
                                                (Param("weight", float, 0.5, "of attractiveness", low=0, high=1),)))
    model = DBN().fit(read_log(LOG))
    save_model(model, tmp_path / "m.json")
    run = tmp_path / "run.trec"
    assert rankwise_cli(["clicks", "rank", "--model", str(tmp_path / "m.json"), "--by", "blend(weight=0.25)", "-o",
                         str(run)]) == 0
    got = sorted(float(line.split()[4]) for line in run.read_text().splitlines())
    assert got == pytest.approx(sorted(0.25 * model.alpha + 0.75 * model.sigma), rel=1e-12)


def _new_acceleration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.clicks import load_model
    from rankwise.clicks.acceleration import Acceleration, PlainEM, set_parameter_vector

    class Relaxed(PlainEM):
        """Each pass's move stretched by ``step`` (1: plain EM)."""

        def __init__(self, model, step=1.0):
            super().__init__(model)
            self.step = step

        def after_pass(self, start, end, start_ll):
            if self.step == 1.0:
                return "plain"
            set_parameter_vector(self.model, np.clip(start + self.step * (end - start), 1e-9, 1 - 1e-9))
            return "extrapolated"

    _add(monkeypatch, "accelerations", Acceleration("relaxed", Relaxed, "Over-relaxed EM.",
                                                    (Param("step", float, 1.0, "the move's stretch", low=1),)))
    histories = {}
    for spelling in ("none", "relaxed(step=1)", "relaxed(step=1.5)"):
        out = tmp_path / "m.json"
        assert rankwise_cli(["clicks", "fit", str(LOG), "--model", "ubm(acceleration=none)" if spelling == "none" else
                             "ubm", "--quiet", "-o", str(out), "--iterations", "60"]   # the first 60 passes
                            + ([] if spelling == "none" else ["--acceleration", spelling])) == 0
        histories[spelling] = [e["log_likelihood"] for e in load_model(out).history]
    assert histories["relaxed(step=1)"] == histories["none"]          # a stretch of 1 is plain EM
    assert histories["relaxed(step=1.5)"] != histories["none"]


def _new_simulated_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.clicks import ClickLog
    from rankwise.clicks.ultra import from_ultra
    from rankwise.interleaving import simulation
    from rankwise.interleaving.simulated_users import user_model

    def patient_users(qrels, log, attention=1.0):   # examine every rank with the same chance
        return from_ultra({"model_name": "position_biased_model", "exam_prob": [attention] * 10,
                           "click_prob": [0.1, 0.16, 0.28, 0.52, 1.0]}, qrels, log)

    _add(monkeypatch, "simulated-users", Declared("patient", patient_users, "Users who examine every rank alike.",
                                                  (Param("attention", float, 1.0, "chance to examine a rank",
                                                         low=0, high=1),)))
    log = ClickLog.from_arrays(["q0"], [["c", "a"]], [[0, 0]])
    law = simulation.pattern_probabilities(user_model("patient(attention=0.5)", QRELS, log), log, log.pairs[:1],
                                           simulation.click_patterns(2))[0]
    # labels 0 and 1 click with 0.1 and 0.16 when examined (0.5): no click = (1 - 0.05)(1 - 0.08)
    assert law[0] == pytest.approx((1 - 0.5 * 0.1) * (1 - 0.5 * 0.16))


def _new_estimator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.counterfactual import estimate
    from rankwise.counterfactual.estimators import Estimator, RoundTerms

    def shrunk_ips(w, r, q_log, q_tgt, shrink=0.0):   # IPS with the weights pulled towards 1
        return RoundTerms((w + shrink) / (1 + shrink) * r, np.ones(len(r)), np.zeros(len(r)))

    _add(monkeypatch, "estimators", Estimator("shrunk-ips", shrunk_ips, "IPS, weights shrunk towards 1.",
                                              (Param("shrink", float, 0.0, "pseudo-weight", low=0),)))
    # shrink 1: weights (2 + 1) / 2, (1 + 1) / 2, (2 + 1) / 2 = 1.5, 1, 1.5: (1.5 + 0 + 1.5) / 3
    assert estimate(REWARD, BEHAVIOR, TARGET, "shrunk-ips(shrink=1)", resamples=50)["value"] == 1.0
    assert estimate(REWARD, BEHAVIOR, TARGET, "shrunk-ips", resamples=50)["value"] == pytest.approx(4 / 3)


def _new_slate_estimator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.counterfactual import slate_estimate

    def capped(slate, reward, behavior, target, cap=np.inf):   # each row's weighted reward capped
        return np.bincount(slate, weights=np.minimum(reward * target / behavior, cap))

    _add(monkeypatch, "slate-estimators", Declared("capped-sips", capped, "SIPS with each row capped.",
                                                   (Param("cap", float, np.inf, "cap per row", low=0),)))
    # rows 2, 0, 0.5, 4 capped at 1: slates 1 + 0 and 0.5 + 1: (1 + 1.5) / 2
    out = slate_estimate(*SLATES, "capped-sips(cap=1)", resamples=50)
    assert out["value"] == 1.25 and out["estimator"] == "capped-sips(cap=1)"


def _new_interleaving_method(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.interleaving import distribution, interleave
    from rankwise.interleaving.lists import Interleaved
    from rankwise.interleaving.methods import InterleavingMethod

    def one_leads(lists, size, rng, lead=0):   # the leading ranking's top, all credited to it
        docs = lists[lead][:size]
        return Interleaved(docs, np.full(len(docs), lead), lists, "one-leads")

    _add(monkeypatch, "interleaving", InterleavingMethod("one-leads", one_leads, "One ranking shows its top.",
                                                         (Param("lead", int, 0, "the leading ranking", low=0),)))
    rankings = [["a", "b"], ["c", "d"]]
    shown = interleave(rankings, "one-leads(lead=1)", rng=0)
    assert shown.docs == ["c", "d"] and shown.credit([0, 1]).tolist() == [0, 2]
    table = distribution(rankings, "one-leads(lead=1)", samples=10, rng=0)   # drawn: one list, always
    assert table.lists == [["c", "d"]] and table.probabilities.tolist() == [1.0]


def _new_fusion_method(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.fusion import fuse
    from rankwise.fusion.methods import Method

    def power_sum(s, r, table, power=1.0):   # sum of the normalised scores to a power
        return np.where(np.isnan(s), 0.0, s ** power).sum(axis=1)

    _add(monkeypatch, "fusion", Method("power-sum", power_sum, "Sum of powered scores.",
                                       (Param("power", float, 1.0, "the power", low=0),)))
    a, b = {"q": {"x": 4.0, "y": 2.0, "z": 0.0}}, {"q": {"y": 10.0, "w": 5.0}}
    # min-max: a -> x 1, y 0.5, z 0; b -> y 1, w 0. Squared: x 1, y 0.25 + 1, z 0, w 0
    fused = fuse([a, b], "power-sum(power=2)")
    assert dict(zip(fused.doc.to_pylist(), fused.score.tolist(), strict=True)) == {"y": 1.25, "x": 1.0, "z": 0.0,
                                                                                   "w": 0.0}
    assert "power-sum|power=2" in fused.source


def _new_normalisation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.fusion import fuse

    def power(table, exponent=1.0):   # the raw score to a power
        return np.sign(table.score) * np.abs(table.score) ** exponent

    _add(monkeypatch, "normalisations", Declared("power", power, "Scores to a power.",
                                                 (Param("exponent", float, 1.0, "the power", low=0),)))
    a, b = {"q": {"a": 3.0, "b": 1.0}}, {"q": {"b": 2.0, "c": 2.0}}
    fused = fuse([a, b], "combsum", norm="power(exponent=2)")   # a: 3^2; b: 1 + 2^2; c: 2^2
    assert dict(zip(fused.doc.to_pylist(), fused.score.tolist(), strict=True)) == {"a": 9.0, "b": 5.0, "c": 4.0}


def _new_comparison_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise import compare
    from rankwise.stats.paired import ComparisonTest

    def share_of_wins(a, b, /, *, resamples, seed, progress, floor=0.0):   # 1 - share of queries b wins
        return max(float(np.mean(np.asarray(b) <= np.asarray(a))), floor)

    member = ComparisonTest("share-of-wins", share_of_wins, "Share of queries the second run does not win.",
                            (Param("floor", float, 0.0, "the smallest p", low=0, high=1),))
    _add(monkeypatch, "comparison-tests", member)
    # recip_rank: y beats x on q0-q5 (1 against 1/2) and ties on q6-q7: 2 of 8 not won
    two = {k: RUNS[k] for k in ("x", "y")}
    assert compare(QRELS, two, "recip_rank", test="share-of-wins").table["p_value"].iloc[0] == 0.25
    result = compare(QRELS, two, "recip_rank", test="share-of-wins(floor=0.5)")
    assert result.table["p_value"].iloc[0] == 0.5 and result.test == "share-of-wins(floor=0.5)"


def _new_correction(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise import compare
    from rankwise.stats.corrections import correct

    def scaled(p, alpha, factor=1.0):   # every p-value times a factor, at most 1
        return np.minimum(p * factor, 1.0)

    _add(monkeypatch, "corrections", Declared("scaled", scaled, "p times a factor.",
                                              (Param("factor", float, 1.0, "the factor", low=1),)))
    assert correct(np.array([0.01, 0.2, 0.5]), "scaled(factor=3)").tolist() == [0.03, pytest.approx(0.6), 1.0]
    result = compare(QRELS, RUNS, "recip_rank", correction="scaled(factor=2)")
    table = result.table
    assert table["p_corrected"].tolist() == pytest.approx(np.minimum(table["p_value"] * 2, 1).tolist())
    assert result.correction == "scaled(factor=2)"


def _new_beyond_metric(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.recsys import beyond_accuracy
    from rankwise.recsys.metrics import BeyondMetric

    def long_lists(data, k, at_least=1):   # share of users whose top k holds at least at_least items
        lengths = np.minimum(np.diff(data.offsets), k)
        return float(np.mean(lengths >= at_least)), None

    _add(monkeypatch, "beyond-accuracy", BeyondMetric("long_lists", long_lists, "Users with long lists.",
                                                      (Param("k", int, 10, "cut-off", low=1, cutoff=True),
                                                       Param("at_least", int, 1, "items", low=0)), per_user=False))
    # list lengths 3, 2, 1: at least 2 for u1 and u2
    table = beyond_accuracy(RECOMMENDED, "long_lists(at_least=2)@3", train=TRAIN).table
    assert table["value"].iloc[0] == pytest.approx(2 / 3)


def _new_ab_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from scipy.stats import norm

    from rankwise.experiments import analyze
    from rankwise.experiments.ab_tests import ABTest

    def shifted(pair, d, settings, null=0.0):   # the z test of "the difference is null", not 0
        return {"p_value": float(2 * norm.sf(abs(d.difference - null) / d.se))}

    _add(monkeypatch, "ab-tests", ABTest("shifted", shifted, "z test against a shifted null.",
                                         (Param("null", float, 0.0, "the difference under the null"),), base="z"))
    data = _experiment()
    plain = analyze(data, "unit", "variant", ["bought>0"], test="z").table.iloc[0]
    result = analyze(data, "unit", "variant", ["bought>0"], test="shifted(null=0.2)")
    row = result.table.iloc[0]
    # B - A = 0.6 - 0.4 = 0.2: the shifted statistic is 0, its p 1; the z test's columns stay
    assert row["difference"] == pytest.approx(0.2) and row["p_value"] == pytest.approx(1.0)
    assert row["se"] == plain["se"] and row["test"] == "shifted"
    # through the command line too
    path = tmp_path / "experiment.csv"
    data.to_csv(path, index=False)
    out = tmp_path / "out.json"
    assert rankwise_cli(["ab", str(path), "--unit", "unit", "-m", "bought>0", "--test", "shifted(null=0.2)",
                         "-f", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["p_value"] == pytest.approx(1.0)


def _new_sequential_design(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from scipy.stats import norm

    from rankwise.experiments import analyze
    from rankwise.stats.sequential import Design

    def bonferroni_looks(control, treatment, d, alpha, looks=1):   # alpha split over a fixed number of looks
        half = norm.ppf(1 - alpha / (2 * looks)) * d.se
        return {"ci_lower": d.difference - half, "ci_upper": d.difference + half,
                "p_value": min(1.0, looks * 2 * norm.sf(abs(d.difference) / d.se)),
                "boundary": norm.ppf(1 - alpha / (2 * looks))}

    _add(monkeypatch, "sequential", Design("bonferroni-looks", bonferroni_looks, "Alpha split over the looks.",
                                           (Param("looks", int, 1, "the looks planned", low=1),), always_valid=True))
    data = _experiment()
    plain = analyze(data, "unit", "variant", ["bought>0"], test="z").table.iloc[0]
    row = analyze(data, "unit", "variant", ["bought>0"], test="z", sequential="bonferroni-looks(looks=10)"
                  ).table.iloc[0]
    assert row["p_value"] == pytest.approx(min(1.0, 10 * plain["p_value"]))
    assert row["boundary"] == pytest.approx(norm.ppf(1 - 0.05 / 20))   # 2.807
    assert row["ci_upper"] - row["difference"] == pytest.approx(norm.ppf(1 - 0.0025) * plain["se"])


def _new_correction_scope(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from rankwise.experiments import analyze
    from rankwise.experiments.slices import Scope

    def per_prefix(frame, separator="_"):   # the metrics that share a name up to the separator, together
        key = frame["metric"].str.split(separator).str[0]
        return [np.flatnonzero((key == value).to_numpy()) for value in dict.fromkeys(key)]

    _add(monkeypatch, "correction-scopes", Scope("prefix", per_prefix, "Metrics of one prefix together.",
                                                 (Param("separator", str, "_", "ends the prefix"),),
                                                 phrase="per prefix"))
    data = _experiment()
    metrics = ["buy_rate=bought>0", "buy_mean=bought", "day=time_day"]
    table = analyze(data, "unit", "variant", metrics, slices=["region"], correction="bonferroni",
                    correction_scope="prefix(separator=_)").table
    # bonferroni within each prefix: "buy" holds 2 metrics x 3 slices (all, r0, r1), "day" 3 rows
    assert table["p_value"].notna().all()
    for prefix, size in (("buy", 6), ("day", 3)):
        rows = table[table["metric"].str.startswith(prefix)]
        assert rows["p_corrected"].tolist() == pytest.approx(np.minimum(rows["p_value"] * size, 1).tolist())


def _new_cap_convention(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    from dataclasses import replace

    from rankwise.experiments import analyze
    from rankwise.experiments.capping import CapConvention, Capped, cap_value

    def at_fraction(values, metric, rule, ignore_zeros, fraction=1.0):   # the cap times a fraction
        cap = fraction * cap_value(values[metric.column], rule, ignore_zeros)
        name = f"{metric.column} at {fraction:g} x {rule}"
        return Capped({name: np.minimum(values[metric.column], cap)}, replace(metric, column=name), cap)

    _add(monkeypatch, "cap-conventions", CapConvention("fraction", at_fraction, "A fraction of the cap.",
                                                       (Param("fraction", float, 1.0, "of the cap", low=0),)))
    data = _experiment()   # time_day: 0, 1, 2 in turn; its p50 is 1, half of it 0.5
    result = analyze(data, "unit", "variant", ["late=time_day"], caps={"late": "p50"},
                     cap_convention="fraction(fraction=0.5)")
    assert result.settings["caps"]["late"] == 0.5
    capped = np.minimum(data["time_day"], 0.5)
    by_arm = capped.groupby(data["variant"]).mean()
    assert result.table["difference"].iloc[0] == pytest.approx(by_arm["B"] - by_arm["A"])
    path, out = tmp_path / "experiment.csv", tmp_path / "out.json"
    data.to_csv(path, index=False)
    assert rankwise_cli(["ab", str(path), "--unit", "unit", "-m", "late=time_day", "--cap", "late=p50",
                         "--cap-convention", "fraction(fraction=0.5)", "-f", "json", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["difference"] == pytest.approx(by_arm["B"] - by_arm["A"])


NEW_MEMBER: dict[str, Callable[[pytest.MonkeyPatch, Path, Any], None]] = {
    "click-models": _new_click_model, "simulated-users": _new_simulated_user, "estimators": _new_estimator,
    "slate-estimators": _new_slate_estimator, "interleaving": _new_interleaving_method,
    "fusion": _new_fusion_method, "normalisations": _new_normalisation,
    "comparison-tests": _new_comparison_test, "corrections": _new_correction, "beyond-accuracy": _new_beyond_metric,
    "ab-tests": _new_ab_test, "sequential": _new_sequential_design, "correction-scopes": _new_correction_scope,
    "cap-conventions": _new_cap_convention, "prior-structures": _new_prior_structure,
    "click-rankings": _new_click_ranking, "accelerations": _new_acceleration,
}


def test_every_family_is_walked() -> None:
    assert set(NEW_MEMBER) | set(NO_NEW_MEMBER) == set(REGISTRIES)
    assert not set(NEW_MEMBER) & set(NO_NEW_MEMBER)


@pytest.mark.parametrize("kind", sorted(NEW_MEMBER))
def test_a_new_member_with_a_parameter_of_a_new_name_works_through_the_public_entry_point(
        kind: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rankwise_cli: Any) -> None:
    NEW_MEMBER[kind](monkeypatch, tmp_path, rankwise_cli)


def test_no_branch_on_an_ab_member_name_outside_its_declaration() -> None:
    """The consumers read a member's facts (``unit_rows``, ``posterior``, ``always_valid``,
    ``sums_values``, a scope's groups ...), never its name: no comparison in ``src/`` against a
    name or alias of an A/B test, a sequential design, an event aggregation or a correction scope,
    outside the modules that declare them."""
    import ast

    from rankwise.experiments.ab_tests import AB_TESTS
    from rankwise.experiments.definitions import AGGREGATIONS
    from rankwise.experiments.slices import CORRECTION_SCOPES
    from rankwise.stats.sequential import SEQUENTIAL_DESIGNS

    names = {spelling for registry_ in (AB_TESTS, SEQUENTIAL_DESIGNS) for member in registry_.values()
             for spelling in (member.name, *member.aliases)}
    # aggregations and scopes have everyday names (sum, all): a comparison is a branch on one when
    # its other side reads an aggregation's function or a correction scope
    common = {spelling for registry_ in (AGGREGATIONS, CORRECTION_SCOPES) for member in registry_.values()
              for spelling in (member.name, *member.aliases)}
    root = Path(__file__).resolve().parent.parent / "src" / "rankwise"
    own = {root / "experiments" / "ab_tests.py", root / "stats" / "sequential.py",
           root / "experiments" / "definitions.py", root / "experiments" / "slices.py"}
    assert all(path.exists() for path in own), "the declaring modules moved: name them here"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path in own:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            strings = set()
            read = ""
            for side in (node.left, *node.comparators):
                elements = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                strings |= {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                read += "" if isinstance(side, ast.Constant) else ast.unparse(side)
            if strings & names or (strings & common and ("function" in read or "scope" in read)):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "branch on a name; declare a fact on the member instead:\n" + "\n".join(found)
