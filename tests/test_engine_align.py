"""The join of a run with its qrels: query codes, label lookup and duplicate rows, on the fast
paths a chunk or partition of a large run takes (binary search of few queries among many, a
vocabulary narrowed to the chunk's judged documents, rows already in rank order)."""

from __future__ import annotations

import importlib

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankwise
from rankwise.data.containers import Qrels, Run
from rankwise.engine.conventions import Conventions
from rankwise.engine.duplicates import block_starts, earliest_repeat
from rankwise.errors import InputError

align = importlib.import_module("rankwise.engine.align")


def _order_rows(run: Run, qcode: np.ndarray, rows: np.ndarray | None, conv: Conventions):
    """The rows in rank order under the tie rule, as ``align`` orders them (every tied group)."""
    local, tied = align._score_order(run, qcode, rows, conv)
    return align._tie_rule(run, rows, local, tied, conv)


def _qrels(pairs: dict[tuple[str, str], int]) -> Qrels:
    keys = list(pairs)
    return Qrels(pa.array([q for q, _ in keys]), pa.array([d for _, d in keys]),
                 np.array(list(pairs.values()), dtype=np.int64))


ids = st.text(alphabet="abq0129\x00é", min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(judged=st.lists(ids, min_size=1, max_size=60, unique=True), asked=st.lists(ids, max_size=20))
def test_query_codes_equal_a_dictionary(judged: list[str], asked: list[str]) -> None:
    index = align.QrelsIndex.build(_qrels({(q, "d"): 1 for q in judged}))
    position = {q: i for i, q in enumerate(index.query_ids.tolist())}
    expected = [position.get(q, -1) for q in asked]
    assert index.query_codes(pa.array(asked, type=pa.string())).tolist() == expected
    # the hash lookup (many values) gives the same codes
    assert align._found_or_minus_one(align.kernels.index_in(pa.array(asked, type=pa.string()),
                                                             index.query_array)).tolist() == expected


def test_query_codes_binary_search_is_taken_and_exact() -> None:
    judged = [f"q{i}" for i in range(1000)]
    index = align.QrelsIndex.build(_qrels({(q, "d"): 1 for q in judged}))
    asked = pa.array(["q999", "q5", "nope", "q10", "q1000"])
    assert 8 * len(asked) < len(index.query_ids) and index.python_sorted  # the binary-search path
    codes = index.query_codes(asked).tolist()
    assert [index.query_ids[c] if c >= 0 else None for c in codes] == ["q999", "q5", None, "q10", None]


def test_ids_that_differ_by_a_trailing_nul_fall_back_to_hashing() -> None:
    # NumPy's string sort ignores trailing NULs: "a" and "a\0" may come out of Python's order
    judged = ["a\x00", "a"] + [f"z{i}" for i in range(40)]
    index = align.QrelsIndex.build(_qrels({(q, "d"): 1 for q in judged}))
    codes = index.query_codes(pa.array(["a", "a\x00"]))
    assert [index.query_ids[c] for c in codes] == ["a", "a\x00"]


@pytest.mark.parametrize("layout", ["grouped", "shuffled", "dictionary", "chunked"])
def test_query_codes_of_a_run_column(layout: str) -> None:
    rng = np.random.default_rng(3)
    judged = [f"q{i}" for i in range(500)]
    index = align.QrelsIndex.build(_qrels({(q, "d"): 1 for q in judged}))
    queries = np.repeat([f"q{i}" for i in rng.choice(700, size=40, replace=False)], 25)  # some unjudged
    if layout == "shuffled":
        queries = rng.permutation(queries)
    column: pa.Array | pa.ChunkedArray = pa.array(queries.tolist())
    if layout == "dictionary":
        column = column.dictionary_encode()
    if layout == "chunked":
        column = pa.chunked_array([column.slice(0, 333), column.slice(333, 1), column.slice(334)])
    position = {q: i for i, q in enumerate(index.query_ids.tolist())}
    codes, starts = align._coded_queries(column, index)
    assert codes.tolist() == [position.get(q, -1) for q in queries]
    # the block starts found chunk by chunk are those of the codes (two unjudged queries in a
    # row are one block of -1; a block may go on across a chunk boundary)
    assert starts.tolist() == block_starts(codes).tolist()


@settings(max_examples=200)
@given(st.lists(st.tuples(st.sampled_from(["q0", "q1", "q2", "x", "y"]), st.integers(1, 4)), max_size=12),
       st.lists(st.integers(0, 30), max_size=4), st.booleans())
def test_block_starts_found_with_the_codes_are_those_of_the_codes(blocks: list[tuple[str, int]], cuts: list[int],
                                                                  dictionary: bool) -> None:
    index = align.QrelsIndex.build(_qrels({(q, "d"): 1 for q in ["q0", "q1", "q2"]}))
    queries = [q for q, size in blocks for _ in range(size)]
    edges = sorted({min(c, len(queries)) for c in cuts} | {0, len(queries)})
    column = pa.array(queries, pa.string())
    pieces = [column.slice(a, b - a) for a, b in zip(edges[:-1], edges[1:], strict=True)] or [column]
    if dictionary:
        pieces = [piece.dictionary_encode() for piece in pieces]
    chunked = pa.chunked_array(pieces, pieces[0].type)
    codes, starts = align._coded_queries(chunked, index)
    assert starts.tolist() == block_starts(codes).tolist()


def test_lookup_with_the_chunks_own_vocabulary_equals_the_whole() -> None:
    rng = np.random.default_rng(5)
    pairs = {(f"q{q}", f"d{d}"): int(rng.integers(-1, 4)) for q in range(300) for d in rng.choice(5000, 6)}
    index = align.QrelsIndex.build(_qrels(pairs))
    # a chunk of 10 queries: 60 judged documents against a vocabulary of about 1,700
    chunk_queries = [f"q{q}" for q in range(100, 110)]
    rows = [(q, f"d{d}") for q in chunk_queries for d in rng.choice(5000, 50)]
    rows += [(q, d) for (q, d) in pairs if q in chunk_queries]  # every judged pair once
    qcode, _ = align._coded_queries(pa.array([q for q, _ in rows]), index)
    vocabulary, codes = index._vocabulary_for(qcode)
    assert codes is not None and len(vocabulary) <= 60  # the narrowed path is the one tested
    labels = index.lookup(qcode, pa.array([d for _, d in rows]))
    # not judged: NONPOOL; judged negative (-1: judged, not pooled): UNJUDGED
    expected = [align.NONPOOL if (q, d) not in pairs else pairs[q, d] if pairs[q, d] >= 0 else align.UNJUDGED
                for q, d in rows]
    assert labels.tolist() == expected


# "ppwpwhl" and "jfhekor" share the high 32 bits of their 64-bit hash (found by a birthday search)
COLLIDING = ("ppwpwhl", "jfhekor")


def test_the_hash_pair_collides() -> None:
    from rankwise.engine.strings import string_hashes

    h = string_hashes(pa.array(list(COLLIDING))) >> np.uint64(32)
    assert h[0] == h[1]


def _collision_run() -> dict[str, dict[str, float]]:
    x, y = COLLIDING
    # rows in file order: x (3.0), y (2.0), x again (5.0): the duplicate is not next to its twin
    # in an order by (query, hash) alone
    return {"q1": [(x, 3.0), (y, 2.0), (x, 5.0), ("other", 1.0)]}


def _trec_lines(run: dict[str, list[tuple[str, float]]]) -> str:
    return "".join(f"{q} Q0 {d} {r} {s} t\n" for q, rows in run.items() for r, (d, s) in enumerate(rows, 1))


def test_a_duplicate_between_colliding_documents_is_found(tmp_path) -> None:
    x, y = COLLIDING
    run_file = tmp_path / "run.trec"
    run_file.write_text(_trec_lines(_collision_run()))
    qrels = {"q1": {x: 1, y: 0}}
    with pytest.raises(InputError, match=rf"run.trec:3: field 'doc': document '{x}' is listed twice for query "
                                         r"'q1' \(first at line 1; 1 duplicate row\(s\) in all\)"):
        rankwise.evaluate(qrels, str(run_file), ["P@1"])
    # first: the x at 3.0 stays, ranked 1st (3.0 > 2.0 > 1.0): P@1 = 1
    first = rankwise.evaluate(qrels, str(run_file), ["P@1", "num_ret"], duplicates="first")
    assert first.summary.loc[first.summary.index[0], "num_ret"] == 3
    # best: the x at 5.0 stays
    best = rankwise.evaluate(qrels, str(run_file), ["P@1", "num_ret"], duplicates="best")
    assert best.summary.iloc[0]["num_ret"] == 3 and best.summary.iloc[0]["P@1"] == 1.0
    assert any("1 duplicate (query, document) row(s) dropped" in w for w in first.warnings)


def test_the_earliest_repeat_is_named() -> None:
    # sorted groups: (2, 9) and (4, 5, 7): row 5 is the earliest repeat, its twin row 4
    ordered = np.array([2, 9, 4, 5, 7])
    repeats = np.array([False, True, False, True, True])
    assert earliest_repeat(ordered, repeats) == (5, 4)


def test_a_subset_of_rows_in_rank_order_is_not_sorted_again() -> None:
    run = Run(pa.array(["q1"] * 4 + ["q2"] * 3), pa.array(list("abcdxyz")),
              np.array([4.0, 3.0, 3.0, 1.0, 9.0, 8.0, 8.0]), "r", "<run>")
    qcode = np.array([0, 0, 0, 0, 1, 1, 1])
    rows = np.array([0, 2, 3, 4, 5, 6])
    order, patch = _order_rows(run, qcode, rows, Conventions())
    # in order already; the tie 8.0 (y, z) stays y, z under trec's rule (doc descending: z first)
    assert patch is None and order.tolist() == [0, 2, 3, 4, 6, 5]
    order, _ = _order_rows(run, qcode, rows, Conventions(ties="input"))
    assert order.tolist() == [0, 2, 3, 4, 5, 6]


def test_duplicates_first_equals_the_run_without_them() -> None:
    rng = np.random.default_rng(11)
    rows = []
    for q in range(200):
        docs = [f"d{d}" for d in rng.integers(0, 60, size=30)]  # repeats within a query
        scores = -np.sort(-np.round(rng.random(30), 2))
        rows += [(f"q{q}", d, float(s)) for d, s in zip(docs, scores, strict=True)]
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(0, 60, 3)} for q in range(200)}
    seen, kept = set(), []
    for q, d, s in rows:
        if (q, d) not in seen:
            seen.add((q, d))
            kept.append((q, d, s))
    metrics = ["ndcg@10", "map", "recip_rank", "P@5"]
    got = rankwise.evaluate(qrels, _frame(rows), metrics, duplicates="first")
    want = rankwise.evaluate(qrels, _frame(kept), metrics)
    assert got.per_query.equals(want.per_query)
    assert any(f"{len(rows) - len(kept)} duplicate" in w for w in got.warnings)


