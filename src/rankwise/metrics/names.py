"""Metric names: trec_eval (``ndcg_cut.10``, ``P_5``), ranx (``ndcg@10``, ``map@100``) and
ir_measures (``nDCG@10``, ``AP``, ``RR@10``) spellings all parse to one MetricSpec."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from rankwise.errors import RankwiseError, UnknownMetricError
from rankwise.metrics.registry import BY_NAME, FAMILIES, NICKNAMES, Family


class MetricParameterError(RankwiseError, ValueError):
    """A metric parameter that cannot be read (bad cut-off, malformed pair)."""


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: its family, parameter values, and the name the user wrote.

    >>> spec = parse_metric("ndcg@10")
    >>> spec.family, spec.values, spec.columns()
    ('ndcg_cut', (10,), ['ndcg_cut_10'])
    """

    family: str
    values: tuple
    printable: str | None
    label: str
    rel: int | None = None
    """A relevance level of this metric alone (ir_measures' ``rel=``), else the conventions'."""
    conventions: tuple = ()
    """Conventions of this metric alone, as sorted (name, value) pairs (``nDCG(ties=expected)@10``)."""

    @property
    def definition(self) -> Family:
        return BY_NAME[self.family]

    def columns(self) -> list[str]:
        return self.definition.columns(self.values, self.printable)


def _atol(text: str) -> int:
    m = re.match(r"\s*[+-]?\d+", text)
    if not m:
        raise MetricParameterError(f"expected an integer cut-off, got {text!r}")
    return int(m.group())


def _atof(text: str) -> float:
    m = re.match(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text)
    if not m:
        raise MetricParameterError(f"expected a number, got {text!r}")
    return float(m.group())


def parse_params(family: Family, text: str) -> tuple:
    """Read a trec_eval parameter string for ``family`` (``5,10`` or ``1=3,2=9``).

    >>> parse_params(BY_NAME["P"], "10,5")
    (5, 10)
    """
    parts = text.split(",")
    if family.params == "cut_long":
        values = sorted(_atol(p) for p in parts)
        if values[0] <= 0:
            raise MetricParameterError(f"{family.name}: cut-offs must be positive, got {text!r}")
        if len(set(values)) != len(values):
            raise MetricParameterError(f"{family.name}: duplicate cut-offs in {text!r}")
        return tuple(values)
    if family.params == "cut_double":
        dvalues = sorted(_atof(p) for p in parts)
        if len(set(dvalues)) != len(dvalues):
            raise MetricParameterError(f"{family.name}: duplicate cut-offs in {text!r}")
        return tuple(dvalues)
    if family.params == "double":
        return tuple(_atof(p) for p in parts)
    if family.params == "pairs":
        pairs = []
        for p in parts:
            if p.count("=") != 1 or not p.split("=")[0]:
                raise MetricParameterError(f"{family.name}: expected name=value pairs, got {text!r}")
            key, value = p.split("=")
            pairs.append((key, _atof(value)))
        return tuple(pairs)
    raise MetricParameterError(f"{family.name} takes no parameters, got {text!r}")


_AT_ALIASES = {
    "ndcg": "ndcg_cut", "ndcg_cut": "ndcg_cut", "map": "map_cut", "ap": "map_cut", "map_cut": "map_cut",
    "p": "P", "precision": "P", "r": "recall", "recall": "recall", "mrr": "RR_cut", "rr": "RR_cut",
    "recip_rank": "RR_cut", "success": "success", "hit_rate": "success", "hitrate": "success",
    "hits": "hits", "judged": "judged", "dcg": "dcg_cut", "relative_p": "relative_P",
    "unj": "unj", "iprec_at_recall": "iprec_at_recall", "ndcg_burges": "ndcg_exp_cut",
    "ndcg_exp": "ndcg_exp_cut", "f1": "F1", "ap_min": "AP_min", "map_min": "AP_min",
    "ap_ret": "AP_ret", "map_ret": "AP_ret", "mar": "AR",
    "ar": "AR", "arhr": "ARHR", "cg": "CG", "err": "ERR",
}
_PLAIN_ALIASES = {
    "ndcg": "ndcg", "map": "map", "ap": "map", "mrr": "recip_rank", "rr": "recip_rank",
    "recip_rank": "recip_rank", "rprec": "Rprec", "r_precision": "Rprec", "r-prec": "Rprec", "r-precision": "Rprec",
    "rprec_mult": "Rprec_mult", "bpref": "bpref", "infap": "infAP", "gm_map": "gm_map",
    "gmap": "gm_map", "gm_bpref": "gm_bpref", "numret": "num_ret", "num_ret": "num_ret",
    "numrel": "num_rel", "num_rel": "num_rel", "numq": "num_q", "num_q": "num_q",
    "numrelret": "num_rel_ret", "num_rel_ret": "num_rel_ret",
    "rbp": "rbp", "rbp_resid": "rbp_resid", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "g": "G",
    "bing": "binG", "11pt_avg": "11pt_avg", "set_p": "set_P", "set_recall": "set_recall",
    "set_relative_p": "set_relative_P", "set_map": "set_map", "set_f": "set_F", "utility": "utility",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret", "relstring": "relstring",
    "setp": "set_P", "setr": "set_recall", "setf": "set_F", "setap": "set_map", "setrelp": "set_relative_P",
    "lag": "LAG", "fcp": "FCP", "auc": "AUC", "roc_auc": "AUC",
}


