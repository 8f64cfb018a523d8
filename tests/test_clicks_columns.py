"""Click logs with the column names logging stacks export: ``session_id``, ``position``, ``url``,
``clicked`` (and the other spellings of ``LONG_ROLES``) read as rankwise's own; ``--columns
ROLE=NAME`` names the rest; a role found nowhere is an error listing the columns found and
every role missing."""

from __future__ import annotations

import pandas as pd
import pytest

from rankwise.clicks import ClickLog
from rankwise.errors import InputError

OWN = {"session": [1, 1, 2, 2], "query": ["q"] * 4, "rank": [1, 2, 1, 2], "doc": ["a", "b", "b", "a"],
       "click": [0, 1, 1, 0]}


@pytest.mark.parametrize("spelling", [
    {"session": "session_id", "rank": "position", "doc": "url", "click": "clicked"},
    {"session": "search_id", "query": "qid", "rank": "pos", "doc": "item_id", "click": "is_click"},
    {"session": "SessionID", "query": "QueryID", "doc": "DocID", "click": "Clicks"},
])
def test_common_spellings_read_as_the_own_names(spelling: dict[str, str], tmp_path) -> None:
    expected = ClickLog.from_long(OWN)
    frame = pd.DataFrame(OWN).rename(columns=spelling)
    path = tmp_path / "log.csv"
    frame.to_csv(path, index=False)
    for source in (frame, str(path)):
        log = ClickLog.from_long(source)
        assert log.clicks.tolist() == expected.clicks.tolist() and log.doc_ids == expected.doc_ids


def test_other_names_are_mapped_and_missing_roles_listed(tmp_path, rankwise_cli, capsys) -> None:
    path = tmp_path / "log.csv"
    pd.DataFrame(OWN).rename(columns={"session": "visit", "click": "tapped"}).to_csv(path, index=False)
    with pytest.raises(InputError) as error:
        ClickLog.from_long(str(path))
    assert "missing column(s) for session, click" in str(error.value)
    assert "the columns are visit, query, rank, doc, tapped" in str(error.value)
    log = ClickLog.from_long(str(path), session="visit", click="tapped")
    assert log.clicks.tolist() == ClickLog.from_long(OWN).clicks.tolist()
    out = tmp_path / "model.json"
    assert rankwise_cli(["clicks", "fit", str(path), "--model", "pbm", "--quiet", "-o", str(out),
                         "--columns", "session=visit", "--columns", "click=tapped"]) == 0
    assert rankwise_cli(["clicks", "fit", str(path), "--model", "pbm", "--quiet", "-o", str(out)]) == 2
    assert "name them with --columns ROLE=NAME" in capsys.readouterr().err
    assert rankwise_cli(["clicks", "fit", str(path), "--model", "pbm", "--quiet", "-o", str(out),
                         "--columns", "sesion=visit"]) == 2
    assert "unknown role 'sesion'; expected one of session, query, rank, doc, click" in capsys.readouterr().err
