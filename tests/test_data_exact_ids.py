"""Ids are identities, never numbers: every door that reads an id column from a CSV or TSV file
keeps ``007``, ``7`` and ``0007`` (and ``0x7``, ``+7``, ids beyond int64) as distinct ids, as a
TREC file does. Arrow's CSV reader takes them all for the number 7: three users of an A/B test
became one (``n_control`` 1 instead of 3), three logged actions one, three clicked documents one,
two ISBNs one item. The walk covers the A/B engines (memory, DuckDB) with their slices, daily
looks and exposures, recommendation lists, the catalogue, click logs and bandit logs."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

EVENTS = """user_id,variant,event,value,ts,country
007,control,click,1,2024-01-01T00:00:00,FR
7,control,click,1,2024-01-02T00:00:00,DE
0007,control,click,2,2024-01-02T00:00:00,FR
8,treatment,click,1,2024-01-01T00:00:00,FR
08,treatment,click,3,2024-01-02T00:00:00,DE
9,treatment,click,1,2024-01-02T00:00:00,DE
"""
EXPOSURES = "user_id,variant,ts\n" + "".join(
    f"{u},{v},2023-12-31T00:00:00\n" for u, v in (("007", "control"), ("7", "control"), ("0007", "control"),
                                                  ("8", "treatment"), ("08", "treatment"), ("9", "treatment")))
# per unit: control 007 -> 1, 7 -> 1, 0007 -> 2 (mean 4/3); treatment 8 -> 1, 08 -> 3, 9 -> 1 (mean 5/3)


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("extra", [[], ["--slice", "country"], ["--timestamp", "ts", "--sequential", "always-valid"],
                                   ["--timestamp", "ts", "--exposures", "{exposures}"]],
                         ids=["plain", "slices", "daily looks", "exposures"])
def test_every_ab_door_keeps_three_users_three(engine, extra, tmp_path: Path, rankwise_cli, capsys) -> None:
    if engine == "duckdb":
        pytest.importorskip("duckdb", reason="the DuckDB engine needs the duckdb extra")
    events, exposures = tmp_path / "events.csv", tmp_path / "exposures.csv"
    events.write_text(EVENTS)
    exposures.write_text(EXPOSURES)
    args = [a.format(exposures=exposures) for a in extra]
    capsys.readouterr()
    assert rankwise_cli(["ab", str(events), "--unit", "user_id", "-m", "v=sum(value)", "--engine", engine,
                         "-f", "csv", *args]) == 0
    rows = _rows(capsys.readouterr().out)
    whole = next(r for r in rows if r.get("slice", "all") == "all")
    assert (whole["n_control"], whole["n"]) == ("3", "3")
    assert float(whole["control_value"]) == pytest.approx(4 / 3) and float(whole["value"]) == pytest.approx(5 / 3)
    if "--slice" in extra:   # FR: 007, 0007 (control), 8 (treatment); DE: 7 (control), 08, 9 (treatment)
        by_slice = {r["slice"]: (r["n_control"], r["n"]) for r in rows}
        assert by_slice["FR"] == ("2", "1") and by_slice["DE"] == ("1", "2")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_ids_past_int64_and_with_a_decimal_point_stay_distinct(engine, tmp_path: Path, rankwise_cli, capsys) -> None:
    """DuckDB's CSV sniffer read these ids as DOUBLE: three users per arm became one."""
    if engine == "duckdb":
        pytest.importorskip("duckdb", reason="the DuckDB engine needs the duckdb extra")
    events = tmp_path / "events.csv"
    events.write_text("user_id,variant,event,value\n" + "".join(
        f"{u},{v},click,{x}\n" for u, v, x in (
            ("30000000000000000000001", "control", 1), ("30000000000000000000002", "control", 2), ("1.0", "control", 4),
            ("1", "treatment", 1), ("40000000000000000000002", "treatment", 3), ("1.00", "treatment", 1))))
    capsys.readouterr()
    assert rankwise_cli(["ab", str(events), "--unit", "user_id", "-m", "v=sum(value)", "--engine", engine,
                         "-f", "csv"]) == 0
    row = _rows(capsys.readouterr().out)[0]
    assert (row["n_control"], row["n"]) == ("3", "3")
    assert float(row["control_value"]) == pytest.approx(7 / 3) and float(row["value"]) == pytest.approx(5 / 3)


