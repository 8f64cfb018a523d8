"""Fitted click models to and from a JSON file: the model's name, its settings (prior,
cascade floor), the per-rank or global parameters, and one row per (query, document) pair.

>>> import tempfile, os
>>> from rankwise.clicks.log import ClickLog
>>> from rankwise.clicks.models import PBM
>>> log = ClickLog.from_arrays(["q", "q"], [["a", "b"], ["b", "a"]], [[1, 0], [0, 0]])
>>> path = os.path.join(tempfile.mkdtemp(), "model.json")
>>> save_model(PBM().fit(log), path)
>>> load_model(path).parameters()["pairs"]["doc"].tolist()
['a', 'b']
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any

import numpy as np

from rankwise.clicks.models import ClickModel
from rankwise.data.distinct import distinct
from rankwise.errors import InputError, ParameterError
from rankwise.results import json_plain

FORMAT = "rankwise-click-model"
VERSION = 1
KEYS = ("format", "version", "model", "settings", "parameters", "pairs", "history", "prior", "features", "posterior",
        "components")
"""The keys of a saved model document; any other is refused (a misspelt key would be ignored)."""
NOT_PROBABILITIES = {"label"}
"""Saved values that are not probabilities (every other one must lie in [0, 1])."""


def _plain(value: Any) -> Any:
    """NumPy arrays and scalars as plain lists and numbers, every value kept (NaN too)."""
    return json_plain(value, nan_as_null=False)


def model_document(model: ClickModel) -> dict[str, Any]:
    """The JSON-ready description of a fitted model."""
    settings = {name: _plain(getattr(model, name)) for name in inspect.signature(type(model).__init__).parameters
                if name != "self" and hasattr(model, name)}
    pairs = {"query": np.asarray(model.query_ids, dtype=object)[model.pair_query].tolist(),
             "doc": np.asarray(model.doc_ids, dtype=object)[model.pair_doc].tolist()}
    pairs.update({column: _plain(getattr(model, attribute)) for column, attribute in model.pair_fields.items()})
    document = {"format": FORMAT, "version": VERSION, "model": model.name, "settings": settings,
                "parameters": {name: _plain(getattr(model, name)) for name in model.fields},
                "pairs": pairs, "history": model.history}
    if getattr(model, "hyper", None):
        document["prior"] = {field: list(hyper) for field, hyper in model.hyper.items()}
    fit = getattr(model, "feature_fit", None)
    if fit:
        features: dict[str, Any] = {"names": list(fit["names"]), "mean": _plain(fit["mean"]),
                                    "scale": _plain(fit["scale"]), "weights": _plain(fit["weights"]),
                                    "kappa": fit["kappa"], "l2": model.l2}
        if fit.get("hashed"):
            features.update(hashed=list(fit["hashed"]), buckets=int(fit["buckets"]))
        if fit.get("structure"):   # the prior structure's features, read again from each log scored
            features["structure"] = fit["structure"]
        if fit.get("sigma", {}).get("weights") is not None:   # satisfaction's own regression
            features["sigma"] = {"weights": _plain(fit["sigma"]["weights"]), "kappa": fit["sigma"]["kappa"]}
        document["features"] = features
    if getattr(model, "posterior", None):
        document["posterior"] = {field: {"a": _plain(a), "b": _plain(b)} for field, (a, b) in model.posterior.items()}
    if hasattr(model, "models"):   # a mixture: its components, each a whole model document
        document["components"] = [model_document(component) for component in model.models]
    return document


def save_model(model: ClickModel, path: str | os.PathLike[str]) -> None:
    """Write a fitted model as JSON."""
    from rankwise.data.atomic import write_text

    write_text(path, json.dumps(model_document(model)))


def load_model(path: str | os.PathLike[str]) -> ClickModel:
    """A model written by ``save_model`` (or ``rankwise clicks fit -o``)."""
    document = read_json(path)
    return model_from_document(document, str(path))


def _checked(value: Any, name: str, shape: tuple[int | None, ...] | None, path: str) -> np.ndarray:
    """A saved parameter as an array of finite numbers of the declared shape, in [0, 1] unless
    it is a label."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"expected numbers, got {str(value)[:60]}", source=path, field=name) from None
    if shape is not None and (array.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(array.shape, shape, strict=True))):
        want_text = "a number" if not shape else "x".join("N" if n is None else str(n) for n in shape) + " numbers"
        raise InputError(f"expected {want_text}, got shape {array.shape}", source=path, field=name)
    bad = ~np.isfinite(array) if name in NOT_PROBABILITIES else ~((array >= 0) & (array <= 1))
    if bad.any():
        what = "finite numbers" if name in NOT_PROBABILITIES else "probabilities in [0, 1]"
        raise InputError(f"expected {what}, got {float(array[bad].ravel()[0])}", source=path, field=name)
    return array


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON file (a saved model, an ULTRA parameter file), its errors naming file and line."""
    from rankwise.data.documents import read_document

    return read_document(path)   # repeated keys, deep nesting, bad UTF-8 or JSON: errors naming file and line


def model_from_document(document: Any, path: str = "<model>") -> ClickModel:
    """A model from the parsed JSON of ``save_model`` (``path`` names it in errors)."""
    from rankwise.clicks import MODELS

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        hint = " (an ULTRA parameter file: use clicks.from_ultra with relevance labels)" \
            if isinstance(document, dict) and "click_prob" in document else ""
        raise InputError(f"expected a {FORMAT!r} file{hint}", source=str(path), field="format")
    if document.get("version") != VERSION:
        raise InputError(f"unknown version {document.get('version')!r}; this rankwise reads version {VERSION}",
                         source=str(path), field="version")
    unknown = [key for key in document if key not in KEYS]
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r}; a saved model has {', '.join(KEYS)}", source=str(path),
                         field=str(unknown[0]))
    kind = document.get("model")
    if not isinstance(kind, str) or kind not in MODELS:
        raise InputError(f"unknown model {kind!r}; expected one of {', '.join(MODELS.names())}", source=str(path),
                         field="model")
    declared = MODELS.get(kind)
    settings = document.get("settings", {})
    if not isinstance(settings, dict):
        raise InputError("expected an object of settings", source=str(path), field="settings")
    try:
        values = declared.resolve(settings)
    except ParameterError as error:
        raise InputError(str(error), source=str(path), field="settings") from None
    model = declared.build(values)
    pairs = document.get("pairs")
    if not isinstance(pairs, dict) or not all(isinstance(pairs.get(k), list) for k in ("query", "doc")) \
            or len(pairs["query"]) != len(pairs["doc"]):
        raise InputError("expected pairs with lists 'query' and 'doc' of one length", source=str(path), field="pairs")
    extra = [column for column in pairs if column not in ("query", "doc", *model.pair_fields)]
    if extra:
        raise InputError(f"unknown pair column {extra[0]!r}; a {kind} model's pairs have "
                         f"{', '.join(('query', 'doc', *model.pair_fields))}", source=str(path), field=str(extra[0]))
    query_ids, query = np.unique(np.asarray(pairs["query"], dtype=str), return_inverse=True)
    doc_ids, doc = np.unique(np.asarray(pairs["doc"], dtype=str), return_inverse=True)
    order = np.lexsort((doc, query))     # the pair numbering of ClickLog: by query code, then document code
    if len(order) != len(distinct(query.astype(np.int64) * max(len(doc_ids), 1) + doc)):
        raise InputError("a (query, document) pair is listed twice", source=str(path), field="pairs")
    model.query_ids, model.doc_ids = query_ids.tolist(), doc_ids.tolist()
    model.pair_query, model.pair_doc = query.astype(np.int64)[order], doc.astype(np.int64)[order]
    for column, attribute in model.pair_fields.items():
        if column not in pairs or not isinstance(pairs[column], list) or len(pairs[column]) != len(order):
            raise InputError(f"pairs need {len(order)} values of {column!r}", source=str(path), field=column)
        setattr(model, attribute, _checked(pairs[column], column, (len(order),), str(path))[order])
    parameters = document.get("parameters", {})
    if isinstance(parameters, dict):
        extra = [name for name in parameters if name not in model.fields]
        if extra:
            raise InputError(f"unknown parameter {extra[0]!r}; a {kind} model has {', '.join(model.fields) or 'none'}",
                             source=str(path), field=str(extra[0]))
    depth: tuple[str, int] | None = None   # every per-rank parameter covers the same ranks
    for name in model.fields:
        if not isinstance(parameters, dict) or name not in parameters:
            raise InputError(f"missing parameter {name!r}", source=str(path), field=name)
        shape = model.fields[name]   # declared by the model's class
        value = _checked(parameters[name], name, shape, str(path))
        if shape is not None and shape and all(n is None for n in shape):
            if len(shape) == 2 and value.shape[0] != value.shape[1]:
                raise InputError(f"expected a square matrix (ranks x ranks), got shape {value.shape}",
                                 source=str(path), field=name)
            if depth is not None and value.shape[0] != depth[1] and kind != "mixture":
                raise InputError(f"expected {depth[1]} values (one per rank, as {depth[0]!r}), got {value.shape[0]}",
                                 source=str(path), field=name)
            depth = depth or (name, int(value.shape[0]))
        setattr(model, name, value if value.ndim else float(value))
    if depth is not None and kind not in ("mixture", "label-rank"):
        model.saved_ranks = depth[1]
    model.history = document.get("history", [])
    model.hyper = _fitted_prior(document.get("prior", {}), set(model.pair_fields.values()), str(path))
    model.posterior = _posterior(document.get("posterior", {}), set(model.pair_fields.values()), order, str(path))
    if "features" in document:
        model.feature_fit, model.l2 = _feature_fit(document["features"], str(path))
        model.structured_by = model.feature_fit.get("structure")
        if not model.feature_fit["names"]:   # hashed ids only: the model can score unseen pairs as it is
            model.use_features(l2=model.l2)
    if kind == "mixture":
        _mixture_components(model, document.get("components"), str(path))
    return model


def _mixture_components(model: Any, saved: Any, path: str) -> None:
    """A mixture's components from their documents: one per weight, weights summing to 1."""
    weights = np.asarray(model.weights)
    if not isinstance(saved, list) or len(saved) != len(weights):
        raise InputError(f"a mixture needs {len(weights)} component documents, one per weight", source=path,
                         field="components")
    if not abs(float(weights.sum()) - 1) < 1e-9:
        raise InputError(f"mixture weights must sum to 1, got {float(weights.sum())}", source=path, field="weights")
    components = [model_from_document(part, f"{path} (component {k})") for k, part in enumerate(saved)]
    if any(c.name == "mixture" for c in components):
        raise InputError("a mixture's components are click models, not mixtures", source=path, field="components")
    model.models = components
    model.components = "+".join(c.name for c in components)


