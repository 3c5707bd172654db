"""Cold builds of the benchmark's repositories by several checkouts, alternated repository by repository.

    python benches/cold_builds.py --bench ../shared/bench --repos TREES \\
        --checkout base=BASE/python --checkout now=python [--rounds 5] [--fresh]

Each `--checkout NAME=DIR` (DIR holds its `maguyva` package, with the compiled core beside it)
gets a process of its own, which builds each repository's `benchmark_root` cold when asked: a
new index folder and an empty embedding cache (`MAGUYVA_HOME`). The processes take turns on each
repository, the first in turn changing from one repository and round to the next, so that a
machine that slows down for a while slows every checkout alike. Run one after the other, the
same checkout's median moved by 20% between runs here. With `--fresh`, each round has new
processes, so each repository is the first of its language that its process builds, as in
quality.py's run (the languages' queries compiled, the kept parsing workers' too); without it, the
rounds after the first measure a process that has built every repository before.

Prints, per checkout, the median over repositories of each repository's median time, and per
repository the ratio of each checkout's median to the first checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import checkouts  # noqa: E402


def serve(bench: Path, trees: Path) -> None:
    """Build each repository named on a line of stdin cold; answer with the seconds it took."""
    from maguyva import Index

    specs = {s["name"]: s for s in json.loads((bench / "repos.json").read_text())}
    scratch = Path(tempfile.mkdtemp(prefix="maguyva-cold-"))
    try:
        for line in sys.stdin:
            name = line.strip()
            tree = trees / name / (specs[name].get("benchmark_root") or "")
            home, index_dir = scratch / "home", scratch / name
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(index_dir, ignore_errors=True)
            os.environ["MAGUYVA_HOME"] = str(home)
            started = time.perf_counter()
            Index.build(tree, index_dir=index_dir).close()
            print(time.perf_counter() - started, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _start(bench: Path, trees: Path, folder: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--serve", "--bench", str(bench), "--repos", str(trees)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(folder)},
    )  # fmt: skip


def _stop(workers: dict[str, subprocess.Popen[str]]) -> None:
    for worker in workers.values():
        if worker.stdin is not None:
            worker.stdin.close()
        worker.wait()


def alternate(
    bench: Path, trees: Path, checkouts: dict[str, Path], rounds: int, fresh: bool = False
) -> dict[str, dict[str, list[float]]]:
    """Each checkout's build times per repository, over `rounds` rounds taken in turn (`fresh`:
    each round in new processes)."""
    names = [s["name"] for s in json.loads((bench / "repos.json").read_text())]
    workers = {label: _start(bench, trees, folder) for label, folder in checkouts.items()}
    times: dict[str, dict[str, list[float]]] = {label: {n: [] for n in names} for label in checkouts}
    labels = list(checkouts)
    try:
        for round_ in range(rounds):
            if fresh and round_:
                _stop(workers)
                workers = {label: _start(bench, trees, folder) for label, folder in checkouts.items()}
            for at, name in enumerate(names):
                shift = (round_ + at) % len(labels)
                for label in labels[shift:] + labels[:shift]:
                    worker = workers[label]
                    assert worker.stdin is not None and worker.stdout is not None
                    worker.stdin.write(name + "\n")
                    worker.stdin.flush()
                    answer = worker.stdout.readline()
                    if not answer:
                        raise SystemExit(f"cold_builds: the {label} checkout's process ended building {name}")
                    times[label][name].append(float(answer))
            print(f"round {round_ + 1} of {rounds} done", file=sys.stderr)
    finally:
        _stop(workers)
    return times


def report(times: dict[str, dict[str, list[float]]]) -> None:
    labels = list(times)
    medians = {label: {n: statistics.median(v) for n, v in per_repo.items()} for label, per_repo in times.items()}
    first = medians[labels[0]]
    for label in labels:
        values = medians[label]
        ratios = [values[n] / first[n] for n in values]
        print(f"{label}: median {statistics.median(values.values()) * 1e3:.1f} ms, total {sum(values.values()):.2f} s, "
              f"median ratio to {labels[0]} {statistics.median(ratios):.3f}")
    print("\n| repository | " + " | ".join(f"{label} ms" for label in labels) + " |")
    print("| --- |" + " ---: |" * len(labels))
    for name in first:
        print(f"| {name} | " + " | ".join(f"{medians[label][name] * 1e3:.0f}" for label in labels) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, required=True, help="the benchmark folder (repos.json)")
    parser.add_argument("--repos", type=Path, required=True, help="a folder with each repository at its revision")
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=DIR",
                        help="a checkout's python folder, built by a process of its own (repeatable)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fresh", action="store_true", help="each round in new processes")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.bench, args.repos)
        return 0
    named = checkouts(args.checkout, "cold_builds")
    if not named:
        raise SystemExit("cold_builds: name at least one --checkout NAME=DIR")
    report(alternate(args.bench, args.repos, named, args.rounds, args.fresh))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
