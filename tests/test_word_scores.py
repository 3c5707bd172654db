"""The core's sums of a structural question's words over the symbols' word postings are the
floats of the numpy expression they replace, bit for bit, and in the same order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva._core import word_scores

Form = tuple[np.ndarray, np.ndarray, float]


def numpy_sums(count: int, terms: list[tuple[float, bool, list[Form]]], within: np.ndarray | None):
    """The sums as numpy worked them out over arrays of every symbol, term by term."""
    total, covered, seen = np.zeros(count), np.zeros(count), np.zeros(count, dtype=bool)
    reached = []
    for weight, direct, forms in terms:
        if direct:
            ids, values = forms[0][0], forms[0][1]
        else:
            term, in_term, parts = np.zeros(count), np.zeros(count, dtype=bool), []
            for form_ids, form_values, factor in forms:
                term[form_ids] = np.maximum(term[form_ids], form_values * factor)
                new = form_ids[~in_term[form_ids]]
                in_term[new] = True
                parts.append(new)
            ids = np.concatenate(parts)
            values = term[ids]
        total[ids] += values
        covered[ids] += weight
        new = ids[~seen[ids]]
        seen[new] = True
        reached.append(new)
    hits = np.concatenate(reached) if reached else np.zeros(0, dtype=np.int64)
    if within is not None:
        hits = hits[within[hits]]
    return hits, total[hits], covered[hits]


@st.composite
def questions(draw: st.DrawFn):
    count = draw(st.integers(1, 200))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    def posting() -> tuple[np.ndarray, np.ndarray]:
        ids = rng.permutation(count)[: int(rng.integers(1, count + 1))].astype(np.int64)
        return ids, rng.random(len(ids)) * rng.choice([1e-3, 1.0, 40.0])

    terms = []
    for _ in range(draw(st.integers(0, 6))):
        weight = float(rng.random() * 5)
        forms = draw(st.integers(1, 4))
        if forms == 1 and draw(st.booleans()):
            terms.append((weight, True, [(*posting(), 1.0)]))
        else:
            terms.append((weight, False, [(*posting(), float(draw(st.sampled_from([1.0, 0.5, 0.35])))) for _ in range(forms)]))
    within = rng.random(count) < 0.4 if draw(st.booleans()) else None
    return count, terms, within


@settings(max_examples=300, deadline=None)
@given(questions())
def test_sums_and_their_order_are_numpys_to_the_bit(question) -> None:
    count, terms, within = question
    got, want = word_scores(count, terms, within), numpy_sums(count, terms, within)
    assert np.array_equal(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert g.dtype == np.float64 and np.array_equal(g.view(np.uint64), w.view(np.uint64))


def test_postings_past_the_symbols_are_refused() -> None:
    ids, values = np.array([0, 3], dtype=np.int64), np.ones(2)
    with pytest.raises(ValueError, match="row 3 is out of range"):
        word_scores(3, [(1.0, True, [(ids, values, 1.0)])])
    with pytest.raises(ValueError, match="mask of 2 symbols"):
        word_scores(3, [], np.ones(2, dtype=bool))
