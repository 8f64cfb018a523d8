"""The per-unit sums read their data once, piece by piece (a Parquet file decoded as it is
summed): whatever the pieces, the units, their variants and their sums are those of the whole
log summed at once, and a pandas groupby says the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.data import tables
from rankwise.data.tables import batches_of
from rankwise.errors import InputError
from rankwise.experiments import events
from rankwise.experiments.events import aggregate_units


def by_pandas(log: pd.DataFrame, sums: list[str]) -> pd.DataFrame:
    """The reference: units in one variant, their sums, by unit id."""
    variants = log.groupby("user")["arm"].nunique()
    kept = log[log["user"].isin(variants[variants == 1].index)]
    return kept.groupby("user").agg(arm=("arm", "first"), **{c: (c, "sum") for c in sums}).sort_index()


def as_frame(units: events.Units, sums: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({"user": units.unit_ids.to_pylist(),
                          "arm": [units.variants[c] for c in units.codes],
                          **{c: units.values[c] for c in sums}})
    return frame.set_index("user").sort_index()


logs = st.integers(min_value=1, max_value=10_000).flatmap(lambda seed: st.tuples(
    st.just(seed), st.integers(1, 120), st.sampled_from([5, 40, 10**9]), st.integers(2, 4), st.integers(1, 9)))


@settings(max_examples=60, deadline=None)
@given(logs)
def test_any_pieces_give_the_sums_of_the_whole_log(case: tuple[int, int, int, int, int]) -> None:
    """Random logs: dense and sparse integer ids (the sparse ones leave the counting arrays for
    the hash group-by), two to four variants, some units in two, counts, booleans and floats;
    cut into pieces of 1 to 9 rows, the units and sums equal pandas' (integers exactly)."""
    seed, n, id_range, arms, piece = case
    rng = np.random.default_rng(seed)
    user = rng.integers(0, id_range, n)
    arm = np.where(rng.random(n) < 0.1, rng.integers(0, arms, n), user % arms)   # 10%: another variant
    log = pd.DataFrame({"user": user, "arm": np.array(list("ABCD"))[arm], "clicks": rng.integers(0, 4, n),
                        "bought": rng.random(n) < 0.3, "spend": np.round(rng.gamma(2, 10, n), 2)})
    sums = ["clicks", "bought", "spend"]
    whole = aggregate_units(log, "user", "arm", sums=["spend"], counts=["clicks", "bought"])
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = piece
        pieces = aggregate_units(log, "user", "arm", sums=["spend"], counts=["clicks", "bought"])
    finally:
        tables.BATCH_ROWS = events_slice
    expected = by_pandas(log, sums)
    for units in (whole, pieces):
        got = as_frame(units, sums)
        assert units.variants == sorted(set(log["arm"]))
        assert units.mixed == log.groupby("user")["arm"].nunique().gt(1).sum()
        assert got.index.tolist() == expected.index.tolist()
        assert got["arm"].tolist() == expected["arm"].tolist()
        assert got["clicks"].tolist() == expected["clicks"].tolist()   # integers: exact
        assert got["bought"].tolist() == expected["bought"].astype(int).tolist()
        np.testing.assert_allclose(got["spend"], expected["spend"], rtol=1e-12)


def test_a_third_variant_in_a_later_piece_and_text_ids_after_integer_ones() -> None:
    """Pieces of 2 rows: variants met in the order C, A, B come out sorted with the right codes;
    a unit in A and B is left out; text ids in the last piece send every unit (the integer
    ones counted so far included) to the hash group-by, ids as text."""
    log = {"user": [5, 5, 7, 7, 8, 5, 7, 9], "arm": ["C", "C", "A", "A", "B", "C", "B", "B"],
           "x": [1, 2, 3, 4, 5, 6, 7, 8]}
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = 2
        units = aggregate_units(log, "user", "arm", counts=["x"])
        # unit 5: C (1 + 2 + 6 = 9); unit 7: A then B (left out); 8: B (5); 9: B (8)
        assert units.variants == ["A", "B", "C"] and units.mixed == 1
        assert dict(zip(units.unit_ids.to_pylist(), zip(units.codes.tolist(), units.values["x"].tolist(),
                                                        strict=True), strict=True)) == {
            5: (2, 9), 8: (1, 5), 9: (1, 8)}
        text = [pa.table({"user": [5, 5, 7, 7], "arm": ["C", "C", "A", "A"], "x": [1, 2, 3, 4]}),
                pa.table({"user": ["5", "x"], "arm": ["C", "B"], "x": [10, 1]})]
        units = aggregate_units(text, "user", "arm", counts=["x"], ordered=True)
        assert units.unit_ids.to_pylist() == ["5", "7", "x"]   # 5 counted as an integer, then joined as text
        assert units.values["x"].tolist() == [13, 7, 1] and units.codes.tolist() == [2, 0, 1]
    finally:
        tables.BATCH_ROWS = events_slice


