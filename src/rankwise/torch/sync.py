"""``sync(metric, group=None)``: the state of a streaming ``Metric`` or ``MultiMetric`` summed over
every rank of a ``torch.distributed`` process group, in one ``all_reduce`` where the states allow.

Each state is reduced by how it merges (``sync_plan``):

- ``sum`` (counts, sums, per-cut-off totals: almost every metric): every such state of every
  metric goes into **one** float64 tensor and one ``all_reduce(SUM)``. Integer counts are exact
  up to 2^53.
- ``max`` / ``min`` (BLEU's reference count): one ``all_reduce(MAX)`` / ``(MIN)`` tensor, only
  where a metric has such a state.
- ``gather`` (states merged by a formula, such as the running moments of ``PearsonCorrCoef``):
  their fixed-size states in one ``all_gather``, merged on every rank in rank order with the
  metric's own ``merge``.
- ``cat`` (growing lists: exact ``ROCAUC``, ``SpearmanCorrCoef``): one ``all_gather`` of their
  lengths, then one ``all_gather`` of the values padded to the longest, cut and concatenated
  in rank order.

Every rank runs the same collectives in the same order whatever it saw, because fixed-size
states have the same shape on every rank (a rank that did fewer updates, or none, adds its
zeros): no rank waits for a collective another rank skipped. The tensors live on ``device``
(default: CUDA for an NCCL group, else CPU). The metric given is not changed: ``sync`` returns
a copy holding the global state, so training goes on accumulating the local one.

>>> from rankwise.streaming import NDCG
>>> local = NDCG(k=[10]).update(predictions=[[0.9, 0.1]], targets=[[0, 1]])
>>> sync(local).compute() == local.compute()   # without an initialised process group: the same
True
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.state import Metric, MultiMetric

STATE_REDUCTIONS: dict[tuple[str, str], str] = {
    ("BLEU", "stats"): "sum", ("BLEU", "nrefs"): "max",
    **{(curve, key): kind for curve in ("ROCAUC", "AveragePrecision")
       for key, kind in (("scores", "cat"), ("labels", "cat"), ("weights", "cat"), ("positives", "sum"),
                         ("negatives", "sum"))},
    ("SpearmanCorrCoef", "x"): "cat", ("SpearmanCorrCoef", "y"): "cat",
}
"""(metric class, state) -> reduction, for metrics whose ``merge`` is not a plain sum of every
state; the states of the others add up, and states of a metric not listed here that merges by
its own formula are gathered and merged with it."""

KINDS = ("sum", "max", "min", "gather", "cat")


def _torch() -> Any:
    try:
        import torch
        import torch.distributed
    except ImportError:
        raise RankwiseError("rankwise.torch needs PyTorch: pip install 'rankwise[torch]'") from None
    return torch


def _leaves(metric: Metric | MultiMetric) -> list[tuple[str, Metric]]:
    if isinstance(metric, MultiMetric):
        return [(name, m) for name, m in metric.metrics.items()]
    if isinstance(metric, Metric):
        return [("", metric)]
    raise RankwiseError(f"sync takes a rankwise Metric or MultiMetric, not a {type(metric).__name__}")


def sync_plan(metric: Metric | MultiMetric) -> dict[str, dict[str, str]]:
    """How each state of each metric is reduced across ranks: ``{metric: {state: kind}}``.

    >>> from rankwise.streaming import BLEU, NDCG, MultiMetric, PearsonCorrCoef
    >>> sync_plan(MultiMetric(ndcg=NDCG(k=[10]), r=PearsonCorrCoef()))["ndcg"]["total"]
    'sum'
    >>> sync_plan(NDCG(k=[10]))[""]["flat_indexes"]   # rows of indexes= batches: concatenated
    'cat'
    >>> set(sync_plan(PearsonCorrCoef())[""].values())   # merged by a formula: gathered
    {'gather'}
    """
    plan: dict[str, dict[str, str]] = {}
    for name, leaf in _leaves(metric):
        cls = type(leaf).__name__
        plain_sum = type(leaf)._merge is Metric._merge
        kinds = {}
        for key in leaf.state:
            grows = key in leaf.growing_state
            kinds[key] = STATE_REDUCTIONS.get((cls, key)) or ("cat" if grows else "sum" if plain_sum or
                                                              leaf.growing_state else "gather")
        plan[name] = kinds
    return plan


def _flat(values: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in values]) if values \
        else np.zeros(0, dtype=np.float64)


def _unflat(flat: np.ndarray, like: list[np.ndarray]) -> list[np.ndarray]:
    out, start = [], 0
    for value in like:
        value = np.asarray(value)
        piece = flat[start:start + value.size].reshape(value.shape)
        out.append(np.rint(piece).astype(value.dtype) if value.dtype.kind in "iub" else piece.astype(value.dtype))
        start += value.size
    return out


def _default_device(torch: Any, group: Any) -> Any:
    if torch.distributed.get_backend(group) == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sync(metric: Metric | MultiMetric, group: Any = None, device: Any = None) -> Metric | MultiMetric:
    """A copy of ``metric`` holding the state summed over every rank of ``group`` (default:
    the world); with no initialised process group, or one rank, a plain copy.

    The collectives, in this order on every rank: one ``all_reduce(SUM)`` of every summed
    state; ``all_reduce(MAX)`` / ``(MIN)`` only if some state needs it; one ``all_gather`` of
    the states merged by formula, if any; two ``all_gather`` for growing lists, if any.
    """
    torch = _torch()
    out = copy.deepcopy(metric)
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized() or dist.get_world_size(group) == 1:
        return out
    device = torch.device(device) if device is not None else _default_device(torch, group)
    plan = sync_plan(out)
    leaves = dict(_leaves(out))
    where = {kind: [(name, key) for name, kinds in plan.items() for key, k in kinds.items() if k == kind]
             for kind in KINDS}
    ops = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
    # the rows each growing list holds ride along the sums: lists empty on every rank need no gather
    rows = [np.array(sum(np.size(part) for part in leaves[name].state[key])) for name, key in where["cat"]]
    for kind in ("sum", "max", "min"):
        if not where[kind] and not (kind == "sum" and rows):
            continue
        like = [leaves[name].state[key] for name, key in where[kind]] + (rows if kind == "sum" else [])
        tensor = torch.from_numpy(_flat(like)).to(device)
        dist.all_reduce(tensor, op=ops[kind], group=group)
        values = _unflat(tensor.cpu().numpy(), like)
        for (name, key), value in zip(where[kind], values, strict=False):
            leaves[name].state[key] = value
        if kind == "sum":
            rows = values[len(where["sum"]):]
    where["cat"] = [key for key, total in zip(where["cat"], rows, strict=True) if int(total) > 0]
    if where["gather"]:
        _gather_merged(torch, dist, leaves, where["gather"], group, device)
    if where["cat"]:
        _gather_lists(torch, dist, leaves, where["cat"], group, device)
    return out


def _gather_merged(torch: Any, dist: Any, leaves: dict[str, Metric], keys: list[tuple[str, str]], group: Any,
                   device: Any) -> None:
    """States merged by a formula: every rank's gathered, then merged in rank order."""
    like = [leaves[name].state[key] for name, key in keys]
    local = torch.from_numpy(_flat(like)).to(device)
    gathered = [torch.empty_like(local) for _ in range(dist.get_world_size(group))]
    dist.all_gather(gathered, local, group=group)
    names = list(dict.fromkeys(name for name, _ in keys))
    merged = {name: leaves[name].empty() for name in names}
    for tensor in gathered:
        values = dict(zip(keys, _unflat(tensor.cpu().numpy(), like), strict=True))
        for name in names:
            state = {key: values[(n, key)] for n, key in keys if n == name}
            merged[name]._merge(state)
    gathered_keys = set(keys)
    for name in names:
        for key, value in merged[name].state.items():
            if (name, key) in gathered_keys:
                leaves[name].state[key] = value


