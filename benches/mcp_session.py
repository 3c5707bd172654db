"""An MCP client session against `maguyva mcp` on the development benchmark repositories: every
tool, and a question of each intent per repository, checked, timed and printed as a transcript.

    python benches/mcp_session.py [--repos /work/benchdata/repos] [--names gin requests express click]
                                  [--width 220] [--json out.json]

Starts `maguyva mcp REPO ...` (one server over all the named repositories, as one corpus) with
the SDK's stdio client in a scratch MAGUYVA_HOME, lists the tools, then per repository asks one
question of each of the six intents through `search` (checking the intent and that the first
result comes from that repository) and calls find_symbol, callers, impact, find_related and
index_status. Prints each call and the head of its JSON answer, and the tokens returned against
reading the matched files whole. Exits non-zero if any check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Per repository: one question per intent (the intent it must be classified as), a symbol for
#: the symbol and graph tools, and a location for find_related.
CASES: dict[str, dict[str, Any]] = {
    "gin": {
        "questions": [
            ("where is HandlerFunc defined", "find_definition"),
            ("who calls Context.Next", "find_references"),
            ("what breaks if I change Context.Abort", "impact_analysis"),
            ('"Content-Type"', "exact_match"),
            ("how are route parameters parsed", "understand_code"),
            ("func (c *Context) JSON(code int, obj any) {\n\tc.Render(code, render.JSON{Data: obj})\n}", "find_similar"),
        ],
        "symbol": "Context.Next",
        "location": ("context.go", 190),
    },
    "requests": {
        "questions": [
            ("class Session", "find_definition"),
            ("who calls get_netrc_auth", "find_references"),
            ("what depends on merge_setting", "impact_analysis"),
            ('"Content-Length"', "exact_match"),
            ("how are cookies persisted between requests", "understand_code"),
            ("code similar to merge_hooks", "find_similar"),
        ],
        "symbol": "get_netrc_auth",
        "location": ("src/requests/sessions.py", 61),
    },
    "express": {
        "questions": [
            ("function createApplication", "find_definition"),
            ("who calls res.send", "find_references"),
            ("what breaks if I change res.json", "impact_analysis"),
            ('"Content-Type"', "exact_match"),
            ("how does the router handle errors", "understand_code"),
            ("code similar to res.jsonp", "find_similar"),
        ],
        "symbol": "res.send",
        "location": ("lib/response.js", 130),
    },
    "click": {
        "questions": [
            ("class Command", "find_definition"),
            ("who calls make_context", "find_references"),
            ("what breaks if I change Context.invoke", "impact_analysis"),
            ('"--help"', "exact_match"),
            ("how are options parsed", "understand_code"),
            ("code similar to echo_via_pager", "find_similar"),
        ],
        "symbol": "make_context",
        "location": ("src/click/utils.py", 230),
    },
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=Path, default=Path("/work/benchdata/repos"), help="one tree per repository")
    parser.add_argument("--names", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--width", type=int, default=220, help="characters of each answer to print")
    parser.add_argument("--json", type=Path, help="also write every call and answer as JSON here")
    args = parser.parse_args()
    import anyio

    with tempfile.TemporaryDirectory() as home:
        record: list[dict[str, Any]] = []
        failures = anyio.run(session, args, Path(home), record)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1))
    print(f"\n{len(record)} calls, {len(failures)} failed checks")
    for failure in failures:
        print(f"  FAILED {failure}")
    return 1 if failures else 0


async def session(args: argparse.Namespace, home: Path, record: list[dict[str, Any]]) -> list[str]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    roots = [args.repos / name for name in args.names]
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "maguyva", "mcp", *map(str, roots)], env={"MAGUYVA_HOME": str(home)}
    )
    failures: list[str] = []
    with open(os.devnull, "w") as quiet:
        async with stdio_client(parameters, errlog=quiet) as (read, write), ClientSession(read, write) as client:
            started = time.perf_counter()
            info = await client.initialize()
            tools = (await client.list_tools()).tools
            names = ", ".join(t.name for t in tools)
            print(f"server {info.server_info.name} {info.server_info.version}; tools: {names}")

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
                clock = time.perf_counter()
                result = await client.call_tool(name, arguments)
                ms = (time.perf_counter() - clock) * 1e3
                text = result.content[0].text
                print(f"\n> {name} {json.dumps(arguments)}  [{ms:.0f} ms]")
                shown = text if len(text) <= args.width else text[: args.width] + "..."
                print(f"< {'ERROR ' if result.is_error else ''}{shown}")
                record.append({"tool": name, "arguments": arguments, "ms": round(ms, 1), "error": result.is_error,
                               "answer": result.structured_content if not result.is_error else text})  # fmt: skip
                if result.is_error:
                    failures.append(f"{name} {arguments}: {text}")
                    return None
                return result.structured_content

            status = await call("index_status", {})
            print(f"(indexes ready {time.perf_counter() - started:.1f} s after start)")
            if status is None:
                return failures
            for name in args.names:
                case = CASES[name]
                for query, intent in case["questions"]:
                    out = await call("search", {"query": query, "repo": name, "top_k": 3})
                    if out is None:
                        continue
                    if out["intent"] != intent:
                        failures.append(f"{name} {query!r}: intent {out['intent']}, expected {intent}")
                    if not out["results"]:
                        failures.append(f"{name} {query!r}: no results")
                    tokens = out["tokens"]
                    print(f"  intent {out['intent']} via {out['route']} {out['modalities']}; "
                          f"{tokens['returned']} tokens returned vs {tokens['files_whole']} for the files whole")
                symbol = case["symbol"]
                for tool, arguments, key in [
                    ("find_symbol", {"name": symbol, "repo": name}, "symbols"),
                    ("callers", {"symbol": symbol, "repo": name}, "callers"),
                    ("impact", {"symbol": symbol, "repo": name, "depth": 2}, "dependants"),
                    ("find_related", {"path": case["location"][0], "line": case["location"][1],
                                      "repo": name, "top_k": 3}, "results"),
                ]:  # fmt: skip
                    out = await call(tool, arguments)
                    if out is not None and not out[key]:
                        failures.append(f"{tool} {arguments}: empty {key}")
            # The whole corpus at once: results carry their repository.
            out = await call("search", {"query": "how are errors reported to the client", "top_k": 8})
            if out is not None:
                print(f"  repositories in the top 8: {sorted({r['repo'] for r in out['results']})}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
