"""What every JAX metric state shares: a frozen dataclass registered as a pytree (arrays are
leaves, configuration is static), merged by adding its arrays, reduced across devices by
``jax.lax.psum``, plus the padding that keeps ``jit`` from compiling once per batch shape."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # the decorator only informs type checkers (typing has it from Python 3.11)
    def dataclass_transform(**_: Any) -> Any:
        return lambda decorated: decorated

import jax
import jax.numpy as jnp

T = TypeVar("T")


def static(default: Any = dataclasses.MISSING) -> Any:
    """A configuration field of a state (hashable; not an array)."""
    return dataclasses.field(default=default, metadata={"static": True})


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, static))
def pytree_state(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen dataclass and a pytree: fields declared with ``static()`` are its
    configuration (part of the tree's structure: a change recompiles), the others its arrays."""
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass from the line above
    data = [f.name for f in fields if not f.metadata.get("static")]
    meta = [f.name for f in fields if f.metadata.get("static")]
    return jax.tree_util.register_dataclass(cls, data_fields=data, meta_fields=meta)


def float_dtype() -> Any:
    """float64 when ``jax_enable_x64`` is on, else float32 (JAX's default float).

    >>> str(float_dtype()) in ("float32", "float64")
    True
    """
    return jnp.result_type(float)


class _Empty:
    """``empty``: on the class, the subclass's constructor of a state before any batch (with its
    configuration as arguments); on a state, a state of no rows with **that state's**
    configuration (the identity of ``merge``), as every rankwise state's ``empty()``."""

    def __init__(self, build: Any) -> None:
        self.build = build
        self.__doc__ = getattr(build, "__doc__", None)

    def __get__(self, state: Any, owner: type) -> Any:
        if state is None:
            return self.build.__get__(None, owner)
        return lambda: jax.tree_util.tree_map(jnp.zeros_like, state)


class SumState:
    """A state whose arrays are sums: merging adds them, across devices ``psum`` adds them;
    ``state.empty()`` keeps the state's configuration.

    >>> from rankwise.jax import RankingAtK
    >>> RankingAtK.empty(families=("mrr",), k=(3,)).empty().ks
    (3,)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("empty")
        if isinstance(own, classmethod):
            cls.empty = _Empty(own)  # type: ignore[attr-defined]

    def merge(self: T, other: T) -> T:
        """The state of both inputs (``other`` must have the same configuration)."""
        return jax.tree_util.tree_map(jnp.add, self, other)

    def __add__(self: T, other: T) -> T:
        return self.merge(other)  # type: ignore[attr-defined]

    def reduce(self: T, axis_name: Any) -> T:
        """Inside ``shard_map`` / ``pmap``: the state summed over the mapped axis ``axis_name``
        (one ``psum`` of every array)."""
        return jax.lax.psum(self, axis_name)


def bucket_size(n: int, minimum: int = 8) -> int:
    """The padded size for ``n`` items: the next power of two (at least ``minimum``), so that
    batches of any size compile at most log2(largest) times.

    >>> bucket_size(5), bucket_size(8), bucket_size(9), bucket_size(1000)
    (8, 8, 16, 1024)
    """
    size = max(int(minimum), 1)
    while size < n:
        size *= 2
    return size


def pad_to_bucket(*arrays: Any, where: Any = None, axis: int = -1, minimum: int = 8) -> tuple[Any, ...]:
    """Pad ``arrays`` (same shape) along ``axis`` to ``bucket_size`` with zeros, and return them
    with the mask of real items (``where``, or all True, padded with False) last. Call it
    outside ``jit`` (shapes are Python numbers there).

    >>> s, l, m = pad_to_bucket(jnp.ones((2, 5)), jnp.zeros((2, 5)))
    >>> s.shape, int(m.sum())
    ((2, 8), 10)
    """
    shape = jnp.shape(arrays[0])
    n = shape[axis]
    size = bucket_size(n, minimum)
    mask = jnp.ones(shape, dtype=bool) if where is None else jnp.asarray(where, dtype=bool)
    widths = [(0, 0)] * len(shape)
    widths[axis] = (0, size - n)
    padded = tuple(jnp.pad(jnp.asarray(a), widths) for a in arrays)
    return (*padded, jnp.pad(mask, widths))
