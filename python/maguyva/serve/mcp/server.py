"""The MCP server over stdio: the SDK's low-level server answering the tools."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

from maguyva._core import __version__
from maguyva.serve.corpus import Corpus, Searchable
from maguyva.serve.mcp.tools import TOOLS, ToolFailure, call_tool, one_line

logger = logging.getLogger("maguyva.mcp")

INSTRUCTIONS = """\
maguyva searches the source code of the repositories this server was started on. Start with \
`search`: ask in plain words, name a symbol, quote a "literal", or paste a snippet; the question \
is classified and answered by the right mix of semantic, text, structural and graph retrieval. \
When you already know the symbol, `find_symbol`, `callers` and `impact` answer directly; \
`find_related` finds code like the code at a file and line. Results give repository, path and \
1-based inclusive line spans with a short snippet: read the lines you need rather than whole \
files. Every call first re-indexes files that changed on disk."""



# The server ----------------------------------------------------------------------------------


def make_server(corpus: Searchable) -> Any:
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


def serve(
    paths: Sequence[str | os.PathLike[str]],
    *,
    embedder: str = "local",
    on_ray: bool = False,
    ray_address: str | None = None,
) -> None:
    """Serve the repositories at `paths` over stdio until the client disconnects; `on_ray`,
    as shards on the Ray cluster at `ray_address` (None: a local one, see `RayCorpus`)."""
    import anyio
    from mcp.server.stdio import stdio_server

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="maguyva: %(message)s")
    corpus: Searchable
    stop = threading.Event()
    if on_ray:
        from maguyva.distributed import RayCorpus

        # The shards are indexed and their actors started before serving.
        corpus = RayCorpus.build(paths, address=ray_address, embedder=embedder)
        logger.info("serving %d shards on Ray", len(corpus.shards()))
    else:
        local = Corpus.open(paths, embedder=embedder)
        # Index (or bring up to date) every repository and derive what questions read from it
        # while the client connects, so the first question does not pay for it; calls arriving
        # meanwhile wait for their repository, or share what is being derived. Then follow the
        # trees' changes, so that an edit's update is made before the next question comes.
        threading.Thread(target=_prepare_and_follow, args=(local, stop), name="maguyva-prepare", daemon=True).start()
        corpus = local
    server = make_server(corpus)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        stop.set()
        corpus.close()


def _prepare_and_follow(corpus: Corpus, stop: threading.Event) -> None:
    for repository in corpus.repositories:
        try:
            refresh = repository.prepare()
        except Exception as err:  # reported again, as a tool error, when a call needs it
            logger.warning("could not prepare %s: %s", repository.name, one_line(err))
            continue
        if refresh.build is not None:
            logger.info("indexed %s: %d files in %.1f s", repository.name, refresh.build.files, refresh.build.seconds)
    corpus.follow(stop, lambda repository, err: logger.warning("could not bring %s up to date: %s", repository.name, one_line(err)))
