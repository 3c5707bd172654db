"""Retrieval quality, zero-result rates and query latency on the development benchmark.

    python benches/queries.py [--repos /work/benchdata/repos] [--bench ../shared/bench]
                              [--index-root /tmp/maguyva-bench-indexes] [--presets quick default thorough]
                              [--repos-subset NAME ...] [--quick] [--json benches/results/queries.json]

    python benches/queries.py            # full run: every repository present, three presets
    python benches/queries.py --quick    # smoke test: 4 repositories, default preset only

For every repository of the benchmark's repos.json whose tree is under --repos (one folder per
repository name, at the pinned revision), builds an index of its benchmark_root in
--index-root/<name> (or brings an existing one up to date; MAGUYVA_HOME is --index-root/_home so the
embedding cache is shared between runs), then for each preset runs every annotated query with
top_k=10 and reports:

- NDCG@10 and NDCG@5, exactly as the benchmark README defines them: result paths are prefixed with
  benchmark_root; a target (relevant + secondary) is found at the rank of the first result whose
  path equals it or ends with "/" + it and, for span targets, whose lines overlap the span; a result
  hitting several targets counts once; the ideal DCG is over min(k, n) where n is the number of
  targets covered by at least one indexed chunk. Mean over a repository's queries, then over
  repositories; per category (mean over repositories having it of the per-repository category mean)
  and per language (mean over that language's repositories).
- Zero-result rate (share of queries answered with no result), per preset, per benchmark category
  and per classified intent; and, for the labelled intent set tests/data/intent_queries.jsonl run
  against every indexed repository with the default preset, per labelled intent.
- Latency: p50 and p95 of SearchResponse.elapsed_ms per route ("rrf", "direct:<modality>") and
  preset, warm (each repository and preset first answers one query untimed).

Prints compact tables and writes everything as JSON to --json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CATEGORIES = ("architecture", "semantic", "symbol")
KS = (10, 5)
QUICK_REPOS = ("fastapi", "express", "gin", "gson")


# ---------------------------------------------------------------------------------------------
# The metric


def _target_path(target: str | dict) -> str:
    return target if isinstance(target, str) else target["path"]


def _target_span(target: str | dict) -> tuple[int, int] | None:
    return None if isinstance(target, str) else (int(target["start_line"]), int(target["end_line"]))


def _path_matches(result_path: str, target_path: str) -> bool:
    return result_path == target_path or result_path.endswith("/" + target_path)


def _hits(result: tuple[str, int, int], target: str | dict) -> bool:
    path, start, end = result
    if not _path_matches(path, _target_path(target)):
        return False
    span = _target_span(target)
    return span is None or (start <= span[1] and end >= span[0])


def found_ranks(results: list[tuple[str, int, int]], targets: list[str | dict]) -> list[int]:
    """The 1-based ranks at which targets are found; a result hitting several targets counts once."""
    ranks = set()
    for target in targets:
        for rank, result in enumerate(results, start=1):
            if _hits(result, target):
                ranks.add(rank)
                break
    return sorted(ranks)


def ndcg(results: list[tuple[str, int, int]], targets: list[str | dict], n_covered: int, k: int) -> float:
    """NDCG@k with binary relevance; the ideal is min(k, n_covered) ones (0 when nothing is covered)."""
    ideal_n = min(k, n_covered)
    if ideal_n == 0:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank in found_ranks(results, targets) if rank <= k)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(ideal_n))
    return dcg / ideal


class Coverage:
    """Which targets are covered by at least one chunk of an index (paths relative to the repo root)."""

    def __init__(self, reader, benchmark_root: str):
        prefix = benchmark_root.strip("/")
        self.paths: list[str] = []
        row_of_id: dict[int, int] = {}
        for row, info in enumerate(reader.files):
            self.paths.append(f"{prefix}/{info.path}" if prefix else info.path)
            row_of_id[int(info.id)] = row
        chunk_file = np.asarray(reader.chunk_file)
        self.chunks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for file_id in np.unique(chunk_file):
            rows = np.flatnonzero(chunk_file == file_id)
            self.chunks[row_of_id[int(file_id)]] = (np.asarray(reader.chunk_start)[rows],
                                                    np.asarray(reader.chunk_end)[rows])

    def covered(self, target: str | dict) -> bool:
        path, span = _target_path(target), _target_span(target)
        for row, indexed in enumerate(self.paths):
            if not _path_matches(indexed, path) or row not in self.chunks:
                continue
            if span is None:
                return True
            starts, ends = self.chunks[row]
            if np.any((starts <= span[1]) & (ends >= span[0])):
                return True
        return False

    def count(self, targets: list[str | dict]) -> int:
        return sum(self.covered(t) for t in targets)


def _self_check() -> None:
    """The metric on hand-made cases."""
    close = lambda a, b: abs(a - b) < 1e-12  # noqa: E731
    t = ["src/a.py"]
    # one target at rank 1
    assert close(ndcg([("src/a.py", 1, 5)], t, 1, 10), 1.0)
    # one target at rank 2
    assert close(ndcg([("src/b.py", 1, 5), ("src/a.py", 1, 5)], t, 1, 10), 1 / math.log2(3))
    # two targets, one found at rank 1
    two = ["src/a.py", "src/c.py"]
    assert close(ndcg([("src/a.py", 1, 5), ("src/b.py", 1, 5)], two, 2, 10), 1 / (1 + 1 / math.log2(3)))
    # ...but only one covered by the index: the ideal is one hit
    assert close(ndcg([("src/a.py", 1, 5), ("src/b.py", 1, 5)], two, 1, 10), 1.0)
    # suffix matching: a target relative to benchmark_root, and no match on a partial name
    assert close(ndcg([("pkg/src/a.py", 1, 5)], t, 1, 10), 1.0)
    assert ndcg([("pkg/xsrc/a.py", 1, 5)], t, 1, 10) == 0.0
    # spans must overlap (inclusive bounds)
    span = [{"path": "src/a.py", "start_line": 10, "end_line": 20}]
    assert ndcg([("src/a.py", 1, 9)], span, 1, 10) == 0.0
    assert close(ndcg([("src/a.py", 1, 10)], span, 1, 10), 1.0)
    assert close(ndcg([("src/a.py", 20, 30)], span, 1, 10), 1.0)
    # two targets hit by the same result count once
    both = ["src/a.py", {"path": "src/a.py", "start_line": 1, "end_line": 3}]
    assert close(ndcg([("src/a.py", 1, 5)], both, 2, 10), 1 / (1 + 1 / math.log2(3)))
    # cut-off: a hit at rank 6 counts for @10, not for @5
    six = [("x.py", 1, 1)] * 5 + [("src/a.py", 1, 1)]
    assert close(ndcg(six, t, 1, 10), 1 / math.log2(7))
    assert ndcg(six, t, 1, 5) == 0.0
    # nothing covered gives 0
    assert ndcg([("src/a.py", 1, 5)], t, 0, 10) == 0.0
    assert found_ranks([("b", 1, 1), ("src/a.py", 1, 1), ("src/c.py", 1, 1)], two) == [2, 3]

    class _Info:
        def __init__(self, id_, path):
            self.id, self.path = id_, path

    class _Reader:
        files = [_Info(0, "a.py"), _Info(1, "empty.py")]
        chunk_file = np.array([0, 0], dtype=np.uint32)
        chunk_start = np.array([1, 30], dtype=np.int32)
        chunk_end = np.array([10, 40], dtype=np.int32)

    cov = Coverage(_Reader(), "src")
    assert cov.covered("src/a.py") and cov.covered("a.py") and not cov.covered("src/empty.py")
    assert cov.covered({"path": "src/a.py", "start_line": 5, "end_line": 12})
    assert not cov.covered({"path": "src/a.py", "start_line": 15, "end_line": 25})
    assert not cov.covered("src/b.py")


# ---------------------------------------------------------------------------------------------
# Helpers


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else float("nan")


def _route(response) -> str:
    if response.fusion_strategy == "direct":
        return "direct:" + "+".join(response.modalities_run)
    return response.fusion_strategy


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    print(line(header))
    for r in rows:
        print(line(r))
    print()


# ---------------------------------------------------------------------------------------------
# The run


def add_dataset_arguments(parser: argparse.ArgumentParser, quick_help: str) -> None:
    """The options every quality benchmark shares: where the repositories, the benchmark and
    maguyva's indexes are, and which repositories to run."""
    parser.add_argument("--repos", type=Path, default=Path("/work/benchdata/repos"),
                        help="folder with one tree per repository (default /work/benchdata/repos)")
    parser.add_argument("--bench", type=Path, default=HERE.parents[1] / "shared" / "bench",
                        help="benchmark folder holding repos.json and annotations/ (default ../shared/bench)")
    parser.add_argument("--index-root", type=Path, default=Path("/tmp/maguyva-bench-indexes"),
                        help="indexes go in INDEX_ROOT/<name>, the embedding cache in INDEX_ROOT/_home")
    parser.add_argument("--repos-subset", nargs="+", metavar="NAME", help="only these repositories")
    parser.add_argument("--quick", action="store_true", help=quick_help)


