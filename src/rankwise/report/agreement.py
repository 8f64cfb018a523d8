"""Agreement between two qrels as terminal or plain-text tables, Markdown, CSV or JSON."""

from __future__ import annotations

import json
from typing import Any

from rankwise.report.grid import Grid
from rankwise.report.grid import number_cell as _number


def label_grid(labels: Any, digits: int = 4) -> Grid:
    """One row per statistic with its bootstrap interval; the pair counts in the title.

    >>> import numpy as np
    >>> from rankwise.agreement.labels import LabelAgreement
    >>> out = LabelAgreement(np.array([0, 1]), np.eye(2), {"agreement": 0.75}, {"agreement": (0.5, 1.0)}, 8, 1, 2, 3)
    >>> print(label_grid(out, 2).text())
    label agreement on 8 pairs judged by both (3 queries); only in A: 1, only in B: 2
    statistic  value      interval
    ---------  -----  ------------
    agreement   0.75  [0.50, 1.00]
    """
    rows = [[name, _number(value, digits),
             f"[{_number(labels.intervals[name][0], digits)}, {_number(labels.intervals[name][1], digits)}]"]
            for name, value in labels.statistics.items()]
    title = (f"label agreement on {labels.shared_pairs} pairs judged by both ({labels.queries} queries); "
             f"only in A: {labels.only_a}, only in B: {labels.only_b}")
    return Grid(title, ["statistic", "value", "interval"], rows, [False, True, True],
                note="\n".join(f"note: {n}" for n in labels.warnings))


def confusion_grid(labels: Any) -> Grid:
    """The confusion matrix of the shared pairs: rows the label in qrels A, columns in B.

    >>> import numpy as np
    >>> from rankwise.agreement.labels import LabelAgreement
    >>> out = LabelAgreement(np.array([0, 1]), np.array([[5.0, 1.0], [2.0, 3.0]]), {}, {}, 11, 0, 0, 2)
    >>> print(confusion_grid(out).text())
    labels of the shared pairs: rows qrels A, columns qrels B
    A \\ B  0  1
    -----  -  -
    0      5  1
    1      2  3
    """
    categories = [str(int(c)) if float(c).is_integer() else str(c) for c in labels.categories.tolist()]
    counts = labels.confusion.tolist()
    rows = [[name] + [str(int(v)) for v in row] for name, row in zip(categories, counts, strict=True)]
    return Grid("labels of the shared pairs: rows qrels A, columns qrels B", ["A \\ B", *categories], rows,
                [False] + [True] * len(categories))


def system_grid(systems: Any, digits: int = 4) -> Grid:
    """One row per run: its score under each qrels, the difference and its rank under each; the
    rank correlations under the table."""
    frame = systems.table
    rows = [[str(r["run"]), _number(r["qrels_a"], digits), _number(r["qrels_b"], digits),
             _number(r["difference"], digits), str(int(r["rank_a"])), str(int(r["rank_b"]))]
            for r in frame.to_dict("records")]
    note = "  ".join(f"{k} {_number(v, digits)}" for k, v in systems.statistics.items())
    return Grid(f"systems ranked by {systems.metric} under qrels A and B",
                ["run", "qrels A", "qrels B", "difference", "rank A", "rank B"], rows,
                [False, True, True, True, True, True], note=note)


def offline_online_grid(result: Any, digits: int = 4) -> Grid:
    """One row per statistic (Kendall's tau with its bootstrap interval); the experiments in
    the title.

    >>> from rankwise.agreement import offline_online
    >>> rows = [{"experiment": f"e{i}", "offline": d, "online": d / 10} for i, d in enumerate([0.1, -0.2, 0.3])]
    >>> print(offline_online_grid(offline_online(rows, resamples=0), 2).text().splitlines()[0])
    offline changes (offline) against online changes (online) over 3 experiments
    """
    rows = []
    for name, value in result.statistics.items():
        if name == "experiments":
            continue
        interval = result.intervals.get(name)
        shown = "" if interval is None else f"[{_number(interval[0], digits)}, {_number(interval[1], digits)}]"
        rows.append([name, str(int(value)) if name == "online_significant" else _number(value, digits), shown])
    return Grid(f"offline changes ({result.offline}) against online changes ({result.online}) over "
                f"{len(result.experiments)} experiments", ["statistic", "value", "interval"], rows,
                [False, True, True], note="\n".join(f"note: {w}" for w in result.warnings))


def experiments_grid(result: Any, digits: int = 4) -> Grid:
    """One row per experiment: the two changes, whether their signs agree, the online p-value."""
    frame = result.table
    columns = ["experiment", "offline", "online", "same sign"] + (["online p"] if "online_p" in frame else [])
    rows = [[str(r["experiment"]), _number(r["offline"], digits), _number(r["online"], digits),
             "yes" if r["same_sign"] else "no"] + ([_number(r["online_p"], digits)] if "online_p" in r else [])
            for r in frame.to_dict("records")]
    return Grid("experiments", columns, rows, [False, True, True, False] + [True] * ("online_p" in frame))


def agreement_grids(labels: Any, systems: Any | None, digits: int = 4) -> list[Grid]:
    """The label table, the confusion matrix, then the system table when runs were given."""
    return [label_grid(labels, digits), confusion_grid(labels)] + \
        ([system_grid(systems, digits)] if systems is not None else [])


def agreement_markdown(labels: Any, systems: Any | None, digits: int = 4) -> str:
    """The tables in Markdown, each titled, the notes under them."""
    return "\n\n".join(g.markdown() for g in agreement_grids(labels, systems, digits))


def agreement_dict(labels: Any, systems: Any | None) -> dict[str, Any]:
    """Every number: pair counts, statistics with intervals, the confusion matrix; per run
    scores and the ranking statistics.

    >>> import numpy as np
    >>> from rankwise.agreement.labels import LabelAgreement
    >>> out = LabelAgreement(np.array([0, 1]), np.eye(2), {"agreement": 1.0}, {"agreement": (1.0, 1.0)}, 2, 0, 0, 1)
    >>> agreement_dict(out, None)["labels"]["confusion"]
    {'categories': [0, 1], 'counts': [[1.0, 0.0], [0.0, 1.0]]}
    """
    labels_part = labels.to_dict()
    labels_part.pop("settings")
    out: dict[str, Any] = {"labels": labels_part}
    if systems is not None:
        systems_part = systems.to_dict()
        out["systems"] = {key: systems_part[key] for key in ("metric", "runs", "statistics")}
    return out


def agreement_json(labels: Any, systems: Any | None) -> str:
    """``agreement_dict`` as JSON (NaN written as null)."""
    from rankwise.results import json_plain

    return json.dumps(json_plain(agreement_dict(labels, systems)), indent=2)


def agreement_csv(labels: Any, systems: Any | None) -> str:
    """One row per statistic (section ``labels``) and per run (section ``systems``), every digit."""
    import pandas as pd

    frame = labels.table.assign(section="labels")
    if systems is not None:
        frame = pd.concat([frame, systems.table.assign(section="systems")], ignore_index=True)
    columns = ["section"] + [c for c in frame.columns if c != "section"]
    from rankwise.report.annotate import csv_text

    return csv_text(frame[columns], [*labels.warnings, *(systems.warnings if systems is not None else [])])
