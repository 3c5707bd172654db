"""Helpers of the reliability tests: an invented tree written to disk, and what a search could
see of an index, to compare two indexes exactly."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from maguyva.index import store


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def contents(index_dir: Path) -> dict[str, object]:
    """What a search could see of an index, minus times."""
    generation = store.current_generation(index_dir)
    db = sqlite3.connect(generation / store.META)
    try:
        tables = {
            name: db.execute(f"SELECT * FROM {name} ORDER BY rowid").fetchall()
            for name in ("chunks", "symbols", "refs", "edges")
        }
        tables["files"] = db.execute("SELECT id, path, language, sha256, roles FROM files").fetchall()
    finally:
        db.close()
    tables["codes"] = np.load(generation / store.CODES).tobytes()
    tables["nodes"] = (generation / store.NODES).read_bytes()
    return tables
