"""A persistent cache of embedding codes, shared by every repository and every index run.

One SQLite file (by default `embeddings.sqlite` in maguyva's cache folder) maps
(provider, model, dims, SHA-256 of the exact text) to the packed code bytes, so a chunk that has
not changed is never embedded twice, whichever repository or run it comes from.

Several processes may use the file at once: it runs in WAL mode (readers never block the
writer) and waits up to `timeout` seconds for a lock. Each row carries a CRC-32 of its key and
code; a row that fails it, or has the wrong length, is treated as a miss and deleted, so a damaged
row never yields a wrong code. A file SQLite reports as damaged or not a database is moved aside
(`*.corrupt-<time>`) and a new, empty cache is started in its place.

Layout (version 1):

    meta(key TEXT PRIMARY KEY, value TEXT)                       -- "format_version" -> "1"
    spaces(id INTEGER PRIMARY KEY, provider TEXT, model TEXT, dims INTEGER,
           UNIQUE(provider, model, dims))
    codes(space INTEGER, text_sha256 BLOB, code BLOB, crc INTEGER,
          PRIMARY KEY(space, text_sha256)) WITHOUT ROWID
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from maguyva.errors import EmbeddingCacheError

log = logging.getLogger(__name__)
T = TypeVar("T")

FORMAT_VERSION = 1
FILE_NAME = "embeddings.sqlite"

# SQLite's primary result codes for a damaged file.
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
# Keys per SELECT ... IN (...), well under any build's variable limit.
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spaces(
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    UNIQUE(provider, model, dims)
);
CREATE TABLE IF NOT EXISTS codes(
    space INTEGER NOT NULL,
    text_sha256 BLOB NOT NULL,
    code BLOB NOT NULL,
    crc INTEGER NOT NULL,
    PRIMARY KEY(space, text_sha256)
) WITHOUT ROWID;
"""


def default_cache_path() -> Path:
    """`embeddings.sqlite` in maguyva's cache folder (`MAGUYVA_HOME` moves it)."""
    from maguyva.index.store import cache_home

    return cache_home() / FILE_NAME


def _crc(space: int, key: bytes, code: bytes) -> int:
    return zlib.crc32(code, zlib.crc32(key, space & 0xFFFFFFFF))