def _frame(rows: list[tuple[str, str, float]]):
    import pandas as pd

    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


@pytest.mark.parametrize("ties", ["trec", "docid_asc", "input"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_queries_grouped_in_numeric_order_are_reordered_by_block(ties: str, precision: str) -> None:
    # ids "9", "10", "100", "11": grouped, in numeric order, which is not the qrels' string order
    # ("10" < "100" < "11" < "9"); scores descend within each query, with ties
    rng = np.random.default_rng(2)
    queries = [str(q) for q in (9, 10, 100, 11, 2, 25)]
    rows = []
    for q in queries:
        scores = -np.sort(-rng.integers(0, 4, size=12).astype(float))  # many ties
        rows += [(q, f"d{d}", float(s)) for d, s in zip(rng.permutation(40)[:12], scores, strict=True)]
    qrels = {q: {f"d{d}": int(rng.integers(0, 3)) for d in range(0, 40, 2)} for q in queries}
    metrics = ["ndcg@5", "map", "recip_rank", "P@3"]
    grouped = rankwise.evaluate(qrels, _frame(rows), metrics, ties=ties, score_precision=precision)
    # the same rows with the queries in string order: no reordering needed, same input order
    in_string_order = sorted(rows, key=lambda r: r[0])  # stable: each query's rows keep their order
    again = rankwise.evaluate(qrels, _frame(in_string_order), metrics, ties=ties, score_precision=precision)
    assert grouped.per_query.equals(again.per_query)
    code = np.array([sorted(queries).index(q) for q, _, _ in rows])
    contiguous, order = align._block_order(code)
    assert contiguous and order is not None  # the block path is the one tested
    if ties != "input":  # a shuffled copy goes through the full sort
        shuffled = [rows[i] for i in rng.permutation(len(rows))]
        assert rankwise.evaluate(qrels, _frame(shuffled), metrics, ties=ties,
                                 score_precision=precision).per_query.equals(grouped.per_query)


@settings(max_examples=200, deadline=None)
@given(queries=st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(-1, 2)), min_size=0, max_size=12),
                        min_size=1, max_size=5))
