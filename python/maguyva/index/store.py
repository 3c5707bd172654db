"""The index on disk: where it lives, its generations, its lock, and its SQLite metadata.

An index is a folder:

    LOCK            held (flock) by the one process building the index
    CURRENT         the name of the published generation, replaced atomically
    gen-000007/     one immutable generation:
        meta.sqlite     files, chunks, symbols, references, graph edges, centrality
        text.idx        the trigram index over file contents (its own checksummed format)
        codes.npy       packed binary embeddings, one row per chunk (memory-mapped when read)

A build writes a whole new generation beside the current one, then swaps CURRENT; a crash or
Ctrl-C at any point leaves the previous generation published and intact. Readers open the
generation named by CURRENT and are unaffected by later builds. The layout is versioned:
a folder of another version is reported, with the advice to rebuild, never misread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Version of the folder layout and SQLite schema.
FORMAT_VERSION = 5

CURRENT = "CURRENT"
LOCK = "LOCK"
META = "meta.sqlite"
TEXT_INDEX = "text.idx"
CODES = "codes.npy"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,          -- also the document id in text.idx
    path TEXT NOT NULL UNIQUE,       -- relative to the root, '/'-separated
    language TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    centrality REAL NOT NULL DEFAULT 0,
    in_degree INTEGER NOT NULL DEFAULT 0   -- files importing this one
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,          -- also the row in codes.npy
    file_id INTEGER NOT NULL REFERENCES files(id),
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    symbol TEXT,
    centrality REAL NOT NULL DEFAULT 0
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    signature TEXT NOT NULL,
    docstring TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    parent TEXT,
    centrality REAL NOT NULL DEFAULT 0,
    in_degree INTEGER NOT NULL DEFAULT 0   -- symbols and files that call or inherit it
);
CREATE INDEX symbols_file ON symbols(file_id);
CREATE INDEX symbols_name ON symbols(name);
CREATE TABLE refs (
    file_id INTEGER NOT NULL REFERENCES files(id),
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    line INTEGER NOT NULL,
    enclosing TEXT,
    qualifier TEXT NOT NULL,
    imported_names TEXT NOT NULL     -- JSON list
);
CREATE INDEX refs_file ON refs(file_id);
-- Graph nodes are numbered files first (node = file id), then symbols (node = files + symbol id).
CREATE TABLE edges (
    src INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    kind TEXT NOT NULL,              -- call, import, inherit
    line INTEGER NOT NULL            -- where in the source the dependency is written
);
"""


class IndexStoreError(Exception):
    """Base of the errors about an index on disk."""


class IndexNotFoundError(IndexStoreError, FileNotFoundError):
    """There is no index where one was expected."""


class IndexFormatError(IndexStoreError):
    """An index exists but cannot be read: another format version, or damaged files."""


class IndexLockedError(IndexStoreError):
    """Another process is building this index."""


def cache_home() -> Path:
    """The folder holding every default index: `MAGUYVA_HOME`, else the platform's user cache."""
    if home := os.environ.get("MAGUYVA_HOME"):
        return Path(home).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "maguyva"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / "maguyva"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "maguyva"


def default_index_dir(root: Path) -> Path:
    """The default index folder of the repository at `root`, keyed by its absolute path."""
    root = root.resolve()
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return cache_home() / f"{root.name or 'root'}-{key}"


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk, rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_generation(index_dir: Path) -> Path:
    """The published generation folder; IndexNotFoundError if none is published."""
    try:
        name = (index_dir / CURRENT).read_text().strip()
    except FileNotFoundError:
        raise IndexNotFoundError(f"no maguyva index in {index_dir}") from None
    generation = index_dir / name
    if not name.startswith("gen-") or "/" in name or not generation.is_dir():
        raise IndexFormatError(f"{index_dir}: CURRENT names a missing generation {name!r}; rebuild the index")
    return generation


def new_generation(index_dir: Path) -> Path:
    """A fresh, empty generation folder numbered after every existing one."""
    numbers = [int(p.name[4:]) for p in index_dir.glob("gen-*") if p.name[4:].isdigit()]
    generation = index_dir / f"gen-{max(numbers, default=0) + 1:06d}"
    generation.mkdir(parents=True)
    return generation


def publish(index_dir: Path, generation: Path) -> None:
    """Make `generation` the current one, then remove the generations no longer named."""
    write_atomically(index_dir / CURRENT, generation.name.encode())
    for old in index_dir.glob("gen-*"):
        if old != generation:
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def build_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index's build lock; IndexLockedError at once if another process holds it."""
    index_dir.mkdir(parents=True, exist_ok=True)
    with open(index_dir / LOCK, "a+") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: msvcrt locks the first byte instead
            import msvcrt

            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            except OSError:
                raise IndexLockedError(f"{index_dir} is being indexed by another process") from None
            yield
            return
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexLockedError(f"{index_dir} is being indexed by another process") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def create_database(path: Path) -> sqlite3.Connection:
    """A new, empty metadata database with the current schema."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
    return db


def open_database(generation: Path) -> sqlite3.Connection:
    """The metadata database of a generation, read-only, after checking its format version."""
    path = generation / META
    if not path.exists():
        raise IndexFormatError(f"{generation}: {META} is missing; rebuild the index")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        row = db.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
    except sqlite3.DatabaseError as err:
        raise IndexFormatError(f"{path}: unreadable ({err}); rebuild the index") from None
    if row is None or row[0] != str(FORMAT_VERSION):
        found = row[0] if row else "unknown"
        raise IndexFormatError(
            f"{generation.parent}: index format {found} is not {FORMAT_VERSION}; rebuild the index"
        )
    return db


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM meta"))


def write_meta(db: sqlite3.Connection, values: dict[str, object]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
    )
