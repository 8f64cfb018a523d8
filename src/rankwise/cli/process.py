"""Memory settings of the ``rankwise`` process (the command line only: a library does not
change its host's allocator).

Arrow's jemalloc pool, which rankwise parses and joins large runs in, keeps freed pages for a
while by default; the command line has it give them back at once, so that the pieces of a run
parsed and dropped one after the other do not add up in the process's peak memory.
"""

from __future__ import annotations


def release_freed_pages() -> bool:
    """Make Arrow's jemalloc pool return freed pages to the system at once; False where
    pyarrow was built without jemalloc.

    >>> release_freed_pages() in (True, False)
    True
    """
    import pyarrow as pa

    try:
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:
        return False
    return True