def test_recommendation_items_keep_their_leading_zeros_and_digits(tmp_path: Path) -> None:
    from rankwise.recsys.inputs import RecsysData

    lists = tmp_path / "reco.csv"
    lists.write_text("user,item,score\n1,0451526538,0.9\n1,451526538,0.8\n"
                     "2,30000000000000000000001,0.7\n2,30000000000000000000002,0.6\n")
    data = RecsysData.build(str(lists))
    assert sorted(data.vocabulary.tolist()) == ["0451526538", "30000000000000000000001", "30000000000000000000002",
                                                "451526538"]
    assert len(data.items) == 4 and not data.notes   # no "repeated row" dropped


def test_a_catalogue_file_meets_integer_item_ids(tmp_path: Path, rankwise_cli, capsys) -> None:
    """Items 10, 20, 30 recommended (a CSV: integers), a catalogue of 10, 20, 30, 40 with a
    header, an empty line and a repeat: coverage 3/4, the skipped lines counted (it was 0: the
    catalogue's '10' never met the item 10, and its header was an item)."""
    lists, catalogue = tmp_path / "reco.csv", tmp_path / "items.txt"
    lists.write_text("user,item,score\n1,10,0.9\n1,20,0.8\n2,30,0.7\n")
    catalogue.write_text("item_id\n10\n20\n\n30\n40\n40\n")
    capsys.readouterr()
    assert rankwise_cli(["beyond", str(lists), "-m", "coverage@2", "--catalogue", str(catalogue), "-f", "csv"]) == 0
    captured = capsys.readouterr()
    assert float(_rows(captured.out)[0]["value"]) == 0.75
    assert "1 empty line(s) skipped" in captured.out + captured.err
    assert "1 item(s) listed more than once" in captured.out + captured.err
    assert "not in the catalogue" not in captured.out + captured.err


def test_click_log_documents_stay_distinct(tmp_path: Path) -> None:
    from rankwise.clicks.read import read_log

    log = tmp_path / "clicks.tsv"
    log.write_text("session\tquery\trank\tdoc\tclick\n1\tq\t1\t007\t1\n1\tq\t2\t7\t0\n2\tq\t1\t7\t1\n2\tq\t2\t0x7\t0\n")
    clicks = read_log(log, ranks=2)
    assert sorted(clicks.doc_ids) == ["007", "0x7", "7"]
    assert [[clicks.doc_ids[d] for d in row] for row in clicks.docs.tolist()] == [["007", "7"], ["7", "0x7"]]


def test_bandit_actions_stay_distinct(tmp_path: Path) -> None:
    from rankwise.counterfactual.bandit_log import read_bandit_log

    log = tmp_path / "log.csv"
    log.write_text("action,position,reward,pscore\n01,1,1,0.5\n1,1,0,0.5\n001,1,1,0.5\n")
    assert read_bandit_log(str(log)).action.tolist() == ["01", "1", "001"]


def test_a_target_policy_names_the_logged_actions_as_the_log_does(tmp_path: Path, rankwise_cli, capsys) -> None:
    """Actions 01 and 02 in the log and in the policy table: the policy's were read as 1 and 2,
    never met the log's, and IPS was 0.0. IPS = (1 x 0.9/0.5 + 0 + 1 x 0.9/0.5 + 1 x 0.1/0.5) / 4 = 0.95."""
    log, policy = tmp_path / "log.csv", tmp_path / "policy.csv"
    log.write_text("action,position,reward,pscore\n01,1,1,0.5\n02,1,0,0.5\n01,1,1,0.5\n02,1,1,0.5\n")
    policy.write_text("action,probability\n01,0.9\n02,0.1\n")
    capsys.readouterr()
    assert rankwise_cli(["ope", str(log), "--policy", str(policy), "--no-position", "-f", "csv"]) == 0
    rows = {r["estimator"]: r for r in _rows(capsys.readouterr().out)}
    assert float(rows["ips"]["value"]) == pytest.approx(0.95)


def test_plain_integer_ids_stay_integers(tmp_path: Path) -> None:
    """The fast path holds: ids written as int64 writes them are read as int64."""
    from rankwise.data.tables import read_table

    path = tmp_path / "events.csv"
    path.write_text("user_id,value\n7,1\n-12,2\n0,3\n")
    table = read_table(path, None, ids=["user_id"])
    assert str(table.schema.field("user_id").type) == "int64"
    assert np.asarray(table.column("user_id")).tolist() == [7, -12, 0]
