"""The `maguyva` command line: `maguyva index [PATH]` and `maguyva search QUERY [PATH]`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from maguyva._core import CorruptIndexError
from maguyva.api import Index, repository_root
from maguyva.index.build import BuildSummary
from maguyva.index.progress import Progress
from maguyva.index.store import IndexNotFoundError, IndexStoreError
from maguyva.query.retrievers.text import bm25_rank, matching_lines, query_terms

SNIPPET_LINES = 3


class UsageError(Exception):
    """A mistake in the command line, reported as one line."""


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (UsageError, IndexStoreError, OSError, CorruptIndexError, ValueError) as err:
        print(f"maguyva: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="maguyva", description="Search a codebase by asking a question.")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    index = commands.add_parser("index", help="build or rebuild the index of a repository")
    index.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    add_index_dir(index)
    index.add_argument("--embedder", choices=["local", "voyage"], default="local",
                       help="embedding provider (default: local, offline; voyage needs VOYAGE_API_KEY)")
    index.add_argument("--quiet", action="store_true", help="print nothing but errors")
    index.set_defaults(run=run_index)

    search = commands.add_parser("search", help="search a repository (indexing it first if needed)")
    search.add_argument("query", help="the question, a name, or a \"quoted string\"")
    search.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    search.add_argument("--top-k", type=int, default=10, help="how many results (default: 10)")
    search.add_argument("--json", action="store_true", help="print results as JSON")
    add_index_dir(search)
    search.set_defaults(run=run_search)
    return top


def add_index_dir(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--index-dir", type=Path, help="where the index lives (default: a per-user cache folder)"
    )


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_index(args: argparse.Namespace) -> int:
    root = repository_root(args.path)
    index = Index.build(root, index_dir=args.index_dir, embedder=args.embedder, progress=not args.quiet)
    if not args.quiet and index.summary is not None:
        say(describe(index.summary))
    return 0


def describe(summary: BuildSummary) -> str:
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(summary.skipped.items())) or "none"
    return (
        f"indexed {summary.files} files: {summary.chunks} chunks, {summary.symbols} symbols, "
        f"{summary.edges} edges in {summary.seconds:.2f} s "
        f"({summary.parsed_files} parsed, {summary.reused_files} unchanged, {summary.embedded_chunks} chunks embedded); "
        f"skipped: {skipped}; index {summary.index_bytes / 1e6:.1f} MB in {summary.index_dir}"
    )


def run_search(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise UsageError("the query is empty")
    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, not {args.top_k}")
    root = repository_root(args.path)
    try:
        index = Index.open(root, index_dir=args.index_dir)
    except IndexNotFoundError:
        index = Index.build(root, index_dir=args.index_dir, progress=Progress())
    reader = index.reader
    terms = query_terms(args.query)
    hits = bm25_rank(reader.text, terms, args.top_k)
    lines = matching_lines(reader.text, [hit.doc_id for hit in hits], terms)
    results = []
    for hit in hits:
        matched = lines[hit.doc_id]
        chunk = reader.chunk_at(hit.doc_id, matched[0] if matched else 1)
        start, end = (int(reader.chunk_start[chunk]), int(reader.chunk_end[chunk])) if chunk is not None else (1, 1)
        results.append(
            {
                "path": reader.files[hit.doc_id].path,
                "start_line": start,
                "end_line": end,
                "symbol": reader.chunk_symbol[chunk] if chunk is not None else None,
                "score": round(hit.score, 4),
                "lines": matched,
                "snippet": snippet(reader.text.doc_bytes(hit.doc_id), matched),
            }
        )
    if args.json:
        print(json.dumps({"query": args.query, "terms": terms, "results": results}, indent=2))
    else:
        print_results(results)
    return 0


def snippet(content: bytes, lines: list[int]) -> list[tuple[int, str]]:
    """The first few matching lines, numbered, decoded leniently."""
    text = content.decode("utf-8", errors="replace").splitlines()
    return [(n, text[n - 1].strip()[:160]) for n in lines[:SNIPPET_LINES] if 0 < n <= len(text)]


def print_results(results: list[dict]) -> None:
    if not results:
        print("no results")
    for result in results:
        symbol = f"  {result['symbol']}" if result["symbol"] else ""
        print(f"{result['path']}:{result['start_line']}-{result['end_line']}{symbol}  (score {result['score']})")
        for number, line in result["snippet"]:
            print(f"  {number:>5}: {line}")


if __name__ == "__main__":
    sys.exit(main())