def known_names() -> list[str]:
    """Every spelling the parser knows, for suggestions and ``rankwise metrics``."""
    names = {f.name for f in FAMILIES}
    names |= {f"{a}@10" for a in _AT_ALIASES}
    names |= {a for a, v in _PLAIN_ALIASES.items() if v}
    names |= set(NICKNAMES)
    return sorted(names)


def _unknown(name: str) -> UnknownMetricError:
    lowered = {n.lower(): n for n in known_names()}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)
    return UnknownMetricError(name, [lowered[c] for c in close])


ES_METRICS = {"precision": "es_precision", "recall": "es_recall", "mean_reciprocal_rank": "es_mean_reciprocal_rank",
              "dcg": "es_dcg", "expected_reciprocal_rank": "es_expected_reciprocal_rank"}
ES_PARAMETERS = {
    "es_precision": ("k", "relevant_rating_threshold", "ignore_unlabeled"),
    "es_recall": ("k", "relevant_rating_threshold"),
    "es_mean_reciprocal_rank": ("k", "relevant_rating_threshold"),
    "es_dcg": ("k", "normalize", "unknown_doc_rating"),
    "es_expected_reciprocal_rank": ("k", "maximum_relevance", "unknown_doc_rating"),
}


def parse_elasticsearch(metric: dict | str) -> MetricSpec:
    """An Elasticsearch rank_eval metric object, as a dict or its JSON text.

    >>> s = parse_elasticsearch({"dcg": {"k": 10, "normalize": True}})
    >>> s.family, s.values
    ('es_dcg', (('k', 10.0), ('normalize', 1.0)))
    """
    import json

    label = metric if isinstance(metric, str) else json.dumps(metric, sort_keys=True)
    obj = json.loads(metric) if isinstance(metric, str) else metric
    if not isinstance(obj, dict) or len(obj) != 1:
        raise MetricParameterError(f"{label}: expected one Elasticsearch metric, e.g. {{\"dcg\": {{\"k\": 10}}}}")
    (kind, params), = obj.items()
    family = ES_METRICS.get(kind)
    if family is None:
        raise MetricParameterError(f"{label}: unknown Elasticsearch metric {kind!r}; expected one of "
                                   f"{', '.join(ES_METRICS)}")
    params = params or {}
    unknown = set(params) - set(ES_PARAMETERS[family])
    if unknown:
        raise MetricParameterError(f"{label}: unknown parameter(s) {', '.join(sorted(unknown))} of {kind}; "
                                   f"expected {', '.join(ES_PARAMETERS[family])}")
    if family == "es_expected_reciprocal_rank" and "maximum_relevance" not in params:
        raise MetricParameterError(f"{label}: expected_reciprocal_rank needs maximum_relevance")
    values = tuple((key, float(params[key])) for key in ES_PARAMETERS[family] if key in params
                   and params[key] is not None)
    printable = ",".join(f"{k}={params[k]}" for k in ES_PARAMETERS[family] if k in params) or None
    return MetricSpec(family, values, printable, label)


