"""The `maguyva` command line: `maguyva index [PATH]`, `maguyva search QUERY [PATH ...]` and
`maguyva mcp [PATH ...]`."""

from __future__ import annotations

import sys

# Nothing else is imported before `main` runs: every import happens inside it, where Ctrl-C in
# the first moments of a run exits as quietly as later (a traceback from an interrupted import
# is what the user would see otherwise). Hence the imports inside the functions below.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import re
    from collections.abc import Sequence

    from maguyva.index.build import BuildSummary
    from maguyva.query.results import Hit
    from maguyva.serve.corpus import CorpusResponse

SNIPPET_LINES = 3


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parser().parse_args(ray_address_joined(sys.argv[1:] if argv is None else list(argv)))
        from maguyva.errors import MaguyvaError

        try:
            code: int = args.run(args)
            return code
        except BrokenPipeError:
            # The reader went away (`maguyva search ... | head`): not an error worth reporting.
            import os

            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - swallow the final flush
            return 0
        except (MaguyvaError, OSError, ValueError) as err:
            print(f"maguyva: {printable(' '.join(str(err).split()))}", file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        return 130


def parser() -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    top = argparse.ArgumentParser(prog="maguyva", description="Search a codebase by asking a question.")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    index = commands.add_parser("index", help="build or rebuild the index of a repository")
    index.add_argument("path", nargs="?", default=".", help="repository root (default: .)")
    add_index_dir(index, Path)
    index.add_argument("--embedder", choices=["local", "voyage"], default="local",
                       help="embedding provider (default: local, offline; voyage needs VOYAGE_API_KEY)")
    index.add_argument("--rebuild", action="store_true",
                       help="index every file again instead of reusing what is unchanged")
    index.add_argument("--include-secrets", action="store_true", default=None,
                       help="also index files named like keys and credentials (id_rsa, *.pem, *.key, .npmrc, "
                       "credentials...), left out by default; kept for later updates")
    index.add_argument("--quiet", action="store_true", help="print nothing but errors and warnings")
    index.set_defaults(run=run_index)

    search = commands.add_parser(
        "search",
        help="search one or several repositories (indexing what changed first)",
        description="Search one or several repositories as one corpus. Each keeps its own index, which "
        "is built when missing and brought up to date (changed files re-indexed) before answering.",
    )
    search.add_argument("query", help="the question, a name, a \"quoted string\", or a regular expression "
                        "written /pattern/ or regex:pattern (each matching line a result)")
    search.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                        help="repository roots or git URLs (cloned shallowly into the cache folder), "
                        "searched as one corpus (default: .)")
    add_pull(search)
    search.add_argument("--top-k", type=int, default=10, help="how many results (default: 10)")
    search.add_argument("--preset", choices=["quick", "default", "thorough"], default="default",
                        help="quick: semantic only; default: semantic, text, structural; thorough: all four")
    search.add_argument("--ranking", choices=["learned", "hand"], default="learned",
                        help="how the ranking signals are weighed: learned (the shipped model, default) "
                             "or hand (their hand-set weights, for comparison)")
    search.add_argument("--json", action="store_true", help="print the response as JSON (stable keys)")
    search.add_argument("--explain", action="store_true",
                        help="show intent, confidence, route and what made each result's score")
    add_index_dir(search, Path)
    add_ray(search)
    search.set_defaults(run=run_search)

    mcp = commands.add_parser(
        "mcp",
        help="serve repositories to coding agents over the Model Context Protocol (stdio)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=MCP_DESCRIPTION,
    )
    mcp.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                     help="repository roots or git URLs to serve, searched as one corpus (default: .)")
    add_pull(mcp)
    mcp.add_argument("--embedder", choices=["local", "voyage"], default="local",
                     help="embedding provider for repositories not indexed yet (default: local)")
    add_ray(mcp)
    mcp.set_defaults(run=run_mcp)
    return top


def add_pull(command: argparse.ArgumentParser) -> None:
    command.add_argument("--pull", action="store_true",
                         help="fetch the newest commit of the repositories given by URL before indexing them")


def local_paths(args: argparse.Namespace) -> list[str]:
    """The command's paths, each git URL replaced by its clone (made or updated first)."""
    from maguyva.serve.clones import checkout, is_git_url

    return [str(checkout(p, pull=args.pull)) if is_git_url(p) else p for p in args.paths]


#: What `--ray` stands for when no address follows it: a local Ray, started for the command.
LOCAL_RAY = "local"


