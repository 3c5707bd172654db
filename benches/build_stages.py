"""A cold build's stages, and the time spent in the graph's resolution inside its write.

    python benches/build_stages.py ROOT INDEX_DIR [--label NAME]

Builds ROOT into INDEX_DIR from nothing (`rebuild=True`) and prints the total, the build's own
stages (`BuildSummary.stages`) and the wall time inside `collect_records` (reading and parsing),
`write_generation` and, inside it, `dependency_edges` (the graph resolved). Another checkout is
measured by putting its sources first: `PYTHONPATH=OTHER/python python benches/build_stages.py ...`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

STEPS = ("collect_records", "write_generation", "dependency_edges")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    from maguyva.index import build

    spent: dict[str, float] = {}
    for name in STEPS:
        original = getattr(build, name)

        def timed(*a: Any, __original: Any = original, __name: str = name, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return __original(*a, **k)
            finally:
                spent[__name] = spent.get(__name, 0.0) + time.perf_counter() - started

        setattr(build, name, timed)
    started = time.perf_counter()
    summary = build.build_index(args.root, args.index_dir, rebuild=True)
    total = time.perf_counter() - started
    stages = ", ".join(f"{k} {v:.2f}" for k, v in summary.stages.items())
    steps = ", ".join(f"{k} {spent.get(k, 0.0):.2f}" for k in STEPS)
    print(f"{args.label} total {total:.1f} s; stages: {stages}; steps: {steps}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
