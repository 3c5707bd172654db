"""Helpers of the reliability tests: an invented tree written to disk, and what a search could
see of an index, to compare two indexes exactly."""

from __future__ import annotations

from pathlib import Path

import one_table

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
    db = one_table.one_database(generation)
    try:
        tables = {
            name: db.execute(f"SELECT * FROM {name} ORDER BY rowid").fetchall()
            for name in ("chunks", "symbols", "refs", "edges")
        }
        tables["files"] = db.execute("SELECT id, path, language, sha256, roles FROM files").fetchall()
    finally:
        db.close()
    tables["codes"] = one_table.codes(generation).tobytes()
    tables["nodes"] = (generation / store.NODES).read_bytes()
    return tables
