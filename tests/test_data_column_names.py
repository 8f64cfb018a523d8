"""Column names as people have them, at every door that reads a table: runs and qrels
(``evaluate``), recommendation lists (``beyond``), event logs (``ab``) and click logs (``clicks
evaluate``). Each door takes a common spelling as it is, ``--columns ROLE=NAME`` for any other
name, and otherwise refuses with the columns it found and the role missing."""

from __future__ import annotations

from pathlib import Path

import pytest


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.fixture()
def tables(tmp_path: Path) -> dict[str, str]:
    return {
        # a run and qrels keyed by search_id and url (a search log's spellings)
        "run": _write(tmp_path / "run.csv", "search_id,url,sim\n1,a,0.5\n1,b,0.3\n2,c,0.9\n2,d,0.1\n"),
        "qrels": _write(tmp_path / "qrels.csv", "search_id,url,grade\n1,b,1\n2,c,1\n"),
        "odd_run": _write(tmp_path / "odd_run.csv", "topic_key,page,sim\n1,a,0.5\n1,b,0.3\n2,c,0.9\n2,d,0.1\n"),
        "odd_qrels": _write(tmp_path / "odd_qrels.csv", "topic_key,page,grade\n1,b,1\n2,c,1\n"),
        # recommendation lists with a shop's names
        "reco": _write(tmp_path / "reco.csv", "customer,product,score\n1,2,0.5\n1,3,0.4\n2,3,0.9\n2,4,0.2\n"),
        # an event log with an analytics stack's names
        "events": _write(tmp_path / "events.csv", "visitor_id,variation_id,event\n" + "".join(
            f"{u},{'control' if u % 2 else 'treatment'},click\n" for u in range(20) for _ in range(1 + u % 3))),
        "odd_events": _write(tmp_path / "odd_events.csv", "member,cohort,event\n1,control,click\n2,treatment,click\n"),
    }


def test_runs_and_qrels_take_common_spellings_and_named_columns(tables, rankwise_cli, capsys) -> None:
    # search_id is a query id spelling, url a document id one, sim a score one, grade a label one
    assert rankwise_cli(["evaluate", tables["qrels"], tables["run"], "-m", "P@1", "-f", "csv"]) == 0
    # P@1: query 1 ranks a (not relevant) first, query 2 ranks c (relevant) first: (0 + 1) / 2
    assert capsys.readouterr().out.splitlines()[1].endswith(",0.5")
    assert rankwise_cli(["evaluate", tables["odd_qrels"], tables["odd_run"], "-m", "P@1", "-f", "csv"]) == 2
    err = capsys.readouterr().err
    assert "no query id column" in err and "found topic_key, page, grade" in err
    assert "--columns query=NAME" in err
    assert rankwise_cli(["evaluate", tables["odd_qrels"], tables["odd_run"], "-m", "P@1", "-f", "csv",
                         "--columns", "query=topic_key", "--columns", "doc=page"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(",0.5")
    assert rankwise_cli(["compare", tables["odd_qrels"], tables["odd_run"], tables["odd_run"], "-m", "P@1",
                         "-f", "csv", "--columns", "query=topic_key", "--columns", "doc=page"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(("pair", "message"), [
    ("qid=topic_key", "unknown role 'qid'; expected one of query, doc, score, rank, label, tag"),
    ("query", "expected ROLE=NAME"),
])
def test_a_wrong_mapping_names_the_roles(pair, message, tables, rankwise_cli, capsys) -> None:
    assert rankwise_cli(["evaluate", tables["odd_qrels"], tables["odd_run"], "--columns", pair]) == 2
    assert message in capsys.readouterr().err


def test_recommendation_lists_take_named_columns(tables, rankwise_cli, capsys) -> None:
    assert rankwise_cli(["beyond", tables["reco"], "-m", "coverage@2", "--train", tables["reco"]]) == 2
    err = capsys.readouterr().err
    assert "no user id column" in err and "found customer, product, score" in err
    assert "--columns user=NAME" in err
    assert rankwise_cli(["beyond", tables["reco"], "-m", "coverage@1", "--train", tables["reco"], "-f", "csv",
                         "--columns", "user=customer", "--columns", "item=product"]) == 0
    # top-1 lists: customer 1 gets 2, customer 2 gets 3: 2 of the catalogue's 3 items
    row = dict(zip(*[line.split(",") for line in capsys.readouterr().out.splitlines()[:2]], strict=False))
    assert (row["metric"], round(float(row["value"]), 4)) == ("coverage@1", 0.6667)


def test_event_logs_take_an_analytics_stacks_names(tables, rankwise_cli, capsys) -> None:
    assert rankwise_cli(["ab", tables["events"], "-m", "clicks=count(click)", "-f", "csv"]) == 0
    import csv
    import io

    row = next(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # units 0-19, odd ones control, each with 1 + u % 3 clicks: 10 units per arm
    assert (row["metric"], row["variant"], row["n_control"], row["n"]) == ("clicks", "treatment", "10", "10")
    assert rankwise_cli(["ab", tables["odd_events"], "-m", "clicks=count(click)"]) == 2
    err = capsys.readouterr().err
    assert "missing column(s) 'unit', 'variant'" in err and "'member', 'cohort', 'event'" in err
    assert "--unit NAME, --variant NAME" in err
    assert rankwise_cli(["ab", tables["odd_events"], "-m", "clicks=count(click)", "--unit", "member",
                         "--variant", "cohort", "-f", "csv"]) == 0
    capsys.readouterr()
