"""Retrieval quality on the intent query sets (definitions, references, impact, exact strings).

    python benches/intents.py [--sets benches/intent_queries] [--repos /work/benchdata/repos]
                              [--bench ../shared/bench] [--index-root /tmp/maguyva-bench-indexes]
                              [--presets quick default thorough] [--no-peers] [--misses N]
                              [--repos-subset NAME ...] [--quick] [--json benches/results/intents.json]

    python benches/intents.py            # every set, three presets and the peers (~2 minutes)
    python benches/intents.py --quick    # smoke test: the repositories of queries.py --quick, default preset

The sets are written by benches/intent_sets.py (see its docstring for how the ground truth is
made). For every repository they cover, maguyva's index of its benchmark_root is built or brought
up to date in --index-root/<name> exactly as benches/queries.py does, then every query is answered
with top_k=10 by each preset and by the peers of benches/peers.py:

- ripgrep, query words: peers.py's method (words minus stopwords, one `rg -F -i -c` per word,
  whole files ranked by total count).
- ripgrep, literal: the quoted part of the query when it has one (what a person greps for an
  exact string), else the whole query, as one fixed string; whole files ranked by count.
- bm25s over 50-line windows of every text file (peers.py's Bm25Windows).

Scoring (a target is a span: the definition for find_definition, a calling function or
statement for find_references and impact_analysis, a line for exact_match):
- A result hits a target when its path (prefixed with benchmark_root) matches and its lines
  overlap the target's; a result hitting several targets counts once (queries.py's found_ranks).
- Only targets that some chunk of maguyva's index covers are scored (the benchmark's coverage
  rule), for every method alike; a query left with none is not scored (reported as "uncovered").
- NDCG@10: queries.py's ndcg with the ideal over min(10, covered targets).
- recall@10: targets found in the top 10 (each hitting result counted once) over
  min(10, covered targets), so a query with more than 10 targets can still reach 1.
- Per intent: the mean over repositories of the per-repository mean (as the benchmark averages);
  per language: the same over that language's repositories. Zero-result rate: the share of the
  intent's queries answered with nothing. maguyva rows also give the share of queries the
  classifier put in the set's intent, and query latency p50.
- "ceiling, one result per file" is not a method: it is the best score of any ranking that holds
  at most one result per file, as maguyva's answers do (SPEC §4). Several callers of a function,
  or several lines holding a string, often share a file, so this caps recall and NDCG.
- Goals, printed as ok/MISS for the default and thorough presets: NDCG@10 >= 0.97 for
  definitions; NDCG >= 0.92 and recall >= 0.97 for references; >= 0.80 and >= 0.90 for impact;
  >= 0.95 and >= 0.99 for exact strings; a zero-result rate under 2%; NDCG above every peer's.

Prints the tables and writes everything, per query included, as JSON to --json. --misses N lists,
for the default and thorough presets, the N worst queries of each intent with what came back.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402  (ripgrep and bm25s baselines)
import queries  # noqa: E402  (the metric, coverage and the dataset options)
from intent_sets import INTENTS, find_rg  # noqa: E402
from queries import Coverage, _fmt, _mean, _pct, _table, found_ranks, ndcg  # noqa: E402

K = 10
PEERS = ("ripgrep query words", "ripgrep literal", "bm25s 50-line windows")
#: Not a method: the best any engine can score when it returns at most one result per file, as
#: maguyva does (SPEC §4), since several targets of one query often lie in one file.
CEILING = "ceiling, one result per file"
#: The goals for these sets: (NDCG@10, recall@10) at least, zero-result rate under MAX_ZERO_RATE,
#: and NDCG above every peer's.
GOALS: dict[str, tuple[float, float | None]] = {
    "find_definition": (0.97, None), "find_references": (0.92, 0.97),
    "impact_analysis": (0.80, 0.90), "exact_match": (0.95, 0.99),
}
MAX_ZERO_RATE = 0.02
SHORT = {"find_definition": "definitions", "find_references": "references",
         "impact_analysis": "impact", "exact_match": "exact strings"}
_QUOTED = re.compile(r'"([^"]+)"')

Result = tuple[str, int, int]


# ---------------------------------------------------------------------------------------------
# The metric


def recall(results: list[Result], targets: list[dict], k: int = K) -> float:
    """Targets found in the top k (a result hitting several counts once) over min(k, targets)."""
    if not targets:
        return 0.0
    return sum(1 for rank in found_ranks(results, targets) if rank <= k) / min(k, len(targets))


def _self_check() -> None:
    span = lambda path, a, b: {"path": path, "start_line": a, "end_line": b}  # noqa: E731
    two = [span("a.py", 10, 20), span("b.py", 1, 5)]
    assert recall([("a.py", 15, 30)], two) == 0.5
    assert recall([("x.py", 1, 100), ("b.py", 5, 9), ("a.py", 1, 10)], two) == 1.0
    assert recall([("a.py", 21, 30)], two) == 0.0
    # one result covering two targets counts once
    assert recall([("a.py", 1, 100)], [span("a.py", 1, 2), span("a.py", 50, 60)]) == 0.5
    # more targets than k: the denominator is k
    many = [span("a.py", i, i) for i in range(1, 13)]
    assert recall([("a.py", i, i) for i in range(1, 11)], many) == 1.0
    assert recall([("a.py", 1, 1)] + [("x", 1, 1)] * 9 + [("a.py", 2, 2)], many) == 0.1
    assert one_per_file_ceiling(two) == (1.0, 1.0)
    same_file = [span("a.py", 1, 2), span("a.py", 50, 60)]
    assert one_per_file_ceiling(same_file) == (1 / (1 + 1 / math.log2(3)), 0.5)


def one_per_file_ceiling(targets: list[dict], k: int = K) -> tuple[float, float]:
    """(NDCG@k, recall@k) of the best ranking that holds at most one result per file."""
    if not targets:
        return 0.0, 0.0
    files = min(k, len({t["path"] for t in targets}))
    wanted = min(k, len(targets))
    dcg = lambda n: sum(1.0 / math.log2(i + 2) for i in range(n))  # noqa: E731
    return dcg(files) / dcg(wanted), files / wanted


def rg_literal(query: str) -> str:
    """What a person would grep for: the quoted part of the query, else all of it."""
    quoted = _QUOTED.search(query)
    return quoted.group(1) if quoted else query


def load_sets(folder: Path, intents: list[str]) -> list[dict]:
    rows = []
    for intent in intents:
        path = folder / f"{intent}.jsonl"
        if not path.is_file():
            raise SystemExit(f"missing {path}: run benches/intent_sets.py first")
        rows.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return rows


def score_row(method: str, query: dict, results: list[Result], elapsed_ms: float, **extra) -> dict:
    targets = query["_covered"]
    return {
        "method": method, "repo": query["repo"], "language": query["language"], "intent": query["intent"],
        "query": query["query"], "n_results": len(results), "targets": len(query["targets"]),
        "covered": len(targets), "found_ranks": found_ranks(results, targets),
        "ndcg@10": ndcg(results, targets, len(targets), K), "recall@10": recall(results, targets),
        "elapsed_ms": elapsed_ms, "results": [list(r) for r in results[:K]], **extra,
    }


# ---------------------------------------------------------------------------------------------
# Aggregation


def summarize(rows: list[dict]) -> dict:
    """Per-repository means, then their mean; the zero-result rate over queries."""
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    per_repo = {name: {"language": rs[0]["language"], "queries": len(rs),
                       "ndcg@10": _mean(r["ndcg@10"] for r in rs), "recall@10": _mean(r["recall@10"] for r in rs)}
                for name, rs in sorted(by_repo.items())}
    out = {"queries": len(rows), "repos": len(per_repo),
           "ndcg@10": _mean(e["ndcg@10"] for e in per_repo.values()),
           "recall@10": _mean(e["recall@10"] for e in per_repo.values()),
           "zero_result_rate": _mean(r["n_results"] == 0 for r in rows),
           "query_p50_ms": _pct([r["elapsed_ms"] for r in rows], 50), "per_repo": per_repo, "per_language": {}}
    if rows and "intent_ok" in rows[0]:
        out["intent_accuracy"] = _mean(r["intent_ok"] for r in rows)
    for language in sorted({e["language"] for e in per_repo.values()}):
        entries = [e for e in per_repo.values() if e["language"] == language]
        out["per_language"][language] = {"repos": len(entries), "queries": sum(e["queries"] for e in entries),
                                         "ndcg@10": _mean(e["ndcg@10"] for e in entries),
                                         "recall@10": _mean(e["recall@10"] for e in entries)}
    return out


# ---------------------------------------------------------------------------------------------
# The run


def open_repositories(args: argparse.Namespace, parser: argparse.ArgumentParser, sets: list[dict]) -> list[dict]:
    """The index and coverage of every repository the sets use, built or updated as queries.py does."""
    names = {q["repo"] for q in sets}
    repos = [r for r in queries.selected_repos(parser, args) if r["name"] in names]
    opened = []
    print(f"{'repository':<10} {'language':<11} {'queries':>7} {'build s':>8}")
    for repo in repos:
        built = queries.build_bench_index(args, repo)
        if built is None:
            continue
        index, broot, seconds = built
        root = args.repos / repo["name"] / broot
        coverage = Coverage(index.reader, broot)
        mine = [q for q in sets if q["repo"] == repo["name"]]
        for q in mine:
            q["_covered"] = [t for t in q["targets"] if coverage.covered(t)]
        opened.append({"repo": repo, "broot": broot, "root": root, "index": index, "queries": mine})
        print(f"{repo['name']:<10} {repo['language']:<11} {len(mine):>7} {seconds:>8.2f}")
    return opened


def run_maguyva(item: dict, presets: list[str]) -> list[dict]:
    index, broot = item["index"], item["broot"]
    rows = []
    for preset in presets:
        index.search(item["queries"][0]["query"], top_k=K, preset=preset)  # warm-up, untimed
        for q in item["queries"]:
            if not q["_covered"]:
                continue
            response = index.search(q["query"], top_k=K, preset=preset)
            results = [((f"{broot}/{h.path}" if broot else h.path), h.start_line, h.end_line)
                       for h in response.results]
            rows.append(score_row(f"maguyva {preset}", q, results, response.elapsed_ms,
                                  intent_ok=response.intent == q["intent"], classified=response.intent,
                                  route=queries._route(response)))
    return rows


def run_peers(item: dict, rg: str, stopwords: frozenset[str]) -> list[dict]:
    root, broot = item["root"], item["broot"]
    lines = peers.LineCounts(root)
    bm = peers.Bm25Windows(root)
    peers.rg_search(rg, root, [item["queries"][0]["query"]], lines)  # warm the page cache, untimed
    rows = []
    for q in item["queries"]:
        if not q["_covered"]:
            continue
        answers = {
            PEERS[0]: peers.rg_search(rg, root, peers.rg_words(q["query"], stopwords), lines),
            PEERS[1]: peers.rg_search(rg, root, [rg_literal(q["query"])], lines),
            PEERS[2]: bm.search(q["query"]),
        }
        for method, (results, elapsed) in answers.items():
            full = [((f"{broot}/{p}" if broot else p), s, e) for p, s, e in results]
            rows.append(score_row(method, q, full, elapsed))
    return rows


def ceiling_rows(items: list[dict]) -> list[dict]:
    """The one-result-per-file ceiling of every scored query, as rows of the pseudo-method CEILING."""
    rows = []
    for item in items:
        for q in item["queries"]:
            if q["_covered"]:
                best_ndcg, best_recall = one_per_file_ceiling(q["_covered"])
                row = score_row(CEILING, q, [], 0.0)
                row.update({"n_results": K, "ndcg@10": best_ndcg, "recall@10": best_recall})
                rows.append(row)
    return rows


def goal_lines(report: dict, method: str, peer_methods: list[str]) -> list[str]:
    """One line per intent: the method's figures against the goals, "ok" or "MISS" each."""
    lines = []
    for intent, summary in report["methods"][method].items():
        if summary["ndcg@10"] is None:  # a set without questions of this intent
            continue
        min_ndcg, min_recall = GOALS[intent]
        checks = [f"NDCG {_fmt(summary['ndcg@10'])} >= {min_ndcg} "
                  f"{'ok' if summary['ndcg@10'] >= min_ndcg else 'MISS'}"]
        if min_recall is not None:
            checks.append(f"recall {_fmt(summary['recall@10'])} >= {min_recall} "
                          f"{'ok' if summary['recall@10'] >= min_recall else 'MISS'}")
        zero = summary["zero_result_rate"]
        checks.append(f"zero {_fmt(zero)} < {MAX_ZERO_RATE} {'ok' if zero < MAX_ZERO_RATE else 'MISS'}")
        if peer_methods:
            best = max(peer_methods, key=lambda m: report["methods"][m][intent]["ndcg@10"])
            best_ndcg = report["methods"][best][intent]["ndcg@10"]
            checks.append(f"ahead of {best} ({_fmt(best_ndcg)}) {'ok' if summary['ndcg@10'] > best_ndcg else 'MISS'}")
        lines.append(f"  {SHORT[intent]:<14} " + "; ".join(checks))
    return lines


