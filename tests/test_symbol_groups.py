"""IdGroups hold what dicts of lists built by appending and extending would hold, in their order."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