def add_ray(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ray", metavar="ADDRESS", nargs="?", const=LOCAL_RAY, default=None,
        help="index and serve the repositories as shards on Ray (the maguyva[ray] extra): join the "
        "cluster at ADDRESS (auto, ray://host:port, host:port), or start a local one when no address follows",
    )  # fmt: skip


def ray_address_joined(argv: list[str]) -> list[str]:
    """`argv` with `--ray ADDRESS` written `--ray=ADDRESS`, and a bare `--ray` as `--ray=local`:
    the word after `--ray` is its address only when it looks like one, so that
    `maguyva search --ray QUERY PATH` keeps QUERY as the query."""
    out: list[str] = []
    position = 0
    while position < len(argv):
        word = argv[position]
        if word == "--":
            out.extend(argv[position:])
            break
        if word == "--ray":
            following = argv[position + 1] if position + 1 < len(argv) else ""
            if looks_like_ray_address(following):
                out.append(f"--ray={following}")
                position += 2
                continue
            out.append(f"--ray={LOCAL_RAY}")
        else:
            out.append(word)
        position += 1
    return out


def looks_like_ray_address(word: str) -> bool:
    """"auto", "local", a ray:// URL, or host:port."""
    import re

    return word in ("auto", LOCAL_RAY) or word.startswith("ray://") or re.fullmatch(r"[\w.-]+:\d{1,5}", word) is not None


MCP_DESCRIPTION = """\
Serve the repositories at PATH ... to a coding agent over the Model Context Protocol (stdio).
Each repository keeps its own index (built on start when missing, and what questions read from
it derived while the agent connects); a tree seen to change is re-indexed once it is quiet, and
before every answer the server checks what changed on disk and re-indexes those files.

tools:
  search(query, repo?, top_k?, preset?)   ask anything: intent, route and ranked results
  find_symbol(name, kind?, repo?)         where a symbol is defined
  callers(symbol, depth?, repo?)          who calls it (transitively up to depth)
  impact(symbol, depth?, repo?)           everything that depends on it
  find_related(path, line, repo?, top_k?) code like the code at a location
  index_status(repo?)                     what is indexed, how fresh, what was skipped

configure an agent (the "mcpServers" entry of Claude Code's .mcp.json, Claude Desktop, Cursor):
  {"mcpServers": {"maguyva": {"command": "maguyva", "args": ["mcp", "/path/to/repo"]}}}
"""


def add_index_dir(command: argparse.ArgumentParser, path: type) -> None:
    command.add_argument(
        "--index-dir", type=path, help="where the index lives (default: a per-user cache folder)"
    )


def say(message: str) -> None:
    print(printable(message), file=sys.stderr, flush=True)