def _is_damage(err: sqlite3.DatabaseError) -> bool:
    code = getattr(err, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


class EmbeddingCache:
    """Packed codes keyed by (provider, model, dims, SHA-256 of the text).

    Use as a context manager or call `close()`. Methods are safe to call from several threads.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 30.0):
        self.path = Path(path) if path is not None else default_cache_path()
        self.timeout = timeout
        self._lock = threading.RLock()
        self._spaces: dict[tuple[str, str, int], int] = {}
        self._conn: sqlite3.Connection | None = None
        self._open()

    # -- lifecycle ------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            row = conn.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
            if row is None:
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('format_version', ?)",
                    (str(FORMAT_VERSION),),
                )
            elif row[0] != str(FORMAT_VERSION):
                raise sqlite3.DatabaseError(
                    f"cache format version {row[0]} is not {FORMAT_VERSION}: file is not a database"
                    " of this version"
                )
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> None:
        try:
            self._conn = self._connect()
        except OSError as err:  # its folder cannot be made (a file is in the way, no space...)
            raise EmbeddingCacheError(f"{self.path}: cannot open the embedding cache ({err.strerror or err})") from None
        except sqlite3.DatabaseError as err:
            if isinstance(err, sqlite3.OperationalError) and not _is_damage(err):
                raise EmbeddingCacheError(f"{self.path}: cannot open the embedding cache ({err})")
            self._replace(err)

    def _replace(self, err: BaseException) -> None:
        """Move a damaged cache file aside and start an empty one."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        self._spaces.clear()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{os.getpid()}")
        log.warning("embedding cache %s is damaged (%s); moved to %s", self.path, err, aside)
        try:
            if self.path.exists():
                os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, aside.with_name(aside.name + suffix))
            self._conn = self._connect()
        except (OSError, sqlite3.Error) as again:
            raise EmbeddingCacheError(
                f"{self.path}: the embedding cache is damaged and could not be replaced ({again});"
                " delete the file to start a new cache"
            ) from None

    def close(self) -> None:
        """Close the file; the object is unusable afterwards."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"

    # -- internals ------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise EmbeddingCacheError(f"{self.path}: the embedding cache is closed")
        return self._conn

    def _space(self, provider: str, model: str, dims: int, create: bool) -> int | None:
        key = (provider, model, int(dims))
        space = self._spaces.get(key)
        if space is not None:
            return space
        db = self._db()
        row = db.execute(
            "SELECT id FROM spaces WHERE provider = ? AND model = ? AND dims = ?", key
        ).fetchone()
        if row is None:
            if not create:
                return None
            db.execute(
                "INSERT OR IGNORE INTO spaces(provider, model, dims) VALUES (?, ?, ?)", key
            )
            row = db.execute(
                "SELECT id FROM spaces WHERE provider = ? AND model = ? AND dims = ?", key
            ).fetchone()
        self._spaces[key] = int(row[0])
        return self._spaces[key]

    @contextmanager
    def _transaction(self, db: sqlite3.Connection) -> Iterator[None]:
        """A write transaction, taken at once so concurrent writers queue on the busy timeout."""
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            # A space row created in the rolled-back transaction is gone again.
            self._spaces.clear()
            raise
        db.execute("COMMIT")

    def _guard(self, what: str, action: Callable[[], T]) -> T:
        """Run `action()`; if the file turns out damaged, replace it and run `action()` again."""
        with self._lock:
            for attempt in (1, 2):
                try:
                    return action()
                except sqlite3.DatabaseError as err:
                    if attempt == 2 or not _is_damage(err):
                        raise EmbeddingCacheError(
                            f"{self.path}: could not {what} the embedding cache ({err})"
                        ) from None
                    self._replace(err)
            raise AssertionError("unreachable")

    # -- public API -----------------------------------------------------------------------------

    def get_many(
        self, provider: str, model: str, dims: int, keys: Sequence[bytes]
    ) -> dict[bytes, bytes]:
        """The cached codes among `keys` (SHA-256 digests of texts), as {key: code}."""
        width = dims // 8

        def lookup() -> dict[bytes, bytes]:
            found: dict[bytes, bytes] = {}
            space = self._space(provider, model, dims, create=False)
            if space is None or not keys:
                return found
            db = self._db()
            bad: list[bytes] = []
            unique = sorted(set(keys))  # in key order, each probe lands near the one before
            for start in range(0, len(unique), _CHUNK):
                part = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                rows = db.execute(
                    f"SELECT text_sha256, code, crc FROM codes"
                    f" WHERE space = ? AND text_sha256 IN ({marks})",
                    (space, *part),
                ).fetchall()
                for key, code, crc in rows:
                    key, code = bytes(key), bytes(code)
                    if len(code) == width and _crc(space, key, code) == crc:
                        found[key] = code
                    else:
                        bad.append(key)
            if bad:
                log.warning("embedding cache %s: dropped %d damaged rows", self.path, len(bad))
                with self._transaction(db):
                    db.executemany(
                        "DELETE FROM codes WHERE space = ? AND text_sha256 = ?",
                        [(space, k) for k in bad],
                    )
            return found

        return self._guard("read", lookup)

    def put_many(
        self, provider: str, model: str, dims: int, items: Iterable[tuple[bytes, bytes]]
    ) -> None:
        """Store (key, code) pairs in one transaction; existing keys are overwritten."""
        width = dims // 8
        rows = list(items)
        for _, code in rows:
            if len(code) != width:
                raise ValueError(f"a {dims}-bit code is {width} bytes, not {len(code)}")
        if not rows:
            return

        def store() -> None:
            db = self._db()
            with self._transaction(db):
                space = self._space(provider, model, dims, create=True)
                assert space is not None
                db.executemany(
                    "INSERT OR REPLACE INTO codes(space, text_sha256, code, crc)"
                    " VALUES (?, ?, ?, ?)",
                    [(space, k, c, _crc(space, k, c)) for k, c in rows],
                )

        self._guard("write to", store)

    def count(self, provider: str | None = None, model: str | None = None) -> int:
        """Number of cached codes, optionally for one provider (and model)."""

        def counter() -> int:
            sql = "SELECT COUNT(*) FROM codes JOIN spaces ON spaces.id = codes.space WHERE 1"
            args: list[str] = []
            if provider is not None:
                sql += " AND provider = ?"
                args.append(provider)
            if model is not None:
                sql += " AND model = ?"
                args.append(model)
            return int(self._db().execute(sql, args).fetchone()[0])

        return self._guard("read", counter)

    def __len__(self) -> int:
        return self.count()