DTYPES = (np.float64, np.int64, np.bool_)


def _joined(parts: list[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """A growing list of arrays as one flat float64 array, with its meta: [size, columns
    (0 for 1-D arrays), dtype code]."""
    if not parts:
        return np.zeros(0), [0, -1, -1]
    joined = np.concatenate([np.asarray(p) for p in parts])
    code = 2 if joined.dtype == np.bool_ else (1 if joined.dtype.kind in "iu" else 0)
    return joined.astype(np.float64).ravel(), [joined.size, joined.shape[1] if joined.ndim == 2 else 0, code]


def _gather_lists(torch: Any, dist: Any, leaves: dict[str, Metric], keys: list[tuple[str, str]], group: Any,
                  device: Any) -> None:
    """Growing lists of arrays: sizes gathered, values padded to the longest, gathered, cut and
    kept as one array per rank, in rank order."""
    world = dist.get_world_size(group)
    joined = [_joined(leaves[name].state[key]) for name, key in keys]
    meta = torch.tensor([m for _, m in joined], dtype=torch.int64, device=device)
    all_meta = [torch.empty_like(meta) for _ in range(world)]
    dist.all_gather(all_meta, meta, group=group)
    metas = np.stack([t.cpu().numpy() for t in all_meta])  # rank x key x (size, columns, dtype)
    longest = metas[:, :, 0].max(axis=0)
    padded = np.concatenate([np.pad(values, (0, int(longest[i]) - len(values)))
                             for i, (values, _) in enumerate(joined)])
    local = torch.from_numpy(padded).to(device)
    gathered = [torch.empty_like(local) for _ in range(world)]
    dist.all_gather(gathered, local, group=group)
    offsets = np.concatenate([[0], np.cumsum(longest)])
    for i, (name, key) in enumerate(keys):
        parts = []
        for rank, tensor in enumerate(gathered):
            size, columns, code = (int(x) for x in metas[rank, i])
            if size == 0:
                continue
            values = tensor[int(offsets[i]):int(offsets[i]) + size].cpu().numpy().astype(DTYPES[code])
            parts.append(values.reshape(-1, columns) if columns else values)
        leaves[name].state[key] = parts
