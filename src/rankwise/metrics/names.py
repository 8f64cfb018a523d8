"""Metric names: trec_eval (``ndcg_cut.10``, ``P_5``), ranx (``ndcg@10``, ``map@100``),
ir_measures (``nDCG@10``, ``AP``, ``RBP(p=0.8)``) and Elasticsearch (``{"dcg": {"k": 10}}``)
spellings all parse to one MetricSpec. Every spelling comes from the families' own declarations
(``rankwise.metrics.spellings``, generated from them)."""

from __future__ import annotations

import re
from typing import Any

from rankwise.errors import RankwiseError, UnknownMetricError
from rankwise.metrics import spellings
from rankwise.metrics.family import ALL, Family, MetricParameterError, MetricSpec
from rankwise.metrics.registry import BY_NAME, ORDER, FamiliesByName, nicknames

__all__ = ["MetricParameterError", "MetricSpec", "canonical_name", "parse_metric", "parse_params"]


_PLAIN = FamiliesByName(spellings.PLAIN)
"""Spellings without a cut-off (lower case) -> family."""
_AT = FamiliesByName(spellings.AT)
"""Spellings taking ``@k`` (lower case) -> family."""
_ES = FamiliesByName(spellings.ES)
"""Elasticsearch rank_eval metric names -> family."""
_CONVENTION_ARGS = ("ties", "gains", "universe", "retrieved", "judged_only", "depth", "score_precision",
                    "zero_division")


LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
"""C's ``atol`` (``strtol``) clamps a number outside a 64-bit long to these, as trec_eval reads it."""


def _atol(text: str) -> int:
    """An integer as C's ``atol`` reads it: its leading digits, clamped to a 64-bit long (a
    cut-off beyond any list, ``ndcg_cut.10000000000000000000``, counts every document).

    >>> _atol("10abc"), _atol("10000000000000000000")
    (10, 9223372036854775807)
    """
    m = re.match(r"\s*[+-]?\d+", text)
    if not m:
        raise MetricParameterError(f"expected an integer cut-off, got {text!r}")
    return min(max(int(m.group()), LONG_MIN), LONG_MAX)


def _takes_cutoff(spelling: str) -> bool:
    """Whether ``spelling`` is written with ``@k``.

    >>> _takes_cutoff("nDCG"), _takes_cutoff("bpref"), _takes_cutoff("num_q")
    (True, False, False)
    """
    return spelling.lower() in {str(n).lower() for n in _AT}


def _atof(text: str) -> float:
    m = re.match(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text)
    if not m:
        raise MetricParameterError(f"expected a number, got {text!r}")
    return float(m.group())


def _stored(family: Family, name: str, value: Any) -> Any:
    """A converted parameter value as the (hashable) form a MetricSpec keeps."""
    param = family.param(name)
    if param is not None and param.type is dict and value is not None:
        return tuple(sorted(value.items()))
    return value


def parse_params(family: Family, text: str) -> tuple[tuple, tuple]:
    """Read trec_eval's parameter text of ``family`` (``5,10``, ``0.5`` or ``1=3,2=9``) into
    (cut-offs, parameters).

    >>> parse_params(BY_NAME["P"], "10,5")
    ((5, 10), ())
    >>> parse_params(BY_NAME["ndcg"], "1=3,2=9")
    ((), (('gains', ((1, 3.0), (2, 9.0))),))
    >>> parse_params(BY_NAME["set_F"], "0.5")
    ((), (('beta', 0.5),))
    """
    parts = text.split(",")
    if family.cutoff is not None:
        if family.cutoff.type is int:
            values: list = sorted(_atol(p) for p in parts)
            if values[0] <= 0:
                raise MetricParameterError(f"{family.name}: cut-offs must be positive, got {text!r}")
        else:
            values = sorted(_atof(p) for p in parts)
        if len(set(values)) != len(values):
            raise MetricParameterError(f"{family.name}: duplicate cut-offs in {text!r}")
        return tuple(values), ()
    if family.syntax == "positional":
        numbers = [_atof(p) for p in parts]
        if len(family.params) == 1 and family.params[0].type is tuple:
            return (), ((family.params[0].name, family.params[0].convert(numbers, family.name)),)
        if len(numbers) > len(family.params):
            raise MetricParameterError(f"{family.name}: takes at most {len(family.params)} value(s), got {text!r}")
        return (), tuple((p.name, p.convert(v, family.name)) for p, v in zip(family.params, numbers, strict=False))
    if family.syntax == "pairs":
        gains: dict[int, float] = {}
        named: dict[str, Any] = {}
        for p in parts:
            if p.count("=") != 1 or not p.split("=")[0]:
                raise MetricParameterError(f"{family.name}: expected name=value pairs, got {text!r}")
            key, value = p.split("=")
            param = family.param(key)
            if re.fullmatch(r"[+-]?\d+", key) and family.param("gains") is not None:
                gains[int(key)] = _atof(value)
            elif param is not None:
                named[key] = param.convert(_atof(value) if param.type in (int, float) else value, family.name)
            else:
                raise MetricParameterError(f"{family.name}: unknown parameter {key!r}; expected "
                                           f"{', '.join(p.name for p in family.params)}")
        if gains:
            named["gains"] = gains
        order = [p.name for p in family.params]
        return (), tuple((k, _stored(family, k, named[k])) for k in sorted(named, key=order.index))
    raise MetricParameterError(f"{family.name} takes no parameters, got {text!r}")


