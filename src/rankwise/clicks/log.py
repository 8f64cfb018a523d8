"""Click logs as sessions x ranks: the query of each session, the document shown at each rank,
the clicks, and a mask for padding (sessions with fewer results).

Readers: the Yandex relevance-prediction format (``SessionID TimePassed Q QueryID RegionID
URL...`` lines, then ``SessionID TimePassed C URL`` for each click; the format of CLARA 2),
long rows (session, query, rank, doc, click) from any table, and arrays. Documents are
identified within their query: the parameters of a click model are per (query, document) pair.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.data.distinct import distinct
from rankwise.errors import InputError
from rankwise.stats.resampling import seeded

LONG_ROLES: dict[str, tuple[str, ...]] = {
    "session": ("session", "session_id", "sessionid", "search_id", "searchid", "sid", "impression_id",
                "request_id"),
    "query": ("query", "query_id", "queryid", "qid", "q", "search_query"),
    "rank": ("rank", "position", "pos", "slot"),
    "doc": ("doc", "doc_id", "docid", "document", "document_id", "url", "item", "item_id", "result"),
    "click": ("click", "clicked", "clicks", "is_click", "is_clicked"),
}
"""The columns of a long-row click log, each with the spellings logging stacks export."""


def _described(data: Any) -> str:
    return str(data) if isinstance(data, (str, os.PathLike)) else f"<{type(data).__name__}>"


MAX_RANK = 1000
"""The deepest rank a long-row log may name (a page is a row of that many cells per session)."""


@dataclass
class ClickLog:
    """Sessions x ranks. ``query`` (sessions,) codes into ``query_ids``; ``docs`` (sessions,
    ranks) codes into ``doc_ids`` (-1 for padding); ``pairs`` the (query, document) pair of each
    cell (-1 for padding), with ``pair_query`` and ``pair_doc``; ``clicks`` 0/1; ``mask`` True
    where a document was shown. ``notes`` counts what a reader skipped on purpose.

    >>> log = ClickLog.from_arrays(["q1", "q1"], [["a", "b"], ["b", "a"]], [[1, 0], [0, 0]])
    >>> log.sessions, log.ranks, log.pairs.tolist()
    (2, 2, [[0, 1], [1, 0]])
    """

    query: np.ndarray
    docs: np.ndarray
    clicks: np.ndarray
    mask: np.ndarray
    query_ids: list[str]
    doc_ids: list[str]
    pairs: np.ndarray = field(init=False)
    pair_query: np.ndarray = field(init=False)
    pair_doc: np.ndarray = field(init=False)
    notes: list[str] = field(default_factory=list)
    cache: dict[str, Any] = field(init=False, default_factory=dict, repr=False, compare=False)
    """Values derived from this log's cells by the models (each log, and each chunk, its own)."""

    def __post_init__(self) -> None:
        shown = self.mask
        key = np.where(shown, self.query[:, None].astype(np.int64) * max(len(self.doc_ids), 1) + self.docs, -1)
        uniques, inverse = np.unique(key[shown], return_inverse=True)
        pairs = np.full(key.shape, -1, dtype=np.int64)
        pairs[shown] = inverse
        self.pairs = pairs
        self.pair_query = uniques // max(len(self.doc_ids), 1)
        self.pair_doc = uniques % max(len(self.doc_ids), 1)
        self.clicks = np.where(shown, self.clicks, 0).astype(np.int8)

    @property
    def sessions(self) -> int:
        return int(self.clicks.shape[0])

    @property
    def ranks(self) -> int:
        return int(self.clicks.shape[1])

    @property
    def n_pairs(self) -> int:
        shipped = getattr(self, "_n_pairs", None)
        return int(len(self.pair_query)) if shipped is None else shipped

    def pair_ids_in(self, whole: ClickLog) -> np.ndarray:
        """Each of this log's pair ids as the id the same (query, document) pair has in
        ``whole`` (-1 for a pair ``whole`` does not have). Parts of a log (``split``) number
        their pairs afresh, so a model fitted on one part and scored on another by pair id (as
        CLAX's models are) needs the whole log's ids.

        >>> whole = ClickLog.from_arrays(["q", "q", "r"], [["a"], ["b"], ["a"]], [[1], [0], [0]])
        >>> part = ClickLog.from_arrays(["r", "q"], [["a"], ["b"]], [[0], [0]])
        >>> part.pair_ids_in(whole).tolist()   # part's (q, b) and (r, a) are whole's pairs 1 and 2
        [1, 2]
        """
        index = whole.cache.get("pair_index")
        if index is None:
            index = {(whole.query_ids[q], whole.doc_ids[d]): i
                     for i, (q, d) in enumerate(zip(whole.pair_query.tolist(), whole.pair_doc.tolist(), strict=True))}
            whole.cache["pair_index"] = index
        return np.fromiter((index.get((self.query_ids[q], self.doc_ids[d]), -1)
                            for q, d in zip(self.pair_query.tolist(), self.pair_doc.tolist(), strict=True)),
                           dtype=np.int64, count=self.n_pairs)

    def chunks(self, size: int) -> Iterator[ClickLog]:
        """Consecutive pieces of at most ``size`` sessions, as views sharing this log's
        vocabularies and pair numbering (what a fit accumulates its statistics over).

        >>> log = ClickLog.from_arrays(["q"] * 3, [["a"], ["b"], ["a"]], [[1], [0], [0]])
        >>> [c.pairs.ravel().tolist() for c in log.chunks(2)]
        [[0, 1], [0]]
        """
        for start in range(0, max(self.sessions, 1), max(int(size), 1)):
            stop = start + max(int(size), 1)
            docs = None if self.docs is None else self.docs[start:stop]   # a lean piece has none
            yield piece_of(self, self.query[start:stop], docs, self.pairs[start:stop], self.clicks[start:stop],
                           self.mask[start:stop])

    def to_long(self) -> Any:
        """Long rows (session, query, rank, doc, click) of the shown cells as an Arrow table;
        sessions numbered from 1.

        >>> ClickLog.from_arrays(["q"], [["a", "b"]], [[0, 1]]).to_long().to_pylist()[1]
        {'session': 1, 'query': 'q', 'rank': 2, 'doc': 'b', 'click': 1}
        """
        import pyarrow as pa

        session, rank = np.nonzero(self.mask)
        docs = self.docs if self.docs is not None else np.append(self.pair_doc, -1)[self.pairs]
        return pa.table({"session": session + 1, "query": np.asarray(self.query_ids, dtype=object)[self.query[session]],
                         "rank": rank + 1, "doc": np.asarray(self.doc_ids, dtype=object)[docs[session, rank]],
                         "click": self.clicks[session, rank]})

    def subset(self, rows: np.ndarray) -> ClickLog:
        """The sessions at ``rows`` (indices or a boolean mask), same vocabularies."""
        return ClickLog(self.query[rows], self.docs[rows], self.clicks[rows], self.mask[rows],
                        self.query_ids, self.doc_ids, notes=list(self.notes))

    def split(self, test_share: float = 0.25, seed: int = 0, by: str = "session") -> tuple[ClickLog, ClickLog]:
        """The sessions split into (train, test), ``test_share`` of them held out:

        - ``by="session"``: each session held out with probability ``test_share`` (seeded);
        - ``by="query"``: each query's sessions all held out, or all kept (seeded), so the
          held-out pairs are ones the fit never saw;
        - ``by="time"``: the last ``test_share`` of the sessions in log order.

        >>> log = ClickLog.from_arrays(["a", "a", "b", "c"], [["x"], ["y"], ["x"], ["z"]], [[1], [0], [0], [1]])
        >>> [part.sessions for part in log.split(0.5, by="time")]
        [2, 2]
        >>> train, test = log.split(0.5, seed=1, by="query")
        >>> sorted({log.query_ids[q] for q in test.query}) in (["a"], ["b"], ["c"], ["a", "b"], ["a", "c"], ["b", "c"])
        True
        """
        if not 0 <= test_share <= 1:
            raise ValueError(f"test_share must be in [0, 1], got {test_share}")
        rng = seeded(seed)
        if by == "session":
            test = rng.random(self.sessions) < test_share
        elif by == "query":
            test = (rng.random(len(self.query_ids)) < test_share)[self.query]
        elif by == "time":
            test = np.arange(self.sessions) >= round(self.sessions * (1 - test_share))
        else:
            raise ValueError(f"by must be session, query or time, got {by!r}")
        return self.subset(~test), self.subset(test)

    @classmethod
    def from_arrays(cls, queries: Sequence[Any], docs: Sequence[Sequence[Any]], clicks: Sequence[Sequence[int]],
                    mask: Sequence[Sequence[bool]] | None = None) -> ClickLog:
        """From a query per session, documents per rank (None pads) and clicks per rank."""
        query_ids, query = _codes([str(q) for q in queries])
        width = max((len(row) for row in docs), default=0)
        flat = [str(d) for row in docs for d in row if d is not None]
        doc_ids = sorted(set(flat))
        index = {d: i for i, d in enumerate(doc_ids)}
        codes = np.full((len(docs), width), -1, dtype=np.int64)
        for s, row in enumerate(docs):
            for r, d in enumerate(row):
                if d is not None:
                    codes[s, r] = index[str(d)]
        click = np.zeros((len(docs), width), dtype=np.int8)
        for s, row in enumerate(clicks):
            click[s, :len(row)] = row
        shown = codes >= 0 if mask is None else np.asarray(mask, dtype=bool) & (codes >= 0)
        if ((click != 0) & (click != 1)).any():
            raise InputError("clicks must be 0 or 1", field="clicks")
        return cls(query, codes, click, shown, query_ids, doc_ids)

    @classmethod
    def from_long(cls, data: Any, session: str | None = None, query: str | None = None, rank: str | None = None,
                  doc: str | None = None, click: str | None = None) -> ClickLog:
        """From long rows, one per (session, rank): files (CSV, TSV, Parquet, JSONL), a
        DataFrame, an Arrow table or a dict. Ranks start at 1; sessions keep the order of
        their first row. Each column is the one named, else found by its common spellings
        (``LONG_ROLES``: ``session_id``, ``position``, ``url``, ``clicked`` ...).

        >>> log = ClickLog.from_long({"session_id": [1, 1], "query": ["q", "q"], "position": [1, 2],
        ...                           "url": ["a", "b"], "clicked": [0, 1]})
        >>> log.clicks.tolist()
        [[0, 1]]
        """
        import pyarrow as pa

        from rankwise.data.columns import resolve_roles
        from rankwise.data.tables import column_names_of, location, number_column, tables_of

        named = resolve_roles(column_names_of(data), LONG_ROLES,
                              {"session": session, "query": query, "rank": rank, "doc": doc, "click": click},
                              _described(data))
        session, query, rank, doc, click = (named[r] for r in ("session", "query", "rank", "doc", "click"))
        pieces = tables_of(data, [session, query, rank, doc, click], ids=[session, query, doc])
        checked = []
        for name, first, table in pieces:   # checked per piece, so errors name the file's own line
            ranks = number_column(name, first, table.column(rank).combine_chunks(), rank)
            bad = np.flatnonzero((ranks < 1) | (ranks != np.floor(ranks)) | (ranks > MAX_RANK))
            if len(bad):
                raise InputError(f"rank must be a whole number from 1 to {MAX_RANK}, got {ranks[bad[0]].item()!r}",
                                 field=rank, **location(name, first, int(bad[0])))
            clicks = number_column(name, first, table.column(click).combine_chunks(), click)
            bad = np.flatnonzero(~np.isin(clicks, (0, 1)))
            if len(bad):
                raise InputError(f"click must be 0 or 1, got {clicks[bad[0]].item()!r}", field=click,
                                 **location(name, first, int(bad[0])))
            for column, values in ((rank, ranks), (click, clicks)):   # numbers from here on, whatever was read
                table = table.set_column(table.schema.get_field_index(column), column,
                                         pa.array(np.asarray(values).astype(np.int64)))
            checked.append((name, first, table))
        pieces = checked
        table = pa.concat_tables([t.cast(pieces[0][2].schema) for _, _, t in pieces]) if len(pieces) > 1 \
            else pieces[0][2]
        source = ", ".join(dict.fromkeys(n for n, _, _ in pieces))
        sessions = [str(v) for v in table.column(session).to_pylist()]
        ranks = np.asarray(table.column(rank).to_numpy(zero_copy_only=False))
        clicks = np.asarray(table.column(click).to_numpy(zero_copy_only=False))
        import pandas as pd

        session_code, session_index = pd.factorize(pd.Series(sessions, dtype=object), sort=False)
        session_ids = [str(v) for v in session_index]   # sessions in order of first appearance
        session_code = session_code.astype(np.int64)
        queries = [str(v) for v in table.column(query).to_pylist()]
        docs = [str(v) for v in table.column(doc).to_pylist()]
        width = int(ranks.max()) if len(ranks) else 0
        doc_ids, doc_code = _codes(docs)
        query_ids, query_code = _codes(queries)
        grid = np.full((len(session_ids), width), -1, dtype=np.int64)
        click_grid = np.zeros((len(session_ids), width), dtype=np.int8)
        cell = (session_code, ranks.astype(np.int64) - 1)
        if len(distinct(session_code * width + cell[1])) != len(session_code):
            raise InputError("a session has two rows at one rank", source=source, field=rank)
        grid[cell] = doc_code
        click_grid[cell] = clicks
        session_query = np.full(len(session_ids), -1, dtype=np.int64)
        session_query[session_code] = query_code
        if (session_query[session_code] != query_code).any():
            row = int(np.flatnonzero(session_query[session_code] != query_code)[0])
            raise InputError(f"session {session_ids[session_code[row]]!r} has rows of two queries", source=source,
                             field=query)
        return cls(session_query, grid, click_grid, grid >= 0, query_ids, doc_ids)


