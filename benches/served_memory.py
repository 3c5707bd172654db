"""What a served index costs in time and memory when it is opened: the first question, the ones
after it, and the resident memory by kind.

    python benches/served_memory.py ROOT INDEX_DIR [--questions 9]

Opens ROOT with its index in INDEX_DIR as a `Corpus` (as the MCP server holds it), asks one
question (the index's derived tables are made for it), then `--questions` more, and prints the
first question's time, the p50 of the others, and the process's resident memory from
/proc/self/status: anonymous (its own) and file-backed (mapped files, the file system's cache).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

QUESTIONS = ("how are retries scheduled", "parse config", "json encoding of dates")


def resident_mb() -> dict[str, int]:
    """VmRSS, RssAnon and RssFile of this process, in MB (Linux)."""
    found: dict[str, int] = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                found[key] = int(value.split()[0]) // 1024
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--questions", type=int, default=9)
    args = parser.parse_args()

    from maguyva.serve.corpus import Corpus

    started = time.perf_counter()
    with Corpus.open([args.root], index_dir=args.index_dir) as corpus:
        corpus.search("where is the configuration loaded")
        first = time.perf_counter() - started
        times = []
        for i in range(args.questions):
            started = time.perf_counter()
            corpus.search(QUESTIONS[i % len(QUESTIONS)])
            times.append((time.perf_counter() - started) * 1e3)
        memory = resident_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"first question {first:.2f} s; then p50 {statistics.median(times):.1f} ms")
    print(f"resident MB: {memory.get('VmRSS')} ({memory.get('RssAnon')} anonymous, {memory.get('RssFile')} file-backed); peak {peak}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
