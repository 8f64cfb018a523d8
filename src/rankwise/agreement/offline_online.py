"""Does an offline metric predict the online one? Agreement of offline and online changes over
experiments.

Each experiment compared a control and a treatment twice: offline (the change in nDCG@10 of
the treatment's run against the control's, from ``rankwise compare``) and online (the change
in CTR or revenue in the A/B test, from ``rankwise ab``). Over the experiments:

- **Kendall's tau** (tau-b, as ``scipy.stats.kendalltau``, with its p-value) between the
  offline and the online changes, and a percentile bootstrap interval over experiments;
- **Spearman's rho** and **Pearson's r**;
- **sign agreement**: the share of experiments where both changes have the same sign (an
  experiment with a zero change on either side is left out and counted in a note);
- with the online tests' p-values, the **significant sign agreement**: among the experiments
  whose online change is significant at ``alpha``, the share whose offline change points the
  same way; and the **precision** of the offline metric as a launch filter: among the
  experiments the offline metric calls wins (offline change > 0), the share that were
  significant online wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.errors import InputError, RankwiseError


@dataclass
class OfflineOnline:
    """Offline and online changes of each experiment and how far they agree."""

    offline: str
    online: str
    experiments: list[str]
    offline_change: np.ndarray
    online_change: np.ndarray
    online_p: np.ndarray | None
    statistics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    warnings: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def table(self) -> Any:
        """One row per experiment: both changes, whether their signs agree, the online p-value."""
        import pandas as pd

        frame = pd.DataFrame({"experiment": self.experiments, "offline": self.offline_change,
                              "online": self.online_change})
        frame["same_sign"] = np.sign(self.offline_change) == np.sign(self.online_change)
        if self.online_p is not None:
            frame["online_p"] = self.online_p
        return frame

    def to_dict(self) -> dict[str, Any]:
        """Every number: the statistics with their intervals, one row per experiment, settings."""
        from rankwise.results import json_plain

        return json_plain({"offline": self.offline, "online": self.online, "statistics": dict(self.statistics),
                           "intervals": {k: list(v) for k, v in self.intervals.items()},
                           "experiments": self.table.to_dict("records"), "warnings": self.warnings,
                           "settings": self.settings}, nan_as_null=False)


def _frame(experiments: Any) -> tuple[Any, str]:
    """A pandas DataFrame and the name of its source."""
    import pandas as pd

    if isinstance(experiments, (str, os.PathLike)):
        from pathlib import Path

        from rankwise.data.tables import read_table

        path = Path(experiments)
        if not path.exists():
            raise InputError("file not found; expected a table of experiments (CSV, TSV, Parquet, JSON lines)",
                             source=str(path))
        return read_table(path, None).to_pandas(), str(path)
    if isinstance(experiments, pd.DataFrame):
        return experiments, "<DataFrame>"
    if isinstance(experiments, Mapping):
        return pd.DataFrame(dict(experiments)), "<dict>"
    if isinstance(experiments, Sequence):
        return pd.DataFrame(list(experiments)), "<records>"
    raise RankwiseError(f"cannot read experiments from a {type(experiments).__name__}; expected a path, a "
                        "DataFrame, a dict of columns or a list of records")


def _numbers(frame: Any, column: str, source: str, first_line: int) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(np.isnan(values) & frame[column].notna().to_numpy())
    if len(bad):
        raise InputError(f"expected a number, got {frame[column].iloc[bad[0]]!r}", source=source,
                         line=int(bad[0]) + first_line, field=column)
    infinite = np.flatnonzero(np.isinf(values))
    if len(infinite):
        raise InputError("expected a finite number", source=source, line=int(infinite[0]) + first_line,
                         field=column)
    return values


def kendall_tau_b_rows(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair of ``xs`` and ``ys`` (shape [rows, n]), as
    ``scipy.stats.kendalltau`` computes it: (concordant - discordant) / sqrt((n0 - ties in x)
    (n0 - ties in y)), n0 = n(n - 1)/2; NaN where a row is constant.

    >>> kendall_tau_b_rows(np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([[1.0, 3.0, 2.0, 4.0]])).tolist()   # (5 - 1) / 6
    [0.6666666666666666]
    """
    xs, ys = np.atleast_2d(xs), np.atleast_2d(ys)
    n = xs.shape[1]
    dx = np.sign(xs[:, :, None] - xs[:, None, :]).astype(np.int8)
    dy = np.sign(ys[:, :, None] - ys[:, None, :]).astype(np.int8)
    score = (dx.astype(np.int64) * dy).sum(axis=(1, 2)) / 2.0
    pairs = n * (n - 1) / 2.0
    tied_x = ((dx == 0).sum(axis=(1, 2)) - n) / 2.0
    tied_y = ((dy == 0).sum(axis=(1, 2)) - n) / 2.0
    denominator = np.sqrt((pairs - tied_x) * (pairs - tied_y))
    return np.divide(score, denominator, out=np.full(len(score), np.nan), where=denominator > 0)


