"""The conformance test every member of every registered family passes (``rankwise.params``):
found by its name and aliases, typed parameters whose defaults convert to themselves, a
bad-parameter error that names it, a spelling that parses back, a description and a reference,
and a line in the generated docs/plugins.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankwise.cli.catalogue import REGISTRIES, registry
from rankwise.errors import ParameterError
from rankwise.params import Declared, Param, Registry, closest, edit_distance, split_call

MEMBERS = [(kind, name) for kind in REGISTRIES for name in registry(kind)]
DOCS = Path(__file__).parent.parent / "docs" / "plugins.md"


def _member(kind: str, name: str) -> tuple[Registry[Any], Declared]:
    chosen = registry(kind)
    return chosen, chosen.get(name)


@pytest.mark.parametrize(("kind", "name"), MEMBERS)
def test_every_member_is_found_by_each_spelling(kind: str, name: str) -> None:
    chosen, member = _member(kind, name)
    for spelling in (member.name, *member.aliases, member.name.upper(), member.name.replace("-", "_")):
        assert chosen.get(spelling) is member
    assert member.kind == chosen.kind


@pytest.mark.parametrize(("kind", "name"), MEMBERS)
def test_every_member_is_typed_and_documented(kind: str, name: str) -> None:
    _, member = _member(kind, name)
    assert member.description.endswith(".") and member.reference, member
    for p in member.params:
        assert p.type in (int, float, bool, str, tuple, dict) and p.description
        if p.default is not None and not p.required:
            converted = p.convert(p.default, member.name)
            assert converted == p.default or (isinstance(p.default, float) and math.isinf(p.default))
        for value in p.grid:
            p.convert(value, member.name)   # every grid value is a legal value


@pytest.mark.parametrize(("kind", "name"), MEMBERS)
def test_every_member_refuses_bad_parameters(kind: str, name: str) -> None:
    chosen, member = _member(kind, name)
    with pytest.raises(ParameterError, match=rf"{member.name}: unknown parameter\(s\) no_such"):
        chosen.parse(member.name, no_such=1)
    needed = {p.name: p.grid[0] for p in member.params if p.required}
    for p in member.params:
        if p.low is not None and p.type in (int, float):
            with pytest.raises(ParameterError, match=rf"{member.name}: {p.name} must be in \["):
                member.resolve({**needed, p.name: p.low - 1})
        if p.type in (int, float):
            with pytest.raises(ParameterError, match=rf"{member.name}: {p.name} must be"):
                member.resolve({**needed, p.name: "not-a-number"})
        if p.required:
            with pytest.raises(ParameterError, match=rf"{member.name}: give {p.name}="):
                member.resolve({})


@pytest.mark.parametrize(("kind", "name"), MEMBERS)
def test_every_member_spelling_parses_back(kind: str, name: str) -> None:
    chosen, member = _member(kind, name)
    values = {p.name: (p.grid[-1] if p.grid else p.default) for p in member.params}
    values = {k: v for k, v in values.items() if v is not None}
    spelled = member.spelled(values)
    parsed_member, parsed = chosen.parse(spelled)
    assert parsed_member is member
    assert {k: parsed[k] for k in values} == values   # %g keeps every digit of these values


@pytest.mark.parametrize("kind", list(REGISTRIES))
def test_the_generated_docs_list_every_member(kind: str) -> None:
    """docs/plugins.md is ``python -m rankwise.cli.catalogue`` (regenerate it when a member changes)."""
    from rankwise.cli.catalogue import plugins_page

    page = DOCS.read_text()
    assert page == plugins_page()
    for name in registry(kind):
        assert f"| `{name}`" in page


def test_one_member_two_ways_and_unknown_names() -> None:
    from rankwise.fusion.methods import FUSION_METHODS

    with pytest.raises(ParameterError, match=r"rrf: k given twice"):
        FUSION_METHODS.parse("rrf(k=10)", k=20)
    with pytest.raises(ParameterError, match=r"--method: unknown fusion method 'rff'; did you mean 'rrf'\?"):
        FUSION_METHODS.get("rff")
    with pytest.raises(ParameterError, match="expected NAME or NAME"):
        FUSION_METHODS.parse("rrf(k=10")


def test_split_call_cases() -> None:
    assert split_call("dbn(prior=[0.5, 2], iterations=3)") == ("dbn", {"prior": "[0.5, 2]", "iterations": "3"})
    assert split_call("  wsum( weights = 1,2,3 ) ") == ("wsum", {"weights": "1,2,3"})
    with pytest.raises(ParameterError, match="a repeated parameter name 'k'"):
        split_call("rrf(k=1, k=2)")
    with pytest.raises(ParameterError, match="expected key=value pairs"):
        split_call("rrf(10)")


def test_tuple_parameters_check_length_and_range() -> None:
    prior = Param("prior", tuple, (1.0, 2.0), "pseudo-counts", low=0, length=2)
    assert prior.convert("(0.5; 3)", "m") == (0.5, 3.0)
    with pytest.raises(ParameterError, match="m: prior must be 2 numbers"):
        prior.convert("1,2,3", "m")
    with pytest.raises(ParameterError, match=r"m: prior must be in \[0, inf\], got \(-1.0, 2.0\)"):
        prior.convert([-1, 2], "m")
    with pytest.raises(ParameterError, match="must be in"):
        Param("x", float, 1.0, "x").convert("nan", "m")   # NaN is never a legal value


@given(st.text(alphabet="abcdefg", max_size=6), st.text(alphabet="abcdefg", max_size=6))
def test_edit_distance_is_a_metric(a: str, b: str) -> None:
    assert edit_distance(a, b) == edit_distance(b, a)
    assert (edit_distance(a, b) == 0) == (a == b)
    assert edit_distance(a, b) <= max(len(a), len(b))


def test_closest_keeps_every_equally_near_name() -> None:
    # 'dbm' is one edit from four click models: naming only one of them guesses
    assert closest("dbm", ["global-ctr", "pbm", "ubm", "dcm", "dbn", "ccm"]) == ["pbm", "ubm", "dcm", "dbn"]
    assert closest("cascde", ["cascade", "ccm"]) == ["cascade"]


def test_a_cut_off_is_written_at_k_for_every_family_that_declares_one() -> None:
    """``name@k`` is the one spelling of a declared cut-off (``Param(cutoff=True)``), in every
    family, as in metric names; a member without one refuses ``@``."""
    cut = Param("k", int, 10, "cut-off", low=1, cutoff=True)
    family = Registry("measure", [Declared("spread", None, "", (cut, Param("p", float, 0.5, "a share"))),
                                  Declared("flat", None, "", (Param("k", float, 60.0, "a constant"),))])
    assert family.parse("spread@5")[1] == {"k": 5, "p": 0.5}
    assert family.parse("spread(p=0.25)@3")[1] == {"k": 3, "p": 0.25}
    assert family.parse("spread")[1] == {"k": 10, "p": 0.5}
    # a keyword joins the @k spelling for the member that declares it, and is left out for one that does not
    assert family.parse_with_keywords("spread@5", p=0.25)[1] == {"k": 5, "p": 0.25}
    assert family.parse_with_keywords("flat", p=0.25)[1] == {"k": 60.0}
    with pytest.raises(ParameterError, match=r"spread: k given twice \(in 'spread\(k=4\)@3' and as @3\)"):
        family.parse("spread(k=4)@3")
    with pytest.raises(ParameterError, match="spread: k must be in"):
        family.parse("spread@0")
    with pytest.raises(ParameterError, match="flat: takes no cut-off"):
        family.parse("flat@60")   # its k is not a cut-off
