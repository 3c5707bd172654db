"""IdGroups hold what dicts of lists built by appending and extending would hold, in their order;
the core orders a symbol table's rows as numpy's lexsort would, and sums sorted keys' values as
numpy's unique and bincount would."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva._core import group_ids, key_sums, order_rows
from maguyva.index.symbols import IdGroups

KEYS = st.sampled_from(["a", "A", "b", "B", "ab", "a.b", "A.b", ""])


def as_dict(groups: IdGroups) -> dict[str, list[int]]:
    return {key: list(ids) for key, ids in groups.items()}


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(KEYS, max_size=40), data=st.data())
def test_groups_are_the_appended_lists_and_their_regroupings(keys: list[str], data: st.DataObject) -> None:
    # Symbols by key, as `for i, key in enumerate(keys): by_key[key].append(i)` gives them.
    appended: defaultdict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        appended[key].append(i)
    groups = IdGroups.of(keys, np.arange(len(keys), dtype=np.int64), np.arange(len(keys) + 1, dtype=np.int64))
    assert as_dict(groups) == dict(appended) and list(groups) == list(appended)
    assert all(groups.get(key) == ids and groups[key] == ids and key in groups for key, ids in appended.items())
    assert groups.get("absent") == () and "absent" not in groups and len(groups) == len(appended)

    # Groups of the groups, keyed by a function of each key, in the order first met.
    extended: defaultdict[str, list[int]] = defaultdict(list)
    for key, ids in appended.items():
        extended[key.lower()].extend(ids)
    lower = groups.regrouped([key.lower() for key in groups])
    assert as_dict(lower) == dict(extended) and list(lower) == list(extended)

    # Any sequence of (new key, group) pairs, a group given any number of times.
    names = list(appended)
    pairs = data.draw(st.lists(st.tuples(KEYS, st.integers(0, max(len(names) - 1, 0))), max_size=30)) if names else []
    chosen: defaultdict[str, list[int]] = defaultdict(list)
    for key, group in pairs:
        chosen[key].extend(appended[names[group]])
    picked = groups.regrouped([k for k, _ in pairs], np.asarray([g for _, g in pairs], dtype=np.int64))
    assert as_dict(picked) == dict(chosen) and list(picked) == list(chosen)


FLOATS = st.sampled_from([0.0, -0.0, 0.5, 2.0, -1.5, float("inf"), float("-inf"), float("nan")])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rows=st.integers(0, 50), kinds=st.lists(st.sampled_from(["up", "down", "float"]), min_size=1, max_size=5))
def test_rows_are_ordered_as_numpy_lexsorts_them(data: st.DataObject, rows: int, kinds: list[str]) -> None:
    # A symbol table's tie-breaking order: numpy's lexsort of the columns listed last first, a
    # descending one negated (NaN after every number, -0.0 equal to 0.0), ties in row order.
    columns: list[np.ndarray] = []
    for kind in kinds:
        if kind == "float":
            columns.append(np.asarray(data.draw(st.lists(FLOATS, min_size=rows, max_size=rows)), dtype=np.float64))
        else:
            columns.append(np.asarray(data.draw(st.lists(st.integers(-3, 3), min_size=rows, max_size=rows)), dtype=np.int64))
    descending = [kind != "up" for kind in kinds]
    expected = np.lexsort(tuple(-c if down else c for c, down in zip(reversed(columns), reversed(descending))))
    assert order_rows(columns, descending).tolist() == expected.tolist()


def test_malformed_groupings_and_orderings_are_refused() -> None:
    ids = np.arange(3, dtype=np.int64)
    with pytest.raises(ValueError, match="one more than the keys"):
        group_ids(["a", "b"], ids, np.arange(2, dtype=np.int64))
    with pytest.raises(ValueError, match="rise"):
        group_ids(["a", "b"], ids, np.asarray([0, 2, 1], dtype=np.int64))
    with pytest.raises(ValueError, match="rise"):
        group_ids(["a"], ids, np.asarray([0, 4], dtype=np.int64))
    with pytest.raises(ValueError, match="differ in length"):
        order_rows([ids, ids[:2]], [False, False])
    with pytest.raises(ValueError, match="float64 in descending"):
        order_rows([ids.astype(np.float64)], [False])
    with pytest.raises(ValueError, match="one direction"):
        order_rows([ids], [])


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.lists(st.tuples(st.integers(-50, 50), st.floats(-1e3, 1e3)), max_size=30), max_size=6))
def test_key_sums_are_numpys_unique_and_bincount_of_the_parts_joined(parts: list[list[tuple[int, float]]]) -> None:
    # A word index's parts: each one's keys ascending (repeats allowed), its values beside them.
    keyed = [np.array(sorted(k for k, _ in part), dtype=np.int64) for part in parts]
    weighed = [np.array([v for _, v in sorted(part, key=lambda kv: kv[0])], dtype=np.float64) for part in parts]
    joined = np.concatenate(keyed) if keyed else np.zeros(0, dtype=np.int64)
    unique, inverse = np.unique(joined, return_inverse=True)
    expected = np.bincount(inverse, weights=np.concatenate(weighed) if weighed else None, minlength=len(unique))
    keys, sums = key_sums(keyed, weighed)
    assert keys.tolist() == unique.tolist()
    assert sums.tobytes() == expected.astype(np.float64).tobytes()


def test_key_sums_refuse_parts_out_of_order() -> None:
    with pytest.raises(ValueError, match="not ascending"):
        key_sums([np.array([2, 1], dtype=np.int64)], [np.array([1.0, 1.0])])
    with pytest.raises(ValueError, match="values"):
        key_sums([np.array([1, 2], dtype=np.int64)], [np.array([1.0])])