def parse_metric(name: str | dict) -> MetricSpec:
    """Parse one metric name in any supported spelling.

    >>> [parse_metric(n).columns()[0] for n in ["ndcg@10", "nDCG@10", "ndcg_cut.10", "ndcg_cut_10"]]
    ['ndcg_cut_10', 'ndcg_cut_10', 'ndcg_cut_10', 'ndcg_cut_10']
    >>> parse_metric("P.5,10").columns()
    ['P_5', 'P_10']
    >>> parse_metric("IPrec@0.5").columns(), parse_metric("SetF").columns()
    (['iprec_at_recall_0.50'], ['set_F'])
    """
    if isinstance(name, dict) or name.lstrip().startswith("{"):
        return parse_elasticsearch(name)
    text = name.strip()
    if not text:
        raise _unknown(name)
    m = re.fullmatch(r"([A-Za-z_0-9]+)\((.*)\)(@\d*\.?\d+)?", text)
    if m:
        return _parse_with_arguments(name, m.group(1), m.group(2), m.group(3))
    if "@" in text:
        base, _, k = text.partition("@")
        if base.lower() == "iprec" and re.fullmatch(r"\d*\.?\d+", k):  # ir_measures: IPrec@0.5
            fam = BY_NAME["iprec_at_recall"]
            return MetricSpec(fam.name, parse_params(fam, k), None, name)
        family = _AT_ALIASES.get(base.lower())
        if family is None or not re.fullmatch(r"\d+", k):
            raise _unknown(name)
        if int(k) <= 0:
            raise MetricParameterError(f"{name}: the cut-off must be positive")
        return MetricSpec(family, (int(k),), None, name)
    if text in BY_NAME and BY_NAME[text].trec:
        fam = BY_NAME[text]
        return MetricSpec(fam.name, fam.default, None, name)
    if "." in text:
        base, _, params = text.partition(".")
        fam = BY_NAME.get(base) or BY_NAME.get(_PLAIN_ALIASES.get(base.lower()) or "")
        if fam is not None:
            if fam.name == "rbp" and re.fullmatch(r"\d+", params):  # ranx: rbp.95 -> p = 0.95
                p = float("0." + params)
                return MetricSpec("rbp", (("p", p),), f"p={p}", name)
            if fam.params == "none":
                raise MetricParameterError(f"{name}: {fam.name} takes no parameters")
            return MetricSpec(fam.name, parse_params(fam, params), params, name)
    m = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", text)
    if m and m.group(1) in BY_NAME and BY_NAME[m.group(1)].params.startswith("cut"):
        fam = BY_NAME[m.group(1)]
        return MetricSpec(fam.name, parse_params(fam, m.group(2)), None, name)
    alias = _PLAIN_ALIASES.get(text.lower())
    if alias:
        fam = BY_NAME[alias]
        return MetricSpec(fam.name, fam.default, None, name)
    raise _unknown(name)


_GAIN_SWITCH = {"ndcg_cut": "ndcg_exp_cut", "ndcg": "ndcg_exp_cut"}


def _parse_with_arguments(name: str, base: str, arguments: str, cut: str | None) -> MetricSpec:
    """ir_measures' ``Name(key=value, ...)@k``: ``rel`` (relevance level of this metric),
    ``dcg`` (``log2`` linear gain, ``exp-log2`` exponential gain) and ``p`` (RBP persistence).

    >>> s = parse_metric("P(rel=2)@5"); (s.family, s.values, s.rel)
    ('P', (5,), 2)
    >>> parse_metric("nDCG(dcg='exp-log2')@10").family
    'ndcg_exp_cut'
    >>> parse_metric("RBP(p=0.8)").values
    (('p', 0.8),)
    >>> s = parse_metric("NumRet(rel=2)"); (s.family, s.rel)
    ('num_rel_ret', 2)
    >>> parse_metric("IPrec(rel=2)@0.1").columns()
    ['iprec_at_recall_0.10']
    """
    args: dict[str, str] = {}
    for part in filter(None, (a.strip() for a in arguments.split(","))):
        if "=" not in part:
            raise MetricParameterError(f"{name}: expected key=value arguments, got {part!r}")
        key, value = (x.strip() for x in part.split("=", 1))
        args[key.lower()] = value.strip("'\"")
    inner = base + (cut or "")
    if base.lower() == "rbp":
        p = float(args.pop("p", "0.9"))
        spec = MetricSpec("rbp", (("p", p),), f"p={p:g}", name)
    else:
        plain = parse_metric(inner)
        spec = MetricSpec(plain.family, plain.values, plain.printable, name)
    rel = None
    if "rel" in args:
        try:
            rel = int(args.pop("rel"))
        except ValueError:
            raise MetricParameterError(f"{name}: rel must be an integer") from None
        if spec.family == "num_ret":  # ir_measures: NumRet(rel=k) counts retrieved documents with label >= k
            spec = MetricSpec("num_rel_ret", (), None, name)
    overrides = _convention_arguments(name, args)
    gain = args.pop("dcg", args.pop("gain", None))
    family = spec.family
    if gain is not None:
        if gain in ("exp-log2", "exp"):
            if family not in _GAIN_SWITCH:
                raise MetricParameterError(f"{name}: dcg= applies to nDCG only")
            family = _GAIN_SWITCH[family]
            values = spec.values if family == spec.family or spec.family == "ndcg_cut" else (10**9,)
            spec = MetricSpec(family, values, None, name)
        elif gain not in ("log2", "linear"):
            raise MetricParameterError(f"{name}: dcg must be 'log2' or 'exp-log2', got {gain!r}")
    if args:
        raise MetricParameterError(f"{name}: unknown argument(s) {', '.join(sorted(args))}; expected rel, dcg, p "
                                   f"or a convention ({', '.join(_CONVENTION_ARGS)})")
    return MetricSpec(spec.family, spec.values, spec.printable, name, rel, overrides)


