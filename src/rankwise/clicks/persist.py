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
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.clicks.models import ClickModel
from rankwise.errors import InputError

FORMAT = "rankwise-click-model"


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def model_document(model: ClickModel) -> dict[str, Any]:
    """The JSON-ready description of a fitted model."""
    settings = {name: _plain(getattr(model, name)) for name in inspect.signature(type(model).__init__).parameters
                if name != "self" and hasattr(model, name)}
    pairs = {"query": np.asarray(model.query_ids, dtype=object)[model.pair_query].tolist(),
             "doc": np.asarray(model.doc_ids, dtype=object)[model.pair_doc].tolist()}
    pairs.update({column: _plain(getattr(model, attribute)) for column, attribute in model.pair_fields.items()})
    return {"format": FORMAT, "version": 1, "model": model.name, "settings": settings,
            "parameters": {name: _plain(getattr(model, name)) for name in model.fields},
            "pairs": pairs, "history": model.history}


def save_model(model: ClickModel, path: str | os.PathLike[str]) -> None:
    """Write a fitted model as JSON."""
    Path(path).write_text(json.dumps(model_document(model)))


def load_model(path: str | os.PathLike[str]) -> ClickModel:
    """A model written by ``save_model`` (or ``rankwise clicks fit -o``)."""
    try:
        document = json.loads(Path(path).read_text())
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", source=str(path), line=error.lineno) from None
    return model_from_document(document, str(path))


def model_from_document(document: Any, path: str = "<model>") -> ClickModel:
    """A model from the parsed JSON of ``save_model`` (``path`` names it in errors)."""
    from rankwise.clicks import MODELS

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        hint = " (an ULTRA parameter file: use clicks.from_ultra with relevance labels)" \
            if isinstance(document, dict) and "click_prob" in document else ""
        raise InputError(f"expected a {FORMAT!r} file{hint}", source=str(path), field="format")
    kind = document.get("model")
    if kind not in MODELS:
        raise InputError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}", source=str(path),
                         field="model")
    settings = document.get("settings", {})
    if "prior" in settings:
        settings["prior"] = tuple(settings["prior"])
    model = MODELS[kind](**settings)
    pairs = document["pairs"]
    query_ids, query = np.unique(np.asarray(pairs["query"], dtype=str), return_inverse=True)
    doc_ids, doc = np.unique(np.asarray(pairs["doc"], dtype=str), return_inverse=True)
    order = np.lexsort((doc, query))     # the pair numbering of ClickLog: by query code, then document code
    model.query_ids, model.doc_ids = query_ids.tolist(), doc_ids.tolist()
    model.pair_query, model.pair_doc = query.astype(np.int64)[order], doc.astype(np.int64)[order]
    for column, attribute in model.pair_fields.items():
        if column not in pairs or len(pairs[column]) != len(order):
            raise InputError(f"pairs need {len(order)} values of {column!r}", source=str(path), field=column)
        setattr(model, attribute, np.asarray(pairs[column], dtype=np.float64)[order])
    for name in model.fields:
        if name not in document.get("parameters", {}):
            raise InputError(f"missing parameter {name!r}", source=str(path), field=name)
        value = document["parameters"][name]
        setattr(model, name, np.asarray(value, dtype=np.float64) if isinstance(value, list) else value)
    model.history = document.get("history", [])
    return model
