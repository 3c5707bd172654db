"""The index on disk: where it lives, its generations, its lock, and its SQLite metadata.

An index is a folder:

    LOCK            held (flock) by the one process building the index
    CURRENT         the name of the published generation, replaced atomically
    gen-000007/     one immutable generation:
        READERS         held shared (flock) by every process reading this generation
        meta.sqlite     the generation's own: its walk and counts, its files
        rows.sqlite     the base segment: chunks, symbols, references, code words of every file
        rows-delta.sqlite  the delta segment: those rows of the files edited or added since
        text.idx        the trigram index over file contents (its own checksummed format)
        text-delta.idx  the documents edited since text.idx was written, which replace its own
        codes.npy       packed binary embeddings of the base's chunks (memory-mapped when read)
        codes-delta.npy those of the delta's chunks
        nodes.npy       each graph node's PageRank and in-degree (float64, a row per node)
        edges.npy       the graph's edges: source, destination, kind, line (int64, a row each)
        MANIFEST        size and SHA-256 of each file above, written last

An update writes the delta segment and links the base's files from the previous generation
(`index.segments`); a delta grown past its share writes one new base.

A build writes a whole new generation beside the current one, flushes it to disk, then swaps
CURRENT; a crash or Ctrl-C at any point leaves the previous generation published and intact.
Readers pin the generation they open (a shared lock on its READERS file), and a build deletes an
older generation only once it can lock that file exclusively, so a reader never sees its files
vanish. Every part is checked against MANIFEST when a generation is opened or reused, so damage
is reported (and rebuilt by the next build), never read as data. The layout is versioned: a
folder of another version is reported, with the advice to rebuild, never misread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from typing import Any
from pathlib import Path

import numpy as np

from maguyva.errors import (
    IndexFormatError,
    IndexLockedError,
    IndexNotFoundError,
    IndexStoreError,
    IndexWriteError,
)

#: Version of the folder layout and SQLite schema.
FORMAT_VERSION = 13

CURRENT = "CURRENT"
LOCK = "LOCK"
READERS = "READERS"
META = "meta.sqlite"
TEXT_INDEX = "text.idx"
#: The trigram index's delta layer (`index.text_layers`): edited documents under their file ids.
TEXT_DELTA = "text-delta.idx"
CODES = "codes.npy"
#: The delta segment (`index.segments`): the rows and codes of the files edited since the base.
ROWS = "rows.sqlite"
ROWS_DELTA = "rows-delta.sqlite"
CODES_DELTA = "codes-delta.npy"
#: What is derived from the whole graph, kept apart from the rows of each file, so that an update
#: copies those rows from the previous generation as they are.
NODES = "nodes.npy"
#: The graph's edges as columns (`encode_edges`): written whole by every generation, read whole by
#: the next update and by the reader, never queried row by row.
EDGES = "edges.npy"
MANIFEST = "MANIFEST"
#: The parts of a generation that MANIFEST vouches for.
PARTS = (META, ROWS, ROWS_DELTA, TEXT_INDEX, TEXT_DELTA, CODES, CODES_DELTA, NODES, EDGES)
#: Parts whose own format carries a checksum of every byte, which loading them checks: opening
#: checks only their size against MANIFEST (hashing text.idx again would double the cost of
#: opening a large index: 90 ms instead of 45 for a 110 MB one).
SELF_CHECKED = (TEXT_INDEX, TEXT_DELTA)
#: How far before a look at a file its mtime is suspect: file systems with coarse clocks (FAT
#: keeps 2 s, ext4 and others tick in milliseconds) can give a later write the mtime seen.
RACY_WINDOW_NS = 2_000_000_000
#: How often opening retries when the generation it read from CURRENT was replaced meanwhile.
_OPEN_ATTEMPTS = 50

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,          -- also the document id in text.idx
    path TEXT NOT NULL UNIQUE,       -- relative to the root, '/'-separated
    language TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    roles INTEGER NOT NULL DEFAULT 0,      -- a bit per role (index/roles.py)
    role_names TEXT                        -- JSON {"parts": [...], "versions": [...]}, or NULL
);
"""
# Graph nodes are numbered files first (node = file id), then symbols (node = files + symbol id,
# the symbol's id in the generation: `index.segments`); nodes.npy holds each node's PageRank and
# in-degree (symbols and files that call, import or inherit it), edges.npy the edges.

