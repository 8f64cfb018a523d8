"""Bounded fuzz test of every reader outside the TREC core (the TREC readers have their own,
tests/test_data_fuzz.py): click logs (Yandex and long rows), saved click models, editorial
labels, A/B logs, bandit logs, interleaving credits, rank-eval specs and ratings, and
recommendation lists. Each starts from a valid file and is mutated byte by byte (delimiters,
digits, signs, NaN and infinities, huge numbers, quotes, empty fields, invalid UTF-8, NUL,
truncation, duplicated lines); the only exception any of them may raise is rankwise's own
error, and what a reader accepts is checked for the values a careful reader would keep (no NaN
where the format has numbers, no lost rows without a warning)."""

from __future__ import annotations

import functools
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankwise.errors import RankwiseError

PIECES = [b"\t", b",", b";", b" ", b"\n", b"\r\n", b"", b"0", b"1", b"-", b"+", b".", b"e", b"9" * 30, b"nan",
          b"NaN", b"inf", b"-inf", b"\"", b"'", b"{", b"}", b"[", b"]", b":", b"null", b"\xff\xfe", b"\x00", b"C",
          b"Q", b"#", b"\xc3\xa9", b"1e308", b"-1"]


def _mutate(data: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    for position, kind, piece in edits:
        at = position % (len(data) + 1)
        chunk = PIECES[piece % len(PIECES)]
        if kind == 0:
            data = data[:at] + chunk + data[at:]
        elif kind == 1:
            data = data[:at] + data[at + 1:]
        elif kind == 2:
            data = data[:at] + chunk + data[at + 1:]
        elif kind == 3:
            data = data[:at]   # truncated
        else:
            lines = data.split(b"\n")
            line = lines[position % len(lines)]
            lines.insert(position % len(lines), line)   # a duplicated line
            data = b"\n".join(lines)
    return data


EDITS = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 4), st.integers(0, len(PIECES) - 1)),
                 min_size=1, max_size=4)


def _yandex(path: Path) -> Any:
    from rankwise.clicks.read import read_log

    log = read_log(path, "yandex")
    assert log.clicks.shape == log.mask.shape and not (log.clicks & ~log.mask).any()   # clicks only where shown
    return log


def _long_rows(path: Path) -> Any:
    from rankwise.clicks.read import read_log

    return read_log(path, "long")


def _model(path: Path) -> Any:
    from rankwise.clicks.persist import load_model

    model = load_model(path)
    for name in model.fields:
        values = np.asarray(getattr(model, name), dtype=np.float64)
        assert np.isfinite(values).all() and ((values >= 0) & (values <= 1)).all(), name
    return model


def _labels(path: Path) -> Any:
    from rankwise.clicks.labels import read_labels

    frame = read_labels(path)
    assert frame["label"].notna().all()
    return frame


def _ab(path: Path) -> Any:
    from rankwise.experiments import analyze

    result = analyze(str(path), unit="user", variant="variant", metrics=["ctr=clicks/views"])
    units = int(result.table["n"].sum() + result.table["n_control"].iloc[0]) if len(result.table) else 0
    assert units <= 8   # never more units than rows
    return result


def _bandit(path: Path) -> Any:
    from rankwise.counterfactual.bandit_log import read_bandit_log

    log = read_bandit_log(str(path))
    assert np.isfinite(log.reward).all() and ((log.pscore > 0) & (log.pscore <= 1)).all()
    return log


def _credits(path: Path) -> Any:
    from rankwise.interleaving.interleave import read_credits

    credits, _ = read_credits(str(path))
    assert np.isfinite(credits).all()
    return credits


def _spec(path: Path) -> Any:
    from rankwise.rankeval.spec import load_spec

    return load_spec(path)


def _ratings(path: Path) -> Any:
    from rankwise.rankeval.judging import read_ratings

    ratings, _ = read_ratings(path)
    assert all(isinstance(v, int) for doc in ratings.values() for v in doc.values())
    return ratings


def _statistics(path: Path) -> Any:
    from rankwise.experiments.statistics_table import read_statistics

    moments = read_statistics(str(path), ["x"], [("x", "x")])
    assert (moments.n >= 0).all()
    return moments


def _template(path: Path) -> Any:
    from rankwise.rankeval.runner import body_of
    from rankwise.rankeval.spec import load_spec

    spec = load_spec(path)
    return [body_of(request, system) for system in spec.systems for request in spec.requests]


def _experiments(path: Path) -> Any:
    from rankwise.agreement import offline_online

    out = offline_online(path, "ndcg_delta", "ctr_delta", online_p="p", resamples=20)
    assert np.isfinite(out.offline_change).all() and np.isfinite(out.online_change).all()
    return out


def _continuous_qrels(path: Path) -> Any:
    from rankwise.data.load import load_qrels

    qrels = load_qrels(path, continuous=True)
    assert np.isfinite(qrels.values).all() and len(qrels.values) == len(qrels.query)
    return qrels


