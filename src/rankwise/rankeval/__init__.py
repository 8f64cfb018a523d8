"""Rated requests and query templates run against a search backend, scored like
Elasticsearch's ``_rank_eval`` (see ``docs/rank_eval.md``).

>>> from rankwise.rankeval import CallableBackend, parse_spec, rank_eval
>>> spec = parse_spec({"requests": [{"id": "q1", "request": {"query": {"match_all": {}}},
...                                  "ratings": [{"_id": "a", "rating": 1}]}], "metrics": ["RR"]})
>>> rank_eval(spec, CallableBackend(lambda body, size: ["b", "a"])).score("default", "RR")
0.5
"""

from rankwise.rankeval.backends import CallableBackend, Hit
from rankwise.rankeval.evaluation import RankEvalResult, rank_eval
from rankwise.rankeval.spec import RankEvalSpec, load_spec, parse_spec

__all__ = ["CallableBackend", "Hit", "RankEvalResult", "RankEvalSpec", "load_spec", "parse_spec", "rank_eval"]