def piece_of(vocabulary: Any, query: np.ndarray, docs: np.ndarray | None, pairs: np.ndarray, clicks: np.ndarray,
             mask: np.ndarray) -> ClickLog:
    """A log over the given arrays that keeps the vocabularies and pair numbering of
    ``vocabulary`` (a log or a stored log). ``docs`` may be None: fitting uses ``pairs``."""
    piece = object.__new__(ClickLog)
    piece.query, piece.pairs, piece.clicks, piece.mask = query, pairs, clicks, mask
    piece.docs = docs  # type: ignore[assignment]  # a lean piece has no document matrix
    piece.query_ids, piece.doc_ids = vocabulary.query_ids, vocabulary.doc_ids
    piece.pair_query, piece.pair_doc = vocabulary.pair_query, vocabulary.pair_doc
    piece.notes = []
    piece.cache = {}
    return piece


def lean_piece(chunk: ClickLog) -> ClickLog:
    """The arrays of a chunk a fit reads (query codes, pair numbers, clicks, shown cells),
    without the vocabularies and pair tables it shares with its log, so that sending it to a
    worker costs the chunk's size, not the log's.

    >>> log = ClickLog.from_arrays(["q"] * 3, [["a"], ["b"], ["a"]], [[1], [0], [0]])
    >>> lean = lean_piece(next(log.chunks(2)))
    >>> lean.n_pairs, lean.query_ids, lean.pairs.ravel().tolist()
    (2, [], [0, 1])
    """
    from types import SimpleNamespace

    none = np.empty(0, dtype=np.int64)
    piece = piece_of(SimpleNamespace(query_ids=[], doc_ids=[], pair_query=none, pair_doc=none), chunk.query, None,
                     chunk.pairs, chunk.clicks, chunk.mask)
    piece._n_pairs = chunk.n_pairs  # type: ignore[attr-defined]  # read by n_pairs
    return piece