def test_tie_spans_are_the_groups_of_tied_rows_with_differing_labels(queries) -> None:
    # each query: (score, label) rows in descending score order; a span is (query, first rank,
    # size) of a maximal run of equal scores within one query whose labels are not all equal
    expected = []
    for q, rows in enumerate(queries):
        rows = sorted(rows, key=lambda r: -r[0])
        queries[q] = rows
        rank = 0
        while rank < len(rows):
            end = rank
            while end + 1 < len(rows) and rows[end + 1][0] == rows[rank][0]:
                end += 1
            if end > rank and len({label for _, label in rows[rank: end + 1]}) > 1:
                expected.append([q, rank, end - rank + 1])
            rank = end + 1
    score = np.array([s for rows in queries for s, _ in rows], dtype=float)
    label = np.array([lab for rows in queries for _, lab in rows], dtype=np.int32)
    offsets = np.concatenate(([0], np.cumsum([len(rows) for rows in queries])))
    assert align._tie_spans(score, offsets, label).tolist() == expected
    # the same groups grown from the labelled rows alone (label -1: NONPOOL), as a run file in
    # rank order takes them; every span holds a labelled row
    tied = score[1:] == score[:-1]
    tied[offsets[1:-1][(offsets[1:-1] > 0) & (offsets[1:-1] < len(score))] - 1] = False
    mixed = align._mixed_tie_groups(tied, label, np.flatnonzero(label != -1))
    assert mixed is not None and align._spans_at(*mixed, offsets).tolist() == expected


