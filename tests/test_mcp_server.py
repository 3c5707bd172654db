"""The MCP server: its tools called directly, then end to end with the SDK's own client over
stdio (list the tools, call each, errors, concurrent calls, fresh answers after an edit)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from fixture_repos import SHOP, TOOLS, write_file, write_tree
from mcp import ClientSession, StdioServerParameters, stdio_client

from maguyva.serve.corpus import Corpus
from maguyva.serve.mcp import (
    SNIPPET_TOKENS,
    ToolFailure,
    call_tool,
    estimate_tokens,
    trim_to_tokens,
)
from maguyva.serve.mcp import (
    TOOLS as SERVER_TOOLS,
)

SECRET = "TOP SECRET CONTENT"


@pytest.fixture()
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    shop = write_tree(tmp_path / "shop", SHOP)
    tools = write_tree(tmp_path / "tools", TOOLS)
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    os.symlink(tmp_path / "secret.txt", shop / "app" / "leak.py")
    os.symlink(tmp_path, shop / "up")
    return shop, tools


@pytest.fixture()
def corpus(roots):
    with Corpus.open(list(roots)) as opened:
        yield opened


def call(corpus: Corpus, tool: str, /, **arguments: Any) -> dict[str, Any]:
    payload, text = call_tool(corpus, tool, arguments)
    jsonschema.validate(payload, SERVER_TOOLS[tool].output_schema)
    assert json.loads(text) == payload
    if "tokens" in payload:
        assert payload["tokens"]["returned"] == estimate_tokens(text)
    return payload


def failure(corpus: Corpus, tool: str, /, **arguments: Any) -> str:
    with pytest.raises(ToolFailure) as caught:
        call_tool(corpus, tool, arguments)
    message = str(caught.value)
    assert "\n" not in message and message.count(". ") == 0, "one sentence"
    return message


# The tools, called directly -----------------------------------------------------------------


def test_search_answers_each_intent_with_repository_lines_and_snippets(corpus):
    cases = {
        "where is parse_config defined": ("find_definition", "app/config.py"),
        "who calls parse_config": ("find_references", "app/server.py"),
        "what breaks if I change load_settings": ("impact_analysis", "app/config.py"),
        '"ECONNREFUSED"': ("exact_match", "app/server.py"),
        "how is the server started with retries": ("understand_code", None),
        "code similar to retry_start": ("find_similar", None),
    }
    for query, (intent, first) in cases.items():
        out = call(corpus, "search", query=query)
        assert out["intent"] == intent, query
        assert out["route"] in ("direct", "rrf") and out["modalities"]
        assert out["results"], query
        if first is not None:
            assert (out["results"][0]["repo"], out["results"][0]["path"]) == ("shop", first), query
        for result in out["results"]:
            assert estimate_tokens(result["snippet"]) <= SNIPPET_TOKENS
            assert 1 <= result["start_line"] <= result["end_line"]
            assert all(rank >= 1 for rank in result["found_by"].values())
        assert out["freshness"]["stale"] is None and out["freshness"]["check_ms"] >= 0
    out = call(corpus, "search", query="in-memory cache", repo="tools", top_k=1, preset="quick")
    assert [(r["repo"], r["path"]) for r in out["results"]] == [("tools", "lib/cache.js")]
    assert out["route"] == "direct" and out["modalities"] == ["semantic"]


def test_tokens_returned_against_files_whole(corpus):
    out = call(corpus, "search", query='"ECONNREFUSED"')
    whole = sum(-(-len(SHOP[r["path"]].encode()) // 4) for r in out["results"])
    assert out["tokens"]["files_whole"] == whole


def test_find_symbol_callers_impact(corpus):
    out = call(corpus, "find_symbol", name="Server.start")
    [symbol] = out["symbols"]
    assert (symbol["repo"], symbol["path"], symbol["start_line"], symbol["kind"], symbol["match"]) == (
        "shop", "app/server.py", 10, "method", "exact")  # fmt: skip
    assert call(corpus, "find_symbol", name="createcache")["symbols"][0]["match"] == "case-insensitive"
    assert call(corpus, "find_symbol", name="Server", kind="function")["symbols"] == []

    out = call(corpus, "callers", symbol="Server.start", depth=2)
    assert [(c["caller"], c["path"], c["line"], c["depth"], c["calls"], c["resolved"]) for c in out["callers"]] == [
        ("retry_start", "app/retry.py", 8, 1, "Server.start", "imported"),  # app.server, which it imports
        ("main", "app/cli.py", 5, 2, "retry_start", "imported"),
    ]
    assert out["total"] == 2 and not out["truncated"]
    assert out["definitions"][0]["qualified_name"] == "Server.start"

    out = call(corpus, "impact", symbol="parse_config")
    assert out["definitions"][0]["path"] == "app/config.py"
    dependants = {(d["symbol"], d["depth"], d["via"], d["resolved"]) for d in out["dependants"]}
    assert ("Server.__init__", 1, "call", "imported") in dependants  # `from app.config import parse_config`
    assert out["files_affected"] == len({(d["repo"], d["path"]) for d in out["dependants"]})
    assert sum(out["by_depth"].values()) == len(out["dependants"])


def test_find_related_and_index_status(corpus, roots):
    shop, _ = roots
    out = call(corpus, "find_related", path="app/retry.py", line=6)
    assert out["source"]["path"] == "app/retry.py" and out["source"]["symbol"] == "retry_start"
    assert out["intent"] == "find_similar" and out["results"]
    absolute = call(corpus, "find_related", path=str(shop / "app" / "retry.py"), line=6)
    assert absolute["source"] == out["source"]

    [status] = call(corpus, "index_status", repo="shop")["repositories"]
    assert status["name"] == "shop" and status["root"] == str(shop)
    assert status["files"] == 6 and status["fresh"] and status["last_refresh"]["changed_files"] == 0
    assert status["skipped"] == {"binary": 1, "symlink": 2}
    assert status["skipped_files"] == [{"path": "assets/logo.png", "reason": "binary"}]
    assert status["languages"]["python"] == 5
    assert [r["name"] for r in call(corpus, "index_status")["repositories"]] == ["shop", "tools"]


ERRORS = [
    ("search", {"query": "   "}, "the query is empty"),
    ("search", {}, "query is required"),
    ("search", {"query": "x", "repo": "nope"}, "unknown repository 'nope'; the repositories are shop, tools"),
    ("search", {"query": "x", "top_k": 0}, "top_k must be between 1 and 50, not 0"),
    ("search", {"query": "x", "top_k": "3"}, 'top_k must be an integer, not "3"'),
    ("search", {"query": "x", "preset": "fast"}, "preset must be one of quick, default, thorough, not \"fast\""),
    ("search", {"query": "x", "k": 3}, "unknown argument 'k'; search takes query, repo, top_k, preset"),
    ("find_symbol", {"name": "x", "kind": "klass"}, "kind must be one of function, method, macro, class, "),
    ("callers", {"symbol": "x", "depth": 99}, "depth must be between 1 and 6, not 99"),
    ("find_related", {"path": "app/config.py", "line": 500}, "line 500 is outside app/config.py (lines 1-8)"),
    ("find_related", {"path": "assets/logo.png", "line": 1}, "'assets/logo.png' is not an indexed file of shop"),
    ("nope", {}, "unknown tool 'nope'; the tools are search, find_symbol, callers, impact, find_related, "),
]


def test_errors_are_one_sentence(corpus):
    for tool, arguments, message in ERRORS:
        assert failure(corpus, tool, **arguments).startswith(message), (tool, arguments)


def test_no_request_reads_outside_the_roots(corpus, roots):
    shop, _ = roots
    outside = ["../secret.txt", "app/../../secret.txt", str(shop.parent / "secret.txt"), "app/leak.py",
               "up/secret.txt", "/etc/passwd", "up/shop/app/config.py/../../../secret.txt"]  # fmt: skip
    for path in outside:
        message = failure(corpus, "find_related", path=path, line=1)
        assert "outside the indexed roots" in message, path
        assert SECRET not in message
    for query in (SECRET, f'"{SECRET}"', "secret"):
        for result in call(corpus, "search", query=query)["results"]:
            assert SECRET not in result["snippet"] and result["path"] != "app/leak.py"
    for tool, arguments in [("find_symbol", {"name": "secret"}), ("index_status", {})]:
        _, text = call_tool(corpus, tool, arguments)
        assert SECRET not in text and "leak.py" not in text


def test_a_server_prepares_each_repository_and_what_its_questions_derive(roots, monkeypatch, caplog):
    import threading

    from maguyva.index import freshness, symbols
    from maguyva.serve.api import Index
    from maguyva.serve.mcp import server

    made: list[int] = []
    make = symbols.SymbolTable.__init__

    def counting(self, reader):
        made.append(id(reader))
        make(self, reader)

    monkeypatch.setattr(symbols.SymbolTable, "__init__", counting)
    monkeypatch.delenv("MAGUYVA_NO_WATCH", raising=False)
    walks: list[str] = []
    walk = freshness.TreeWatch.walk

    def counting_walks(self, *args):
        walks.append(str(self._core.root))
        return walk(self, *args)

    monkeypatch.setattr(freshness.TreeWatch, "walk", counting_walks)
    with Corpus.open(list(roots)) as corpus:
        for repository in corpus.repositories:
            repository.prepare()
        assert len(made) == 2  # one table per repository, derived before any question
        for repository in corpus.repositories:
            with repository.open() as index:  # and what a question about callers reads
                assert "symbols_by_name" in vars(index.reader)
        watched = all(r.watched_changes() is not None for r in corpus.repositories)
        walks.clear()
        call(corpus, "search", query="where are orders totalled", top_k=3)
        assert len(made) == 2
        if watched:  # the walk after the one that began watching was made too
            assert walks == []
    # A repository that cannot be warmed is left to its first question, and the others are
    # prepared all the same.
    made.clear()
    warmed: list[str] = []
    original = Index.warm

    def warm(self):
        warmed.append(self.reader.root.name)
        if self.reader.root.name == "shop":
            raise OSError("the index cannot be read")
        original(self)

    monkeypatch.setattr(Index, "warm", warm)
    stopped = threading.Event()
    stopped.set()  # the server's preparation, then no following
    with Corpus.open(list(roots)) as corpus, caplog.at_level("WARNING", logger="maguyva.mcp"):
        server._prepare_and_follow(corpus, stopped)
        assert sorted(warmed) == ["shop", "tools"] and len(made) == 1
        assert "could not prepare shop: the index cannot be read" in caplog.text
        assert call(corpus, "search", query="where are orders totalled", top_k=3)["results"]


def test_a_server_brings_an_edited_repository_up_to_date_before_it_is_asked(roots, monkeypatch):
    import contextvars
    import threading

    from maguyva import config
    from maguyva.index import build as build_module

    monkeypatch.delenv("MAGUYVA_NO_WATCH", raising=False)
    shop, _ = roots
    with Corpus.open(list(roots)) as corpus:
        for each in corpus.repositories:
            each.prepare()
        repository = next(r for r in corpus.repositories if r.root == shop.resolve())
        if repository.watched_changes() is None:
            pytest.skip("the tree cannot be watched here")
        stop = threading.Event()
        with config.using(config.current().but(FOLLOW_QUIET_SECONDS=0.2, FOLLOW_POLL_SECONDS=0.05)):
            context = contextvars.copy_context()
        follower = threading.Thread(target=context.run, args=(corpus.follow, stop), daemon=True)
        follower.start()
        try:
            before = repository.last_refresh
            edited_at = time.time()
            write_file(shop, "app/retry.py", "def backoff_with_jitter(attempt):\n    return 2 ** attempt\n")
            for _ in range(300):  # at most 15 s
                done = repository.last_refresh
                if done is not before and done is not None and done.build is not None and done.checked_at >= edited_at:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the edit was not indexed without a question")
            builds: list[object] = []
            real = build_module.build_index
            monkeypatch.setattr(build_module, "build_index", lambda *a, **k: builds.append(a) or real(*a, **k))
            found = call(corpus, "search", query="backoff_with_jitter", top_k=3)
            assert found["results"][0]["path"].endswith("app/retry.py")
            assert builds == []  # the question found the update made
        finally:
            stop.set()
            follower.join(5)
        assert not follower.is_alive()


def test_trim_to_tokens():
    text = "short line\n" + "x" * 1000 + "\nlast"
    assert trim_to_tokens(text, 10) == "short line"
    assert trim_to_tokens("y" * 1000, 10) == "y" * 39
    assert trim_to_tokens("a\nb", 10) == "a\nb"


# End to end over stdio with the SDK's client -----------------------------------------------


def server_parameters(roots: tuple[Path, ...], home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "maguyva", "mcp", *map(str, roots)],
        env={"MAGUYVA_HOME": str(home)},
    )


async def with_session(roots: tuple[Path, ...], home: Path, scenario) -> None:
    # A server that hangs fails the test instead of the whole run.
    with anyio.fail_after(120), open(os.devnull, "w") as quiet:
        async with stdio_client(server_parameters(roots, home), errlog=quiet) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await scenario(session)


def structured(result) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def test_stdio_session_lists_and_calls_every_tool(roots, tmp_path):
    async def scenario(session: ClientSession) -> None:
        listed = (await session.list_tools()).tools
        assert [t.name for t in listed] == list(SERVER_TOOLS)
        assert list(SERVER_TOOLS) == ["search", "find_symbol", "callers", "impact", "find_related", "index_status"]
        for tool in listed:
            assert len(tool.description) > 80 and tool.input_schema["type"] == "object"
            assert tool.output_schema is not None and tool.annotations.read_only_hint
        by_name = {t.name: t for t in listed}
        assert by_name["search"].input_schema["required"] == ["query"]
        assert set(by_name["search"].input_schema["properties"]) == {"query", "repo", "top_k", "preset", "paths", "languages"}

        # The client checks every structured result against the tool's output schema.
        out = structured(await session.call_tool("search", {"query": "where is parse_config defined"}))
        assert out["intent"] == "find_definition" and out["results"][0]["path"] == "app/config.py"
        out = structured(await session.call_tool("find_symbol", {"name": "retry_start"}))
        assert out["symbols"][0]["path"] == "app/retry.py"
        out = structured(await session.call_tool("callers", {"symbol": "parse_config"}))
        assert [c["caller"] for c in out["callers"]] == ["Server.__init__"]
        out = structured(await session.call_tool("impact", {"symbol": "load_settings", "depth": 2}))
        assert {d["symbol"] for d in out["dependants"]} >= {"parse_config", "Server.__init__"}
        out = structured(await session.call_tool("find_related", {"path": "app/retry.py", "line": 4}))
        assert out["source"]["symbol"] == "retry_start" and out["results"]
        out = structured(await session.call_tool("index_status", {}))
        assert [r["name"] for r in out["repositories"]] == ["shop", "tools"]

        error = await session.call_tool("search", {"query": ""})
        assert error.is_error and error.content[0].text == "the query is empty"
        error = await session.call_tool("find_related", {"path": "../secret.txt", "line": 1})
        assert error.is_error and "outside the indexed roots" in error.content[0].text

    anyio.run(with_session, roots, tmp_path / "home", scenario)


def test_stdio_concurrent_calls_and_fresh_answers(roots, tmp_path):
    shop, _ = roots

    async def scenario(session: ClientSession) -> None:
        await session.list_tools()
        calls = [
            ("search", {"query": '"ECONNREFUSED"'}),
            ("search", {"query": "in-memory cache", "repo": "tools"}),
            ("find_symbol", {"name": "Server"}),
            ("callers", {"symbol": "retry_start"}),
            ("impact", {"symbol": "parse_config"}),
            ("find_related", {"path": "lib/cache.js", "line": 2}),
            ("index_status", {"repo": "tools"}),
        ] * 3
        results: list[Any] = [None] * len(calls)

        async def one(i: int) -> None:
            results[i] = await session.call_tool(*calls[i])

        async with anyio.create_task_group() as group:
            for i in range(len(calls)):
                group.start_soon(one, i)
        for (name, _), result in zip(calls, results):
            assert not result.is_error, (name, result.content[0].text)
        first = [structured(r) for r in results[: len(calls) // 3]]
        assert [r["path"] for r in first[0]["results"]] == ["app/server.py"]
        for i, result in enumerate(results):  # the same question, asked concurrently, gets the same answer
            again = structured(result)
            if "freshness" in again:
                again = {**again, "freshness": None, "tokens": None}
                base = {**first[i % len(first)], "freshness": None, "tokens": None}
                assert again == base

        # An edit on disk is answered by the next call, with the old chunk gone.
        write_file(shop, "app/server.py", SHOP["app/server.py"].replace("ECONNREFUSED", "EHOSTUNREACH"))
        write_file(shop, "app/cli.py", SHOP["app/cli.py"] + "\nFALLBACK = 'ECONNREFUSED'\n")
        started = time.perf_counter()
        out = structured(await session.call_tool("search", {"query": '"ECONNREFUSED"'}))
        elapsed = time.perf_counter() - started
        assert [r["path"] for r in out["results"] if "text" in r["found_by"]] == ["app/cli.py"]
        assert out["freshness"]["reindexed_files"] == 2
        assert elapsed < 30
        out = structured(await session.call_tool("search", {"query": '"EHOSTUNREACH"'}))
        assert [r["path"] for r in out["results"]] == ["app/server.py"]
        assert "EHOSTUNREACH" in out["results"][0]["snippet"] or out["results"][0]["end_line"] > 8

    anyio.run(with_session, roots, tmp_path / "home", scenario)