#: A segment's database (`rows.sqlite`, `rows-delta.sqlite`). Ids are the segment's own, given
#: file by file in file id order; file ids are the generation's.
SEGMENT_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- The files whose rows the segment holds, with how many of each kind (a file may hold none).
CREATE TABLE held (
    file_id INTEGER PRIMARY KEY,
    chunks INTEGER NOT NULL,
    symbols INTEGER NOT NULL,
    refs INTEGER NOT NULL
);
-- A delta's: the generation's id of each file of the base it is laid over (int32, -1 for a file
-- removed since), one row; none when the base's ids are the generation's.
CREATE TABLE base_files (ids BLOB NOT NULL);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,          -- also the row in the segment's codes
    file_id INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    symbol TEXT,
    symbol_id INTEGER                -- whose centrality it has (of `symbol`); NULL: its file's
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    signature TEXT NOT NULL,
    docstring TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    parent TEXT
);
CREATE INDEX symbols_file ON symbols(file_id);
CREATE TABLE refs (
    id INTEGER PRIMARY KEY,          -- in file order, as the ids of chunks and symbols
    file_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    line INTEGER NOT NULL,
    enclosing TEXT,
    qualifier TEXT NOT NULL,
    imported_names TEXT NOT NULL     -- JSON list
);
CREATE INDEX refs_file ON refs(file_id);
-- An edit's update asks which files call a name whose definitions changed (`Previous.callers_of`).
CREATE INDEX refs_name ON refs(name);
-- The words of each held file's names outside its comments, as postings: a word, then the ids
-- of the held files that spell it (uint32, little-endian, ascending).
CREATE TABLE code_words (word TEXT PRIMARY KEY, files BLOB NOT NULL) WITHOUT ROWID;
"""


def write_error(index_dir: Path, err: OSError) -> IndexWriteError:
    """The one error for a build that cannot write, saying that nothing published changed."""
    reason = err.strerror or str(err) or type(err).__name__
    return IndexWriteError(f"cannot write the index in {index_dir}: {reason}; the index there is unchanged")


def damaged(where: Path, what: str) -> IndexFormatError:
    """The one error for a damaged part of an index, with the way to repair it."""
    return IndexFormatError(f"{where}: {' '.join(what.split())}")  # one line, whatever it quotes


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


_NPY_MAGIC = b"\x93NUMPY\x01\x00"
_NPY_HEADER = re.compile(rb"\{'descr': '([|<][a-z]\d)', 'fortran_order': False, 'shape': \((\d+), (\d+)\), \} *\n")
_NPY_ALIGN = 64
#: The matrices of a generation: binary codes (bytes), node values (little-endian float64),
#: edges (little-endian int64).
_CODE_TYPE = "|u1"
_NODE_TYPE = "<f8"
_EDGE_TYPE = "<i8"
#: Values a row of edges.npy holds (`graph.EdgeColumns.WIDTH`).
EDGE_VALUES = 5


def _encode_npy(matrix: np.ndarray, descr: str) -> bytes:
    """A C-ordered matrix as a version 1.0 .npy file whose data starts 64-byte aligned."""
    header = b"{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr.encode(), *matrix.shape)
    padding = -(len(_NPY_MAGIC) + 2 + len(header) + 1) % _NPY_ALIGN
    header += b" " * padding + b"\n"
    data = np.ascontiguousarray(matrix, np.dtype(descr)).tobytes()
    return _NPY_MAGIC + struct.pack("<H", len(header)) + header + data


def _load_npy(path: Path, descr: str) -> np.ndarray:
    """The matrix of type `descr` that `_encode_npy` wrote, mapped read-only; ValueError when the
    file is not one.

    Read here, not by np.load: numpy parses the header with ast.literal_eval, and CPython 3.11
    keeps the AST builder's recursion depth in state every thread shares, so two threads
    opening indexes at once could fail with SystemError.
    """
    with open(path, "rb") as handle:
        start = handle.read(len(_NPY_MAGIC) + 2)
        if len(start) < len(_NPY_MAGIC) + 2 or not start.startswith(_NPY_MAGIC):
            raise ValueError("not a version 1.0 .npy file")
        (header_size,) = struct.unpack("<H", start[len(_NPY_MAGIC):])
        match = _NPY_HEADER.fullmatch(handle.read(header_size))
        size = handle.seek(0, os.SEEK_END)
    if match is None or match[1].decode() != descr:
        raise ValueError(f"not a matrix of {np.dtype(descr).name}")
    dtype = np.dtype(descr)
    shape = (int(match[2]), int(match[3]))
    offset = len(start) + header_size
    expected = shape[0] * shape[1] * dtype.itemsize
    if size != offset + expected:
        raise ValueError(f"holds {size - offset} bytes of data, not {expected}")
    if expected == 0:
        return np.zeros(shape, dtype=dtype)  # mmap cannot map zero bytes
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)


def encode_codes(matrix: np.ndarray) -> bytes:
    """A uint8 matrix of binary codes, a row per chunk, as a .npy file."""
    return _encode_npy(matrix, _CODE_TYPE)


def load_codes(path: Path) -> np.ndarray:
    """The binary codes `encode_codes` wrote, mapped read-only; ValueError when the file is not one."""
    return _load_npy(path, _CODE_TYPE)


def encode_nodes(centrality: np.ndarray, in_degree: np.ndarray) -> bytes:
    """Each graph node's PageRank and in-degree as the .npy file of a (nodes, 2) float64 matrix
    (an in-degree is exact in a float64)."""
    return _encode_npy(np.column_stack([centrality, in_degree]).reshape(len(centrality), 2), _NODE_TYPE)


def load_nodes(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The PageRank (float64) and in-degree (int64) of every graph node, as `encode_nodes` wrote
    them; ValueError when the file is not such a matrix."""
    matrix = _load_npy(path, _NODE_TYPE)
    if matrix.shape[1] != 2:
        raise ValueError(f"holds {matrix.shape[1]} values a node, not 2")
    return np.array(matrix[:, 0]), matrix[:, 1].astype(np.int64)


