"""Peer baselines on the development benchmark, scored exactly like benches/queries.py.

    python benches/peers.py [--repos /work/benchdata/repos] [--bench ../shared/bench]
                            [--index-root /tmp/maguyva-bench-indexes]
                            [--repos-subset NAME ...] [--quick] [--json benches/results/peers.json]

    python benches/peers.py            # full run: every repository present
    python benches/peers.py --quick    # smoke test: the same 4 repositories as queries.py --quick

Methods, each answering every annotated query of every repository with at most 10 results:

- ripgrep, query words: the query is lowercased, cut into words ([\\w$]+), maguyva's English
  stopword list is applied (all words are kept if nothing else would be left), and each word is
  searched as a fixed string, case-insensitively, over benchmark_root
  (`rg -F -i -c --no-ignore --hidden`, one process per word). Files are ranked by the sum of the
  per-word counts of matching lines (ties by path); a result is the whole file (line 1 to its
  last line). Latency is the wall time of all the query's rg processes.
- ripgrep, whole query as one literal: the same, with the query as a single fixed string.
- bm25s: every text file under benchmark_root (no NUL byte in the first 8 KiB, at most 1 MB; no
  ignore files honoured) is cut into 50-line windows without overlap; bm25s (numpy backend,
  default parameters) indexes them with its default tokenizer and English stopwords; a query is
  tokenized the same way and returns the top 10 windows. Index time covers reading the files,
  windowing, tokenizing and indexing; query time covers tokenizing and retrieving.

Scoring reuses queries.py's metric (found_ranks, ndcg) and its coverage rule: the ideal DCG's n is
the number of targets covered by maguyva's index of the repository (opened, not rebuilt, from
--index-root/<name>), so every method, maguyva included, is scored against the same ideal.
Aggregation is queries.py's: mean over a repository's queries, then over repositories; per
category, the mean over repositories having it. When benches/results/queries.json exists, its
maguyva rows (per preset, restricted to the same repositories) are printed alongside.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import queries  # noqa: E402  (the project's metric, coverage and helpers)
from queries import CATEGORIES, KS, QUICK_REPOS, Coverage, _fmt, _mean, _pct, _table, found_ranks, ndcg  # noqa: E402

WINDOW_LINES = 50
MAX_FILE_BYTES = 1_000_000
TOP_K = 10
_WORD = re.compile(r"[\w$]+")


# ---------------------------------------------------------------------------------------------
# ripgrep


def rg_words(query: str, stopwords: frozenset[str]) -> list[str]:
    """Lowercased words of the query, without repeats, stopwords dropped unless nothing is left."""
    all_words = list(dict.fromkeys(_WORD.findall(query.lower())))
    kept = [w for w in all_words if w not in stopwords]
    return kept or all_words


class LineCounts:
    """Line counts of files under a root, read once each."""

    def __init__(self, root: Path):
        self.root, self.cache = root, {}

    def __call__(self, rel: str) -> int:
        if rel not in self.cache:
            data = (self.root / rel).read_bytes()
            self.cache[rel] = max(1, data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1))
        return self.cache[rel]


def rg_count(rg: str, root: Path, literal: str) -> dict[str, int]:
    """Matching-line counts per file for one fixed string, case-insensitive."""
    out = subprocess.run([rg, "-F", "-i", "-c", "--no-ignore", "--hidden", "--no-messages", "-e", literal, "."],
                         cwd=root, capture_output=True, text=True, errors="replace").stdout
    counts = {}
    for line in out.splitlines():
        path, _, n = line.rpartition(":")
        if path and n.isdigit():
            counts[path[2:] if path.startswith("./") else path] = int(n)
    return counts


def rg_search(rg: str, root: Path, literals: list[str], lines: LineCounts) -> tuple[list[tuple[str, int, int]], float]:
    """Whole-file results ranked by total count over the literals, and the wall time in ms."""
    started = time.perf_counter()
    total: dict[str, int] = defaultdict(int)
    for literal in literals:
        for path, n in rg_count(rg, root, literal).items():
            total[path] += n
    elapsed = (time.perf_counter() - started) * 1000
    ranked = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_K]
    return [(path, 1, lines(path)) for path, _ in ranked], elapsed


# ---------------------------------------------------------------------------------------------
# bm25s


def text_files(root: Path):
    """(relative path, text) of every file under root that is not binary nor larger than 1 MB."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_file() or path.is_symlink():
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            yield path.relative_to(root).as_posix(), data.decode("utf-8", errors="replace")


