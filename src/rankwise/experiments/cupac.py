"""CUPAC: the CUPED covariate predicted from pre-experiment features by a model (Tang et al.,
DoorDash 2020), cross-fitted so that no unit's prediction has seen its own outcome (Guo et al.
2021, MLRATE).

For each metric column the units are split into ``folds`` at random (seeded, over the units
sorted by id); the model is fitted on the other folds' features and values and predicts the fold's
values. The features are pre-experiment (they cannot depend on the variant) and the model never
sees the variant, so the prediction is a valid CUPED covariate: the analysis then adjusts by it
with CUPED's theta, as for a measured covariate. ``linear`` is least squares with an intercept;
any object with scikit-learn's ``fit``/``predict`` (a gradient-boosting regressor, say) can
take its place.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from rankwise.errors import OptionError

MODELS = ("linear",)
"""The models named by text; any scikit-learn-style estimator object is accepted too."""


def cross_fitted(features: np.ndarray, target: np.ndarray, model: Any = "linear", folds: int = 2) -> np.ndarray:
    """Out-of-fold predictions of ``target`` from ``features`` (units x features).

    >>> x = np.arange(8.0)[:, None]
    >>> cross_fitted(x, 3 * x[:, 0] + 1).round(6).tolist()   # an exact line is predicted exactly
    [1.0, 4.0, 7.0, 10.0, 13.0, 16.0, 19.0, 22.0]
    """
    features = np.asarray(features, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    if features.ndim != 2 or len(features) != len(target):
        raise OptionError("CUPAC needs one row of features per unit")
    if not np.isfinite(features).all():
        raise OptionError("CUPAC features must be finite numbers")
    if folds < 2 or len(target) < 2 * folds:
        raise OptionError(f"CUPAC needs at least {2 * folds} units for {folds} folds")
    # folds drawn at random (seeded: the same units give the same folds): a pattern in the ids,
    # such as arms assigned in turn, must not line up with them
    fold = np.random.default_rng(0).permutation(len(target)) % folds
    out = np.empty(len(target))
    for k in range(folds):
        train, test = fold != k, fold == k
        out[test] = _fit_predict(model, features[train], target[train], features[test])
    return out


def _fit_predict(model: Any, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    if isinstance(model, str):
        if model != "linear":
            raise OptionError(f"unknown CUPAC model {model!r}; expected one of {', '.join(MODELS)} or an "
                              "estimator with fit and predict")
        design = np.column_stack([np.ones(len(x_train)), x_train])
        coefficients, *_ = np.linalg.lstsq(design, y_train, rcond=None)
        return np.column_stack([np.ones(len(x_test)), x_test]) @ coefficients
    if not (hasattr(model, "fit") and hasattr(model, "predict")):
        raise OptionError("a CUPAC model is 'linear' or an estimator with fit and predict (scikit-learn's API)")
    fitted = copy.deepcopy(model)
    fitted.fit(x_train, y_train)
    return np.asarray(fitted.predict(x_test), dtype=np.float64)
