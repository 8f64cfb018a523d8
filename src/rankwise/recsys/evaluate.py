"""``beyond_accuracy``: every asked-for beyond-accuracy metric of one or several runs of
recommendation lists, in the one result shape (``rankwise.results``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise._version import __version__
from rankwise.recsys.inputs import RecsysData
from rankwise.recsys.metrics import parse


@dataclass
class BeyondAccuracyResult:
    """``table``: one row per run x metric (value, users it averages over, signature);
    ``per_user``: one row per run x user, one column per per-user metric; ``warnings``;
    ``settings``."""

    table: Any
    per_user: Any
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The rows, warnings and settings (JSON-plain; per-user values left out)."""
        from rankwise.results import json_plain

        return json_plain({"rankwise": __version__, "rows": self.table, "warnings": self.warnings,
                           "settings": self.settings})


def _signature(name: str, values: Mapping[str, Any], inputs: Mapping[str, bool]) -> str:
    params = ",".join(f"{k}={v}" for k, v in values.items())
    given = ",".join(k for k, v in inputs.items() if v)
    return f"{name}({params})|inputs={given or 'lists'}|rankwise-{__version__}"


def beyond_accuracy(runs: Any, metrics: str | Sequence[str], *, train: Any = None, test: Any = None,
                    catalogue: Any = None, features: Any = None, groups: Any = None,
                    rating_threshold: float | None = None) -> BeyondAccuracyResult:
    """Beyond-accuracy metrics (``rankwise.recsys.metrics.BEYOND_ACCURACY``: ``coverage@10``,
    ``novelty@10``, ``ild(similarity=cosine)@10`` ...) of ``runs``: one run (a dict of ordered
    lists per user, a DataFrame or a file of user, item and score/rank rows) or a mapping of
    run names to runs. ``train``: the training interactions (popularity, novelty, history);
    ``test``: held-out interactions (relevance); ``catalogue``: every item id; ``features``:
    item vectors; ``groups``: item groups or genres.

    >>> lists = {"u1": ["a", "b"], "u2": ["b", "c"]}
    >>> out = beyond_accuracy(lists, ["coverage@2", "arp@2"], train={"u1": ["c"], "u2": ["a", "a"]})
    >>> out.table[["metric", "value"]].values.tolist()   # 3 items / 2 in train; (1 + 0.5) / 2
    [['coverage@2', 1.5], ['arp@2', 0.75]]
    """
    import pandas as pd

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    parsed = [(name, *parse(name)) for name in names]
    if isinstance(runs, Mapping) and runs and all(not isinstance(v, (list, tuple, np.ndarray))
                                                  for v in runs.values()):
        named = [(str(k), v) for k, v in runs.items()]
    else:
        named = [("run", runs)]
    inputs = {"train": train is not None, "test": test is not None, "catalogue": catalogue is not None,
              "features": features is not None, "groups": groups is not None}
    rows, per_user_frames, warnings = [], [], []
    for run_name, run in named:
        data = RecsysData.build(run, train=train, test=test, catalogue=catalogue, features=features, groups=groups,
                                rating_threshold=rating_threshold)
        warnings += [f"{run_name}: {note}" for note in data.notes]
        frame = pd.DataFrame({"run": run_name, "user": data.users})
        for label, member, values in parsed:
            value, per_user = member.target(data, **values)
            users = int((~np.isnan(per_user)).sum()) if per_user is not None else data.n_lists
            if per_user is not None:
                undefined = data.n_lists - users
                if undefined:
                    warnings.append(f"{run_name}: {label}: undefined for {undefined} user(s) (left out of the mean)")
                frame[label] = per_user
            rows.append({"run": run_name, "metric": label, "value": value, "users": users,
                         "higher_is_better": member.higher_is_better,
                         "signature": _signature(member.name, values, inputs)})
        per_user_frames.append(frame)
    settings = {"metrics": names, "inputs": inputs, "rating_threshold": rating_threshold}
    return BeyondAccuracyResult(pd.DataFrame(rows), pd.concat(per_user_frames, ignore_index=True), warnings,
                                settings)
