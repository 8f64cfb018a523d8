"""One 64-bit hash per row's query id: how chunks find query boundaries, check that a run is
grouped by query, and spread queries over partitions."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankwise.data.arrow import to_numpy
from rankwise.engine.strings import string_hashes


def query_hashes(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The hash of each row's id (string or dictionary-encoded strings; a dictionary is hashed
    once per distinct value). Equal ids have equal hashes in every process and on every
    machine (no per-process salt).

    >>> h = query_hashes(pa.array(["q1", "q2"]))
    >>> d = query_hashes(pa.chunked_array([pa.array(["q2", "q1"]).dictionary_encode()]))
    >>> bool(h[0] == d[1]), bool(h[1] == d[0]), bool(h[0] == h[1])
    (True, True, False)
    """
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    parts = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            parts.append(string_hashes(chunk.dictionary)[to_numpy(chunk.indices, np.int64)])
        else:
            parts.append(string_hashes(chunk))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
