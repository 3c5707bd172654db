"""The text modality: query terms matched exactly through the trigram index, chunks ranked by BM25.

Trigrams find the candidate files, the index verifies each term against the real bytes and
returns the lines it occurs on, and each line is credited to the chunk that holds it. BM25 over
those verified per-chunk counts then ranks chunks: rare terms weigh more than common ones,
repeated matches saturate, and long chunks do not win by size alone. A quoted phrase is one
term, matched with its case; words are matched case-insensitively, and an identifier also by
its camelCase / snake_case parts (at half weight), so "parseConfig" finds "parse_config".
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from maguyva import config
from maguyva._core import bm25_scores, chunk_term_table
from maguyva.errors import QueryError
from maguyva.index.reader import IndexReader, PerMask, per_reader
from maguyva.lexicon import LITERAL_STOPWORDS, literal_parts
from maguyva.query.retrievers.base import Candidate, Query

_QUOTED = re.compile(r'"([^"]+)"|`([^`]+)`|\'([^\']{2,})\'')
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d[\w.]*|[^\sA-Za-z0-9_$]{3,}")


@dataclass(frozen=True, slots=True)
class Term:
    """One literal to look for."""

    text: str
    case_sensitive: bool
    weight: float


def query_terms(query: str, keep_case: bool = False) -> list[Term]:
    """The literals of a query: quoted phrases whole and case-sensitive, other words
    case-insensitive (stopwords dropped unless nothing else is left), identifiers' parts too;
    with `keep_case` (`case:yes`), every word as written and case-sensitive, without parts."""
    terms: dict[tuple[str, bool], Term] = {}
    for match in _QUOTED.finditer(query):
        phrase = next(g for g in match.groups() if g)
        terms.setdefault((phrase, True), Term(phrase, True, 1.0))
    rest = _QUOTED.sub(" ", query)
    words = _WORD.findall(rest)
    # A word of one character (the "s" of "the parser's", "X", "2") is in most lines of code: as a
    # substring it finds everything and weighs nothing.
    kept = [w for w in words if len(w) > 1 and w.lower() not in LITERAL_STOPWORDS] or (words if not terms else [])
    for word in kept:
        if keep_case:
            terms.setdefault((word, True), Term(word, True, 1.0))
            continue
        terms.setdefault((word.lower(), False), Term(word.lower(), False, 1.0))
        parts = literal_parts(word)
        if len(parts) > 1:
            for part in parts:
                if len(part) >= 3 and part not in LITERAL_STOPWORDS:
                    terms.setdefault((part, False), Term(part, False, config.current().TEXT_PART_WEIGHT))
    return list(terms.values())


class TextRetriever:
    """BM25 over chunks, from verified term matches."""

    name = "text"

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        return self._retrieve(reader, query, limit, self.terms(query))

    def start(self, reader: IndexReader, query: Query, limit: int) -> Callable[[], list[Candidate]]:
        """`retrieve`, begun: the question's terms are counted on the core's threads while the
        caller runs the other modalities, and the function returned finishes the answer. Only
        the plain count of terms goes ahead (over a filter's chunks when there is one); a
        pattern or an answer by lines is answered when the function is called."""
        terms = self.terms(query)
        if not terms or len(reader.chunk_file) == 0 or query.pattern is not None or query.line_spans:
            return lambda: self._retrieve(reader, query, limit, terms)
        counting = _counted(reader, terms, query.allowed, start=True)
        return lambda: self._retrieve(reader, query, limit, terms, counting)

    def _retrieve(
        self,
        reader: IndexReader,
        query: Query,
        limit: int,
        terms: list[Term],
        counting: Callable[[], tuple[np.ndarray, ...]] | None = None,
    ) -> list[Candidate]:
        """The answer to `query` by `terms`; `counting`, when given, is the count of the terms'
        lines by chunk (`_chunk_counts` of every chunk) already under way."""
        if not terms or len(reader.chunk_file) == 0:
            return []
        n = len(reader.chunk_file)
        # case:yes keeps every term to its case: no second look in any case.
        any_case = not query.case_sensitive
        # Each term's count of chunks holding it, when the count gives it (else from the table).
        document_frequency: np.ndarray | None = None
        if query.pattern is not None:
            chunks, lines, ids, tf = _by_regex(reader, query.pattern)
        elif query.line_spans:
            chunks, lines, ids, tf = _by_lines(reader, terms, any_case)
        else:
            chunks = lines = np.zeros(0, dtype=np.int64)
            ids, tf, document_frequency = _by_chunk_counts(reader, terms, any_case, query.allowed, counting)
        if query.allowed is not None:
            kept = query.allowed[ids]
            if not kept.all():
                ids, tf, document_frequency = ids[kept], tf[kept], None
            if len(chunks):
                inside = query.allowed[chunks]
                chunks, lines = chunks[inside], lines[inside]
        if len(ids) == 0:
            return []
        if document_frequency is None:
            document_frequency = np.count_nonzero(tf, axis=0)
        idf = np.log1p((n - document_frequency + 0.5) / (document_frequency + 0.5))
        weights = np.array([term.weight for term in terms])
        k1, b = config.current().BM25_K1, config.current().BM25_B
        scores = bm25_scores(tf, reader.chunk_lines[ids], weights * idf, k1, b, _mean_chunk_lines(reader))
        _definitions_first(reader, query, ids, scores)
        order = best_first(ids, scores, limit)
        spans = _matching_lines(chunks, lines, ids[order]) if query.line_spans else {}
        # Plain Python numbers first: indexing numpy arrays one scalar at a time is slow.
        chosen, chosen_scores = ids[order].tolist(), scores[order].tolist()
        return [Candidate(chunk, score, spans.get(chunk, ())) for chunk, score in zip(chosen, chosen_scores)]

    @staticmethod
    def terms(query: Query) -> list[Term]:
        """An exact-match question looks for its literal alone, with its case (falling back to
        any case when that finds nothing); any other question for all its terms."""
        if query.pattern is not None:
            return [Term(query.pattern, True, 1.0)]  # one term: the lines the pattern matches
        if query.literal is not None:
            return [Term(query.literal, True, 1.0)]
        return query_terms(query.text, keep_case=query.case_sensitive)


@per_reader
def _mean_chunk_lines(reader: IndexReader) -> float:
    """BM25's mean chunk length, in lines, over the whole index (at least 1)."""
    return max(float(reader.chunk_lines.mean()), 1.0)


def best_first(ids: np.ndarray, scores: np.ndarray, limit: int) -> np.ndarray:
    """The positions of the `limit` highest `scores`, best first, the lower id on a tie: what a
    sort of every score gives, sorting only the scores at or above the `limit`-th (a common
    word's tens of thousands of chunks are not sorted for fifty)."""
    if len(scores) <= 2 * limit:
        return np.lexsort((ids, -scores))[:limit]
    cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
    kept = np.flatnonzero(scores >= cut)
    return kept[np.lexsort((ids[kept], -scores[kept]))][:limit]


def _by_chunk_counts(
    reader: IndexReader,
    terms: list[Term],
    any_case: bool = True,
    allowed: np.ndarray | None = None,
    counting: Callable[[], tuple[np.ndarray, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chunks holding a term, ascending, how many of each term's lines each holds
    (`tf[i, t]`), and how many chunks hold each term, counted in the core: a common word's every
    line never reaches Python, and the table is made there too. With `allowed` (a filter's
    chunks), the core is given only those chunks, and does not read the documents left without
    any. `counting` gives the terms' first count when it is already under way."""
    def search(asked: list[Term]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _chunk_counts(reader, asked, allowed)

    found_terms, chunks, counts = _caseless_again(terms, search, any_case, counting)
    ids, tf, document_frequency = chunk_term_table(found_terms, chunks, counts, len(reader.chunk_file), len(terms))
    return ids.astype(np.int64), tf, document_frequency


def _chunk_counts(
    reader: IndexReader, terms: list[Term], allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(term index, chunk, count), uint32, by term then chunk."""
    return _counted(reader, terms, allowed)()


def _counted(
    reader: IndexReader, terms: list[Term], allowed: np.ndarray | None, start: bool = False
) -> Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """`_chunk_counts`, given by the function returned; with `start`, the count is begun on the
    core's threads first. Over a large index, the counts are those kept of the terms
    (`KeptCounts`, each filter's apart), and of the others, which are then kept."""
    start_key, file_offsets, kept, scope = _layout(reader, allowed)

    def count(asked: list[Term]) -> Callable[[], tuple[np.ndarray, ...]]:
        texts: list[str | bytes] = [term.text for term in asked]
        folds = [not term.case_sensitive for term in asked]
        if start:
            return reader.text.start_chunk_line_counts(texts, folds, start_key, file_offsets)
        found = reader.text.chunk_line_counts(texts, folds, start_key, file_offsets)
        return lambda: found

    if len(reader.chunk_file) < config.current().TEXT_COUNTS_KEPT_MIN_CHUNKS:
        whole = count(terms)
        return lambda: _numbered(whole(), kept)
    memo, owner, capacity = _kept, _counts_owner(reader), config.current().TEXT_COUNTS_KEPT_BYTES
    keys = [(owner, term.text, term.case_sensitive, scope) for term in terms]
    known = [memo.get(key) for key in keys]
    missing = [i for i, found in enumerate(known) if found is None]
    pending = count([terms[i] for i in missing]) if missing else None

    def counted() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if pending is not None:
            found_terms, chunks, counts = pending()
            bounds = np.searchsorted(found_terms, np.arange(len(missing) + 1)).tolist()
            for j, i in enumerate(missing):
                of_term = chunks[bounds[j] : bounds[j + 1]], counts[bounds[j] : bounds[j + 1]]
                memo.keep(keys[i], *of_term, capacity)
                known[i] = of_term
            if len(missing) == len(terms):  # nothing was kept: the core's table is the answer
                return _numbered((found_terms, chunks, counts), kept)
        parts = [found for found in known if found is not None]
        if len(parts) != len(terms):
            raise RuntimeError("a term was left without its count")
        found = (
            np.repeat(np.arange(len(terms), dtype=np.uint32), [len(chunks) for chunks, _ in parts]),
            np.concatenate([chunks for chunks, _ in parts]),
            np.concatenate([counts for _, counts in parts]),
        )
        return _numbered(found, kept)

    return counted


#: What a term's count is kept under: the index it counts in (`_counts_owner`), its text,
#: whether its case counts, and the filter it was counted within (`_layout`'s digest of the
#: filter's chunks; None: the whole index).
CountKey = tuple[object, str, bool, bytes | None]


class KeptCounts:
    """Terms' counts of lines by chunk (`CountKey` -> (chunks, counts), uint32, the chunks
    numbered as the filter's layout numbers them), kept for the next questions: the words of a
    repository's questions recur, and at scale a common word's count is most of a question's
    time. Up to a capacity in bytes, over every index that keeps its counts here, the least
    recently asked let go first (an index closed, or an edit's earlier generation, is let go
    that way); a count is kept packed (`_packed`: about 3 bytes an entry, not 8). Safe to share
    between threads."""

    def __init__(self) -> None:
        self._kept: OrderedDict[CountKey, tuple[int, np.ndarray, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: CountKey) -> tuple[np.ndarray, np.ndarray] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
        return _unpacked(*found)

    def keep(self, key: CountKey, chunks: np.ndarray, counts: np.ndarray, capacity: int) -> None:
        """Keep `key`'s count, then let go of the least recently asked until at most `capacity`
        bytes are kept (a count larger than that is not kept, nor packed: 2 bytes a chunk at least)."""
        if 2 * len(chunks) > capacity:
            return
        packed = _packed(chunks, counts)
        size = packed[1].nbytes + packed[2].nbytes
        with self._lock:
            if key in self._kept or size > capacity:
                return
            self._kept[key] = packed
            self._bytes += size
            while self._bytes > capacity:
                _, (_, steps, dropped) = self._kept.popitem(last=False)
                self._bytes -= steps.nbytes + dropped.nbytes


def _packed(chunks: np.ndarray, counts: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """A term's (chunks, counts), chunks ascending, as (first chunk, steps from each chunk to the
    next, counts), each array in the narrowest unsigned type that holds its values."""
    if not len(chunks):
        return 0, np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.uint8)
    steps = np.diff(chunks)
    return int(chunks[0]), steps.astype(_narrowest(steps)), counts.astype(_narrowest(counts))


def _narrowest(values: np.ndarray) -> type[np.unsignedinteger]:
    largest = int(values.max()) if len(values) else 0
    return np.uint8 if largest <= 0xFF else np.uint16 if largest <= 0xFFFF else np.uint32


def _unpacked(first: int, steps: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`_packed`'s inverse: (chunks, counts), uint32."""
    if not len(counts):
        return np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=np.uint32)
    chunks = np.empty(len(counts), dtype=np.uint32)
    chunks[0] = first
    np.cumsum(steps, dtype=np.uint32, out=chunks[1:])
    chunks[1:] += np.uint32(first)
    return chunks, counts.astype(np.uint32)


#: The counts kept in this process (`config.TEXT_COUNTS_KEPT_BYTES` at most, for all its indexes).
_kept = KeptCounts()


@per_reader
def _counts_owner(reader: IndexReader) -> object:
    """What an opened index's counts are kept under: its own, so an edit's generation counts
    afresh, and a closed index's are let go as others are kept."""
    return object()


def _layout(
    reader: IndexReader, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bytes | None]:
    """The chunk layout the core counts in (`TrigramIndex.chunk_line_counts`): the index's, or
    with `allowed` (a filter's chunks) those chunks alone, numbered among themselves (a file's
    chunks stay together), with the index's id of each (`kept`) and a digest of `allowed` (what
    tells this layout from another's). A filter's layout is kept for its next questions: at
    59,000 files it costs 0.4 ms to make."""
    if allowed is None:
        return reader.chunk_start_key, reader.file_chunk_offsets, None, None
    return _filter_layouts(reader).get(allowed, lambda mask: _filter_layout(reader, mask))


#: Layouts of the filters asked most recently, kept per index: few, as a filter that keeps most
#: of a large index has a layout of tens of megabytes.
_KEPT_FILTER_LAYOUTS = 4


@per_reader
def _filter_layouts(reader: IndexReader) -> PerMask:
    return PerMask(_KEPT_FILTER_LAYOUTS)


def _filter_layout(reader: IndexReader, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, bytes]:
    kept = np.flatnonzero(allowed)
    start_key = np.ascontiguousarray(reader.chunk_start_key[kept])
    per_file = np.bincount(np.asarray(reader.chunk_file)[kept].astype(np.int64), minlength=len(reader.files))
    file_offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(per_file, dtype=np.int64)])
    digest = hashlib.blake2b(np.packbits(np.asarray(allowed, dtype=bool)).tobytes(), digest_size=16).digest()
    return start_key, file_offsets, kept, digest


def _numbered(found: tuple[np.ndarray, ...], kept: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts made in a `_layout`'s numbering, (term index, chunk, count), with the index's
    chunk ids."""
    found_terms, chunks, counts = found
    if kept is not None:
        chunks = kept[chunks.astype(np.int64)].astype(chunks.dtype)
    return found_terms, chunks, counts


def _by_lines(
    reader: IndexReader, terms: list[Term], any_case: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """As `_by_chunk_counts`, from every matching line, which are returned too (chunk, line),
    for the answer's spans."""
    n, width = len(reader.chunk_file), len(terms)
    term_ids, chunks, lines = _caseless_again(terms, lambda asked: _line_chunks(reader, asked), any_case)
    # One dense count table, built without a Python loop over chunks: entry (chunk, term).
    tf_all = np.bincount(chunks * width + term_ids, minlength=n * width).reshape(n, width)
    ids = np.flatnonzero(tf_all.any(axis=1))
    return chunks, lines, ids, tf_all[ids].astype(np.float64)


def _by_regex(reader: IndexReader, pattern: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """As `_by_lines` for the one term that is the regular expression `pattern`: every line a
    match of it starts on. QueryError for a pattern that is invalid or past the limits."""
    try:
        docs, lines = reader.text.regex_lines(pattern)
    except ValueError as err:
        raise QueryError(str(err).removeprefix("invalid argument: ") or "invalid regular expression") from err
    chunks, lines = _chunks_of_lines(reader, docs, lines)
    n = len(reader.chunk_file)
    tf_all = np.bincount(chunks, minlength=n)
    ids = np.flatnonzero(tf_all)
    return chunks, lines, ids, tf_all[ids].astype(np.float64).reshape(-1, 1)


def _caseless_again(
    terms: list[Term],
    search: Callable[[list[Term]], tuple[np.ndarray, np.ndarray, np.ndarray]],
    any_case: bool = True,
    first: Callable[[], tuple[np.ndarray, ...]] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`search(terms)` (or `first()`, that search already under way): (the index of the term
    each row found, two more columns); then a quoted phrase that occurs nowhere with its case is
    looked for in any case, its rows added."""
    found_terms, found, also = first() if first is not None else search(terms)
    if not any_case:
        return found_terms, found, also
    retry = [t for t, term in enumerate(terms) if term.case_sensitive and not (found_terms == t).any()]
    if not retry:
        return found_terms, found, also
    more_terms, more_found, more_also = search([Term(terms[t].text, False, terms[t].weight) for t in retry])
    return (
        np.concatenate([found_terms, np.asarray(retry, dtype=found_terms.dtype)[more_terms]]),
        np.concatenate([found, more_found]),
        np.concatenate([also, more_also]),
    )


def _matching_lines(chunks: np.ndarray, lines: np.ndarray, wanted: np.ndarray) -> dict[int, tuple[tuple[int, int], ...]]:
    """chunk -> its matching lines as one-line spans, for the chunks in `wanted`: the answer to
    an exact-string question is each line holding it."""
    keep = np.isin(chunks, wanted)
    pairs = np.unique(np.stack([chunks[keep], lines[keep]], axis=1), axis=0) if keep.any() else np.zeros((0, 2))
    spans: dict[int, list[tuple[int, int]]] = {}
    for chunk, line in pairs.tolist():
        spans.setdefault(int(chunk), []).append((int(line), int(line)))
    return {chunk: tuple(found) for chunk, found in spans.items()}


def _definitions_first(reader: IndexReader, query: Query, ids: np.ndarray, scores: np.ndarray) -> None:
    """An exact-match literal that is a name ("ZodError", "ECONNREFUSED") is found where it is
    defined as well as everywhere it is used: the chunks defining it go first, by raising their
    scores above every other (in place)."""
    literal = query.literal
    if literal is None or not literal.isidentifier() or not len(ids):
        return
    # The names `defined_as` looks up, read from the rows: the symbol table is not made for it.
    defining = reader.chunks_defining([literal, "$" + literal])
    if defining:
        scores[np.isin(ids, defining)] += scores.max()


def _line_chunks(reader: IndexReader, terms: list[Term]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every line holding a term: the term's index, the chunk holding the line and the line
    (one entry per line, so repeats count), from a single call into the index."""
    term_ids, docs, lines = reader.text.search_lines(
        [term.text for term in terms], [not term.case_sensitive for term in terms]
    )
    term_ids, docs, lines = term_ids.astype(np.int64), docs.astype(np.int64), lines.astype(np.int64)
    keep = reader.file_chunk_offsets[docs] < reader.file_chunk_offsets[docs + 1]
    chunks, lines = _chunks_of_lines(reader, docs, lines)
    return term_ids[keep], chunks, lines


def _chunks_of_lines(reader: IndexReader, docs: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chunk holding each (document, line), and the lines, without those of files with no
    chunk (only blank lines). Within a file, the chunk holding a line is the last one starting
    at or before it (a line in a gap between chunks goes to the chunk before the gap)."""
    first = reader.file_chunk_offsets[docs]
    last = reader.file_chunk_offsets[docs + 1] - 1
    keep = first <= last
    position = np.searchsorted(reader.chunk_start_key, (docs << 32) + lines, side="right") - 1
    return np.clip(position, first, last)[keep], lines[keep]
