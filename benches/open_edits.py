"""Edit -> answer through an open corpus on an index already built, with the build's steps timed.

    python benches/open_edits.py ROOT INDEX_DIR [--edits 4] [--pause 2.1] [--prepare] [--follow SECONDS]

Opens the repository at ROOT with its index in INDEX_DIR as a `Corpus` (as the MCP server holds
it), asks one question untimed and three more timed (nothing changed: the freshness check and
the search), then --edits times appends a function with a name found nowhere else to one Python
file, waits --pause seconds between edits (so each edit's mtime is past the racy window), and
times `Corpus.search` for that name until it answers with the edited file first, then times the
question once more (the next question after an edit: nothing changed since). The file is
replaced by a copy of itself first, so a checkout hard-linked into ROOT (as `scale.py` lays
them out) is never changed. Prints each edit's time and, per edit, the time spent in the
build's steps (wall time inside each function, nested ones counted in their callers too).
Unlike `freshness.py`, it copies nothing and builds nothing cold: it is meant for a corpus of
100,000 files built once by `scale.py` or `maguyva index`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed_steps  # noqa: E402

#: Questions in words asked after each edit's answer (what an agent asks next: the tables a
#: question in words derives from the new generation are made then).
WORDED = ("how are retries scheduled", "where is the configuration parsed", "who calls the json encoder")

#: (module, function or Class.method) timed inside each edit.
STEPS = [
    ("maguyva.index.build", "load_previous_records"),
    ("maguyva.index.build", "write_generation"),
    ("maguyva.index.build", "dependency_edges"),
    ("maguyva.index.build", "_insert_files"),
    ("maguyva.index.build", "write_text_index"),
    ("maguyva.index.build", "collect_records"),
    ("maguyva.index.graph", "node_values"),
    ("maguyva.index.store", "seal"),
    ("maguyva.index.reader", "IndexReader._load"),
    ("maguyva.index.symbols", "SymbolTable.__init__"),
    ("maguyva.index.freshness", "FreshnessCheck.check"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("index_dir", type=Path)
    parser.add_argument("--edits", type=int, default=4)
    parser.add_argument("--pause", type=float, default=2.1, help="seconds between edits")
    parser.add_argument("--prepare", action="store_true",
                        help="prepare the corpus as `maguyva mcp` does on start (timed) before the first question")
    parser.add_argument("--follow", type=float, metavar="SECONDS",
                        help="follow the tree's changes as `maguyva mcp` does, and ask SECONDS after each edit")
    args = parser.parse_args()

    spent = timed_steps(STEPS)
    from maguyva.serve.corpus import Corpus

    files = sorted(args.root.rglob("*.py"))
    if not files:
        parser.error(f"{args.root} holds no Python file to edit")
    target = files[len(files) // 2]
    content, stat = target.read_bytes(), target.stat()
    target.unlink()  # its own copy from now on, with the same bytes and mtime
    target.write_bytes(content)
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    with Corpus.open([args.root], index_dir=args.index_dir) as corpus:
        if args.prepare:
            started = time.perf_counter()
            for repository in corpus.repositories:
                repository.prepare()
            print(f"prepared as the server does on start: {(time.perf_counter() - started) * 1e3:.0f} ms")
        started = time.perf_counter()
        corpus.search("where is the configuration loaded")
        print(f"first question: {(time.perf_counter() - started) * 1e3:.0f} ms")
        unchanged = []
        for question in ("how are retries scheduled", "parse config", "json encoding of dates") * 2:
            started = time.perf_counter()
            corpus.search(question)
            unchanged.append((time.perf_counter() - started) * 1e3)
        print("questions with nothing changed:", ", ".join(f"{ms:.0f} ms" for ms in unchanged))
        stop = threading.Event()
        if args.follow is not None:
            threading.Thread(target=corpus.follow, args=(stop,), daemon=True).start()
        spent.clear()
        edits, after, worded = [], [], []
        for i in range(args.edits):
            time.sleep(args.pause)
            name = f"open_edits_probe_{os.getpid()}_{i}"
            with open(target, "a") as out:
                out.write(f"\n\ndef {name}():\n    return {i}\n")
            if args.follow is not None:
                time.sleep(args.follow)  # what an agent does between an edit and its next question
            started = time.perf_counter()
            answer = corpus.search(f'"{name}"', top_k=10)
            edits.append((time.perf_counter() - started) * 1e3)
            if not answer.results or answer.results[0].path != target.relative_to(args.root).as_posix():
                raise SystemExit(f"edit {i}: {name} was not found first in {target}")
            steps = dict(spent)
            started = time.perf_counter()
            corpus.search(f'"{name}"', top_k=10)
            after.append((time.perf_counter() - started) * 1e3)
            started = time.perf_counter()
            corpus.search(WORDED[i % len(WORDED)])
            worded.append((time.perf_counter() - started) * 1e3)
            spent.clear()
            spent.update(steps)  # the steps of the edits alone
        stop.set()
    print(f"edit -> correct answer: median {statistics.median(edits):.0f} ms ({', '.join(f'{ms:.0f}' for ms in edits)})")
    print(f"the next question: median {statistics.median(after):.0f} ms ({', '.join(f'{ms:.0f}' for ms in after)})")
    print(f"then a question in words: median {statistics.median(worded):.0f} ms ({', '.join(f'{ms:.0f}' for ms in worded)})")
    for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {label:<32} {seconds / args.edits * 1e3:8.1f} ms an edit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
