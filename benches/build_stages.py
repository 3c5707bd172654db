"""A cold build's stages, and the time spent in its parsing, its graph's resolution and its write.

    python benches/build_stages.py ROOT INDEX_DIR [--label NAME]

Builds ROOT into INDEX_DIR from nothing (`rebuild=True`) and prints the total, the build's own
stages (`BuildSummary.stages`) and the wall time inside `collect_records` (reading and parsing),
`dependency_edges` (the graph resolved) and `write_generation`. Another checkout is
measured by putting its sources first: `PYTHONPATH=OTHER/python python benches/build_stages.py ...`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed_steps  # noqa: E402

#: Steps of the build timed inside it (wall time).
STEPS = [("maguyva.index.build", name) for name in ("collect_records", "write_generation", "dependency_edges")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    spent = timed_steps(STEPS)
    from maguyva.index import build

    started = time.perf_counter()
    summary = build.build_index(args.root, args.index_dir, rebuild=True)
    total = time.perf_counter() - started
    stages = ", ".join(f"{k} {v:.2f}" for k, v in summary.stages.items())
    steps = ", ".join(f"{name} {spent.get(name, 0.0):.2f}" for _, name in STEPS)
    print(f"{args.label} total {total:.1f} s; stages: {stages}; steps: {steps}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
