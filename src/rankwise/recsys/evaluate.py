"""``beyond_accuracy``: every asked-for beyond-accuracy metric of one or several runs of
recommendation lists, in the one result shape (``rankwise.results``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise._version import __version__
from rankwise.recsys.inputs import RecsysData
from rankwise.recsys.metrics import parse
from rankwise.stats.checks import resample_count, significance_level


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
    from rankwise.results import Signature

    params = ",".join(f"{k}={v}" for k, v in values.items())
    given = ",".join(k for k, v in inputs.items() if v)
    return str(Signature.of(f"{name}({params})", inputs=given or "lists"))


@dataclass(frozen=True)
class _Accuracy:
    """An accuracy metric of the ranking catalogue (``ndcg@10``, ``recall@20``, ``map``),
    scored per list against the held-out interactions by ``rankwise.evaluate``."""

    label: str
    higher_is_better: bool | None


def _metric(name: str) -> tuple[Any, dict[str, Any]]:
    """A beyond-accuracy metric and its values, else an accuracy metric of the catalogue; a
    name that is neither gets the beyond-accuracy registry's "did you mean"."""
    from rankwise.errors import RankwiseError

    try:
        return parse(name)
    except RankwiseError as beyond_error:
        from rankwise.metrics.names import parse_metric

        try:
            spec = parse_metric(name)
        except RankwiseError:
            raise beyond_error from None
        return _Accuracy(spec.label, spec.family.higher_is_better), {}


def _accuracy(data: RecsysData, metrics: list[str], rating_threshold: float | None) -> tuple[Any, list[str], dict]:
    """Per list, the accuracy ``metrics`` against the held-out relevant items (lists x metrics,
    NaN for a list without relevant items), the evaluation's warnings and its signatures."""
    import pandas as pd

    from rankwise.evaluation import evaluate

    if data.relevant is None:
        from rankwise.errors import InputError

        raise InputError(f"accuracy metrics ({', '.join(metrics)}) need held-out interactions: give test=",
                         field="test")
    import pyarrow as pa

    from rankwise.data.containers import Qrels, Run

    def ids(codes: np.ndarray) -> Any:   # list indices or item codes as the string ids evaluate reads
        return pa.array(np.asarray(codes).astype(str))

    names = np.asarray(data.vocabulary).astype(str)
    rel_list, rel_item = data.relevant
    qrels = Qrels(ids(rel_list), pa.array(names[rel_item]), np.ones(len(rel_list), dtype=np.int64), "<held-out>")
    longest = int(np.diff(data.offsets).max()) if data.n_lists else 0
    items, owner, rank = data.top(longest)   # every list in full, ranked by its order (score = -rank)
    run = Run(ids(owner), pa.array(names[items]), -rank.astype(np.float64), "run", "<lists>")
    # a held-out user without a list has an empty one (RecsysData.add_empty_lists): scored 0 (-c)
    result = evaluate(qrels, {"run": run}, metrics, missing="zero")
    table = result.per_query.droplevel("run") if len(result.per_query) else pd.DataFrame(columns=metrics)
    values = table.reindex([str(o) for o in range(data.n_lists)])
    skipped = data.n_lists - int(values.notna().any(axis=1).sum())
    notes = [f"accuracy metrics: {skipped} list(s) without held-out relevant items are left out"] if skipped else []
    return values.to_numpy(dtype=np.float64), notes, dict(result.signatures)


def _read_user_groups(user_groups: Any) -> dict[Any, str]:
    """{user: group} from a dict or a table with a user column and a group column."""
    if isinstance(user_groups, Mapping):
        return {u: str(g) for u, g in user_groups.items()}
    from rankwise.recsys.inputs import GROUP_COLUMNS, USER_COLUMNS, _column, _frame, _place, source_of

    source = source_of(user_groups, "<user groups>")
    frame = _frame(user_groups, source)
    user = _column(frame, USER_COLUMNS, "user id", source)
    group = _column(frame, GROUP_COLUMNS + ("segment", "cohort"), "group", source)
    assert user is not None and group is not None
    from rankwise.errors import InputError

    out: dict[Any, str] = {}
    first: dict[Any, int] = {}
    for row, (who, value) in enumerate(zip(frame.ids(user).tolist(), frame.values(group), strict=True)):
        if value is None or not str(value).strip():
            raise InputError(f"user {who!r} has an empty {group}; expected one group per user", field=group,
                             **frame.where(row))
        if who in out and out[who] != str(value):   # which group would the user's lists count in?
            raise InputError(f"user {who!r} is in two groups, {out[who]!r} ({_place(frame.where(first[who]))}) and "
                             f"{str(value)!r}; expected one group per user", field=group, **frame.where(row))
        out.setdefault(who, str(value))
        first.setdefault(who, row)
    return out


