"""How long cutting text files into windows takes (`chunk_text`), the files no grammar parses.

    python benches/chunking.py TREE [TREE ...] [--rounds 5]

Reads every file the walk finds in the TREEs that has no language (documentation,
configuration, data), splits each into lines as a build does, then cuts them all --rounds times.
Prints the runs, the chunk count and a digest of every chunk's lines and text, so that two
checkouts (`PYTHONPATH=OTHER/python`) can be compared for speed and for the same chunks.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import runs_ms  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    from maguyva._core import walk
    from maguyva.index.chunk import chunk_text, split_lines
    from maguyva.index.parse import language_for

    texts = []
    for tree in args.trees:
        walked, _ = walk(tree)
        texts += [split_lines((tree / path).read_bytes()) for path, _, _ in walked if language_for(path) is None]
    seconds = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        chunks = [chunk_text(lines) for lines in texts]
        seconds.append(time.perf_counter() - started)
    cut = [[(c.start_line, c.end_line, c.text) for c in file_chunks] for file_chunks in chunks]
    print(f"{len(texts)} text files, {sum(map(len, texts))} lines, {sum(map(len, cut))} chunks: {runs_ms(seconds)}")
    print(f"chunks digest {hashlib.sha256(pickle.dumps(cut)).hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
