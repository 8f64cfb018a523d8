"""A saved streaming state is an artefact like a saved model: unknown keys, a missing state and
wrong shapes are refused when it is loaded, never ignored."""

from __future__ import annotations

import pytest

from rankwise.errors import RankwiseError
from rankwise.streaming import NDCG, Accuracy


def test_unknown_keys_and_wrong_shapes_in_a_saved_state_are_refused() -> None:
    saved = Accuracy().update(predictions=[0.9, 0.1, 0.8], targets=[1, 0, 0]).state_dict()
    assert Accuracy().load_state_dict(saved).compute() == 2 / 3
    with pytest.raises(RankwiseError, match="unknown key 'bogus'"):
        Accuracy().load_state_dict({**saved, "bogus": 1})
    with pytest.raises(RankwiseError, match="needs a 'state' mapping"):
        Accuracy().load_state_dict({"metric": "Accuracy", "params": saved["params"]})
    state = dict(saved["state"])
    state["extra"] = 0
    with pytest.raises(RankwiseError, match="do not match"):
        Accuracy().load_state_dict({**saved, "state": state})
    ndcg = NDCG(k=[5, 10]).update(predictions=[[0.9, 0.5, 0.1]], targets=[[0, 1, 1]]).state_dict()
    with pytest.raises(RankwiseError):
        NDCG(k=[5]).load_state_dict(ndcg)   # other parameters
