"""Editorial relevance labels for a click log, to score a click model's relevance ranking:
read in the formats click logs come with, and matched to the log's query numbering.

Formats (``fmt``):

- ``table``: a delimited file with a header naming the query, document and label columns
  (``query url relevance``, as CLARA 2's ``CLARA2QueryUrlRelevance_beta``; ``doc``/``url``,
  ``label``/``relevance`` accepted), tab or comma separated;
- ``yandex``: the Yandex relevance-prediction labels, ``QueryID RegionID URLID Label`` per
  line, no header (the region is dropped);
- ``qrels``: TREC qrels (``query iteration doc label``);
- ``auto``: a first line that names columns is ``table``, four numeric fields ``yandex``
  unless the second field is ``0`` or ``Q0`` on every line (``qrels``).

Label files do not always number queries as their log does (CLARA 2's labels for log query
2031 are under 2038). ``match_queries`` keeps the labels' ids when most labelled pairs are
pairs of the log, and otherwise matches each log query to the label query that labels most
of its shown documents, one to one, refusing a match that is not.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from rankwise.errors import InputError

QUERY_COLUMNS = ("query", "qid", "query_id", "queryid")
DOC_COLUMNS = ("url", "doc", "docid", "doc_id", "urlid", "document")
LABEL_COLUMNS = ("relevance", "label", "rel", "grade")
FORMATS = ("auto", "table", "yandex", "qrels")


def _pick(columns: list[str], names: tuple[str, ...], what: str, path: str) -> str:
    lowered = {c.lower(): c for c in columns}
    for name in names:
        if name in lowered:
            return lowered[name]
    raise InputError(f"no {what} column; expected one of {', '.join(names)}, found {', '.join(columns)}",
                     source=path, line=1)


def read_labels(path: str | os.PathLike[str], fmt: str = "auto") -> Any:
    """A DataFrame ``query, doc, label`` (ids as text, labels as integers).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "labels.tsv").write_text("query\\turl\\trelevance\\n0\\t68654\\t2\\n0\\t60364\\t3\\n")
    >>> read_labels(folder / "labels.tsv").values.tolist()
    [['0', '68654', 2], ['0', '60364', 3]]
    >>> _ = (folder / "yandex.txt").write_text("7\\t213\\t1001\\t1\\n7\\t213\\t1002\\t0\\n")
    >>> read_labels(folder / "yandex.txt").values.tolist()
    [['7', '1001', 1], ['7', '1002', 0]]
    """
    import pandas as pd

    if fmt not in FORMATS:
        raise InputError(f"unknown labels format {fmt!r}; expected one of {', '.join(FORMATS)}", source=str(path))
    source = str(path)
    from rankwise.data.trec_io import read_text

    lines = read_text(path).splitlines()   # .gz, the input limits and UTF-8 checked, as every reader
    rows = [(number, line.replace(",", "\t").split() if "\t" not in line else line.split("\t"))
            for number, line in enumerate(lines, 1) if line.strip()]
    if not rows:
        raise InputError("no labels: the file is empty", source=source)
    first = rows[0][1]
    if fmt == "auto":
        named = any(field.strip().lower() in QUERY_COLUMNS + DOC_COLUMNS + LABEL_COLUMNS for field in first)
        if named:
            fmt = "table"
        elif all(len(fields) == 4 for _, fields in rows) and all(fields[1] in ("0", "Q0") for _, fields in rows):
            fmt = "qrels"
        else:
            fmt = "yandex"
    if fmt == "table":
        header = [field.strip() for field in first]
        query, doc, label = (header.index(_pick(header, names, what, source)) for names, what in
                             ((QUERY_COLUMNS, "query"), (DOC_COLUMNS, "document"), (LABEL_COLUMNS, "label")))
        picks, body, width = (query, doc, label), rows[1:], len(header)
    else:
        picks, body, width = ((0, 2, 3), rows, 4)
    out = []
    for number, fields in body:
        if len(fields) != width:
            raise InputError(f"expected {width} fields ({fmt} labels), got {len(fields)}", source=source, line=number)
        q, d, value = (fields[i].strip() for i in picks)
        try:
            number_value = float(value)
        except ValueError:
            number_value = math.nan
        if not math.isfinite(number_value) or number_value != int(number_value):   # 2.7 is not cut to 2
            raise InputError(f"expected an integer label, got {value!r}", source=source, line=number,
                             field="label") from None
        grade = int(number_value)
        if not q or not d:
            raise InputError("empty query or document id", source=source, line=number)
        out.append((q, d, grade))
    frame = pd.DataFrame(out, columns=["query", "doc", "label"])
    twice = frame.duplicated(["query", "doc"], keep=False)
    if twice.any():
        clash = frame[twice].groupby(["query", "doc"])["label"].nunique()
        if (clash > 1).any():
            (q, d) = clash[clash > 1].index[0]
            raise InputError(f"query {q!r} document {d!r} is labelled twice with different labels", source=source)
        frame = frame.drop_duplicates(["query", "doc"])
    return frame


def match_queries(labels: Any, log: Any) -> tuple[Any, str]:
    """``labels`` with the log's query ids, and a note saying how they were matched.

    Kept as they are when at least half the labelled (query, document) pairs are pairs of the
    log; otherwise each log query takes the label query labelling most of its shown
    documents, and the match must be one to one.
    """
    import pandas as pd

    shown = pd.DataFrame({"query": np.asarray(log.query_ids, dtype=object)[log.pair_query].astype(str),
                          "doc": np.asarray(log.doc_ids, dtype=object)[log.pair_doc].astype(str)})
    direct = labels.merge(shown, on=["query", "doc"], how="inner")
    if len(direct) * 2 >= len(labels):
        return labels, f"{len(direct):,} of {len(labels):,} labels are on pairs of the log (query ids as given)"
    overlap = shown.merge(labels.rename(columns={"query": "label_query"}), on="doc")
    if overlap.empty:
        raise InputError("no labelled document is shown in the log: are these the log's labels?")
    best = overlap.groupby(["query", "label_query"]).size().rename("n").reset_index()
    best = best.sort_values(["n", "query", "label_query"], ascending=[False, True, True], kind="stable")
    best = best.drop_duplicates("query")
    if not best["label_query"].is_unique:
        taken = best[best["label_query"].duplicated(keep=False)].iloc[0]["label_query"]
        raise InputError(f"the label file's query ids are not the log's, and matching them by shown documents is "
                         f"not one to one (label query {taken!r} matches several log queries)")
    mapping = dict(zip(best["label_query"], best["query"], strict=True))
    kept = labels[labels["query"].isin(mapping)]
    covered = best["n"].sum() / len(shown)
    note = (f"the label file numbers queries differently from the log: {len(best):,} label queries matched one to "
            f"one to log queries by the documents they label ({covered:.2%} of the log's pairs labelled)")
    return kept.assign(query=kept["query"].map(mapping)), note


__all__ = ["FORMATS", "match_queries", "read_labels"]
