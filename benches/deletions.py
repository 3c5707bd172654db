"""Files deleted one after another from a copy of a tree, each update of its index compared with
a full build of the same tree.

    python benches/deletions.py TREE [--deletes 6] [--extensions .py .go ...] [--seed 7]

Copies TREE to a scratch folder (its files dated 10 minutes back, so that the stats an index
records are trusted), indexes it, then --deletes times removes a file chosen at random among
those with one of --extensions, updates the index, builds the same tree from scratch into
another folder, and compares the two: every table, the codes, the node values and the text
index's documents (the snapshot `tests/test_index_build.py` compares). Prints each update's
time and stops at the first difference (exit status 1).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_index_build import snapshot  # noqa: E402

from maguyva.index.build import build_index  # noqa: E402

EXTENSIONS = (".py", ".go", ".js", ".ts", ".java", ".kt", ".cs", ".swift", ".rs", ".c", ".h", ".rb", ".php")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--deletes", type=int, default=6)
    parser.add_argument("--extensions", nargs="+", default=list(EXTENSIONS))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    chosen = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["MAGUYVA_HOME"] = str(Path(scratch) / "home")
        root = Path(scratch) / "repo"
        shutil.copytree(args.tree, root, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        then = time.time() - 600
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                os.utime(path, (then, then))
        index = Path(scratch) / "index"
        build_index(root, index)
        for step in range(args.deletes):
            files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in args.extensions)
            if not files:
                break
            victim = chosen.choice(files)
            victim.unlink()
            started = time.perf_counter()
            build_index(root, index)
            took = time.perf_counter() - started
            full = Path(scratch) / f"full-{step}"
            build_index(root, full, rebuild=True)
            same = snapshot(index) == snapshot(full)
            print(f"{step}: {victim.relative_to(root)} removed: update {took * 1e3:.0f} ms, "
                  f"{'the same as' if same else 'DIFFERENT from'} a full build", flush=True)
            shutil.rmtree(full)
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