def _user_groups(path: Path) -> Any:
    from rankwise.recsys.evaluate import _read_user_groups

    groups = _read_user_groups(str(path))
    assert all(isinstance(g, str) for g in groups.values())
    return groups


def _item_groups(path: Path) -> Any:
    from rankwise.recsys.inputs import _groups

    ids, groups = _groups(str(path))
    assert len(ids) == len(groups)
    return groups


def _item_features(path: Path) -> Any:
    from rankwise.recsys.inputs import _features

    ids, matrix = _features(str(path))
    assert len(ids) == len(matrix) and np.isfinite(matrix).all()
    return matrix


def _recommendations(path: Path) -> Any:
    from rankwise.recsys import RecsysData

    data = RecsysData.build(str(path))
    assert data.offsets[-1] == len(data.items) and len(data.users) == len(data.offsets) - 1
    return data


def _definitions(path: Path) -> Any:
    from rankwise.experiments.definitions import read_definitions

    return read_definitions(str(path))


def _event_log(path: Path) -> Any:
    from rankwise.experiments import analyze

    return analyze(str(path), unit="user", variant="arm",
                   metrics=["ctr = count(click) / count(view)", "revenue = sum(value where event = buy and value > 0)"])


READERS: dict[str, tuple[str, bytes, Callable[[Path], Any]]] = {
    "click log (Yandex)": (".tsv", b"7\t0\tQ\t1\t0\ta\tb\tc\n7\t3\tC\tb\n8\t0\tQ\t2\t0\tc\ta\n8\t9\tC\tc\n", _yandex),
    "click log (long rows)": (".csv", b"session,query,rank,doc,click\n1,q,1,a,0\n1,q,2,b,1\n2,q,1,b,1\n2,q,2,a,0\n",
                              _long_rows),
    "labels": (".tsv", b"query\turl\trelevance\n0\t68654\t2\n0\t60364\t3\n1\t5\t0\n", _labels),
    "A/B log": (".csv", b"user,variant,clicks,views\n1,a,1,3\n2,a,0,2\n3,b,2,4\n4,b,1,1\n5,a,0,1\n6,b,0,2\n",
                _ab),
    "bandit log": (".csv", b"action,position,reward,pscore\na,1,1,0.5\nb,1,0,0.5\na,2,0,0.25\nb,2,1,0.75\n",
                   _bandit),
    "interleaving credits": (".csv", b"query,A,B\nq1,1,0\nq2,0,2\nq3,1,1\n", _credits),
    "rank-eval spec": (".json", json.dumps({"requests": [{"id": "q1", "request": {"query": {"match": {"body": "x"}}},
                                                          "ratings": [{"_index": "i", "_id": "d1", "rating": 2}]}],
                                            "metric": {"dcg": {"k": 10}}}).encode(), _spec),
    "rank-eval template": (".json", json.dumps({
        "requests": [{"id": "q1", "template_id": "t", "params": {"query": "wing flutter"},
                      "ratings": [{"_index": "i", "_id": "d1", "rating": 1}]}],
        "templates": [{"id": "t", "template": {"source": {"query": {"match": {"body": "{{query}}"}}}}}],
        "metric": {"precision": {"k": 5}}}).encode(), _template),
    "statistics table": (".csv", b"variant,n,sum(x),sum(x*x)\nA,2,4,10\nB,3,6,14\nA,1,1,1\n", _statistics),
    "rank-eval ratings": (".csv", b"request_id,_index,_id,rating\nq1,i,d1,2\nq1,i,d2,0\nq2,i,d1,\n", _ratings),
    "recommendation lists": (".csv", b"user_id,item_id,score\nu1,a,0.9\nu1,b,0.5\nu2,b,0.7\nu2,c,0.1\n",
                             _recommendations),
    "experiments": (".csv", b"experiment,ndcg_delta,ctr_delta,p\nv2,0.012,0.0031,0.01\nsyn,0.004,-0.0004,0.61\n"
                    b"fresh,-0.008,-0.0012,0.04\nsparse,0.021,0.0045,0.001\n", _experiments),
    "continuous qrels": (".txt", b"q1 0 a 30.5\nq1 0 b 0\nq1 0 c 2.25\nq2 0 d -3\n", _continuous_qrels),
    "user groups": (".csv", b"user_id,group\nu1,new\nu2,returning\nu3,new\n", _user_groups),
    "item groups": (".csv", b"item_id,genre\na,Drama|Comedy\nb,Drama\nc,Horror\n", _item_groups),
    "item features": (".csv", b"item_id,f1,f2\na,0.5,1.0\nb,-1.0,2.5\nc,0.0,0.25\n", _item_features),
    "metric definitions": (".yaml", b"metrics:\n  ctr: count(click) / count(view)\n  revenue:\n"
                           b"    numerator: sum(value)\n    where: event = buy\n", _definitions),
    "event log": (".csv", b"user,arm,event,value\n1,a,view,\n1,a,click,\n2,a,view,\n3,b,view,\n3,b,buy,4.5\n"
                  b"4,b,view,\n4,b,click,\n", _event_log),
}