def encode_edges(matrix: np.ndarray) -> bytes:
    """The graph's edges as the .npy file of an (edges, 5) int64 matrix: a row per edge of its
    source node, destination node, kind (`graph.EDGE_KINDS` position), line and resolution
    (`graph.RESOLUTIONS` position)."""
    return _encode_npy(np.asarray(matrix, dtype=np.int64).reshape(-1, EDGE_VALUES), _EDGE_TYPE)


def load_edges(path: Path) -> np.ndarray:
    """The (edges, 5) int64 matrix `encode_edges` wrote, read into memory; ValueError when the
    file is not such a matrix."""
    matrix = _load_npy(path, _EDGE_TYPE)
    if matrix.shape[1] != EDGE_VALUES:
        raise ValueError(f"holds {matrix.shape[1]} values an edge, not {EDGE_VALUES}")
    return np.array(matrix)


def read_current(index_dir: Path) -> str:
    """The generation name CURRENT holds; IndexNotFoundError if there is none."""
    path = index_dir / CURRENT
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IndexNotFoundError(f"no maguyva index in {index_dir}") from None
    except NotADirectoryError:
        raise IndexNotFoundError(f"no maguyva index in {index_dir} (not a folder)") from None
    except IsADirectoryError:
        raise damaged(path, "is a folder, not the name of a generation") from None
    try:
        name = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise damaged(path, "is damaged (not the name of a generation)") from None
    if not _is_generation_name(name):
        raise damaged(path, f"is damaged (names {name[:40]!r}, not a generation)")
    return name


def _is_generation_name(name: str) -> bool:
    return name.startswith("gen-") and name[4:].isdigit() and len(name) <= 16


