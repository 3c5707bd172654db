"""Latency of `callers` and `impact`, the graph walks of the MCP tools and `Corpus`.

    python benches/walks.py --repos TREES [--bench ../shared/bench] [--sets benches/intent_queries]
                            [--index-root /tmp/maguyva-bench-indexes] [--rounds 5] [--together]

The subjects are those of the reference and impact sets (`intent_sets.py`). Each repository of
the sets is opened as a corpus of its own (`Corpus.open([root])`, its index built or brought up
to date first) and asked `callers(subject, depth=1)`, `callers(subject, depth=3)` and
`impact(subject, depth=3)` for every subject, once untimed, then `--rounds` times. With
`--together`, every repository of repos.json found under --repos is opened as one corpus and
the same questions are asked of it, so each walk also looks for callers in every other
repository (`serve/across.py`). Prints p50 and p95 per walk in milliseconds; the freshness check
that precedes each answer is part of the time, as it is for an agent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import intents  # noqa: E402
import queries  # noqa: E402

WALKS = (("callers, depth 1", "callers", 1), ("callers, depth 3", "callers", 3), ("impact, depth 3", "impact", 3))


def timed(corpus: object, subjects: list[str], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label, _, _ in WALKS}
    for label, method, depth in WALKS:
        walk = getattr(corpus, method)
        for subject in subjects:
            walk(subject, depth=depth)
        for _ in range(rounds):
            for subject in subjects:
                started = time.perf_counter()
                walk(subject, depth=depth)
                times[label].append((time.perf_counter() - started) * 1e3)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    queries.add_dataset_arguments(parser, f"smoke test: the {len(queries.QUICK_REPOS)} repositories of queries.py --quick")
    parser.add_argument("--sets", type=Path, default=HERE / "intent_queries")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--together", action="store_true", help="also every repository as one corpus")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "walks.json")
    args = parser.parse_args()
    args.index_root.mkdir(parents=True, exist_ok=True)
    os.environ["MAGUYVA_HOME"] = str(args.index_root / "_home")
    from maguyva.serve.corpus import Corpus

    sets = intents.load_sets(args.sets, ["find_references", "impact_analysis"])
    subjects: dict[str, list[str]] = {}
    for q in sets:
        subjects.setdefault(q["repo"], [])
        if q["subject"] not in subjects[q["repo"]]:
            subjects[q["repo"]].append(q["subject"])
    repos = [r for r in queries.selected_repos(parser, args) if (args.repos / r["name"]).is_dir()]
    roots = {r["name"]: args.repos / r["name"] / (r.get("benchmark_root") or "").strip("/") for r in repos}
    report: dict[str, dict[str, dict[str, float]]] = {}
    every: dict[str, list[float]] = {label: [] for label, _, _ in WALKS}
    for name in [n for n in roots if n in subjects]:
        with Corpus.open([roots[name]]) as corpus:
            times = timed(corpus, subjects[name], args.rounds)
        report[name] = {label: _summary(values) for label, values in times.items()}
        for label, values in times.items():
            every[label].extend(values)
    report["each repository alone"] = {label: _summary(values) for label, values in every.items()}
    if args.together:
        with Corpus.open(list(roots.values())) as corpus:
            asked = [s for name in subjects if name in roots for s in subjects[name]]
            report[f"{len(roots)} repositories as one corpus"] = {
                label: _summary(values) for label, values in timed(corpus, asked, args.rounds).items()
            }
    print("\n| corpus | " + " | ".join(f"{label} p50 / p95 ms" for label, _, _ in WALKS) + " |")
    print("| --- |" + " ---: |" * len(WALKS))
    for name, entry in report.items():
        print(f"| {name} | " + " | ".join(f"{entry[label]['p50']:.2f} / {entry[label]['p95']:.2f}" for label, _, _ in WALKS) + " |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    return 0


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": statistics.median(ordered), "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
            "n": len(ordered)}


if __name__ == "__main__":
    raise SystemExit(main())
