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

from maguyva.serve.mcp.schemas import MAX_TOP_K, SNIPPET_TOKENS, validate_arguments
from maguyva.serve.mcp.server import INSTRUCTIONS, make_server, serve
from maguyva.serve.mcp.tools import TOOLS, Tool, ToolFailure, call_tool, estimate_tokens, trim_to_tokens

__all__ = [
    "INSTRUCTIONS",
    "MAX_TOP_K",
    "SNIPPET_TOKENS",
    "TOOLS",
    "Tool",
    "ToolFailure",
    "call_tool",
    "estimate_tokens",
    "make_server",
    "serve",
    "trim_to_tokens",
    "validate_arguments",
]