def beyond_accuracy(runs: Any, metrics: str | Sequence[str], *, train: Any = None, test: Any = None,
                    catalogue: Any = None, features: Any = None, groups: Any = None,
                    rating_threshold: float | None = None, user_groups: Any = None,
                    test_name: str = "t", baseline: str | None = None, correction: str = "holm",
                    alpha: float = 0.05, permutations: int = 10_000, seed: int = 0) -> BeyondAccuracyResult:
    """Beyond-accuracy metrics (``rankwise.recsys.metrics.BEYOND_ACCURACY``: ``coverage@10``,
    ``novelty@10``, ``ild(similarity=cosine)@10`` ...) of ``runs``, beside any accuracy metric
    of the ranking catalogue (``ndcg@10``, ``recall@20``: scored per user by
    ``rankwise.evaluate`` against ``test``, its held-out items relevant). ``runs``: one run (a
    dict of ordered lists per user, a DataFrame or a file of user, item and score/rank rows) or
    a mapping of run names to runs. ``train``: the training interactions (popularity, novelty,
    history); ``test``: held-out interactions (relevance); ``catalogue``: every item id (or a
    file of them, ``read_catalogue``);
    ``features``: item vectors; ``groups``: item groups or genres; ``user_groups``: a group per
    user (``{user: group}`` or a table), which adds one row per user group for every per-user
    metric.

    With several runs, every per-user metric of every other run is tested against the
    ``baseline`` run (the first by default) on the users both have (``test_name``: a paired
    test of ``rankwise.stats.paired.PAIRED_TESTS``, paired t by default): the table's
    ``baseline``, ``p_value`` and ``p_adjusted`` columns, the last corrected over every test of
    the table (``correction``, ``rankwise.stats.corrections``; Holm by default) and compared with
    ``alpha`` in ``significant`` (``permutations`` and ``seed``: the randomisation and bootstrap
    tests' resamples, as in ``compare``).

    >>> lists = {"u1": ["a", "b"], "u2": ["b", "c"]}
    >>> out = beyond_accuracy(lists, ["coverage@2", "arp@2"], train={"u1": ["c"], "u2": ["a", "a"]})
    >>> out.table[["metric", "value"]].values.tolist()   # a, c of the catalogue (train) a, c; (1 + 0.5) / 2
    [['coverage@2', 1.0], ['arp@2', 0.75]]
    >>> out.warnings   # b is recommended, never trained on
    ["run: 1 recommended item(s) are not in the catalogue (the training items), e.g. 'b': coverage counts ..."]
    >>> out = beyond_accuracy(lists, ["P@1", "arp@2"], train={"u1": ["c"], "u2": ["a", "a"]},
    ...                       test={"u1": ["a"], "u2": ["a"]})
    >>> out.table[["metric", "value"]].values.tolist()   # P@1: u1 1, u2 0
    [['P@1', 0.5], ['arp@2', 0.75]]
    """
    import pandas as pd

    from rankwise.stats.corrections import CORRECTION_METHODS
    from rankwise.stats.paired import PAIRED_TESTS

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    parsed = [(name, *_metric(name)) for name in names]
    accuracy = [label for label, member, _ in parsed if isinstance(member, _Accuracy)]
    test_member, test_params = PAIRED_TESTS.parse(test_name)
    correction = CORRECTION_METHODS.canonical(correction)
    alpha, permutations = significance_level(alpha), resample_count(permutations)   # even with one run
    if isinstance(runs, Mapping) and runs and all(not isinstance(v, (list, tuple, np.ndarray))
                                                  for v in runs.values()):
        named = [(str(k), v) for k, v in runs.items()]
    else:
        named = [("run", runs)]
    if baseline is not None and baseline not in dict(named):
        from rankwise.errors import OptionError

        raise OptionError(f"baseline {baseline!r} is not one of the runs ({', '.join(n for n, _ in named)})")
    inputs = {"train": train is not None, "test": test is not None, "catalogue": catalogue is not None,
              "features": features is not None, "groups": groups is not None}
    by_user_group = _read_user_groups(user_groups) if user_groups is not None else None
    rows, per_user_frames, warnings = [], [], []
    if isinstance(catalogue, (str, os.PathLike)):   # one file for every run: read once, its notes said once
        from rankwise.recsys.inputs import read_catalogue

        catalogue, notes = read_catalogue(catalogue)
        warnings += notes
    for run_name, run in named:
        data = RecsysData.build(run, train=train, test=test, catalogue=catalogue, features=features, groups=groups,
                                rating_threshold=rating_threshold)
        warnings += [f"{run_name}: {note}" for note in data.notes]
        frame = pd.DataFrame({"run": run_name, "user": data.users})
        scored: np.ndarray | None = None
        signatures: dict[str, str] = {}
        if accuracy:
            scored, notes, signatures = _accuracy(data, accuracy, rating_threshold)
            warnings += [f"{run_name}: {note}" for note in notes]
        for label, member, values in parsed:
            if isinstance(member, _Accuracy):
                assert scored is not None
                per_user = scored[:, accuracy.index(label)]
                value = float(np.nanmean(per_user)) if np.isfinite(per_user).any() else float("nan")
                higher, signature = member.higher_is_better, signatures.get(label, label)
            else:
                value, per_user = member.target(data, **values)
                higher, signature = member.higher_is_better, _signature(member.name, values, inputs)
            users = int((~np.isnan(per_user)).sum()) if per_user is not None else data.n_lists
            if per_user is not None and not isinstance(member, _Accuracy):
                undefined = data.n_lists - users
                if undefined:
                    warnings.append(f"{run_name}: {label}: undefined for {undefined} user(s) (left out of the mean)")
            if per_user is not None:
                frame[label] = per_user
            rows.append({"run": run_name, "metric": label, "value": value, "users": users,
                         "higher_is_better": higher, "signature": signature})
        per_user_frames.append(frame)
    per_user_table = pd.concat(per_user_frames, ignore_index=True)
    table = pd.DataFrame(rows)
    if len(named) > 1:
        first = baseline if baseline is not None else named[0][0]
        def paired(a: np.ndarray, b: np.ndarray) -> float:
            return float(test_member.target(a, b, resamples=permutations, seed=seed, progress=None, **test_params))

        table = _paired_tests(table, per_user_table, first, paired, correction, alpha)
    if by_user_group is not None:
        table = _user_group_rows(table, per_user_table, by_user_group, warnings)
    settings = {"metrics": names, "inputs": inputs, "rating_threshold": rating_threshold,
                "test": test_member.name if len(named) > 1 else None,
                "correction": correction if len(named) > 1 else None, "alpha": alpha}
    from rankwise.results import signed

    return BeyondAccuracyResult(table, per_user_table, warnings, signed("beyond", settings))


