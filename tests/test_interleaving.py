"""Interleaving: the lists each method can produce and the credits of clicks, equal to the
cases of mpkato/interleaving's tests; probabilistic interleaving's rank distribution; no
preference under clicks independent of rank; the sign test's false-positive rate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rankwise.errors import InputError, ParameterError
from rankwise.interleaving.interleave import Interleaved, interleave, outcomes, preferences


def _possible(rankings, method: str, length: int, draws: int = 300) -> set[tuple]:
    rng = np.random.default_rng(0)
    return {tuple(interleave(rankings, method, length, rng).docs) for _ in range(draws)}


def test_team_draft_lists_and_teams() -> None:
    # mpkato/interleaving tests/test_team_draft.py: the allowed lists
    assert _possible([[1, 2], [2, 3]], "team-draft", 2) == {(1, 2), (2, 1)}
    assert _possible([[1, 2], [2, 3]], "team-draft", 3) == {(1, 2, 3), (2, 1, 3)}
    assert _possible([[1, 2], [2, 3]], "team-draft", 4) == {(1, 2, 3), (2, 1, 3)}
    assert _possible([[1, 2], [3, 4]], "team-draft", 2) == {(1, 3), (3, 1)}
    assert _possible([[1, 2], [3, 4]], "team-draft", 3) == {(1, 3, 2), (1, 3, 4), (3, 1, 2), (3, 1, 4)}
    # multileaving, three rankings
    assert _possible([[1, 2], [2, 3], [3, 4]], "team-draft", 2) == {(1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)}
    assert _possible([[1, 2], [3, 4], [5, 6]], "team-draft", 2) == {(1, 3), (1, 5), (3, 1), (3, 5), (5, 1), (5, 3)}
    # teams: [[1, 2], [2, 3]] gives A document 1 and B document 2, whichever picks first
    shown = interleave([[1, 2], [2, 3]], "team-draft", rng=3)
    assert {d: int(t) for d, t in zip(shown.docs, shown.teams, strict=True)} == {1: 0, 2: 1}


def test_team_draft_credit() -> None:
    def winner(docs, teams, clicks):
        credit = Interleaved(docs, np.array(teams), [[], []], "team-draft").credit(clicks)
        return outcomes(credit[None, :])[(0, 1)][0]
    # mpkato: [1, 2] with teams A = {1}, B = {2}
    assert [winner([1, 2], [0, 1], c) for c in ([0, 1], [0], [1], [])] == [0, 1, -1, 0]
    # [1, 3, 4] with A = {1}, B = {3, 4}
    cases = [[0, 1, 2], [0, 1], [0, 2], [1, 2], [0], [1], [2], []]
    assert [winner([1, 3, 4], [0, 1, 1], c) for c in cases] == [-1, 0, 0, -1, 1, -1, -1, 0]


def test_balanced_lists_and_credit() -> None:
    # mpkato/interleaving tests/test_balanced.py
    assert _possible([[1, 2], [2, 3]], "balanced", 2) == {(1, 2), (2, 1)}
    assert _possible([[1, 2], [3, 4]], "balanced", 2) == {(1, 3), (3, 1)}
    assert _possible([[1, 2], [2, 3]], "balanced", 3) == {(1, 2), (2, 1, 3)}
    assert _possible([[1, 2], [3, 4]], "balanced", 3) == {(1, 3, 2), (3, 1, 4)}

    def winner(docs, clicks):
        credit = Interleaved(docs, np.full(len(docs), -1), [[1, 2], [2, 3]], "balanced",
                             by_lowest_click=True).credit(clicks)
        return outcomes(credit[None, :])[(0, 1)][0]
    assert [winner([1, 2], c) for c in ([0, 1], [0], [1], [])] == [0, 1, -1, 0]
    # [2, 1, 3]: a click on 2 (rank 1 of B, 2 of A) gives k = 1 and credits B's top 1 only
    cases = [[0, 1, 2], [0, 1], [0, 2], [1, 2], [0], [1], [2], []]
    assert [winner([2, 1, 3], c) for c in cases] == [0, 0, -1, 0, -1, 1, -1, 0]
    with pytest.raises(InputError, match="balanced interleaving takes exactly 2 rankings"):
        interleave([[0], [1], [2]], "balanced")


def test_probabilistic_rank_distribution() -> None:
    # two identical rankings of 6: the first shown document is rank r with P proportional
    # to 1 / r^3 (1, 1/8, 1/27, ...)
    ranking = list("abcdef")
    rng = np.random.default_rng(1)
    first = [ranking.index(interleave([ranking, ranking], "probabilistic", length=1, rng=rng).docs[0])
             for _ in range(20_000)]
    observed = np.bincount(first, minlength=6)
    weights = 1 / np.arange(1, 7) ** 3.0
    expected = weights / weights.sum() * len(first)
    assert expected.min() > 5   # every cell large enough for the chi-square
    assert stats.chisquare(observed, expected).pvalue > 0.001
    assert observed[0] / len(first) == pytest.approx(weights[0] / weights.sum(), abs=0.01)   # 0.83


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_clicks_independent_of_rank_prefer_neither(method: str) -> None:
    # A and B rank the same 10 documents in different orders; users click each shown
    # position with 0.3 whatever the document: wins and losses must balance
    rng = np.random.default_rng(2)
    a = list(range(10))
    b = [3, 7, 1, 9, 0, 5, 2, 8, 6, 4]
    credits = []
    for _ in range(6_000):
        shown = interleave([a, b], method, rng=rng)
        credits.append(shown.credit(np.flatnonzero(rng.random(len(shown.docs)) < 0.3)))
    row = preferences(np.array(credits)).table.iloc[0]
    se = 0.5 / np.sqrt(row["wins"] + row["losses"])
    assert abs(row["wins"] / (row["wins"] + row["losses"]) - 0.5) < 4 * se


def test_sign_test_false_positive_rate_and_holm() -> None:
    # A/A: 400 experiments of 200 impressions, identical rankers, random clicks; the sign
    # test rejects at 0.05 in about 5% (binomial, discrete: at most that)
    rng = np.random.default_rng(4)
    rejections = 0
    for _ in range(400):
        credits = rng.binomial(1, 0.3, size=(200, 2))
        rejections += preferences(credits, resamples=200).table.iloc[0]["p_value"] < 0.05
    assert rejections / 400 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)
    # three rankings: three pairs, Holm across them
    table = preferences(np.array([[2, 1, 0]] * 30 + [[0, 1, 2]] * 10), names=["A", "B", "C"]).table
    assert table[["a", "b"]].values.tolist() == [["A", "B"], ["A", "C"], ["B", "C"]]
    assert (table["p_holm"] >= table["p_value"]).all()
    assert table.iloc[0]["delta"] == pytest.approx(30 / 40 - 0.5)


def test_optimized_lists_probabilities_and_credit() -> None:
    from rankwise.interleaving.interleave import distribution

    # mpkato/interleaving tests/test_optimized.py: [[1, 2], [2, 3]] allows (1, 2), (2, 1), (2, 3).
    # Credits 1/rank (3 when absent): cumulative A - B at depth 1 is 1 - 1/3, 1/2 - 1, 1/2 - 1 and at
    # depth 2 is 1/6, 1/6, -2/3; with sum p = 1 the three equations fix p = (3/7, 13/35, 1/5).
    table = distribution([[1, 2], [2, 3]], "optimized")
    got = {tuple(docs): float(p) for docs, p in zip(table.lists, table.probabilities, strict=True)}
    assert got.keys() == {(1, 2), (2, 1), (2, 3)}
    assert got[(1, 2)] == pytest.approx(3 / 7, abs=1e-9)
    assert got[(2, 1)] == pytest.approx(13 / 35, abs=1e-9)
    assert got[(2, 3)] == pytest.approx(1 / 5, abs=1e-9)
    assert table.exact

    # mpkato's evaluate cases: on (1, 2) clicks at [0, 1] give A 1 + 1/2 and B 1/3 + 1: A wins;
    # [0]: A; [1]: B; no click: tie. On (2, 3) every click favours B.
    def winner(docs, clicks):
        index = [tuple(d) for d in table.lists].index(docs)
        credit = table.shown(index).credit(clicks)
        return outcomes(credit[None, :])[(0, 1)][0]
    assert [winner((1, 2), c) for c in ([0, 1], [0], [1], [])] == [1, 1, -1, 0]
    assert [winner((2, 1), c) for c in ([0, 1], [0], [1], [])] == [1, -1, 1, 0]
    assert [winner((2, 3), c) for c in ([0, 1], [0], [1], [])] == [-1, -1, -1, 0]
    # interleave draws from the same distribution
    rng = np.random.default_rng(1)
    counts: dict[tuple, int] = {}
    for _ in range(600):   # each call solves the linear program again
        key = tuple(interleave([[1, 2], [2, 3]], "optimized", rng=rng).docs)
        counts[key] = counts.get(key, 0) + 1
    expected = np.array([got[k] for k in sorted(counts)]) * 600
    assert stats.chisquare(np.array([counts[k] for k in sorted(counts)]), expected).pvalue > 0.001


def test_optimized_credit_tables_by_hand() -> None:
    from rankwise.interleaving.distribution import _credit_table

    # A = [1, 2], B = [2, 3]; a document a ranking lacks is ranked just past its end (3).
    # negative credit -rank: (1, 2) gets A (-1, -2) and B (-3, -1); (2, 3) A (-2, -3), B (-1, -2);
    # the one-document list (3,) A -3, B -2 at position 1 and nothing (0) at position 2
    table = _credit_table([[1, 2], [2, 3]], [[1, 2], [2, 3], [3]], 2, "negative")
    assert table.tolist() == [[[-1, -3], [-2, -1]], [[-2, -1], [-3, -2]], [[-3, -2], [0, 0]]]
    # inverse credit 1/rank of the same cells
    inverse = _credit_table([[1, 2], [2, 3]], [[1, 2], [2, 3], [3]], 2, "inverse")
    assert inverse.tolist() == [[[1, 1 / 3], [1 / 2, 1]], [[1 / 2, 1], [1 / 3, 1 / 2]], [[1 / 3, 1 / 2], [0, 0]]]


def test_probabilistic_draws_as_numpys_choice_would() -> None:
    from rankwise.interleaving.lists import _probabilistic

    # the list drawing consumes the random stream as the rule it implements: a uniform team among
    # those with documents left, then rng.choice over that team's unshown documents, p ~ 1/rank^tau
    def by_choice(lists, size, rng, tau):
        left = [list(r) for r in lists]
        docs, teams = [], []
        while len(docs) < size and any(left):
            open_teams = [t for t in range(len(lists)) if left[t]]
            team = open_teams[int(rng.integers(len(open_teams)))]
            p = np.array([1.0 / (r + 1) ** tau if d in left[team] else 0.0 for r, d in enumerate(lists[team])])
            doc = lists[team][int(rng.choice(len(p), p=p / p.sum()))]
            docs.append(doc)
            teams.append(team)
            left = [[d for d in r if d != doc] for r in left]
        return docs, teams

    lists = [[1, 2, 3, 4, 5, 6], [6, 4, 2, 7, 8], [9, 1, 8]]
    for seed in range(40):
        assert _probabilistic(lists, 7, np.random.default_rng(seed), 1.5) == \
            by_choice(lists, 7, np.random.default_rng(seed), 1.5)


def test_optimized_multileaving_is_unbiased_at_every_depth() -> None:
    from rankwise.interleaving.interleave import distribution

    rng = np.random.default_rng(5)
    docs = list(range(12))
    rankings = [rng.permutation(docs)[:5].tolist() for _ in range(3)]
    table = distribution(rankings, "optimized")
    assert table.probabilities.sum() == pytest.approx(1.0)
    # expected credit of each top-k, by ranking, is equal across rankings
    cumulative = np.einsum("i,ijx->jx", table.probabilities, np.cumsum(table.credit, axis=1))
    assert np.allclose(cumulative, cumulative[:, :1], atol=1e-9)
    with pytest.raises(ParameterError, match="optimized: credit must be one of inverse, negative, got 'log'"):
        distribution(rankings, "optimized", credit="log")
    with pytest.raises(ParameterError, match="optimized: credit must be one of"):
        distribution(rankings, "optimized(credit=log)")


def test_distribution_is_exact_and_credits_vectorised() -> None:
    from rankwise.interleaving.interleave import distribution

    table = distribution([[1, 2], [3, 4]], "team-draft", length=3)
    # two rounds, a fair coin each: four lists, a quarter each
    got = {tuple(d): float(p) for d, p in zip(table.lists, table.probabilities, strict=True)}
    assert got == {(1, 3, 2): 0.25, (1, 3, 4): 0.25, (3, 1, 2): 0.25, (3, 1, 4): 0.25}
    rng = np.random.default_rng(2)
    for method in ("team-draft", "balanced", "probabilistic", "optimized"):
        table = distribution([["a", "b", "c", "d"], ["c", "e", "a", "f"]], method, samples=50, rng=3)
        assert table.probabilities.sum() == pytest.approx(1.0)
        for index in range(len(table.lists)):
            clicks = (rng.random((20, len(table.lists[index]))) < 0.4).astype(int)
            fast = table.credits(index, clicks)
            one_by_one = [table.shown(index).credit(np.flatnonzero(row)) for row in clicks]
            assert np.allclose(fast, np.array(one_by_one, dtype=float)), method


def test_credits_of_a_semicolon_file_name_the_file_and_the_delimiter(tmp_path) -> None:
    from rankwise.interleaving.interleave import read_credits

    path = tmp_path / "credits.csv"
    path.write_text("a;b\n1;0\n0;1\n")
    with pytest.raises(InputError, match=r"credits\.csv: field 'rankers': .* the header holds ';'"):
        read_credits(str(path))                                    # named '<input>' before


def test_interleaving_methods_are_one_registry() -> None:
    from rankwise.errors import ParameterError
    from rankwise.interleaving.methods import INTERLEAVING_METHODS

    assert INTERLEAVING_METHODS.names() == ["balanced", "team-draft", "probabilistic", "optimized"]
    assert interleave([["a", "b"], ["c", "d"]], "TD", rng=0).method == "team-draft"   # an alias
    with pytest.raises(ParameterError, match="unknown interleaving method 'team_drat'; did you mean 'team-draft'"):
        interleave([["a"], ["b"]], "team_drat")


def test_unclicked_impressions_are_counted_whether_kept_or_left_out() -> None:
    # 8 wins for A, 2 for B, 2 impressions without a click: counted as ties by default, left out
    # with clicked_only; n_unclicked is 2 either way (it was 0 by default)
    credits = np.array([[1, 0]] * 8 + [[0, 1]] * 2 + [[0, 0]] * 2)
    kept, left_out = preferences(credits).table.iloc[0], preferences(credits, clicked_only=True).table.iloc[0]
    assert (kept["n"], kept["ties"], kept["n_unclicked"]) == (12, 2, 2)
    assert (left_out["n"], left_out["ties"], left_out["n_unclicked"]) == (10, 0, 2)


def _hofmann_reference(docs: list, lists: list[list], tau: float) -> np.ndarray:
    """Probabilistic interleaving's credit as Hofmann et al. (2011) define it, by brute force:
    every team assignment ``a`` of the positions, ``P(a | L) ~ P(L | a) P(a)`` with each
    position's ranking drawn uniformly among those with documents left and drawing its document
    by the softmax over ``1 / rank^tau`` of its documents not yet shown; the credit of ranking
    ``t`` at position ``r`` is the total posterior of the assignments giving ``r`` to ``t``."""
    import itertools

    posterior = np.zeros((len(docs), len(lists)))
    for assignment in itertools.product(range(len(lists)), repeat=len(docs)):
        p, shown = 1.0, set()
        for doc, team in zip(docs, assignment, strict=True):
            open_teams = [u for u in range(len(lists)) if any(d not in shown for d in lists[u])]
            remaining = [d for d in lists[team] if d not in shown]
            if team not in open_teams or doc not in remaining:
                p = 0.0
                break
            weight = {d: 1.0 / (lists[team].index(d) + 1) ** tau for d in remaining}
            p *= weight[doc] / sum(weight.values()) / len(open_teams)
            shown.add(doc)
        for position, team in enumerate(assignment):
            posterior[position, team] += p
    return posterior / posterior.sum(axis=1, keepdims=True)


def test_probabilistic_credit_marginalises_over_team_assignments_as_hofmann_defines_it() -> None:
    from rankwise.interleaving.lists import probabilistic_posterior

    rng = np.random.default_rng(3)
    for _ in range(25):
        rankers = int(rng.integers(2, 4))
        pool = list("abcdefg")
        lists = [list(rng.choice(pool, size=int(rng.integers(3, 6)), replace=False)) for _ in range(rankers)]
        tau = float(rng.choice([1.0, 3.0]))
        shown = interleave(lists, "probabilistic", length=4, rng=int(rng.integers(1 << 30)), tau=tau)
        reference = _hofmann_reference(shown.docs, lists, tau)
        assert probabilistic_posterior(shown.docs, lists, tau) == pytest.approx(reference, rel=1e-12, abs=1e-15)
        assert shown.credit_rows() == pytest.approx(reference, rel=1e-12, abs=1e-15)
        clicked = [0, len(shown.docs) - 1]
        assert shown.credit(clicked) == pytest.approx(reference[clicked].sum(axis=0), rel=1e-12)


def test_probabilistic_drawn_credit_is_kept_as_a_named_variant_and_marginal_credit_is_unbiased() -> None:
    a, b = list("abcdefgh"), list("bcadhgfe")   # overlapping rankings
    drawn = interleave([a, b], "probabilistic", rng=5, teams="drawn")
    assert drawn.credit_rows() is None and drawn.credit([0]).tolist() == np.bincount(
        drawn.teams[[0]], minlength=2).tolist()
    # random clicks, independent of the list: the marginal credit difference averages 0 (fidelity)
    rng = np.random.default_rng(8)
    differences, disagree = [], 0
    for seed in range(2000):
        marginal = interleave([a, b], "probabilistic", rng=seed)
        clicks = np.flatnonzero(rng.random(len(marginal.docs)) < 0.3)
        credit = marginal.credit(clicks)
        differences.append(credit[0] - credit[1])
        team = np.bincount(marginal.teams[clicks], minlength=2)
        disagree += len(clicks) > 0 and np.sign(credit[0] - credit[1]) != np.sign(team[0] - team[1])
    assert abs(np.mean(differences)) < 3 * np.std(differences) / np.sqrt(2000)
    assert disagree > 100   # the two credits give another outcome on a good share of clicked impressions
    from rankwise.errors import ParameterError

    with pytest.raises(ParameterError, match="teams must be one of marginal, drawn"):
        interleave([a, b], "probabilistic", rng=1, teams="mixed")