def _feature_fit(saved: Any, path: str) -> tuple[dict[str, Any], float]:
    """A feature model's fit: names, standardisation, the hashed ids and their buckets,
    weights (one per name, one per bucket of each hashed id, and an intercept), a positive
    concentration and a non-negative L2 penalty."""
    from rankwise.clicks.features import HASHABLE

    def numbers(key: str, length: int) -> np.ndarray:
        return numbers_of(saved, key, length, path)

    if not isinstance(saved, dict) or not isinstance(saved.get("names"), list):
        raise InputError("expected an object with the feature names", source=path, field="features")
    hashed, buckets = saved.get("hashed", []), saved.get("buckets", 0)
    if not isinstance(hashed, list) or not set(hashed) <= set(HASHABLE) or len(set(hashed)) != len(hashed) or (
            hashed and not (isinstance(buckets, int) and 1 <= buckets <= 2**24)):
        raise InputError(f"expected hashed ids among {', '.join(HASHABLE)} and 1 to 2^24 buckets", source=path,
                         field="features")
    if not saved["names"] and not hashed:
        raise InputError("expected feature names or hashed ids", source=path, field="features")
    width = len(saved["names"])
    columns = width + len(hashed) * (buckets if hashed else 0)
    scale = numbers("scale", width)
    fit: dict[str, Any] = {"names": [str(n) for n in saved["names"]], "mean": numbers("mean", width), "scale": scale,
                           "weights": numbers("weights", columns + 1)}
    if hashed:
        fit.update(hashed=list(hashed), buckets=buckets)
    kappa, l2 = saved.get("kappa"), saved.get("l2")
    if not isinstance(kappa, (int, float)) or not 0 < kappa < np.inf or bool((scale <= 0).any()):
        raise InputError("expected a positive concentration and positive scales", source=path, field="features")
    if not isinstance(l2, (int, float)) or not 0 <= l2 < np.inf:
        raise InputError("expected a non-negative l2", source=path, field="features")
    fit["kappa"] = float(kappa)
    structure = saved.get("structure")
    if structure is not None:
        from rankwise.clicks.structure import PRIOR_STRUCTURES
        from rankwise.errors import ParameterError

        try:
            known = isinstance(structure, str) and bool(PRIOR_STRUCTURES.parse(structure)[0].fields)
        except ParameterError:
            known = False
        if not known:
            raise InputError(f"unknown prior structure {structure!r}; expected one with features: "
                             f"{', '.join(s.name for s in PRIOR_STRUCTURES.values() if s.fields)}", source=path,
                             field="features")
        fit["structure"] = structure
    if "sigma" in saved:   # satisfaction's own weights and concentration over the same features
        sigma = saved["sigma"]
        if not isinstance(sigma, dict) or not isinstance(sigma.get("kappa"), (int, float)) \
                or not 0 < sigma["kappa"] < np.inf:
            raise InputError("expected satisfaction's weights and a positive concentration", source=path,
                             field="features")
        fit["sigma"] = {"weights": numbers_of(sigma, "weights", columns + 1, path), "kappa": float(sigma["kappa"])}
    return fit, float(l2)


