"""How long a build takes to write the rows of its metadata database (`store.create_database`,
the inserts, `store.finish_database`).

    python benches/metadata_write.py META_SQLITE [--rounds 3]

Reads every row of an existing index's `meta.sqlite` (a `gen-NNNNNN/meta.sqlite` of the cache
folder), then writes them into a new database as a build does, --rounds times, and prints the
best time. Another checkout is measured by putting its sources first (`PYTHONPATH=OTHER/python`;
a checkout without `finish_database` commits instead).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import runs_ms  # noqa: E402

TABLES = ("files", "chunks", "symbols", "refs", "edges", "code_words")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("meta", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from maguyva.index import store

    source = sqlite3.connect(f"file:{args.meta}?mode=ro", uri=True)
    rows = {table: source.execute(f"SELECT * FROM {table}").fetchall() for table in TABLES}
    source.close()
    times = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="maguyva-meta-") as scratch:
            started = time.perf_counter()
            db = store.create_database(Path(scratch) / "meta.sqlite")
            for table, found in rows.items():
                if found:
                    db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(found[0]))})", found)
            finish = getattr(store, "finish_database", None)
            finish(db) if finish is not None else db.commit()
            db.close()
            times.append(time.perf_counter() - started)
    counts = ", ".join(f"{len(found):,} {table}" for table, found in rows.items())
    print(f"{counts}: written: {runs_ms(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
