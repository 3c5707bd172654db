"""A generation's rows in two segments: a base, written by a build of every file, and a delta of
the files edited since, whose rows replace the base's.

Each segment is a database of `store.SEGMENT_SCHEMA` (`rows.sqlite`, `rows-delta.sqlite`) and
the codes of its chunks (`codes.npy`, `codes-delta.npy`). Its ids are its own, given file by file
in file id order; file ids are the generation's (an update that keeps every path keeps every id).
The generation numbers its chunks, symbols and references as a full build of the same files
does: file by file, a file's rows taken from the delta when the delta holds the file, else from
the base (`SegmentOrder`). So whatever reads them sees one table, the same as a full build's,
while an edit writes the delta's rows and links the base's files from the previous generation.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from maguyva.index import store

#: The tables whose rows are numbered file by file, in the order of `SegmentFiles.starts`.
TABLES = ("chunks", "symbols", "refs")
CHUNKS, SYMBOLS, REFS = range(3)
#: Values a statement's `IN (...)` list takes at most (SQLite caps a statement's parameters).
IN_LIST = 500


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """The files a segment holds (generation file ids, ascending) and where each one's rows start:
    row i of `starts` holds the first chunk, symbol and reference id of file `files[i]`, and the
    last row the segment's totals."""

    files: np.ndarray
    starts: np.ndarray

    @classmethod
    def read(cls, db: sqlite3.Connection) -> SegmentFiles:
        """The files of the segment database `db`; ValueError when its rows are not numbered file
        by file from 0, or belong to files it does not hold."""
        held = np.array(
            db.execute("SELECT file_id, chunks, symbols, refs FROM held ORDER BY file_id").fetchall(), dtype=np.int64
        ).reshape(-1, 1 + len(TABLES))
        files, counts = held[:, 0].copy(), held[:, 1:]
        if np.any(counts < 0):
            raise ValueError("a segment lists a negative count of rows")
        for column, table in enumerate(TABLES):
            # Ids from 0, as many as listed: a file's rows are then where its counts put them
            # (the build gives them file by file).
            rows, last = db.execute(f"SELECT count(*), coalesce(max(id), -1) FROM {table}").fetchone()
            if rows != int(counts[:, column].sum()) or last != rows - 1:
                raise ValueError(f"a segment's {table} are not the rows its files list")
        starts = np.zeros((len(files) + 1, len(TABLES)), dtype=np.int64)
        np.cumsum(counts, axis=0, out=starts[1:])
        return cls(files, starts)


class SegmentOrder:
    """The generation's numbering of the rows of its base and delta: for each table, which row of
    the two (the base's ids, then the delta's after them) has each id of the generation."""

    def __init__(self, file_count: int, base: SegmentFiles, delta: SegmentFiles):
        if len(base.files) != file_count or np.any(base.files != np.arange(file_count)):
            raise ValueError("the base segment does not hold every file of the generation")
        if len(delta.files) and (delta.files[0] < 0 or delta.files[-1] >= file_count):
            raise ValueError("the delta segment holds a file the generation lacks")
        self.base, self.delta = base, delta
        #: Whether each file's rows are the delta's.
        self.in_delta = np.zeros(file_count, dtype=bool)
        self.in_delta[delta.files] = True
        #: The rows of the base: ids of the delta's rows come after them.
        self.base_totals: list[int] = base.starts[-1].tolist()
        self.identity = not len(delta.files)
        #: Per table: the generation's first id of each file (and the total, last).
        self.file_starts: list[np.ndarray] = []
        self._gather: list[np.ndarray | None] = []
        for column in range(len(TABLES)):
            counts = np.diff(base.starts[:, column])
            firsts = base.starts[:-1, column].copy()
            if not self.identity:
                counts[delta.files] = np.diff(delta.starts[:, column])
                firsts[delta.files] = delta.starts[:-1, column] + self.base_totals[column]
            starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            self.file_starts.append(starts)
            if self.identity:
                self._gather.append(None)
            else:
                total = int(starts[-1])
                self._gather.append(np.arange(total, dtype=np.int64) + np.repeat(firsts - starts[:-1], counts))
        self._global: list[np.ndarray | None] = [None] * len(TABLES)

    def total(self, table: int) -> int:
        return int(self.file_starts[table][-1])

    def gather(self, table: int) -> np.ndarray:
        """For each id of the generation, its row among the base's rows and then the delta's."""
        found = self._gather[table]
        return np.arange(self.total(table), dtype=np.int64) if found is None else found

    def global_ids(self, table: int) -> np.ndarray:
        """For each row of the base and then of the delta, its id in the generation (-1 for the
        base's rows of a file the delta holds)."""
        found = self._global[table]
        if found is None:
            rows = self.base_totals[table] + int(self.delta.starts[-1, table])
            found = np.full(rows, -1, dtype=np.int64)
            found[self.gather(table)] = np.arange(self.total(table), dtype=np.int64)
            self._global[table] = found
        return found

    def take(self, table: int, base_rows: list[Any], delta_rows: list[Any]) -> list[Any]:
        """The rows of the generation, in its id order, from every row of the base and of the
        delta in theirs."""
        if self.identity:
            return base_rows
        gather = self._gather[table]
        assert gather is not None
        if not len(gather):
            return []
        both = base_rows + delta_rows
        taken = itemgetter(*gather.tolist())(both)
        return list(taken) if len(gather) > 1 else [taken]


