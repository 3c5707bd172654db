"""A generation's rows as one database, the way a full build numbers them: its own tables (meta,
files), its graph's edges (`edges.npy`, as a table of src, dst, kind name, line and resolution) and the
chunks, symbols, references and code words of its two segments, merged (`index.segments`), so
that tests compare and query an index whatever its segments hold."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from maguyva.index import store
from maguyva.index.graph import EDGE_KINDS, RESOLUTIONS
from maguyva.index.segments import CHUNKS, REFS, SYMBOLS, Segments

SYMBOL_COLUMNS = "file_id, name, kind, qualified_name, signature, docstring, start_line, end_line, parent"
REF_COLUMNS = "file_id, kind, name, line, enclosing, qualifier, imported_names"


def one_database(generation: Path) -> sqlite3.Connection:
    """An in-memory database of the generation's tables, each as one full build's."""
    db = sqlite3.connect(":memory:")
    db.execute("ATTACH DATABASE ? AS own", (f"file:{generation / store.META}?mode=ro",))
    for name in ("meta", "files"):
        db.execute(f"CREATE TABLE {name} AS SELECT * FROM own.{name}")
    db.execute("CREATE TABLE edges (src INTEGER, dst INTEGER, kind TEXT, line INTEGER, how TEXT)")
    edges = store.load_edges(generation / store.EDGES).tolist()
    db.executemany("INSERT INTO edges VALUES (?, ?, ?, ?, ?)",
                   [(s, d, EDGE_KINDS[k], line, RESOLUTIONS[h]) for s, d, k, line, h in edges])
    files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    segments = Segments(generation, files)
    try:
        chunks = segments.rows(CHUNKS, "file_id, start_line, end_line, symbol, symbol_id")
        symbol_ids = [None if s < 0 else s for s in segments.chunk_symbol_ids().tolist()]
        db.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, file_id, start_line, end_line, symbol, symbol_id)")
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", [(i, *row[:4], s) for i, (row, s) in enumerate(zip(chunks, symbol_ids))])
        db.execute(f"CREATE TABLE symbols (id INTEGER PRIMARY KEY, {SYMBOL_COLUMNS})")
        db.executemany("INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(i, *row) for i, row in enumerate(segments.rows(SYMBOLS, SYMBOL_COLUMNS))])
        db.execute(f"CREATE TABLE refs (id INTEGER PRIMARY KEY, {REF_COLUMNS})")
        db.executemany("INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(i, *row) for i, row in enumerate(segments.rows(REFS, REF_COLUMNS))])
        words = sorted({w for part in (segments.base, segments.delta) for (w,) in part.execute("SELECT word FROM code_words")})
        postings = segments.code_words(words)
        db.execute("CREATE TABLE code_words (word TEXT PRIMARY KEY, files BLOB NOT NULL)")
        db.executemany("INSERT INTO code_words VALUES (?, ?)", [(w, store.encode_file_ids(postings[w])) for w in words if w in postings])
    finally:
        segments.close()
    db.commit()
    return db


def codes(generation: Path) -> np.ndarray:
    """Every chunk's code in the generation's chunk order."""
    with sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True) as db:
        files = db.execute("SELECT count(*) FROM files").fetchone()[0]
    segments = Segments(generation, files)
    try:
        return np.array(segments.codes(store.load_codes(generation / store.CODES), store.load_codes(generation / store.CODES_DELTA)))
    finally:
        segments.close()


def table(db_path: Path, sql: str) -> list[tuple]:
    """The rows of `sql` over a generation as one database (`db_path`: the generation folder, or
    its `meta.sqlite`)."""
    generation = db_path.parent if db_path.name == store.META else db_path
    db = one_database(generation)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()