def current_generation(index_dir: Path) -> Path:
    """The published generation folder; IndexNotFoundError if none is published. Does not pin
    it: a reader uses `PinnedGeneration.open`."""
    generation = index_dir / read_current(index_dir)
    if not generation.is_dir():
        raise damaged(index_dir / CURRENT, f"names a missing generation {generation.name!r}")
    return generation


class PinnedGeneration:
    """The published generation, pinned for as long as this object is open: a build publishing
    a newer one leaves this one on disk until it is closed."""

    def __init__(self, path: Path, pin: int | None):
        self.path = path
        # Released when closed, or when the object is collected unclosed.
        self._release = weakref.finalize(self, os.close, pin) if pin is not None else None

    @classmethod
    def open(cls, index_dir: Path) -> PinnedGeneration:
        """Pin the generation CURRENT names. A build may publish another and collect this one
        between the reading of CURRENT and the lock; then CURRENT is read again."""
        for _ in range(_OPEN_ATTEMPTS):
            generation = index_dir / read_current(index_dir)
            pin = _pin_shared(generation / READERS)
            if pin is not None:
                return cls(generation, pin)
            if read_current(index_dir) != generation.name:
                continue  # replaced meanwhile: pin the new one
            if generation.is_dir() and not (generation / READERS).exists():
                return cls(generation, None)  # a layout older than pins: its meta says which
            raise damaged(index_dir / CURRENT, f"names a missing generation {generation.name!r}")
        raise IndexLockedError(f"{index_dir}: the index kept changing while it was opened; try again")

    def close(self) -> None:
        if self._release is not None:
            self._release()  # closing the descriptor releases the shared lock

    def __enter__(self) -> PinnedGeneration:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pin_shared(path: Path) -> int | None:
    """A descriptor of `path` holding a shared lock, or None when the file is gone (or was
    collected while the lock was awaited)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        _flock(fd, shared=True, wait=True)
        # A build collecting the generation locks the same file exclusively and then renames
        # the folder away: a pin taken after that holds a file no longer at `path`.
        if not _same_file(fd, path):
            os.close(fd)
            return None
        return fd
    except BaseException:
        os.close(fd)
        raise


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _flock(fd: int, *, shared: bool, wait: bool) -> bool:
    """Lock `fd`; False when `wait` is off and another process holds a conflicting lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: files in use cannot be deleted anyway
        return True
    flags = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB)
    try:
        fcntl.flock(fd, flags)
    except BlockingIOError:
        return False
    return True


def new_generation(index_dir: Path) -> Path:
    """A fresh, empty generation folder numbered after every existing one, with its READERS
    file (a reader can pin it as soon as it is published)."""
    numbers = [int(p.name[4:]) for p in index_dir.glob("gen-*") if p.name[4:].isdigit()]
    generation = index_dir / f"gen-{max(numbers, default=0) + 1:06d}"
    generation.mkdir(parents=True)
    (generation / READERS).touch()
    return generation


def seal(generation: Path, earlier: Path | None = None) -> None:
    """Flush every part of a finished generation to disk and write its MANIFEST, last. A part
    that is the `earlier` generation's own file (a second name of it: generations are never
    written to once sealed) takes its entry from that generation's MANIFEST, not hashed again."""
    recorded: dict[str, object] = {}
    if earlier is not None:
        try:
            recorded = json.loads((earlier / MANIFEST).read_bytes())["parts"]
        except (OSError, ValueError, TypeError, KeyError):
            recorded = {}
    parts = {}
    for name in PARTS:
        path = generation / name
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
            stat = os.fstat(handle.fileno())
            entry = recorded.get(name) if isinstance(recorded, dict) else None
            reused = isinstance(entry, dict) and entry.get("size") == stat.st_size
            if not (reused and _is_earlier_part(stat, earlier, name)):
                _backdate(path, stat)
                entry = {"size": stat.st_size, "sha256": _sha256(handle)}
            parts[name] = entry
    write_atomically(generation / MANIFEST, json.dumps({"format_version": FORMAT_VERSION, "parts": parts}).encode())
    _fsync_folder(generation)


