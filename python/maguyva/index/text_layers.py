"""The trigram index of a generation as two layers: a base, written by a build that indexed every
file's document, and a delta of the documents edited since, which replace the base's.

An edit that keeps every path (so every file id) writes only the delta again, the base being the
previous generation's file, linked; an update that adds or removes files, or whose delta would
outgrow `config.TEXT_DELTA_MAX_SHARE` of the base, merges both into a new base (`build`). Both
layers are `TrigramIndex` files of their own checksummed format; the delta holds documents under
their file ids, so a question's matches are the base's, less those of replaced documents, plus the
delta's: the same answers as one index of the same documents.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path

import numpy as np

from maguyva._core import TrigramIndex

#: The bases loaded in this process by file identity (device, inode, size, mtime), while anything
#: holds them: a generation's files are never written again once sealed, so every reader and
#: build of one base shares one copy (a build after an edit needs the previous base, which the
#: reader answering questions holds: hundreds of MB not read and checked again).
_loaded_bases: weakref.WeakValueDictionary[tuple[int, int, int, int], TrigramIndex] = weakref.WeakValueDictionary()
_loaded_bases_lock = threading.Lock()


def _base(path: Path, identity: tuple[int, int, int, int]) -> TrigramIndex:
    with _loaded_bases_lock:
        base = _loaded_bases.get(identity)
    if base is None:
        base = TrigramIndex.load(path)
        with _loaded_bases_lock:
            base = _loaded_bases.setdefault(identity, base)
    return base


class LayeredTextIndex:
    """A base trigram index and the delta whose documents replace the base's of the same ids;
    answers as one index of the documents they hold together."""

    def __init__(self, base: TrigramIndex, delta: TrigramIndex):
        self.base = base
        self.delta = delta
        self.doc_count: int = base.doc_count
        replaced = delta.doc_ids().astype(np.int64)
        if len(replaced) and int(replaced.max()) >= base.doc_count:
            raise ValueError(f"the delta holds document {int(replaced.max())} of {base.doc_count}")
        #: Whether each document of the base is replaced by the delta's.
        self.replaced = np.zeros(base.doc_count, dtype=bool)
        self.replaced[replaced] = True
        self.delta_docs = len(replaced)

    @classmethod
    def load(cls, base: Path, delta: Path) -> LayeredTextIndex:
        """The layers at `base` and `delta`; a base some reader or build of this process holds
        already is that one (an edit's generation links the base it kept, so it loads only its
        delta)."""
        stat = os.stat(base)
        return cls(_base(base, (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)), TrigramIndex.load(delta))

    def doc_bytes(self, doc_id: int) -> bytes:
        """The content of document `doc_id`."""
        if 0 <= doc_id < self.doc_count and self.replaced[doc_id]:
            return self.delta.doc_bytes(doc_id)
        return self.base.doc_bytes(doc_id)

    def doc_lines(self, doc_id: int, start: int, end: int) -> bytes | None:
        """Lines `start..end` (1-based) of document `doc_id` (`TrigramIndex.doc_lines`)."""
        if 0 <= doc_id < self.doc_count and self.replaced[doc_id]:
            return self.delta.doc_lines(doc_id, start, end)
        return self.base.doc_lines(doc_id, start, end)

    def delta_bytes(self) -> int:
        """The bytes of content the delta holds."""
        return int(self.delta.content_bytes)

    def search_lines(self, terms: list[str | bytes], case_insensitive: list[bool]) -> tuple[np.ndarray, ...]:
        """`TrigramIndex.search_lines` over both layers: (term index, doc id, line), by term,
        then doc, then line."""
        found = self.base.search_lines(terms, case_insensitive)
        if not self.delta_docs:
            return found
        terms_found, docs, lines = found
        live = ~self.replaced[docs]
        more = self.delta.search_lines(terms, case_insensitive)
        merged = [np.concatenate([part[live], extra]) for part, extra in zip((terms_found, docs, lines), more)]
        order = np.lexsort((merged[2], merged[1], merged[0]))
        return tuple(part[order] for part in merged)

    def chunk_line_counts(
        self,
        terms: list[str | bytes],
        case_insensitive: list[bool],
        chunk_start_key: np.ndarray,
        file_chunk_offsets: np.ndarray,
    ) -> tuple[np.ndarray, ...]:
        """`TrigramIndex.chunk_line_counts` over both layers: (term index, chunk, count), by
        term, then chunk. A chunk is of one document, so its count comes from one layer."""
        found = self.base.chunk_line_counts(terms, case_insensitive, chunk_start_key, file_chunk_offsets)
        if not self.delta_docs:
            return found
        terms_found, chunks, counts = found
        live = ~self.replaced[chunk_start_key[chunks.astype(np.int64)] >> 32]
        more = self.delta.chunk_line_counts(terms, case_insensitive, chunk_start_key, file_chunk_offsets)
        merged = [np.concatenate([part[live], extra]) for part, extra in zip((terms_found, chunks, counts), more)]
        order = np.lexsort((merged[1], merged[0]))
        return tuple(part[order] for part in merged)
