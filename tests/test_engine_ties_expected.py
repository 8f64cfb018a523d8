"""ties='expected' equals the average over every order of the tied documents (brute force)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.data.containers import Qrels, Run
from rankwise.errors import RankwiseError

METRICS = ["P@1", "P@3", "recall@2", "map", "map@3", "recip_rank", "mrr@2", "ndcg@3", "ndcg", "dcg@2", "Rprec"]


def _orders(scores: dict[str, float]):
    """Every ranking of the documents consistent with the scores (ties in any order)."""
    groups = {}
    for doc, s in scores.items():
        groups.setdefault(s, []).append(doc)
    blocks = [groups[s] for s in sorted(groups, reverse=True)]
    for perms in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield [d for block in perms for d in block]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from("abcdefg"), st.sampled_from([1.0, 2.0, 3.0]), min_size=1, max_size=6),
       st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from([0, 1, 2]), min_size=1, max_size=6))
def test_expected_equals_brute_force(scores: dict[str, float], labels: dict[str, int]) -> None:
    qrels = Qrels.from_dict({"q": labels})
    expected = rankwise.evaluate(qrels, {"q": scores}, METRICS, ties="expected").per_query.iloc[0]
    # every order as a query of its own with the same labels, scored in one evaluation
    orders = list(_orders(scores))
    many = rankwise.evaluate(Qrels.from_dict({f"o{i}": labels for i in range(len(orders))}),
                             Run.from_ranked_lists({f"o{i}": order for i, order in enumerate(orders)}), METRICS)
    values = many.per_query.reindex(pd.MultiIndex.from_product([many.per_query.index.levels[0],
                                                                [f"o{i}" for i in range(len(orders))]]))
    assert len(values) == len(orders) and not values.isna().any().any()
    brute = values.to_numpy().mean(axis=0)
    assert expected.to_numpy() == pytest.approx(brute, abs=1e-12)


def test_hand_computed_tie() -> None:
    # d1 (relevant) and d2 tied first, then d3 (relevant): each order counts half
    qrels = {"q": {"d1": 1, "d2": 0, "d3": 1}}
    run = {"q": {"d1": 2.0, "d2": 2.0, "d3": 1.0}}
    res = rankwise.evaluate(qrels, run, ["P@1", "recip_rank", "map"], ties="expected").summary.iloc[0]
    assert res["P@1"] == 0.5
    assert res["recip_rank"] == 0.75  # (1/1 + 1/2) / 2
    # AP: d1 first -> (1 + 2/3)/2; d2 first -> (1/2 + 2/3)/2; mean
    assert res["map"] == pytest.approx(((1 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2) / 2)


def test_unsupported_metrics_refuse() -> None:
    with pytest.raises(RankwiseError, match="bpref: no tie-aware form"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "bpref", ties="expected")
    with pytest.raises(RankwiseError, match="cannot be combined with depth"):
        rankwise.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "map", ties="expected", depth=10)


def test_warning_when_ties_straddle_a_cut_off() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 1}, "r": {"x": 1}}
    # a (relevant) and b tie at ranks 1-2: P@1 depends on the tie rule; P@2 does not
    run = {"q": {"a": 2.0, "b": 2.0, "c": 1.0}, "r": {"x": 1.0, "y": 1.0}}
    res = rankwise.evaluate(qrels, run, ["P@1", "P@2"])
    straddle = [w for w in res.warnings if "tie across cut-off" in w]
    # one warning for P@1 naming both queries (in r, x is relevant and y unjudged: labels differ)
    assert len(straddle) == 1
    assert "P@1: in 2 query(ies)" in straddle[0] and "cut-off 1" in straddle[0]
    assert not any("cut-off 2" in w for w in res.warnings)
    same_labels = rankwise.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 2.0}}, "P@1")
    assert not any("tie across" in w for w in same_labels.warnings)
