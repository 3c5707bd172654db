"""The trigram index in two layers: a base and a delta of edited documents answer as one index of
the documents they hold together, also when files were added or removed since the base was
written, and an update writes only the delta until it outgrows its share of the base."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maguyva import TrigramIndex, config
from maguyva.errors import CorruptIndexError
from maguyva.index import store
from maguyva.index.build import build_index
from maguyva.index.reader import IndexReader
from maguyva.index.text_layers import LayeredTextIndex

WORDS = ["ledger", "Ledger", "tally", "sift", "grain", "GRAIN", "sieve", "oven", "\n", " ", "(", ")"]
TERMS = ["ledger", "grain", "sift(", "oven", "tal", "ieve", "ledger tally"]


def documents(draw_words: list[list[int]]) -> list[bytes]:
    return ["".join(WORDS[i] for i in words).encode() for words in draw_words]


def layout(docs: list[bytes], lines_per_chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Chunks of `lines_per_chunk` lines over each document: (chunk_start_key, file_chunk_offsets)."""
    keys, offsets = [], [0]
    for doc_id, doc in enumerate(docs):
        lines = doc.count(b"\n") + 1
        keys.extend((doc_id << 32) | start for start in range(1, lines + 1, lines_per_chunk))
        offsets.append(len(keys))
    return np.asarray(keys, dtype=np.int64), np.asarray(offsets, dtype=np.int64)