def known_names() -> list[str]:
    """Every spelling the parser knows, for suggestions and ``rankwise list metrics``."""
    names = set(ORDER) | set(_PLAIN) | {f"{a}@10" for a in _AT} | set(nicknames())
    return sorted(names)


def _unknown(name: str) -> UnknownMetricError:
    """The error for an unknown spelling, with suggestions that keep the user's cut-off and
    parameters: only the name before ``@``, ``(`` or ``.`` is corrected.

    >>> _unknown("recal@100").suggestions, _unknown("precison@5").suggestions
    (['recall@100'], ['precision@5'])
    >>> _unknown("ndgc@100").suggestions, _unknown("Rbpp(p=0.8)").suggestions
    (['ndcg@100'], ['rbp(p=0.8)'])
    """
    import difflib

    if _CHECKING:   # a suggestion being tried: its own failure needs no suggestions
        return UnknownMetricError(name, [])
    match = re.match(r"^([A-Za-z][\w\-]*?)((?:\(.*\))?(?:@.*)?)$", name.strip())
    if match is None or not match.group(2):
        lowered = {n.lower(): n for n in known_names()}
        close = difflib.get_close_matches(name.lower(), list(lowered), n=5, cutoff=0.5)
        return UnknownMetricError(name, [s for s in (lowered[c] for c in close) if s != name and _parses(s)][:3])
    base, rest = match.group(1), match.group(2)
    rest = _digits_for_lookalikes(rest)
    takes_cutoff = {str(n).lower(): str(n) for n in _AT}
    bases = takes_cutoff if "@" in rest else {**{str(n).lower(): str(n) for n in _PLAIN}, **takes_cutoff}
    from rankwise.params import closest

    close = closest(base.lower(), list(bases))[:3] or difflib.get_close_matches(base.lower(), list(bases), n=3,
                                                                               cutoff=0.5)
    return UnknownMetricError(name, [s for s in (bases[c] + rest for c in close) if s != name and _parses(s)])


_LOOKALIKES = str.maketrans({"O": "0", "o": "0", "l": "1", "I": "1", "i": "1", "S": "5", "s": "5", "B": "8",
                             "Z": "2", "z": "2"})
"""Letters a cut-off typed by hand holds where digits were meant (``@1O``, ``@l0``, ``@5O``)."""


def _digits_for_lookalikes(rest: str) -> str:
    """``rest`` (``(params)@cutoff``) with a cut-off that is digits and digit-like letters read
    as the digits it resembles.

    >>> _digits_for_lookalikes("@1O"), _digits_for_lookalikes("(p=0.8)@l0"), _digits_for_lookalikes("@abc")
    ('@10', '(p=0.8)@10', '@abc')
    """
    head, at, cutoff = rest.rpartition("@")
    if at and re.fullmatch(r"[0-9OolIiSsBZz,]+", cutoff):
        return f"{head}@{cutoff.translate(_LOOKALIKES)}"
    return rest


_CHECKING: list[bool] = []
"""Non-empty while a suggestion is being tried (``_parses``)."""


def _parses(spelling: str) -> bool:
    """Whether a suggestion is a spelling the parser takes (a suggestion must evaluate)."""
    _CHECKING.append(True)
    try:
        parse_metric(spelling)
    except Exception:   # any refusal: the suggestion is not offered
        return False
    finally:
        _CHECKING.pop()
    return True