@functools.cache
def _saved_model(kind: str = "click model") -> bytes:
    """A saved model: a PBM with the fixed prior; a DBN with the empirical prior, a feature
    table and hashed document ids (hyperparameters, logistic weights for attractiveness and
    satisfaction, hashing); a mixture of PBM and DCM (weights and components)."""
    import pandas as pd

    from rankwise.clicks import DBN, DCM, PBM, ClickLog, Mixture
    from rankwise.clicks.persist import save_model

    log = ClickLog.from_arrays(["q", "q", "r"], [["a", "b"], ["b", "a"], ["a", "c"]], [[1, 0], [0, 0], [0, 1]])
    path = Path(tempfile.mkdtemp()) / "model.json"   # fitted once per kind: every fuzz case mutates these bytes
    if kind == "click model":
        model = PBM(prior=(1, 2)).fit(log, iterations=3)
    elif kind == "featured click model":
        table = pd.DataFrame({"query": ["q", "q", "r", "r"], "doc": ["a", "b", "a", "c"], "x": [1.0, 2.0, 0.5, 3.0]})
        model = DBN().use_features(table, hashed=("doc",), buckets=8).fit(log, iterations=3)
    else:
        model = Mixture([PBM(), DCM()]).fit(log, iterations=3)
    save_model(model, path)
    return path.read_bytes()


SAVED_MODELS = ("click model", "featured click model", "mixture")


@pytest.mark.parametrize("name", [*READERS, *SAVED_MODELS])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_mutated_files_raise_only_rankwise_errors(name: str, edits: list[tuple[int, int, int]],
                                                  tmp_path: Path) -> None:
    if name in SAVED_MODELS:
        suffix, seed, reader = ".json", _saved_model(name), _model
    else:
        suffix, seed, reader = READERS[name]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(_mutate(seed, edits))
    try:
        reader(path)
    except RankwiseError as error:
        assert str(error) and "Traceback" not in str(error)


@pytest.mark.parametrize("name", list(READERS))
def test_every_seed_file_is_read(name: str, tmp_path: Path) -> None:
    """The unmutated seeds are valid: a fuzz case that fails is the mutation's doing."""
    suffix, seed, reader = READERS[name]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(seed)
    assert reader(path) is not None


def test_what_the_fuzzing_found(tmp_path: Path) -> None:
    """Each case a mutation found, now refused by name (or computed) instead of a raw error."""
    def write(name: str, data: bytes) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    cases: list[tuple[Callable[[Path], Any], Path, str]] = [
        # a duplicated header line made the rank column text: a raw TypeError
        (_long_rows, write("dup.csv", b"session,query,rank,doc,click\nsession,query,rank,doc,click\n1,q,1,a,0\n"),
         r"dup.csv:2.*rank.*expected a number"),
        # a rank of 1e30 overflowed into an index error
        (_long_rows, write("deep.csv", b"session,query,rank,doc,click\n1,q,1e30,a,0\n"),
         r"rank must be a whole number"),
        # a score that is not a number: a raw ValueError from pandas
        (_recommendations, write("reco.csv", b"user_id,item_id,score\nu1,a,;0.9\n"), r"reco.csv:2.*score"),
        # bytes that are not UTF-8: raw UnicodeDecodeError / ArrowInvalid
        (_ratings, write("ratings.csv", b"request_id,_index,_id,rating\n\xff,i,d1,2\n"),
         r"ratings.csv:2: invalid UTF-8"),
        (_ab, write("ab.csv", b"user,variant,clicks,views\n1,\xff,1,3\n"), r"ab.csv:2.*variant.*invalid UTF-8"),
        # a label of inf: OverflowError; 2.7 was silently cut to 2
        (_labels, write("inf.tsv", b"query\turl\trelevance\n0\t5\tinf\n"), r"expected an integer label"),
        (_labels, write("frac.tsv", b"query\turl\trelevance\n0\t5\t2.7\n"), r"expected an integer label, got '2.7'"),
        # a column named twice: a raw KeyError
        (_credits, write("credits.csv", b"query,A,A\nq1,1,0\n"), r"column 'A' appears twice"),
        # a unit count past int64: a raw OverflowError
        (_statistics, write("stats.csv", b"variant,n,sum(x),sum(x*x)\nA,99999999999999999999,4,10\n"),
         r"stats.csv:2: field 'n': expected a whole number of units"),
    ]
    for reader, path, message in cases:
        with pytest.raises(RankwiseError, match=message):
            reader(path)
    # means near 1e-308: m_c^4 underflowed into a ZeroDivisionError; now a finite relative interval
    from rankwise.stats.twosample import Arm, compare_arms

    tiny = compare_arms(Arm(1e-100, 1e-200, 10), Arm(2e-100, 1e-200, 10))
    assert tiny.relative == pytest.approx(1.0) and math.isfinite(tiny.relative_lower)
