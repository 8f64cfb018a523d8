"""The registry loads families on first use: its table of spellings must be exactly what the
families declare, every family module's families must be declared, and parsing a name must
load only the module of the family it names."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import rankwise.metrics.ranking as ranking
from rankwise.metrics import registry, spellings
from rankwise.metrics.family import Family
from rankwise.metrics.names import parse_metric


def test_the_spellings_table_is_generated_from_the_families() -> None:
    path = Path(registry.__file__).with_name("spellings.py")
    assert path.read_text(encoding="utf-8") == registry.spellings_source(registry.all_families()), (
        "rankwise/metrics/spellings.py is stale: run python -m rankwise.metrics.registry")
    assert spellings.AT["ndcg"] == "ndcg_cut" and spellings.PLAIN["ap"] == "map"


def test_every_family_of_the_ranking_modules_is_declared_once() -> None:
    declared = {(module, attribute) for _, module, attribute in registry.DECLARED}
    found = set()
    for info in pkgutil.iter_modules(ranking.__path__):
        if info.name == "_example":  # docs/architecture.md's example, registered by its test
            continue
        module = importlib.import_module(f"rankwise.metrics.ranking.{info.name}")
        found |= {(info.name, name) for name, value in vars(module).items() if isinstance(value, Family)}
    assert found == declared
    assert len(registry.DECLARED) == len(registry.ORDER) == len(registry.FAMILIES) == 106
    assert [f.name for f in registry.FAMILIES[:6]] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]


def test_lookups_by_name_and_spelling() -> None:
    assert registry.BY_NAME["P"] is registry.family("P") and "nope" not in registry.BY_NAME
    assert registry.BY_NAME.get("nope") is None
    assert registry.nicknames()["set"][:3] == ("runid", "num_q", "num_ret")
    assert parse_metric("nDCG@10").family is registry.family("ndcg_cut")


def test_parsing_a_name_loads_only_its_family() -> None:
    code = ("import sys; from rankwise.metrics.names import parse_metric; parse_metric('ndcg@10'); "
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('rankwise.metrics.ranking.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "gain" in loaded and "diversity" not in loaded and "preferences" not in loaded and "cwl" not in loaded


def test_a_metric_family_is_declared_like_every_other_member() -> None:
    """``Family`` is a kind of ``rankwise.params.Declared``: the same fields (name, target,
    description, params, aliases, reference) as a click model's or an estimator's."""
    from rankwise.params import Declared

    for fam in registry.FAMILIES:
        assert isinstance(fam, Declared), fam.name
        assert callable(fam.target) and fam.description, fam.name
        assert all(p.name and p.description for p in fam.params), fam.name
    alpha = registry.family("alpha_DCG")   # declared with the reference it is tested against
    assert alpha.reference == "ndeval 4.5 (pyndeval), ir_measures" and "alpha-dcg" in alpha.cutoff_aliases


def test_a_cut_off_beyond_a_64_bit_long_reads_as_cs_atol_reads_it() -> None:
    # trec_eval reads cut-offs with atol, which clamps to 2^63 - 1: a cut-off beyond every list,
    # so nDCG at it is nDCG over the whole list (it was an OverflowError in the kernel)
    import rankwise

    data = Path(__file__).parent / "data"
    huge = "10000000000000000000"   # 10^19 > 2^63 - 1
    assert parse_metric(f"ndcg@{huge}").cutoffs == (2**63 - 1,)
    assert parse_metric(f"ndcg_cut.5,{huge}").cutoffs == (5, 2**63 - 1)
    summary = rankwise.evaluate(str(data / "qrels.test"), str(data / "results.test"), [f"ndcg@{huge}", "ndcg"]).summary
    assert summary.iloc[0][f"ndcg@{huge}"] == summary.iloc[0]["ndcg"]   # named as written


def test_an_unknown_argument_lists_each_argument_once_and_points_k_to_the_cut_off() -> None:
    import pytest

    from rankwise.metrics.names import MetricParameterError

    expected = "expected rel, gains, ties, universe, retrieved, judged_only, depth, score_precision, zero_division"
    with pytest.raises(MetricParameterError, match=re.escape(f"{expected} (a cut-off follows the name: nDCG@3)")):
        parse_metric("nDCG(k=3)")
    with pytest.raises(MetricParameterError, match=r"unknown argument\(s\) k; expected [^(]*$"):
        parse_metric("bpref(k=3)")   # no cut-off spelling: no hint


def test_an_elasticsearch_metric_text_goes_through_the_document_door() -> None:
    """``-m '{"precision": {"k": 1, "k": 5}}'`` took k=5 silently; bad JSON and a list of
    parameters were raw JSONDecodeError and TypeError tracebacks."""
    import pytest

    from rankwise.errors import RankwiseError
    from rankwise.metrics.names import parse_metric

    assert parse_metric('{"precision": {"k": 5}}').params[0] == ("k", 5)
    for text, message in (('{"precision": {"k": 1, "k": 5}}', r"the key 'k' appears twice in one object"),
                          ('{"precision": {"k": 1}', r"not valid JSON \(Expecting ',' delimiter"),
                          ('{"precision": [1]}', r"the parameters of precision are an object.*got list")):
        with pytest.raises(RankwiseError, match=message):
            parse_metric(text)
