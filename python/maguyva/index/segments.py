"""A generation's rows in two segments: a base, written by a build of every file, and a delta of
the files edited or added since, whose rows replace the base's.

Each segment is a database of `store.SEGMENT_SCHEMA` (`rows.sqlite`, `rows-delta.sqlite`) and
the codes of its chunks (`codes.npy`, `codes-delta.npy`). Its ids are its own, given file by file
in file id order. The delta's file ids are the generation's; the base's are those of the build
that wrote it, mapped to today's by the delta (`SegmentOrder.base_files`; files are numbered in
path order, so a kept file keeps its place among the others, and a removed one maps to none).
The generation numbers its chunks, symbols and references as a full build of the same files
does: file by file, a file's rows taken from the delta when the delta holds the file, else from
the base (`SegmentOrder`). So whatever reads them sees one table, the same as a full build's,
while an edit writes the delta's rows and links the base's files from the previous generation.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from maguyva import config
from maguyva.arrays import distinct, union
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
        files.flags.writeable = starts.flags.writeable = False  # a base's are shared (`BaseColumns`)
        return cls(files, starts)


class SegmentOrder:
    """The generation's numbering of the rows of its base and delta: for each table, which row of
    the two (the base's ids, then the delta's after them) has each id of the generation.

    The base numbers its files as the generation that wrote it did; `base_files` (the delta's
    `base_files` row) gives each one's id in this generation, -1 for a file removed since, in
    the same order (paths are numbered in order, and a kept base file keeps its place among the
    others). A file added since, like one edited, is the delta's."""

    def __init__(self, file_count: int, base: SegmentFiles, delta: SegmentFiles, base_files: np.ndarray | None = None):
        base_count = len(base.files)
        if np.any(base.files != np.arange(base_count)):
            raise ValueError("the base segment's files are not numbered from 0")
        if len(delta.files) and (delta.files[0] < 0 or delta.files[-1] >= file_count):
            raise ValueError("the delta segment holds a file the generation lacks")
        self.base, self.delta = base, delta
        #: Whether each file's rows are the delta's.
        self.in_delta = np.zeros(file_count, dtype=bool)
        self.in_delta[delta.files] = True
        #: Whether the base's files have other ids in the generation than their own.
        self.mapped = base_files is not None
        if base_files is None:
            if base_count != file_count:
                raise ValueError("the base segment does not hold every file of the generation")
            base_files = np.arange(file_count, dtype=np.int64)
            base_of = base_files
        else:
            kept = base_files[base_files >= 0]
            if len(base_files) != base_count:
                raise ValueError("the delta maps another count of files than its base holds")
            if np.any(base_files < -1) or (len(kept) and (kept[-1] >= file_count or np.any(np.diff(kept) <= 0))):
                raise ValueError("the delta maps its base's files out of order")
            base_of = np.full(file_count, -1, dtype=np.int64)
            base_of[kept] = np.flatnonzero(base_files >= 0)
            if np.any((base_of < 0) & ~self.in_delta):
                raise ValueError("a file of the generation is in neither segment")
        base_files.flags.writeable = base_of.flags.writeable = False
        #: The generation's id of each base file (-1: removed), and the base file of each of the
        #: generation's (-1: the delta's alone).
        self.base_files, self.base_of = base_files, base_of
        #: The rows of the base: ids of the delta's rows come after them.
        self.base_totals: list[int] = base.starts[-1].tolist()
        self.identity = not len(delta.files) and not self.mapped
        #: Per table: the generation's first id of each file (and the total, last).
        self.file_starts: list[np.ndarray] = []
        #: Per table: each file's first row among the base's rows then the delta's.
        self.file_rows: list[np.ndarray] = []
        self._gather: list[np.ndarray | None] = []
        from_base = np.flatnonzero(~self.in_delta)
        for column in range(len(TABLES)):
            base_counts = np.diff(base.starts[:, column])
            if self.mapped:
                counts = np.zeros(file_count, dtype=np.int64)
                firsts = np.zeros(file_count, dtype=np.int64)
                counts[from_base] = base_counts[base_of[from_base]]
                firsts[from_base] = base.starts[:-1, column][base_of[from_base]]
            else:
                counts, firsts = base_counts, base.starts[:-1, column].copy()
            if len(delta.files):
                counts[delta.files] = np.diff(delta.starts[:, column])
                firsts[delta.files] = delta.starts[:-1, column] + self.base_totals[column]
            starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
            self.file_starts.append(starts)
            self.file_rows.append(firsts)
            if self.identity:
                self._gather.append(None)
            else:
                total = int(starts[-1])
                self._gather.append(np.arange(total, dtype=np.int64) + np.repeat(firsts - starts[:-1], counts))
        self._global: list[np.ndarray | None] = [None] * len(TABLES)
        self._runs: dict[int, list[tuple[int, int]] | None] = {}

    def map_base_files(self, ids: np.ndarray) -> np.ndarray:
        """The generation's ids of base files `ids` (-1 for those removed)."""
        mapped: np.ndarray = self.base_files[ids] if self.mapped else ids
        return mapped

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
        if table not in self._runs:
            self._runs[table] = consecutive_runs(gather)
        runs = self._runs[table]
        if runs is not None:
            return take_runs(runs, base_rows, delta_rows)
        both = base_rows + delta_rows
        taken = itemgetter(*gather.tolist())(both)
        return list(taken) if len(gather) > 1 else [taken]


