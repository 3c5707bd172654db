"""Index time and size on the development benchmark repositories.

    python benches/index_repos.py --repos /path/to/repos [--bench ../shared/bench] [--json out.json] \
        [--build NAME=V ...]   # built with a number of maguyva.config at V (EMBED_FILE_CONTEXT=0, ...)

For every repository of the benchmark's repos.json whose tree is under --repos (one folder per
repository name, at the pinned revision), builds a fresh index of its benchmark_root with the
default (offline) embedder, cold: a new index folder and an empty embedding cache, so nothing is
reused. Prints files, chunks, symbols, edges, seconds by stage and index size, and the time of
the same build again with nothing changed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from queries import build_number

from maguyva import config
from maguyva.index.build import build_index


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, required=True, help="folder with one tree per repository")
    parser.add_argument("--bench", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench",
                        help="benchmark folder holding repos.json (default: ../shared/bench)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--build", action="append", metavar="NAME=V", default=[],
                        help="build with this number of maguyva.config at V (repeatable)")
    args = parser.parse_args()
    numbers = dict(build_number(parser, spec) for spec in args.build)
    tuning = config.DEFAULT.but(**numbers)

    repos = json.loads((args.bench / "repos.json").read_text())
    rows = []
    print(f"{'repository':<12} {'files':>6} {'chunks':>7} {'symbols':>7} {'edges':>6} "
          f"{'parse s':>7} {'embed s':>7} {'total s':>7} {'index MB':>8} {'again ms':>8}")
    for repo in repos:
        root = args.repos / repo["name"] / (repo.get("benchmark_root") or "")
        if not root.is_dir():
            print(f"{repo['name']:<12} missing: {root}", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory() as scratch:
            os.environ["MAGUYVA_HOME"] = scratch  # cold: empty embedding cache
            started = time.perf_counter()
            summary = build_index(root, Path(scratch) / "index", tuning=tuning)
            seconds = time.perf_counter() - started
            # The same build again, nothing changed (a tree written in the last 2 s is read again:
            # its stats are too recent to trust).
            started = time.perf_counter()
            build_index(root, Path(scratch) / "index", tuning=tuning)
            unchanged = time.perf_counter() - started
        row = {
            "name": repo["name"],
            "language": repo["language"],
            "files": summary.files,
            "chunks": summary.chunks,
            "symbols": summary.symbols,
            "edges": summary.edges,
            "seconds": round(seconds, 3),
            "unchanged_seconds": round(unchanged, 4),
            "stages": {k: round(v, 3) for k, v in summary.stages.items()},
            "index_bytes": summary.index_bytes,
        }
        rows.append(row)
        print(f"{row['name']:<12} {row['files']:>6} {row['chunks']:>7} {row['symbols']:>7} {row['edges']:>6} "
              f"{row['stages']['parse']:>7.2f} {row['stages']['embed']:>7.2f} {seconds:>7.2f} "
              f"{row['index_bytes'] / 1e6:>8.1f} {unchanged * 1e3:>8.1f}")
    if rows:
        times = [r["seconds"] for r in rows]
        print(f"median index time {statistics.median(times):.2f} s, max {max(times):.2f} s, "
              f"total {sum(times):.1f} s over {len(rows)} repositories; "
              f"median size {statistics.median(r['index_bytes'] for r in rows) / 1e6:.1f} MB; built again with nothing "
              f"changed: median {statistics.median(r['unchanged_seconds'] for r in rows) * 1e3:.1f} ms")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
