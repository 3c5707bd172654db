"""Many repositories as one corpus: a single process (`Corpus`) against Ray (`RayCorpus`) with
1, 2 and 3 nodes simulated on this machine.

    RAY_USAGE_STATS_ENABLED=0 RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 \
    python benches/distributed.py --trees DIR [DIR ...] --work SCRATCH --queries BENCH \
        [--nodes 1 2 3] [--questions 60] [--json out.json]

Every folder inside each `--trees` folder is one repository. Each configuration runs in a fresh
process of its own with an empty index cache (`MAGUYVA_HOME` a new folder under SCRATCH), so each
build is cold and each peak resident size its own:

- single: `Corpus.open(...).refresh()` builds every repository (one build at a time, each using
  every core), then the questions;
- ray N: a `ray.cluster_utils.Cluster` of N nodes on 127.0.0.1 (the machine's cores shared out
  among them: 2 for one node, 1 each for two or three), `RayCorpus.build`, then the questions.

Questions: the first `--questions` of the benchmark's annotations (file order), each asked once
untimed, then twice timed with the default preset; p50 and p95 of the timed ones. Every answer
(repository, path and lines of each result) is compared with the single process's.

Peak RSS: the process's `ru_maxrss` for the single process; for Ray, the largest build task's
worker and shard server (each reports its own `ru_maxrss`), their sum over the servers, and the
driver's. For the projection to more machines, the single process also times each repository's
own answer to each question (one after the other) and the merge of the answers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def repositories(trees: list[Path]) -> list[Path]:
    return [p for tree in trees for p in sorted(tree.iterdir()) if p.is_dir() and not p.name.startswith(".")]


def questions(bench: Path, limit: int) -> list[str]:
    found: list[str] = []
    for path in sorted((bench / "annotations").glob("*.json")):
        found.extend(q["query"] for q in json.loads(path.read_text()))
    return found[:limit]


def ask_all(corpus: Any, asked: list[str]) -> tuple[list[float], list[list[list[object]]], int]:
    """Each question once untimed, then twice timed: the times (ms), the answers, and how
    many answers were partial."""
    answers = []
    partial = 0
    for question in asked:
        answer = corpus.search(question)
        partial += bool(answer.partial)
        answers.append([[repo, hit.path, hit.start_line, hit.end_line] for repo, hit in zip(answer.repos, answer.results)])
    times = []
    for _ in range(2):
        for question in asked:
            started = time.perf_counter()
            corpus.search(question)
            times.append((time.perf_counter() - started) * 1e3)
    return times, answers, partial


def percentiles(times: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(times, n=20)
    return {"p50_ms": round(statistics.median(times), 1), "p95_ms": round(cuts[18], 1)}


def measure_single(paths: list[Path], asked: list[str]) -> dict[str, object]:
    from maguyva.serve.corpus import Corpus, answer_repository, merge_answers

    started = time.perf_counter()
    with Corpus.open(paths) as corpus:
        corpus.refresh()
        build_s = time.perf_counter() - started
        times, answers, partial = ask_all(corpus, asked)
        # The work each question is, repository by repository, and the merge of the answers.
        shard_sums, shard_maxes, merges = [], [], []
        with corpus.opened(list(corpus.repositories)) as opened:
            files = sum(len(index.reader.files) for _, index in opened)
            for question in asked:
                each = []
                got = []
                for repo, index in opened:
                    clock = time.perf_counter()
                    got.append(answer_repository(repo.name, index, question, 10, "default", "learned", None, True))
                    each.append((time.perf_counter() - clock) * 1e3)
                clock = time.perf_counter()
                merge_answers(got, 10, "default", {}, clock)
                merges.append((time.perf_counter() - clock) * 1e3)
                shard_sums.append(sum(each))
                shard_maxes.append(max(each))
    return {
        "config": "single", "repositories": len(paths), "files": files, "build_s": round(build_s, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        **percentiles(times), "answers": answers, "partial_answers": partial,
        "shard_sum_p50_ms": round(statistics.median(shard_sums), 1),
        "shard_max_p50_ms": round(statistics.median(shard_maxes), 1),
        "merge_p50_ms": round(statistics.median(merges), 2),
    }  # fmt: skip


def measure_ray(paths: list[Path], asked: list[str], nodes: int, work: Path) -> dict[str, object]:
    import ray
    from ray.cluster_utils import Cluster

    from maguyva.distributed import RayCorpus

    cores = os.cpu_count() or 2
    per_node = max(1, cores // nodes)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": per_node, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=per_node)
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        started = time.perf_counter()
        with RayCorpus.build(paths, placement_file=work / "placement.json") as corpus:
            build_s = time.perf_counter() - started
            times, answers, partial = ask_all(corpus, asked)
            described = [ray.get(actor.describe.remote()) for actor in corpus.servers()]
            builds = [state.built for state in corpus._shards]
            placed = corpus.placement()
            return {
                "config": f"ray {nodes} node{'s' if nodes > 1 else ''}", "repositories": len(paths),
                "shards": len(placed), "servers": len(described), "nodes_used": len(set(placed.values())),
                "cpus_per_node": per_node, "build_s": round(build_s, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "build_worker_peak_mb": round(max(b["peak_rss_mb"] for b in builds)),
                "server_peak_mb": round(max(d["peak_rss_mb"] for d in described)),
                "servers_total_mb": round(sum(d["peak_rss_mb"] for d in described)),
                **percentiles(times), "answers": answers, "partial_answers": partial,
            }  # fmt: skip
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path, nargs="+", required=True)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for the indexes")
    parser.add_argument("--queries", type=Path, required=True, help="a benchmark folder whose annotations give the questions")
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    paths = repositories(args.trees)
    asked = questions(args.queries, args.questions)

    if args.measure:
        work = Path(os.environ["MAGUYVA_HOME"])
        row = measure_single(paths, asked) if args.measure == "single" else measure_ray(paths, asked, int(args.measure), work)
        print(json.dumps(row))
        return 0

    args.work.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for config in ["single", *map(str, args.nodes)]:
        with tempfile.TemporaryDirectory(dir=args.work) as scratch:
            env = {**os.environ, "MAGUYVA_HOME": scratch, "RAY_TMPDIR": tempfile.mkdtemp(prefix="ray-", dir="/tmp")}
            env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            env.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            command = [sys.executable, __file__, "--trees", *map(str, args.trees), "--work", str(args.work),
                       "--queries", str(args.queries), "--questions", str(args.questions), "--measure", config]
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            shutil.rmtree(env["RAY_TMPDIR"], ignore_errors=True)
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            return done.returncode
        row = json.loads(done.stdout.strip().splitlines()[-1])
        if rows:
            row["identical"] = row["answers"] == rows[0]["answers"]
        rows.append(row)
        shown = {k: v for k, v in row.items() if k != "answers"}
        print(json.dumps(shown), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"command": sys.argv, "rows": [{k: v for k, v in r.items() if k != "answers"} for r in rows]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
