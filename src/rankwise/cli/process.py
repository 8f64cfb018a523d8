"""Memory settings of the ``rankwise`` process (the command line only: a library does not
change its host's allocator).

Arrow's jemalloc pool, which rankwise parses and joins large runs in, keeps freed pages for a
second by default; the command line has it give them back after a tenth of that, so that the
pieces of a run parsed and dropped one after the other do not add up in the process's peak
memory, while a page freed by one step can still serve the next without being faulted in
afresh (giving pages back at once doubled the system time of a large evaluation). The short
commands that evaluate also have glibc keep freed heap memory for reuse (``reuse_freed_heap``)
and NumPy ask for no transparent huge pages and one OpenBLAS thread
(``numpy_for_short_commands``), and look for reference cycles rarely (``rare_cycle_collection``).
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


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""glibc's ``mallopt`` parameters (malloc.h)."""
REUSED_BYTES = 1 << 30
"""Allocations below this come from the heap, and freed heap memory stays for reuse."""


def reuse_freed_heap() -> bool:
    """Have glibc serve NumPy's large temporaries from the heap and keep freed heap memory for
    the next one; False where the C library has no ``mallopt`` (not glibc).

    By default glibc maps each allocation above a threshold (128 KB, raised as large blocks are
    freed, up to 32 MB) afresh and unmaps it when freed, so every large temporary of an
    evaluation is faulted in and zeroed by the kernel again. Peak memory stays the same: the
    heap only keeps what the largest step needed. For the short commands that evaluate
    (``evaluate``, ``trec-eval``, ``ndeval``); on a 7-million-row run this cut the median wall
    time by about 7% and system time by a tenth to a third.

    >>> import platform, subprocess, sys   # in a child: the setting lasts for the whole process
    >>> code = "from rankwise.cli.process import reuse_freed_heap; print(reuse_freed_heap())"
    >>> done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    >>> done == str(platform.libc_ver()[0] == "glibc")   # mallopt takes both settings on glibc only
    True
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, REUSED_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, REUSED_BYTES))


SHORT_COMMAND_NUMPY = {"NUMPY_MADVISE_HUGEPAGE": "0", "OPENBLAS_NUM_THREADS": "1"}
"""Environment settings NumPy (and its OpenBLAS) read when imported, for the short commands."""


def numpy_for_short_commands() -> bool:
    """Set ``SHORT_COMMAND_NUMPY`` for NumPy's import: no transparent huge pages, and one
    OpenBLAS thread. A setting already in the environment wins. False if NumPy is already
    imported (it reads them at its import).

    - Where transparent huge pages are on request only (``madvise``, the usual setting), NumPy
      asks for them for arrays of 4 MB and more, and a huge page fault may stop to compact memory
      first; right after another process freed a lot of memory (a benchmark, a pipeline) that is
      slow. On a 7-million-row run, six runs each just after pytrec_eval, ``trec-eval`` took
      1.40-1.67 s (median 1.59 s, system time 0.53 s) without huge pages, against 1.55-2.01 s
      (median 1.67 s, system 0.69 s) with them.
    - OpenBLAS starts a thread per core when NumPy is imported, and the threads spin for about
      a tenth of a second before they sleep: 0.11 s of processor time on a 2-core machine
      (user time of a small evaluation 0.29 s -> 0.18 s), taken from the reading threads on a
      busy one. The short commands make no large matrix products.

    >>> import os, subprocess, sys   # in a child: NumPy reads the settings when it is imported
    >>> env = {k: v for k, v in os.environ.items() if k not in SHORT_COMMAND_NUMPY}
    >>> code = ("from rankwise.cli.process import numpy_for_short_commands as setup; first = setup(); "
    ...         "import numpy, os; print(first, numpy._core.multiarray._get_madvise_hugepage(), "
    ...         "os.environ['OPENBLAS_NUM_THREADS'], setup())")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.split()
    ['True', 'False', '1', 'False']
    """
    import os
    import sys

    if "numpy" in sys.modules:
        return False
    for name, value in SHORT_COMMAND_NUMPY.items():
        os.environ.setdefault(name, value)
    return True


SHORT_COMMAND_COLLECTION = (50_000, 20, 20)
"""Python's garbage-collection thresholds for the short commands (the default is 700, 10, 10)."""


def rare_cycle_collection() -> tuple[int, int, int]:
    """Have Python look for reference cycles after 50,000 new objects instead of 700, for the
    short commands that evaluate; returns the thresholds it replaced.

    Importing NumPy, pyarrow and the modules of an evaluation creates hundreds of thousands of
    objects, none of them garbage; with the default thresholds Python walked them in about 60
    collections (about 15 ms, timed with ``gc.callbacks``), with these in none. On a 100,000-row
    run (30 runs of each, in turn, both with compiled modules) the median wall time fell from
    0.205 s to 0.195 s. The evaluation itself makes few cycles (its data are arrays), and the
    process ends as soon as it is done.

    >>> import gc
    >>> before = rare_cycle_collection(); gc.get_threshold()
    (50000, 20, 20)
    >>> gc.set_threshold(*before)
    """
    import gc

    before = gc.get_threshold()
    gc.set_threshold(*SHORT_COMMAND_COLLECTION)
    return before