class Segments:
    """The two segment databases of a generation, open for reading, and their order; every
    answer is in the generation's ids. Safe to share between threads."""

    def __init__(self, generation: Path, file_count: int):
        self.generation = generation
        self.base = store.open_database(generation, store.ROWS)
        try:
            self.delta = store.open_database(generation, store.ROWS_DELTA)
        except BaseException:
            self.base.close()
            raise
        self._lock = threading.Lock()
        try:
            self.order = SegmentOrder(file_count, SegmentFiles.read(self.base), SegmentFiles.read(self.delta))
        except BaseException:
            self.close()
            raise

    def _all(self, db: sqlite3.Connection, statement: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return db.execute(statement, tuple(parameters)).fetchall()

    def rows(self, table: int, columns: str) -> list[tuple[Any, ...]]:
        """`columns` of every row of `table`, in the generation's id order."""
        statement = f"SELECT {columns} FROM {TABLES[table]} ORDER BY id"
        base = self._all(self.base, statement)
        delta = [] if self.order.identity else self._all(self.delta, statement)
        return self.order.take(table, base, delta)

    def rows_where(self, table: int, columns: str, where: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """(id, *columns) of the rows of `table` meeting `where`, by id."""
        statement = f"SELECT id, {columns} FROM {TABLES[table]} WHERE {where} ORDER BY id"
        base = self._all(self.base, statement, parameters)
        if self.order.identity:
            return base
        ids = self.order.global_ids(table)
        offset = self.order.base_totals[table]
        found = [(int(ids[row[0]]), *row[1:]) for row in base]
        found = [row for row in found if row[0] >= 0]
        found += [(int(ids[offset + row[0]]), *row[1:]) for row in self._all(self.delta, statement, parameters)]
        found.sort(key=itemgetter(0))
        return found

    def rows_at(self, table: int, ids: Sequence[int], columns: str) -> list[tuple[Any, ...]]:
        """(id, *columns) of the rows of `table` with the generation's `ids`, by id."""
        if not len(ids):
            return []
        wanted = np.asarray(ids, dtype=np.int64)
        at = self.order.gather(table)[wanted]
        offset = self.order.base_totals[table]
        found: list[tuple[Any, ...]] = []
        for db, local, shift in ((self.base, at[at < offset], 0), (self.delta, at[at >= offset] - offset, offset)):
            for start in range(0, len(local), IN_LIST):
                part = local[start : start + IN_LIST].tolist()
                marks = ", ".join("?" * len(part))
                rows = self._all(db, f"SELECT id, {columns} FROM {TABLES[table]} WHERE id IN ({marks})", part)
                found += [(row[0] + shift, *row[1:]) for row in rows] if shift else rows
        ids_of = self.order.global_ids(table)
        return sorted(((int(ids_of[row[0]]), *row[1:]) for row in found), key=itemgetter(0))

    def code_words(self, words: Sequence[str]) -> dict[str, np.ndarray]:
        """Per word of `words` that some file's code spells: the ids of those files, ascending."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(words), IN_LIST):
            part = list(words[start : start + IN_LIST])
            marks = ", ".join("?" * len(part))
            statement = f"SELECT word, files FROM code_words WHERE word IN ({marks})"
            for word, files in self._all(self.base, statement, part):
                ids = store.decode_file_ids(files)
                if not self.order.identity:
                    ids = ids[~self.order.in_delta[ids]]
                if len(ids):
                    found[word] = ids
            if self.order.identity:
                continue
            for word, files in self._all(self.delta, statement, part):
                ids = store.decode_file_ids(files)
                if len(ids) and (ids.max() >= len(self.order.in_delta) or not self.order.in_delta[ids].all()):
                    raise ValueError("a code_words posting of the delta names a file it does not hold")
                earlier = found.get(word)
                found[word] = ids if earlier is None else np.union1d(earlier, ids)
        return found

    def codes(self, base: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Every chunk's code, in the generation's chunk order, from the base's and the delta's
        (the base's own memory map when the delta holds nothing)."""
        if self.order.identity:
            return base
        both = np.concatenate([np.asarray(base), np.asarray(delta)])
        taken: np.ndarray = np.take(both, self.order.gather(CHUNKS), axis=0)
        return taken

    def chunk_symbols(self, local: list[int | None]) -> list[int | None]:
        """The generation's symbol ids of the chunks' own (`chunks.symbol_id`, in the generation's
        chunk order, each its segment's id)."""
        if self.order.identity:
            return local
        offset = self.order.base_totals[SYMBOLS]
        ids = self.order.global_ids(SYMBOLS)
        from_delta = self.order.gather(CHUNKS) >= self.order.base_totals[CHUNKS]
        return [
            None if s is None else int(ids[s + offset if d else s])
            for s, d in zip(local, from_delta.tolist())
        ]

    def close(self) -> None:
        with self._lock:
            self.base.close()
            self.delta.close()
