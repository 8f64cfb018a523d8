"""A typo's suggestion fixes the typo: a cut-off typed with letters that look like digits
(``1O``, ``l0``, ``5O``) is read as those digits, the suggestion never echoes the typo, and
every suggestion is a spelling that evaluates."""

from __future__ import annotations

from pathlib import Path

import pytest

import rankwise
from rankwise.errors import UnknownMetricError

ROOT = Path(__file__).resolve().parent.parent
TYPOS = {"ndcg@1O": "ndcg@10", "ndcg@lO": "ndcg@10", "P@l0": "p@10", "recal@5O": "recall@50", "map@1O0": "map@100",
         "ndgc@100": "ndcg@100", "precison@5": "precision@5", "mrr@1o": "mrr@10", "recall@I00": "recall@100"}


@pytest.mark.parametrize("typo", sorted(TYPOS))
def test_the_suggestion_is_a_spelling_that_evaluates(typo: str) -> None:
    qrels, run = ROOT / "examples" / "qrels.test", ROOT / "examples" / "results.test"
    with pytest.raises(UnknownMetricError) as error:
        rankwise.evaluate(str(qrels), str(run), [typo])
    suggestions = error.value.suggestions
    assert suggestions and suggestions[0] == TYPOS[typo] and typo not in suggestions
    for suggestion in suggestions:
        assert len(rankwise.evaluate(str(qrels), str(run), [suggestion]).summary) == 1