def same(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> bool:
    return all(x.tolist() == y.tolist() for x, y in zip(a, b, strict=True))


#: Patterns with required trigrams and without (a scan), matching across several documents.
PATTERNS = ["led(ger|GER)", "(?i)grain|sieve", "ov.n", "[a-z]{4}"]


def regex_lines(index: TrigramIndex, pattern: str) -> tuple[list[int], list[int]]:
    """(doc id, line) of each line a match of `pattern` starts on, by doc then line."""
    matches = index.search_regex(pattern, False)
    per_doc = np.diff(matches.line_offsets).astype(np.int64)
    return np.repeat(matches.doc_ids, per_doc).tolist(), matches.lines.tolist()


doc_words = st.lists(st.integers(0, len(WORDS) - 1), max_size=30)


@settings(max_examples=60, deadline=None)
@given(
    base_docs=st.lists(doc_words, min_size=1, max_size=8),
    edits=st.dictionaries(st.integers(0, 7), doc_words, max_size=5),
    lines_per_chunk=st.integers(1, 3),
)
def test_a_base_and_its_delta_answer_as_one_index_of_their_documents(base_docs, edits, lines_per_chunk):
    base_bytes = documents(base_docs)
    edited = {i: doc for i, doc in zip(edits, documents(list(edits.values()))) if i < len(base_bytes)}
    final = [edited.get(i, doc) for i, doc in enumerate(base_bytes)]
    base, _ = TrigramIndex.build(list(enumerate(base_bytes)))
    delta, _ = TrigramIndex.build(sorted(edited.items()))
    layered = LayeredTextIndex(base, delta)
    whole, _ = TrigramIndex.build(list(enumerate(final)))

    assert [layered.doc_bytes(i) for i in range(layered.doc_count)] == final
    # A result's lines come from the layer holding its document.
    assert [layered.doc_lines(i, 1, 1 << 20) for i in range(layered.doc_count)] == final
    for fold in (False, True):
        flags = [fold] * len(TERMS)
        assert same(layered.search_lines(TERMS, flags), whole.search_lines(TERMS, flags))
        keys, offsets = layout(final, lines_per_chunk)
        expected = whole.chunk_line_counts(TERMS, flags, keys, offsets)
        assert same(layered.chunk_line_counts(TERMS, flags, keys, offsets), expected)
        assert same(layered.start_chunk_line_counts(TERMS, flags, keys, offsets)(), expected)
    for pattern in PATTERNS:
        docs, lines = layered.regex_lines(pattern)
        assert (docs.tolist(), lines.tolist()) == regex_lines(whole, pattern), pattern


@settings(max_examples=60, deadline=None)
@given(
    base_docs=st.lists(doc_words, min_size=1, max_size=8),
    fate=st.lists(st.sampled_from(["keep", "edit", "remove"]), min_size=8, max_size=8),
    added=st.lists(st.tuples(st.integers(0, 8), doc_words), max_size=4),
    lines_per_chunk=st.integers(1, 3),
)
def test_a_base_whose_files_moved_answers_through_its_map(base_docs, fate, added, lines_per_chunk):
    # The base numbers the files of the build that wrote it; since then some were removed,
    # some edited and some added between them (the delta's, under today's ids).
    base_bytes = documents(base_docs)
    final: list[bytes] = []
    base_files: list[int] = []
    edited: list[tuple[int, bytes]] = []
    for b, doc in enumerate(base_bytes + [b""]):
        for at, words in added:
            if at == b:
                edited.append((len(final), documents([words])[0]))
                final.append(edited[-1][1])
        if b == len(base_bytes):
            break
        if fate[b] == "remove":
            base_files.append(-1)
            continue
        base_files.append(len(final))
        if fate[b] == "edit":
            doc = doc + b"\noven"
            edited.append((len(final), doc))
        final.append(doc)
    if not final:
        return
    base, _ = TrigramIndex.build(list(enumerate(base_bytes)))
    delta, _ = TrigramIndex.build(edited)
    whole, _ = TrigramIndex.build(list(enumerate(final)))
    keys, offsets = layout(final, lines_per_chunk)
    layered = LayeredTextIndex(base, delta, np.asarray(base_files, dtype=np.int64), len(final))
    assert [layered.doc_bytes(i) for i in range(layered.doc_count)] == final
    assert [layered.doc_lines(i, 1, 1 << 20) for i in range(layered.doc_count)] == final
    for fold in (False, True):
        flags = [fold] * len(TERMS)
        assert same(layered.search_lines(TERMS, flags), whole.search_lines(TERMS, flags))
        expected = whole.chunk_line_counts(TERMS, flags, keys, offsets)
        assert same(layered.chunk_line_counts(TERMS, flags, keys, offsets), expected)
        assert same(layered.start_chunk_line_counts(TERMS, flags, keys, offsets)(), expected)
    for pattern in PATTERNS:
        docs, lines = layered.regex_lines(pattern)
        assert (docs.tolist(), lines.tolist()) == regex_lines(whole, pattern), pattern


def test_counts_started_on_the_pool_are_the_counts_asked_for():
    # Megabytes of candidates go to the core's thread pool while the caller goes on; a few lines
    # are counted at once. Either way the answer is the count made on the spot.
    # "oven tally" is read in every document: 2.3 MB of candidates.
    lines = [b"grain sieve ledger", b"oven tally", b"Ledger(sift)", b"", b"GRAIN oven oven"]
    large = [b"\n".join(lines[(doc + i) % len(lines)] for i in range(3_000)) for doc in range(60)]
    terms = [*TERMS, "oven tally"]
    for docs in (large, large[:2]):
        index, _ = TrigramIndex.build(list(enumerate(docs)))
        keys, offsets = layout(docs, 7)
        for fold in (False, True):
            flags = [fold] * len(terms)
            expected = index.chunk_line_counts(terms, flags, keys, offsets)
            assert expected[0].size > 0
            pending = index.start_chunk_line_counts(terms, flags, keys, offsets)
            assert same(pending.result(), expected)
            with pytest.raises(ValueError, match="already taken"):
                pending.result()
        # Dropped unanswered, a search still running is waited for before its arrays can go.
        index.start_chunk_line_counts(terms, flags, keys.copy(), offsets.copy())
        layered = LayeredTextIndex(index, TrigramIndex.build([])[0])
        assert same(layered.start_chunk_line_counts(terms, flags, keys, offsets)(), index.chunk_line_counts(terms, flags, keys, offsets))


def test_a_delta_naming_a_document_the_base_lacks_is_refused():
    base, _ = TrigramIndex.build([(0, b"tally\n"), (1, b"sift\n")])
    delta, _ = TrigramIndex.build([(2, b"grain\n")])
    with pytest.raises(ValueError, match="document 2 of 2"):
        LayeredTextIndex(base, delta)
    # Files keep their order among themselves: a map that swaps two is no generation's.
    with pytest.raises(ValueError, match="out of order"):
        LayeredTextIndex(base, TrigramIndex.build([])[0], np.asarray([1, 0], dtype=np.int64), 2)


GRANARY = {
    "mill/ledger.py": "def tally(items):\n    return sum(items)\n",
    "mill/sieve.py": "def sift(grain):\n    return [g for g in grain if g]\n",
    "mill/oven.py": "class Oven:\n    def bake(self, dough):\n        return dough\n",
    "mill/notes.md": "# Mill\n\nGrain goes through the sieve, then the oven.\n" * 40,
}


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    then = time.time() - 60  # older than the build's walk: a stat the index records is trusted
    for path in files:
        os.utime(root / path, (then, then))


def layers(index_dir: Path) -> tuple[int, LayeredTextIndex]:
    generation = store.current_generation(index_dir)
    base = generation / store.TEXT_INDEX
    reader = IndexReader(index_dir)
    try:
        return base.stat().st_ino, reader.text
    finally:
        reader.close()


def test_an_update_writes_only_the_delta_until_it_outgrows_its_share_of_the_base(tmp_path):
    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    base_file, text = layers(index_dir)
    assert text.delta_docs == 0
    pinned = IndexReader(index_dir)  # keeps the first generation on disk
    try:
        # Two edits in place: the base is the first generation's file, linked; the delta holds
        # both edited documents, the second edit's replacing the first's.
        write(root, {"mill/ledger.py": "def tally(items):\n    return max(items)\n"})
        build_index(root, index_dir)
        write(root, {"mill/ledger.py": "def tally(items):\n    return min(items)\n", "mill/sieve.py": "def sift(g):\n    return g\n"})
        build_index(root, index_dir)
        linked, text = layers(index_dir)
        assert linked == base_file and text.delta_docs == 2
        # Its MANIFEST entry is the first generation's, and true.
        generation = store.current_generation(index_dir)
        entry = json.loads((generation / store.MANIFEST).read_bytes())["parts"][store.TEXT_INDEX]
        assert entry["sha256"] == hashlib.sha256((generation / store.TEXT_INDEX).read_bytes()).hexdigest()
        assert b"min(items)" in text.doc_bytes(0) and text.search_lines(["max(items)"], [False])[0].size == 0

        # A file added between the others, and one removed: the base stays, its documents
        # mapped to the files' ids now; the delta holds the new file.
        write(root, {"mill/bread.py": "def loaf(dough):\n    return dough\n"})
        build_index(root, index_dir)
        (root / "mill/notes.md").unlink()  # most of the base: kept only with a share this large
        build_index(root, index_dir, tuning=config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=1.0))
        kept, text = layers(index_dir)
        assert kept == base_file and text.delta_docs == 3 and text.doc_count == 4
        assert text.base_files is not None and text.base_files.tolist() == [1, -1, 2, 3]
        assert b"def loaf" in text.doc_bytes(0) and text.search_lines(["the sieve"], [False])[0].size == 0

        # A delta past its share of the base is merged into a new base.
        write(root, {"mill/oven.py": "class Oven:\n    def bake(self, loaf):\n        return loaf\n"})
        build_index(root, index_dir, tuning=config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=0.0))
        merged, text = layers(index_dir)
        assert merged != base_file and text.delta_docs == 0 and text.base_files is None
    finally:
        pinned.close()
    full = tmp_path / "full"
    build_index(root, full, rebuild=True)
    _, whole = layers(full)
    assert [text.doc_bytes(i) for i in range(text.doc_count)] == [whole.doc_bytes(i) for i in range(whole.doc_count)]


