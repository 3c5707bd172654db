"""The graph's edges of each repository, named by their ends, so that two checkouts can be shown
to link the same code differently: which edges a change of resolution adds and which it drops.

    python benches/edge_changes.py edges --repos DIR --out now.json [--scratch S] [NAME ...]
    PYTHONPATH=BASE/python python benches/edge_changes.py edges --repos DIR --out base.json   # BASE: another checkout
    python benches/edge_changes.py compare base.json now.json [--show 10]

`edges` builds each repository (DIR/NAME, every folder of DIR unless NAMEs are given) cold into
a scratch folder with whichever maguyva is imported, and writes each edge as (source, target,
kind, resolution), a node named `path` (a file) or `path:qualified name@first line` (a
definition). `compare` counts, per repository, the edges only one side has by kind and
resolution, and shows some of each.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path


def labelled_edges(index_dir: Path) -> list[tuple[str, str, str, str]]:
    """The edges of the index's current generation, each end named (see the module's doc)."""
    from maguyva.index import store
    from maguyva.index.graph import EDGE_KINDS, RESOLUTIONS
    from maguyva.index.segments import SYMBOLS, Segments

    generation = store.current_generation(index_dir)
    with contextlib.closing(sqlite3.connect(f"file:{generation / store.META}?mode=ro", uri=True)) as db:
        paths = [path for (path,) in db.execute("SELECT path FROM files ORDER BY id")]
    segments = Segments(generation, len(paths))
    try:
        symbols = segments.rows(SYMBOLS, "file_id, qualified_name, start_line")
    finally:
        segments.close()
    matrix = store.load_edges(generation / store.EDGES)
    files = len(paths)

    def name(node: int) -> str:
        if node < files:
            return paths[node]
        file_id, qualified, line = symbols[node - files]
        return f"{paths[file_id]}:{qualified}@{line}"

    return sorted({(name(src), name(dst), EDGE_KINDS[kind], RESOLUTIONS[how]) for src, dst, kind, _, how in matrix.tolist()})


def edges_command(args: argparse.Namespace) -> int:
    from maguyva.index.build import build_index

    names = args.names or sorted(p.name for p in args.repos.iterdir() if p.is_dir())
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="edge-changes-"))
    found: dict[str, list[tuple[str, str, str, str]]] = {}
    for name in names:
        index_dir = scratch / name
        shutil.rmtree(index_dir, ignore_errors=True)
        build_index(args.repos / name, index_dir)
        found[name] = labelled_edges(index_dir)
        print(f"{name}: {len(found[name])} edges", flush=True)
    args.out.write_text(json.dumps(found))
    return 0


def compare_command(args: argparse.Namespace) -> int:
    before, after = json.loads(args.before.read_text()), json.loads(args.after.read_text())
    pick = random.Random(0)
    for name in sorted(before.keys() & after.keys()):
        was, now = {tuple(e) for e in before[name]}, {tuple(e) for e in after[name]}
        added, dropped = sorted(now - was), sorted(was - now)
        if not added and not dropped:
            continue
        print(f"{name}: +{len(added)} -{len(dropped)} of {len(was)}")
        for sign, edges in (("+", added), ("-", dropped)):
            kinds = Counter(f"{kind} {how}" for _, _, kind, how in edges)
            if kinds:
                print(f"  {sign} " + ", ".join(f"{k}: {n}" for k, n in kinds.most_common()))
            for src, dst, kind, how in pick.sample(edges, min(args.show, len(edges))):
                print(f"    {sign} {src} -> {dst} ({kind}, {how})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    edges = commands.add_parser("edges", help="build each repository and write its labelled edges")
    edges.add_argument("--repos", type=Path, required=True, help="DIR/NAME holds each repository")
    edges.add_argument("--out", type=Path, required=True)
    edges.add_argument("--scratch", type=Path, help="where the indexes go (a temporary folder by default)")
    edges.add_argument("names", nargs="*", metavar="NAME")
    compare = commands.add_parser("compare", help="the edges one file has and the other has not")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    compare.add_argument("--show", type=int, default=5, help="edges shown of each side, at random (default 5)")
    args = parser.parse_args()
    return edges_command(args) if args.command == "edges" else compare_command(args)


if __name__ == "__main__":
    raise SystemExit(main())