#: Variants measured against the design's numbers, each changing one thing (--ablation).
ABLATIONS = {
    "none": "the product as designed",
    "no-boost": "no centrality boost (every chunk's centrality 0)",
    "no-demotion": "no path demotion (every factor 1)",
    "k60": "RRF k = 60 for the default preset (the design says 40)",
    "centrality/4": "stored centrality divided by 4 (a gentler boost)",
    "centrality/16": "stored centrality divided by 16",
    "direct-0.80": "direct route from confidence 0.80 (the design says 0.85), so plain identifiers go direct",
}


def apply_ablation(name: str, indexes: list) -> None:
    """Change one design number for this run only (see ABLATIONS)."""
    import dataclasses

    from maguyva.query import route

    if name == "no-boost":
        for index in indexes:
            index.reader.chunk_centrality = np.zeros_like(index.reader.chunk_centrality)
    elif name.startswith("centrality/"):
        divisor = float(name.split("/", 1)[1])
        for index in indexes:
            index.reader.chunk_centrality = index.reader.chunk_centrality / divisor
    elif name == "no-demotion":
        for index in indexes:
            index.searcher.tuning = index.searcher.tuning.but(VENDORED_DEMOTION=1.0)
    elif name == "k60":
        route.PRESETS = {**route.PRESETS, "default": dataclasses.replace(route.PRESETS["default"], rrf_k=60)}
    elif name == "direct-0.80":
        route.DIRECT_CONFIDENCE = 0.80


