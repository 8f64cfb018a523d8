"""CUPAC (rankwise.experiments.cupac, ``cupac=[features]``): cross-fitted predictions equal
scikit-learn's LinearRegression fold by fold, the variance falls to the noise the features
cannot explain, a single linear feature gives CUPED's answer, and seeded A/A experiments keep
their false-positive rate."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankwise.errors import OptionError
from rankwise.experiments import analyze
from rankwise.experiments.cupac import cross_fitted


def _data(seed: int, n: int = 4000, effect: float = 0.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f1, f2 = rng.normal(size=n), rng.normal(size=n)
    arm = np.where(np.arange(n) % 2, "A", "B")
    y = 2 * f1 + f2 + rng.normal(size=n) + np.where(arm == "B", effect, 0.0)
    return {"u": np.arange(n), "v": arm, "f1": f1, "f2": f2, "y": y,
            "clicks": rng.poisson(np.exp(0.5 * f1) + 1), "views": rng.poisson(5, n) + 1}


def test_linear_cross_fitting_equals_scikit_learn_fold_by_fold() -> None:
    from sklearn.linear_model import LinearRegression

    d = _data(1, n=500)
    x = np.column_stack([d["f1"], d["f2"]])
    ours = cross_fitted(x, d["y"], "linear")
    theirs = cross_fitted(x, d["y"], LinearRegression())   # the same folds, scikit-learn's fit
    assert ours == pytest.approx(theirs, rel=1e-10, abs=1e-12)
    fold = np.random.default_rng(0).permutation(500) % 2 == 0   # fold 0: a model fitted on fold 1 only
    assert ours[fold] == pytest.approx(LinearRegression().fit(x[~fold], d["y"][~fold]).predict(x[fold]), rel=1e-10)


def test_cupac_removes_what_the_features_explain() -> None:
    d = _data(2)
    plain = analyze(d, "u", "v", ["y", "ctr=clicks/views", "clicked=clicks>0"]).table.set_index("metric")
    adjusted = analyze(d, "u", "v", ["y", "ctr=clicks/views", "clicked=clicks>0"], cupac=["f1", "f2"])
    table = adjusted.table.set_index("metric")
    # y's variance is 2^2 + 1 + 1 = 6; the features explain all but the unit noise (1): se shrinks ~sqrt(6)
    assert table.loc["y", "se"] == pytest.approx(math.sqrt(2 / 2000), rel=0.1)
    assert plain.loc["y", "se"] / table.loc["y", "se"] == pytest.approx(math.sqrt(6), rel=0.1)
    for metric in ("ctr", "clicked"):   # ratio and proportion: adjusted too, never widened much
        assert table.loc[metric, "se"] < plain.loc[metric, "se"] * 1.01
    from rankwise.report.ab import ab_title

    assert "CUPAC: linear model on f1, f2, cross-fitted" in ab_title(adjusted)


def test_one_linear_feature_gives_cuped() -> None:
    d = _data(3)
    cupac = analyze(d, "u", "v", ["y"], cupac=["f1"]).table.iloc[0]
    cuped = analyze(d, "u", "v", ["y"], covariates={"y": "f1"}).table.iloc[0]
    assert cupac["difference"] == pytest.approx(cuped["difference"], abs=0.02 * cuped["se"])
    assert cupac["se"] == pytest.approx(cuped["se"], rel=1e-2)


def test_aa_false_positive_rate() -> None:
    """150 seeded A/A experiments of 2 x 200 units with CUPAC on two features: about 5% reject."""
    rejected = sum(analyze(_data(100 + i, n=400), "u", "v", ["y"], cupac=["f1", "f2"]).table.iloc[0]["p_value"] < 0.05
                   for i in range(150))
    assert abs(rejected / 150 - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 150)


def test_errors() -> None:
    d = _data(4, n=100)
    with pytest.raises(OptionError, match="not both"):
        analyze(d, "u", "v", ["y"], cupac=["f1"], covariates={"y": "f2"})
    with pytest.raises(OptionError, match="is a quantile: CUPAC adjusts means and ratios"):
        analyze(d, "u", "v", ["q=p50(y)"], cupac=["f1"])
    with pytest.raises(OptionError, match="unknown CUPAC model 'forest'"):
        analyze(d, "u", "v", ["y"], cupac=["f1"], cupac_model="forest")
    pytest.importorskip("duckdb")
    from rankwise.errors import InputError

    with pytest.raises(InputError, match=r"missing column\(s\) 'f9'"):
        analyze(d, "u", "v", ["y"], cupac=["f9"], engine="duckdb")


def test_cupac_on_duckdb_and_through_ibis_equals_memory() -> None:
    """The features come back per unit beside the sums, in id order: the same folds, the same
    fits, the same table."""
    import pandas as pd

    from rankwise.errors import InputError

    pytest.importorskip("duckdb")
    ibis = pytest.importorskip("ibis")
    d = pd.DataFrame(_data(4, n=1000))
    metrics = ["y", "ctr=clicks/views", "clicked=clicks>0"]
    memory = analyze(d, "u", "v", metrics, cupac=["f1", "f2"]).table
    for got in (analyze(d, "u", "v", metrics, cupac=["f1", "f2"], engine="duckdb").table,
                analyze(ibis.memtable(d), "u", "v", metrics, cupac=["f1", "f2"]).table):
        pd.testing.assert_frame_equal(got, memory, check_exact=False, rtol=1e-12)
    with pytest.raises(InputError, match="covariate 'f1' differs within unit"):   # a feature: one value per unit
        analyze(pd.concat([d, d.assign(f1=d["f1"] + 1)]), "u", "v", ["y"], cupac=["f1"], engine="duckdb")
