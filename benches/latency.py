"""Query latency of maguyva's rankings, asked in turn question by question.

    python benches/latency.py --bench ../shared/bench --repos DIR [--repos-subset NAME ...]
                              [--rankings hand learned] [--rounds 3]

Builds each repository's index cold (as quality.py does), answers one question untimed (the
index's derived tables), then asks every annotated question `--rounds` times under each ranking,
the rankings in turn question by question and their order rotated, so that a machine whose speed
drifts during the run slows every ranking alike. Prints p50 and p95 of `Searcher.search` per
ranking. It uses only what every version with `ranking=` has, so another checkout is measured
by putting its sources first: `PYTHONPATH=OTHER/python python benches/latency.py ...`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import quality  # noqa: E402  (trees, cold indexes)

TOP_K = 10

#: An arm: how to set a searcher up before a question (None: nothing), and the ranking it asks with.
Arm = tuple[Callable[[Any], None] | None, str]


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
            for round_ in range(rounds):
                for i, q in enumerate(repo.queries):
                    for j in range(len(names)):
                        name = names[(i + j + round_) % len(names)]
                        setup, ranking = arms[name]
                        if setup is not None:
                            setup(searcher)
                        started = time.perf_counter()
                        searcher.search(q["query"], top_k=TOP_K, ranking=ranking)
                        timings[name].append((time.perf_counter() - started) * 1e3)
            repo.index.close()
    return timings


def report(timings: Mapping[str, list[float]]) -> None:
    for name, values in timings.items():
        ordered = sorted(values)
        print(f"{name}: query p50 {statistics.median(ordered):.2f} ms, p95 {ordered[int(0.95 * len(ordered))]:.2f} ms "
              f"({len(ordered)} questions)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--repos-subset", nargs="+", metavar="NAME")
    parser.add_argument("--rankings", nargs="+", default=["hand", "learned"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    import maguyva

    print(f"maguyva from {Path(maguyva.__file__).parent}")
    report(alternate(args.bench, args.repos, args.repos_subset, {r: (None, r) for r in args.rankings}, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