def test_a_tied_group_longer_than_the_steps_is_left_to_the_pass_over_every_row() -> None:
    steps = align.MIXED_GROUP_STEPS
    tied = np.ones(2 * steps + 4, dtype=bool)   # one group of 2 * steps + 5 rows
    label = np.full(len(tied) + 1, -1)
    label[steps + 2] = 1   # its middle row: steps + 2 rows on either side
    assert align._mixed_tie_groups(tied, label, np.array([steps + 2])) is None
    tied[steps:] = False   # rows 0 to steps tie: row 0 reaches the end in exactly the steps
    label = np.full(len(tied) + 1, -1)
    label[0] = 1
    mixed = align._mixed_tie_groups(tied, label, np.array([0]))
    assert mixed is not None and [part.tolist() for part in mixed] == [[0], [steps + 1]]


@settings(max_examples=100, deadline=None)
@given(scores=st.lists(st.integers(0, 3), min_size=2, max_size=40), labelled=st.sets(st.integers(0, 39), max_size=8),
       ties=st.sampled_from(["trec", "docid_asc"]))
def test_the_tie_patch_from_the_labelled_rows_is_the_patch_from_every_row(scores, labelled, ties) -> None:
    # one query in rank order: the tie rule orders the groups whose labels differ, whether it
    # finds them by visiting every row or by growing the labelled rows' groups
    scores = sorted(scores, reverse=True)
    n = len(scores)
    run = Run(["q"] * n, [f"d{(7 * i) % n:02d}" for i in range(n)], np.array(scores, dtype=float))
    label = np.full(n, -1, dtype=np.int32)
    label[[i for i in labelled if i < n]] = 1
    conv = Conventions(ties=ties)
    qcode = np.zeros(n, dtype=np.int32)
    local, tied = align._score_order(run, qcode, None, conv)
    assert local is None   # rank order: file order
    mixed = align._mixed_tie_groups(tied, label, np.flatnonzero(label != -1))
    everything = align._tie_rule(run, None, None, tied, conv, label)
    grown = align._tie_rule(run, None, None, tied, conv, label, mixed)
    assert everything[0] is None and grown[0] is None
    if everything[1] is None:
        assert grown[1] is None
    else:
        assert grown[1] is not None
        assert [a.tolist() for a in grown[1]] == [a.tolist() for a in everything[1]]


