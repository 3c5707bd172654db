"""The trigram index through Python: exact answers, both case modes, persistence, bad input."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva import CorruptIndexError, TrigramIndex


def count_and_lines(doc: bytes, literal: bytes, fold: bool) -> tuple[int, list[int]]:
    """Non-overlapping leftmost matches and the 1-based lines they start on."""
    if fold:
        doc, literal = doc.lower(), literal.lower()  # bytes.lower folds ASCII only
    count, lines, start = 0, [], 0
    while (at := doc.find(literal, start)) != -1:
        count += 1
        line = doc.count(b"\n", 0, at) + 1
        if not lines or lines[-1] != line:
            lines.append(line)
        start = at + len(literal)
    return count, lines


CORPUS = {
    3: b"import os\nfrom .config import parseConfig\n\ndef load():\n    return parseConfig('x')\n",
    10: b"const err = 'ECONNREFUSED';\nif (e.code === 'ECONNREFUSED') retry();\n",
    11: "caf\u00e9 = 'na\u00efve'\n# \u00c9t\u00e9\n".encode(),
    42: b"\xff\xfe not utf-8 \x80 parseconfig PARSECONFIG\n",
}


@pytest.fixture(scope="module")
def index() -> TrigramIndex:
    built, skipped = TrigramIndex.build(list(CORPUS.items()))
    assert skipped == []
    return built


def test_case_sensitive_literal_with_counts_and_lines(index):
    m = index.search("parseConfig")
    assert m.doc_ids.tolist() == [3]
    assert m.counts.tolist() == [2]
    assert m.lines_of(0).tolist() == [2, 5]
    m = index.search(b"ECONNREFUSED")
    assert (m.doc_ids.tolist(), m.counts.tolist(), m.lines.tolist()) == ([10], [2], [1, 2])


def test_case_insensitive_folds_ascii_only(index):
    m = index.search("PARSECONFIG", case_insensitive=True)
    assert m.doc_ids.tolist() == [3, 42]
    assert m.counts.tolist() == [2, 2]
    # Non-ASCII letters are matched as bytes, not folded.
    assert index.search("\u00e9t\u00e9", case_insensitive=True).doc_ids.tolist() == []
    assert index.search("\u00c9t\u00e9", case_insensitive=True).doc_ids.tolist() == [11]


def test_short_literals_are_scanned(index):
    m = index.search("os")
    assert m.doc_ids.tolist() == [3]
    assert index.search(b"\x80").doc_ids.tolist() == [42]


def test_count_terms(index):
    doc_ids, counts = index.count_terms(["parseConfig", "retry", "import"])
    assert doc_ids.tolist() == [3, 10]
    assert counts.tolist() == [[2, 0, 2], [0, 1, 0]]
    doc_ids, counts = index.count_terms([])
    assert doc_ids.tolist() == [] and counts.shape == (0, 0)


def test_search_lines_equals_one_search_per_term(index):
    terms = ["parseConfig", "ECONNREFUSED", "os", "nothing-here"]
    flags = [True, False, False, True]
    term_ids, doc_ids, lines = index.search_lines(terms, flags)
    expected = []
    for t, (term, fold) in enumerate(zip(terms, flags)):
        m = index.search(term, case_insensitive=fold)
        for j, doc in enumerate(m.doc_ids.tolist()):
            expected += [(t, doc, line) for line in m.lines_of(j).tolist()]
    assert list(zip(term_ids.tolist(), doc_ids.tolist(), lines.tolist())) == expected
    assert (term_ids == 0).sum() == 3  # parseConfig / PARSECONFIG / parseconfig lines, any case
    with pytest.raises(ValueError, match="2 terms but 1"):
        index.search_lines(["a", "b"], [True])
    with pytest.raises(ValueError):
        index.search_lines([""], [False])


def test_document_access(index):
    assert index.doc_ids().tolist() == [3, 10, 11, 42]
    assert index.doc_bytes(42) == CORPUS[42]
    assert index.doc_len(10) == len(CORPUS[10])
    assert index.doc_len(7) is None
    assert len(index) == index.doc_count == 4
    assert index.size_bytes >= index.content_bytes + index.postings_bytes
    with pytest.raises(ValueError, match="not in the index"):
        index.doc_bytes(7)


def test_binary_documents_are_skipped_and_reported():
    built, skipped = TrigramIndex.build([(1, b"text file"), (2, b"\x7fELF\x00\x01binary"), (3, "more text")])
    assert skipped == [2]
    assert built.doc_ids().tolist() == [1, 3]
    assert built.search("binary").doc_ids.tolist() == []


def test_bad_build_and_query_input():
    with pytest.raises(ValueError, match="more than once"):
        TrigramIndex.build([(1, "a"), (1, "b")])
    built, _ = TrigramIndex.build([(1, "abc")])
    with pytest.raises(ValueError):
        built.search("")
    with pytest.raises(ValueError):
        built.count_terms(["abc", ""])


def test_save_load_round_trip(index, tmp_path):
    path = tmp_path / "text.idx"
    index.save(path)
    loaded = TrigramIndex.load(str(path))
    for literal in ["parseConfig", "ECONNREFUSED", "\u00e9", "os"]:
        a, b = index.search(literal), loaded.search(literal)
        assert a.doc_ids.tolist() == b.doc_ids.tolist() and a.lines.tolist() == b.lines.tolist()
    assert TrigramIndex.from_bytes(index.to_bytes()).doc_count == index.doc_count


def test_damaged_files_raise_corrupt_index_error_naming_the_path(index, tmp_path):
    data = index.to_bytes()
    path = tmp_path / "damaged.idx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptIndexError, match=re.escape(str(path))):
        TrigramIndex.load(path)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x40
    with pytest.raises(CorruptIndexError):
        TrigramIndex.from_bytes(bytes(flipped))
    with pytest.raises(CorruptIndexError):
        TrigramIndex.from_bytes(b"")
    assert issubclass(CorruptIndexError, ValueError)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.idx"):
        TrigramIndex.load(tmp_path / "nope.idx")


ALPHABET = st.sampled_from([b"a", b"A", b"b", b"B", b"\n", b" ", b"\xc3", b"\xa9", b"ab"])


@settings(max_examples=120, deadline=None)
@given(
    docs=st.lists(st.lists(ALPHABET, max_size=60).map(b"".join), max_size=8),
    literal=st.lists(ALPHABET, min_size=1, max_size=4).map(b"".join),
    fold=st.booleans(),
)
def test_matches_reference_on_random_corpora(docs, literal, fold):
    ids = [i * 3 + 1 for i in range(len(docs))]
    built, skipped = TrigramIndex.build(list(zip(ids, docs)))
    assert skipped == []
    m = built.search(literal, case_insensitive=fold)
    want = {i: count_and_lines(d, literal, fold) for i, d in zip(ids, docs)}
    want = {i: v for i, v in want.items() if v[0]}
    assert m.doc_ids.tolist() == sorted(want)
    for j, doc_id in enumerate(m.doc_ids.tolist()):
        assert (int(m.counts[j]), m.lines_of(j).tolist()) == want[doc_id]
    doc_ids, counts = built.count_terms([literal, b"ab"], case_insensitive=fold)
    for doc_id, row in zip(doc_ids.tolist(), counts.tolist()):
        d = docs[ids.index(doc_id)]
        assert row == [count_and_lines(d, literal, fold)[0], count_and_lines(d, b"ab", fold)[0]]
    assert len(doc_ids) == sum(
        1 for d in docs if count_and_lines(d, literal, fold)[0] or count_and_lines(d, b"ab", fold)[0]
    )


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(st.lists(ALPHABET, max_size=60).map(b"".join), max_size=8),
    keep=st.lists(st.booleans(), min_size=8, max_size=8),
    added=st.lists(st.lists(ALPHABET, max_size=60).map(b"".join), max_size=4),
)
def test_a_merged_index_is_the_index_a_build_of_the_same_documents_gives(docs, keep, added):
    old, _ = TrigramIndex.build([(i * 2, d) for i, d in enumerate(docs)])
    # Kept documents move up by one id each time; added ones take the ids left between them.
    kept = [(i * 2, i * 3) for i in range(len(docs)) if keep[i]]
    new = [(i * 3 + 1, d) for i, d in enumerate(added)]
    merged, skipped = old.merged(kept, new)
    want, _ = TrigramIndex.build([(n, docs[o // 2]) for o, n in kept] + new)
    assert skipped == [] and merged.to_bytes() == want.to_bytes()


def test_a_merge_keeps_order_and_ids_unique():
    old, _ = TrigramIndex.build([(1, b"alpha"), (2, b"beta")])
    with pytest.raises(ValueError, match="order"):
        old.merged([(1, 5), (2, 4)], [])
    with pytest.raises(ValueError, match="not in the index"):
        old.merged([(3, 0)], [])
    with pytest.raises(ValueError, match="more than once"):
        old.merged([(1, 3)], [(3, b"gamma")])
    merged, skipped = old.merged([(2, 0)], [(1, b"bin\0ary"), (2, "text")])
    assert (skipped, list(merged.doc_ids()), merged.doc_bytes(0)) == ([1], [0, 2], b"beta")


def test_searching_from_threads_agrees():
    from concurrent.futures import ThreadPoolExecutor

    docs = [(i, f"line {i}\nvalue_{i % 7} = compute({i})\n".encode()) for i in range(2000)]
    built, _ = TrigramIndex.build(docs)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda k: built.search(f"value_{k % 7}").doc_ids, range(28)))
    for k, ids in enumerate(results):
        assert np.array_equal(ids, np.arange(k % 7, 2000, 7, dtype=np.uint32))


def test_first_counts_asked_from_several_threads_at_once_are_the_counts_asked_alone():
    # A vocabulary of a megabyte and more is planned on the core's threads, and its words'
    # trigram lists are made by the first search that needs them while other searches wait for
    # them: every one finishes, with the counts a search alone gets.
    import random
    import threading

    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(7, 13))) for _ in range(130_000)]
    docs = [(d, "\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(150)).encode()) for d in range(300)]
    keys = np.array([d << 32 for d in range(300)], dtype=np.int64) + 1
    offsets = np.arange(301, dtype=np.int64)
    asked = [[w[:4] for w in words[k : k + 5]] + ["abc"] for k in range(0, 30, 5)]

    def counts(index, terms):
        return [column.tolist() for column in index.start_chunk_line_counts(terms, [True] * len(terms), keys, offsets).result()]

    alone = TrigramIndex.build(docs)[0]
    expected = [counts(alone, terms) for terms in asked]
    together = TrigramIndex.build(docs)[0]
    found: dict[int, list[list[int]]] = {}
    threads = [threading.Thread(target=lambda i=i: found.__setitem__(i, counts(together, asked[i])), daemon=True) for i in range(len(asked))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a search never finished"
    assert [found[i] for i in range(len(asked))] == expected


def test_a_build_reads_bytes_where_the_caller_holds_them_and_keeps_no_reference_to_them() -> None:
    docs: list[tuple[int, bytes | str]] = [(i, f"def handler_{i}(event):\n    return {i}\n".encode() * (i + 1)) for i in range(12)]
    docs.append((40, "a text given as str: " + "café " * 3))  # made here: a constant is held by the code too
    held = [sys.getrefcount(content) for _, content in docs]
    index, skipped = TrigramIndex.build(docs)
    assert skipped == []
    merged, _ = index.merged([(0, 0)], docs[5:7])
    assert [sys.getrefcount(content) for _, content in docs] == held
    for doc_id, content in docs:
        assert index.doc_bytes(doc_id) == (content.encode() if isinstance(content, str) else content)
    merged, _ = index.merged([(0, 0)], [(7, b"def added(): pass\n"), (8, "caf\u00e9 added")])
    assert (merged.doc_bytes(7), merged.doc_bytes(8)) == (b"def added(): pass\n", "caf\u00e9 added".encode())
    with pytest.raises(TypeError):
        TrigramIndex.build([(1, 3.5)])  # type: ignore[list-item]