def _backdate(path: Path, stat: os.stat_result) -> None:
    """Date a part being sealed before the racy window: the digest its seal makes is then kept
    (`_sha256`) for the reader that opens the generation next and the update after it, which
    would each hash it again (an edit at 59,280 files: 50 MB, 54 ms). Written again in place, it
    takes the time of that write, another mtime, and is hashed again. A file with other names
    (another generation's part) keeps its time: what is kept of it is keyed by it."""
    if stat.st_nlink != 1:
        return
    try:
        os.utime(path, ns=(stat.st_atime_ns, time.time_ns() - 2 * RACY_WINDOW_NS))
    except OSError:  # a file system that keeps no times: its parts are hashed again, as before
        pass


def _is_earlier_part(stat: os.stat_result, earlier: Path | None, name: str) -> bool:
    if earlier is None:
        return False
    try:
        other = os.stat(earlier / name)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (stat.st_dev, stat.st_ino)


def verify(generation: Path, parts: tuple[str, ...] = PARTS) -> None:
    """Check `parts` of a generation against its MANIFEST (the size of each, the SHA-256 of
    those not `SELF_CHECKED`); IndexFormatError naming the first that differs."""
    manifest_path = generation / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_bytes())
        recorded = manifest["parts"]
        if not isinstance(recorded, dict):
            raise TypeError("parts is not an object")
    except FileNotFoundError:
        raise damaged(manifest_path, "is missing") from None
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise damaged(manifest_path, f"is damaged ({type(err).__name__})") from None
    for name in parts:
        path = generation / name
        entry = recorded.get(name)
        if not isinstance(entry, dict):
            raise damaged(manifest_path, f"does not list {name}")
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size != entry.get("size"):
                    raise damaged(path, f"is damaged ({size} bytes, {entry.get('size')!r} in {MANIFEST})")
                if name not in SELF_CHECKED and _sha256(handle) != entry.get("sha256"):
                    raise damaged(path, f"is damaged (its SHA-256 differs from the one in {MANIFEST})")
        except FileNotFoundError:
            raise damaged(path, "is missing") from None
        except IsADirectoryError:
            raise damaged(path, "is a folder") from None


def _sha256(handle: object) -> str:
    """The SHA-256 of an open part, hashed once per process while the file is the same: a
    sealed part is never written again, so the part an edit links into its generation, or the
    one a new reader opens after the build sealed it, keeps its digest. The same file is the
    same device, inode, size and mtime, and the digest is kept only for a file whose mtime lay
    RACY_WINDOW_NS in the past when it was hashed (a write within the same clock tick can keep
    an mtime)."""
    stat = os.fstat(handle.fileno())  # type: ignore[attr-defined]
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is not None:
        return digest
    hashed_at_ns = time.time_ns()
    handle.seek(0)  # type: ignore[attr-defined]
    digest = hashlib.file_digest(handle, "sha256").hexdigest()  # type: ignore[arg-type]
    if stat.st_mtime_ns < hashed_at_ns - RACY_WINDOW_NS:
        if len(_DIGESTS) >= _DIGESTS_KEPT:
            del _DIGESTS[next(iter(_DIGESTS))]  # the oldest
        _DIGESTS[key] = digest
    return digest


#: The digests `_sha256` keeps, by (device, inode, size, mtime): a few generations' parts.
_DIGESTS: dict[tuple[int, int, int, int], str] = {}
_DIGESTS_KEPT = 64