class Bm25Windows:
    def __init__(self, root: Path):
        import bm25s

        self.bm25s = bm25s
        started = time.perf_counter()
        self.spans: list[tuple[str, int, int]] = []
        texts: list[str] = []
        for rel, text in text_files(root):
            file_lines = text.splitlines()
            for start in range(0, max(len(file_lines), 1), WINDOW_LINES):
                chunk = file_lines[start:start + WINDOW_LINES]
                self.spans.append((rel, start + 1, start + max(len(chunk), 1)))
                texts.append("\n".join(chunk))
        self.files = len({s[0] for s in self.spans})
        tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)
        self.index_s = time.perf_counter() - started

    def search(self, query: str) -> tuple[list[tuple[str, int, int]], float]:
        started = time.perf_counter()
        words = self.bm25s.tokenize(query, stopwords="en", return_ids=False, show_progress=False)[0]
        vocab = self.retriever.vocab_dict
        words = [w for w in words if w in vocab]
        results = []
        if words and self.spans:
            docs, scores = self.retriever.retrieve([words], k=min(TOP_K, len(self.spans)),
                                                   show_progress=False, n_threads=1)
            results = [self.spans[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]
        return results, (time.perf_counter() - started) * 1000


# ---------------------------------------------------------------------------------------------
# Aggregation (queries.py's, plus latency and zero results)


def aggregate(rows: list[dict]) -> dict:
    section = queries.ndcg_section(rows)
    times = [r["elapsed_ms"] for r in rows]
    section["latency"] = {"queries": len(times), "p50_ms": _pct(times, 50), "p95_ms": _pct(times, 95)}
    section["zero_result_rate"] = _mean(r["n_results"] == 0 for r in rows)
    return section


def maguyva_rows(path: Path, names: list[str]) -> dict[str, dict]:
    """maguyva's figures per preset from a queries.py report, restricted to the given repositories."""
    if not path.is_file():
        return {}
    report = json.loads(path.read_text())
    out = {}
    for preset, section in report.get("presets", {}).items():
        per_repo = section.get("per_repo", {})
        if not all(n in per_repo for n in names):
            continue
        entries = [per_repo[n] for n in names]
        row = {"ndcg@10": _mean(e["ndcg@10"] for e in entries), "per_category": {}}
        for cat in CATEGORIES:
            row["per_category"][cat] = _mean(e.get(f"{cat}_ndcg@10") for e in entries)
        if len(per_repo) == len(names):  # latency is only per whole run
            row["query_p50_ms"] = section.get("latency", {}).get("all", {}).get("p50_ms")
        out[preset] = row
    return out


# ---------------------------------------------------------------------------------------------
# The run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    queries.add_dataset_arguments(parser, f"smoke test: {len(QUICK_REPOS)} repositories")
    parser.add_argument("--maguyva-json", type=Path, default=HERE / "results" / "queries.json",
                        help="queries.py report whose maguyva rows are shown alongside (skipped if absent)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "peers.json")
    args = parser.parse_args()

    queries._self_check()
    print("metric self-check: ok")
    rg = shutil.which("rg")
    if rg is None:
        parser.error("rg not found on PATH (pip install ripgrep)")
    rg_version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    import bm25s

    os.environ["MAGUYVA_HOME"] = str(args.index_root / "_home")
    from maguyva import Index  # after MAGUYVA_HOME is set
    from maguyva.lexicon import STOPWORDS

    repos = queries.selected_repos(parser, args)

    methods = ("ripgrep query words", "ripgrep whole literal", "bm25s 50-line windows")
    per_query: list[dict] = []
    repo_info: list[dict] = []
    print(f"{'repository':<12} {'language':<11} {'queries':>7} {'windows':>8} {'bm25s index ms':>14}")
    for repo in repos:
        name = repo["name"]
        broot = (repo.get("benchmark_root") or "").strip("/")
        root = args.repos / name / broot
        if not root.is_dir():
            print(f"{name:<12} missing: {root}", file=sys.stderr)
            continue
        if not (args.index_root / name).is_dir():
            print(f"{name:<12} no maguyva index in {args.index_root / name} (run benches/queries.py)",
                  file=sys.stderr)
            continue
        index = Index.open(root, index_dir=args.index_root / name)
        coverage = Coverage(index.reader, broot)
        annotated = json.loads((args.bench / "annotations" / f"{name}.json").read_text())
        for q in annotated:
            q["_targets"] = list(q.get("relevant", [])) + list(q.get("secondary", []))
            q["_covered"] = coverage.count(q["_targets"])
        index.close()

        lines = LineCounts(root)
        bm = Bm25Windows(root)
        rg_search(rg, root, [annotated[0]["query"]], lines)  # warm the page cache, untimed
        bm.search(annotated[0]["query"])
        repo_info.append({"name": name, "language": repo["language"], "queries": len(annotated),
                          "bm25s_files": bm.files, "bm25s_windows": len(bm.spans),
                          "bm25s_index_ms": round(bm.index_s * 1000, 2)})
        print(f"{name:<12} {repo['language']:<11} {len(annotated):>7} {len(bm.spans):>8} {bm.index_s * 1000:>14.1f}")
        for q in annotated:
            answers = {
                methods[0]: rg_search(rg, root, rg_words(q["query"], STOPWORDS), lines),
                methods[1]: rg_search(rg, root, [q["query"]], lines),
                methods[2]: bm.search(q["query"]),
            }
            for method, (results, elapsed) in answers.items():
                full = [((f"{broot}/{p}" if broot else p), s, e) for p, s, e in results]
                per_query.append({
                    "method": method, "repo": name, "language": repo["language"],
                    "category": q["category"], "query": q["query"], "elapsed_ms": elapsed,
                    "n_results": len(results), "targets": len(q["_targets"]), "covered": q["_covered"],
                    "found_ranks": found_ranks(full, q["_targets"]),
                    **{f"ndcg@{k}": ndcg(full, q["_targets"], q["_covered"], k) for k in KS},
                })
    if not repo_info:
        print("no repository found", file=sys.stderr)
        return 1
    print()

    report = {"rg_version": rg_version, "bm25s_version": bm25s.__version__, "repositories": repo_info,
              "methods": {m: aggregate([r for r in per_query if r["method"] == m]) for m in methods},
              "queries": per_query}
    names = [r["name"] for r in repo_info]
    report["maguyva_from_queries_json"] = maguyva_rows(args.maguyva_json, names)

    index_ms = [r["bm25s_index_ms"] for r in repo_info]
    n_queries = sum(r["queries"] for r in repo_info)
    print(f"{len(repo_info)} repositories, {n_queries} queries, top_k={TOP_K}; {rg_version}, bm25s {bm25s.__version__}")
    print()
    header = ["method", "NDCG@10", "NDCG@5"] + list(CATEGORIES) + ["index p50", "query p50", "query p95", "zero"]
    rows = []
    for m in methods:
        s = report["methods"][m]
        idx = f"{_pct(index_ms, 50):.1f} ms" if m.startswith("bm25s") else "-"
        rows.append([m, _fmt(s["overall"]["ndcg@10"]), _fmt(s["overall"]["ndcg@5"])]
                    + [_fmt(s["per_category"][c]["ndcg@10"]) for c in CATEGORIES]
                    + [idx, f"{s['latency']['p50_ms']:.2f} ms", f"{s['latency']['p95_ms']:.2f} ms",
                       _fmt(s["zero_result_rate"])])
    for preset, s in report["maguyva_from_queries_json"].items():
        p50 = s.get("query_p50_ms")
        rows.append([f"maguyva {preset} (queries.json)", _fmt(s["ndcg@10"]), "-"]
                    + [_fmt(s["per_category"][c]) for c in CATEGORIES]
                    + ["-", f"{p50:.2f} ms" if p50 is not None else "-", "-", "-"])
    print("NDCG@10 overall and per category (mean over repositories), latency per query")
    _table(header, rows)
    print("NDCG@10 per repository")
    _table(["repository"] + list(methods),
           [[n] + [_fmt(report["methods"][m]["per_repo"][n]["ndcg@10"]) for m in methods] for n in names])

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