def numbers_of(saved: Any, key: str, length: int, path: str) -> np.ndarray:
    """``saved[key]`` as ``length`` finite numbers (a feature fit's means, scales, weights)."""
    try:
        array = np.asarray(saved[key], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise InputError(f"expected numbers for features.{key}", source=path, field="features") from None
    if array.shape != (length,) or not np.isfinite(array).all():
        raise InputError(f"expected {length} finite numbers for features.{key}", source=path, field="features")
    return array


def _posterior(saved: Any, fields: set[str], order: np.ndarray, path: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each pair parameter's posterior Beta (a, b) per pair: positive finite, one per pair."""
    if not isinstance(saved, dict):
        raise InputError("expected an object of posterior Betas per pair parameter", source=path, field="posterior")
    out = {}
    for field, beta in saved.items():
        if field not in fields or not isinstance(beta, dict) or set(beta) != {"a", "b"}:
            raise InputError(f"expected {{'a': [...], 'b': [...]}} for one of {', '.join(sorted(fields))}, got "
                             f"{field!r}", source=path, field="posterior")
        arrays = []
        for key in ("a", "b"):
            try:
                array = np.asarray(beta[key], dtype=np.float64)
            except (TypeError, ValueError):
                raise InputError(f"expected numbers for {field}.{key}", source=path, field="posterior") from None
            if array.shape != (len(order),) or not (np.isfinite(array) & (array > 0)).all():
                raise InputError(f"expected {len(order)} positive finite numbers for {field}.{key}", source=path,
                                 field="posterior")
            arrays.append(array[order])
        out[field] = (arrays[0], arrays[1])
    return out


def _fitted_prior(saved: Any, fields: set[str], path: str) -> dict[str, tuple[float, float]]:
    """The fitted Beta (a, b) per pair parameter: positive finite numbers, known fields."""
    if not isinstance(saved, dict):
        raise InputError("expected an object of Beta (a, b) per pair parameter", source=path, field="prior")
    out = {}
    for field, hyper in saved.items():
        if field not in fields:
            raise InputError(f"unknown pair parameter {field!r}; expected one of {', '.join(sorted(fields))}",
                             source=path, field="prior")
        try:
            a, b = (float(v) for v in hyper)
        except (TypeError, ValueError):
            raise InputError(f"expected two numbers (a, b) for {field!r}, got {hyper!r}", source=path,
                             field="prior") from None
        if not (0 < a < np.inf and 0 < b < np.inf):
            raise InputError(f"expected positive finite (a, b) for {field!r}, got {hyper!r}", source=path,
                             field="prior")
        out[field] = (a, b)
    return out