def ndcg_section(rows: list[dict]) -> dict:
    """NDCG@k of scored query rows (repo, language, category, ndcg@k): per repository, then the
    means over repositories overall, per category and per language (as the benchmark defines)."""
    by_repo: defaultdict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    per_repo = {}
    for name, rs in by_repo.items():
        entry = {"language": rs[0]["language"], "queries": len(rs)}
        for k in KS:
            entry[f"ndcg@{k}"] = _mean(r[f"ndcg@{k}"] for r in rs)
            for cat in CATEGORIES:
                entry[f"{cat}_ndcg@{k}"] = _mean(r[f"ndcg@{k}"] for r in rs if r["category"] == cat)
        per_repo[name] = entry
    section: dict = {"per_repo": per_repo, "overall": {}, "per_category": {}, "per_language": {}}
    for k in KS:
        section["overall"][f"ndcg@{k}"] = _mean(e[f"ndcg@{k}"] for e in per_repo.values())
        for cat in CATEGORIES:
            section["per_category"].setdefault(cat, {})[f"ndcg@{k}"] = _mean(
                e[f"{cat}_ndcg@{k}"] for e in per_repo.values())
        for lang in sorted({e["language"] for e in per_repo.values()}):
            section["per_language"].setdefault(lang, {"repos": sum(
                e["language"] == lang for e in per_repo.values())})[f"ndcg@{k}"] = _mean(
                e[f"ndcg@{k}"] for e in per_repo.values() if e["language"] == lang)
    return section


def build_bench_index(args: argparse.Namespace, repo: dict) -> tuple[Any, str, float] | None:
    """Builds or brings up to date the index of `repo`'s benchmark_root in --index-root/<name>:
    (index, benchmark_root, seconds), or None (said on stderr) when the tree is missing."""
    from maguyva import Index  # imported late: the caller sets MAGUYVA_HOME first

    broot = (repo.get("benchmark_root") or "").strip("/")
    root = args.repos / repo["name"] / broot
    if not root.is_dir():
        print(f"{repo['name']:<12} missing: {root}", file=sys.stderr)
        return None
    started = time.perf_counter()
    index = Index.build(root, index_dir=args.index_root / repo["name"])
    return index, broot, time.perf_counter() - started


