"""Streaming text metrics: corpus BLEU (sacrebleu's), ROUGE-N / ROUGE-L (rouge-score's), WER and
CER (jiwer's) and token perplexity. The tokenisers and alignments are the reference libraries'
own (the ``text`` extra: sacrebleu, rouge-score, jiwer); rankwise keeps their sufficient
statistics as mergeable states: BLEU's n-gram match and total counts and lengths, ROUGE's sums of
per-pair scores, the edit counts of WER / CER, and the summed negative log-likelihood.

``predictions`` is a list of strings; ``references`` a list with one reference string, or a
list of reference strings, per prediction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.state import Metric, MetricInputError, mask_of


def _need(module: str, extra: str = "text") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise RankwiseError(f"this metric needs {module}: pip install 'rankwise[{extra}]'") from None


def _texts(metric: Metric, inputs: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    preds = inputs["predictions"]
    refs = inputs["references"]
    name = type(metric).__name__
    if isinstance(preds, str) or not all(isinstance(p, str) for p in preds):
        raise MetricInputError(f"{name}.update: predictions must be a list of strings")
    if len(refs) != len(preds):
        raise MetricInputError(f"{name}.update: {len(preds)} predictions but {len(refs)} references")
    per_item = [[r] if isinstance(r, str) else list(r) for r in refs]
    if not all(all(isinstance(x, str) for x in r) and r for r in per_item):
        raise MetricInputError(f"{name}.update: each reference must be a string or a non-empty list of strings")
    where = inputs.get("where")
    if where is not None:
        keep = mask_of(where, (len(preds),))
        assert keep is not None  # where was given
        preds = [p for p, k in zip(preds, keep, strict=True) if k]
        per_item = [r for r, k in zip(per_item, keep, strict=True) if k]
    return list(preds), per_item


class BLEU(Metric):
    """Corpus BLEU exactly as ``sacrebleu.corpus_bleu`` (same tokeniser, smoothing, effective
    order and signature): the state sums n-gram matches, n-gram totals, hypothesis and closest
    reference lengths over sentences, so chunks and processes merge exactly.

    ``scale`` is 100 (sacrebleu's) or 1; ``reference_length`` is the reference closest in
    length to each hypothesis (sacrebleu's) or the shortest (metrax's). ``BLEU.metrax()`` is
    metrax's ``BLEU``: whitespace tokens, no smoothing, the shortest reference, 0-1.

    >>> m = BLEU().update(predictions=["the cat sat on the mat"], targets=["the cat is on the mat"])
    >>> round(m.compute(), 2), m.signature()
    (37.99, 'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0')
    >>> m = BLEU.metrax().update(predictions=["the cat sat on the mat"], targets=["the cat is on the mat"])
    >>> round(m.compute(), 4)   # 4-gram precision 0 and no smoothing: 0
    0.0
    """

    inputs = ("predictions", "references")
    _raw_inputs = ("predictions", "references", "where")

    def __init__(self, tokenize: str = "13a", smooth_method: str = "exp", smooth_value: float | None = None,
                 lowercase: bool = False, max_ngram_order: int = 4, effective_order: bool = False,
                 scale: float = 100.0, reference_length: Literal["closest", "shortest"] = "closest") -> None:
        if reference_length not in ("closest", "shortest"):
            raise MetricInputError(f"reference_length={reference_length!r}: expected closest or shortest")
        if reference_length == "shortest" and tokenize != "none":
            raise MetricInputError("reference_length='shortest' counts whitespace tokens: use tokenize='none'")
        if not scale > 0:
            raise MetricInputError(f"scale must be positive, got {scale}")
        super().__init__(tokenize=tokenize, smooth_method=smooth_method, smooth_value=smooth_value,
                         lowercase=lowercase, max_ngram_order=max_ngram_order, effective_order=effective_order,
                         scale=float(scale), reference_length=reference_length)

    @classmethod
    def metrax(cls, max_ngram_order: int = 4) -> BLEU:
        """metrax's ``BLEU``: whitespace tokens, no smoothing, the shortest reference's length
        for the brevity penalty, on a 0-1 scale."""
        return cls(tokenize="none", smooth_method="none", max_ngram_order=max_ngram_order, scale=1.0,
                   reference_length="shortest")

    def _scorer(self) -> Any:
        bleu = _need("sacrebleu.metrics.bleu")
        return bleu.BLEU(**{k: v for k, v in self.params.items() if k not in ("scale", "reference_length")})

    def _initial_state(self) -> dict[str, Any]:
        return {"stats": np.zeros(2 + 2 * self.params["max_ngram_order"], dtype=np.int64),
                "nrefs": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        preds, refs = _texts(self, inputs)
        if not preds:
            return
        width = max(len(r) for r in refs)
        streams = [[r[i] if i < len(r) else None for r in refs] for i in range(width)]
        stats = np.asarray(self._scorer()._extract_corpus_statistics(preds, streams), dtype=np.int64)
        if self.params["reference_length"] == "shortest":   # metrax: the shortest reference's tokens
            case = str.lower if self.params["lowercase"] else str
            stats[:, 1] = [min(len(case(r).split()) for r in sentence) for sentence in refs]
        self.state["stats"] += stats.sum(axis=0)
        self.state["nrefs"] = np.maximum(self.state["nrefs"], width)

    def _merge(self, other: dict[str, Any]) -> None:
        self.state["stats"] = self.state["stats"] + other["stats"]
        self.state["nrefs"] = np.maximum(self.state["nrefs"], other["nrefs"])

    def score(self) -> Any:
        """sacrebleu's BLEUScore object (precisions, brevity penalty, lengths)."""
        return self._scorer()._compute_score_from_stats([int(x) for x in self.state["stats"]])

    def compute(self) -> float:
        return float(self.score().score) * self.params["scale"] / 100.0

    def signature(self) -> str:
        """sacrebleu's signature string (nrefs from the references seen), with the scale and the
        reference length when they are not sacrebleu's."""
        scorer = self._scorer()
        scorer.num_refs = int(self.state["nrefs"]) or 1  # what sacrebleu records after a corpus_score
        extra = "" if self.params["scale"] == 100.0 else f"|scale:{self.params['scale']:g}"
        extra += "" if self.params["reference_length"] == "closest" else "|ref:shortest"
        return str(scorer.get_signature()) + extra


class _UnicodeTokenizer:
    """Lowercase, split on non-word characters of any script (rouge-score's default drops every
    character outside a-z and 0-9)."""

    def tokenize(self, text: str) -> list[str]:
        return re.findall(r"\w+", text.lower(), flags=re.UNICODE)


class ROUGE(Metric):
    """ROUGE-N and ROUGE-L F-measure (``rouge_types``), each pair scored by rouge-score's
    ``RougeScorer`` (with several references, its ``score_multi``: the best one) and averaged
    over pairs. ``compute()`` gives F-measures; ``compute_all()`` precision, recall and F.
    ``tokenizer='unicode'`` keeps non-Latin words, which rouge-score's default tokeniser drops.

    >>> ROUGE(["rouge1"]).update(predictions=["the cat sat"], targets=["the cat is here"]).compute()
    {'rouge1': 0.5714285714285715}
    """

    inputs = ("predictions", "references")
    _raw_inputs = ("predictions", "references", "where")

    def __init__(self, rouge_types: Sequence[str] = ("rouge1", "rouge2", "rougeL"), use_stemmer: bool = False,
                 tokenizer: str = "default") -> None:
        if tokenizer not in ("default", "unicode"):
            raise RankwiseError(f"tokenizer {tokenizer!r}: expected default or unicode")
        super().__init__(rouge_types=tuple(rouge_types), use_stemmer=use_stemmer, tokenizer=tokenizer)

    def _initial_state(self) -> dict[str, Any]:
        return {"sums": np.zeros((len(self.params["rouge_types"]), 3)), "count": np.zeros((), dtype=np.int64)}

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        rouge_scorer = _need("rouge_score.rouge_scorer")
        preds, refs = _texts(self, inputs)
        tokenizer = _UnicodeTokenizer() if self.params["tokenizer"] == "unicode" else None
        scorer = rouge_scorer.RougeScorer(list(self.params["rouge_types"]), use_stemmer=self.params["use_stemmer"],
                                          tokenizer=tokenizer)
        for pred, ref in zip(preds, refs, strict=True):
            scores = scorer.score(ref[0], pred) if len(ref) == 1 else scorer.score_multi(ref, pred)
            for i, kind in enumerate(self.params["rouge_types"]):
                s = scores[kind]
                self.state["sums"][i] += (s.precision, s.recall, s.fmeasure)
        self.state["count"] += len(preds)

    def compute_all(self) -> dict[str, dict[str, float]]:
        n = int(self.state["count"])
        means = self.state["sums"] / n if n else np.full_like(self.state["sums"], np.nan)
        return {kind: {"precision": float(p), "recall": float(r), "fmeasure": float(f)}
                for kind, (p, r, f) in zip(self.params["rouge_types"], means, strict=True)}

    def compute(self) -> dict[str, float]:
        return {kind: v["fmeasure"] for kind, v in self.compute_all().items()}


class WordErrorRate(Metric):
    """WER = (substitutions + deletions + insertions) / reference words, from jiwer's alignment
    (``jiwer.process_words``); corpus-level, as ``jiwer.wer`` on all pairs.

    >>> WordErrorRate().update(predictions=["the cat sat"], targets=["the cat is here"]).compute()   # 1 S + 1 D
    0.5
    """

    inputs = ("predictions", "references")
    _raw_inputs = ("predictions", "references", "where")
    _characters = False

    def _initial_state(self) -> dict[str, Any]:
        return {"edits": np.zeros(4, dtype=np.int64)}  # substitutions, deletions, insertions, hits

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        jiwer = _need("jiwer")
        inputs = _tokens_as_words(inputs) if not self._characters else inputs
        preds, refs = _texts(self, inputs)
        if any(len(r) != 1 for r in refs):
            raise MetricInputError(f"{type(self).__name__}.update: one reference per prediction")
        if not preds:
            return
        process = jiwer.process_characters if self._characters else jiwer.process_words
        out = process([r[0] for r in refs], preds)
        self.state["edits"] += (out.substitutions, out.deletions, out.insertions, out.hits)

    def compute(self) -> float:
        s, d, i, h = (int(x) for x in self.state["edits"])
        return (s + d + i) / (s + d + h) if s + d + h else float("nan")


    def _seed_state(self, fields: Any) -> dict[str, Any] | None:
        """metrax's ``WER`` fields: ``total`` (the edit distance) and ``count`` (the reference
        words); held as insertions and hits, which give WER (S + D + I) / (S + D + H) the same."""
        if set(fields) != {"total", "count"}:
            return None
        edits, words = (int(round(float(np.asarray(fields[k])))) for k in ("total", "count"))
        return {"edits": np.array([0, 0, edits, words], dtype=np.int64)}


def _is_tokens(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(t, str) for t in value)


def _tokens_as_words(inputs: dict[str, Any]) -> dict[str, Any]:
    """Pre-tokenised pairs (a list of token lists) as texts jiwer aligns token for token: each
    distinct token becomes one word without spaces, so a token holding a space stays one."""
    preds, refs = inputs["predictions"], inputs["references"]
    if not (isinstance(preds, (list, tuple)) and preds and all(_is_tokens(p) for p in preds)):
        return inputs
    if not (isinstance(refs, (list, tuple)) and all(_is_tokens(r) for r in refs)):
        raise MetricInputError("WordErrorRate.update: pre-tokenised predictions need pre-tokenised references "
                               "(a list of token lists each)")
    words: dict[str, str] = {}

    def text(tokens: Any) -> str:
        return " ".join(words.setdefault(t, f"w{len(words)}") for t in tokens)

    return {**inputs, "predictions": [text(p) for p in preds], "references": [text(r) for r in refs]}


class WER(WordErrorRate):
    """metrax's ``WER``: each update (or ``from_model_output``) is one pair, a string (split on
    whitespace) or a list of tokens; the edit distance and the reference length add up.

    >>> WER.from_model_output(["the", "cat", "sat"], ["the", "cat", "is", "here"]).compute()   # 2 edits / 4
    0.5
    >>> WER.from_model_output("the cat sat", "the cat is here").compute()
    0.5
    """

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        one = {k: [v] if isinstance(v, str) or _is_tokens(v) else v for k, v in inputs.items()
               if k in ("predictions", "references")}
        super()._update({**inputs, **one}, shared)


class MatchErrorRate(WordErrorRate):
    """MER = (S + D + I) / (H + S + D + I): the share of alignment operations that are errors
    (``jiwer.mer``).

    >>> MatchErrorRate().update(predictions=["the cat sat"], targets=["the cat is here"]).compute()   # 2 / 4
    0.5
    """

    def compute(self) -> float:
        s, d, i, h = (int(x) for x in self.state["edits"])
        return (s + d + i) / (h + s + d + i) if h + s + d + i else float("nan")


class WordInformationPreserved(WordErrorRate):
    """WIP = (H / reference words) (H / predicted words) (``jiwer.wip``).

    >>> WordInformationPreserved().update(predictions=["the cat sat"], targets=["the cat is here"]).compute()
    0.3333333333333333

    H = 2 hits of 4 reference and 3 predicted words: (2/4) (2/3). An empty prediction keeps no
    information: WIP 0 and WIL 1, as jiwer (NaN only before any word at all).

    >>> WordInformationPreserved().update(predictions=[""], targets=["the cat"]).compute()
    0.0
    """

    def compute(self) -> float:
        s, d, i, h = (int(x) for x in self.state["edits"])
        ref, hyp = h + s + d, h + s + i
        if not ref and not hyp:
            return float("nan")
        return (h / ref) * (h / hyp) if ref and hyp else 0.0


class WordInformationLost(WordInformationPreserved):
    """WIL = 1 - WIP (``jiwer.wil``)."""

    def compute(self) -> float:
        return 1.0 - super().compute()


class CharErrorRate(WordErrorRate):
    """CER: the same over characters (``jiwer.process_characters``).

    >>> CharErrorRate().update(predictions=["abd"], targets=["abc"]).compute()
    0.3333333333333333
    """

    _characters = True


def _token_ids(targets: np.ndarray, vocabulary: int) -> np.ndarray:
    """Token ids as integers, each in 0..vocabulary - 1."""
    if targets.dtype.kind == "f" and not (targets == np.round(targets)).all():
        raise MetricInputError("TokenPerplexity.update: targets must be token ids (whole numbers)")
    ids = targets.astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= vocabulary):
        raise MetricInputError(f"TokenPerplexity.update: token ids must lie in 0..{vocabulary - 1}")
    return ids