def test_labels_are_the_same_with_and_without_the_judged_filter() -> None:
    # a run with at least as many rows as there are judgments looks up only the rows that pass
    # the hash filter; a shorter one looks every row up. Extra judgments of another query grow
    # the judgments past the run's length without changing this run's labels
    rng = np.random.default_rng(5)
    queries = np.repeat([f"q{i}" for i in range(30)], 40)
    docs = np.array([f"d{x}" for x in rng.integers(0, 400, len(queries))])
    keep = np.unique(np.char.add(np.char.add(queries, "|"), docs), return_index=True)[1]
    queries, docs = queries[np.sort(keep)], docs[np.sort(keep)]
    scores = rng.normal(size=len(queries))
    judged = {(q, d): int(rng.integers(-1, 3)) for q, d in zip(queries[::3], docs[::3], strict=True)}
    small = _qrels(judged)
    large = _qrels({**judged, **{("other", f"x{i}"): 1 for i in range(2 * len(queries))}})
    run = Run(list(queries), list(docs), scores, "r")
    filtered, _ = align.align(run, align.QrelsIndex.build(small), Conventions())
    assert len(queries) >= len(align.QrelsIndex.build(small).keys)
    unfiltered, _ = align.align(Run(list(queries), list(docs), scores, "r"), align.QrelsIndex.build(large),
                                Conventions())
    assert len(queries) < len(align.QrelsIndex.build(large).keys)
    assert filtered.label.tolist() == unfiltered.label.tolist()
    assert (filtered.label >= 0).sum() == sum(1 for v in judged.values() if v >= 0)


def _ranked_docs(docs: list[str], scores: list[float], conv: Conventions) -> list[str]:
    run = Run(["q"] * len(docs), docs, scores)
    order, patch = _order_rows(run, np.zeros(len(docs), dtype=np.int32), None, conv)
    rows = align._patched_rows(len(docs), patch) if order is None else order
    return [docs[int(i)] for i in rows]


def test_rows_in_float32_rank_order_keep_it_but_for_the_tie_rule() -> None:
    # descending as float64, but 1 + 1e-9 and 1.0 are one float32, and so are 0.0 and -0.0:
    # two ties, each ordered by document id, descending (trec_eval): b before a, d before c
    docs, scores = ["a", "b", "c", "d"], [1.0 + 1e-9, 1.0, 0.0, -0.0]
    conv = Conventions(score_precision="float32")
    assert _ranked_docs(docs, scores, conv) == ["b", "a", "d", "c"]
    shuffled = [2, 0, 3, 1]  # through the full sort: the same ranking
    assert _ranked_docs([docs[i] for i in shuffled], [scores[i] for i in shuffled], conv) == ["b", "a", "d", "c"]
    assert _ranked_docs(docs, scores, Conventions(score_precision="float64")) == ["a", "b", "d", "c"]


# documents of every length around one 8-byte word, with shared prefixes and NUL bytes: "a" and
# "a\x00" hash alike (the zero padding), so only their lengths tell them apart
_documents = st.text(alphabet="ab\x00é", min_size=0, max_size=3).map(lambda s: s * 4)


@settings(max_examples=200, deadline=None)
@given(judged=st.lists(st.tuples(st.integers(0, 3), _documents, st.integers(-1, 3)), max_size=30,
                       unique_by=lambda j: (j[0], j[1])),
       asked=st.lists(st.tuples(st.integers(0, 4), _documents), max_size=40), chunk=st.integers(1, 9))
def test_labels_found_by_hash_are_the_labels_found_by_document(judged, asked, chunk) -> None:
    # the judged filter's table names a row's judged pair from its query and document hash; a
    # document of at most 8 bytes is settled by its hash and length, a longer one by its bytes.
    # Both must give the labels the lookup by document id gives, whatever the chunking
    queries = [f"q{i}" for i in range(5)]
    pairs = {(queries[q], d): label for q, d, label in judged}
    pairs.setdefault(("q9", "x"), 1)   # qrels are never empty
    index = align.QrelsIndex.build(_qrels(pairs))
    qcode = index.query_codes(pa.array([queries[q] for q, _ in asked], type=pa.string()))
    values = [d for _, d in asked]
    docs = pa.chunked_array([pa.array(values[i:i + chunk], type=pa.string()) for i in range(0, len(values), chunk)]
                            or [pa.array([], type=pa.string())])
    rows = np.flatnonzero(qcode >= 0).astype(np.int64)
    from rankwise.engine.strings import string_hashes

    hashes = string_hashes(docs)[rows]
    by_hash = index.hashed_labels(qcode[rows], hashes, docs, rows)
    by_document = index.lookup(qcode[rows], pa.array([values[i] for i in rows], type=pa.string()))
    assert by_hash.tolist() == by_document.tolist()
    # a judged pair has its label (-2, UNJUDGED, for a negative one); any other row -1 (NONPOOL)
    judgments = [pairs.get((queries[asked[i][0]], asked[i][1])) for i in rows]
    assert by_hash.tolist() == [-1 if j is None else -2 if j < 0 else j for j in judgments]


