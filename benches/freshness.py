"""The cost of fresh answers: the freshness check on an unchanged repository, and the time from
an edit on disk to a correct answer.

    python benches/freshness.py [--repo TREE] [--files 2000] [--runs 200] [--edits 5] [--mcp] [--json out.json]

Copies --files indexable files of --repo (spread evenly over its sorted file list; default: the
fastapi tree of the development benchmark) into a scratch repository, keeping their mtimes, and
indexes it (not timed). Then:

- check: the freshness check that runs before every answer (`Index.changes()`: a walk honouring
  the ignore rules, a stat comparison with the index, hashing only files whose stat changed),
  --runs times on the unchanged repository; median, p90 and min, and the walk alone; then the
  same with the tree's folders watched (`Index.changes(watch)`, as a served repository checks
  on Linux: no walk while the watch has seen nothing change).
- edit -> answer: --edits times each, one kind of edit is written to disk and the clock runs
  until a search answers correctly from the new content, through the same path as the MCP
  server's search tool (`Corpus.search`: freshness check, incremental re-index, search):
  add: a function appended to a file, then found by its new literal;
  rename: a function renamed in place, then found by its new name, its old name gone;
  create: a new file written beside another, then found by its literal;
  delete: a file removed, then absent from the answer to its literal.
  With --mcp the same edits are also timed through a running `maguyva mcp` server over stdio,
  with the SDK's client, as an agent sees them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from maguyva import Index
from maguyva._core import walk
from maguyva.index.freshness import TreeWatch
from maguyva.serve.corpus import Corpus

DEFAULT_REPO = Path("/work/benchdata/repos/fastapi")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help=f"source tree (default: {DEFAULT_REPO})")
    parser.add_argument("--files", type=int, default=2000, help="files in the scratch repository (0: all)")
    parser.add_argument("--runs", type=int, default=200, help="freshness checks to time")
    parser.add_argument("--edits", type=int, default=5, help="edits of each kind to time")
    parser.add_argument("--mcp", action="store_true", help="also time edits through `maguyva mcp` over stdio")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        os.environ["MAGUYVA_HOME"] = str(Path(scratch) / "home")
        root = copy_files(args.repo, Path(scratch) / "repo", args.files)
        started = time.perf_counter()
        index = Index.build(root)
        print(f"{args.repo.name}: {index.summary.files} files, {index.summary.chunks} chunks "
              f"(indexed in {time.perf_counter() - started:.1f} s, not timed below)")
        figures: dict[str, object] = {"repo": str(args.repo), "files": index.summary.files}
        figures["check"] = time_check(index, root, args.runs)
        watch = TreeWatch.of(root)
        if watch is not None:
            figures["watched_check"] = time_watched_check(index, watch, args.runs)
        index.close()
        with Corpus.open([root]) as corpus:
            corpus.search("warm up")  # load the model and the symbol table once
            figures["edit_to_answer"] = time_edits(root, args.edits, lambda q: corpus.search(q, top_k=10).to_dict())
        if args.mcp:
            figures["edit_to_answer_mcp"] = time_edits_over_mcp(root, args.edits)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


def copy_files(source: Path, target: Path, count: int) -> Path:
    """Copy `count` of the files the walk finds in `source` (all for 0), evenly spread over
    the sorted list, keeping mtimes (so they are as old as in the source tree)."""
    files, _ = walk(source)
    if count and count < len(files):
        step = len(files) / count
        files = [files[int(i * step)] for i in range(count)]
    for path, _, _ in files:
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / path, destination)
    return target


def time_check(index: Index, root: Path, runs: int) -> dict[str, float]:
    index.changes()  # first check builds the stat table from the index
    checks, walks = [], []
    for _ in range(runs):
        started = time.perf_counter()
        changes = index.changes()
        checks.append(time.perf_counter() - started)
        assert not changes.stale, changes
        started = time.perf_counter()
        walk(root)
        walks.append(time.perf_counter() - started)
    figures = summary_ms(checks) | {"walk_median_ms": round(statistics.median(walks) * 1e3, 2), "files": changes.walked}
    print(f"freshness check, unchanged, {changes.walked} files, {runs} runs: median {figures['median_ms']} ms, "
          f"p90 {figures['p90_ms']} ms, min {figures['min_ms']} ms (walk alone: median {figures['walk_median_ms']} ms)")
    return figures


def time_watched_check(index: Index, watch: TreeWatch, runs: int) -> dict[str, float]:
    # The first checks walk: the watch of the folders begins with them.
    for _ in range(5):
        if index.changes(watch).watched:
            break
    checks = []
    for _ in range(runs):
        started = time.perf_counter()
        changes = index.changes(watch)
        checks.append(time.perf_counter() - started)
        assert changes.watched and not changes.stale, changes
    ordered = sorted(checks)
    figures = {
        "median_us": round(statistics.median(ordered) * 1e6, 1),
        "p90_us": round(ordered[int(0.9 * (len(ordered) - 1))] * 1e6, 1),
        "max_us": round(ordered[-1] * 1e6, 1),
        "folders": watch.folders,
    }
    print(f"freshness check, unchanged, folders watched ({watch.folders}), {runs} runs: median {figures['median_us']} µs, "
          f"p90 {figures['p90_us']} µs, max {figures['max_us']} µs")
    return figures


def summary_ms(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "median_ms": round(statistics.median(ordered) * 1e3, 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1e3, 2),
        "min_ms": round(ordered[0] * 1e3, 2),
        "max_ms": round(ordered[-1] * 1e3, 2),
    }


# Edits: each writes to disk and returns (query, predicate on the answer) -------------------

_DEF = re.compile(rb"^def ([A-Za-z_][A-Za-z0-9_]*)\(", re.M)
_unique = itertools.count()


def python_files(root: Path) -> list[Path]:
    found = sorted(p for p in root.rglob("*.py") if _DEF.search(p.read_bytes()))
    if not found:
        raise SystemExit("the scratch repository has no Python file with a top-level function")
    return found


def edit_add(root: Path, n: int) -> tuple[str, Callable[[dict], bool]]:
    target = python_files(root)[n * 7 % len(python_files(root))]
    literal = f"FRESHNESS_ADDED_{n}_{time.time_ns()}"
    with open(target, "a") as out:
        out.write(f"\n\ndef freshness_added_{n}():\n    return \"{literal}\"\n")
    line = len(target.read_bytes().splitlines())  # the literal is on the last line
    rel = target.relative_to(root).as_posix()

    def correct(answer: dict) -> bool:
        top = answer["results"][0] if answer["results"] else None
        return top is not None and top["path"] == rel and top["start_line"] <= line <= top["end_line"]

    return f'"{literal}"', correct


def edit_rename(root: Path, n: int) -> tuple[str, Callable[[dict], bool]]:
    files = python_files(root)
    target = files[(n * 11 + 3) % len(files)]
    content = target.read_bytes()
    found = _DEF.search(content)
    old = found.group(1).decode()
    new = f"renamed_{next(_unique)}_{old}"[:60]  # unique across runs: tutorials repeat names
    target.write_bytes(content.replace(f"def {old}(".encode(), f"def {new}(".encode(), 1))
    line = content[: found.start()].count(b"\n") + 1
    rel = target.relative_to(root).as_posix()

    def correct(answer: dict) -> bool:
        top = answer["results"][0] if answer["results"] else None
        return top is not None and top["path"] == rel and top["start_line"] <= line <= top["end_line"]

    return f"def {new}", correct


def edit_create(root: Path, n: int) -> tuple[str, Callable[[dict], bool]]:
    files = python_files(root)
    beside = files[(n * 17 + 2) % len(files)]
    literal = f"FRESHNESS_CREATED_{n}_{time.time_ns()}"
    target = beside.with_name(f"freshness_created_{next(_unique)}.py")
    target.write_text(f"def freshness_created_{n}():\n    return \"{literal}\"\n")
    rel = target.relative_to(root).as_posix()

    def correct(answer: dict) -> bool:
        return bool(answer["results"]) and answer["results"][0]["path"] == rel

    return f'"{literal}"', correct


def edit_delete(root: Path, n: int) -> tuple[str, Callable[[dict], bool]]:
    files = python_files(root)
    target = files[(n * 13 + 5) % len(files)]
    literal = _DEF.search(target.read_bytes()).group(1).decode()
    rel = target.relative_to(root).as_posix()
    target.unlink()
    return f'"def {literal}("', lambda answer: all(r["path"] != rel for r in answer["results"])


EDITS = {"add": edit_add, "rename": edit_rename, "create": edit_create, "delete": edit_delete}


def time_edits(root: Path, count: int, ask: Callable[[str], dict], label: str = "in process") -> dict[str, dict]:
    figures = {}
    for kind, edit in EDITS.items():
        times = []
        for n in range(count):
            query, correct = edit(root, n)
            started = time.perf_counter()  # from the edit on disk, not the bench's choice of it
            answer = ask(query)
            elapsed = time.perf_counter() - started
            if not correct(answer):
                raise SystemExit(f"{kind} edit {n}: wrong answer to {query!r}: {json.dumps(answer)[:400]}")
            times.append(elapsed)
        figures[kind] = summary_ms(times)
        print(f"edit -> correct answer ({label}), {kind}: median {figures[kind]['median_ms']} ms, "
              f"min {figures[kind]['min_ms']} ms, max {figures[kind]['max_ms']} ms over {count} edits")
    return figures


def time_edits_over_mcp(root: Path, count: int) -> dict[str, dict]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    figures: dict[str, dict] = {}

    async def run() -> None:
        parameters = StdioServerParameters(
            command=sys.executable, args=["-m", "maguyva", "mcp", str(root)],
            env={"MAGUYVA_HOME": os.environ["MAGUYVA_HOME"]},
        )  # fmt: skip
        with open(os.devnull, "w") as quiet:
            async with stdio_client(parameters, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("search", {"query": "warm up"})

                def ask(query: str) -> dict:
                    result = anyio.from_thread.run(session.call_tool, "search", {"query": query, "top_k": 10})
                    return result.structured_content

                figures.update(await anyio.to_thread.run_sync(time_edits, root, count, ask, "over MCP stdio"))

    anyio.run(run)
    return figures


if __name__ == "__main__":
    sys.exit(main())