def _fsync_folder(folder: Path) -> None:
    """Make a folder's entries (a rename, a new file) durable; a no-op where folders cannot be
    opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


def publish(index_dir: Path, generation: Path) -> None:
    """Make the sealed `generation` the current one, then collect the generations no longer
    named that no reader pins."""
    write_atomically(index_dir / CURRENT, generation.name.encode())
    _fsync_folder(index_dir)
    collect(index_dir)


def collect(index_dir: Path) -> None:
    """Delete what no reader can need: generations other than the published one that no
    reader pins, and temporary files of interrupted builds. Called with the build lock held."""
    try:
        current = read_current(index_dir)
    except IndexStoreError:
        current = None  # nothing readable is published: only unfinished work to clear
    for entry in index_dir.iterdir():
        name = entry.name
        if name.startswith(f".{CURRENT}.") or name.startswith(".trash-"):
            _remove(entry)
        elif name.startswith("gen-") and name != current and entry.is_dir() and not entry.is_symlink():
            _collect_generation(entry)


def _collect_generation(generation: Path) -> None:
    try:
        fd = os.open(generation / READERS, os.O_RDONLY)
    except FileNotFoundError:
        fd = None  # interrupted before it had one, or of a layout older than pins
    try:
        if fd is not None and not _flock(fd, shared=False, wait=False):
            return  # a reader still uses it: the next build collects it
        # Renamed away before deleting: a reader that opened READERS before the exclusive lock
        # finds the file gone from its path once it gets its shared one, and reads CURRENT again.
        trash = generation.with_name(f".trash-{generation.name}-{os.getpid()}")
        try:
            os.replace(generation, trash)
        except OSError:
            return
        _remove(trash)
    finally:
        if fd is not None:
            os.close(fd)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


@contextlib.contextmanager
def build_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index's build lock; IndexLockedError at once if another process holds it."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        handle = open(index_dir / LOCK, "a+")  # noqa: SIM115 - closed by the with below
    except OSError as err:
        raise write_error(index_dir, err) from None
    with handle:
        if sys.platform == "win32":  # pragma: no cover - msvcrt locks the first byte instead
            import msvcrt

            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            except OSError:
                raise IndexLockedError(f"{index_dir} is being indexed by another process") from None
            yield
            return
        import fcntl

        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexLockedError(f"{index_dir} is being indexed by another process") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def path_to_db(path: str) -> str | bytes:
    """A relative path as stored: text, or its bytes when the name is not valid UTF-8 (the
    walk gives such names as `os.fsdecode` does, with surrogate escapes, which SQLite's text
    cannot hold)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path)
    return path