def test_a_reader_of_an_edit_borrows_the_base_its_earlier_reader_loaded(tmp_path):
    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    first = IndexReader(index_dir)
    try:
        write(root, {"mill/ledger.py": "def tally(items):\n    return len(items)\n"})
        build_index(root, index_dir)
        edited = IndexReader(index_dir, first)
        assert edited.text.base is first.text.base and edited.text.delta_docs == 1
        assert b"len(items)" in edited.text.doc_bytes(0)
        write(root, {"mill/bread.py": "def loaf(dough):\n    return dough\n"})
        build_index(root, index_dir)
        added = IndexReader(index_dir, edited)  # a file more: the same base, mapped
        assert added.text.base is first.text.base and added.text.doc_count == 5
        write(root, {"mill/ledger.py": "def tally(items):\n    return sorted(items)\n"})
        build_index(root, index_dir, tuning=config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=0.0))
        merged = IndexReader(index_dir, added)  # a new base: loaded, not borrowed
        assert merged.text.base is not first.text.base and merged.text.doc_count == 5
        for reader in (edited, added, merged):
            reader.close()
    finally:
        first.close()


def _chunk_columns(reader: IndexReader) -> tuple[list[list[int]], list[str | None]]:
    """The chunks' columns a reader reads: the integers as arrays, the symbols as a list."""
    from maguyva.index.segments import CHUNKS

    segments = reader.segments
    return [segments.array(CHUNKS, n).tolist() for n in ("file_id", "start_line", "end_line")], segments.column(CHUNKS, "symbol")


