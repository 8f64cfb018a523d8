"""Evaluation beyond one run in memory: query-complete chunks of a file larger than memory
(``engine="chunks"``), Dask (``engine="dask"``) and Spark (``engine="spark"``).

Every engine scores each query with the same code as ``rankwise.evaluate`` and gathers the
per-query values in the same order, so per-query values and means are the same, bit for bit.
Dask and Spark are optional (``pip install "rankwise[dask]"`` / ``"rankwise[spark]"``) and
imported only when their engine is used.

>>> import rankwise
>>> rankwise.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.5}}, "P@1", engine="chunks").summary["P@1"].item()
1.0
"""
