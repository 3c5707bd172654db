"""Cold `maguyva index` as a user runs it: a fresh process each time (interpreter start, imports,
model load and query compilation included), a new index folder and an empty cache.

    python benches/cli_cold.py TREE [TREE ...] [--runs 7]

Prints the best and median wall time per tree. Another checkout is measured by putting its sources first
(`PYTHONPATH=OTHER/python`): the child processes inherit it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import runs_ms  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    for tree in args.trees:
        times = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="maguyva-cold-") as scratch:
                env = {**os.environ, "MAGUYVA_HOME": str(Path(scratch) / "home")}
                command = [sys.executable, "-m", "maguyva", "index", str(tree), "--index-dir", str(Path(scratch) / "index")]
                started = time.perf_counter()
                subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=scratch)
                times.append(time.perf_counter() - started)
        print(f"{tree}: {runs_ms(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
