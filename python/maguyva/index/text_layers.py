"""The trigram index of a generation as two layers: a base, written by a build that indexed every
file's document, and a delta of the documents edited or added since, which replace the base's.

An update writes only the delta again, the base being the previous generation's file, linked;
one whose delta, with the documents of files removed since, would outgrow
`config.TEXT_DELTA_MAX_SHARE` of the base merges both into a new base (`build`). Both layers are
`TrigramIndex` files of their own checksummed format; the delta holds documents under their file
ids, the base under the ids its own build gave them (mapped to today's by the generation's
segments), so a question's matches are the base's still live, plus the delta's: the same answers
as one index of the same documents.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np

from maguyva._core import LiteralMatches, TrigramIndex
from maguyva.arrays import distinct
from maguyva.index import store
from maguyva.index.segments import Segments

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
    answers as one index of the documents they hold together.

    A base kept by updates that added or removed files numbers its documents as the generation
    that wrote it did: `base_files` gives each one's id now (-1 for a file removed since, in
    order, as `segments.SegmentOrder` has it)."""

    def __init__(
        self,
        base: TrigramIndex,
        delta: TrigramIndex,
        base_files: np.ndarray | None = None,
        doc_count: int | None = None,
    ):
        self.base = base
        self.delta = delta
        self.doc_count: int = base.doc_count if doc_count is None else doc_count
        if base_files is not None and len(base_files) != base.doc_count:
            raise ValueError(f"{len(base_files)} documents mapped of the base's {base.doc_count}")
        self.base_files = base_files
        #: The chunk layout as the base's documents see it, made for the last layout asked.
        self._base_view: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._view_lock = threading.Lock()
        replaced = delta.doc_ids().astype(np.int64)
        if len(replaced) and int(replaced.max()) >= self.doc_count:
            raise ValueError(f"the delta holds document {int(replaced.max())} of {self.doc_count}")
        #: Whether each document is the delta's (replacing the base's of the same file, if any).
        self.replaced = np.zeros(self.doc_count, dtype=bool)
        self.replaced[replaced] = True
        self.delta_docs = len(replaced)
        #: The delta's documents, ascending.
        self._replaced_ids = np.flatnonzero(self.replaced)
        if base_files is None:
            if self.doc_count != base.doc_count:
                raise ValueError(f"the base holds {base.doc_count} documents of {self.doc_count}")
            self._base_of = None
            self._live_base = ~self.replaced
        else:
            kept = base_files >= 0
            if np.any(np.diff(base_files[kept]) <= 0):
                # Paths are numbered in order, so a kept file keeps its place among the others;
                # answers merge the layers' matches by that order.
                raise ValueError("the base's documents are mapped out of order")
            self._base_of = np.full(self.doc_count, -1, dtype=np.int64)
            self._base_of[base_files[kept]] = np.flatnonzero(kept)
            if np.any((self._base_of < 0) & ~self.replaced):
                raise ValueError("a document is in neither layer")
            #: Whether each of the base's documents is still one of the generation's.
            self._live_base = kept.copy()
            self._live_base[kept] = ~self.replaced[base_files[kept]]

    @classmethod
    def load(
        cls,
        base: Path,
        delta: Path,
        base_files: np.ndarray | None = None,
        doc_count: int | None = None,
    ) -> LayeredTextIndex:
        """The layers at `base` and `delta`; a base some reader or build of this process holds
        already is that one (an edit's generation links the base it kept, so it loads only its
        delta)."""
        stat = os.stat(base)
        loaded = _base(base, (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns))
        return cls(loaded, TrigramIndex.load(delta), base_files, doc_count)

    @classmethod
    def of_generation(cls, generation: Path, segments: Segments) -> LayeredTextIndex:
        """The trigram index of `generation`, whose segments `segments` are open: its base's
        documents mapped as its rows are."""
        order = segments.order
        return cls.load(
            generation / store.TEXT_INDEX,
            generation / store.TEXT_DELTA,
            order.base_files if order.mapped else None,
            len(order.in_delta),
        )

    def base_doc(self, doc_id: int) -> int:
        """The base's document of document `doc_id` (-1: none)."""
        return doc_id if self._base_of is None else int(self._base_of[doc_id])

    def base_docs(self, doc_ids: np.ndarray) -> np.ndarray:
        """`base_doc` of each of `doc_ids` (int64)."""
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        return doc_ids.copy() if self._base_of is None else self._base_of[doc_ids]

    def removed_bytes(self) -> int:
        """The bytes of the base's documents of files removed since it was written."""
        if self.base_files is None:
            return 0
        return sum(self.base.doc_len(int(b)) or 0 for b in np.flatnonzero(self.base_files < 0).tolist())

    def doc_bytes(self, doc_id: int) -> bytes:
        """The content of document `doc_id`."""
        if 0 <= doc_id < self.doc_count and self.replaced[doc_id]:
            return self.delta.doc_bytes(doc_id)
        return self.base.doc_bytes(self._in_base(doc_id))

    def doc_lines(self, doc_id: int, start: int, end: int) -> bytes | None:
        """Lines `start..end` (1-based) of document `doc_id` (`TrigramIndex.doc_lines`)."""
        if 0 <= doc_id < self.doc_count and self.replaced[doc_id]:
            return self.delta.doc_lines(doc_id, start, end)
        return self.base.doc_lines(self._in_base(doc_id), start, end)

    def _in_base(self, doc_id: int) -> int:
        if self._base_of is None or not 0 <= doc_id < self.doc_count:
            return doc_id  # the base's own error for one out of range
        return int(self._base_of[doc_id])

    def delta_bytes(self) -> int:
        """The bytes of content the delta holds."""
        return int(self.delta.content_bytes)

    def search_lines(self, terms: list[str | bytes], case_insensitive: list[bool]) -> tuple[np.ndarray, ...]:
        """`TrigramIndex.search_lines` over both layers: (term index, doc id, line), by term,
        then doc, then line."""
        found = self.base.search_lines(terms, case_insensitive)
        if not self.delta_docs and self.base_files is None:
            return found
        terms_found, docs, lines = found
        live = self._live_base[docs]
        if self.base_files is not None:
            docs = self.base_files[docs].astype(docs.dtype)
        if not self.delta_docs:
            return terms_found[live], docs[live], lines[live]
        more = self.delta.search_lines(terms, case_insensitive)
        return _merged((terms_found[live], docs[live], lines[live]), more)

    def regex_lines(self, pattern: str, case_insensitive: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """`TrigramIndex.search_regex` over both layers, as (doc id, line) of every line a match
        starts on, by doc then line. ValueError for an invalid pattern."""
        docs, lines = _expanded(self.base.search_regex(pattern, case_insensitive))
        if self.delta_docs or self.base_files is not None:
            live = self._live_base[docs]
            if self.base_files is not None:
                docs = self.base_files[docs].astype(docs.dtype)
            docs, lines = docs[live], lines[live]
        if self.delta_docs:
            more_docs, more_lines = _expanded(self.delta.search_regex(pattern, case_insensitive))
            places = np.searchsorted(docs, more_docs)
            docs, lines = np.insert(docs, places, more_docs), np.insert(lines, places, more_lines)
        return docs, lines

    def chunk_line_counts(
        self,
        terms: list[str | bytes],
        case_insensitive: list[bool],
        chunk_start_key: np.ndarray,
        file_chunk_offsets: np.ndarray,
    ) -> tuple[np.ndarray, ...]:
        """`TrigramIndex.chunk_line_counts` over both layers: (term index, chunk, count), by
        term, then chunk. A chunk is of one document, so its count comes from one layer."""
        keys, offsets, chunk_ids = self._base_arrays(chunk_start_key, file_chunk_offsets)
        found = self.base.chunk_line_counts(terms, case_insensitive, keys, offsets)
        return self._with_delta(found, chunk_ids, terms, case_insensitive, chunk_start_key, file_chunk_offsets)

    def start_chunk_line_counts(
        self,
        terms: list[str | bytes],
        case_insensitive: list[bool],
        chunk_start_key: np.ndarray,
        file_chunk_offsets: np.ndarray,
    ) -> Callable[[], tuple[np.ndarray, ...]]:
        """`chunk_line_counts`, the base's search started on the core's threads: the function
        returned waits for it, then adds the delta's matches (a few edited files, searched
        there). Neither array may be written until that function has returned."""
        keys, offsets, chunk_ids = self._base_arrays(chunk_start_key, file_chunk_offsets)
        pending = self.base.start_chunk_line_counts(terms, case_insensitive, keys, offsets)

        def finish() -> tuple[np.ndarray, ...]:
            found = pending.result()
            return self._with_delta(found, chunk_ids, terms, case_insensitive, chunk_start_key, file_chunk_offsets)

        return finish

    def _base_arrays(
        self, chunk_start_key: np.ndarray, file_chunk_offsets: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The layout the base is searched with, and each of its chunks' id in the layout asked
        (None: the same ids, when the base numbers its documents as the generation does)."""
        if self.base_files is None:
            return chunk_start_key, file_chunk_offsets, None
        keys, offsets, chunk_ids = self._base_layout(chunk_start_key, file_chunk_offsets)
        return keys, offsets, chunk_ids

    def _with_delta(
        self,
        found: tuple[np.ndarray, ...],
        chunk_ids: np.ndarray | None,
        terms: list[str | bytes],
        case_insensitive: list[bool],
        chunk_start_key: np.ndarray,
        file_chunk_offsets: np.ndarray,
    ) -> tuple[np.ndarray, ...]:
        """The base's counts `found` (its chunks numbered by `chunk_ids`, if given) with those of
        the base's replaced documents left out and the delta's added."""
        terms_found, chunks, counts = found
        if chunk_ids is None:
            if not self.delta_docs:
                return terms_found, chunks, counts
            offsets = np.asarray(file_chunk_offsets)
            found = _without_chunks(found, offsets[self._replaced_ids], offsets[self._replaced_ids + 1])
        else:
            chunks = chunk_ids[chunks.astype(np.int64)].astype(chunks.dtype)
            if not self.delta_docs:
                return terms_found, chunks, counts  # the view holds live documents' chunks only
            found = terms_found, chunks, counts
        more = self.delta.chunk_line_counts(terms, case_insensitive, chunk_start_key, file_chunk_offsets)
        return _merged(found, more)

    def _base_layout(self, chunk_start_key: np.ndarray, file_chunk_offsets: np.ndarray) -> tuple[np.ndarray, ...]:
        """The chunk layout (`chunk_start_key`, `file_chunk_offsets`, by today's file ids) as the
        base's documents number their files, holding the chunks of its live documents only, and
        each of its chunks' id in the layout asked."""
        with self._view_lock:
            view = self._base_view
            if view is not None and view[0] is chunk_start_key:
                return view[1:]
        assert self.base_files is not None
        live = self._live_base
        now = np.where(live, self.base_files, 0)
        starts = np.asarray(file_chunk_offsets, dtype=np.int64)
        counts = np.where(live, starts[now + 1] - starts[now], 0)
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        total = int(offsets[-1])
        chunk_ids = np.arange(total, dtype=np.int64) + np.repeat(starts[now] - offsets[:-1], counts)
        docs = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        keys = (docs << 32) | (np.asarray(chunk_start_key, dtype=np.int64)[chunk_ids] & 0xFFFFFFFF)
        with self._view_lock:
            self._base_view = (chunk_start_key, keys, offsets, chunk_ids)
        return keys, offsets, chunk_ids


def _without_chunks(found: tuple[np.ndarray, ...], starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """(term index, chunk, count), by term then chunk, without the chunks of the ranges
    `starts[i]..ends[i]` (ascending, disjoint): each range's entries found by a binary search in
    each term's run, the arrays copied only when some are dropped."""
    terms_found, chunks, _ = found
    if not len(chunks) or not len(starts):
        return found
    term_ends = np.searchsorted(terms_found, np.arange(int(terms_found[-1]) + 1), side="right")
    first = 0
    gone_from: list[np.ndarray] = []
    gone_to: list[np.ndarray] = []
    for last in term_ends.tolist():
        if last > first:
            run = chunks[first:last]
            gone_from.append(first + np.searchsorted(run, starts))
            gone_to.append(first + np.searchsorted(run, ends))
        first = last
    lows, highs = np.concatenate(gone_from), np.concatenate(gone_to)
    hit = highs > lows
    if not hit.any():
        return found
    # +1 where a dropped range begins, -1 where it ends: the running sum is the dropped entries.
    change = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.add.at(change, lows[hit], 1)
    np.add.at(change, highs[hit], -1)
    kept = np.cumsum(change[:-1]) == 0
    return tuple(part[kept] for part in found)


def _merged(found: tuple[np.ndarray, ...], more: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Two lists of (term index, chunk or document, ...), each in that order and sharing no
    (term, chunk or document) pair, as one in that order: `more` (a delta's few) put in their
    places, not sorted again (a common word's 100,000 entries: a sort cost 1.5-2.4 ms a
    question). A document's several entries (its lines) keep their order."""
    if not len(more[0]):
        return found
    if not len(found[0]):
        return more
    terms_found, chunks = found[0], found[1]
    more_terms, more_chunks = more[0], more[1]
    places = np.empty(len(more_terms), dtype=np.int64)
    firsts = np.searchsorted(terms_found, more_terms, side="left")
    lasts = np.searchsorted(terms_found, more_terms, side="right")
    for term in distinct(more_terms).tolist():
        of_term = np.flatnonzero(more_terms == term)
        first, last = int(firsts[of_term[0]]), int(lasts[of_term[0]])
        places[of_term] = first + np.searchsorted(chunks[first:last], more_chunks[of_term])
    return tuple(np.insert(part, places, extra.astype(part.dtype, copy=False)) for part, extra in zip(found, more))


def _expanded(matches: LiteralMatches) -> tuple[np.ndarray, np.ndarray]:
    """(doc id, line) for every line of `matches`, as int64 arrays."""
    per_doc = np.diff(matches.line_offsets).astype(np.int64)
    return np.repeat(matches.doc_ids.astype(np.int64), per_doc), matches.lines.astype(np.int64)
