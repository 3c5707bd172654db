"""The core's BM25 scores are the floats of the numpy expression they replace, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva._core import bm25_scores


def numpy_scores(tf: np.ndarray, lengths: np.ndarray, term_weights: np.ndarray, k1: float, b: float, mean: float) -> np.ndarray:
    norm = k1 * (1 - b + b * lengths / mean)
    return (term_weights * tf * (k1 + 1) / (tf + norm[:, None])).sum(axis=1)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(0, 300),
    width=st.integers(1, 140),  # past numpy's eight accumulators and its 128-value blocks
    k1=st.floats(0.1, 3.0),
    b=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_scores_are_numpys_to_the_bit(rows: int, width: int, k1: float, b: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tf = rng.integers(0, 6, size=(rows, width)).astype(np.float64) * rng.choice([1.0, 0.5, 37.0], size=(rows, width))
    lengths = rng.integers(1, 400, size=rows).astype(np.float64)
    term_weights = rng.random(width) * rng.choice([1e-3, 1.0, 1e3], size=width)
    mean = max(float(lengths.mean()), 1.0) if rows else 1.0
    got = bm25_scores(tf, lengths, term_weights, k1, b, mean)
    want = numpy_scores(tf, lengths, term_weights, k1, b, mean)
    assert got.dtype == np.float64 and got.shape == (rows,)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


def test_a_table_of_another_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="not 2 rows of 3 terms"):
        bm25_scores(np.ones((2, 2)), np.ones(2), np.ones(3), 1.2, 0.75, 1.0)
