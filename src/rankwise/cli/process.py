"""Memory settings of the ``rankwise`` process (the command line only: a library does not
change its host's allocator).

Arrow's jemalloc pool, which rankwise parses and joins large runs in, keeps freed pages for a
second by default; the command line has it give them back after a tenth of that, so that the
pieces of a run parsed and dropped one after the other do not add up in the process's peak
memory, while a page freed by one step can still serve the next without being faulted in
afresh (giving pages back at once doubled the system time of a large evaluation).
"""

from __future__ import annotations

FREED_PAGES_KEPT_MS = 100
"""How long Arrow's jemalloc pool keeps a freed page for reuse in the command line."""


def release_freed_pages() -> bool:
    """Make Arrow's jemalloc pool return freed pages to the system within
    ``FREED_PAGES_KEPT_MS``; False where pyarrow was built without jemalloc.

    >>> release_freed_pages() in (True, False)
    True
    """
    import pyarrow as pa

    try:
        pa.jemalloc_set_decay_ms(FREED_PAGES_KEPT_MS)
    except NotImplementedError:
        return False
    return True
