"""Distinct values by sorting: the arrays numpy's own functions give, whatever the values."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from maguyva.arrays import distinct, union

integer_arrays = hnp.arrays(
    dtype=st.sampled_from([np.int64, np.int32, np.uint32, np.uint8]),
    shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40),
)


@given(integer_arrays)
def test_distinct_gives_what_np_unique_gives(values: np.ndarray) -> None:
    found, expected = distinct(values), np.unique(values)
    assert found.dtype == expected.dtype
    assert np.array_equal(found, expected)


@given(integer_arrays, integer_arrays)
def test_union_gives_what_np_union1d_gives(a: np.ndarray, b: np.ndarray) -> None:
    found, expected = union(a, b), np.union1d(a, b)
    assert found.dtype == expected.dtype
    assert np.array_equal(found, expected)


def test_repeated_values_are_kept_once_in_order() -> None:
    assert distinct(np.array([5, 3, 5, 5, 9, 3, 0])).tolist() == [0, 3, 5, 9]
    assert distinct(np.zeros(0, dtype=np.int64)).tolist() == []
    assert union(np.array([4, 1]), np.array([1, 7, 4])).tolist() == [1, 4, 7]