def parse_elasticsearch(metric: dict | str) -> MetricSpec:
    """An Elasticsearch rank_eval metric object, as a dict or its JSON text.

    The label is the metric re-serialised with every default filled in, as Elasticsearch
    writes it back (so ``{"dcg": {}}`` and ``{"dcg": {"k": 10}}`` are one column).

    >>> s = parse_elasticsearch({"dcg": {"k": 10, "normalize": True}})
    >>> s.name, s.params
    ('es_dcg', (('k', 10), ('normalize', True)))
    >>> parse_elasticsearch({"expected_reciprocal_rank": {"k": 5}}).label
    '{"expected_reciprocal_rank": {"k": 5, "maximum_relevance": 3}}'
    """
    import json

    from rankwise.data.documents import parse_json

    written = metric if isinstance(metric, str) else json.dumps(metric, sort_keys=True)
    # the document door: a key given twice, bad JSON and deep nesting are errors naming the metric
    obj = parse_json(metric, metric) if isinstance(metric, str) else metric
    label = written
    if not isinstance(obj, dict) or len(obj) != 1:
        raise MetricParameterError(f"{label}: expected one Elasticsearch metric, e.g. {{\"dcg\": {{\"k\": 10}}}}")
    (kind, params), = obj.items()
    if params is not None and not isinstance(params, dict):
        raise MetricParameterError(f"{label}: the parameters of {kind} are an object, e.g. {{\"k\": 10}}; got "
                                   f"{type(params).__name__}")
    family = _ES.get(kind)
    if family is None:
        raise MetricParameterError(f"{label}: unknown Elasticsearch metric {kind!r}; expected one of "
                                   f"{', '.join(_ES)}")
    params = params or {}
    allowed = [p.name for p in family.params]
    unknown = set(params) - set(allowed)
    if unknown:
        raise MetricParameterError(f"{label}: unknown parameter(s) {', '.join(sorted(unknown))} of {kind}; "
                                   f"expected {', '.join(allowed)}")
    for p in family.params:
        if p.required and params.get(p.name) is None:
            raise MetricParameterError(f"{label}: {kind} needs {p.name}")
    values = tuple((p.name, p.convert(params[p.name], label)) for p in family.params
                   if params.get(p.name) is not None)
    printable = ",".join(f"{k}={params[k]}" for k in allowed if k in params) or None
    given = dict(values)
    filled = {p.name: given.get(p.name, p.default) for p in family.params}
    label = json.dumps({kind: {k: v for k, v in filled.items() if v is not None}}, sort_keys=True)
    return MetricSpec(family, (), values, printable, label)


def _check_required(family: Family, values: tuple, name: str) -> None:
    """Refuse a metric that leaves a required parameter unset (``es_expected_reciprocal_rank``
    needs ``maximum_relevance``)."""
    given = dict(values)
    for p in family.params:
        if p.required and given.get(p.name) is None:
            raise MetricParameterError(f"{name}: {family.name} needs {p.name} ({family.name}.{p.name}=VALUE)")


def _default(family: Family, name: str) -> MetricSpec:
    _check_required(family, (), name)
    cutoffs = family.cutoff.default if family.cutoff is not None else ()
    return MetricSpec(family, cutoffs, (), None, name)


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
        family = _AT.get(base.lower())
        if family is None or family.cutoff is None or not re.fullmatch(r"\d*\.?\d+", k):
            raise _unknown(name)
        if family.cutoff.type is int and not k.isdigit():
            raise _unknown(name)
        cutoffs, _ = parse_params(family, k)
        if cutoffs[0] <= 0:
            raise MetricParameterError(f"{name}: the cut-off must be positive")
        return MetricSpec(family, cutoffs, (), None, name)
    if text in BY_NAME and BY_NAME[text].trec_eval:
        return _default(BY_NAME[text], name)
    if "." in text:
        base, _, params = text.partition(".")
        family = BY_NAME.get(base) or _PLAIN.get(base.lower())
        if family is not None:
            if family.digits_param and re.fullmatch(r"\d+", params):  # ranx: rbp.95 -> p = 0.95
                value = family.param(family.digits_param).convert("0." + params, name)  # type: ignore[union-attr]
                return MetricSpec(family, (), ((family.digits_param, value),), f"{family.digits_param}={value}", name)
            if family.cutoff is None and family.syntax == "none":
                raise MetricParameterError(f"{name}: {family.name} takes no parameters")
            cutoffs, values = parse_params(family, params)
            _check_required(family, values, name)
            return MetricSpec(family, cutoffs, values, None if family.cutoff else params, name)
    m = re.fullmatch(r"(.+?)_(\d+(?:\.\d+)?)", text)
    if m and m.group(1) in BY_NAME and BY_NAME[m.group(1)].cutoff is not None:
        family = BY_NAME[m.group(1)]
        return MetricSpec(family, parse_params(family, m.group(2))[0], (), None, name)
    if text.lower() in _PLAIN:
        return _default(_PLAIN[text.lower()], name)
    if text in BY_NAME:  # a family's own name (``es_dcg``): its defaults
        return _default(BY_NAME[text], name)
    raise _unknown(name)