def test_counts_past_a_digit_repack_and_stay_exact() -> None:
    """One unit with 3,000 rows in pieces of 64: its counts outgrow the digits the flags were
    packed with (a few bits at first) and are taken apart and packed wider, exactly."""
    n = 3000
    log = {"user": np.r_[np.ones(n, np.int64), [2]], "arm": ["A"] * n + ["B"],
           "click": np.r_[np.arange(n) % 3 == 0, [True]], "view": np.r_[np.arange(n) % 2 == 0, [False]]}
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = 64
        units = aggregate_units(log, "user", "arm", counts=["click", "view"])
    finally:
        tables.BATCH_ROWS = events_slice
    assert units.values["click"].tolist() == [1000, 1] and units.values["view"].tolist() == [1500, 0]


def test_a_covariate_that_changes_between_pieces_is_refused() -> None:
    log = {"user": [1, 2, 1, 2], "arm": ["A", "B", "A", "B"], "x": [1, 1, 1, 1], "pre": [0.5, 1.0, 0.5, 2.0]}
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = 2
        with pytest.raises(InputError, match="unit 2 has different values"):
            aggregate_units(log, "user", "arm", counts=["x"], constants=["pre"])
        log["pre"][3] = 1.0
        assert aggregate_units(log, "user", "arm", counts=["x"], constants=["pre"]).values["pre"].tolist() == [0.5, 1.0]
    finally:
        tables.BATCH_ROWS = events_slice


def test_a_parquet_file_is_read_in_pieces_of_exactly_the_rows_asked(tmp_path: Path) -> None:
    """Row groups of 7 rows, pieces of 10: the pieces are the file's rows 1-10, 11-20, 21-25,
    each naming its first row; an error in the third names its row in the file."""
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"user": np.arange(25), "x": np.arange(25)}), path, row_group_size=7)
    pieces = batches_of(path, ["x"], rows=10)
    assert (pieces.rows, len(pieces)) == (25, 3)
    got = [(first, t.column("x").to_pylist()) for _, first, t in pieces]
    assert got == [(1, list(range(10))), (11, list(range(10, 20))), (21, list(range(20, 25)))]
    bad = pa.table({"user": np.arange(25), "arm": ["A", "B"] * 12 + ["A"], "x": np.r_[np.ones(22), [-1, 1, 1]]})
    pq.write_table(bad, path, row_group_size=7)
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = 10
        with pytest.raises(InputError, match=r"log\.parquet \(row 23\).*negative count"):
            aggregate_units(path, "user", "arm", counts=["x"])
    finally:
        tables.BATCH_ROWS = events_slice


def test_an_event_log_in_parquet_pieces_equals_it_in_memory(tmp_path: Path) -> None:
    """The definitions over events, a Parquet file read in pieces of 50 rows: the same table
    as the log given as one DataFrame (counts exactly, revenue to the last bits)."""
    from rankwise import experiments

    rng = np.random.default_rng(7)
    n = 1000
    kind = rng.choice(["impression", "click", "purchase"], n, p=[0.8, 0.15, 0.05])
    log = pd.DataFrame({"user": rng.integers(1, 300, n), "event": pd.Categorical(kind),
                        "value": np.where(kind == "purchase", np.round(rng.gamma(2, 20, n), 2), np.nan)})
    log["arm"] = np.where(log["user"] % 2 == 0, "A", "B")
    path = tmp_path / "log.parquet"
    log.to_parquet(path, row_group_size=64)
    metrics = ["ctr = count(click) / count(impression)", "revenue = sum(value where event = purchase)"]
    memory = experiments.analyze(log, "user", "arm", metrics).table
    events_slice = tables.BATCH_ROWS
    try:
        tables.BATCH_ROWS = 50
        pieces = experiments.analyze(path, "user", "arm", metrics).table
    finally:
        tables.BATCH_ROWS = events_slice
    pd.testing.assert_frame_equal(pieces, memory, check_exact=False, rtol=1e-12)
    assert pieces.loc[0, "n"] == memory.loc[0, "n"]


def test_a_file_that_is_not_parquet_is_named(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    path.write_bytes(b"user,arm,x\n1,A,2\n")
    with pytest.raises(InputError, match=r"log\.parquet: cannot read it as parquet"):
        aggregate_units(path, "user", "arm", counts=["x"])