def offline_online(experiments: Any, offline: str = "offline", online: str = "online",
                   experiment: str | None = "experiment", online_p: str | None = None, alpha: float = 0.05,
                   resamples: int = 1000, seed: int = 0) -> OfflineOnline:
    """Agreement of the offline and the online change over experiments (see the module).

    ``experiments``: a table (path, DataFrame, dict of columns or list of records) with one row
    per experiment; ``offline`` and ``online`` name the columns of the two changes,
    ``experiment`` the experiment's name (None: numbered from 1), ``online_p`` the online
    test's p-value (optional). Rows with a missing change are left out and counted in a
    warning.

    >>> rows = [{"experiment": "e1", "offline": 0.010, "online": 0.004},
    ...         {"experiment": "e2", "offline": -0.020, "online": -0.001},
    ...         {"experiment": "e3", "offline": 0.030, "online": 0.002},
    ...         {"experiment": "e4", "offline": 0.005, "online": -0.003}]
    >>> out = offline_online(rows, resamples=200)
    >>> out.statistics["sign_agreement"]     # e4 disagrees
    0.75
    >>> round(out.statistics["kendall_tau"], 4)   # 4 concordant, 2 discordant pairs of 6: (4 - 2) / 6
    0.3333
    """
    from scipy.stats import kendalltau, pearsonr, spearmanr

    from rankwise.stats.checks import resample_count, significance_level
    from rankwise.stats.resampling import bootstrap_statistic, percentile_interval

    significance_level(alpha)
    resample_count(resamples)
    frame, source = _frame(experiments)
    first_line = 2 if source.endswith((".csv", ".tsv", ".txt", ".gz")) else 1
    wanted = [c for c in (offline, online, experiment, online_p) if c is not None]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, frame.columns))
        raise InputError(f"missing column(s) {', '.join(map(repr, missing))}; found {found} (name them with "
                         "offline=/online=/experiment=/online_p=, on the command line --offline/--online/"
                         "--experiment/--online-p)", source=source)
    x = _numbers(frame, offline, source, first_line)
    y = _numbers(frame, online, source, first_line)
    p = _numbers(frame, online_p, source, first_line) if online_p is not None else None
    names = (frame[experiment].astype(str).tolist() if experiment is not None
             else [str(i + 1) for i in range(len(frame))])
    keep = ~np.isnan(x) & ~np.isnan(y)
    warnings: list[str] = []
    if (~keep).any():
        warnings.append(f"{source}: {int((~keep).sum())} experiment(s) without both changes left out")
    x, y = x[keep], y[keep]
    p = p[keep] if p is not None else None
    names = [n for n, k in zip(names, keep.tolist(), strict=True) if k]
    if len(x) < 3:
        raise RankwiseError(f"offline-online agreement needs at least 3 experiments with both changes, got {len(x)}")
    if p is not None and ((p < 0) | (p > 1)).any():
        row = int(np.flatnonzero((p < 0) | (p > 1))[0])
        raise InputError(f"expected a p-value in [0, 1], got {p[row]}", source=source, field=online_p)
    signed = (x != 0) & (y != 0)
    if (~signed).any():
        warnings.append(f"{int((~signed).sum())} experiment(s) with a zero change left out of the sign agreement")
    same = np.sign(x) == np.sign(y)
    stats: dict[str, float] = {
        "experiments": float(len(x)),
        "kendall_tau": float(kendalltau(x, y).statistic),
        "kendall_p": float(kendalltau(x, y).pvalue),
        "spearman": float(spearmanr(x, y).statistic),
        "pearson": float(pearsonr(x, y).statistic) if np.ptp(x) > 0 and np.ptp(y) > 0 else float("nan"),
        "sign_agreement": float(same[signed].mean()) if signed.any() else float("nan"),
    }
    if p is not None:
        significant = (p < alpha) & (y != 0)
        stats["online_significant"] = float(significant.sum())
        stats["significant_sign_agreement"] = float(same[significant].mean()) if significant.any() else float("nan")
        called = x > 0
        stats["offline_win_precision"] = (float((significant & (y > 0))[called].mean()) if called.any()
                                          else float("nan"))
    rng = np.random.default_rng(seed)
    draws = bootstrap_statistic(x, lambda picks: kendall_tau_b_rows(x[picks], y[picks]), resamples, rng,
                                budget=max(len(x), 2**22 // len(x)))   # [chunk, n, n] signs at a time
    interval = percentile_interval(draws, alpha, ignore_nan=True) if resamples > 0 else (float("nan"),) * 2
    intervals = {"kendall_tau": interval}
    from rankwise.results import signed

    settings = signed("offline-online", {"offline": offline, "online": online, "online_p": online_p, "alpha": alpha,
                                         "resamples": resamples, "seed": seed})
    return OfflineOnline(offline, online, names, x, y, p, stats, intervals, warnings, {**settings, "source": source})


__all__ = ["OfflineOnline", "kendall_tau_b_rows", "offline_online"]
