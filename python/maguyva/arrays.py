"""Array operations numpy gives slowly, as both sides of the pipeline need them.

numpy 2.3 and later find the distinct values of an integer array (`np.unique` without
`return_*`, and `np.union1d`, which calls it) with a hash table that is an order of magnitude
slower than sorting once the array holds more than a few thousand values: for 100,000 int64,
12.5 ms against 0.5 ms; for 700,000, 463 ms against 4.6 ms (benches/README.md, "Distinct values
by sorting"). These sort, and give the same arrays.
"""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of the integer array `values` (any shape), ascending: `np.unique(values)`."""
    ordered = np.sort(values, axis=None)
    if len(ordered) < 2:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The distinct values of the integer arrays `a` and `b` together, ascending: `np.union1d(a, b)`."""
    return distinct(np.concatenate((np.ravel(a), np.ravel(b))))
