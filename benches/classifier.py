"""Speed and accuracy of the intent classifier on the labelled query set.

Times `maguyva.query.classify.classify` on every query of tests/data/intent_queries.jsonl
(median and 99th percentile per call, in microseconds, over many repetitions), then prints the
accuracy per intent, the confusion matrix (rows: the label, columns: the classifier's answer) and
how often each rule is right when it decides (a rule at or above the direct-path confidence sends
the query to one modality without fusion, so its precision matters most).

    python benches/classifier.py                 # 200 rounds of 50 calls per query
    python benches/classifier.py --rounds 20     # quicker
    python benches/classifier.py --misses        # also list every misclassified query
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from maguyva.query.classify import classify
from maguyva.query.intents import DIRECT_CONFIDENCE, INTENTS, RULES

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "intent_queries.jsonl"
SHORT = {
    "find_definition": "def",
    "find_references": "refs",
    "understand_code": "understand",
    "find_similar": "similar",
    "impact_analysis": "impact",
    "exact_match": "exact",
}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_calls(queries: list[str], rounds: int, calls: int) -> tuple[list[float], dict[str, float]]:
    """Per-call times in microseconds: one sample per (round, query), each the mean of `calls`
    back-to-back calls (a single call is too short for the clock). Also each query's median."""
    for query in queries:  # warm up
        classify(query)
    samples: list[float] = []
    per_query: dict[str, list[float]] = {q: [] for q in queries}
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for query in queries:
            started = clock()
            for _ in range(calls):
                classify(query)
            sample = (clock() - started) / calls / 1e3
            samples.append(sample)
            per_query[query].append(sample)
    return samples, {q: statistics.median(s) for q, s in per_query.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=LABELLED, help="labelled queries (JSON lines)")
    parser.add_argument("--rounds", type=int, default=200, help="passes over the set (default 200)")
    parser.add_argument("--calls", type=int, default=50, help="calls per timed sample (default 50)")
    parser.add_argument("--misses", action="store_true", help="list the misclassified queries")
    args = parser.parse_args()

    rows = load(args.data)
    queries = [row["query"] for row in rows]
    shown = args.data.relative_to(ROOT) if args.data.resolve().is_relative_to(ROOT) else args.data
    print(f"{len(rows)} labelled queries from {shown}")
    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"{args.rounds} rounds x {args.calls} calls per query")

    samples, per_query = time_calls(queries, args.rounds, args.calls)
    slowest = max(per_query, key=per_query.__getitem__)
    print("\nTime per classify() call (microseconds)")
    print(f"  median {statistics.median(samples):.1f}   mean {statistics.fmean(samples):.1f}   "
          f"p99 {percentile(samples, 0.99):.1f}   max {max(samples):.1f}")
    print(f"  slowest query (median {per_query[slowest]:.1f} us, {len(slowest)} chars): {slowest[:60]!r}")

    confusion: Counter[tuple[str, str]] = Counter()
    subjects: Counter[str] = Counter()
    fired: Counter[str] = Counter()
    fired_right: Counter[str] = Counter()
    misses = []
    for row in rows:
        got = classify(row["query"])
        confusion[row["intent"], got.intent] += 1
        fired[got.rule] += 1
        fired_right[got.rule] += got.intent == row["intent"]
        if got.intent == row["intent"] and row.get("subject") is not None:
            subjects["labelled"] += 1
            subjects["same"] += got.subject == row["subject"]
        elif got.intent != row["intent"]:
            misses.append((row["query"], row["intent"], got.intent, got.rule))

    total = Counter(row["intent"] for row in rows)
    right = sum(confusion[i, i] for i in INTENTS)
    print("\nAccuracy per intent")
    print(f"  {'intent':<18}{'right / total':>14}{'accuracy':>10}")
    for intent in INTENTS:
        ok = confusion[intent, intent]
        print(f"  {intent:<18}{ok:>7} / {total[intent]:<4}{ok / total[intent]:>10.1%}")
    print(f"  {'overall':<18}{right:>7} / {len(rows):<4}{right / len(rows):>10.1%}")
    print(f"  subject agreement where the intent is right: {subjects['same']} / {subjects['labelled']}")

    print("\nConfusion matrix (rows: label, columns: classifier)")
    width = max(len(s) for s in SHORT.values()) + 2
    print(" " * 14 + "".join(f"{SHORT[i]:>{width}}" for i in INTENTS))
    for want in INTENTS:
        print(f"  {SHORT[want]:<12}" + "".join(f"{confusion[want, got]:>{width}}" for got in INTENTS))

    # Is each rule's confidence earned? Queries at or above the direct threshold skip fusion, so
    # their precision matters most.
    print("\nPrecision per rule (queries the rule decided, and how many of them it got right)")
    print(f"  {'rule':<24}{'confidence':>11}{'right / decided':>18}")
    for rule in RULES:
        if fired[rule.name]:
            ok, decided = fired_right[rule.name], fired[rule.name]
            print(f"  {rule.name:<24}{rule.confidence:>11.2f}{ok:>9} / {decided:<6}")
    direct = [r.name for r in RULES if r.confidence >= DIRECT_CONFIDENCE]
    ok, decided = sum(fired_right[r] for r in direct), sum(fired[r] for r in direct)
    print(f"  all rules with confidence >= {DIRECT_CONFIDENCE}: {ok} / {decided} right")

    if args.misses:
        print("\nMisclassified")
        for query, want, got, rule in misses:
            print(f"  {query[:70]!r}: {want} -> {got} ({rule})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
