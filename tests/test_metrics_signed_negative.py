"""``ndcg_signed`` with gains for negative labels: integer qrels read a negative label as
unjudged (trec_eval), so such gains are refused there with the way to keep them; continuous
qrels keep negative grades, and the gains apply to them. Hand-computed below."""

from __future__ import annotations

import math

import pytest

import rankwise
from rankwise.data.load import load_qrels
from rankwise.errors import RankwiseError

RUN = {"q1": {"b": 4.0, "a": 3.0, "c": 2.0, "d": 1.0}}


def test_gains_for_a_negative_label(tmp_path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 2\nq1 0 b -1\nq1 0 c 0\nq1 0 d 1\n")
    with pytest.raises(RankwiseError, match="gains for negative label"):
        rankwise.evaluate(str(qrels), RUN, ["ndcg_signed(-1=-2,0=0,1=1,2=2)@4"])
    continuous = load_qrels(str(qrels), continuous=True)
    value = rankwise.evaluate(continuous, RUN, ["ndcg_signed(-1=-2,0=0,1=1,2=2)@4"]).summary.iloc[0, 0]
    # ranking b (gain -2), a (2), c (0), d (1): DCG = -2 + 2/log2(3) + 0 + 1/log2(5) = -0.30746 < 0,
    # divided by |worst DCG@4|: the worst list puts b alone first (-2) -> -0.15373
    dcg = -2 + 2 / math.log2(3) + 1 / math.log2(5)
    assert value == pytest.approx(dcg / 2, abs=1e-12)
    labels = rankwise.evaluate(continuous, RUN, ["ndcg_signed@4"]).summary.iloc[0, 0]
    # labels as gains (b: -1): DCG = -1 + 2/log2(3) + 1/log2(5) >= 0, over ideal 2 + 1/log2(3)
    assert labels == pytest.approx((-1 + 2 / math.log2(3) + 1 / math.log2(5)) / (2 + 1 / math.log2(3)), abs=1e-12)
