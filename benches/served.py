"""A question's time as an agent sees it: asked of a served repository (`Corpus.search`, the MCP
search tool's path: the freshness check, then the search), on whole repositories.

    python benches/served.py --repos TREES [--bench ../shared/bench] [--index-root DIR] [--rounds 3] [--json out.json]

For each repository of the benchmark's repos.json found under --repos (the whole tree, as an
agent serves it, not only its benchmark_root), opens a `Corpus` on it (building its index in
--index-root first when there is none, not timed), asks each of its annotated questions once
untimed, then --rounds times timed, each question after the one before (nothing changes on disk
meanwhile). Prints per repository the files, the p50 and p95 of a question and of its freshness
check, and the medians over repositories. `MAGUYVA_NO_WATCH=1` measures the same without the
watch of the folders (a walk before every question).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from maguyva.serve.corpus import Corpus


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, required=True, help="folder with one tree per repository")
    parser.add_argument("--bench", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "bench")
    parser.add_argument("--index-root", type=Path, help="where the indexes are kept (default: a scratch folder)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    index_root = args.index_root or Path(tempfile.mkdtemp(prefix="maguyva-served-"))
    rows = []
    for spec in json.loads((args.bench / "repos.json").read_text()):
        tree = args.repos / spec["name"]
        if not tree.is_dir():
            continue
        questions = [q["query"] for q in json.loads((args.bench / "annotations" / f"{spec['name']}.json").read_text())]
        with Corpus.open([tree], index_dir=index_root / spec["name"]) as corpus:
            for question in questions:
                corpus.search(question)
            asked, checks = [], []
            for _ in range(args.rounds):
                for question in questions:
                    started = time.perf_counter()
                    corpus.search(question)
                    asked.append((time.perf_counter() - started) * 1e3)
                    refresh = corpus.repositories[0].last_refresh
                    assert refresh is not None and not refresh.changes.stale
                    checks.append(refresh.changes.seconds * 1e3)
            with corpus.repositories[0].open() as index:
                files = len(index.reader.files)
        row = {
            "repo": spec["name"],
            "files": files,
            "p50_ms": statistics.median(asked),
            "p95_ms": percentile(asked, 0.95),
            "check_p50_ms": statistics.median(checks),
        }
        rows.append(row)
        print(f"{row['repo']:<12} {row['files']:>6} files  question p50 {row['p50_ms']:6.2f} ms  p95 {row['p95_ms']:6.2f} ms"
              f"  check p50 {row['check_p50_ms']:7.3f} ms", flush=True)
    if not rows:
        parser.error(f"no repository of {args.bench / 'repos.json'} under {args.repos}")
    summary = {key: statistics.median(r[key] for r in rows) for key in ("p50_ms", "p95_ms", "check_p50_ms")}
    print(f"median over {len(rows)} repositories: question p50 {summary['p50_ms']:.2f} ms, p95 {summary['p95_ms']:.2f} ms, "
          f"check p50 {summary['check_p50_ms']:.3f} ms")
    if args.json:
        args.json.write_text(json.dumps({"repositories": rows, "median": summary}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