def _parse_with_arguments(name: str, base: str, arguments: str, cut: str | None) -> MetricSpec:
    """ir_measures' ``Name(key=value, ...)@k``: ``rel`` (relevance level of this metric), the
    family's own parameters (``p`` of RBP, ``max_label`` of ERR ...), the arguments that select
    a variant (``dcg='exp-log2'``) and conventions for this metric alone (``ties=expected``).

    >>> s = parse_metric("P(rel=2)@5"); (s.name, s.cutoffs, s.rel)
    ('P', (5,), 2)
    >>> parse_metric("nDCG(dcg='exp-log2')@10").name
    'ndcg_exp_cut'
    >>> parse_metric("RBP(p=0.8)").params
    (('p', 0.8),)
    >>> s = parse_metric("NumRet(rel=2)"); (s.name, s.rel)
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
    spec = parse_metric(base + (cut or ""))
    family = spec.family
    for argument, value, target in family.variants:
        if argument in args and value in ("*", args[argument]):
            if value != "*":
                args.pop(argument)
            new = BY_NAME[target]
            cutoffs = spec.cutoffs if new.cutoff is not None and family.cutoff is not None else (
                (ALL,) if new.cutoff is not None else ())
            spec = MetricSpec(new, cutoffs, (), None, name)
            family = new
            break
    if args.get("dcg") in ("log2", "linear") and any(v[0] == "dcg" for v in family.variants):
        args.pop("dcg")
    rel = None
    if "rel" in args:
        try:
            rel = int(args.pop("rel"))
        except ValueError:
            raise MetricParameterError(f"{name}: rel must be an integer") from None
    overrides = _convention_arguments(name, args)
    values = dict(spec.params)
    grades = [k for k in args if re.fullmatch(r"[+-]?\d+", k)]
    if grades and family.param("gains") is not None:  # per-grade gains: ndcg(1=3,2=9), ndcg_signed(0=-1)@10
        values["gains"] = _stored(family, "gains", {int(k): _atof(str(args.pop(k))) for k in grades})
    for key in [k for k in args if family.param(k) is not None]:
        param = family.param(key)
        values[param.name] = _stored(family, param.name, param.convert(args.pop(key), name))  # type: ignore[union-attr]
    if args:
        if "dcg" in args:
            raise MetricParameterError(f"{name}: dcg= applies to nDCG and DCG only")
        expected = list(dict.fromkeys(["rel"] + [p.name for p in family.params] + list(_CONVENTION_ARGS)))
        base, k = re.split(r"[(@]", name, maxsplit=1)[0], str(args.get("k", "")).strip()
        hint = f" (a cut-off follows the name: {base}@{k})" if k.isdigit() and _takes_cutoff(base) else ""
        raise MetricParameterError(f"{name}: unknown argument(s) {', '.join(sorted(args))}; expected "
                                   f"{', '.join(expected)}{hint}")
    order = [p.name for p in family.params]
    params = tuple((k, values[k]) for k in sorted(values, key=order.index))
    printable = spec.printable if params == spec.params else (
        ",".join(f"{k}={v}" for k, v in params) if family.syntax != "none" else None)
    return MetricSpec(family, spec.cutoffs, params, printable, name, rel, overrides)


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


def _format(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value).lower() if isinstance(value, bool) else str(value)


def canonical_name(spec: MetricSpec, column: str) -> str:
    """One unambiguous name per metric, in ir_measures' style where it has the measure
    (``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``, ``RBP(p=0.8)``), else the
    trec_eval or rankwise column name.

    >>> [canonical_name(parse_metric(n), parse_metric(n).columns()[0])
    ...  for n in ["ndcg_cut.10", "map", "P(rel=2)@5", "ndcg_burges@10", "rbp.95", "Rprec_mult"]]
    ['nDCG@10', 'AP', 'P(rel=2)@5', "nDCG(dcg='exp-log2')@10", 'RBP(p=0.95)', 'Rprec_mult_0.20']
    """
    family = spec.family
    if family.canonical is None:
        return column
    args = list(family.canonical_args)
    given = spec.arguments()
    explicit = dict(spec.params)
    for p in family.params:
        if p.type is not dict and (p.name in explicit or p.in_name) and given[p.name] is not None:
            args.append(f"{p.name}={_format(given[p.name])}")
    if spec.rel is not None:
        args.append(f"rel={spec.rel}")
    args += [f"{k}={v}" for k, v in spec.conventions]
    name = family.canonical + (f"({','.join(args)})" if args else "")
    if family.cutoff is not None:
        k = column.split("(")[0].rsplit("_", 1)[1]
        if family.cutoff.type is not int or int(k) < ALL:  # a cut-off that keeps every document is no cut-off
            name += f"@{k}"
    return name
