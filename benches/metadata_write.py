"""How long a full build takes to write the rows of its databases (`store.create_database`, the
inserts, `store.finish_database`): the generation's own (`meta.sqlite`: files, edges) and its
base segment's (`rows.sqlite`: chunks, symbols, references, code words).

    python benches/metadata_write.py GENERATION [--rounds 3]

Reads every row of an existing generation whose delta segment is empty (a `gen-NNNNNN` folder
of the cache folder, after a full build), then writes them into new databases as a build does,
--rounds times, and prints the best time.
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

#: Each database's tables, by file name.
TABLES = {"meta.sqlite": ("files", "edges"), "rows.sqlite": ("held", "chunks", "symbols", "refs", "code_words")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("generation", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from maguyva.index import store

    rows: dict[str, dict[str, list[tuple[object, ...]]]] = {}
    for name, tables in TABLES.items():
        source = sqlite3.connect(f"file:{args.generation / name}?mode=ro", uri=True)
        rows[name] = {table: source.execute(f"SELECT * FROM {table}").fetchall() for table in tables}
        source.close()
    schemas = {"meta.sqlite": store.SCHEMA, "rows.sqlite": store.SEGMENT_SCHEMA}
    times = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="maguyva-meta-") as scratch:
            started = time.perf_counter()
            for name, tables in rows.items():
                db = store.create_database(Path(scratch) / name, schema=schemas[name])
                for table, found in tables.items():
                    if found:
                        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(found[0]))})", found)
                store.finish_database(db, schemas[name])
                db.close()
            times.append(time.perf_counter() - started)
    counts = ", ".join(f"{len(found):,} {table}" for tables in rows.values() for table, found in tables.items())
    print(f"{counts}: written: {runs_ms(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
