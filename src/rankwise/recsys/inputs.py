"""What a recommender's offline evaluation reads, as encoded arrays: the recommendation lists
(ranked items per user, from scores, ranks or ordered lists), the training interactions
(popularity, novelty, history), the catalogue, item features or embeddings (similarity) and
item groups or genres (calibration, fairness).

Every input comes from a pandas DataFrame (rankwise's, RecBole's ``user_id:token``,
Microsoft Recommenders' ``userID``/``itemID``/``prediction``, pandas' usual names), a CSV/TSV
or Parquet file, or a dict (``{user: [items in rank order]}``, ``{item: vector}``,
``{item: [groups]}``). Items are numbered once over every input, so that one code means one
item everywhere.

>>> data = RecsysData.build({"u1": ["a", "b"], "u2": ["b", "c"]}, train={"u1": ["c"], "u2": ["a", "a"]})
>>> data.vocabulary.tolist(), data.items.tolist(), data.offsets.tolist()
(['a', 'b', 'c'], [0, 1, 1, 2], [0, 2, 4])
>>> data.popularity.tolist()   # training interactions per item (a twice, c once)
[2, 0, 1]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankwise.data.distinct import distinct, member
from rankwise.errors import InputError

USER_COLUMNS = ("user_id", "userid", "user", "uid", "user_id:token", "query_id", "qid", "customer_id")
ITEM_COLUMNS = ("item_id", "itemid", "item", "iid", "item_id:token", "doc_id", "docno", "doc", "product_id")
SCORE_COLUMNS = ("score", "prediction", "rating_pred", "rank_score", "sim")
RANK_COLUMNS = ("rank", "position", "pos")
RATING_COLUMNS = ("rating", "rating:float", "label", "relevance", "weight")
FEATURE_COLUMNS = ("features", "embedding", "vector", "item_features")
GROUP_COLUMNS = ("group", "genre", "genres", "category", "categories", "provider", "class")
DRAW_COLUMNS = ("sample", "draw", "sample_id", "draw_id")
"""A column numbering the rankings drawn from a stochastic policy: each (user, draw) is one list."""
ID_COLUMNS = (*USER_COLUMNS, *ITEM_COLUMNS)
"""Columns read as identifiers (``rankwise.data.tables.exact_ids``: ``007`` and ``7`` stay two
items; ids beyond int64 stay exact)."""


class _Table:
    """A table read through ``rankwise.data.tables`` (CSV, TSV, Parquet, JSONL, DataFrames,
    dicts of columns), column by column, every error naming its file, line and column."""

    def __init__(self, data: Any, source: str) -> None:
        import pyarrow as pa

        from rankwise.data.tables import tables_of

        if isinstance(data, (str, os.PathLike)) and not os.path.exists(data):
            raise InputError("no such file", source=str(data))
        self.pieces = tables_of(data, None, ids=_id_columns(data))
        self.source = source
        self.columns = list(self.pieces[0][2].column_names) if self.pieces else []
        for name, _, table in self.pieces[1:]:
            if table.column_names != self.columns:
                raise InputError(f"columns {table.column_names} differ from the first file's {self.columns}",
                                 source=name)
        self._pa = pa

    def __len__(self) -> int:
        return sum(t.num_rows for _, _, t in self.pieces)

    def ids(self, column: str) -> np.ndarray:
        """Identifiers (numbers stay numbers, so integer ids encode fast); an empty one is refused."""
        from rankwise.data.tables import location

        parts = []
        for name, first, table in self.pieces:
            values = table.column(column)
            if values.null_count:
                row = int(np.flatnonzero(np.asarray(values.is_null().to_numpy(zero_copy_only=False)))[0])
                raise InputError(f"empty {column}", field=column, **location(name, first, row))
            if self._pa.types.is_string(values.type) or self._pa.types.is_large_string(values.type):
                import pyarrow.compute as pc

                blank = np.asarray(pc.equal(pc.utf8_trim_whitespace(values), "").to_numpy(zero_copy_only=False))
                if blank.any():
                    raise InputError(f"empty {column}", field=column,
                                     **location(name, first, int(np.flatnonzero(blank)[0])))
            array = np.asarray(values.to_numpy(zero_copy_only=False))
            if array.dtype.kind == "f":
                bad = ~np.isfinite(array) | (array != np.floor(array))
                if bad.any():
                    row = int(np.flatnonzero(bad)[0])
                    raise InputError(f"expected an id, got {array[row]!r}", field=column, **location(name, first, row))
                array = array.astype(np.int64)
            parts.append(array)
        kinds = {p.dtype.kind for p in parts}
        if len(parts) == 1:
            return parts[0]   # read-only when Arrow lends its buffer: nothing writes into ids
        return np.concatenate(parts) if len(kinds) == 1 else np.concatenate([p.astype(object) for p in parts])

    def numbers(self, column: str) -> np.ndarray:
        """Finite numbers (file, line and column named otherwise)."""
        from rankwise.data.tables import number_column

        parts = [np.asarray(number_column(name, first, table.column(column).combine_chunks(), column),
                            dtype=np.float64) for name, first, table in self.pieces]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0)

    def values(self, column: str) -> list[Any]:
        return [v for _, _, table in self.pieces for v in table.column(column).to_pylist()]

    def where(self, row: int) -> dict[str, Any]:
        """The file and line (or Parquet row) of the table's row ``row`` (0-based, over every
        piece), as keyword arguments of ``InputError``."""
        from rankwise.data.tables import location

        for name, first, table in self.pieces:
            if row < table.num_rows:
                return location(name, first, row)
            row -= table.num_rows
        return {"source": self.source}


def _id_columns(data: Any) -> list[str]:
    """The columns of a file read as identifiers: those named as user or item columns (in any
    case) and those the user named with ``--columns``."""
    if not isinstance(data, (str, os.PathLike)):
        return []
    from rankwise.data.columns import RECSYS_ROLES, named_column
    from rankwise.data.tables import column_names_of

    named = {named_column(key) for key in RECSYS_ROLES} - {None}
    return [c for c in column_names_of(data) if c.lower() in ID_COLUMNS or c in named]


def source_of(data: Any, default: str) -> str:
    """The name errors give an input: its path, or ``default`` for a DataFrame or a dict.

    >>> source_of("groups.csv", "<groups>"), source_of({"a": "x"}, "<groups>")
    ('groups.csv', '<groups>')
    """
    return os.fspath(data) if isinstance(data, (str, os.PathLike)) else default


def _frame(data: Any, source: str) -> _Table:
    if isinstance(data, (str, os.PathLike, Mapping)) or hasattr(data, "columns") or isinstance(data, list):
        return _Table(data, source)
    raise InputError(f"cannot read {source} from a {type(data).__name__}; expected a DataFrame, a file or a dict",
                     source=source)


def _column(frame: _Table, accepted: tuple[str, ...], role: str, source: str, required: bool = True) -> str | None:
    from rankwise.data.columns import RECSYS_ROLES, named_column

    key = next((k for k, r in RECSYS_ROLES.items() if r == role), None)
    named = None if key is None else named_column(key)
    if named is not None and named in frame.columns:
        return named
    lowered = {str(c).lower(): str(c) for c in frame.columns}
    for name in accepted:
        if name in lowered:
            return lowered[name]
    if required:
        hint = f"; name it with --columns {key}=NAME" if key else ""
        raise InputError(f"no {role} column; expected one of {', '.join(accepted)} (found "
                         f"{', '.join(map(str, frame.columns))}){hint}", source=source)
    return None


def _pairs(data: Any, source: str, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    """(users, items, ratings or None, frame) from a {user: [items]} dict or a table."""
    if isinstance(data, Mapping):
        users, items = [], []
        for user, listed in data.items():
            if isinstance(listed, (str, bytes)) or not isinstance(listed, (Sequence, np.ndarray)):
                raise InputError(f"user {user!r}: expected a list of items, got {type(listed).__name__}",
                                 source=source, field=name)
            users += [user] * len(listed)
            items += list(listed)
        return np.asarray(users, dtype=object), np.asarray(items, dtype=object), None, None
    frame = _frame(data, source)
    user = _column(frame, USER_COLUMNS, "user id", source)
    item = _column(frame, ITEM_COLUMNS, "item id", source)
    assert user is not None and item is not None
    rating = _column(frame, RATING_COLUMNS, "rating", source, required=False)
    ratings = None if rating is None else frame.numbers(rating)
    return frame.ids(user), frame.ids(item), ratings, frame


@dataclass
class RecsysData:
    """Encoded inputs. ``users`` (one per list) and ``offsets`` delimit the lists; ``items``
    holds item codes in rank order; ``vocabulary[code]`` is the item id. Training
    interactions are ``train_user``/``train_item`` (user codes index ``train_users``);
    ``popularity[code]`` counts them and ``user_popularity[code]`` counts distinct users.
    ``catalogue`` (codes), ``features`` (items x dimensions, NaN rows for items without one),
    ``groups`` (items x groups weights, rows summing to 1 or 0) are optional. The training
    users are coded when a metric first asks (``train_users``, ``train_user``): coverage,
    Gini and popularity read the items only."""

    users: np.ndarray
    offsets: np.ndarray
    items: np.ndarray
    vocabulary: np.ndarray
    train_user_ids: np.ndarray | None = None
    """The user id of every training interaction, as read (``train_user`` codes them)."""
    train_item: np.ndarray | None = None
    relevant: tuple[np.ndarray, np.ndarray] | None = None
    """(list index, item code) of every pair the held-out data marks relevant, each once,
    sorted by list then item."""
    catalogue: np.ndarray | None = None
    features: np.ndarray | None = None
    groups: np.ndarray | None = None
    group_names: list[str] = field(default_factory=list)
    draws: np.ndarray | None = None
    """Per list, the draw it is of a stochastic ranking (a ``sample`` column); None when each
    user has one list."""
    notes: list[str] = field(default_factory=list)
    _tops: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)
    _matrices: dict[int, Any] = field(default_factory=dict, repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def n_lists(self) -> int:
        return len(self.users)

    def _train_coded(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.train_user_ids is None:
            return None
        if "train_users" not in self._cache:
            codes, ids = sorted_codes(self.train_user_ids)
            self._cache["train_users"] = (np.asarray(ids), codes.astype(np.int64, copy=False))
        return self._cache["train_users"]

    @property
    def train_users(self) -> np.ndarray | None:
        """The distinct training users, sorted (None without training interactions)."""
        coded = self._train_coded()
        return None if coded is None else coded[0]

    @property
    def train_user(self) -> np.ndarray | None:
        """Each training interaction's user code, an index into ``train_users``."""
        coded = self._train_coded()
        return None if coded is None else coded[1]

    @property
    def popularity(self) -> np.ndarray:
        """Training interactions per item code (0 for items never interacted with)."""
        if self.train_item is None:
            raise InputError("no training interactions: give train= (popularity, novelty and history need them)",
                             field="train")
        if "popularity" not in self._cache:
            self._cache["popularity"] = np.bincount(self.train_item, minlength=len(self.vocabulary))
        return self._cache["popularity"]

    def exposure(self, k: int) -> np.ndarray:
        """Top-k slots per item code (computed once per k).

        >>> RecsysData.build({"u1": ["a", "b"], "u2": ["b", "c"]}).exposure(1).tolist()
        [1, 1, 0]
        """
        key = ("exposure", k)
        if key not in self._cache:
            self._cache[key] = np.bincount(self.top_items(k), minlength=len(self.vocabulary))
        return self._cache[key]

    def top_items(self, k: int) -> np.ndarray:
        """The item codes of the top-k rows, list by list (``top(k)[0]``; no list index or
        rank is formed when no list is longer than ``k``)."""
        if k not in self._tops and (not len(self.offsets) > 1 or int(np.diff(self.offsets).max()) <= k):
            return self.items
        return self.top(k)[0]

    def top_width(self, k: int) -> int | None:
        """The length every top-k list has when all have the same (then the top-k rows are a
        lists x width table, list by list); None when lengths differ."""
        lengths = np.minimum(np.diff(self.offsets), k)
        if not len(lengths) or lengths.min() != lengths.max():
            return None
        return int(lengths[0])

    @property
    def user_popularity(self) -> np.ndarray:
        """Distinct training users per item code."""
        if self.train_item is None or self.train_user is None:
            raise InputError("no training interactions: give train=", field="train")
        key = distinct(self.train_user.astype(np.int64) * len(self.vocabulary) + self.train_item)
        return np.bincount(key % len(self.vocabulary), minlength=len(self.vocabulary))

    def lists_of(self, user_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in ``user_ids``, list index) for every list of every given user (a user
        without a list has none; a user with several draws has one pair per draw), in the
        order of ``user_ids``."""
        import pandas as pd

        mine, theirs = _alike(self.users, np.asarray(user_ids))
        lists = pd.DataFrame({"user": mine, "list": np.arange(self.n_lists)})
        rows = pd.DataFrame({"user": theirs, "row": np.arange(len(user_ids))})
        merged = rows.merge(lists, on="user", how="inner", sort=False)
        return merged["row"].to_numpy(dtype=np.int64), merged["list"].to_numpy(dtype=np.int64)

    def add_empty_lists(self, user_ids: np.ndarray) -> None:
        """An empty list for each of ``user_ids`` that has none (a held-out user the system
        recommended nothing to is evaluated as such, never left out), counted in ``notes``."""
        import pandas as pd

        mine, theirs = _alike(self.users, np.asarray(user_ids))
        wanted = pd.unique(theirs)
        missing = np.asarray(wanted)[~pd.Series(wanted, dtype=theirs.dtype).isin(mine).to_numpy()]
        if len(missing) == 0:
            return
        self.users = np.concatenate(_alike(self.users, missing))
        self.offsets = np.concatenate([self.offsets, np.full(len(missing), self.offsets[-1])])
        if self.draws is not None:
            self.draws = np.concatenate([self.draws, np.full(len(missing), None, dtype=object)])
        self._tops.clear()
        self._matrices.clear()
        self._cache = {key: value for key, value in self._cache.items() if key in ("popularity", "train_users")}
        self.notes.append(f"{len(missing)} held-out user(s) have no recommendation list, e.g. {missing[0]!r}: each is "
                          "evaluated as an empty list")

    def is_relevant(self, lists: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Whether each (list index, item code) pair is relevant in the held-out data.

        >>> data = RecsysData.build({"u1": ["a", "b"]}, test={"u1": ["b"]})
        >>> data.is_relevant(np.array([0, 0]), np.array([0, 1])).tolist()
        [False, True]
        """
        if self.relevant is None:
            raise InputError("no held-out interactions: give test= (which items each user liked)", field="test")
        width = len(self.vocabulary)
        known = self.relevant[0] * width + self.relevant[1]   # sorted: by list, then item
        wanted = np.asarray(lists, dtype=np.int64) * width + np.asarray(items, dtype=np.int64)
        return member(wanted, known, known_sorted=True)

    def train_by_list(self) -> tuple[np.ndarray, np.ndarray]:
        """(list index, item code) of every training interaction of a user with a list, once
        per list of that user."""
        if self.train_item is None or self.train_user is None or self.train_users is None:
            raise InputError("no training interactions: give train= (each user's history)", field="train")
        row, owner = self.lists_of(self.train_users[self.train_user])
        return owner, self.train_item[row]

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(item codes, list index, rank 0-based) of every row within the top ``k`` of its list,
        list by list (computed once per k)."""
        cached = self._tops.get(k)
        if cached is None:
            cached = self._tops[k] = self._top(k)
        return cached

    def list_items(self, k: int) -> Any:
        """The top-k lists as a sparse (lists x items) matrix of slot counts (computed once per k)."""
        cached = self._matrices.get(k)
        if cached is None:
            from scipy import sparse

            items, owner, _ = self.top(k)
            cached = self._matrices[k] = sparse.csr_matrix(
                (np.ones(len(items)), (owner, items)), shape=(self.n_lists, len(self.vocabulary)))
        return cached

    def _top(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        width = self.top_width(k)
        if width is not None and width * self.n_lists == len(self.items):   # every list k long or shorter, alike
            return (self.items, np.repeat(np.arange(self.n_lists), width),
                    np.tile(np.arange(width), self.n_lists))
        lengths = np.diff(self.offsets)
        rank = np.arange(len(self.items)) - np.repeat(self.offsets[:-1], lengths)
        owner = np.repeat(np.arange(self.n_lists), lengths)
        keep = rank < k
        return self.items[keep], owner[keep], rank[keep]

    def catalogue_size(self) -> int:
        """The catalogue given, else the distinct items of the training interactions
        (Microsoft Recommenders' denominator of catalogue coverage)."""
        if self.catalogue is not None:
            return len(self.catalogue)
        if self.train_item is not None:
            return int(np.count_nonzero(self.popularity))
        raise InputError("no catalogue: give catalogue= or train= (coverage is a share of the catalogue)",
                         field="catalogue")

    @classmethod
    def build(cls, recommendations: Any, train: Any = None, test: Any = None, catalogue: Any = None,
              features: Any = None, groups: Any = None, rating_threshold: float | None = None) -> RecsysData:
        """Read and encode every input (see the module). ``recommendations``: a dict of ordered
        lists, or a table with user and item columns and a score (highest first), a rank
        (lowest first) or neither (rows in order). ``test``: held-out interactions (relevance
        for serendipity; with ``rating_threshold`` only ratings at or above it count)."""
        import pandas as pd

        source = "<recommendations>" if not isinstance(recommendations, (str, os.PathLike)) else str(recommendations)
        users, items, _, frame = _pairs(recommendations, source, "recommendations")
        if len(items) == 0:
            raise InputError("no recommendations: expected at least one (user, item) row", source=source)
        notes: list[str] = []
        draw_ids = None
        rank_key = None
        if frame is not None:
            rank_key = _rank_key(frame, source)
            draw = _column(frame, DRAW_COLUMNS, "draw", source, required=False)
            draw_ids = None if draw is None else frame.ids(draw)
        tied = _tied_ranks(frame, source, users, draw_ids, rank_key) if rank_key is not None else 0
        if tied:
            notes.append(f"{tied} recommendation(s) repeat a rank their list already has: tied items keep the "
                         "file's order")
        # group by user (and draw), keeping the order of first appearance and the rank order inside each list
        if draw_ids is None:
            grouped = run_codes(users)
            if grouped is not None and (rank_key is None or _ranked_within(grouped[0], rank_key)):
                user_codes, user_ids = grouped   # the usual table: list by list, in rank order
                together = True
            else:
                together = False
                user_codes, user_ids = pd.factorize(keys_of(users), sort=False)
                if rank_key is not None and not _in_list_order(user_codes, rank_key):
                    order = np.argsort(rank_key, kind="stable")
                    users, items = users[order], items[order]
                    user_codes, user_ids = pd.factorize(keys_of(users), sort=False)
            list_draws = None
        else:
            if rank_key is not None:
                order = np.argsort(rank_key, kind="stable")
                users, items, draw_ids = users[order], items[order], draw_ids[order]
            keys = pd.DataFrame({"user": pd.Series(users, dtype=object), "draw": pd.Series(draw_ids, dtype=object)})
            user_codes = keys.groupby(["user", "draw"], sort=False).ngroup().to_numpy()
            first = np.unique(user_codes, return_index=True)[1]
            user_ids, list_draws = users[first], np.asarray(draw_ids[first], dtype=object)
            together = False
        if together or (len(user_codes) and bool(np.all(user_codes[1:] >= user_codes[:-1]))):
            users_sorted = user_codes   # each list's rows already together: no sort
        else:
            order = np.argsort(user_codes, kind="stable")
            users_sorted, items = user_codes[order], items[order]
        extra: list[np.ndarray] = [items]
        train_pairs = _pairs(train, "<train>" if not isinstance(train, (str, os.PathLike)) else str(train),
                             "train") if train is not None else None
        if train_pairs is not None and len(train_pairs[1]) == 0:
            raise InputError("no training interactions: expected at least one (user, item) row (popularity, novelty "
                             "and the catalogue come from them)",
                             source="<train>" if not isinstance(train, (str, os.PathLike)) else str(train))
        test_pairs = _pairs(test, "<test>" if not isinstance(test, (str, os.PathLike)) else str(test),
                            "test") if test is not None else None
        for pairs in (train_pairs, test_pairs):
            if pairs is not None:
                extra.append(pairs[1])
        if isinstance(catalogue, (str, os.PathLike)):
            catalogue, read_notes = read_catalogue(catalogue)
            notes.extend(read_notes)
        catalogue_ids = None if catalogue is None else \
            (catalogue if isinstance(catalogue, np.ndarray) else np.asarray(list(catalogue), dtype=object))
        if catalogue_ids is not None:
            extra.append(catalogue_ids)
        feature_ids, feature_matrix = _features(features) if features is not None else (None, None)
        if feature_ids is not None:
            extra.append(feature_ids)
        group_ids, group_lists = _groups(groups) if groups is not None else (None, None)
        if group_ids is not None:
            extra.append(group_ids)
        coded, vocabulary = shared_codes(extra)
        codes = iter(coded[1:])
        vocabulary = np.asarray(vocabulary, dtype=object)
        item_codes = coded[0]
        counts = np.bincount(users_sorted, minlength=len(user_ids))
        duplicated = repeated_in_lists(users_sorted, item_codes, len(vocabulary), counts)
        if duplicated.any():
            notes.append(f"{int(duplicated.sum())} repeated (user, item) row(s) in the recommendations: the first "
                         "occurrence of each is kept")
            users_sorted, item_codes = users_sorted[~duplicated], item_codes[~duplicated]
            counts = np.bincount(users_sorted, minlength=len(user_ids))
        data = cls(np.asarray(user_ids), np.concatenate(([0], np.cumsum(counts))), item_codes,
                   vocabulary, notes=notes, draws=list_draws)
        if train_pairs is not None:
            n = len(train_pairs[1])
            data.train_user_ids = train_pairs[0]
            data.train_item = next(codes)
        if test_pairs is not None:
            n = len(test_pairs[1])
            keep = np.ones(n, dtype=bool)
            if rating_threshold is not None:
                if test_pairs[2] is None:
                    raise InputError("rating_threshold needs a rating column in the test data", field="test")
                keep = test_pairs[2] >= rating_threshold
            test_codes = next(codes)
            data.add_empty_lists(test_pairs[0][keep])
            row, owner = data.lists_of(test_pairs[0][keep])
            key = distinct(owner.astype(np.int64) * len(vocabulary) + test_codes[keep][row])
            data.relevant = (key // len(vocabulary), key % len(vocabulary))
        if catalogue_ids is not None:
            data.catalogue = distinct(next(codes))
        universe = data.catalogue if data.catalogue is not None else \
            (np.flatnonzero(data.popularity) if data.train_item is not None
             else None)
        if universe is not None:
            known = np.zeros(len(vocabulary), dtype=bool)
            known[universe] = True
            outside = np.flatnonzero((np.bincount(data.items, minlength=len(vocabulary)) > 0) & ~known)
            if len(outside):
                notes.append(f"{len(outside)} recommended item(s) are not in the catalogue ("
                             f"{'the one given' if data.catalogue is not None else 'the training items'}), e.g. "
                             f"{vocabulary[outside[0]]!r}: coverage counts catalogue items only")
        if feature_ids is not None and feature_matrix is not None:
            matrix = np.full((len(vocabulary), feature_matrix.shape[1]), np.nan)
            matrix[next(codes)] = feature_matrix
            data.features = matrix
        if group_ids is not None and group_lists is not None:
            ungrouped = sum(1 for listed in group_lists if not listed)
            if ungrouped:
                notes.append(f"{ungrouped} item(s) have an empty group field: they belong to no group (calibration "
                             "and group fairness leave them out)")
            names = sorted({g for gs in group_lists for g in gs})
            index = {g: j for j, g in enumerate(names)}
            weights = np.zeros((len(vocabulary), len(names)))
            for code, listed in zip(next(codes).tolist(), group_lists, strict=True):
                for g in listed:   # an item in several groups counts 1/|groups| in each (Steck 2018)
                    weights[code, index[g]] += 1.0 / len(listed)
            data.groups, data.group_names = weights, names
        return data


def sorted_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct ids in sorted order) with ``distinct[codes] == ids``. Non-negative
    integers in a range not much wider than the array are coded by one pass over a table of
    the range (no hashing, no sort); anything else through ``pandas.factorize``.

    >>> codes, names = sorted_codes(np.array([7, 3, 7, 0]))
    >>> codes.tolist(), names.tolist()
    ([2, 1, 2, 0], [0, 3, 7])
    """
    coded, names = shared_codes([ids])
    return coded[0], names


def shared_codes(parts: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """One coding of several id arrays: (each part's int64 codes, the distinct ids of all
    parts in sorted order), as ``sorted_codes`` of the parts joined would give, without
    joining non-negative integer ids in a narrow range (one table of the range marks
    what occurs, each part is read through it).

    >>> codes, names = shared_codes([np.array([7, 3]), np.array([3, 9])])
    >>> [c.tolist() for c in codes], names.tolist()
    ([[1, 0], [0, 2]], [3, 7, 9])
    >>> codes, names = shared_codes([np.array(["b", "2"], dtype=object), np.array([2])])
    >>> [c.tolist() for c in codes], names.tolist()   # integer ids meet text ids as their text
    ([[1, 0], [0]], ['2', 'b'])
    """
    parts = [as_integers(p) for p in parts]
    total = sum(len(p) for p in parts)
    kinds = {p.dtype.kind for p in parts if len(p)}
    if kinds and kinds <= {"i", "u"}:
        low = min(int(p.min()) for p in parts if len(p))
        high = max(int(p.max()) for p in parts if len(p))
        if low >= 0 and high < 4 * total + 1024:
            present = np.zeros(high + 1, dtype=bool)
            for part in parts:
                present[part] = True
            code_of = np.cumsum(present, dtype=np.int64) - 1
            return [code_of[part] for part in parts], np.flatnonzero(present).astype(parts[0].dtype)
    import pandas as pd

    joined = np.concatenate(parts) if len(kinds) <= 1 and kinds <= {"i", "u"} else \
        np.concatenate([as_text(p) for p in parts])
    factorized, distinct_ids = pd.factorize(keys_of(joined), sort=True)
    codes, vocabulary = factorized.astype(np.int64, copy=False), np.asarray(distinct_ids)
    bounds = np.cumsum([0] + [len(p) for p in parts])
    return [codes[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)], vocabulary


def repeated(keys: np.ndarray) -> np.ndarray:
    """Whether each key repeats an earlier one (pandas' ``duplicated``), by one sort: no hash
    table over millions of keys.

    >>> repeated(np.array([5, 3, 5, 5, 1])).tolist()
    [False, False, True, True, False]
    """
    order = np.argsort(keys, kind="stable")   # equal keys keep their row order: the first comes first
    ordered = keys[order]
    out = np.zeros(len(keys), dtype=bool)
    out[order[1:][ordered[1:] == ordered[:-1]]] = True
    return out


SHORT_LISTS = 32
"""Lists up to this long are checked for a repeated item by comparing each row with the rows
before it in its list (one vectorised pass per distance), longer ones by one sort."""


def repeated_in_lists(lists: np.ndarray, items: np.ndarray, width: int, counts: np.ndarray | None = None) -> np.ndarray:
    """Whether each row repeats an item earlier in its own list; ``lists`` is non-decreasing
    (each list's rows together), ``items`` are codes below ``width``; ``counts``: the rows of
    each list, when known.

    >>> repeated_in_lists(np.array([0, 0, 0, 1, 1]), np.array([4, 2, 4, 4, 1]), 5).tolist()
    [False, False, True, False, False]
    >>> repeated_in_lists(np.array([0, 0, 1, 1]), np.array([3, 3, 1, 2]), 5).tolist()   # lists alike long
    [False, True, False, False]
    """
    counts = np.bincount(lists) if counts is None else counts
    longest = int(counts.max()) if len(lists) else 0
    if longest > SHORT_LISTS:
        return repeated(lists.astype(np.int64) * width + items)
    out = np.zeros(len(items), dtype=bool)
    if longest and int(counts.min()) == longest and longest * len(counts) == len(items):   # one row per list
        ordered = np.sort(items.reshape(-1, longest), axis=1)
        if not bool((ordered[:, 1:] == ordered[:, :-1]).any()):
            return out   # the usual case, told by one sort of each row
        slots = items.reshape(-1, longest).T.copy()   # slot by slot, each a contiguous column
        flags = np.zeros(slots.shape, dtype=bool)
        for later in range(1, longest):
            for earlier in range(later):
                flags[later] |= slots[later] == slots[earlier]
        return flags.T.ravel()
    for distance in range(1, longest):
        out[distance:] |= (items[distance:] == items[:-distance]) & (lists[distance:] == lists[:-distance])
    return out


def keys_of(ids: np.ndarray) -> Any:
    """Ids as a pandas Series: integers stay integers (hashed natively, fast), anything
    else is compared as Python objects.

    >>> keys_of(np.array([3, 1])).dtype.kind, keys_of(np.array(["a", 1], dtype=object)).dtype.kind
    ('i', 'O')
    """
    import pandas as pd

    return pd.Series(ids) if ids.dtype.kind in "iu" else pd.Series(ids, dtype=object)


def _alike(first: np.ndarray, second: np.ndarray) -> tuple[Any, Any]:
    """Two id arrays as Series of one kind (integers when both are, text otherwise: ``as_text``),
    so that a merge or a membership test compares like with like.

    >>> [s.dtype.kind for s in _alike(np.array([1, 2]), np.array([2]))]
    ['i', 'i']
    >>> [s.tolist() for s in _alike(np.array([1, 2]), np.array(["2"], dtype=object))]
    [['1', '2'], ['2']]
    """
    import pandas as pd

    first, second = as_integers(first), as_integers(second)
    if first.dtype.kind in "iu" and second.dtype.kind in "iu":
        return pd.Series(first.astype(np.int64)), pd.Series(second.astype(np.int64))
    return pd.Series(as_text(first), dtype=object), pd.Series(as_text(second), dtype=object)


def as_text(ids: np.ndarray) -> np.ndarray:
    """Ids as text objects: where one input's ids are integers (a CSV file's,
    ``rankwise.data.tables.exact_ids``) and another's text (Parquet, a list), the item 10 and
    the item '10' are one item.

    >>> as_text(np.array([10, 2])).tolist(), as_text(np.array(["a", 3], dtype=object)).tolist()
    (['10', '2'], ['a', '3'])
    """
    import pandas as pd

    if ids.dtype.kind == "O" and pd.api.types.infer_dtype(ids, skipna=False) == "string":
        return ids
    if ids.dtype.kind in "iuU":
        return ids.astype(str).astype(object)
    return np.array([v if isinstance(v, str) else str(v) for v in ids.tolist()], dtype=object)


def as_integers(ids: np.ndarray) -> np.ndarray:
    """An object array of Python integers (the keys of a dict) as int64, so that it meets a
    file's integer ids as integers; any other array as it is.

    >>> as_integers(np.array([3, 1], dtype=object)).dtype, as_integers(np.array(["a"], dtype=object)).dtype
    (dtype('int64'), dtype('O'))
    """
    import pandas as pd

    if ids.dtype.kind == "O" and len(ids) and pd.api.types.infer_dtype(ids, skipna=False) == "integer":
        try:
            return ids.astype(np.int64)
        except OverflowError:   # beyond int64: compared as objects
            return ids
    return ids


def _rank_key(frame: _Table, source: str) -> np.ndarray | None:
    """What puts each user's list in rank order, ascending: the negated score, the rank, or
    None when the rows are in order as given."""
    score = _column(frame, SCORE_COLUMNS, "score", source, required=False)
    rank = _column(frame, RANK_COLUMNS, "rank", source, required=False)
    if score is not None:
        return -frame.numbers(score)
    if rank is not None:
        return frame.numbers(rank)
    return None


def _tied_ranks(frame: _Table, source: str, users: np.ndarray, draws: np.ndarray | None, rank: np.ndarray) -> int:
    """How many rows repeat a rank that another row of the same list (user, and draw) holds,
    when the order ``rank`` (``_rank_key``) comes from a rank column (a score may tie; a rank
    names one place).

    >>> import pandas as pd
    >>> table = _Table(pd.DataFrame({"user": ["u", "u", "v", "v"], "item": list("abab"), "rank": [1, 1, 1, 2]}), "t")
    >>> _tied_ranks(table, "t", np.array(["u", "u", "v", "v"], dtype=object), None, np.array([1, 1, 1, 2]))
    1
    """
    if _column(frame, SCORE_COLUMNS, "score", source, required=False) is not None or len(users) < 2:
        return 0
    import pandas as pd

    grouped = run_codes(users) if draws is None else None
    codes = grouped[0] if grouped is not None else pd.factorize(keys_of(users), sort=False)[0]
    if draws is not None:
        codes = codes * (len(draws) + 1) + pd.factorize(keys_of(draws), sort=False)[0]
    if not _in_list_order(codes, rank):
        order = np.lexsort((rank, codes))
        codes, rank = codes[order], rank[order]
    return int(np.count_nonzero((rank[1:] == rank[:-1]) & (codes[1:] == codes[:-1])))


def run_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """When the rows of each id come together, (codes in order of first appearance, the ids in
    that order) from one pass over neighbours, as ``pandas.factorize`` would give them; None
    when an id comes back after another (then only a hash table tells).

    >>> codes, names = run_codes(np.array([7, 7, 3, 5, 5]))
    >>> codes.tolist(), names.tolist()
    ([0, 0, 1, 2, 2], [7, 3, 5])
    >>> run_codes(np.array([7, 3, 7])) is None
    True
    """
    import pandas as pd

    if not len(ids):
        return None
    change = np.asarray(ids[1:] != ids[:-1], dtype=bool)
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    names = ids[starts]
    if len(pd.unique(keys_of(names))) != len(names):
        return None
    codes = np.empty(len(ids), dtype=np.int64)
    codes[0] = 0
    np.cumsum(change, out=codes[1:])
    return codes, names


def _ranked_within(codes: np.ndarray, key: np.ndarray) -> bool:
    """Whether ``key`` is non-decreasing inside each run of equal, non-decreasing ``codes``.

    >>> _ranked_within(np.array([0, 0, 1, 1]), np.array([1.0, 2.0, 0.5, 0.7]))
    True
    >>> _ranked_within(np.array([0, 0]), np.array([2.0, 1.0]))
    False
    """
    falls = key[1:] < key[:-1]
    return not bool(np.any(falls & (codes[1:] == codes[:-1])))


def _in_list_order(codes: np.ndarray, key: np.ndarray) -> bool:
    """Whether the rows already come list by list (each user's rows together, users in order of
    first appearance) and in rank order inside each list: then no sort is needed, each list's
    rows are in the order the stable sort by ``key`` would give, and the lists keep the order
    they come in.

    >>> _in_list_order(np.array([0, 0, 1]), np.array([-3.0, -1.0, -2.0]))
    True
    >>> _in_list_order(np.array([0, 1, 0]), np.array([1.0, 2.0, 3.0]))   # user 0 comes back
    False
    >>> _in_list_order(np.array([0, 0]), np.array([2.0, 1.0]))           # out of rank order
    False
    """
    if len(codes) < 2:
        return True
    return bool(np.all(codes[1:] >= codes[:-1])) and _ranked_within(codes, key)


def _features(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """(item ids, items x dimensions) from {item: vector}, a table with an item column and a
    vector column, or a table with an item column and numeric columns."""
    if isinstance(data, Mapping):
        ids = np.asarray(list(data), dtype=object)
        rows = [np.asarray(v, dtype=np.float64).ravel() for v in data.values()]
    else:
        source = source_of(data, "<features>")
        frame = _frame(data, source)
        item = _column(frame, ITEM_COLUMNS, "item id", source)
        assert item is not None
        ids = frame.ids(item)
        _refuse_repeated_items(ids, frame, "features")
        vector = _column(frame, FEATURE_COLUMNS, "feature vector", source, required=False)
        if vector is not None:
            rows = [np.asarray(v, dtype=np.float64).ravel() for v in frame.values(vector)]
        else:
            numeric = [c for c in frame.columns if c != item]
            if not numeric:
                raise InputError("no feature columns: expected a vector column "
                                 f"({', '.join(FEATURE_COLUMNS)}) or numeric columns", source=source)
            return ids, np.column_stack([frame.numbers(c) for c in numeric])
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise InputError(f"feature vectors of different lengths {sorted(widths)}",
                         source=source_of(data, "<features>"))
    return ids, np.vstack(rows) if rows else np.zeros((0, 0))


def read_catalogue(path: str | os.PathLike[str]) -> tuple[np.ndarray, list[str]]:
    """The item ids of a catalogue file and notes on what was left out: one id per line (text,
    ``.gz`` too; a first line naming an item column, such as ``item_id``, is a header), or a
    CSV, TSV or Parquet table with an item column. Ids are read as the recommendation files'
    ids are (``rankwise.data.tables.exact_ids``: ``10`` is the integer 10, ``007`` stays text).
    Empty lines and items listed twice are counted in the notes; a file with no item is an error.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "items.txt")
    >>> _ = open(path, "w").write("item_id\\n10\\n20\\n\\n20\\n30\\n")
    >>> ids, notes = read_catalogue(path)
    >>> ids.tolist()
    [10, 20, 30]
    >>> notes
    ['items.txt: 1 empty line(s) skipped', 'items.txt: 1 item(s) listed more than once: each counts once']
    """
    import pyarrow as pa

    from rankwise.data.id_lines import read_id_lines
    from rankwise.data.tables import exact_ids
    from rankwise.data.trec_io import check_file

    source = os.fspath(path)
    shown = os.path.basename(source)
    check_file(path)
    lower = source.lower()
    if lower.endswith((".csv", ".tsv", ".parquet", ".pq", ".jsonl", ".csv.gz", ".tsv.gz")):
        frame = _frame(path, source)
        column = _column(frame, ITEM_COLUMNS, "item id", source)
        assert column is not None
        ids = frame.ids(column)
        if len(ids) == 0:
            raise InputError("no items: expected a table with an item column and a row per item", source=source)
        notes: list[str] = []
    else:
        kept, notes = read_id_lines(path, ITEM_COLUMNS, "item", note_repeats=False)   # said below, for tables too
        ids = np.asarray(exact_ids(pa.chunked_array([kept], type=pa.string())).to_numpy(zero_copy_only=False))
        ids = ids if ids.dtype.kind in "iu" else ids.astype(object)
    unique = ~keys_of(ids).duplicated().to_numpy()
    if not unique.all():
        notes.append(f"{shown}: {int((~unique).sum())} item(s) listed more than once: each counts once")
    return ids[unique], notes


def _groups(data: Any) -> tuple[np.ndarray, list[list[str]]]:
    """(item ids, groups of each) from {item: group or [groups]} or a table with an item column
    and a group column (several groups separated by ``|``, MovieLens' genres)."""
    if isinstance(data, Mapping):
        ids = np.asarray(list(data), dtype=object)
        values = list(data.values())
    else:
        source = source_of(data, "<groups>")
        frame = _frame(data, source)
        item = _column(frame, ITEM_COLUMNS, "item id", source)
        group = _column(frame, GROUP_COLUMNS, "group", source)
        assert item is not None and group is not None
        ids, values = frame.ids(item), frame.values(group)
    lists = [[] if v is None else [str(g) for g in v] if isinstance(v, (list, tuple, set, np.ndarray))
             else [g for g in str(v).split("|") if g] for v in values]
    return _groups_per_item(ids, lists)


def _groups_per_item(ids: np.ndarray, lists: list[list[str]]) -> tuple[np.ndarray, list[list[str]]]:
    """Each item once with every group its rows give (a table of one row per item and genre
    lists an item on several rows: its groups are their union, so it weighs 1 in all).

    >>> ids, lists = _groups_per_item(np.array(["i1", "i2", "i1"], dtype=object), [["A"], ["B"], ["C", "A"]])
    >>> ids.tolist(), lists
    (['i1', 'i2'], [['A', 'C'], ['B']])
    """
    merged: dict[Any, list[str]] = {}
    for item, listed in zip(keys_of(ids).tolist(), lists, strict=True):
        known = merged.setdefault(item, [])
        known.extend(g for g in listed if g not in known)
    if len(merged) == len(ids):
        return ids, lists
    kept = ids[~keys_of(ids).duplicated().to_numpy()]
    return kept, [merged[k] for k in keys_of(kept).tolist()]


def _refuse_repeated_items(ids: np.ndarray, frame: _Table, what: str) -> None:
    """An error naming the line of the first item listed a second time (two vectors for one
    item: which one would hold?)."""
    keys = keys_of(ids)
    repeats = np.flatnonzero(keys.duplicated().to_numpy())
    if len(repeats):
        row = int(repeats[0])
        first = int(np.flatnonzero((keys == keys.iloc[row]).to_numpy())[0])
        raise InputError(f"item {ids[row]!r} is listed twice (first on {_place(frame.where(first))}); expected one "
                         f"row per item in the {what}", field="item", **frame.where(row))


def _place(where: dict[str, Any]) -> str:
    return f"line {where['line']}" if "line" in where else str(where["source"])