def selected_repos(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict]:
    """The repositories of repos.json that --repos-subset (or --quick) asks for."""
    subset = set(args.repos_subset) if args.repos_subset else (set(QUICK_REPOS) if args.quick else None)
    repos = json.loads((args.bench / "repos.json").read_text())
    if subset is not None:
        unknown = subset - {r["name"] for r in repos}
        if unknown:
            parser.error(f"unknown repositories: {', '.join(sorted(unknown))}")
        repos = [r for r in repos if r["name"] in subset]
    return repos


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataset_arguments(parser, f"smoke test: {len(QUICK_REPOS)} repositories, default preset only")
    parser.add_argument("--ablation", choices=sorted(ABLATIONS), default="none",
                        help="; ".join(f"{k}: {v}" for k, v in ABLATIONS.items()))
    parser.add_argument("--presets", nargs="+", default=["quick", "default", "thorough"])
    parser.add_argument("--intents", type=Path, default=HERE.parent / "tests" / "data" / "intent_queries.jsonl",
                        help="labelled intent queries (JSON lines with query and intent)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "queries.json")
    args = parser.parse_args()

    _self_check()
    print("metric self-check: ok")

    args.index_root.mkdir(parents=True, exist_ok=True)
    os.environ["MAGUYVA_HOME"] = str(args.index_root / "_home")

    presets = ["default"] if args.quick else args.presets
    repos = selected_repos(parser, args)

    # ---- build or reuse the indexes, and work out which targets each index covers
    indexed = []
    print(f"{'repository':<12} {'language':<11} {'files':>6} {'chunks':>7} {'queries':>7} {'build s':>8}")
    for repo in repos:
        built = build_bench_index(args, repo)
        if built is None:
            continue
        index, broot, seconds = built
        queries = json.loads((args.bench / "annotations" / f"{repo['name']}.json").read_text())
        coverage = Coverage(index.reader, broot)
        for q in queries:
            q["_targets"] = list(q.get("relevant", [])) + list(q.get("secondary", []))
            q["_covered"] = coverage.count(q["_targets"])
        indexed.append({"repo": repo, "root": broot, "index": index, "queries": queries, "build_s": seconds})
        print(f"{repo['name']:<12} {repo['language']:<11} {len(index.reader.files):>6} "
              f"{len(index.reader.chunk_file):>7} {len(queries):>7} {seconds:>8.2f}")
    if not indexed:
        print("no repository found under --repos", file=sys.stderr)
        return 1
    apply_ablation(args.ablation, [item["index"] for item in indexed])
    print(f"\nablation: {args.ablation} ({ABLATIONS[args.ablation]})\n")

    # ---- benchmark queries
    per_query = []  # one row per (preset, repo, query)
    for preset in presets:
        for item in indexed:
            index, prefix = item["index"], item["root"]
            index.search(item["queries"][0]["query"], top_k=10, preset=preset)  # warm-up, untimed
            for q in item["queries"]:
                response = index.search(q["query"], top_k=10, preset=preset)
                results = [((f"{prefix}/{h.path}" if prefix else h.path), h.start_line, h.end_line)
                           for h in response.results]
                per_query.append({
                    "preset": preset,
                    "repo": item["repo"]["name"],
                    "language": item["repo"]["language"],
                    "category": q["category"],
                    "query": q["query"],
                    "intent": response.intent,
                    "route": _route(response),
                    "elapsed_ms": response.elapsed_ms,
                    "n_results": len(response.results),
                    "targets": len(q["_targets"]),
                    "covered": q["_covered"],
                    "found_ranks": found_ranks(results, q["_targets"]),
                    **{f"ndcg@{k}": ndcg(results, q["_targets"], q["_covered"], k) for k in KS},
                })

    # ---- labelled intent set against every repository, default preset
    labelled = [json.loads(line) for line in args.intents.read_text().splitlines() if line.strip()]
    intent_pairs: dict[str, list[int]] = defaultdict(list)
    for item in indexed:
        for row in labelled:
            response = item["index"].search(row["query"], top_k=10, preset="default")
            intent_pairs[row["intent"]].append(0 if response.results else 1)

    # ---- aggregate
    report: dict = {"presets": {}, "repositories": [], "labelled_intent_zero_rate": {}, "queries": per_query}
    for item in indexed:
        report["repositories"].append({
            "name": item["repo"]["name"], "language": item["repo"]["language"],
            "files": len(item["index"].reader.files), "chunks": int(len(item["index"].reader.chunk_file)),
            "queries": len(item["queries"]), "build_s": round(item["build_s"], 3),
            "uncovered_targets": sum(len(q["_targets"]) - q["_covered"] for q in item["queries"]),
        })
    for preset in presets:
        rows = [r for r in per_query if r["preset"] == preset]
        section = ndcg_section(rows)
        zero = {"overall": _mean(r["n_results"] == 0 for r in rows), "queries": len(rows),
                "per_category": {}, "per_intent": {}}
        for cat in CATEGORIES:
            sel = [r["n_results"] == 0 for r in rows if r["category"] == cat]
            zero["per_category"][cat] = {"rate": _mean(sel), "queries": len(sel)}
        for intent in sorted({r["intent"] for r in rows}):
            sel = [r["n_results"] == 0 for r in rows if r["intent"] == intent]
            zero["per_intent"][intent] = {"rate": _mean(sel), "queries": len(sel)}
        section["zero_results"] = zero
        latency = {}
        for route in sorted({r["route"] for r in rows}):
            times = [r["elapsed_ms"] for r in rows if r["route"] == route]
            latency[route] = {"queries": len(times), "p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95)}
        times = [r["elapsed_ms"] for r in rows]
        latency["all"] = {"queries": len(times), "p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95)}
        section["latency"] = latency
        report["presets"][preset] = section
    for intent, flags in sorted(intent_pairs.items()):
        report["labelled_intent_zero_rate"][intent] = {"rate": _mean(flags), "pairs": len(flags)}

    # ---- print
    n_repos, n_queries = len(indexed), sum(len(i["queries"]) for i in indexed)
    print(f"{n_repos} repositories, {n_queries} queries, top_k=10")
    print()
    print("NDCG (mean over repositories of the per-repository mean)")
    _table(["preset", "NDCG@10", "NDCG@5"],
           [[p, _fmt(report["presets"][p]["overall"]["ndcg@10"]), _fmt(report["presets"][p]["overall"]["ndcg@5"])]
            for p in presets])
    print("NDCG@10 / NDCG@5 per category")
    _table(["preset"] + list(CATEGORIES),
           [[p] + [f"{_fmt(report['presets'][p]['per_category'][c]['ndcg@10'])} / "
                   f"{_fmt(report['presets'][p]['per_category'][c]['ndcg@5'])}" for c in CATEGORIES]
            for p in presets])
    shown = "default" if "default" in presets else presets[0]
    print(f"NDCG per language ({shown} preset)")
    _table(["language", "repos", "NDCG@10", "NDCG@5"],
           [[lang, str(v["repos"]), _fmt(v["ndcg@10"]), _fmt(v["ndcg@5"])]
            for lang, v in report["presets"][shown]["per_language"].items()])
    print("NDCG@10 per repository")
    _table(["repository"] + presets,
           [[item["repo"]["name"]] + [_fmt(report["presets"][p]["per_repo"][item["repo"]["name"]]["ndcg@10"])
                                      for p in presets] for item in indexed])
    print("Zero-result rate per preset and category (benchmark queries)")
    _table(["preset", "all"] + list(CATEGORIES),
           [[p, _fmt(report["presets"][p]["zero_results"]["overall"])]
            + [_fmt(report["presets"][p]["zero_results"]["per_category"][c]["rate"]) for c in CATEGORIES]
            for p in presets])
    print("Zero-result rate per classified intent (benchmark queries; rate (queries))")
    intents = sorted({i for p in presets for i in report["presets"][p]["zero_results"]["per_intent"]})
    _table(["intent"] + presets,
           [[i] + [(f"{_fmt(e['rate'])} ({e['queries']})" if (e := report['presets'][p]['zero_results']
                                                               ['per_intent'].get(i)) else "-")
                   for p in presets] for i in intents])
    print(f"Zero-result rate per labelled intent ({args.intents.name}, {len(labelled)} queries "
          f"x {n_repos} repositories, default preset)")
    _table(["intent", "pairs", "zero rate"],
           [[i, str(v["pairs"]), _fmt(v["rate"])] for i, v in report["labelled_intent_zero_rate"].items()])
    print("Latency, warm (ms): p50 / p95 (queries)")
    routes = sorted({r for p in presets for r in report["presets"][p]["latency"] if r != "all"}) + ["all"]
    _table(["route"] + presets,
           [[r] + [(f"{e['p50_ms']:.2f} / {e['p95_ms']:.2f} ({e['queries']})"
                    if (e := report["presets"][p]["latency"].get(r)) else "-") for p in presets]
            for r in routes])

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.json}")
    for item in indexed:
        item["index"].close()
    return 0


def build_number(parser: argparse.ArgumentParser, spec: str) -> tuple[str, float]:
    """`--build NAME=V`: a number of maguyva.config and the value the indexes are built with."""
    from maguyva import config

    name, _, value = spec.partition("=")
    designed = getattr(config.DEFAULT, name, None) if name in config.Tuning.numbers() else None
    if not isinstance(designed, int | float) or isinstance(designed, bool):
        parser.error(f"--build {spec}: not NAME=V with NAME a number of maguyva.config")
    try:
        number = float(value)
    except ValueError:
        parser.error(f"--build {spec}: the value must be a number")
    return name, int(number) if isinstance(designed, int) and number.is_integer() else number


if __name__ == "__main__":
    sys.exit(main())
