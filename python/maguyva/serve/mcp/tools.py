"""The MCP tools: what each runs, the registry, and running one call to one JSON answer."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from maguyva.errors import MaguyvaError
from maguyva.index.symbols import CASELESS, EXACT, SEPARATORLESS
from maguyva.query.intents import MAX_QUERY_CHARS
from maguyva.serve import navigate
from maguyva.serve.corpus import CorpusResponse, GraphAnswer, Searchable
from maguyva.serve.mcp.schemas import (
    ANSWER_PROPERTIES,
    BYTES_PER_TOKEN,
    DEFINITION,
    DEPENDANT,
    RESOLVED,
    MAX_CALLERS,
    MAX_DEPENDANTS,
    MAX_DEPTH,
    MAX_SYMBOLS,
    NULLABLE_STRING,
    PRESET_ARGUMENT,
    REPO_ARGUMENT,
    SNIPPET_TOKENS,
    TOKENS_REPORT,
    TOP_K_ARGUMENT,
    graph_walk_input,
    object_schema,
    validate_arguments,
)
from maguyva.serve.repository import Refresh
from maguyva.serve.status import MAX_SKIPPED_FILES

logger = logging.getLogger("maguyva.mcp")


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Callable[[Searchable, dict[str, Any]], dict[str, Any]]



# Tools ---------------------------------------------------------------------------------------


def run_search(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    # The arguments are the query's own filters, written as such (values hold no spaces).
    written = [f"path:{p}" for p in args.get("paths", [])] + [f"lang:{name}" for name in args.get("languages", [])]
    query = " ".join([*written, args["query"]])
    answer = corpus.search(query, top_k=args["top_k"], preset=args["preset"], repo=args.get("repo"))
    return {"query": args["query"], **_answer(answer)}


def run_find_related(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    location, answer = corpus.find_related(
        args["path"], args["line"], repo=args.get("repo"), top_k=args["top_k"], preset=args["preset"]
    )
    source = {
        "repo": location.repo, "path": location.path, "line": location.line,
        "start_line": location.start_line, "end_line": location.end_line, "symbol": location.symbol,
    }  # fmt: skip
    return {"source": source, **_answer(answer)}


def _answer(answer: CorpusResponse) -> dict[str, Any]:
    response = answer.response
    results = [
        {
            "repo": repo,
            "path": hit.path,
            "start_line": hit.start_line,
            "end_line": hit.end_line,
            "symbol": hit.symbol,
            "score": round(hit.score, 5),
            "found_by": {name: part.rank + 1 for name, part in hit.modalities.items()},
            "snippet": trim_to_tokens(hit.snippet, SNIPPET_TOKENS),
        }
        for repo, hit in zip(answer.repos, response.results)
    ]
    whole = {(repo, hit.path): size for repo, hit, size in zip(answer.repos, response.results, answer.file_sizes)}
    return {
        "intent": response.intent,
        "confidence": response.confidence,
        "route": response.fusion_strategy,
        "modalities": list(response.modalities_run),
        "results": results,
        "tokens": {"returned": 0, "files_whole": sum(estimate_tokens_of_size(s) for s in whole.values())},
        "freshness": freshness(answer.refreshes.values()),
    }


def run_find_symbol(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    found = corpus.find_symbol(args["name"], kind=args.get("kind"), repo=args.get("repo"), limit=MAX_SYMBOLS)
    symbols = [_definition(repo, d) for repo, d in found]
    return {
        "name": args["name"],
        "symbols": symbols,
        "tokens": {"returned": 0, "files_whole": corpus_file_tokens(corpus, [(s["repo"], s["path"]) for s in symbols])},
    }


def run_callers(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    answer = corpus.callers(args["symbol"], depth=args["depth"], repo=args.get("repo"), limit=MAX_CALLERS)
    found: list[dict[str, Any]] = [
        {"repo": repo, "path": d.path, "line": d.line, "caller": d.symbol, "kind": d.kind, "depth": d.depth,
         "calls": d.uses, "resolved": d.resolution}
        for repo, d in answer.dependants
    ]  # fmt: skip
    files = [(c["repo"], c["path"]) for c in found]
    return _walk_answer(corpus, args, answer, "callers", found, files)


def run_impact(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    answer = corpus.impact(args["symbol"], depth=args["depth"], repo=args.get("repo"), limit=MAX_DEPENDANTS)
    found = [_dependant(repo, d) for repo, d in answer.dependants]
    files = sorted({(d["repo"], d["path"]) for d in found})
    by_depth: dict[str, int] = {}
    for d in found:
        by_depth[str(d["depth"])] = by_depth.get(str(d["depth"]), 0) + 1
    return _walk_answer(
        corpus, args, answer, "dependants", found, files, files_affected=len(files), by_depth=by_depth
    )


def _walk_answer(
    corpus: Searchable,
    args: dict[str, Any],
    answer: GraphAnswer,
    listed_as: str,
    found: list[dict[str, Any]],
    files: list[tuple[str, str]],
    **more: Any,
) -> dict[str, Any]:
    """The answer of a walk of the graph from a symbol: its definitions, what the walk `found`
    (under the key `listed_as`), whether the list was cut, and the tokens of the `files` it names."""
    return {
        "symbol": args["symbol"],
        "depth": args["depth"],
        "definitions": [_definition(repo, d) for repo, d in answer.definitions],
        listed_as: found,
        "total": answer.total,
        "truncated": answer.total > len(found),
        **more,
        "tokens": {"returned": 0, "files_whole": corpus_file_tokens(corpus, files)},
    }


_MATCH_NAMES = {EXACT: "exact", CASELESS: "case-insensitive", SEPARATORLESS: "words"}


def _definition(repo: str, d: navigate.Definition) -> dict[str, Any]:
    return {
        "repo": repo,
        "path": d.path,
        "start_line": d.start_line,
        "end_line": d.end_line,
        "name": d.name,
        "qualified_name": d.qualified_name,
        "kind": d.kind,
        "signature": d.signature[:300],
        "doc": (d.docstring.strip().splitlines() or [""])[0][:300],
        "dependants": d.dependants,
        "match": _MATCH_NAMES[d.tier],
    }


def _dependant(repo: str, d: navigate.Dependant) -> dict[str, Any]:
    return {
        "repo": repo, "path": d.path, "line": d.line, "symbol": d.symbol, "kind": d.kind,
        "depth": d.depth, "via": d.via, "uses": d.uses, "resolved": d.resolution,
    }  # fmt: skip


def run_index_status(corpus: Searchable, args: dict[str, Any]) -> dict[str, Any]:
    return {"repositories": corpus.index_status(args.get("repo"))}


def freshness(refreshes: Iterable[Refresh]) -> dict[str, Any]:
    """What the refreshes before an answer took, summed over its repositories."""
    refreshes = list(refreshes)
    stale = [r.stale_reason for r in refreshes if r.stale_reason]
    return {
        "check_ms": round(sum(r.changes.seconds for r in refreshes) * 1e3, 3),
        "reindexed_files": sum(r.build.parsed_files for r in refreshes if r.build is not None),
        "stale": "; ".join(stale) if stale else None,
        "warnings": [w for r in refreshes for w in r.warnings],
    }


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "search",
            "Search code",
            "Search the indexed repositories with a question in plain words (\"how are failed requests "
            "retried\"), a symbol name (\"parseConfig\", \"Session.request\"), a \"quoted literal\" or error "
            "token, a /regular expression/ (each matching line a result), a who-calls / what-breaks question, or "
            "a pasted snippet. The question is classified "
            "(find_definition, find_references, impact_analysis, exact_match, understand_code, find_similar) "
            "and routed to the retrievers that suit it (semantic, text, structural, graph); results are code "
            "locations, one per file, best first, each with repository, path, 1-based inclusive line span, "
            "enclosing symbol, the modalities that found it with their ranks, and a short snippet. Changed files "
            "are re-indexed before answering. Use this first; read only the lines you need.",
            object_schema(
                {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                              "description": "The question, a name, a \"quoted string\" or a snippet "
                              f"(at most {MAX_QUERY_CHARS:,} characters)."},
                    "repo": REPO_ARGUMENT,
                    "top_k": TOP_K_ARGUMENT,
                    "preset": PRESET_ARGUMENT,
                    "paths": {"type": "array", "maxItems": 20,
                              "items": {"type": "string", "minLength": 1, "pattern": "^\\S+$"},
                              "description": "Only files under these path prefixes or matching these globs "
                              "(\"internal/\", \"**/*_test.go\"); the query's own path: filter."},
                    "languages": {"type": "array", "maxItems": 20,
                                  "items": {"type": "string", "minLength": 1, "pattern": "^\\S+$"},
                                  "description": "Only files in these languages (\"python\", \"go\", \"ts\"; "
                                  "\"text\" for files of no parsed language); the query's own lang: filter."},
                },
                ["query"],
            ),
            object_schema({"query": {"type": "string"}, **ANSWER_PROPERTIES},
                    ["query", "intent", "confidence", "route", "modalities", "results", "tokens", "freshness"]),
            run_search,
        ),
        Tool(
            "find_symbol",
            "Find a definition",
            "Find where a symbol is defined, by name: exact name or qualified name (\"Context.JSON\", "
            "\"Foo::bar\"), else ignoring case, else ignoring word separators (\"parse_config\" finds "
            "\"parseConfig\"). Returns each definition's repository, path, line span, kind, qualified name, "
            "signature and first doc line, project code before tests and vendored code, most depended-on first "
            f"(at most {MAX_SYMBOLS}).",
            object_schema(
                {
                    "name": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                             "description": "A name, possibly qualified."},
                    "kind": {"type": "string", "enum": list(navigate.KINDS),
                             "description": "Only definitions of this kind and its family (function finds "
                             "methods, class finds structs and interfaces)."},
                    "repo": REPO_ARGUMENT,
                },
                ["name"],
            ),
            object_schema({"name": {"type": "string"}, "symbols": {"type": "array", "items": DEFINITION}, "tokens": TOKENS_REPORT},
                    ["name", "symbols", "tokens"]),
            run_find_symbol,
        ),
        Tool(
            "callers",
            "Who calls a symbol",
            "List the code that calls a symbol, from the dependency graph: each caller's repository, path, "
            "the line of the call, the enclosing definition (null for top-level code) and its depth (1: calls it "
            "directly; up to `depth`: calls something that calls it) and how the calls were resolved "
            f"(`resolved`: how far to trust it). Nearest first, at most {MAX_CALLERS}; "
            "`total` counts them all. The symbol is found as find_symbol finds it.",
            graph_walk_input("The called symbol's name, possibly qualified.", 1,
                              f"How many calls away (1-{MAX_DEPTH}; default 1: direct callers)."),
            object_schema(
                {
                    "symbol": {"type": "string"}, "depth": {"type": "integer"},
                    "definitions": {"type": "array", "items": DEFINITION},
                    "callers": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"}, "path": {"type": "string"},
                            "line": {"type": "integer", "description": "The line of the call."},
                            "caller": {**NULLABLE_STRING,
                                       "description": "The calling definition; null for top-level code."},
                            "kind": {"type": "string"}, "depth": {"type": "integer"},
                            "calls": {"type": "string", "description": "What it calls on that line."},
                            "resolved": RESOLVED,
                        },
                        "required": ["repo", "path", "line", "caller", "kind", "depth", "calls", "resolved"],
                    }},
                    "total": {"type": "integer"}, "truncated": {"type": "boolean"}, "tokens": TOKENS_REPORT,
                },
                ["symbol", "depth", "definitions", "callers", "total", "truncated", "tokens"],
            ),
            run_callers,
        ),
        Tool(
            "impact",
            "What depends on a symbol",
            "The blast radius of changing a symbol: everything that depends on it through calls, imports, "
            "inheritance and uses as a value (a function passed on), transitively up to `depth` edges, nearest first. Each dependant gives repository, "
            "path, the line where the dependency is written, the enclosing definition, its depth, the kind of "
            f"edge and how the edges were resolved (`resolved`); `files_affected` and `by_depth` summarise the list (at most {MAX_DEPENDANTS}; `total` counts all).",
            graph_walk_input("The symbol's name, possibly qualified.", 3,
                              f"How many edges away (1-{MAX_DEPTH}; default 3)."),
            object_schema(
                {
                    "symbol": {"type": "string"}, "depth": {"type": "integer"},
                    "definitions": {"type": "array", "items": DEFINITION},
                    "dependants": {"type": "array", "items": DEPENDANT},
                    "total": {"type": "integer"}, "truncated": {"type": "boolean"},
                    "files_affected": {"type": "integer"},
                    "by_depth": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "tokens": TOKENS_REPORT,
                },
                ["symbol", "depth", "definitions", "dependants", "total", "truncated", "files_affected",
                 "by_depth", "tokens"],
            ),
            run_impact,
        ),
        Tool(
            "find_related",
            "Find similar code",
            "Find code similar to the code at a file and line: the code of the chunk holding that line "
            "(a function, a class...) is asked as a pasted snippet, the find_similar intent, over every "
            "served repository, and the chunk itself is left out. `path` is relative to a repository root, "
            "or absolute inside one. The answer has search's shape, with the `source` chunk first.",
            object_schema(
                {
                    "path": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                             "description": "A file of a served repository."},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line in that file."},
                    "repo": {"type": "string", "description": "The repository `path` is in, when several hold it."},
                    "top_k": TOP_K_ARGUMENT,
                    "preset": PRESET_ARGUMENT,
                },
                ["path", "line"],
            ),
            object_schema(
                {
                    "source": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"}, "path": {"type": "string"}, "line": {"type": "integer"},
                            "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                            "symbol": NULLABLE_STRING,
                        },
                        "required": ["repo", "path", "line", "start_line", "end_line", "symbol"],
                    },
                    **ANSWER_PROPERTIES,
                },
                ["source", "intent", "confidence", "route", "modalities", "results", "tokens", "freshness"],
            ),
            run_find_related,
        ),
        Tool(
            "index_status",
            "Index status",
            "What each served repository's index holds (files, chunks, symbols, edges, languages, embedder), "
            "when it was built, whether it is fresh (it is brought up to date first), and what was skipped and "
            f"why (counts by reason; binary or unreadable files by name, at most {MAX_SKIPPED_FILES}).",
            object_schema({"repo": REPO_ARGUMENT}),
            object_schema(
                {"repositories": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"}, "root": {"type": "string"}, "index_dir": {"type": "string"},
                        "generation": {"type": "string"}, "built_at": {"type": "string"},
                        "age_seconds": {"type": "number"}, "files": {"type": "integer"},
                        "chunks": {"type": "integer"}, "symbols": {"type": "integer"}, "edges": {"type": "integer"},
                        "languages": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "embedder": {"type": "string"},
                        "skipped": {"type": "object", "additionalProperties": {"type": "integer"}},
                        "skipped_files": {"type": "array", "items": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
                            "required": ["path", "reason"],
                        }},
                        "secrets_included": {"type": "boolean", "description": (
                            "Whether files named like keys and credentials (id_rsa, *.pem, *.key, .npmrc, "
                            "credentials...) are indexed; left out by default and counted under skipped.secret.")},
                        "fresh": {"type": "boolean"},
                        "last_refresh": {"type": ["object", "null"]},
                    },
                    "required": ["name", "root", "index_dir", "generation", "built_at", "age_seconds", "files",
                                 "chunks", "symbols", "edges", "languages", "embedder", "skipped",
                                 "skipped_files", "secrets_included", "fresh", "last_refresh"],
                }}},
                ["repositories"],
            ),
            run_index_status,
        ),
    )
}  # fmt: skip




# Running -------------------------------------------------------------------------------------


class ToolFailure(Exception):
    """A tool call that failed, with the one sentence to report."""


def call_tool(corpus: Searchable, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Run a tool: its structured result and the JSON text of it. ToolFailure on any failure."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolFailure(f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    try:
        payload = tool.run(corpus, validate_arguments(tool.name, tool.input_schema, arguments))
    except (MaguyvaError, OSError) as err:
        raise ToolFailure(one_line(err)) from err
    except Exception as err:
        logger.exception("%s failed", name)
        raise ToolFailure(f"internal error in {name}: {type(err).__name__}: {one_line(err)}") from err
    return payload, with_token_count(payload)


def one_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return " ".join(text.split())


def with_token_count(payload: dict[str, Any]) -> str:
    """Set payload["tokens"]["returned"] to the estimated tokens of the payload's JSON text
    (which holds that number), and return that text."""
    text = _dumps(payload)
    tokens = payload.get("tokens")
    if isinstance(tokens, dict):
        for _ in range(3):  # the count's own digits can change the count; it settles at once
            tokens["returned"] = estimate_tokens(text)
            text = _dumps(payload)
    return text


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def estimate_tokens(text: str) -> int:
    return estimate_tokens_of_size(len(text.encode("utf-8")))


def estimate_tokens_of_size(size: int) -> int:
    return math.ceil(size / BYTES_PER_TOKEN)


def trim_to_tokens(text: str, budget: int) -> str:
    """The first lines of `text` that fit in `budget` tokens (the first line cut to fit if it
    alone is too long)."""
    limit = budget * BYTES_PER_TOKEN
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        size = len(line.encode("utf-8")) + 1
        if used + size > limit:
            if not kept:
                kept.append(line.encode("utf-8")[: limit - 1].decode("utf-8", errors="ignore"))
            break
        kept.append(line)
        used += size
    return "\n".join(kept)


def corpus_file_tokens(corpus: Searchable, files: Sequence[tuple[str, str]]) -> int:
    """Estimated tokens of reading the given (repository, path) files whole."""
    return sum(estimate_tokens_of_size(size) for size in corpus.file_sizes(files).values())