def _paired_tests(table: Any, per_user: Any, baseline: str, p_value: Any, correction: str, alpha: float) -> Any:
    """``baseline``, ``p_value``, ``p_adjusted`` and ``significant`` columns: each per-user metric
    of each other run against the baseline run, over the users both have a value for (per-run
    metrics: no test), corrected together."""
    from rankwise.stats.corrections import correct

    table = table.assign(baseline=None, p_value=np.nan, p_adjusted=np.nan, significant=False)
    first = per_user[per_user["run"] == baseline].set_index("user")
    for index, row in table.iterrows():
        if row["run"] == baseline or row["metric"] not in per_user.columns:
            continue
        other = per_user[per_user["run"] == row["run"]].set_index("user")
        both = first[[row["metric"]]].merge(other[[row["metric"]]], left_index=True, right_index=True,
                                            suffixes=("_a", "_b")).dropna()
        if len(both) >= 2:
            table.loc[index, "p_value"] = p_value(both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy())
            table.loc[index, "baseline"] = baseline
    tested = table["p_value"].notna()
    if tested.any():
        table.loc[tested, "p_adjusted"] = correct(table.loc[tested, "p_value"].to_numpy(), correction, alpha)
        table.loc[tested, "significant"] = table.loc[tested, "p_adjusted"] < alpha
    return table


def _user_group_rows(table: Any, per_user: Any, by_user_group: dict[Any, str], warnings: list[str]) -> Any:
    """The table's rows (``user_group`` "all") and, for every per-user metric, one row per
    user group: the mean over that group's users."""
    import pandas as pd

    group_of = per_user["user"].map(by_user_group)
    missing = int(group_of.isna().sum())
    if missing:
        warnings.append(f"user groups: {missing} (run, user) row(s) have no group and are only in 'all'")
    extra = []
    for row in table.to_dict("records"):
        if row["metric"] not in per_user.columns:
            continue
        part = per_user[per_user["run"] == row["run"]]
        for group, values in part[row["metric"]].groupby(group_of[part.index], sort=True):
            kept = values.dropna()
            extra.append({**row, "user_group": group, "value": float(kept.mean()) if len(kept) else float("nan"),
                          "users": len(kept), "p_value": np.nan, "p_adjusted": np.nan, "significant": False,
                          "baseline": None})
    table = table.assign(user_group="all")
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True) if extra else table