class TokenPerplexity(Metric):
    """exp(weighted mean negative log-likelihood per token). The target tokens' probability comes
    from ``log_probs`` of the target tokens ([batch, tokens], natural log), ``log_probs`` over the
    vocabulary ([batch, tokens, vocabulary]) with ``targets`` (token ids), ``logits`` with
    ``targets`` (log-softmax over the vocabulary), or ``predictions``: probabilities ([batch,
    tokens, vocabulary] with ``targets``, each distribution divided by its sum; or [batch, tokens]
    of the target tokens), as metrax's ``Perplexity`` takes them. ``sample_weights`` ([batch,
    tokens]) weight the tokens; ``where`` masks padding.

    ``clip`` bounds the probabilities to [clip, 1 - clip] before the log (none by default: a
    target of probability 0 makes the perplexity infinite). ``TokenPerplexity.metrax()`` is
    metrax's ``Perplexity``: clip 1e-7. Over several updates rankwise weights every token once;
    metrax weights each batch's mean by its batch size, which agrees when the batches hold the
    same number of tokens (same weight total).

    >>> round(TokenPerplexity().update(log_probs=[[np.log(0.5), np.log(0.25)]]).compute(), 9)   # exp((ln 2 + ln 4) / 2)
    2.828427125
    >>> full = np.log([[[0.5, 0.5], [0.25, 0.75]]])              # [1, 2 tokens, 2 words]; targets 0 and 0
    >>> round(TokenPerplexity().update(log_probs=full, targets=[[0, 0]]).compute(), 9)   # the same two tokens
    2.828427125
    >>> probs = [[[1.0, 1.0], [1.0, 3.0]]]                       # normalised: 0.5 and 0.25 for targets 0, 0
    >>> weighted = TokenPerplexity().update(predictions=probs, targets=[[0, 0]], sample_weights=[[1, 3]])
    >>> round(weighted.compute(), 9)   # exp((ln 2 + 3 ln 4) / 4)
    3.363585661
    """

    inputs = ()
    optional_inputs = ("log_probs", "logits", "probabilities", "targets", "where", "sample_weights")

    @classmethod
    def metrax(cls) -> TokenPerplexity:
        """metrax's ``Perplexity``: probabilities clipped to [1e-7, 1 - 1e-7]."""
        return cls(clip=1e-7)

    def __init__(self, clip: float | None = None) -> None:
        if clip is not None and not 0.0 <= clip < 0.5:
            raise MetricInputError(f"TokenPerplexity: clip must be in [0, 0.5), got {clip}")
        super().__init__(clip=None if clip is None else float(clip))

    def _initial_state(self) -> dict[str, Any]:
        return {"nll": np.zeros(()), "tokens": np.zeros(())}

    def _target_log_probs(self, inputs: dict[str, Any]) -> np.ndarray:
        given = [name for name in ("log_probs", "logits", "probabilities") if name in inputs]
        if len(given) != 1:
            raise MetricInputError("TokenPerplexity.update: give one of predictions (probabilities), log_probs, "
                                   f"or logits with targets (got {', '.join(given) or 'none'})")
        clip = self.params["clip"]
        if given[0] == "logits":
            from scipy.special import log_softmax

            if "targets" not in inputs:
                raise MetricInputError("TokenPerplexity.update: logits need targets (token ids)")
            logp = log_softmax(inputs["logits"].astype(np.float64), axis=-1)
            if clip is not None:
                logp = np.log(np.clip(np.exp(logp), clip, 1.0 - clip))
        elif given[0] == "probabilities":
            p = inputs["probabilities"].astype(np.float64)
            if np.isnan(p).any() or (p < 0).any():
                raise MetricInputError("TokenPerplexity.update: probabilities must be non-negative (not NaN)")
            if "targets" in inputs:
                total = p.sum(axis=-1, keepdims=True)
                if (total <= 0).any():
                    raise MetricInputError("TokenPerplexity.update: a distribution over the vocabulary sums to 0")
                p = p / total
            elif (p > 1).any():
                raise MetricInputError("TokenPerplexity.update: probabilities of the target tokens must be <= 1")
            with np.errstate(divide="ignore"):
                logp = np.log(p if clip is None else np.clip(p, clip, 1.0 - clip))
        else:
            logp = inputs["log_probs"].astype(np.float64)
            if np.isnan(logp).any() or (logp > 0).any():
                raise MetricInputError("TokenPerplexity.update: log_probs must be natural-log probabilities "
                                       "(<= 0, not NaN)")
            if clip is not None:
                logp = np.log(np.clip(np.exp(logp), clip, 1.0 - clip))
        if "targets" in inputs:
            targets = inputs["targets"]
            if logp.shape[:-1] != targets.shape or logp.ndim < 2:
                raise MetricInputError(f"TokenPerplexity.update: with targets, {given[0]} must be [batch, tokens, "
                                       f"vocabulary] over targets [batch, tokens]; got {logp.shape} and "
                                       f"{targets.shape} (give the target tokens' values alone without targets)")
            ids = _token_ids(targets, logp.shape[-1])
            logp = np.take_along_axis(logp, ids[..., None], axis=-1)[..., 0]
        return logp

    def _update(self, inputs: dict[str, Any], shared: dict[Any, Any]) -> None:
        logp = self._target_log_probs(inputs)
        weights = np.ones(logp.shape)
        if "sample_weights" in inputs:
            w = inputs["sample_weights"].astype(np.float64)
            if w.shape != logp.shape:
                raise MetricInputError(f"TokenPerplexity.update: sample_weights {w.shape} must be [batch, tokens] "
                                       f"{logp.shape}")
            if not np.isfinite(w).all() or (w < 0).any():
                raise MetricInputError("TokenPerplexity.update: sample_weights must be finite and non-negative")
            weights = w
        mask = mask_of(inputs.get("where"), logp.shape)
        if mask is not None:
            logp, weights = logp[mask], weights[mask]
        terms = np.where(weights > 0, -logp * weights, 0.0)
        self.state["nll"] = self.state["nll"] + terms.sum()
        self.state["tokens"] = self.state["tokens"] + weights.sum()

    def compute(self) -> float:
        n = float(self.state["tokens"])
        return float(np.exp(float(self.state["nll"]) / n)) if n > 0 else float("nan")
