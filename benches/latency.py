"""Query latency of maguyva's rankings, asked in turn question by question.

    python benches/latency.py --bench ../shared/bench --repos DIR [--repos-subset NAME ...]
                              [--rankings hand learned] [--rounds 3]

Builds each repository's index cold (as quality.py does), answers one question untimed (the
index's derived tables), then asks every annotated question `--rounds` times under each ranking,
the rankings in turn question by question and their order rotated, so that a machine whose speed
drifts during the run slows every ranking alike. Prints p50 and p95 of `Searcher.search` per
ranking. It uses only what every version with `ranking=` has, so another checkout is measured
by putting its sources first: `PYTHONPATH=OTHER/python python benches/latency.py ...`.

    python benches/latency.py ... --checkout base=BASE/python --checkout now=python

compares checkouts in one run: each `--checkout NAME=DIR` (DIR holds its `maguyva` package, with
a built `_core`) is served by a process of its own, and the questions go to the processes in
turn, one question at a time, under every ranking of every checkout (arms `NAME:RANKING`). Run
one after the other, the same checkout's p50 moved by 40% between runs here; asked in turn, a
drift of the machine slows every arm alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import quality  # noqa: E402  (trees, cold indexes)
from timing import checkouts  # noqa: E402

TOP_K = 10
T = TypeVar("T")

#: An arm: how to set a searcher up before a question (None: nothing), and the ranking it asks with.
Arm = tuple[Callable[[Any], None] | None, str]


def turns(questions: int, arms: Sequence[T], rounds: int) -> Iterator[tuple[int, T]]:
    """(question, arm) in the order they are asked: every round, each question of every arm in
    turn, the arms' order rotated from one question and round to the next."""
    for round_ in range(rounds):
        for i in range(questions):
            for j in range(len(arms)):
                yield i, arms[(i + j + round_) % len(arms)]


def alternate(bench: Path, trees: Path, subset: list[str] | None, arms: Mapping[str, Arm], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per question under each arm, asked in turn."""
    selected = json.loads((bench / "repos.json").read_text())
    if subset:
        selected = [r for r in selected if r["name"] in set(subset)]
    repos = quality.load_repos(bench, trees, selected)
    names = list(arms)
    timings: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="maguyva-latency-") as scratch:
        for repo in repos:
            quality.build_cold([repo], Path(scratch))
            searcher = quality.searcher_of(repo.index)
            searcher.search(repo.queries[0]["query"], top_k=TOP_K)
            for i, name in turns(len(repo.queries), names, rounds):
                setup, ranking = arms[name]
                if setup is not None:
                    setup(searcher)
                started = time.perf_counter()
                searcher.search(repo.queries[i]["query"], top_k=TOP_K, ranking=ranking)
                timings[name].append((time.perf_counter() - started) * 1e3)
            repo.index.close()
    return timings


class Worker:
    """A process serving one checkout's searches: it builds a repository's index, then answers
    questions by their position, each timed inside it."""

    def __init__(self, python_dir: Path, bench: Path, trees: Path):
        env = dict(os.environ, PYTHONPATH=str(python_dir))
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--bench", str(bench), "--repos", str(trees), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
        )

    def ask(self, **message: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"latency: a worker stopped (exit {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def serve(bench: Path, trees: Path) -> int:
    """The worker's side of `Worker`: one JSON message a line in, one answer a line out."""
    answers = sys.stdout
    sys.stdout = sys.stderr  # the harness's progress lines stay off the answers
    selected = {r["name"]: r for r in json.loads((bench / "repos.json").read_text())}
    repo = None
    with tempfile.TemporaryDirectory(prefix="maguyva-latency-") as scratch:
        for line in sys.stdin:
            message = json.loads(line)
            if "build" in message:
                if repo is not None:
                    repo.index.close()
                (repo,) = quality.load_repos(bench, trees, [selected[message["build"]]])
                quality.build_cold([repo], Path(scratch))
                searcher = quality.searcher_of(repo.index)
                searcher.search(repo.queries[0]["query"], top_k=TOP_K)
                answer: Any = len(repo.queries)
            else:
                assert repo is not None
                started = time.perf_counter()
                searcher.search(repo.queries[message["ask"]]["query"], top_k=TOP_K, ranking=message["ranking"])
                answer = (time.perf_counter() - started) * 1e3
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
        if repo is not None:
            repo.index.close()
    return 0


def alternate_checkouts(
    bench: Path, trees: Path, subset: list[str] | None, checkouts: Mapping[str, Path], rankings: list[str], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per question under each arm `CHECKOUT:RANKING`, the arms asked in turn."""
    selected = json.loads((bench / "repos.json").read_text())
    if subset:
        selected = [r for r in selected if r["name"] in set(subset)]
    workers = {name: Worker(path, bench, trees) for name, path in checkouts.items()}
    arms = [(name, ranking) for name in checkouts for ranking in rankings]
    timings: dict[str, list[float]] = {f"{name}:{ranking}": [] for name, ranking in arms}
    try:
        for spec in selected:
            if not (trees / spec["name"]).is_dir():
                print(f"{spec['name']}: missing under {trees}; skipped", file=sys.stderr)
                continue
            counts = {worker.ask(build=spec["name"]) for worker in workers.values()}
            (count,) = counts
            for i, (name, ranking) in turns(count, arms, rounds):
                timings[f"{name}:{ranking}"].append(workers[name].ask(ask=i, ranking=ranking))
    finally:
        for worker in workers.values():
            worker.close()
    return timings


def report(timings: Mapping[str, list[float]]) -> None:
    """p50 and p95 per arm, and the median over questions of each arm's time over the first
    arm's for the same question in the same round (the lists are aligned): the paired ratio
    moves less between runs than either p50."""
    first = next(iter(timings.values()), [])
    for name, values in timings.items():
        ordered = sorted(values)
        ratio = statistics.median(v / f for v, f in zip(values, first)) if values else float("nan")
        print(f"{name}: query p50 {statistics.median(ordered):.2f} ms, p95 {ordered[int(0.95 * len(ordered))]:.2f} ms "
              f"({len(ordered)} questions), x{ratio:.3f} of the first arm's time")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--repos-subset", nargs="+", metavar="NAME")
    parser.add_argument("--rankings", nargs="+", default=["hand", "learned"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=DIR",
                        help="a checkout's python folder, served by a process of its own (repeatable)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args.bench, args.repos)
    if args.checkout:
        named = checkouts(args.checkout, "latency")
        report(alternate_checkouts(args.bench, args.repos, args.repos_subset, named, args.rankings, args.rounds))
        return 0
    import maguyva

    print(f"maguyva from {Path(maguyva.__file__).parent}")
    report(alternate(args.bench, args.repos, args.repos_subset, {r: (None, r) for r in args.rankings}, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