#: What a terminal would act on rather than show: C0 controls but tab, DEL, C1 controls, and
#: the marks that reorder text (bidirectional overrides and isolates), plus lone surrogates
#: (bytes of a file name that is not UTF-8).
_UNPRINTABLE = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def printable(text: str) -> str:
    """`text` safe to write to a terminal: a newline in a file name cannot forge a result line,
    nor an escape sequence reach the terminal. Each such character is shown escaped (`\\n`,
    `\\x1b`, `\\u202e`); the bytes of a name that is not UTF-8 as U+FFFD."""
    import re  # compiled once and cached by `re`

    return re.sub(_UNPRINTABLE, _escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def run_index(args: argparse.Namespace) -> int:
    from maguyva.serve.api import Index, repository_root

    root = repository_root(args.path)
    with Index.build(
        root, index_dir=args.index_dir, embedder=args.embedder, progress=not args.quiet, rebuild=args.rebuild,
        include_secrets=args.include_secrets,
    ) as index:
        summary = index.summary
    if summary is not None:
        for warning in summary.warnings:
            say(f"maguyva: {warning}")
        if not args.quiet:
            say(describe(summary))
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
    from maguyva.errors import UsageError

    if not args.query.strip():
        raise UsageError("the query is empty")
    if args.top_k < 1:
        raise UsageError(f"--top-k must be at least 1, not {args.top_k}")
    if args.index_dir is not None and len(args.paths) > 1:
        raise UsageError("--index-dir applies to one repository; leave it out to search several")
    from maguyva.index.progress import Progress
    from maguyva.serve.corpus import Corpus

    args.paths = local_paths(args)
    if args.ray is not None:
        if args.index_dir is not None:
            raise UsageError("--index-dir does not apply with --ray: each shard's index lives on its node")
        from maguyva.distributed import RayCorpus

        with RayCorpus.build(args.paths, address=ray_address(args.ray), progress=Progress()) as distributed:
            answer = distributed.search(args.query, top_k=args.top_k, preset=args.preset, ranking=args.ranking)
            show_answer(args, answer, several=len(distributed.names()) > 1)
        return 0
    with Corpus.open(args.paths, index_dir=args.index_dir, progress=Progress()) as corpus:
        answer = corpus.search(args.query, top_k=args.top_k, preset=args.preset, ranking=args.ranking)
        show_answer(args, answer, several=len(corpus.repositories) > 1)
    return 0


def ray_address(given: str) -> str | None:
    """The address to give `RayCorpus.build` for the `--ray` option's value."""
    return None if given == LOCAL_RAY else given


def show_answer(args: argparse.Namespace, answer: CorpusResponse, several: bool) -> None:
    say_refresh_warnings(answer)  # on stderr in both forms: --json's stdout stays JSON
    if answer.partial:
        say(f"maguyva: partial answer: {', '.join(answer.partial)} did not answer")
    if args.json:
        # One repository answers in Index.search's shape; several add each result's "repo".
        import json

        shown = answer.to_dict() if several else answer.response.to_dict()
        if answer.partial:
            shown["partial"] = list(answer.partial)
        print(json.dumps(shown, indent=2))
    else:
        print_response(answer, explain=args.explain, several=several)


def run_mcp(args: argparse.Namespace) -> int:
    from maguyva.serve.api import repository_root
    from maguyva.serve.mcp import serve  # the MCP SDK is imported only to serve

    args.paths = local_paths(args)
    if args.ray is None:
        for path in args.paths:
            repository_root(path)  # a wrong path is reported now, not as every tool call's error
    if args.ray is None:
        serve(args.paths, embedder=args.embedder)
    else:
        serve(args.paths, embedder=args.embedder, on_ray=True, ray_address=ray_address(args.ray))
    return 0


def explanation(hit: Hit) -> str:
    """What made a result's score: each modality's rank and contribution, then, with the learned
    ranking, each feature's part of the score (`maguyva.query.rank`), or the hand-set post-fusion
    bonuses and factor (`maguyva.query.rank.signals`)."""
    parts = [f"{name} #{part.rank + 1} (+{part.contribution:.4f})" for name, part in hit.modalities.items()]
    if hit.features:
        found = "; ".join(parts) or "no modality (added by a ranking signal)"
        weighed = " ".join(f"{'+' if v >= 0 else '-'} {abs(v):.4f} {name}" for name, v in hit.features.items())
        text = f"{found}; score = {weighed.removeprefix('+ ')}"
        if hit.placed_by:
            first, last = hit.placed_by
            text += f" (the file's place and score are lines {first}-{last}'s; these lines are its best match)"
        return text
    bonuses = {name: value for name, value in hit.adjustments.items() if not name.endswith("_factor")}
    factors = [f"{value:g} ({name.removesuffix('_factor').replace('_', ' ')})"
               for name, value in hit.adjustments.items() if name.endswith("_factor")]
    parts += [f"{name} (+{value:.4f})" for name, value in bonuses.items()]
    text = " + ".join(parts) or "no modality (added by a post-fusion signal)"
    return f"({text}) x {' x '.join(factors)}" if factors else text


def say_refresh_warnings(answer: CorpusResponse) -> None:
    """What the refresh before the answer could not do (the answer may be stale), one line each."""
    for refresh in answer.refreshes.values():
        for warning in refresh.warnings:
            say(f"maguyva: {warning}")
        if refresh.stale_reason:
            say(f"maguyva: {refresh.stale_reason}")


def print_response(answer: CorpusResponse, explain: bool, several: bool = False) -> None:
    response = answer.response
    if explain:
        subject = f", subject {response.subject!r}" if response.subject else ""
        reindexed = sum(r.build.parsed_files for r in answer.refreshes.values() if r.build is not None)
        print(printable(
            f"intent {response.intent} ({response.confidence:.2f}, rule {response.rule}{subject}); "
            f"route {response.fusion_strategy} over {', '.join(response.modalities_run)}; "
            f"ranking {response.ranking}; "
            f"{response.elapsed_ms:.1f} ms; {reindexed} files re-indexed first"
        ))
    if not response.results:
        print("no results")
    for repo, hit in zip(answer.repos, response.results):
        symbol = f"  {hit.symbol}" if hit.symbol else ""
        where = f"{repo}:{hit.path}" if several else hit.path
        print(printable(f"{where}:{hit.start_line}-{hit.end_line}{symbol}"))
        if explain:
            print(f"    score {hit.score:.4f} = {explanation(hit)}")
        for line in hit.snippet.split("\n")[:SNIPPET_LINES]:
            print(f"    {printable(line[:160])}")


if __name__ == "__main__":
    sys.exit(main())
