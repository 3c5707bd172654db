"""Hamming top-k against a numpy reference on random shapes, every kernel, every thread mode."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import maguyva
from maguyva import _core

KERNELS = maguyva.hamming_kernels()
POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)


def reference(codes: np.ndarray, query: np.ndarray, k: int, allow=None):
    """Rows and distances of the k nearest codes, ties by row id, as a stable sort gives them."""
    rows = np.arange(len(codes)) if allow is None else np.unique(np.asarray(allow, dtype=np.int64))
    distances = POPCOUNT[np.bitwise_xor(codes[rows], query)].sum(axis=1)
    order = np.lexsort((rows, distances))[:k]
    return rows[order], distances[order]


@st.composite
def problems(draw):
    row_bytes = draw(st.sampled_from([8, 24, 32, 40, 64, 96, 128, 136, 192, 256]))
    n = draw(st.integers(0, 600))
    # A narrow byte alphabet makes equal distances, and so tie-breaking, common.
    alphabet = draw(st.sampled_from([2, 256]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, alphabet, size=(n, row_bytes), dtype=np.uint8)
    queries = rng.integers(0, alphabet, size=(draw(st.integers(1, 4)), row_bytes), dtype=np.uint8)
    k = draw(st.integers(0, n + 5))
    allow = None
    if n and draw(st.booleans()):
        allow = rng.integers(0, n, size=draw(st.integers(0, 2 * n)))
    return codes, queries, k, allow


@settings(max_examples=150, deadline=None)
@given(problems(), st.sampled_from(KERNELS), st.sampled_from([0, 1, 2]))
def test_matches_numpy_reference(problem, kernel, threads):
    codes, queries, k, allow = problem
    rows, distances = maguyva.hamming_top_k(codes, queries, k, allow=allow, threads=threads, kernel=kernel)
    assert rows.dtype == np.int64 and distances.dtype == np.int32
    for q, query in enumerate(queries):
        want_rows, want_distances = reference(codes, query, k, allow)
        np.testing.assert_array_equal(rows[q], want_rows)
        np.testing.assert_array_equal(distances[q], want_distances)


@settings(max_examples=100, deadline=None)
@given(
    problems(),
    st.integers(1, 12),
    st.sampled_from([1, 10, 1000]),
    st.sampled_from([0, 1, 2]),
    st.integers(0, 2**32 - 1),
)
def test_group_offsets_match_every_row_scored(problem, groups_count, scale, threads, seed):
    """Each row's distance is scale times its own plus its group's offset, ranked as a stable sort."""
    codes, queries, k, allow = problem
    rng = np.random.default_rng(seed)
    groups = np.sort(rng.integers(0, groups_count, size=len(codes))).astype(np.uint32)
    offsets = rng.integers(0, 300 * scale, size=(len(queries), groups_count)).astype(np.uint32)
    rows, distances = maguyva.hamming_top_k(
        codes, queries, k, allow=allow, threads=threads, groups=groups, offsets=offsets, scale=scale
    )
    for q, query in enumerate(queries):
        every, own = reference(codes, query, len(codes), allow)
        total = own * scale + offsets[q][groups[every]]
        order = np.lexsort((every, total))[:k]
        np.testing.assert_array_equal(rows[q], every[order])
        np.testing.assert_array_equal(distances[q], total[order])


@settings(max_examples=60, deadline=None)
@given(problems())
def test_distances_are_every_rows_in_order(problem):
    codes, queries, _, _ = problem
    distances = _core.hamming_distances(codes, queries[0])
    assert distances.dtype == np.int32
    np.testing.assert_array_equal(distances, POPCOUNT[np.bitwise_xor(codes, queries[0])].sum(axis=1))


def test_distances_of_a_query_of_another_length_are_refused():
    with pytest.raises(ValueError, match="a query of 31 bytes against 32-byte codes"):
        _core.hamming_distances(np.zeros((4, 32), np.uint8), np.zeros(31, np.uint8))


@pytest.mark.parametrize("kernel", KERNELS)
def test_large_scan_uses_workers_and_agrees(kernel):
    # Large enough to be split across worker threads.
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 256, size=(70_000, 128), dtype=np.uint8)
    queries = codes[[5, 69_999]] ^ np.uint8(1)  # near-duplicates of known rows
    rows, distances = maguyva.hamming_top_k(codes, queries, 10, kernel=kernel)
    assert rows[:, 0].tolist() == [5, 69_999]
    assert distances[:, 0].tolist() == [128, 128]
    for q, query in enumerate(queries):
        want_rows, want_distances = reference(codes, query, 10)
        np.testing.assert_array_equal(rows[q], want_rows)
        np.testing.assert_array_equal(distances[q], want_distances)


def test_single_query_gives_flat_arrays():
    codes = np.zeros((5, 32), dtype=np.uint8)
    codes[3] = 0xFF
    rows, distances = maguyva.hamming_top_k(codes, np.full(32, 0xFF, dtype=np.uint8), 2)
    assert rows.shape == (2,) and rows.tolist() == [3, 0]
    assert distances.tolist() == [0, 256]


def test_k_larger_than_candidates_and_empty_matrix():
    codes = np.zeros((3, 32), dtype=np.uint8)
    rows, _ = maguyva.hamming_top_k(codes, np.zeros((2, 32), dtype=np.uint8), 10)
    assert rows.shape == (2, 3)
    rows, distances = maguyva.hamming_top_k(np.zeros((0, 32), np.uint8), np.zeros(32, np.uint8), 10)
    assert rows.shape == (0,) and distances.shape == (0,)


def test_views_of_a_larger_array_are_read_in_place():
    rng = np.random.default_rng(3)
    backing = rng.integers(0, 256, size=(1000, 64), dtype=np.uint8)
    codes = backing[100:600]  # a contiguous view, not a copy
    rows, _ = maguyva.hamming_top_k(codes, backing[350], 1)
    assert rows.tolist() == [250]


@pytest.mark.parametrize(
    "codes, queries, kwargs, message",
    [
        (np.zeros((4, 32), np.uint8), np.zeros(16, np.uint8), {}, "bytes per code"),
        (np.zeros((4, 32), np.uint8)[:, ::2], np.zeros(16, np.uint8), {}, "C-contiguous"),
        (np.zeros((4, 32), np.uint8), np.zeros((1, 1, 32), np.uint8), {}, "3-D"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8), {"allow": [4]}, "out of range"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8), {"allow": [-1]}, "not a valid row"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8), {"kernel": "sse9"}, "kernel"),
        (np.zeros((4, 0), np.uint8), np.zeros(0, np.uint8), {}, "at least one byte"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8), {"groups": np.zeros(4, np.uint32)}, "together"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8),
         {"groups": np.zeros(3, np.uint32), "offsets": np.zeros(1, np.uint32)}, "3 groups for 4 rows"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8),
         {"groups": np.array([0, 1, 1, 2], np.uint32), "offsets": np.zeros(2, np.uint32)}, "group 2 has no offset"),
        (np.zeros((4, 32), np.uint8), np.zeros((2, 32), np.uint8),
         {"groups": np.zeros(4, np.uint32), "offsets": np.zeros(3, np.uint32)}, "one row per query"),
        (np.zeros((4, 32), np.uint8), np.zeros(32, np.uint8),
         {"groups": np.zeros(4, np.uint32), "offsets": np.zeros(1, np.uint32), "scale": 2**23}, "overflow"),
    ],
)
def test_bad_input_is_a_clear_value_error(codes, queries, kwargs, message):
    with pytest.raises(ValueError, match=message):
        maguyva.hamming_top_k(codes, queries, 3, **kwargs)


def test_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError):
        maguyva.hamming_top_k(np.zeros((4, 4), np.int64), np.zeros(4, np.int64), 1)


def test_search_releases_the_gil():
    # While one thread scans, the other keeps running Python: had the scan held the GIL, the
    # main thread would show one gap as long as the whole scan.
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 256, size=(400_000, 128), dtype=np.uint8)
    window: list[float] = []
    done = threading.Event()

    def scan():
        window.append(time.perf_counter())
        # Enough queries that the scan lasts tens of milliseconds on a fast machine too.
        maguyva.hamming_top_k(codes, codes[:200], 10, threads=1)
        window.append(time.perf_counter())
        done.set()

    ticks = []
    worker = threading.Thread(target=scan)
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
    worker.join()
    start, end = window
    inside = [start] + [t for t in ticks if start < t < end] + [end]
    longest_gap = max(b - a for a, b in zip(inside, inside[1:]))
    assert end - start > 0.02, "the scan is too short to tell"
    assert longest_gap < (end - start) / 2
