"""Opening a published index for queries: metadata in memory, embeddings memory-mapped."""

from __future__ import annotations

import json
import sqlite3
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from maguyva import config
from maguyva._core import group_ids
from maguyva.errors import CorruptIndexError, IndexStoreError
from maguyva.index import gc_pause, graph, roles, store
from maguyva.index.segments import CHUNKS, REFS, SYMBOLS, Segments
from maguyva.index.text_layers import LayeredTextIndex


class FileInfo(NamedTuple):
    """One indexed file as its generation recorded it. A tuple: a generation of 59,280 files
    makes them in 23 ms, against 55 ms as frozen dataclasses."""

    id: int
    path: str
    language: str | None
    size: int
    mtime_ns: int
    sha256: str


#: What `IndexReader._code_words` holds for a word it has not read yet.
_UNREAD = np.empty(0, dtype=np.int64)


def _cached_entries(ids: np.ndarray | None) -> int:
    """What a code-word posting counts against config.CODE_WORD_CACHE_ENTRIES."""
    return 1 + (0 if ids is None else len(ids))


class IndexReader:
    """One generation of an index, open for reading. Safe to share between threads."""

    #: The files' paths, languages and roles (see `_load`).
    layout: FileLayout
    #: Each file of the generation, by id.
    files: list[FileInfo]
    #: The rows of its `files` table, by id (`store.file_rows`).
    file_rows: Sequence[tuple[Any, ...]]

    def __init__(self, index_dir: Path, earlier: IndexReader | None = None):
        """The published generation of the index at `index_dir`. `earlier`, a reader of an
        earlier generation of the same index, lends it what the two share unchanged (what is
        derived from the files' layout, when it is the same; a trigram base that is the same file
        is shared by every reader of the process, `LayeredTextIndex.load`)."""
        self.index_dir = index_dir
        self._earlier_layout: FileLayout | None = earlier.layout if earlier is not None else None
        self._earlier_files: list[FileInfo] | None = earlier.files if earlier is not None else None
        self._earlier_rows: Sequence[tuple[Any, ...]] | None = earlier.file_rows if earlier is not None else None
        # Pinned while this reader is open: a build publishing a newer generation leaves this
        # one on disk until the reader closes.
        self._pinned = store.PinnedGeneration.open(index_dir)
        try:
            with gc_pause.paused():
                self._load()
        except BaseException:
            self._pinned.close()
            raise
        #: Byte offsets of the line breaks of recently shown files (bound to the text index, not
        #: to the reader: a reader no one holds is freed at once, and its pin with it).
        #: Code-word postings read so far (None: no file spells the word), as 32-bit file ids,
        #: the least recently asked dropped past config.CODE_WORD_CACHE_ENTRIES ids: questions of
        #: one session share their words, and a common word's posting read from the database
        #: costs a question about 0.2 ms at 59,000 files.
        self._code_words: OrderedDict[str, np.ndarray | None] = OrderedDict()
        self._code_word_entries = 0
        self._code_words_lock = threading.Lock()
        #: The chunks defining the names of recent quoted questions (`chunks_defining`).
        self._defining: dict[tuple[str, ...], list[int]] = {}
        self._defining_lock = threading.Lock()

    def _load(self) -> None:
        self.generation = generation = self._pinned.path
        # Every part as written, before any is read: damage is an error, never data. A folder
        # without a manifest is checked after its format version, which an older layout fails.
        manifest_written = (generation / store.MANIFEST).exists()
        if manifest_written:
            store.verify(generation)
        self.db = store.open_database(generation)
        self._db_lock = threading.Lock()
        try:
            if not manifest_written:
                store.verify(generation)
            self.meta = store.read_meta(self.db)
            self.file_rows = file_rows = store.file_rows(self.db, generation)
            earlier_rows, self._earlier_rows = self._earlier_rows, None
            self.files = _files_of(file_rows, self._earlier_files, earlier_rows)
            self._earlier_files = None
            #: Each file's roles (`maguyva.index.roles`), found at build time: a bit per role.
            self.file_roles = np.array([row[6] for row in file_rows], dtype=np.int64)
            #: file id -> the part names and versions that qualify its roles (only files with some).
            self.file_role_names: dict[int, dict[str, list[str]]] = {
                row[0]: json.loads(row[7]) for row in file_rows if row[7]
            }
            #: The files' paths, languages and roles: an earlier generation's when they are the
            #: same (an edit in place), so that what is derived from them alone is shared.
            earlier_layout, self._earlier_layout = self._earlier_layout, None
            if earlier_layout is not None and earlier_rows is not None and _same_layout(file_rows, earlier_rows):
                self.layout = earlier_layout
            else:
                layout = tuple((row[1], row[2], row[6], row[7]) for row in file_rows)
                self.layout = earlier_layout if earlier_layout is not None and earlier_layout.files == layout else FileLayout(layout)
            #: The rows of files, chunks, symbols and references (`index.segments`).
            self.segments = Segments(generation, len(file_rows))
            self.segments.read_arrays(CHUNKS, ["file_id", "start_line", "end_line", "symbol_id"])
            chunk_file = self.segments.array(CHUNKS, "file_id")
            self.chunk_file = chunk_file.astype(np.uint32)
            self.chunk_start = self.segments.array(CHUNKS, "start_line").astype(np.int32)
            self.chunk_end = self.segments.array(CHUNKS, "end_line").astype(np.int32)
            self.chunk_symbol: list[str | None] = self.segments.column(CHUNKS, "symbol")
            #: Every graph node's PageRank and in-degree: files first, then symbols by id.
            self.node_centrality, self.node_in_degree = store.load_nodes(generation / store.NODES)
            #: The graph's edges between those nodes.
            self.edges = graph.EdgeColumns.of_matrix(store.load_edges(generation / store.EDGES), len(self.node_centrality))
            # A chunk's node: the symbol it holds, else its file.
            symbol_ids = self.segments.chunk_symbol_ids()
            chunk_node = np.where(symbol_ids < 0, chunk_file, len(file_rows) + symbol_ids)
            if len(chunk_node) and (chunk_node.max() >= len(self.node_centrality) or chunk_node.min() < 0):
                raise ValueError("a chunk names a graph node that nodes.npy lacks")
            self.chunk_centrality = self.node_centrality[chunk_node].astype(np.float32)
            self.codes = self.segments.codes(
                store.load_codes(generation / store.CODES), store.load_codes(generation / store.CODES_DELTA)
            )
            self.text: LayeredTextIndex = LayeredTextIndex.of_generation(generation, self.segments)
        except (IndexStoreError, sqlite3.Error, OSError, ValueError, TypeError, EOFError) as err:
            self.db.close()
            if (segments := getattr(self, "segments", None)) is not None:
                segments.close()
            if isinstance(err, IndexStoreError) and not isinstance(err, CorruptIndexError):
                raise
            # Unreachable for a generation its manifest vouches for, short of damage after it
            # was checked; reported the same way.
            raise store.damaged(generation, f"is damaged ({type(err).__name__}: {err})") from None
        if (
            self.codes.ndim != 2
            or self.codes.dtype != np.uint8
            or self.codes.shape[0] != len(self.chunk_file)
            or self.text.doc_count != len(self.files)
            or len(self.node_centrality) != len(self.files) + int(self.meta.get("count_symbols", -1))
            or self.segments.order.total(SYMBOLS) != int(self.meta.get("count_symbols", -1))
        ):
            self.db.close()
            self.segments.close()
            raise store.damaged(generation, "is damaged (its files disagree)")

    def sql(self, statement: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read-only statement over the generation's own database (its meta, files and
        edges); one thread at a time uses the connection."""
        with self._db_lock:
            try:
                return self.db.execute(statement, parameters).fetchall()
            except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
                raise store.damaged(self.generation / store.META, f"is damaged ({err})") from None

    def symbol_rows(self, columns: str) -> list[tuple[Any, ...]]:
        """`columns` of the `symbols` table (store.SEGMENT_SCHEMA) for every symbol, by id."""
        try:
            return self.segments.rows(SYMBOLS, columns)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None

    def symbol_column(self, name: str) -> list[Any]:
        """The column `name` of the `symbols` table for every symbol, by id."""
        try:
            return self.segments.column(SYMBOLS, name)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None

    def symbol_array(self, name: str) -> np.ndarray:
        """The integer column `name` of the `symbols` table for every symbol, by id (int64)."""
        try:
            return self.segments.array(SYMBOLS, name)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None

    def symbol_runs(
        self, name: str, key: object, make: Callable[[list[Any]], tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """`Segments.runs_of_column` of the `symbols` table's column `name`."""
        try:
            return self.segments.runs_of_column(SYMBOLS, name, key, make)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None

    def chunks_defining(self, names: Sequence[str]) -> list[int]:
        """The chunks holding the definitions named any of `names` (by `symbols_by_name` when it
        is made), for a question that needs no symbol table (a quoted name)."""
        key = tuple(names)
        known = self._defining.get(key)
        if known is not None:
            return known
        by_name = self.__dict__.get("symbols_by_name")
        if by_name is not None:
            ids = [i for name in names for i in by_name.get(name, ())]
        else:  # a scan of the names costs a third of grouping them, which a quoted name needs not
            wanted = frozenset(names)
            ids = [i for i, name in enumerate(self.symbol_column("name")) if name in wanted]
        rows = self.symbols_at(ids, "file_id, start_line")
        chunks = self.chunks_holding([row[1] for row in rows], [row[2] for row in rows])
        found = [chunk for chunk in chunks if chunk >= 0]
        with self._defining_lock:
            if len(self._defining) >= _KEPT_DEFINING:
                self._defining.pop(next(iter(self._defining)))  # the oldest
            self._defining[key] = found
        return found

    def symbols_at(self, ids: Sequence[int], columns: str) -> list[tuple[Any, ...]]:
        """(id, *columns) of the symbols `ids`, by id."""
        try:
            return self.segments.rows_at(SYMBOLS, ids, columns)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None

    def import_references(self) -> list[tuple[int, str, int, str]]:
        """(file id, module, line, imported names as JSON) of every import, by reference id."""
        try:
            rows = self.segments.rows_where(REFS, "file_id, name, line, imported_names", "kind = 'import'", keep=True)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None
        return [row[1:] for row in rows]

    def code_word_files(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """Per word of `words`: the ids of the files whose code spells it (`lexicon.code_words`),
        ascending (uint32); a word no file spells is left out."""
        known = self._code_words
        found: dict[str, np.ndarray | None] = {}
        missing: list[str] = []
        with self._code_words_lock:
            for word in words:
                ids = known.get(word, _UNREAD)
                if ids is _UNREAD:
                    missing.append(word)
                else:
                    known.move_to_end(word)
                    found[word] = ids
        if missing:
            try:
                read = self.segments.code_words(missing)
            except (sqlite3.DatabaseError, UnicodeDecodeError, ValueError) as err:
                raise store.damaged(self.generation / store.ROWS, f"is damaged ({err})") from None
            limit = config.current().CODE_WORD_CACHE_ENTRIES
            with self._code_words_lock:
                for word in missing:
                    ids = read.get(word)
                    if ids is not None:
                        ids = ids.astype(np.uint32)  # file ids are 32-bit in the index
                        ids.flags.writeable = False  # shared by every question that reads it
                    found[word] = ids
                    if word not in known:
                        known[word] = ids
                        self._code_word_entries += _cached_entries(ids)
                while self._code_word_entries > limit and len(known) > 1:
                    _, dropped = known.popitem(last=False)
                    self._code_word_entries -= _cached_entries(dropped)
        return {word: ids for word, ids in found.items() if ids is not None}

    @property
    def root(self) -> Path:
        return Path(self.meta["root"])

    @property
    def skipped(self) -> dict[str, int]:
        skipped: dict[str, int] = json.loads(self.meta.get("skipped", "{}"))
        return skipped

    @property
    def embedder(self) -> dict[str, object]:
        embedder: dict[str, object] = json.loads(self.meta["embedder"])
        return embedder

    def file_lines(self, file_id: int) -> list[str]:
        """The lines of a file as indexed (decoded leniently)."""
        return self.text.doc_bytes(file_id).decode("utf-8", errors="replace").splitlines()

    def lines_between(self, file_id: int, start: int, end: int) -> list[str]:
        """Lines start..end (1-based, inclusive) of a file, as far as it has them; the core finds
        them, so a result costs its own lines, not a copy of its whole file."""
        found = self.text.doc_lines(file_id, start, end) if end >= start else None
        if found is None:
            return []
        return [p.decode("utf-8", errors="replace").rstrip("\r") for p in found.split(b"\n")]

    def chunk_text(self, chunk_id: int) -> str:
        lines = self.file_lines(int(self.chunk_file[chunk_id]))
        return "\n".join(lines[self.chunk_start[chunk_id] - 1 : self.chunk_end[chunk_id]])

    def chunk_at(self, file_id: int, line: int) -> int | None:
        """The first chunk of `file_id` whose span holds `line`."""
        first, end = int(self.file_chunk_offsets[file_id]), int(self.file_chunk_offsets[file_id + 1])
        if first == end:
            return None
        starts, ends = self.chunk_start[first:end], self.chunk_end[first:end]
        hits = np.flatnonzero((starts <= line) & (ends >= line))
        return first + int(hits[0]) if len(hits) else first

    @cached_property
    def chunk_ids(self) -> np.ndarray:
        """0 .. chunks - 1: as fusion's grouping key, every chunk is its own group."""
        return np.arange(len(self.chunk_file), dtype=np.uint32)

    @cached_property
    def no_centrality(self) -> np.ndarray:
        """A zero centrality per chunk: fusion with it boosts nothing."""
        return np.zeros(len(self.chunk_file), dtype=np.float32)

    @cached_property
    def file_chunk_offsets(self) -> np.ndarray:
        """Chunk ids of file f are file_chunk_offsets[f] .. file_chunk_offsets[f + 1] - 1."""
        return np.searchsorted(self.chunk_file, np.arange(len(self.files) + 1)).astype(np.int64)

    @cached_property
    def chunk_start_key(self) -> np.ndarray:
        """(file id << 32) + start line of every chunk: ascending, so a (file, line) position
        finds its chunk by binary search."""
        return (self.chunk_file.astype(np.int64) << 32) + self.chunk_start.astype(np.int64)

    @cached_property
    def chunk_lines(self) -> np.ndarray:
        """Length of every chunk in lines."""
        return (self.chunk_end - self.chunk_start + 1).astype(np.float64)

    @cached_property
    def symbol_locations(self) -> list[tuple[int, int]]:
        """(file id, start line) of every symbol, by symbol id."""
        return [tuple(row) for row in self.symbol_rows("file_id, start_line")]

    @cached_property
    def symbol_ends(self) -> list[int]:
        """The last line of every symbol, by symbol id."""
        return self.symbol_column("end_line")

    def node_span(self, node: int) -> tuple[int, int] | None:
        """The lines of a graph node that is a symbol (None for a file)."""
        if node < len(self.files):
            return None
        symbol = node - len(self.files)
        return self.symbol_locations[symbol][1], self.symbol_ends[symbol]

    @cached_property
    def symbols_by_name(self) -> dict[str, list[int]]:
        """Symbol ids by exact name and by lowercased name (the latter under a "\0" prefix), each
        list ascending, the lowercased names in the order first met."""
        names = self.symbol_column("name")
        every = np.arange(len(names) + 1, dtype=np.int64)
        firsts, ids, bounds = group_ids(names, every[:-1], every)
        distinct = [names[j] for j in firsts]
        spans = bounds.tolist()
        listed = ids.tolist()
        table: dict[str, list[int]] = {name: listed[spans[g] : spans[g + 1]] for g, name in enumerate(distinct)}
        # The names of one lowercase spelling, in the order first met (which is by their first id).
        lowered = [name.lower() for name in distinct]
        groups = np.arange(len(distinct) + 1, dtype=np.int64)
        lower_firsts, members, lower_bounds = group_ids(lowered, groups[:-1], groups)
        member_list, lower_spans = members.tolist(), lower_bounds.tolist()
        for g, first in enumerate(lower_firsts):
            spellings = member_list[lower_spans[g] : lower_spans[g + 1]]
            found = list(table[distinct[spellings[0]]]) if len(spellings) == 1 else sorted(i for n in spellings for i in table[distinct[n]])
            table["\0" + lowered[first]] = found
        return table

    def chunks_holding(self, file_ids: Sequence[int] | np.ndarray, lines: Sequence[int] | np.ndarray) -> list[int]:
        """The chunk holding each (file, line), or -1 for a file with no chunk: the last chunk
        starting at or before the line, found for all at once by binary search (chunks are ordered
        by file, then start line; code chunks never overlap, so it is the one chunk holding a
        definition), and where that chunk ends before the line, `chunk_at`'s answer."""
        if not len(file_ids):
            return []
        chunk_file = self.chunk_file.astype(np.int64)
        starts = self.chunk_start_key
        files = np.asarray(file_ids, dtype=np.int64)
        wanted = np.asarray(lines, dtype=np.int64)
        positions = np.searchsorted(starts, (files << 32) + wanted, side="right") - 1
        safe = np.clip(positions, 0, max(len(starts) - 1, 0))
        if len(starts):
            fits = (positions >= 0) & (chunk_file[safe] == files) & (self.chunk_end[safe] >= wanted)
        else:
            fits = np.zeros(len(files), dtype=bool)
        chunks: list[int] = np.where(fits, safe, -1).tolist()
        for i in np.flatnonzero(~fits).tolist():
            found = self.chunk_at(int(files[i]), int(wanted[i]))
            chunks[i] = -1 if found is None else found
        return chunks

    @cached_property
    def node_chunks(self) -> np.ndarray:
        """The chunk that shows each graph node (-1 for none): a symbol's definition, or a
        file's first chunk. Files come first among the nodes, then symbols by id."""
        files = len(self.files)
        file_ids = np.concatenate((np.arange(files, dtype=np.int64), self.symbol_array("file_id")))
        lines = np.concatenate((np.ones(files, dtype=np.int64), self.symbol_array("start_line")))
        return np.asarray(self.chunks_holding(file_ids, lines), dtype=np.int64)

    def node_chunk(self, node: int) -> int | None:
        """The chunk that shows a graph node: a symbol's definition, or a file's first chunk."""
        chunk = int(self.node_chunks[node])
        return None if chunk < 0 else chunk

    @cached_property
    def graph(self) -> graph.DependencyGraph:
        return graph.DependencyGraph(len(self.node_centrality), self.edges)

    def overridden(self, node: int) -> list[int]:
        """The graph nodes of the methods that the method at `node` overrides: of its name, in
        the classes its class declares as bases (one level, as resolution reads them). A call
        of one of those may run this one."""
        files = len(self.files)
        if node < files:
            return []
        ((_, file_id, name, qualified, kind),) = self.symbols_at([node - files], "file_id, name, qualified_name, kind")
        if kind != "method" or "." not in qualified:
            return []
        owner = qualified.rsplit(".", 1)[0]
        classes = [
            files + i
            for i, f, q in self.symbols_at(self.symbols_by_name.get(owner.rsplit(".", 1)[-1], []), "file_id, qualified_name")
            if f == file_id and q == owner
        ]
        bases = {e.dst for c in classes for e in self.graph.outgoing.get(c, ()) if e.kind == "inherit" and e.dst >= files}
        if not bases:
            return []
        base_names = {files + i: q for i, q in self.symbols_at(sorted(b - files for b in bases), "qualified_name")}
        methods = self.symbols_by_name.get(name, [])
        return sorted(
            files + i
            for i, f, q in self.symbols_at(methods, "file_id, qualified_name")
            if any(q == f"{base}.{name}" and f == self.symbol_locations[b - files][0] for b, base in base_names.items())
        )

    def close(self) -> None:
        with self._db_lock:
            self.db.close()
        self.segments.close()
        self._pinned.close()


_Derived = TypeVar("_Derived")


#: Names whose defining chunks a reader keeps (`IndexReader.chunks_defining`).
_KEPT_DEFINING = 256


def _files_of(
    rows: Sequence[tuple[Any, ...]], earlier: list[FileInfo] | None, earlier_rows: Sequence[tuple[Any, ...]] | None = None
) -> list[FileInfo]:
    """The `FileInfo` of each row of the `files` table (id, path, language, size, mtime, digest,
    ...), the `earlier` generation's own object where it is the same: an edit keeps most files
    as they were, and objects kept from one generation to the next are not new work for the
    cyclic collector (named tuples are never untracked by it). A row that is the very row the
    earlier generation read (`earlier_rows`: an update hands on the rows it kept) is its file."""
    found: list[FileInfo] = []
    before = earlier or []
    handed = earlier_rows if earlier_rows is not None and len(earlier_rows) == len(before) else ()
    for row in rows:
        i = row[0]
        if i < len(handed) and row is handed[i]:
            found.append(before[i])
            continue
        _, path, language, size, mtime_ns, digest, _, _ = row
        key = (i, store.path_from_db(path), language, size, mtime_ns, digest)
        old = before[i] if i < len(before) else None
        found.append(old if old is not None and old == key else FileInfo._make(key))
    return found


def _same_layout(rows: Sequence[tuple[Any, ...]], earlier_rows: Sequence[tuple[Any, ...]]) -> bool:
    """Whether two generations' `files` rows give the same layout (path, language and roles of
    each file), looking at the values only of rows that are not the very same."""
    return len(rows) == len(earlier_rows) and all(
        row is old or (row[1:3] == old[1:3] and row[6:8] == old[6:8]) for row, old in zip(rows, earlier_rows)
    )


class FileLayout:
    """The files of a generation as rows of (path, language, roles, role names), compared by
    value when a later generation opens; the generations that share one share `per_layout`'s
    derivations."""

    __slots__ = ("files", "__weakref__")

    def __init__(self, files: tuple[tuple[Any, ...], ...]):
        self.files = files


def per_reader(make: Callable[[IndexReader], _Derived]) -> Callable[[IndexReader], _Derived]:
    """`make(reader)` computed on first use for each opened index and tuning (`config.current()`),
    and kept while its reader lives (one computation even when several threads ask at once). For
    what queries derive from an index (a symbol table, a path vocabulary), which the reader itself
    need not know about; a table made with one tuning's numbers is never served to another."""
    return _kept_by(lambda reader: reader, make)


def per_layout(make: Callable[[IndexReader], _Derived]) -> Callable[[IndexReader], _Derived]:
    """`per_reader` for what depends on the files' paths, languages and roles alone (`make` must
    read nothing else): computed once per tuning for every generation of the same `FileLayout`,
    so an edit in place does not derive it again (a path vocabulary of 10,000 files costs tens of
    milliseconds)."""
    return _kept_by(lambda reader: reader.layout, make)


class PerMask:
    """What a question derives from a filter's mask (a mask over the index's chunks), kept for the
    `size` masks asked most recently: a searcher asks with one array for the same filters, so a
    mask is known by its identity, and is held with its value so that the identity names it while
    kept. Safe to share between threads."""

    def __init__(self, size: int):
        self._size = size
        self._kept: dict[int, tuple[np.ndarray, Any]] = {}
        self._lock = threading.Lock()

    def get(self, mask: np.ndarray, make: Callable[[np.ndarray], _Derived]) -> _Derived:
        """The value made of `mask`: `make(mask)` the first time it is asked while kept."""
        with self._lock:
            known = self._kept.get(id(mask))
        if known is not None and known[0] is mask:
            value: _Derived = known[1]
            return value
        value = make(mask)
        with self._lock:
            if len(self._kept) >= self._size:
                self._kept.pop(next(iter(self._kept)))  # the oldest
            self._kept[id(mask)] = (mask, value)
        return value


def _kept_by(owner_of: Callable[[IndexReader], Any], make: Callable[[IndexReader], _Derived]) -> Callable[[IndexReader], _Derived]:
    """`make(reader)` kept per tuning for as long as `owner_of(reader)` lives."""
    made: weakref.WeakKeyDictionary[Any, dict[config.Tuning, _Derived]] = weakref.WeakKeyDictionary()
    lock = threading.Lock()

    @wraps(make)
    def get(reader: IndexReader) -> _Derived:
        tuning, owner = config.current(), owner_of(reader)
        value = made.get(owner, {}).get(tuning)
        if value is None:
            with lock:
                value = made.setdefault(owner, {}).get(tuning)
                if value is None:
                    value = made[owner][tuning] = make(reader)
        return value

    return get


@per_reader
def chunk_demotion(reader: IndexReader) -> np.ndarray:
    """The ranking multiplier of every chunk's path (1, or VENDORED_DEMOTION for vendored, built,
    minified or generated code)."""
    per_file = np.where(reader.file_roles & roles.VENDORED, config.current().VENDORED_DEMOTION, 1.0).astype(np.float32)
    return per_file[reader.chunk_file] if len(reader.chunk_file) else np.zeros(0, dtype=np.float32)