def shown_path(path: str) -> str:
    """A path as shown and embedded: bytes of a name that is not valid UTF-8 become U+FFFD."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "replace")
    return path


def path_from_db(value: str | bytes) -> str:
    """A stored path as the walk gives it (the inverse of `path_to_db`)."""
    return value if isinstance(value, str) else os.fsdecode(value)


#: Each schema's tables, then its secondary indexes, made once the rows are in
#: (`finish_database`): built from sorted rows at the end, not kept up to date row by row, they
#: cost a fifth less.
_SPLIT = {
    schema: (re.sub(r"^CREATE INDEX [^;]*;\n?", "", schema, flags=re.M), tuple(re.findall(r"^CREATE INDEX [^;]*;", schema, re.M)))
    for schema in (SCHEMA, SEGMENT_SCHEMA)
}


def create_database(path: Path, attached: dict[str, Path] | None = None, schema: str = SCHEMA) -> sqlite3.Connection:
    """A new database with the tables of `schema` (the generation's, or `SEGMENT_SCHEMA`), their
    rows to be inserted, then `finish_database`; with the databases `attached` under their names,
    to copy rows from (they are only read)."""
    db = sqlite3.connect(path)
    for name, other in (attached or {}).items():
        db.execute(f"ATTACH DATABASE ? AS {name}", (str(other),))
    # A new generation's database needs no journal and no syncs of its own: a build that stops
    # halfway leaves a generation no one reads (it is never published), and `seal` syncs every
    # part before it is. With SQLite's defaults, each statement of the schema was a transaction
    # synced to disk on its own.
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.executescript(f"BEGIN;\n{_SPLIT[schema][0]}\nCOMMIT;")
    db.execute("INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
    return db


def finish_database(db: sqlite3.Connection, schema: str = SCHEMA) -> None:
    """Make the indexes of `schema` (the one the database was created with) over the rows
    inserted, and commit: the database is then the schema's whole."""
    for statement in _SPLIT[schema][1]:
        db.execute(statement)
    db.commit()


#: The columns of the `files` table, in the order `file_rows` gives them.
FILE_COLUMNS = "id, path, language, size, mtime_ns, sha256, roles, role_names"
#: Generations whose `files` rows are kept in the process: the one its reader serves (which the
#: next update starts from) and the one that update writes (which the next reader opens).
_FILE_ROWS_KEPT = 2
_kept_file_rows: dict[str, tuple[tuple[int, ...], tuple[tuple[Any, ...], ...]]] = {}
_kept_file_rows_lock = threading.Lock()


def _database_identity(generation: Path) -> tuple[int, ...] | None:
    """What tells a generation's database file from any other (generations are never written
    once sealed, so its rows are what they were while this holds); None when it cannot be read."""
    try:
        stat = os.stat(generation / META)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def file_rows(db: sqlite3.Connection, generation: Path) -> tuple[tuple[Any, ...], ...]:
    """The rows of `generation`'s `files` table (`FILE_COLUMNS`, by id), `db` being its
    database: read once in the process, as an update and the reader of the same generation both
    need them (about 0.1 s at 59,000 files), or as the build that wrote them kept them."""
    identity = _database_identity(generation)
    with _kept_file_rows_lock:
        kept = _kept_file_rows.get(str(generation))
    if identity is not None and kept is not None and kept[0] == identity:
        return kept[1]
    rows = tuple(db.execute(f"SELECT {FILE_COLUMNS} FROM files ORDER BY id").fetchall())
    if identity is not None:
        _keep_file_rows(str(generation), identity, rows)
    return rows


def keep_file_rows(generation: Path, rows: Sequence[tuple[Any, ...]]) -> None:
    """Remember `rows` as `generation`'s `files` rows, exactly as `file_rows` would read them,
    once its database is written whole."""
    identity = _database_identity(generation)
    if identity is not None:
        _keep_file_rows(str(generation), identity, tuple(rows))


def _keep_file_rows(generation: str, identity: tuple[int, ...], rows: tuple[tuple[Any, ...], ...]) -> None:
    with _kept_file_rows_lock:
        _kept_file_rows.pop(generation, None)
        _kept_file_rows[generation] = (identity, rows)
        while len(_kept_file_rows) > _FILE_ROWS_KEPT:
            _kept_file_rows.pop(next(iter(_kept_file_rows)))  # the oldest


def open_database(generation: Path, name: str = META) -> sqlite3.Connection:
    """A database of a generation (its own, or a segment's: `name`), read-only, after checking
    its format version."""
    path = generation / name
    if not path.is_file():
        raise damaged(path, "is missing")
    db = None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        row = db.execute("SELECT value FROM meta WHERE key = 'format_version'").fetchone()
    except (sqlite3.Error, UnicodeDecodeError) as err:  # a damaged page may hold text that is not UTF-8
        if db is not None:
            db.close()
        raise damaged(path, f"is unreadable ({err})") from None
    if row is None or row[0] != str(FORMAT_VERSION):
        db.close()
        found = row[0] if row else "unknown"
        raise IndexFormatError(f"{generation.parent}: index format {found} is not {FORMAT_VERSION}")
    return db


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM meta"))


def write_meta(db: sqlite3.Connection, values: dict[str, object]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
    )


def encode_file_ids(file_ids: Sequence[int] | np.ndarray) -> bytes:
    """Ascending file ids as the bytes of a `code_words` posting (or of several, one after another)."""
    return np.asarray(file_ids, dtype="<u4").tobytes()


def encode_base_files(file_ids: np.ndarray) -> bytes:
    """A delta's `base_files` row: the generation's id of each base file, -1 for one removed."""
    return np.asarray(file_ids, dtype="<i4").tobytes()


def decode_base_files(blob: bytes) -> np.ndarray:
    """The ids of a `base_files` row (int64)."""
    if len(blob) % 4:
        raise ValueError("a base_files row is not a whole number of file ids")
    return np.frombuffer(blob, dtype="<i4").astype(np.int64)


def decode_file_ids(blob: bytes) -> np.ndarray:
    """The file ids of a `code_words` posting (int64)."""
    if len(blob) % 4:
        raise ValueError("a code_words posting is not a whole number of file ids")
    return np.frombuffer(blob, dtype="<u4").astype(np.int64)