def test_a_reader_of_an_edit_reads_only_the_delta_rows_of_what_its_base_was_read_for(tmp_path):
    from maguyva.index.segments import REFS

    columns = "file_id, name, kind, qualified_name, signature, docstring, start_line, end_line, parent"
    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    first = IndexReader(index_dir)
    try:
        first.symbol_rows(columns)
        write(root, {"mill/sieve.py": "def sift(grain, mesh):\n    return grain\n\ndef shake(grain):\n    return grain\n"})
        build_index(root, index_dir)
        edited = IndexReader(index_dir, first)
        statements: dict[str, list[str]] = {"base": [], "delta": []}
        edited.segments.base.set_trace_callback(statements["base"].append)
        edited.segments.delta.set_trace_callback(statements["delta"].append)
        rows = edited.symbol_rows(columns), _chunk_columns(edited)
        assert statements["base"] == [] and statements["delta"], "the base's columns were read by the first reader"
        assert edited.segments._kept is first.segments._kept
        # The same rows as a full build's, the edited file's from the delta.
        build_index(root, tmp_path / "full", rebuild=True)
        whole = IndexReader(tmp_path / "full")
        assert whole.segments._kept is not edited.segments._kept
        assert rows == (whole.symbol_rows(columns), _chunk_columns(whole))
        assert "shake" in [row[1] for row in rows[0]]
        # A column the base was not read for is read once, then kept.
        assert edited.segments.rows(REFS, "name, line") == whole.segments.rows(REFS, "name, line")
        assert len(statements["base"]) == 1 and "name, line" in statements["base"][0]
        assert edited.segments.rows(REFS, "line") == whole.segments.rows(REFS, "line")
        assert len(statements["base"]) == 1
        whole.close()
        # A file added before the others: the base's columns serve, their file ids mapped.
        write(root, {"mill/bakery.py": "def loaf(dough):\n    return dough\n"})
        build_index(root, index_dir)
        added = IndexReader(index_dir, edited)
        assert added.segments._kept is first.segments._kept and added.segments.order.mapped
        build_index(root, tmp_path / "full-added", rebuild=True)
        whole = IndexReader(tmp_path / "full-added")
        assert added.symbol_rows(columns) == whole.symbol_rows(columns)
        assert added.segments.rows(REFS, "file_id, name") == whole.segments.rows(REFS, "file_id, name")
        assert added.chunk_file.tolist() == whole.chunk_file.tolist()
        whole.close()
        write(root, {"mill/ledger.py": "def tally(items):\n    return sorted(items)\n"})
        build_index(root, index_dir, tuning=config.DEFAULT.but(TEXT_DELTA_MAX_SHARE=0.0))
        merged = IndexReader(index_dir, added)  # a new base: its own columns
        assert merged.segments._kept is not first.segments._kept
        for reader in (edited, added, merged):
            reader.close()
    finally:
        first.close()