def print_misses(rows: list[dict], methods: list[str], count: int) -> None:
    for method in methods:
        for intent in INTENTS:
            mine = sorted((r for r in rows if r["method"] == method and r["intent"] == intent),
                          key=lambda r: (r["ndcg@10"], r["recall@10"], r["repo"], r["query"]))
            worst = [r for r in mine if r["ndcg@10"] < 1.0][:count]
            if not worst:
                continue
            print(f"Worst {intent} queries, {method}")
            for r in worst:
                top = ", ".join(f"{p}:{s}-{e}" for p, s, e in r["results"]) or "no results"
                print(f"  {r['repo']:<8} {r['ndcg@10']:.2f}/{r['recall@10']:.2f} {r['query']!r} "
                      f"[{r.get('classified', '')} {r.get('route', '')}] targets {r['covered']}, "
                      f"found at {r['found_ranks'][:5]}; top: {top}")
            print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    queries.add_dataset_arguments(
        parser, f"smoke test: {len(queries.QUICK_REPOS)} repositories, default preset, no peers")
    parser.add_argument("--sets", type=Path, default=HERE / "intent_queries", help="folder of <intent>.jsonl")
    parser.add_argument("--intents", nargs="+", default=list(INTENTS), choices=INTENTS)
    parser.add_argument("--presets", nargs="+", default=["quick", "default", "thorough"])
    parser.add_argument("--no-peers", action="store_true", help="maguyva only")
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="list the N worst queries per intent")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "intents.json")
    args = parser.parse_args()

    queries._self_check()
    _self_check()
    print("metric self-check: ok")
    rg = find_rg()
    if rg is None:
        parser.error("rg not found (pip install ripgrep)")
    args.index_root.mkdir(parents=True, exist_ok=True)
    os.environ["MAGUYVA_HOME"] = str(args.index_root / "_home")
    from maguyva.lexicon import STOPWORDS  # after MAGUYVA_HOME is set

    presets = ["default"] if args.quick else args.presets
    with_peers = not (args.no_peers or args.quick)
    sets = load_sets(args.sets, args.intents)
    opened = open_repositories(args, parser, sets)
    if not opened:
        print("no repository found under --repos", file=sys.stderr)
        return 1

    rows: list[dict] = []
    for item in opened:
        rows.extend(run_maguyva(item, presets))
        if with_peers:
            rows.extend(run_peers(item, rg, STOPWORDS))
        item["index"].close()
    rows.extend(ceiling_rows(opened))
    methods = [f"maguyva {p}" for p in presets] + (list(PEERS) if with_peers else []) + [CEILING]
    used = [q for item in opened for q in item["queries"]]
    report = {
        "rg_version": subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0],
        "sets": {i: {"queries": sum(q["intent"] == i for q in used),
                     "uncovered": sum(q["intent"] == i and not q["_covered"] for q in used)} for i in args.intents},
        "methods": {m: {i: summarize([r for r in rows if r["method"] == m and r["intent"] == i])
                        for i in args.intents} for m in methods},
        "queries": rows,
    }

    print()
    print("Queries scored per intent (uncovered: no target in a chunk of maguyva's index): " + ", ".join(
        f"{i} {v['queries'] - v['uncovered']} ({v['uncovered']} uncovered)" for i, v in report["sets"].items()))
    print()
    print("NDCG@10 / recall@10 / zero-result rate per intent (mean over repositories)")
    _table(["method"] + [SHORT[i] for i in args.intents],
           [[m] + [f"{_fmt(s['ndcg@10'])} / {_fmt(s['recall@10'])} / {_fmt(s['zero_result_rate'])}"
                   for s in (report["methods"][m][i] for i in args.intents)] for m in methods])
    print("maguyva: share classified into the set's intent, and query p50 (ms)")
    _table(["preset"] + [SHORT[i] for i in args.intents],
           [[m] + [f"{_fmt(s.get('intent_accuracy'))} / {s['query_p50_ms']:.2f}"
                   for s in (report["methods"][m][i] for i in args.intents)]
            for m in methods if m.startswith("maguyva")])
    for intent in args.intents:
        languages = sorted({lang for m in methods for lang in report["methods"][m][intent]["per_language"]})
        print(f"NDCG@10 / recall@10 per language: {intent}")
        _table(["method"] + languages,
               [[m] + [(f"{_fmt(e['ndcg@10'])} / {_fmt(e['recall@10'])}"
                        if (e := report["methods"][m][intent]["per_language"].get(lang)) else "-")
                       for lang in languages] for m in methods])
    for preset in presets:
        if preset != "quick":
            print(f"Goals, maguyva {preset}")
            print("\n".join(goal_lines(report, f"maguyva {preset}", [m for m in PEERS if m in methods])))
            print()
    if args.misses:
        print_misses(rows, [m for m in methods if m in ("maguyva default", "maguyva thorough")], args.misses)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