def _codes(values: Sequence[str]) -> tuple[list[str], np.ndarray]:
    uniques, inverse = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return uniques.tolist(), inverse.astype(np.int64)


def read_yandex(path: str | os.PathLike[str], ranks: int = 10) -> ClickLog:
    """A click log in the Yandex relevance-prediction format (CLARA 2): tab-separated
    ``SessionID TimePassed Q QueryID RegionID URL_1 ... URL_n`` for a result page and
    ``SessionID TimePassed C URL`` for a click, which belongs to the session's latest page
    showing that URL. Each result page is one session row. A click logged before its session's
    first page (CLARA 2 has such lines) goes to that page if it shows the URL. Clicks on a URL
    the session's pages never showed, and clicks of sessions without a page, are counted in
    ``notes``, not guessed.
    """
    path = Path(path)
    from rankwise.data.limits import open_source

    queries: list[str] = []
    pages: list[list[str]] = []
    clicked: list[set[int]] = []
    session_pages: dict[str, list[int]] = {}
    early: dict[str, list[str]] = {}   # clicks logged before their session's first page
    beyond: dict[int, list[str]] = {}  # the URLs a page showed below rank ``ranks``
    unshown = repeated = placed_early = deep_clicks = 0

    def place(page: int, rank: int) -> None:
        nonlocal repeated
        if rank in clicked[page]:
            repeated += 1
        clicked[page].add(rank)

    number = 0
    handle = open_source(path)
    try:
        for number, raw in enumerate(handle, start=1):
            line = raw.decode("utf-8")   # line by line: an error names its own line
            fields = line.rstrip("\n").rstrip("\r").rstrip("\t").split("\t")
            if fields == [""]:
                continue
            if len(fields) < 3:
                raise InputError(f"expected SessionID, TimePassed, Q or C; got {len(fields)} field(s)",
                                 source=str(path), line=number)
            kind = fields[2]
            if kind == "Q":
                if len(fields) < 6:
                    raise InputError("a Q line needs SessionID, TimePassed, Q, QueryID, RegionID and URLs",
                                     source=str(path), line=number)
                if "" in fields[5:]:
                    raise InputError(f"URL_{fields[5:].index('') + 1} is empty (the results after it would move up "
                                     "a rank)", source=str(path), line=number, field="URL")
                urls = fields[5:5 + ranks]
                if len(fields) > 5 + ranks:
                    beyond[len(pages)] = fields[5 + ranks:]
                queries.append(fields[3])
                pages.append(urls)
                clicked.append(set())
                session_pages.setdefault(fields[0], []).append(len(pages) - 1)
                for url in early.pop(fields[0], []):
                    if url in urls:
                        place(len(pages) - 1, urls.index(url))
                        placed_early += 1
                    else:
                        unshown += 1
            elif kind == "C":
                if len(fields) < 4:
                    raise InputError("a C line needs SessionID, TimePassed, C and the URL", source=str(path),
                                     line=number)
                earlier = session_pages.get(fields[0])
                if earlier is None:
                    early.setdefault(fields[0], []).append(fields[3])
                    continue
                found = _latest_page_showing(pages, earlier, fields[3])
                if found is None:
                    if any(fields[3] in beyond.get(page, ()) for page in earlier):
                        deep_clicks += 1
                    else:
                        unshown += 1
                    continue
                place(*found)
            else:
                raise InputError(f"expected Q or C in the third field, got {kind!r}", source=str(path), line=number,
                                 field="type")
    except UnicodeDecodeError as error:
        raise InputError(f"invalid UTF-8 (byte {error.object[error.start]:#04x}); click logs are UTF-8 text",
                         source=str(path), line=number) from None
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read ({error})", source=str(path), line=number + 1) from None
    finally:
        handle.close()
    if not pages:
        raise InputError("no result page (a line with Q in its third field); expected a Yandex-format click log"
                         if number else "the file is empty", source=str(path))
    orphans = sum(len(urls) for urls in early.values())
    clicks = [[1 if r in hits else 0 for r in range(len(page))] for page, hits in zip(pages, clicked, strict=True)]
    log = ClickLog.from_arrays(queries, pages, clicks)
    if unshown:
        log.notes.append(f"{unshown} click(s) on documents their session never showed were left out")
    if beyond:
        log.notes.append(f"{len(beyond)} result page(s) showed more than {ranks} documents: ranks {ranks + 1}+ were "
                         f"left out with their {deep_clicks} click(s) (read with ranks= a larger number to keep them)")
    if repeated:
        log.notes.append(f"{repeated} repeated click(s) on an already clicked result were counted once")
    if placed_early:
        log.notes.append(f"{placed_early} click(s) logged before their session's first result page were given "
                         "to that page")
    if orphans:
        log.notes.append(f"{orphans} click(s) of sessions without any result page were left out")
    return log


def _latest_page_showing(pages: list[list[str]], earlier: list[int], url: str) -> tuple[int, int] | None:
    """The latest of the session's pages ``earlier`` that shows ``url``, and its rank."""
    for page in reversed(earlier):
        if url in pages[page]:
            return page, pages[page].index(url)
    return None