def test_what_depends_on_the_paths_alone_is_derived_once_while_they_stay(tmp_path):
    from maguyva.index.symbols import path_ranks
    from maguyva.query.rank.signals import path_vocabulary

    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    first = IndexReader(index_dir)
    try:
        vocabulary = path_vocabulary(first)
        write(root, {"mill/ledger.py": "def tally(items):\n    return len(items)\n"})
        build_index(root, index_dir)
        edited = IndexReader(index_dir, first)  # the same paths: the same vocabulary
        assert edited.layout is first.layout and path_vocabulary(edited) is vocabulary
        assert path_ranks(edited) is path_ranks(first)
        # Each file is the earlier reader's own where it is unchanged, and as read anew where not.
        alone = IndexReader(index_dir)
        assert edited.files == alone.files and edited.layout.files == alone.layout.files
        alone.close()
        ledger = next(f.id for f in edited.files if f.path == "mill/ledger.py")
        assert edited.files[ledger] is not first.files[ledger] and edited.files[ledger] != first.files[ledger]
        assert all(a is b for a, b in zip(edited.files, first.files) if a.id != ledger)
        write(root, {"mill/bakery.py": "def loaf(dough):\n    return dough\n"})
        build_index(root, index_dir)
        added = IndexReader(index_dir, edited)  # a path more: derived again, with it
        assert added.layout is not edited.layout
        assert path_vocabulary(added) is not vocabulary
        assert path_vocabulary(added).share("bakery") > 0 == vocabulary.share("bakery")
        (root / "mill/bakery.py").rename(root / "mill/hopper.py")  # as many files, one path other
        build_index(root, index_dir)
        renamed = IndexReader(index_dir, added)
        alone = IndexReader(index_dir)
        assert renamed.layout is not added.layout and renamed.layout.files == alone.layout.files
        assert renamed.files == alone.files
        alone.close()
        for reader in (edited, added, renamed):
            reader.close()
    finally:
        first.close()


def test_a_base_file_is_loaded_once_while_anything_holds_it(tmp_path):
    import gc
    import weakref

    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    generation = store.current_generation(index_dir)
    base, delta = generation / store.TEXT_INDEX, generation / store.TEXT_DELTA
    first = LayeredTextIndex.load(base, delta)
    again = LayeredTextIndex.load(base, delta)  # a build reading what a reader holds
    assert again.base is first.base and again.delta is not first.delta
    # Held by nothing, it is freed, not kept by the process.
    loaded = weakref.ref(first.base)
    del first, again
    gc.collect()
    assert loaded() is None
    held = LayeredTextIndex.load(base, delta)
    # A file written again in place is another file, however alike: read and checked anew.
    data = base.read_bytes()
    base.unlink()
    base.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(CorruptIndexError):
        LayeredTextIndex.load(base, delta)
    assert held.doc_bytes(0)  # what was loaded before is untouched


def test_without_hard_links_the_base_is_copied(tmp_path, monkeypatch):
    root, index_dir = tmp_path / "granary", tmp_path / "index"
    write(root, GRANARY)
    build_index(root, index_dir)
    first_base = store.current_generation(index_dir) / store.TEXT_INDEX
    first_bytes, first_inode = first_base.read_bytes(), first_base.stat().st_ino

    def no_links(source, target):  # type: ignore[no-untyped-def]
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    write(root, {"mill/oven.py": "class Oven:\n    def bake(self, crust):\n        return crust\n"})
    build_index(root, index_dir)
    base_file, text = layers(index_dir)
    assert base_file != first_inode and text.delta_docs == 1
    assert (store.current_generation(index_dir) / store.TEXT_INDEX).read_bytes() == first_bytes
    assert b"crust" in text.doc_bytes(2)
