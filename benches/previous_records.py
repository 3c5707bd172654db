"""How long an update takes to read what the published generation holds (`load_previous_records`).

    python benches/previous_records.py TREE [--rounds 5]

Builds an index of TREE in a scratch folder (not timed), then reads its records back --rounds
times, as every incremental build does before it parses the changed files, and prints the best
time. Another checkout is measured by putting its sources first (`PYTHONPATH=OTHER/python`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import runs_ms  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="maguyva-records-") as scratch:
        os.environ["MAGUYVA_HOME"] = str(Path(scratch) / "home")
        from maguyva.embed import make_embedder
        from maguyva.index.build import build_index, embedder_identity, load_previous_records

        index_dir = Path(scratch) / "index"
        summary = build_index(args.tree, index_dir, embedder="local")
        model = embedder_identity(make_embedder("local"))
        load_previous_records(index_dir, model)  # the first read warms the page cache
        times = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            previous = load_previous_records(index_dir, model)
            times.append(time.perf_counter() - started)
        print(f"{args.tree}: {len(previous.records):,} files, {summary.chunks:,} chunks; records read: {runs_ms(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
