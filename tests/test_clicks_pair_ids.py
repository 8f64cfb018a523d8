"""A pair id means one (query, document) pair across the parts of a split: parts number their
pairs afresh, ``ClickLog.pair_ids_in`` maps them to the whole log's ids, and the CLARA 2
benchmark hands CLAX only whole-log ids (before, 0.85% of the ids CLAX was tested on named
another pair in the training part)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankwise import clicks

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "tests" / "data" / "clicks" / "clara2_head.tsv"


def _names(log: clicks.ClickLog, ids: np.ndarray, of: clicks.ClickLog) -> list[tuple[str, str]]:
    return [(of.query_ids[of.pair_query[i]], of.doc_ids[of.pair_doc[i]]) for i in ids.tolist()]


@pytest.mark.parametrize("by", ["session", "query"])
def test_every_part_speaks_the_whole_logs_pair_ids(by: str) -> None:
    whole = clicks.read_log(str(LOG))
    train, test = whole.split(test_share=0.3, seed=1, by=by)
    local = {}
    for part in (train, test):
        mapped = part.pair_ids_in(whole)
        assert (mapped >= 0).all()
        # the mapped id names in the whole log the pair the part's own id names in the part
        assert _names(whole, mapped, whole) == _names(part, np.arange(part.n_pairs), part)
        local[id(part)] = dict(zip(mapped.tolist(), _names(part, np.arange(part.n_pairs), part), strict=True))
    shared = set(local[id(train)]) & set(local[id(test)])
    assert all(local[id(train)][i] == local[id(test)][i] for i in shared)
    # the parts' own numbering does not have this property: the reason for the mapping
    own_train = dict(enumerate(_names(train, np.arange(train.n_pairs), train)))
    own_test = dict(enumerate(_names(test, np.arange(test.n_pairs), test)))
    assert any(own_train[i] != own_test[i] for i in set(own_train) & set(own_test))


def test_the_clara2_benchmark_gives_clax_whole_log_ids() -> None:
    script = (ROOT / "benchmarks" / "clara2_clicks.py").read_text()
    assert "to_whole[chunk.pairs]" in script and "part.pair_ids_in(log)" in script
    assert "np.where(chunk.mask, chunk.pairs, 0)" not in script