_CONVENTION_ARGS = ("ties", "gains", "universe", "retrieved", "judged_only", "depth", "score_precision")


def _convention_arguments(name: str, args: dict[str, str]) -> tuple:
    """Pop the arguments that set a convention for this metric alone, checked and typed.

    >>> _convention_arguments("P(ties=input,depth=5)@3", {"ties": "input", "depth": "5"})
    (('depth', 5), ('ties', 'input'))
    """
    from rankwise.engine.conventions import Conventions

    out: dict[str, object] = {}
    for key in [k for k in args if k in _CONVENTION_ARGS]:
        value: object = args.pop(key)
        if key == "depth":
            value = None if value in ("all", "None") else _atol(str(value))
        elif key == "judged_only":
            if str(value).lower() not in ("true", "false", "1", "0"):
                raise MetricParameterError(f"{name}: judged_only must be true or false, got {value!r}")
            value = str(value).lower() in ("true", "1")
        out[key] = value
    try:
        Conventions(**out)  # type: ignore[arg-type]
    except RankwiseError as err:
        raise MetricParameterError(f"{name}: {err}") from None
    return tuple(sorted(out.items()))


_CANONICAL = {
    "P": "P", "recall": "R", "map": "AP", "map_cut": "AP", "ndcg": "nDCG", "ndcg_cut": "nDCG",
    "recip_rank": "RR", "RR_cut": "RR", "Rprec": "Rprec", "bpref": "Bpref", "success": "Success",
    "judged": "Judged", "infAP": "infAP", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet",
    "iprec_at_recall": "IPrec", "rbp": "RBP", "ERR": "ERR", "ndcg_exp_cut": "nDCG", "set_P": "SetP",
    "set_recall": "SetR", "set_F": "SetF", "set_relative_P": "SetRelP", "set_map": "SetAP", "hits": "Hits",
    "dcg_cut": "DCG", "F1": "F1", "AP_min": "AP_min", "AP_ret": "AP_ret", "AR": "AR", "ARHR": "ARHR",
    "CG": "CG", "AUC": "AUC", "LAG": "LAG", "FCP": "FCP", "unj": "Unj", "gm_map": "GMAP",
}


def canonical_name(spec: MetricSpec, column: str) -> str:
    """One unambiguous name per metric, in ir_measures' style where it has the measure
    (``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``, ``RBP(p=0.8)``), else the
    trec_eval or rankwise column name.

    >>> [canonical_name(parse_metric(n), parse_metric(n).columns()[0])
    ...  for n in ["ndcg_cut.10", "map", "P(rel=2)@5", "ndcg_burges@10", "rbp.95", "Rprec_mult"]]
    ['nDCG@10', 'AP', 'P(rel=2)@5', "nDCG(dcg='exp-log2')@10", 'RBP(p=0.95)', 'Rprec_mult_0.20']
    """
    base = _CANONICAL.get(spec.family)
    if base is None:
        return column
    args = []
    if spec.family == "ndcg_exp_cut":
        args.append("dcg='exp-log2'")
    if spec.family == "rbp":
        args.append(f"p={dict(spec.values).get('p', 0.9):g}")
    if spec.rel is not None:
        args.append(f"rel={spec.rel}")
    args += [f"{k}={v}" for k, v in spec.conventions]
    name = base + (f"({','.join(args)})" if args else "")
    if spec.definition.params == "cut_long":
        k = column.split("(")[0].rsplit("_", 1)[1]
        if int(k) < 10**9:  # a cut-off that keeps every document is no cut-off
            name += f"@{k}"
    elif spec.definition.params == "cut_double":
        name += f"@{column.split('(')[0].rsplit('_', 1)[1]}"
    return name
