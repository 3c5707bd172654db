"""How indexing, updates and queries grow with the size of one repository.

    python benches/scale.py --trees DIR [DIR ...] --work SCRATCH [--sizes 10000 30000 100000] \
        [--queries BENCH] [--json out.json]

Each `--trees` folder holds checkouts, one folder per repository. For each size N, a corpus of
at least N files is laid out under SCRATCH as one repository: whole checkouts, taken in name
order until N files are reached, hard-linked (no copy of their bytes; the one file the update
edits is copied first, so no checkout is ever changed). Each corpus is measured by a fresh
process of its own, so that its peak resident size is its own:

- cold: a new index folder and an empty embedding cache; seconds by stage, index size, and the
  process's peak resident size when the build returns (`ru_maxrss`);
- again: the same build with nothing changed;
- one edit: a function with a name found nowhere else appended to one file, then the build and
  a search for that name; "edit -> answer" is both, and the edited file must be the first hit;
- queries: the questions of `--queries` (a benchmark folder: every `annotations/*.json` query,
  at most 200, in file order) with the default preset, once the index is warmed (`Index.warm`,
  as a server does): p50 and p95 of each question's first asking, in order, then of three more
  rounds (a question asked again: its terms' counts are kept from its first asking).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def count_files(root: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def lay_out(trees: list[Path], size: int, target: Path) -> int:
    """Hard-link whole checkouts from `trees` under `target` until it holds `size` files or more;
    return how many it holds."""
    checkouts = sorted((c for t in trees for c in t.iterdir() if c.is_dir()), key=lambda c: (c.name, str(c)))
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    held = 0
    for i, checkout in enumerate(checkouts):
        if held >= size:
            break
        # The tree's folder name and its position: two checkouts of one name stay apart.
        shutil.copytree(checkout, target / f"{i:03d}-{checkout.name}", copy_function=os.link, symlinks=True)
        held += count_files(target / f"{i:03d}-{checkout.name}")
    if held < size:
        raise SystemExit(f"the trees hold {held} files, fewer than {size}")
    return held


def questions(bench: Path | None) -> list[str]:
    if bench is None:
        return ["where is the configuration parsed", "how are errors reported", "retry with backoff"]
    found: list[str] = []
    for path in sorted((bench / "annotations").glob("*.json")):
        found.extend(q["query"] for q in json.loads(path.read_text()))
    return found[:200]


def measure(root: Path, index_dir: Path, asked: list[str]) -> dict[str, object]:
    """Every figure of one corpus (run in a process of its own)."""
    from maguyva import Index
    from maguyva.index.build import build_index

    started = time.perf_counter()
    summary = build_index(root, index_dir)
    cold = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    started = time.perf_counter()
    build_index(root, index_dir)
    again = time.perf_counter() - started

    # One file edited: the first source file of the corpus, copied so the checkout is not changed.
    edited = next(p for p in sorted(root.rglob("*.c")) + sorted(root.rglob("*.py")) if p.is_file())
    text = edited.read_bytes()
    edited.unlink()
    name = "maguyva_scale_probe_" + str(os.getpid())
    suffix = f"\nint {name}(void) {{ return 7; }}\n" if edited.suffix == ".c" else f"\ndef {name}():\n    return 7\n"
    edited.write_bytes(text + suffix.encode())
    started = time.perf_counter()
    update = build_index(root, index_dir)
    rebuilt = time.perf_counter() - started
    with Index.open(root, index_dir=index_dir) as index:
        started = time.perf_counter()
        first = index.search(name, top_k=1).results
        answered = time.perf_counter() - started
        found = bool(first) and first[0].path == edited.relative_to(root).as_posix()
        index.warm()  # the tables questions derive, made as a server makes them before its first
        first_times = []
        for query in asked:
            started = time.perf_counter()
            index.search(query)
            first_times.append((time.perf_counter() - started) * 1e3)
        times = []
        for _ in range(3):
            for query in asked:
                started = time.perf_counter()
                index.search(query)
                times.append((time.perf_counter() - started) * 1e3)
    times.sort()
    first_times.sort()
    return {
        "files": summary.files,
        "chunks": summary.chunks,
        "symbols": summary.symbols,
        "cold_s": round(cold, 2),
        "stages": {k: round(v, 2) for k, v in summary.stages.items()},
        "index_mb": round(summary.index_bytes / 1e6, 1),
        "peak_rss_mb": round(peak_mb),
        "again_ms": round(again * 1e3, 1),
        "edit_build_ms": round(rebuilt * 1e3),
        "edit_stages": {k: round(v, 3) for k, v in update.stages.items()},
        "edit_answer_ms": round((rebuilt + answered) * 1e3),
        "edit_found": found,
        "query_first_p50_ms": round(statistics.median(first_times), 2) if first_times else None,
        "query_first_p95_ms": round(first_times[int(0.95 * (len(first_times) - 1))], 2) if first_times else None,
        "query_p50_ms": round(statistics.median(times), 2),
        "query_p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "questions": len(asked),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path, nargs="+", required=True)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for the corpora and indexes")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--queries", type=Path, help="a benchmark folder whose annotations give the questions")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--measure", nargs=2, metavar=("ROOT", "INDEX"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        root, index_dir = map(Path, args.measure)
        print(json.dumps(measure(root, index_dir, questions(args.queries))))
        return 0

    rows = []
    print(f"{'files':>8} {'chunks':>8} {'cold s':>7} {'parse s':>7} {'write s':>7} {'index MB':>8} {'peak RSS MB':>11} "
          f"{'again ms':>8} {'edit ms':>8} {'edit->answer ms':>15} {'first p50':>9} {'p95':>6} {'again p50':>9} {'p95':>6}")
    for size in args.sizes:
        root = args.work / f"corpus-{size}"
        lay_out(args.trees, size, root)
        with tempfile.TemporaryDirectory(dir=args.work) as scratch:
            command = [sys.executable, __file__, "--trees", *map(str, args.trees), "--work", str(args.work),
                       "--measure", str(root), str(Path(scratch) / "index")]
            if args.queries:
                command += ["--queries", str(args.queries)]
            done = subprocess.run(command, env={**os.environ, "MAGUYVA_HOME": scratch},
                                  capture_output=True, text=True)
        if done.returncode:
            print(done.stderr, file=sys.stderr)
            return done.returncode
        row = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(row)
        stages = row["stages"]
        print(f"{row['files']:>8} {row['chunks']:>8} {row['cold_s']:>7} {stages.get('parse', 0):>7} "
              f"{stages.get('write', 0):>7} {row['index_mb']:>8} {row['peak_rss_mb']:>11} {row['again_ms']:>8} "
              f"{row['edit_build_ms']:>8} {row['edit_answer_ms']:>15}{'' if row['edit_found'] else ' (missed)'} "
              f"{row['query_first_p50_ms']!s:>9} {row['query_first_p95_ms']!s:>6} "
              f"{row['query_p50_ms']:>9} {row['query_p95_ms']:>6}", flush=True)
        shutil.rmtree(root)
    if args.json:
        args.json.write_text(json.dumps({"command": sys.argv, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
