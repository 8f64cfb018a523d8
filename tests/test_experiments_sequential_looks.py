"""One looks summary for every sequential design: each look carries its boundary and whether it
was crossed, the comparison its looks and first crossing, and every output (text, Markdown,
HTML) the same summary table. For the always-valid designs the boundary is the |z| at which the
look's always-valid p-value reaches alpha, so a look crosses exactly when its p-value is below
alpha."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankwise import experiments
from rankwise.stats.sequential import SEQUENTIAL_DESIGNS, always_valid, always_valid_boundary, msprt, msprt_boundary

EVENTS = Path(__file__).resolve().parent / "data" / "online" / "events.csv"
DESIGNS = list(SEQUENTIAL_DESIGNS.names())
METRICS = ["clicks=count(click)", "views=count(impression)"]


def _analysis(design: str):
    return experiments.analyze(str(EVENTS), unit="user_id", metrics=METRICS, timestamp="timestamp", sequential=design,
                          planned_units=400)


def test_at_the_boundary_the_always_valid_p_value_is_alpha() -> None:
    # mSPRT, V = 0.0004, tau^2 = 0.04: the p-value of a difference boundary x se is alpha
    assert msprt(msprt_boundary(0.02, 4.0) * 0.02, 0.02, 4.0)[2] == pytest.approx(0.05, rel=1e-12)
    assert always_valid(always_valid_boundary(20_000) * 0.02, 0.02, 20_000)[2] == pytest.approx(0.05, rel=1e-12)
    # the boundary falls as units come in for the confidence sequence, then rises (its tuning)
    assert always_valid_boundary(1_000) > always_valid_boundary(5_000) < always_valid_boundary(10**7)


@pytest.mark.parametrize("design", DESIGNS)
def test_every_design_has_the_looks_summary(design: str) -> None:
    result = _analysis(design)
    looks = result.looks
    assert {"look", "boundary", "crossed", "statistic"} <= set(looks.columns)
    assert np.isfinite(looks["boundary"]).all()
    for (metric, arm), part in looks.groupby(["metric", "variant"], sort=False):
        part = part.sort_values("look")
        reached = np.abs(part["statistic"].to_numpy()) >= part["boundary"].to_numpy()
        assert part["crossed"].tolist() == np.maximum.accumulate(reached).tolist()   # once crossed, crossed
        if SEQUENTIAL_DESIGNS.get(design).always_valid:
            # crossing the boundary is the running always-valid p-value falling below alpha
            assert part["crossed"].tolist() == (part["p_value"] < 0.05).tolist()
        row = result.table[(result.table["metric"] == metric) & (result.table["variant"] == arm)].iloc[0]
        assert row["looks"] == len(part)
        first = part[part["crossed"]]["look"]
        assert row["first_crossing"] == (str(first.iloc[0].date()) if len(first) else "")
        assert row["boundary"] == part["boundary"].iloc[-1]


@pytest.mark.parametrize("design", DESIGNS)
def test_every_output_prints_the_looks_table(design: str, tmp_path, rankwise_cli, capsys) -> None:
    argv = ["ab", str(EVENTS), "--unit", "user_id", "-m", METRICS[0], "--timestamp", "timestamp", "--sequential",
            design, "--planned-units", "400"]
    assert rankwise_cli([*argv, "-f", "text"]) == 0
    text = capsys.readouterr().out
    assert f"sequential looks ({SEQUENTIAL_DESIGNS.get(design).name})" in text
    assert "first look  last look    |z|  boundary  first crossing" in text
    assert rankwise_cli([*argv, "-f", "markdown"]) == 0
    assert "| metric | variant | looks | first look | last look | |z| | boundary | first crossing |" in \
        capsys.readouterr().out.replace("\\|", "|")
    page = tmp_path / "ab.html"
    assert rankwise_cli([*argv, "-f", "html", "-o", str(page)]) == 0
    assert "<h2>sequential looks" in page.read_text()


def test_without_looks_there_is_no_summary() -> None:
    from rankwise.report.ab import looks_grid

    result = experiments.analyze(str(EVENTS), unit="user_id", metrics=METRICS, sequential="always-valid")
    assert result.looks is None and looks_grid(result) is None
    assert "looks" not in result.table.columns and not math.isnan(result.table["p_value"].iloc[0])