def consecutive_runs(gather: np.ndarray) -> list[tuple[int, int]] | None:
    """`gather` (rows among the base's then the delta's) as runs of consecutive rows, each
    (first, end), when they are few against its length: an edit's generation takes its base's
    rows in a few long runs, between those of the files the delta holds. None when they are
    not: taking row by row costs less then."""
    if not len(gather):
        return []
    breaks = np.flatnonzero(np.diff(gather) != 1) + 1
    if len(breaks) + 1 > max(64, len(gather) // 16):
        return None
    firsts = np.concatenate(([0], breaks))
    lasts = np.concatenate((breaks, [len(gather)]))
    return list(zip(gather[firsts].tolist(), (gather[lasts - 1] + 1).tolist()))


def take_runs(runs: list[tuple[int, int]], base_rows: list[Any], delta_rows: list[Any]) -> list[Any]:
    """The rows of `runs` (`consecutive_runs`) from `base_rows` followed by `delta_rows`, one
    slice of a list each (a run may go on from the base's last row to the delta's first)."""
    taken: list[Any] = []
    in_base = len(base_rows)
    for first, end in runs:
        if first < in_base:
            taken += base_rows[first:end]  # a slice stops at the list's end
        if end > in_base:
            taken += delta_rows[max(first - in_base, 0) : end - in_base]
    return taken


def gather_runs(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """flat[starts[0]:starts[0]+lengths[0]], then the next run... concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return flat[:0]
    offsets = np.cumsum(lengths) - lengths
    return flat[np.repeat(starts - offsets, lengths) + np.arange(total)]


_COLUMN_NAME = re.compile(r"[a-z_]+")


class BaseColumns:
    """The files of a base segment, the columns of its tables read so far (each a list in id
    order) and what is derived from them alone. A sealed segment's file is never written again
    and an edit's generation links its base, so they are kept by file identity (device, inode,
    size, mtime) while any `Segments` holds them: the build of an edit and the new generation's
    reader then read only the delta's rows."""

    def __init__(self) -> None:
        self._columns: dict[tuple[int, str], list[Any]] = {}
        self._derived: dict[object, Any] = {}
        self._lock = threading.Lock()
        self._files: SegmentFiles | None = None

    def files(self, db: sqlite3.Connection) -> SegmentFiles:
        """The segment's files, read from `db` (the segment) once."""
        files = self._files
        if files is None:
            files = self._files = SegmentFiles.read(db)
        return files

    def columns(self, table: int, names: list[str], read: Callable[[list[str]], list[tuple[Any, ...]]]) -> list[list[Any]]:
        """The columns `names` of `table`; `read(names)` gives the rows of those not kept yet,
        in id order. The lists are shared: never changed."""
        with self._lock:
            missing = [n for n in dict.fromkeys(names) if (table, n) not in self._columns]
        if missing:
            rows = read(missing)
            read_columns = list(zip(*rows)) if rows else [()] * len(missing)
            with self._lock:
                for name, column in zip(missing, read_columns):
                    self._columns.setdefault((table, name), list(column))
        with self._lock:
            return [self._columns[(table, n)] for n in names]

    def has(self, key: object) -> bool:
        """Whether `derived` has made the value under `key`."""
        with self._lock:
            return key in self._derived

    def derived(self, key: object, make: Callable[[], Any]) -> Any:
        """`make()`, a function of the base's rows alone, made once under `key`."""
        with self._lock:
            value = self._derived.get(key, _MISSING)
        if value is _MISSING:
            value = make()
            with self._lock:
                value = self._derived.setdefault(key, value)
        return value


_MISSING = object()


def _base_files(delta: sqlite3.Connection) -> np.ndarray | None:
    """The generation's id of each of the base's files, from the delta `delta` (None: the
    base's own ids)."""
    rows = delta.execute("SELECT ids FROM base_files").fetchall()
    if len(rows) > 1:
        raise ValueError("a delta maps its base's files more than once")
    return store.decode_base_files(rows[0][0]) if rows else None


#: `BaseColumns` by base file identity, while anything holds them.
_base_columns: weakref.WeakValueDictionary[tuple[int, int, int, int], BaseColumns] = weakref.WeakValueDictionary()
_base_columns_lock = threading.Lock()


def _kept_columns(path: Path) -> BaseColumns:
    stat = os.stat(path)
    identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _base_columns_lock:
        kept = _base_columns.get(identity)
        if kept is None:
            kept = _base_columns[identity] = BaseColumns()
    return kept


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
            self._kept = _kept_columns(generation / store.ROWS)
            self.order = SegmentOrder(
                file_count, self._kept.files(self.base), SegmentFiles.read(self.delta), _base_files(self.delta)
            )
        except BaseException:
            self.close()
            raise

    def _all(self, db: sqlite3.Connection, statement: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return db.execute(statement, tuple(parameters)).fetchall()

    def _keeps(self, table: int) -> bool:
        return self.order.base_totals[table] <= config.current().SEGMENT_COLUMNS_CACHE_ROWS

    def _base_columns(self, table: int, names: list[str]) -> list[list[Any]]:
        """The columns `names` of the base's `table` (shared: never changed), kept for the next
        reader of the same base when the table is not too large."""

        def read(wanted: list[str]) -> list[tuple[Any, ...]]:
            return self._all(self.base, f"SELECT {', '.join(wanted)} FROM {TABLES[table]} ORDER BY id")

        if self._keeps(table):
            return self._kept.columns(table, names, read)
        rows = read(names)
        return [list(column) for column in zip(*rows)] if rows else [[] for _ in names]

    def base_derived(self, key: object, make: Callable[[list[list[Any]]], Any], table: int, names: list[str]) -> Any:
        """`make(columns)` of the base's columns `names` of `table` as stored (the base's own file
        ids), made once while the base is kept (`BaseColumns.derived`): `make` must depend on
        nothing else that an edit can change."""
        return self._kept.derived(key, lambda: make(self._base_columns(table, names)))

    def runs_of_column(
        self, table: int, name: str, key: object, make: Callable[[list[Any]], tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(values, counts): a run of values for each row of `table`, in the generation's id order,
        `make(column)` giving them for a column's values (the runs' values flat, and each row's
        count). `make` must depend on the values alone (under `key`): the base's rows are made
        once while the base is kept, the delta's each time."""
        base_values, base_counts = self.base_derived(("runs", key), lambda columns: make(columns[0]), table, [name])
        if self.order.identity:
            return base_values, base_counts
        delta_values, delta_counts = make(self._delta_column(table, name))
        counts = np.concatenate((base_counts, delta_counts))
        starts = np.cumsum(counts) - counts
        taken = self.order.gather(table)
        return gather_runs(np.concatenate((base_values, delta_values)), starts[taken], counts[taken]), counts[taken]

    def delta_rows_where(self, table: int, columns: str, where: str) -> list[tuple[Any, ...]]:
        """`columns` of the delta's rows of `table` meeting `where` (file ids the generation's)."""
        return self._all(self.delta, f"SELECT {columns} FROM {TABLES[table]} WHERE {where} ORDER BY id")

    def _delta_column(self, table: int, name: str) -> list[Any]:
        return [row[0] for row in self._all(self.delta, f"SELECT {name} FROM {TABLES[table]} ORDER BY id")]

    def rows(self, table: int, columns: str) -> list[tuple[Any, ...]]:
        """`columns` of every row of `table`, in the generation's id order."""
        statement = f"SELECT {columns} FROM {TABLES[table]} ORDER BY id"
        names = [name.strip() for name in columns.split(",")]
        if all(_COLUMN_NAME.fullmatch(n) for n in names):
            columns_read = self._base_columns(table, names)
            base = list(zip(*[self._as_generation(n, c) for n, c in zip(names, columns_read)]))
        elif self.order.mapped and "file_id" in columns:
            raise ValueError("file ids of a mapped base are read by plain column names only")
        else:
            base = self._all(self.base, statement)
        delta = [] if self.order.identity else self._all(self.delta, statement)
        return self.order.take(table, base, delta)

    def column(self, table: int, name: str) -> list[Any]:
        """The column `name` of every row of `table`, in the generation's id order."""
        base = self._as_generation(name, self._base_columns(table, [name])[0])
        if self.order.identity:
            return list(base)
        return self.order.take(table, base, self._delta_column(table, name))

    def read_arrays(self, table: int, names: list[str]) -> None:
        """Read the base's integer columns `names` of `table` for `array` in one pass over its
        rows, straight into arrays (four columns of 651,225 chunks: about 0.4 s, against 1.1 s one
        column at a time through lists), when the base's columns are kept."""
        if not self._keeps(table):
            return
        missing = [name for name in dict.fromkeys(names) if not self._kept.has(("array", table, name))]
        if not missing:
            return
        wanted = ", ".join(f"coalesce({name}, -1)" for name in missing)
        with self._lock:
            rows = self.base.execute(f"SELECT {wanted} FROM {TABLES[table]} ORDER BY id")
            flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64)
        for i, name in enumerate(missing):
            values = np.ascontiguousarray(flat.reshape(-1, len(missing))[:, i])
            values.flags.writeable = False

            def made(values: np.ndarray = values) -> np.ndarray:
                return values

            self._kept.derived(("array", table, name), made)

    def array(self, table: int, name: str) -> np.ndarray:
        """The integer column `name` of every row of `table` (-1 for NULL), in the generation's
        id order; read-only when it is the base's own."""

        def of_base() -> np.ndarray:
            column = self._base_columns(table, [name])[0]
            values = np.fromiter((-1 if v is None else v for v in column), dtype=np.int64, count=len(column))
            values.flags.writeable = False
            return values

        base: np.ndarray = self._kept.derived(("array", table, name), of_base) if self._keeps(table) else of_base()
        if name == "file_id":
            base = self.order.map_base_files(base)
        if self.order.identity:
            return base
        delta = np.array([-1 if v is None else v for v in self._delta_column(table, name)], dtype=np.int64)
        taken: np.ndarray = np.concatenate([base, delta])[self.order.gather(table)]
        return taken

    def per_file(self, table: int, columns: str, make: Callable[[tuple[Any, ...]], Any]) -> list[list[Any]]:
        """For each file of the generation, `make(row)` of each of its rows of `table` (plain
        column names `columns`), in id order. A base file's list is shared: never changed."""
        names = [name.strip() for name in columns.split(",")]
        if self.order.mapped and "file_id" in names:
            raise ValueError("per_file gives rows by file: their file ids are not asked for")

        def split(rows: list[tuple[Any, ...]], starts: np.ndarray) -> list[list[Any]]:
            made = [make(row) for row in rows]
            bounds = starts[:, table].tolist()
            return [made[a:b] for a, b in zip(bounds, bounds[1:])]

        def of_base() -> list[list[Any]]:
            return split(list(zip(*self._base_columns(table, names))), self.order.base.starts)

        base = self._kept.derived(("per_file", table, columns, make), of_base) if self._keeps(table) else of_base()
        if self.order.identity:
            return list(base)
        statement = f"SELECT {columns} FROM {TABLES[table]} ORDER BY id"
        delta = split(self._all(self.delta, statement), self.order.delta.starts)
        if self.order.mapped:
            found = [base[b] if b >= 0 else [] for b in self.order.base_of.tolist()]
        else:
            found = list(base)
        for position, file_id in enumerate(self.order.delta.files.tolist()):
            found[file_id] = delta[position]
        return found

    def rows_where(
        self, table: int, columns: str, where: str, parameters: Sequence[object] = (), keep: bool = False
    ) -> list[tuple[Any, ...]]:
        """(id, *columns) of the rows of `table` meeting `where`, by id. With `keep`, the base's
        rows are read once while the base is kept (`BaseColumns.derived`): a scan of a large
        table the next generations would otherwise repeat."""
        statement = f"SELECT id, {columns} FROM {TABLES[table]} WHERE {where} ORDER BY id"
        if self.order.mapped and "file_id" in where:
            raise ValueError("rows of a mapped base are asked for by file with rows_of_files")
        if keep:
            stored = self._kept.derived(("rows_where", statement, tuple(parameters)), lambda: self._all(self.base, statement, parameters))
        else:
            stored = self._all(self.base, statement, parameters)
        base = self._base_files_in(columns, stored)
        if self.order.identity:
            return list(base) if keep else base  # the kept list is shared: never handed out
        ids = self.order.global_ids(table)
        offset = self.order.base_totals[table]
        found = [(int(ids[row[0]]), *row[1:]) for row in base]
        found = [row for row in found if row[0] >= 0]
        found += [(int(ids[offset + row[0]]), *row[1:]) for row in self._all(self.delta, statement, parameters)]
        found.sort(key=itemgetter(0))
        return found

    def rows_of_files(self, table: int, columns: str, file_ids: Sequence[int], where: str = "") -> list[tuple[Any, ...]]:
        """(id, *columns) of the rows of `table` of the generation's files `file_ids` (meeting
        `where` too, when given), by id."""
        wanted = distinct(np.asarray(file_ids, dtype=np.int64))
        if not len(wanted):
            return []
        in_delta = self.order.in_delta[wanted]
        found: list[tuple[Any, ...]] = []
        offset = self.order.base_totals[table]
        ids = self.order.global_ids(table)
        for db, files, shift in ((self.base, self.order.base_of[wanted[~in_delta]], 0), (self.delta, wanted[in_delta], offset)):
            for start in range(0, len(files), IN_LIST):
                part = files[start : start + IN_LIST].tolist()
                marks = ", ".join("?" * len(part))
                also = f" AND ({where})" if where else ""
                rows = self._all(db, f"SELECT id, {columns} FROM {TABLES[table]} WHERE file_id IN ({marks}){also}", part)
                # The base's rows name its own files; the delta's, the generation's (told apart
                # by the database, not by the shift: a base without rows of `table` shifts by 0).
                if db is self.base:
                    rows = self._base_files_in(columns, rows)
                found += [(int(ids[row[0] + shift]), *row[1:]) for row in rows]
        found.sort(key=itemgetter(0))
        return found

    def _as_generation(self, name: str, column: list[Any]) -> list[Any]:
        """A column of the base's as the generation numbers it: its file ids mapped."""
        if name != "file_id" or not self.order.mapped or not column:
            return column
        mapped: list[Any] = self.order.base_files[np.asarray(column, dtype=np.int64)].tolist()
        return mapped

    def _base_files_in(self, columns: str, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """Rows (id, *columns) read from the base, their `file_id` as the generation's."""
        if not self.order.mapped or not rows:
            return rows
        names = [name.strip() for name in columns.split(",")]
        if "file_id" not in names:
            return rows
        at = 1 + names.index("file_id")
        files = self.order.base_files[np.fromiter((row[at] for row in rows), dtype=np.int64, count=len(rows))].tolist()
        return [(*row[:at], file_id, *row[at + 1 :]) for row, file_id in zip(rows, files)]

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
                # As in `rows_of_files`: the base's rows name its own files (a shift of 0 is also
                # the delta's, over a base without rows of `table`).
                found += self._base_files_in(columns, rows) if db is self.base else [(row[0] + shift, *row[1:]) for row in rows]
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
                if self.order.mapped:
                    ids = self.order.map_base_files(ids)
                    ids = ids[ids >= 0]
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
                found[word] = ids if earlier is None else union(earlier, ids)
        return found

    def codes_of_files(self, base: np.ndarray, delta: np.ndarray) -> list[np.ndarray]:
        """Each file's chunks' codes, in file id order: slices of the base's codes or of the
        delta's, wherever the file's rows are (no copy of either)."""
        totals = self.order.base_totals[CHUNKS], int(self.order.delta.starts[-1, CHUNKS])
        if (len(base), len(delta)) != totals:
            raise ValueError(f"{len(base)} and {len(delta)} codes for segments of {totals[0]} and {totals[1]} chunks")
        in_base = totals[0]
        firsts = self.order.file_rows[CHUNKS].tolist()
        counts = np.diff(self.order.file_starts[CHUNKS]).tolist()
        return [
            base[first : first + count] if first < in_base else delta[first - in_base : first - in_base + count]
            for first, count in zip(firsts, counts)
        ]

    def codes(self, base: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """Every chunk's code, in the generation's chunk order, from the base's and the delta's
        (the base's own memory map when the delta holds nothing)."""
        if self.order.identity:
            return base
        order = self.order
        in_base = order.base_totals[CHUNKS]
        starts = order.file_starts[CHUNKS]
        counts = np.diff(starts)
        held = np.flatnonzero(counts)
        rows, counts, places = order.file_rows[CHUNKS][held], counts[held], starts[held]
        # Runs of files whose rows follow one another in one segment, each copied at once.
        ends = rows + counts
        breaks = np.flatnonzero((rows[1:] != ends[:-1]) | (rows[1:] == in_base)) + 1
        firsts = np.concatenate(([0], breaks)).tolist()
        lasts = np.concatenate((breaks - 1, [len(rows) - 1])).tolist() if len(rows) else []
        found = np.empty((order.total(CHUNKS), base.shape[1]), dtype=base.dtype)
        for first, last in zip(firsts, lasts):
            start, stop, place = int(rows[first]), int(ends[last]), int(places[first])
            source, at = (base, start) if start < in_base else (delta, start - in_base)
            found[place : place + stop - start] = source[at : at + stop - start]
        return found

    def chunk_symbol_ids(self) -> np.ndarray:
        """Each chunk's own symbol (`chunks.symbol_id`, its segment's id) as the generation's
        symbol id, -1 for none, in the generation's chunk order."""
        local = self.array(CHUNKS, "symbol_id")
        if self.order.identity:
            return local
        ids = self.order.global_ids(SYMBOLS)
        if not len(ids):
            return np.full(len(local), -1, dtype=np.int64)
        from_delta = self.order.gather(CHUNKS) >= self.order.base_totals[CHUNKS]
        rows = np.where(from_delta, local + self.order.base_totals[SYMBOLS], local)
        found: np.ndarray = np.where(local < 0, -1, ids[np.maximum(rows, 0)])
        return found

    def close(self) -> None:
        with self._lock:
            self.base.close()
            self.delta.close()