def test_a_hash_match_of_a_long_document_is_confirmed_byte_for_byte() -> None:
    # the table trusts a hash only for documents of at most 8 bytes; given a longer document
    # with a judged document's hash (a collision), the bytes refuse it. A short document with the
    # same padded bytes but another length ("d\x00" against "d") is refused by its length
    from rankwise.engine.strings import string_hashes

    index = align.QrelsIndex.build(_qrels({("q", "document-one"): 2, ("q", "d"): 1}))
    judged_long, judged_short = string_hashes(pa.array(["document-one", "d"])).tolist()
    docs = pa.array(["document-two", "document-one", "d\x00", "d"])
    hashes = np.array([judged_long, judged_long, judged_short, judged_short], dtype=np.uint64)
    labels = index.hashed_labels(np.zeros(4, dtype=np.int32), hashes, docs, np.arange(4))
    assert labels.tolist() == [-1, 2, -1, 1]


def test_a_table_whose_pairs_share_a_hash_looks_rows_up_by_document() -> None:
    # two judged pairs with one key (forced here) name no single pair: find refuses, and the
    # labels come from the lookup by document id
    from rankwise.engine.duplicates import JudgedFilter

    index = align.QrelsIndex.build(_qrels({("q", "a"): 1, ("q", "b"): 2}))
    shared = JudgedFilter.of(np.array([7, 7], dtype=np.uint64), np.zeros(2, dtype=np.int32))
    assert not shared.exact
    with pytest.raises(ValueError, match="share a key"):
        shared.find(np.array([7], dtype=np.uint64), np.zeros(1, dtype=np.int32))
    index.judged.filter()   # the real filter built, then replaced by the forced one
    index.judged._built = shared
    docs = pa.array(["b", "c", "a"])
    labels = index.hashed_labels(np.zeros(3, dtype=np.int32), np.array([7, 7, 7], dtype=np.uint64), docs, np.arange(3))
    assert labels.tolist() == [2, -1, 1]


def test_documents_that_hash_alike_keep_their_own_labels() -> None:
    # "a" and "a\x00" share a 64-bit hash (zero padding): the qrels index codes them apart (the
    # bytes refuse the group, Arrow's dictionary decides), finds no judgment repeated, and each
    # run row gets its own document's label, by hash and by document id
    index = align.QrelsIndex.build(_qrels({("q", "a"): 1, ("q", "a\x00"): 2, ("r", "a"): 3}))
    assert sorted(index.doc_vocab.to_pylist()) == ["a", "a\x00"]
    docs = pa.array(["a\x00", "a", "a"])
    qcode = index.query_codes(pa.array(["q", "q", "r"]))
    from rankwise.engine.strings import string_hashes

    by_hash = index.hashed_labels(qcode, string_hashes(docs), docs, np.arange(3))
    assert by_hash.tolist() == [2, 1, 3]
    assert index.lookup(qcode, docs).tolist() == [2, 1, 3]
    lists, _ = align.align(Run(["q", "q", "r"], ["a\x00", "a", "a"], [3.0, 2.0, 1.0]), index, Conventions())
    assert lists.label.tolist() == [2, 1, 3]


def test_an_index_building_its_filter_on_a_second_thread_pickles(monkeypatch) -> None:
    # an index is cached on its Qrels object, which may travel to other processes; the filter a
    # second thread is building is finished first, and the copy finds the same labels
    import pickle

    monkeypatch.setattr(align, "BACKGROUND_JUDGMENTS", 1)
    index = align.QrelsIndex.build(_qrels({("q", "a"): 1, ("q", "b"): 2, ("r", "a"): 0}))
    assert index.judged._pending is not None or index.judged._built is not None
    copy = pickle.loads(pickle.dumps(index))
    docs = pa.array(["b", "a", "c"])
    from rankwise.engine.strings import string_hashes

    qcode = copy.query_codes(pa.array(["q", "r", "q"]))
    assert copy.hashed_labels(qcode, string_hashes(docs), docs, np.arange(3)).tolist() == [2, 0, -1]
