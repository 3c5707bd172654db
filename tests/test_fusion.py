"""Weighted RRF: hand-computed cases and a pure-Python reference on random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import maguyva


def table(n, centrality=None, demotion=None, files=None):
    return (
        np.zeros(n, np.float32) if centrality is None else np.asarray(centrality, np.float32),
        np.ones(n, np.float32) if demotion is None else np.asarray(demotion, np.float32),
        np.arange(n, dtype=np.uint32) if files is None else np.asarray(files, np.uint32),
    )


def boost(c: float) -> float:
    return min(1 + 0.3 * math.log1p(max(c, 0.0)), 1.5)


def reference(lists, weights, k, centrality, demotion, files, top_k):
    """The formula of the design, written the slow and obvious way."""
    scores: dict[int, float] = {}
    for ids, weight in zip(lists, weights):
        seen = set()
        for rank, chunk in enumerate(ids):
            if chunk in seen:
                continue
            seen.add(chunk)
            c = float(centrality[chunk])
            add = weight / (k + rank + 1) * boost(c) * float(demotion[chunk])
            scores[chunk] = scores.get(chunk, 0.0) + add
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    best, files_seen = [], set()
    for chunk, score in ordered:
        if int(files[chunk]) not in files_seen:
            files_seen.add(int(files[chunk]))
            best.append((chunk, score))
    return best[:top_k]


def test_hand_computed_agreement_and_explanation():
    c, d, f = table(6)
    chunks, scores, ranks, contributions = maguyva.rrf_fuse(
        [np.array([1, 2]), np.array([2, 5]), np.array([], np.uint32)], [0.2, 0.6, 0.1], 60, c, d, f, 10
    )
    assert chunks.tolist() == [2, 5, 1]
    assert scores[0] == pytest.approx(0.2 / 62 + 0.6 / 61)
    assert scores[1] == pytest.approx(0.6 / 62)
    assert scores[2] == pytest.approx(0.2 / 61)
    assert ranks.tolist() == [[1, 0, -1], [-1, 1, -1], [0, -1, -1]]
    np.testing.assert_allclose(contributions.sum(axis=1), scores)


def test_boost_cap_demotion_and_dedupe():
    centrality = [1000.0, 1.0, 0.0, 0.0]
    demotion = [1.0, 1.0, 0.25, 1.0]
    files = [0, 1, 2, 1]  # chunk 3 shares a file with chunk 1
    c, d, f = table(4, centrality, demotion, files)
    chunks, scores, _, _ = maguyva.rrf_fuse([np.array([2, 1, 0, 3])], [1.0], 0, c, d, f, 10)
    assert chunks.tolist() == [1, 0, 2]
    assert scores.tolist() == pytest.approx([(1 + 0.3 * math.log(2)) / 2, 1.5 / 3, 0.25])
    assert maguyva.centrality_boost(1e6) == 1.5
    assert maguyva.centrality_boost(-1) == 1.0


def test_ties_break_by_smaller_chunk_id():
    c, d, f = table(10)
    chunks, scores, _, _ = maguyva.rrf_fuse([[8], [4]], [1.0, 1.0], 40, c, d, f, 10)
    assert chunks.tolist() == [4, 8] and scores[0] == scores[1]


@st.composite
def fusion_inputs(draw):
    n = draw(st.integers(1, 60))
    chunk = st.integers(0, n - 1)
    lists = draw(st.lists(st.lists(chunk, max_size=40), max_size=4))
    weights = [draw(st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.6, 0.9])) for _ in lists]
    centrality = draw(st.lists(st.floats(0, 20, width=32), min_size=n, max_size=n))
    demotion = draw(st.lists(st.sampled_from([1.0, 0.5, 0.25]), min_size=n, max_size=n))
    files = draw(st.lists(st.integers(0, max(0, n // 3)), min_size=n, max_size=n))
    return lists, weights, draw(st.sampled_from([0, 40, 60])), centrality, demotion, files, draw(st.integers(0, 12))


@settings(max_examples=300, deadline=None)
@given(fusion_inputs())
def test_matches_reference(inputs):
    lists, weights, k, centrality, demotion, files, top_k = inputs
    c, d, f = table(len(centrality), centrality, demotion, files)
    chunks, scores, ranks, contributions = maguyva.rrf_fuse(
        [np.asarray(l, np.uint32) for l in lists], weights, k, c, d, f, top_k
    )
    want = reference(lists, weights, k, c, d, f, top_k)
    # Scores equal up to float rounding; the order can only differ between near-equal scores.
    assert len(chunks) == len(want)
    np.testing.assert_allclose(scores, [s for _, s in want], rtol=1e-9)
    for (chunk, score), got in zip(want, chunks):
        if chunk != got:
            assert score == pytest.approx(scores[list(chunks).index(got)], rel=1e-9)
    np.testing.assert_allclose(contributions.sum(axis=1), scores, rtol=1e-9)
    for row, chunk in enumerate(chunks):
        for j, ids in enumerate(lists):
            expected_rank = ids.index(chunk) if chunk in ids else -1
            assert ranks[row, j] == expected_rank


@pytest.mark.parametrize(
    "lists, weights, k, n, message",
    [
        ([[0]], [1.0, 2.0], 40, 3, "2 weights"),
        ([[3]], [1.0], 40, 3, "chunk 3"),
        ([[0]], [-0.5], 40, 3, "weight"),
        ([[0]], [1.0], -1, 3, "RRF k"),
    ],
)
def test_bad_input_is_a_clear_value_error(lists, weights, k, n, message):
    c, d, f = table(n)
    with pytest.raises(ValueError, match=message):
        maguyva.rrf_fuse(lists, weights, k, c, d, f, 10)


def test_mismatched_chunk_table_is_rejected():
    with pytest.raises(ValueError, match="differ in length"):
        maguyva.rrf_fuse([[0]], [1.0], 40, np.zeros(3, np.float32), np.ones(2, np.float32), np.arange(3), 5)
    with pytest.raises(ValueError, match="demotion"):
        maguyva.rrf_fuse([[0]], [1.0], 40, np.zeros(2, np.float32), np.full(2, 2.0, np.float32), np.arange(2), 5)
