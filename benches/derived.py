"""What the first questions on a newly opened generation derive from it, stage by stage.

    python benches/derived.py INDEX_DIR [--rounds 3]

Opens the published generation of INDEX_DIR --rounds times, each time as a new reader, and
times every table the answer side derives from a reader on first use (`per_reader` and
`per_layout`): the symbol table and its word index, the path vocabulary, the import sources,
the files' facts and the rest. An edit makes a new generation, so its first question pays for
these. Prints each one's runs and a digest of the symbol table and word index, so that two
checkouts (`PYTHONPATH=OTHER/python`) can be compared for speed and for the same tables.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import runs_ms  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    from maguyva.index import reader as reader_module
    from maguyva.index import symbols
    from maguyva.query.rank import learned, signals
    from maguyva.query.retrievers import semantic

    stages: list[tuple[str, Callable[[reader_module.IndexReader], object]]] = [
        ("symbol table", symbols.symbol_table),
        ("word index", lambda r: symbols.symbol_table(r).words()),
        ("path vocabulary", signals.path_vocabulary),
        ("import sources", signals.import_sources),
        ("file facts", learned.file_facts),
        ("defined names", learned.defined_names),
        ("bare chunks", semantic.bare_chunks),
        ("chunk demotion", reader_module.chunk_demotion),
    ]
    times: dict[str, list[float]] = {name: [] for name, _ in stages}
    digest = ""
    for _ in range(args.rounds):
        reader = reader_module.IndexReader(args.index_dir)
        try:
            for name, derive in stages:
                started = time.perf_counter()
                derive(reader)
                times[name].append(time.perf_counter() - started)
            digest = _digest(symbols.symbol_table(reader))
        finally:
            reader.close()
    print(f"{args.index_dir}: {len(reader.files)} files, {len(reader.chunk_file)} chunks")
    for name, seconds in times.items():
        print(f"  {name:<16} {runs_ms(seconds)}")
    print(f"  symbol table and word index digest {digest}")
    return 0


_LOOKUPS = ("by_name", "by_lower", "by_qualified", "by_lower_qualified", "by_tail")


def _digest(table: object) -> str:
    words = table.words()  # type: ignore[attr-defined]
    parts = (
        table.vocabulary.words, table.name_pairs.tobytes(), table.name_word_count.tobytes(),  # type: ignore[attr-defined]
        sorted((word, ids.tobytes()) for word, ids in table.by_word.items()), table.tie_break,  # type: ignore[attr-defined]
        words.symbols.tobytes(), words.values.tobytes(), words.offsets.tobytes(), sorted(words.ids.items()),
        # The lookups by name, in key order and id order (dicts of lists or `IdGroups` alike).
        *([(key, list(ids)) for key, ids in getattr(table, lookup).items()] for lookup in _LOOKUPS),
    )
    return hashlib.sha256(pickle.dumps(parts)).hexdigest()[:16]


if __name__ == "__main__":
    raise SystemExit(main())
