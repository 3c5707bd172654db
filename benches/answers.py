"""Every answer to the benchmark's questions, written as JSON, so that two checkouts can be shown
to answer the same to the last score and explanation.

    python benches/answers.py --bench ../shared/bench --repos DIR --index-root SCRATCH --out now.json
    PYTHONPATH=BASE/python python benches/answers.py ... --out base.json   # BASE: another checkout
    cmp base.json now.json

Each repository's `benchmark_root` is indexed into SCRATCH/NAME unless an index is already there
(both checkouts then read the same index: an index format they share), and every annotated
question is asked under each ranking and preset. The output maps "repository | question |
ranking | preset" to the hits as `dataclasses.asdict` gives them (path, lines, score,
modalities, adjustments, features, snippet). A change meant to be only faster leaves the file
the same to the byte.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

RANKINGS = ("learned", "hand")
PRESETS = ("default", "quick", "thorough")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True, help="DIR/NAME holds each repository")
    parser.add_argument("--index-root", type=Path, required=True)
    parser.add_argument("--repos-subset", nargs="+", metavar="NAME")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from maguyva import Index

    answers: dict[str, list[dict[str, object]]] = {}
    for spec in json.loads((args.bench / "repos.json").read_text()):
        name = spec["name"]
        if args.repos_subset and name not in args.repos_subset:
            continue
        tree = args.repos / name / (spec.get("benchmark_root") or "")
        index_dir = args.index_root / name
        index = Index.open(tree, index_dir=index_dir) if index_dir.exists() else Index.build(tree, index_dir=index_dir)
        with index:
            for question in json.loads((args.bench / "annotations" / f"{name}.json").read_text()):
                for ranking in RANKINGS:
                    for preset in PRESETS:
                        response = index.search(question["query"], preset=preset, ranking=ranking)
                        key = f"{name} | {question['query']} | {ranking} | {preset}"
                        answers[key] = [dataclasses.asdict(hit) for hit in response.results]
        print(f"{name}: answered", file=sys.stderr)
    args.out.write_text(json.dumps(answers, sort_keys=True, default=repr))
    print(f"{len(answers)} answers in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
