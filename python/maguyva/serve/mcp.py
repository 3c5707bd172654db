"""maguyva as a Model Context Protocol server: `maguyva mcp [PATH ...]`, over stdio.

Six tools, each with an input and an output JSON schema (see TOOLS and the README):

- search(query, repo?, top_k?, preset?)   the one question surface: intent, route, results
- find_symbol(name, kind?, repo?)         definitions by name (structural modality)
- callers(symbol, depth?, repo?)          who calls it, transitively to `depth` (graph)
- impact(symbol, depth?, repo?)           everything that depends on it (graph)
- find_related(path, line, repo?, top_k?) code like the code at a location (find_similar)
- index_status(repo?)                     what is indexed, how fresh, what was skipped and why

Every call first brings the repositories it reads up to date (a stat walk; changed files are
re-indexed incrementally), so answers reflect the files on disk. Results are compact JSON with
stable keys, returned both as structured content and as its text; each reports the tokens it
returned against the tokens of reading the files it names whole. A call that cannot be answered
(unknown repository, path outside the served roots, empty query, bad argument) returns a tool
error (`isError: true`) whose text is one sentence, which the model can read and correct. No
file is ever read outside the served roots: paths are resolved (`..`, symbolic links) and must
land inside one, and what a result shows comes from the index, not from the file system.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from maguyva.serve import navigate
from maguyva._core import __version__
from maguyva._core import CorruptIndexError
from maguyva.serve.corpus import Corpus, CorpusResponse
from maguyva.errors import MaguyvaError, ToolInputError
from maguyva.index.store import shown_path
from maguyva.query.intents import INTENTS, MAX_QUERY_CHARS, MODALITIES, PRESETS
from maguyva.serve.repository import Refresh, Repository

logger = logging.getLogger("maguyva.mcp")

#: Token estimate: UTF-8 bytes / BYTES_PER_TOKEN, rounded up. About what the tokenizers of
#: current models give on source code; used for budgets and for the `tokens` report.
BYTES_PER_TOKEN = 4
#: A result's snippet holds the first lines of its span within this many tokens.
SNIPPET_TOKENS = 100
MAX_TOP_K = 50
MAX_DEPTH = 6
#: Lists a tool returns are cut at these lengths (their totals are reported).
MAX_SYMBOLS = 20
MAX_CALLERS = 50
MAX_DEPENDANTS = 100
MAX_SKIPPED_FILES = 50

INSTRUCTIONS = """\
maguyva searches the source code of the repositories this server was started on. Start with \
`search`: ask in plain words, name a symbol, quote a "literal", or paste a snippet; the question \
is classified and answered by the right mix of semantic, text, structural and graph retrieval. \
When you already know the symbol, `find_symbol`, `callers` and `impact` answer directly; \
`find_related` finds code like the code at a file and line. Results give repository, path and \
1-based inclusive line spans with a short snippet: read the lines you need rather than whole \
files. Every call first re-indexes files that changed on disk."""


# Schemas -------------------------------------------------------------------------------------

_REPO = {
    "type": "string",
    "description": "Only this repository: a name from index_status (or its root path). Default: all of them.",
}
_TOP_K = {
    "type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": 10,
    "description": f"How many results, one per file, best first (1-{MAX_TOP_K}; default 10).",
}  # fmt: skip
_PRESET = {
    "type": "string", "enum": list(PRESETS), "default": "default",
    "description": "quick: semantic only (fastest); default: semantic, text and structural; "
    "thorough: adds the dependency graph.",
}  # fmt: skip
_NULLABLE_STRING = {"type": ["string", "null"]}

_TOKENS = {
    "type": "object",
    "description": "Estimated tokens (UTF-8 bytes / 4) of this response, and of reading every file it names whole.",
    "properties": {"returned": {"type": "integer"}, "files_whole": {"type": "integer"}},
    "required": ["returned", "files_whole"],
}
_FRESHNESS = {
    "type": "object",
    "description": "What bringing the index up to date took before answering.",
    "properties": {
        "check_ms": {"type": "number"},
        "reindexed_files": {"type": "integer"},
        "stale": {"type": ["string", "null"], "description": "Why changes may be missing from this answer, else null."},
        "warnings": {"type": "array", "items": {"type": "string"},
                     "description": "What else happened on the way (a damaged index rebuilt, a repository left out)."},
    },
    "required": ["check_ms", "reindexed_files", "stale", "warnings"],
}
_RESULT = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string", "description": "Relative to the repository root, '/'-separated."},
        "start_line": {"type": "integer", "description": "1-based, inclusive."},
        "end_line": {"type": "integer", "description": "1-based, inclusive."},
        "symbol": {**_NULLABLE_STRING, "description": "The definition the span holds, if any."},
        "score": {"type": "number", "description": "The result's score within its repository (higher is better)."},
        "found_by": {
            "type": "object",
            "description": "Modality -> 1-based rank of this result in that modality's list.",
            "additionalProperties": {"type": "integer"},
        },
        "snippet": {"type": "string", "description": f"First lines of the span, within {SNIPPET_TOKENS} tokens."},
    },
    "required": ["repo", "path", "start_line", "end_line", "symbol", "score", "found_by", "snippet"],
}
_ANSWER_PROPERTIES = {
    "intent": {"type": "string", "enum": list(INTENTS)},
    "confidence": {"type": "number"},
    "route": {"type": "string", "enum": ["direct", "rrf"], "description": "direct: one modality; rrf: fused."},
    "modalities": {"type": "array", "items": {"type": "string", "enum": list(MODALITIES)}},
    "results": {"type": "array", "items": _RESULT},
    "tokens": _TOKENS,
    "freshness": _FRESHNESS,
}
_DEFINITION = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "name": {"type": "string"},
        "qualified_name": {"type": "string"},
        "kind": {"type": "string"},
        "signature": {"type": "string"},
        "doc": {"type": "string", "description": "First line of the docstring or doc comment."},
        "dependants": {"type": "integer", "description": "Symbols and files that call or inherit it."},
        "match": {"type": "string", "enum": ["exact", "case-insensitive", "words"]},
    },
    "required": ["repo", "path", "start_line", "end_line", "name", "qualified_name", "kind",
                 "signature", "doc", "dependants", "match"],
}  # fmt: skip
_DEPENDANT = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string"},
        "line": {"type": "integer", "description": "Where the call, import or base class is written."},
        "symbol": {**_NULLABLE_STRING, "description": "The enclosing definition; null for top-level code."},
        "kind": {"type": "string", "description": "Its kind, or \"file\" for top-level code."},
        "depth": {"type": "integer", "description": "Edges between it and the symbol asked about (1: direct)."},
        "via": {"type": "string", "enum": ["call", "import", "inherit"]},
        "uses": {"type": "string", "description": "What it calls, imports or inherits there."},
    },
    "required": ["repo", "path", "line", "symbol", "kind", "depth", "via", "uses"],
}


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def _graph_walk_input(symbol: str, depth_default: int, depth: str) -> dict[str, Any]:
    """The input schema of a walk of the graph from a symbol (callers, impact)."""
    return _object(
        {
            "symbol": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": symbol},
            "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": depth_default,
                      "description": depth},
            "repo": _REPO,
        },
        ["symbol"],
    )


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    run: Callable[[Corpus, dict[str, Any]], dict[str, Any]]


# Tools ---------------------------------------------------------------------------------------


def run_search(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
    answer = corpus.search(args["query"], top_k=args["top_k"], preset=args["preset"], repo=args.get("repo"))
    return {"query": args["query"], **_answer(answer)}


def run_find_related(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
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


def run_find_symbol(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
    found = corpus.find_symbol(args["name"], kind=args.get("kind"), repo=args.get("repo"), limit=MAX_SYMBOLS)
    symbols = [_definition(repo, d) for repo, d in found]
    return {
        "name": args["name"],
        "symbols": symbols,
        "tokens": {"returned": 0, "files_whole": corpus_file_tokens(corpus, [(s["repo"], s["path"]) for s in symbols])},
    }


def run_callers(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
    answer = corpus.callers(args["symbol"], depth=args["depth"], repo=args.get("repo"), limit=MAX_CALLERS)
    found: list[dict[str, Any]] = [
        {"repo": repo, "path": d.path, "line": d.line, "caller": d.symbol, "kind": d.kind, "depth": d.depth,
         "calls": d.uses}
        for repo, d in answer.dependants
    ]  # fmt: skip
    return {
        "symbol": args["symbol"],
        "depth": args["depth"],
        "definitions": [_definition(repo, d) for repo, d in answer.definitions],
        "callers": found,
        "total": answer.total,
        "truncated": answer.total > len(found),
        "tokens": {"returned": 0, "files_whole": corpus_file_tokens(corpus, [(c["repo"], c["path"]) for c in found])},
    }


def run_impact(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
    answer = corpus.impact(args["symbol"], depth=args["depth"], repo=args.get("repo"), limit=MAX_DEPENDANTS)
    found = [_dependant(repo, d) for repo, d in answer.dependants]
    files = sorted({(d["repo"], d["path"]) for d in found})
    by_depth: dict[str, int] = {}
    for d in found:
        by_depth[str(d["depth"])] = by_depth.get(str(d["depth"]), 0) + 1
    return {
        "symbol": args["symbol"],
        "depth": args["depth"],
        "definitions": [_definition(repo, d) for repo, d in answer.definitions],
        "dependants": found,
        "total": answer.total,
        "truncated": answer.total > len(found),
        "files_affected": len(files),
        "by_depth": by_depth,
        "tokens": {"returned": 0, "files_whole": corpus_file_tokens(corpus, files)},
    }


_MATCH_NAMES = {navigate.EXACT: "exact", navigate.CASELESS: "case-insensitive", navigate.SEPARATORLESS: "words"}


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
        "depth": d.depth, "via": d.via, "uses": d.uses,
    }  # fmt: skip


def run_index_status(corpus: Corpus, args: dict[str, Any]) -> dict[str, Any]:
    repositories = corpus.select(args.get("repo"))
    corpus.refresh(repositories)
    return {"repositories": [repository_status(r) for r in repositories]}


def repository_status(repository: Repository) -> dict[str, Any]:
    """What is indexed for one repository, how fresh it is, and what was left out."""
    with repository.open() as index:
        reader = index.reader
        meta = reader.meta
        built_at = float(meta.get("built_at", "0"))
        skipped_files = json.loads(meta.get("skipped_files", "[]"))
        embedder = reader.embedder
        languages: dict[str, int] = {}
        for f in reader.files:
            languages[f.language or "text"] = languages.get(f.language or "text", 0) + 1
        refresh = repository.last_refresh
        return {
            "name": repository.name,
            "root": str(repository.root),
            "index_dir": str(repository.index_dir),
            "generation": reader.generation.name,
            "built_at": _iso(built_at),
            "age_seconds": round(max(0.0, time.time() - built_at), 1),
            "files": len(reader.files),
            "chunks": int(meta.get("count_chunks", len(reader.chunk_file))),
            "symbols": int(meta.get("count_symbols", 0)),
            "edges": int(meta.get("count_edges", 0)),
            "languages": dict(sorted(languages.items(), key=lambda item: (-item[1], item[0]))),
            "embedder": f"{embedder['provider']}/{embedder['model']} ({embedder['dims']} bits)",
            "skipped": reader.skipped,
            "skipped_files": [
                {"path": shown_path(p), "reason": reason} for p, reason, _, _ in skipped_files[:MAX_SKIPPED_FILES]
            ],
            "secrets_included": meta.get("include_secrets") == "true",
            "fresh": refresh is not None and refresh.stale_reason is None,
            "last_refresh": None if refresh is None else {**refresh.to_dict(), "checked_at": _iso(refresh.checked_at)},
        }


def _iso(timestamp: float) -> str:
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).isoformat(timespec="seconds")


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
            "token, a who-calls / what-breaks question, or a pasted snippet. The question is classified "
            "(find_definition, find_references, impact_analysis, exact_match, understand_code, find_similar) "
            "and routed to the retrievers that suit it (semantic, text, structural, graph); results are code "
            "locations, one per file, best first, each with repository, path, 1-based inclusive line span, "
            "enclosing symbol, the modalities that found it with their ranks, and a short snippet. Changed files "
            "are re-indexed before answering. Use this first; read only the lines you need.",
            _object(
                {
                    "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                              "description": "The question, a name, a \"quoted string\" or a snippet "
                              f"(at most {MAX_QUERY_CHARS:,} characters)."},
                    "repo": _REPO,
                    "top_k": _TOP_K,
                    "preset": _PRESET,
                },
                ["query"],
            ),
            _object({"query": {"type": "string"}, **_ANSWER_PROPERTIES},
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
            _object(
                {
                    "name": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                             "description": "A name, possibly qualified."},
                    "kind": {"type": "string", "enum": list(navigate.KINDS),
                             "description": "Only definitions of this kind and its family (function finds "
                             "methods, class finds structs and interfaces)."},
                    "repo": _REPO,
                },
                ["name"],
            ),
            _object({"name": {"type": "string"}, "symbols": {"type": "array", "items": _DEFINITION}, "tokens": _TOKENS},
                    ["name", "symbols", "tokens"]),
            run_find_symbol,
        ),
        Tool(
            "callers",
            "Who calls a symbol",
            "List the code that calls a symbol, from the dependency graph: each caller's repository, path, "
            "the line of the call, the enclosing definition (null for top-level code) and its depth (1: calls it "
            f"directly; up to `depth`: calls something that calls it). Nearest first, at most {MAX_CALLERS}; "
            "`total` counts them all. The symbol is found as find_symbol finds it.",
            _graph_walk_input("The called symbol's name, possibly qualified.", 1,
                              f"How many calls away (1-{MAX_DEPTH}; default 1: direct callers)."),
            _object(
                {
                    "symbol": {"type": "string"}, "depth": {"type": "integer"},
                    "definitions": {"type": "array", "items": _DEFINITION},
                    "callers": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"}, "path": {"type": "string"},
                            "line": {"type": "integer", "description": "The line of the call."},
                            "caller": {**_NULLABLE_STRING,
                                       "description": "The calling definition; null for top-level code."},
                            "kind": {"type": "string"}, "depth": {"type": "integer"},
                            "calls": {"type": "string", "description": "What it calls on that line."},
                        },
                        "required": ["repo", "path", "line", "caller", "kind", "depth", "calls"],
                    }},
                    "total": {"type": "integer"}, "truncated": {"type": "boolean"}, "tokens": _TOKENS,
                },
                ["symbol", "depth", "definitions", "callers", "total", "truncated", "tokens"],
            ),
            run_callers,
        ),
        Tool(
            "impact",
            "What depends on a symbol",
            "The blast radius of changing a symbol: everything that depends on it through calls, imports and "
            "inheritance, transitively up to `depth` edges, nearest first. Each dependant gives repository, "
            "path, the line where the dependency is written, the enclosing definition, its depth and the kind of "
            f"edge; `files_affected` and `by_depth` summarise the list (at most {MAX_DEPENDANTS}; `total` counts all).",
            _graph_walk_input("The symbol's name, possibly qualified.", 3,
                              f"How many edges away (1-{MAX_DEPTH}; default 3)."),
            _object(
                {
                    "symbol": {"type": "string"}, "depth": {"type": "integer"},
                    "definitions": {"type": "array", "items": _DEFINITION},
                    "dependants": {"type": "array", "items": _DEPENDANT},
                    "total": {"type": "integer"}, "truncated": {"type": "boolean"},
                    "files_affected": {"type": "integer"},
                    "by_depth": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "tokens": _TOKENS,
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
            _object(
                {
                    "path": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                             "description": "A file of a served repository."},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line in that file."},
                    "repo": {"type": "string", "description": "The repository `path` is in, when several hold it."},
                    "top_k": _TOP_K,
                    "preset": _PRESET,
                },
                ["path", "line"],
            ),
            _object(
                {
                    "source": {
                        "type": "object",
                        "properties": {
                            "repo": {"type": "string"}, "path": {"type": "string"}, "line": {"type": "integer"},
                            "start_line": {"type": "integer"}, "end_line": {"type": "integer"},
                            "symbol": _NULLABLE_STRING,
                        },
                        "required": ["repo", "path", "line", "start_line", "end_line", "symbol"],
                    },
                    **_ANSWER_PROPERTIES,
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
            _object({"repo": _REPO}),
            _object(
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


# Arguments -----------------------------------------------------------------------------------


def validate_arguments(tool: Tool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments with defaults filled in; ToolInputError (one sentence) if they do not fit
    the tool's input schema."""
    schema = tool.input_schema
    properties: dict[str, dict[str, Any]] = schema["properties"]
    arguments = dict(arguments or {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolInputError(f"unknown argument {unknown[0]!r}; {tool.name} takes {', '.join(properties)}")
    for name in schema["required"]:
        if arguments.get(name) is None:
            raise ToolInputError(f"{name} is required")
    out: dict[str, Any] = {}
    for name, spec in properties.items():
        value = arguments.get(name)
        if value is None:
            if "default" in spec:
                out[name] = spec["default"]
            continue
        out[name] = _checked(name, value, spec)
    return out


#: Characters of a refused argument quoted in its error: a huge one is cut, not echoed whole.
_SHOWN_CHARS = 40


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _checked(name: str, value: Any, spec: dict[str, Any]) -> Any:
    if spec["type"] == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolInputError(f"{name} must be an integer, not {_shown(value)}")
        low, high = spec.get("minimum"), spec.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ToolInputError(f"{name} must be {bounds}, not {_shown(value)}")
        return value
    if not isinstance(value, str):
        raise ToolInputError(f"{name} must be a string, not {_shown(value)}")
    longest = spec.get("maxLength")
    if longest is not None and len(value) > longest:
        raise ToolInputError(f"the {name} is {len(value):,} characters; the limit is {longest:,}")
    if spec.get("minLength") and not value.strip():
        raise ToolInputError(f"the {name} is empty")
    if "enum" in spec and value not in spec["enum"]:
        raise ToolInputError(f"{name} must be one of {', '.join(spec['enum'])}, not {_shown(value)}")
    if "\0" in value:
        raise ToolInputError(f"{name} holds a NUL character")
    return value


# Running -------------------------------------------------------------------------------------


class ToolFailure(Exception):
    """A tool call that failed, with the one sentence to report."""


def call_tool(corpus: Corpus, name: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    """Run a tool: its structured result and the JSON text of it. ToolFailure on any failure."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolFailure(f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    try:
        payload = tool.run(corpus, validate_arguments(tool, arguments))
    except (MaguyvaError, CorruptIndexError, OSError) as err:
        raise ToolFailure(_one_line(err)) from err
    except Exception as err:
        logger.exception("%s failed", name)
        raise ToolFailure(f"internal error in {name}: {type(err).__name__}: {_one_line(err)}") from err
    return payload, with_token_count(payload)


def _one_line(err: BaseException) -> str:
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


def corpus_file_tokens(corpus: Corpus, files: Sequence[tuple[str, str]]) -> int:
    """Estimated tokens of reading the given (repository, path) files whole."""
    wanted: dict[str, set[str]] = {}
    for repo, path in files:
        wanted.setdefault(repo, set()).add(path)
    total = 0
    for repository in corpus.repositories:
        paths = wanted.get(repository.name)
        if not paths:
            continue
        with repository.open() as index:
            total += sum(estimate_tokens_of_size(f.size) for f in index.reader.files if f.path in paths)
    return total


# The server ----------------------------------------------------------------------------------


def make_server(corpus: Corpus) -> Any:
    """An MCP server (the SDK's low-level `Server`) answering the tools over `corpus`."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    listed = [
        types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            annotations=types.ToolAnnotations(
                title=tool.title, read_only_hint=True, idempotent_hint=True, open_world_hint=False
            ),
        )
        for tool in TOOLS.values()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:  # not the tool's failure: a protocol error
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are {', '.join(TOOLS)}")
        try:
            # The work is blocking (file system, index, numpy): a worker thread keeps the
            # event loop free to take concurrent calls.
            payload, text = await anyio.to_thread.run_sync(call_tool, corpus, params.name, params.arguments)
        except ToolFailure as failure:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(failure))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=payload)

    return Server(
        "maguyva", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call
    )


def serve(paths: Sequence[str | os.PathLike[str]], *, embedder: str = "local") -> None:
    """Serve the repositories at `paths` over stdio until the client disconnects."""
    import anyio
    from mcp.server.stdio import stdio_server

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="maguyva: %(message)s")
    corpus = Corpus.open(paths, embedder=embedder)
    server = make_server(corpus)
    # Index (or bring up to date) every repository while the client connects, so the first
    # question does not pay for it; calls arriving meanwhile wait for their repository.
    threading.Thread(target=_prepare, args=(corpus,), name="maguyva-prepare", daemon=True).start()

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        corpus.close()


def _prepare(corpus: Corpus) -> None:
    for repository in corpus.repositories:
        try:
            refresh = repository.refresh()
        except Exception as err:  # reported again, as a tool error, when a call needs it
            logger.warning("could not index %s: %s", repository.name, _one_line(err))
            continue
        if refresh.build is not None:
            logger.info("indexed %s: %d files in %.1f s", repository.name, refresh.build.files, refresh.build.seconds)
